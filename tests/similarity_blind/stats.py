#!/usr/bin/env python3
"""Count copy pairs per disguise kind in every class's truth.json.  Usage: python3 stats.py OUT"""
import collections, json, os, sys
HERE = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))


def category(kind):
    if kind.startswith("group"):
        return "group"
    if kind.startswith("copy_of_copy"):
        return "copy_of_copy"
    if kind.startswith("siblings"):
        return "siblings"
    if kind.startswith("partial"):
        return "partial"
    if "+" in kind:
        return "combined"
    return kind


tot = collections.Counter()
for name in sorted(os.listdir(os.path.join(HERE, "classes"))):
    t = json.load(open(os.path.join(HERE, "classes", name, "truth.json")))
    c = collections.Counter(category(k) for _, _, k in t["copy_pairs"])
    tot.update(c)
    print(f"{name:24s} n={len(t['students']):4d} copy_pairs={len(t['copy_pairs']):4d} "
          f"groups={[len(g) for g in t['groups']]} starter_only_pairs={len(t['starter_only_pairs'])}  "
          + ", ".join(f"{k}={v}" for k, v in sorted(c.items())))
print("all classes:", ", ".join(f"{k}={v}" for k, v in sorted(tot.items())))

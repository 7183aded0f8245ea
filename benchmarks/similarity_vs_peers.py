"""``grader similarity`` beside copydetect 0.5.0 and Dolos 3.5.1 on the blind corpus.

The corpus (tests/similarity_blind/, written by a developer who never saw the similarity
code) is generated into a temporary folder from its fixed seeds. Each class's ``.py``
files alone (no truth, no provenance) are copied to a folder of their own, and each tool
ranks that folder's pairs in a fresh process:

* the grader: ``grader similarity`` on a folder of grading records that point at the
  files (the records are written beforehand, untimed), with its default base, the
  assignment's starter notebook. Its similarity.csv lists every pair it scores (a pair
  whose shared fingerprints weigh less than a tenth of the smaller side's is not
  scored): every pair it leaves out counts as score 0 (ties at 0 count half in AUC and
  are drawn at random in precision at k, see below).
  Groups are read from similarity-groups.csv.
* copydetect 0.5.0 (its defaults; the starter code as boilerplate), a pair's score the
  larger of its two sides' similarities, as its report shows them.
* Dolos (``@dodona/dolos-lib`` 3.5.1, its defaults, language python; the starter code
  as its ignored template file), a pair's score its ``similarity``; pairs it does not
  return share nothing and count as 0.

Per class and tool: ROC AUC over all pairs (copy pairs positive, every other pair
negative, ties counting half), precision at k (k = number of copy pairs; tied pairs at
the cut counted by their expected share), how many copy pairs score above every other
pair, whether every group is reported whole (grader: one row of similarity-groups.csv
holds every member; peers: every pair inside the group scores above every non-copy
pair), whether every starter-only pair scores below every copy pair, and each run's
wall time and peak resident memory (the tool's process and its children, by GNU time:
/usr/bin/time, or GNU_TIME).

Set up the peers once (paths can be moved with COPYDETECT_PYTHON and DOLOS_DIR):

    python3 -m venv /tmp/similarity-peers/venv && /tmp/similarity-peers/venv/bin/pip install copydetect==0.5.0
    mkdir -p /tmp/similarity-peers/dolos && cd /tmp/similarity-peers/dolos && npm install @dodona/dolos-lib@3.5.1

then, from the repository root:

    python benchmarks/similarity_vs_peers.py [--classes lmhead-a-20,ppl-a-20] [--tools grader,copydetect,dolos]
"""
from __future__ import annotations

import argparse
import bisect
import csv
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "similarity_blind"
COPYDETECT_PYTHON = Path(os.environ.get("COPYDETECT_PYTHON", "/tmp/similarity-peers/venv/bin/python"))
DOLOS_DIR = Path(os.environ.get("DOLOS_DIR", "/tmp/similarity-peers/dolos"))
TOOLS = ("grader", "copydetect", "dolos")
TIME = os.environ.get("GNU_TIME", "/usr/bin/time")   # GNU time, for the peak resident memory

Pair = tuple[str, str]


# ------------------------------------------------------------------ the corpus

@dataclass(frozen=True)
class Truth:
    """A class's truth: who copied from whom. Every pair is ``(a, b)`` with ``a < b``."""
    assignment: str
    students: tuple[str, ...]
    copies: frozenset[Pair]
    groups: tuple[tuple[str, ...], ...]
    starter_only: frozenset[Pair]

    @classmethod
    def read(cls, path: Path) -> "Truth":
        raw = json.loads(path.read_text(encoding="utf-8"))
        return cls(raw["assignment"], tuple(raw["students"]), frozenset((a, b) for a, b, _ in raw["copy_pairs"]),
                   tuple(tuple(g) for g in raw["groups"]), frozenset((a, b) for a, b in raw["starter_only_pairs"]))

    def pairs(self) -> list[Pair]:
        return list(itertools.combinations(sorted(self.students), 2))


def generate(out: Path) -> Path:
    """Write the whole corpus (classes/ and meta/) under ``out`` with the generator as written; return classes/."""
    subprocess.run([sys.executable, str(CORPUS / "make.py"), str(out)], check=True, capture_output=True)
    return out / "classes"


def generator():
    """The generator's module, imported from its file (it puts its own folder on the path for its parts)."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("similarity_blind_make", CORPUS / "make.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generate_class(name: str, out: Path) -> Path:
    """Write one class of the corpus (its submissions and truth.json, as make.py writes them) to ``out/name``."""
    make = generator()
    [(assignment, n, seed, options)] = [c[1:] for c in make.CLASSES if c[0] == name]
    students, groups, starter_pairs = make.build_class(name, assignment, n, seed, **options)
    folder = out / name
    folder.mkdir(parents=True)
    for s in students.values():
        (folder / f"{s.sid}.py").write_text(make.render_student(s), encoding="utf-8")
    (folder / "truth.json").write_text(json.dumps(make.truth_for(assignment, students, groups, starter_pairs), indent=1),
                                       encoding="utf-8")
    return folder


def submissions_only(class_dir: Path, out: Path) -> Path:
    """Copy a class's submissions, and nothing else, to ``out``: no detector sees the truth."""
    out.mkdir(parents=True)
    for f in sorted(class_dir.glob("*.py")):
        shutil.copyfile(f, out / f.name)
    return out


# ------------------------------------------------------------------ metrics

def key(a: str, b: str) -> Pair:
    return (a, b) if a < b else (b, a)


def roc_auc(scores: dict[Pair, float], positives: frozenset[Pair] | set[Pair], pairs: list[Pair]) -> float:
    """Probability that a random positive pair scores above a random negative one, ties counting half
    (the Mann-Whitney statistic); a pair missing from ``scores`` scores 0."""
    values = sorted(scores.get(p, 0.0) for p in pairs if p not in positives)
    pos = [scores.get(p, 0.0) for p in pairs if p in positives]
    if not pos or not values:
        raise ValueError(f"AUC needs positive and negative pairs; found {len(pos)} and {len(values)}")
    wins = sum(bisect.bisect_left(values, s) + 0.5 * (bisect.bisect_right(values, s) - bisect.bisect_left(values, s))
               for s in pos)
    return wins / (len(pos) * len(values))


def precision_at_k(scores: dict[Pair, float], positives: frozenset[Pair] | set[Pair], pairs: list[Pair]) -> float:
    """Share of copy pairs among the k best-scoring pairs, k = number of copy pairs. Pairs tied at the
    k-th score are drawn at random: they fill the remaining places with their share of positives."""
    k = len(positives)
    ranked = sorted(((scores.get(p, 0.0), p in positives) for p in pairs), reverse=True)
    cut = ranked[k - 1][0]
    above = [pos for s, pos in ranked if s > cut]
    tied = [pos for s, pos in ranked if s == cut]
    return (sum(above) + (k - len(above)) * sum(tied) / len(tied)) / k


def copies_above_every_other(scores: dict[Pair, float], positives: frozenset[Pair] | set[Pair], pairs: list[Pair]) -> int:
    """How many copy pairs score strictly above every pair that is not a copy."""
    top = max(scores.get(p, 0.0) for p in pairs if p not in positives)
    return sum(scores.get(p, 0.0) > top for p in positives)


def group_pairs_above_every_other(scores: dict[Pair, float], truth: Truth, group: tuple[str, ...]) -> bool:
    """Every pair inside the group scores strictly above every pair that is not a copy."""
    top = max(scores.get(p, 0.0) for p in truth.pairs() if p not in truth.copies)
    return all(scores.get(key(a, b), 0.0) > top for a, b in itertools.combinations(group, 2))


def starter_below_copies(scores: dict[Pair, float], truth: Truth) -> bool | None:
    """Every starter-only pair scores strictly below every copy pair (None: the class has none)."""
    if not truth.starter_only:
        return None
    return max(scores.get(p, 0.0) for p in truth.starter_only) < min(scores.get(p, 0.0) for p in truth.copies)


# ------------------------------------------------------------------ running a tool

@dataclass
class Run:
    scores: dict[Pair, float]
    seconds: float
    peak_mb: float
    groups: list[set[str]] | None = None     # the grader's similarity-groups.csv rows
    note: str = ""


def measured(argv: list[str], cwd: Path | None = None) -> tuple[float, float]:
    """Run ``argv`` in a fresh process; return its wall seconds and peak resident MB (it and the children
    it waited for). GNU time forks the tool from its own small process: a child started straight from this
    one would carry this process's resident size into its peak (the kernel keeps the high-water mark
    across exec)."""
    with tempfile.NamedTemporaryFile("r") as report, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        run = subprocess.run([TIME, "-f", "%M", "-o", report.name, *argv], cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"{argv[0]} {' '.join(argv[1:3])} failed (exit {run.returncode}):\n"
                               f"{err.read().decode(errors='replace')[-3000:]}")
        peak_kb = int(report.read().split()[-1])
    return seconds, peak_kb / 1024


def run_grader(subs: Path, truth: Truth, work: Path) -> Run:
    from autograder.runtime.grading.files import write_atomic
    from autograder.runtime.grading.outcome import RECORD_NAME, Entry, GradeOutcome, GradeRecord, student_folder
    graded = work / "graded"
    for sid in truth.students:
        record = GradeRecord(Entry(sid, subs / f"{sid}.py"), GradeOutcome(sid, truth.assignment, "graded", "bwrap"))
        write_atomic(student_folder(graded, sid) / RECORD_NAME, record.to_json())
    seconds, peak = measured([sys.executable, "-c", "from autograder.cli import main; main()", "similarity", str(graded)],
                             cwd=ROOT)
    with open(graded / "similarity.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    scores = {key(r["student_a"], r["student_b"]): float(r["score"]) for r in rows}
    groups: list[set[str]] = []
    groups_csv = graded / "similarity-groups.csv"
    if groups_csv.is_file():
        with open(groups_csv, newline="", encoding="utf-8") as f:
            groups = [set(r["students"].lstrip("'").split()) for r in csv.DictReader(f)]
    absent = sum(p not in scores for p in truth.copies)
    return Run(scores, seconds, peak, groups, note=f"{len(rows)} of {len(truth.pairs())} pairs in its CSV, "
                                                   f"{absent} of {len(truth.copies)} copy pairs not in it (scored 0)")


COPYDETECT_SCRIPT = """
import json, sys
from pathlib import Path
from copydetect import CopyDetector
folder, base, out = sys.argv[1:4]
d = CopyDetector(test_dirs=[folder], ref_dirs=[folder], boilerplate_dirs=[base], extensions=["py"],
                 autoopen=False, silent=True)
d.run()
names = [Path(f).stem for f in d.test_files]
refs = [Path(f).stem for f in d.ref_files]
scores = {}
for i, a in enumerate(names):
    for j, b in enumerate(refs):
        if a < b:
            s1, s2 = d.similarity_matrix[i, j]
            scores[a + " " + b] = max(float(s1), float(s2), 0.0)
Path(out).write_text(json.dumps(scores))
"""

DOLOS_SCRIPT = """
import fs from "node:fs";
import path from "node:path";
import { Dolos } from "@dodona/dolos-lib";
const [folder, base, out] = process.argv.slice(2);
const files = fs.readdirSync(folder).filter(f => f.endsWith(".py")).sort().map(f => path.join(folder, f));
const report = await new Dolos({ language: "python" }).analyzePaths(files, base);
const scores = {};
for (const p of report.allPairs()) {
  const [a, b] = [path.basename(p.leftFile.path, ".py"), path.basename(p.rightFile.path, ".py")].sort();
  scores[a + " " + b] = p.similarity;
}
fs.writeFileSync(out, JSON.stringify(scores));
"""


def read_scores(path: Path) -> dict[Pair, float]:
    return {key(*k.split(" ")): float(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def run_copydetect(subs: Path, base: Path, work: Path) -> Run:
    script = work / "copydetect_run.py"
    script.write_text(COPYDETECT_SCRIPT, encoding="utf-8")
    base_dir = work / "copydetect-base"
    base_dir.mkdir()
    shutil.copyfile(base, base_dir / "starter.py")
    seconds, peak = measured([str(COPYDETECT_PYTHON), str(script), str(subs), str(base_dir), str(work / "cd.json")])
    return Run(read_scores(work / "cd.json"), seconds, peak)


def run_dolos(subs: Path, base: Path, work: Path) -> Run:
    script = DOLOS_DIR / "similarity_vs_peers_dolos.mjs"   # beside node_modules, so the import resolves
    script.write_text(DOLOS_SCRIPT, encoding="utf-8")
    seconds, peak = measured(["node", str(script), str(subs), str(base), str(work / "dolos.json")], cwd=DOLOS_DIR)
    return Run(read_scores(work / "dolos.json"), seconds, peak)


def starter_file(assignment: str, out: Path) -> Path:
    """The starter notebook's code, as the grader renders it for its own base, for the peers' base."""
    from autograder.similarity.base import starter_cells
    out.write_text("\n\n".join(starter_cells(assignment)) + "\n", encoding="utf-8")
    return out


# ------------------------------------------------------------------ the table

def yes_no(value: bool | None) -> str:
    return "-" if value is None else ("yes" if value else "NO")


def measure(tool: str, run: Run, truth: Truth) -> dict[str, str]:
    pairs = truth.pairs()
    if tool == "grader":
        whole = [any(set(g) <= row for row in run.groups or []) for g in truth.groups]
        extra = sum(len(row - set(g)) for g in truth.groups for row in run.groups or [] if set(g) <= row)
        groups = "-" if not truth.groups else (f"{yes_no(all(whole))} ({len(run.groups or [])} rows"
                                               + (f", {extra} outsiders with the group" if extra else "") + ")")
    else:
        groups = "-" if not truth.groups else yes_no(all(group_pairs_above_every_other(run.scores, truth, g)
                                                         for g in truth.groups))
    return {"AUC": f"{roc_auc(run.scores, truth.copies, pairs):.4f}",
            "P@k": f"{precision_at_k(run.scores, truth.copies, pairs):.3f}",
            "copies above all": f"{copies_above_every_other(run.scores, truth.copies, pairs)} of {len(truth.copies)}",
            "groups whole": groups,
            "starter below copies": yes_no(starter_below_copies(run.scores, truth)),
            "time": f"{run.seconds:.1f} s", "peak": f"{run.peak_mb:.0f} MB"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--classes", help="comma-separated class names (default: every class)")
    parser.add_argument("--tools", default=",".join(TOOLS), help="comma-separated, of " + ", ".join(TOOLS))
    args = parser.parse_args()
    tools = args.tools.split(",")
    with tempfile.TemporaryDirectory(prefix="similarity-vs-peers-") as tmp:
        root = Path(tmp)
        classes = generate(root / "corpus")
        names = args.classes.split(",") if args.classes else sorted(p.name for p in classes.iterdir())
        rows: list[tuple[str, str, dict[str, str]]] = []
        pooled = {t: Pooled() for t in tools}
        for name in names:
            truth = Truth.read(classes / name / "truth.json")
            subs = submissions_only(classes / name, root / "submissions" / name)
            base = starter_file(truth.assignment, root / f"starter-{name}.py")
            for tool in tools:
                work = root / "work" / name / tool
                work.mkdir(parents=True)
                run = {"grader": lambda: run_grader(subs, truth, work),
                       "copydetect": lambda: run_copydetect(subs, base, work),
                       "dolos": lambda: run_dolos(subs, base, work)}[tool]()
                row = measure(tool, run, truth)
                rows.append((name, tool, row))
                pooled[tool].add(name, run, truth, row)
                print(f"{name:22s} {tool:10s} " + "  ".join(f"{k} {v}" for k, v in row.items())
                      + (f"  [{run.note}]" if run.note else ""), flush=True)
        print()
        columns = list(rows[0][2])
        print("| class | tool | " + " | ".join(columns) + " |")
        print("|---|---|" + "---|" * len(columns))
        for name, tool, row in rows:
            print(f"| {name} | {tool} | " + " | ".join(row[c] for c in columns) + " |")
        print()
        print("Overall (every pair of every class pooled, a pair compared only within its class):")
        for tool in tools:
            print(f"{tool}: {pooled[tool].summary()}")


@dataclass
class Pooled:
    """Every class's pairs in one ranking (pair ids prefixed by the class), and per-class verdicts."""
    scores: dict[Pair, float] = None  # type: ignore[assignment]
    copies: set[Pair] = None  # type: ignore[assignment]
    pairs: list[Pair] = None  # type: ignore[assignment]
    verdicts: list[dict[str, str]] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.scores, self.copies, self.pairs, self.verdicts = {}, set(), [], []

    def add(self, name: str, run: Run, truth: Truth, row: dict[str, str]) -> None:
        def tag(p: Pair) -> Pair:
            return (f"{name}/{p[0]}", f"{name}/{p[1]}")
        self.scores.update((tag(p), s) for p, s in run.scores.items())
        self.copies.update(tag(p) for p in truth.copies)
        self.pairs += [tag(p) for p in truth.pairs()]
        self.verdicts.append(row)

    def summary(self) -> str:
        groups = [r["groups whole"] for r in self.verdicts if r["groups whole"] != "-"]
        starter = [r["starter below copies"] for r in self.verdicts if r["starter below copies"] != "-"]
        above = sum(int(r["copies above all"].split()[0]) for r in self.verdicts)
        return (f"AUC {roc_auc(self.scores, self.copies, self.pairs):.4f}, "
                f"P@k {precision_at_k(self.scores, self.copies, self.pairs):.3f} (k = {len(self.copies)}); "
                f"per class: copy pairs above every other pair of their class {above} of {len(self.copies)}, "
                f"groups whole in {sum(g.startswith('yes') for g in groups)} of {len(groups)} classes, "
                f"starter-only pairs below every copy in {starter.count('yes')} of {len(starter)} classes")

if __name__ == "__main__":
    main()

"""Bulk grading throughput against `otter run`, on a synthetic class.

Builds the lm-head autograder, synthesizes a cohort of varied submissions
(correct, every catalogued lm-head mistake, partial, broken, timing out),
grades a sample with sequential `otter run` and all of them with
`grader grade`, checks that the sample's scores agree, and prints medians,
peak memory and the throughput ratio.

    python benchmarks/grade_throughput.py [--size 200] [--sample 10] [--workers 2]
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from autograder.build import build  # noqa: E402
from autograder.build.otter_steps import otter_run, score_of  # noqa: E402
from autograder.build.spec import load_spec  # noqa: E402
from tests.cohort import with_extra_cell, with_mistake, with_stubs, write_export_zip  # noqa: E402

LM_HEAD_FUNCTIONS = ["next_token_batch", "lm_head", "softmax", "cross_entropy_loss", "lm_head_backward",
                     "numerical_gradient", "max_rel_err"]
TARGET_RATIO = 30.0
MEMORY_LIMIT_MB = 2048.0


def synthesize(solution: nbformat.NotebookNode, folder: Path, size: int, rng: random.Random) -> dict[str, str]:
    """Write ``size`` submissions into ``folder``; returns {student: kind}."""
    kinds: dict[str, str] = {}
    mistakes = list(load_spec("lm-head").catalogue().mistakes.values())
    n = 0

    def save(nb, kind: str, as_zip: bool) -> None:
        nonlocal n
        student = f"s{n:04d}"
        if as_zip:
            write_export_zip(nb, folder / f"{student}.zip", "lm-head")
        else:
            nbformat.write(nb, folder / f"{student}.ipynb")
        kinds[student] = kind
        n += 1

    for m in mistakes * 3:                                     # every mistake, three times
        save(with_mistake(solution, m), f"mistake:{m.name}", rng.random() < 0.5)
    for _ in range(30):                                        # partial: some functions left as stubs
        save(with_stubs(solution, rng.sample(LM_HEAD_FUNCTIONS, rng.randint(1, 4))), "partial", rng.random() < 0.5)
    for source in ("def broken(:\n    pass", "import numpy as np\nraise RuntimeError('oops')"):
        for _ in range(3):
            save(with_extra_cell(solution, source, 3), "broken", False)
    for _ in range(3):                                         # not a notebook at all
        student = f"s{n:04d}"
        (folder / f"{student}.ipynb").write_text("{ this is not json")
        kinds[student] = "broken"
        n += 1
    for _ in range(2):                                         # endless loop while loading
        save(with_extra_cell(solution, "while True:\n    pass", 3), "timeout", False)
    while n < size:                                            # the rest: correct
        save(solution, "correct", rng.random() < 0.5)
    return kinds


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants, in MB."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as handle:
                stack += [int(c) for c in handle.read().split()]
        except (OSError, ValueError):
            continue
    return total / 2**20


def run_grader(folder: Path, zip_path: Path, out: Path, workers: int, timeout: float) -> tuple[float, float]:
    """Wall seconds and peak memory (MB, whole process tree) of one `grader grade` run."""
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a", str(zip_path), "-o", str(out),
           "--workers", str(workers), "--timeout", str(timeout), "--force"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_mb(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"grader grade failed:\n{err.decode()[-2000:]}")
    return time.perf_counter() - start, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--sample", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="lmhead-bench-") as tmp:
        tmp = Path(tmp)
        (result,) = build(["lm-head"], tmp / "dist", None, verify=False)
        solution = nbformat.read(result.solution, as_version=4)
        cohort = tmp / "cohort"
        cohort.mkdir()
        kinds = synthesize(solution, cohort, args.size, rng)
        files = {p.stem: p for p in cohort.iterdir()}

        # otter can only grade what finishes and parses; it has no timeout.
        gradable = sorted(s for s, k in kinds.items() if k not in ("timeout", "broken"))
        sample = rng.sample(gradable, min(args.sample, len(gradable)))
        otter_seconds, otter_scores = [], {}
        for student in sample:
            start = time.perf_counter()
            otter_scores[student] = score_of(otter_run(result.autograder_zip, files[student]))[0]
            otter_seconds.append(time.perf_counter() - start)

        out = tmp / "graded"
        wall, peak_mb = run_grader(cohort, result.autograder_zip, out, args.workers, args.timeout)
        with open(out / "gradebook.csv", newline="") as handle:
            ours = {row["student"]: row for row in csv.DictReader(handle)}

    mismatches = [(s, otter_scores[s], float(ours[s]["total"])) for s in sample
                  if abs(otter_scores[s] - float(ours[s]["total"])) > 1e-6]
    counts: dict[str, int] = {}
    for kind in kinds.values():
        key = kind.split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    statuses: dict[str, int] = {}
    for row in ours.values():
        statuses[row["status"]] = statuses.get(row["status"], 0) + 1
    otter_median = statistics.median(otter_seconds)
    ours_per = wall / len(kinds)
    ratio = otter_median / ours_per
    print(f"cohort: {len(kinds)} submissions " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    print("grader grade statuses: " + ", ".join(f"{n} {k}" for k, n in sorted(statuses.items())))
    print(f"otter run (sequential, {len(sample)} sampled): median {otter_median:.2f} s per submission")
    print(f"grader grade ({args.workers} workers, all {len(kinds)}): {wall:.1f} s wall, "
          f"{ours_per:.3f} s per submission, peak memory {peak_mb:.0f} MB (limit {MEMORY_LIMIT_MB:.0f} MB)")
    print(f"scores agree on the sample: {len(sample) - len(mismatches)}/{len(sample)}"
          + (f"; mismatches: {mismatches}" if mismatches else ""))
    print(f"throughput ratio (otter run s per submission / grader grade s per submission): {ratio:.1f}x "
          f"(target {TARGET_RATIO:.0f}x): {'met' if ratio >= TARGET_RATIO else 'NOT met'}")
    if mismatches or peak_mb > MEMORY_LIMIT_MB:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

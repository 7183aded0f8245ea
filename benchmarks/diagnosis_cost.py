"""What diagnosis costs: a class of wrong submissions against a class of right ones, in one run.

Builds the lm-head autograder, grades a class where every submission is the
solution and a class where nine in ten carry one catalogued mistake (every
mistake in turn, so every diagnosis path runs), with the same size, workers and
machine, and prints the per-submission times and their ratio against the target.

    python benchmarks/diagnosis_cost.py [--size 200] [--workers 2]
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import nbformat  # noqa: E402

from autograder.build import build  # noqa: E402
from autograder.build.spec import load_spec  # noqa: E402
from grade_throughput import run_grader  # noqa: E402
from tests.cohort import with_mistake  # noqa: E402

#: A mostly-wrong class may take at most this multiple of an all-correct one's time.
TARGET = 1.5
WRONG_SHARE = 0.9


def write_class(solution: nbformat.NotebookNode, folder: Path, size: int, wrong_share: float) -> None:
    """``size`` notebooks in ``folder``: ``wrong_share`` of them with one catalogued mistake each."""
    folder.mkdir()
    mistakes = list(load_spec("lm-head").catalogue().mistakes.values())
    wrong = round(size * wrong_share)
    for n in range(size):
        nb = with_mistake(solution, mistakes[n % len(mistakes)]) if n < wrong else solution
        nbformat.write(nb, folder / f"s{n:04d}.ipynb")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=5.0)
    args = parser.parse_args()
    random.seed(0)
    with tempfile.TemporaryDirectory(prefix="lmhead-diag-") as tmp:
        tmp = Path(tmp)
        (result,) = build(["lm-head"], tmp / "dist", None, verify=False)
        solution = nbformat.read(result.solution, as_version=4)
        times = {}
        for name, share in (("all correct", 0.0), (f"{WRONG_SHARE:.0%} wrong", WRONG_SHARE)):
            folder = tmp / name.replace(" ", "-").replace("%", "")
            write_class(solution, folder, args.size, share)
            wall, peak = run_grader(folder, result.autograder_zip, tmp / f"{folder.name}-out", args.workers,
                                    args.timeout)
            times[name] = wall / args.size
            print(f"{name}: {args.size} submissions in {wall:.1f} s, {times[name]:.3f} s per submission, "
                  f"peak memory {peak:.0f} MB")
    ratio = times[f"{WRONG_SHARE:.0%} wrong"] / times["all correct"]
    print(f"mostly wrong against all correct: {ratio:.2f}x (target <= {TARGET:.1f}x): "
          f"{'met' if ratio <= TARGET else 'NOT met'}")


if __name__ == "__main__":
    main()

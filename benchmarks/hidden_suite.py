"""How long the hidden suite takes for one submission of each assignment.

Runs every hidden module of an assignment against the reference solutions,
in-process, through a full pytest run (``run_hidden_suite``: collection
included), which is how a single submission is graded (``otter run``, or
``grade_submission`` without a collected suite); bulk grading collects once
per batch (``CollectedSuite``) and is not what this times. Prints the median
over several repeats against the 1 s target.

    python benchmarks/hidden_suite.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import solutions  # noqa: E402
from autograder.build.config import resolve_settings  # noqa: E402
from autograder.hidden_plugin import HiddenSuitePlugin, hidden_test_path, run_hidden_suite  # noqa: E402
from autograder.mistakes import MISTAKES, STUDENT_FUNCTIONS  # noqa: E402

TARGET_SECONDS = 1.0


def _suite_seconds(settings, student) -> tuple[float, int]:
    start = time.perf_counter()
    paths = [hidden_test_path(settings.spec.folder, q.name) for q in settings.questions]
    plugin = HiddenSuitePlugin(student=student, hidden_seed=settings.hidden_seed, sizes=settings.sizes)
    results = run_hidden_suite(paths, plugin)
    return time.perf_counter() - start, sum(len(r) for r in results.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    reference = SimpleNamespace(**{f: getattr(solutions, f) for f in STUDENT_FUNCTIONS})
    # A submission with a mistake in every function also pays for the diagnosis.
    worst = SimpleNamespace(**{f: getattr(solutions, f) for f in STUDENT_FUNCTIONS})
    for m in MISTAKES.values():
        setattr(worst, m.function, m.implementation)
    print(f"{'assignment':<28}{'submission':<22}{'items':>6}{'median s':>10}{'target s':>10}{'target/median':>15}")
    for settings in resolve_settings(None, None):
        _suite_seconds(settings, reference)      # warm imports and caches
        for label, student in (("reference", reference), ("all-wrong + diagnosis", worst)):
            runs = [_suite_seconds(settings, student) for _ in range(args.repeats)]
            median = statistics.median(seconds for seconds, _ in runs)
            print(f"{settings.name:<28}{label:<22}{runs[0][1]:>6}{median:>10.3f}{TARGET_SECONDS:>10.1f}"
                  f"{TARGET_SECONDS / median:>15.1f}")


if __name__ == "__main__":
    main()

"""How long the hidden suite takes for one submission of each assignment.

Collects every hidden module of an assignment and runs it against the
reference solutions, in-process, which is what grading one submission
costs the trusted process under ``otter run`` (collection included); bulk
grading collects once per class. Prints the median over several repeats
against the 1 s target.

    python benchmarks/hidden_suite.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.build.config import resolve_settings  # noqa: E402
from autograder.runtime.hidden_suite import HiddenSuite, hidden_test_path  # noqa: E402
from tests.suites import FUNCTIONS, MISTAKES, reference_namespace  # noqa: E402

TARGET_SECONDS = 1.0
SEED = 1


def _suite_seconds(settings, student) -> tuple[float, int]:
    start = time.perf_counter()
    paths = [hidden_test_path(settings.spec.folder, q.name) for q in settings.questions]
    run = HiddenSuite(paths, catalogue=settings.spec.catalogue()).run(student, SEED)
    return time.perf_counter() - start, len(run.items)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    reference = reference_namespace()
    # A submission with a mistake in every function also pays for the diagnosis.
    worst = reference_namespace({m.function: m.implementation for m in MISTAKES.values() if m.function in FUNCTIONS})
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

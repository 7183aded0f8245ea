"""Find the hidden tests of a question and weigh them into points."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.runtime.errors import BuildError
from autograder.runtime.hidden_suite import HiddenSuite, HiddenSuiteError, hidden_test_path

#: Points are split into hundredths: what a person reads, and what adds up exactly.
POINT_UNITS = 100


@dataclass(frozen=True)
class HiddenItem:
    """One hidden test of a question, with its share of the points."""

    question: str
    test_name: str
    points: float


def split_points(total: float, weights: list[float]) -> list[float]:
    """``total`` split in proportion to ``weights``, in hundredths that add up to ``total`` exactly.

    Largest remainder: every share is rounded down to a hundredth, and the
    hundredths left over go to the shares that lost the most.
    """
    units = round(total * POINT_UNITS)
    exact = [units * w / sum(weights) for w in weights]
    shares = [int(x) for x in exact]
    by_loss = sorted(range(len(weights)), key=lambda i: (shares[i] - exact[i], i))
    for i in by_loss[:units - sum(shares)]:
        shares[i] += 1
    return [s / POINT_UNITS for s in shares]


def collect_hidden_items(folder: Path, question: str, total_points: float) -> list[HiddenItem]:
    """Tests of ``hidden/test_<question>.py``, the question's points split by their weights."""
    path = hidden_test_path(folder, question)
    if not path.is_file():
        raise BuildError(f"question {question} has no hidden tests: expected {path}")
    try:
        cases = HiddenSuite([path]).cases
    except HiddenSuiteError as exc:
        raise BuildError(f"{path}: {exc}") from None
    if not cases:
        raise BuildError(f"could not collect the hidden tests in {path}: no test found")
    shares = split_points(total_points, [c.weight for c in cases])
    return [HiddenItem(question, c.name, share) for c, share in zip(cases, shares)]

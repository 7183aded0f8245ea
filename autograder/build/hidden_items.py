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
    #: What it enforces beyond the stated behaviour (``hidden_suite.item_contracts``).
    contracts: tuple[str, ...] | None = None


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


def collect_hidden_items(folder: Path, questions: list[tuple[str, float]]) -> dict[str, list[HiddenItem]]:
    """Tests of each question's ``hidden/test_<question>.py``, its points split by their weights.

    All modules are collected in one pytest session (a session costs most of a second).
    """
    paths = []
    for question, _ in questions:
        path = hidden_test_path(folder, question)
        if not path.is_file():
            raise BuildError(f"question {question} has no hidden tests: expected {path}")
        paths.append(path)
    try:
        cases = HiddenSuite(paths).cases
    except HiddenSuiteError as exc:
        raise BuildError(f"{folder / 'hidden'}: {exc}") from None
    items = {}
    for (question, points), path in zip(questions, paths):
        mine = [c for c in cases if c.question == question]
        if not mine:
            raise BuildError(f"could not collect the hidden tests in {path}: no test found")
        shares = split_points(points, [c.weight for c in mine])
        items[question] = [HiddenItem(question, c.name, share, c.contracts) for c, share in zip(mine, shares)]
    return items

"""Find the hidden pytest items of an assignment and weigh them into points."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


from autograder.errors import BuildError
from autograder.hidden_plugin import collect_items, hidden_test_path


@dataclass(frozen=True)
class HiddenItem:
    """One hidden pytest item of a question, with its share of the points."""

    question: str
    test_name: str
    points: float


def collect_hidden_items(folder: Path, question: str, total_points: float) -> list[HiddenItem]:
    """Items of ``hidden/test_<question>.py``, the question's points split by their weights."""
    path = hidden_test_path(folder, question)
    if not path.is_file():
        raise BuildError(f"question {question} has no hidden tests: expected {path}")
    try:
        items = collect_items([path])
    except RuntimeError as exc:
        raise BuildError(f"{path}: {exc}") from None
    if not items:
        raise BuildError(f"could not collect the hidden tests in {path}: no test found")
    weighted = [(item.name, _weight(item)) for item in items]
    total_weight = sum(w for _, w in weighted)
    shares = [round(total_points * w / total_weight, 4) for _, w in weighted]
    shares[-1] = round(total_points - sum(shares[:-1]), 4)   # the shares add up exactly
    return [HiddenItem(question, name, share) for (name, _), share in zip(weighted, shares)]


def _weight(item) -> float:
    marker = item.get_closest_marker("points")
    return float(marker.args[0]) if marker else 1.0

"""Find the hidden pytest items of an assignment and weigh them into points."""
from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from pathlib import Path

import pytest

from autograder.errors import BuildError
from autograder.hidden_plugin import forget_modules_under


@dataclass(frozen=True)
class HiddenItem:
    """One hidden pytest item of a question, with its share of the points."""

    question: str
    test_name: str
    points: float


class _Collector:
    def __init__(self):
        self.items: list[tuple[str, float]] = []
        self.errors: list[str] = []

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "points(n): the test's weight within its question")

    def pytest_collection_modifyitems(self, items):
        for item in items:
            marker = item.get_closest_marker("points")
            weight = float(marker.args[0]) if marker else 1.0
            self.items.append((item.name, weight))

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(str(report.longrepr))


def hidden_test_path(folder: Path, question: str) -> Path:
    return folder / "hidden" / f"test_{question}.py"


def collect_hidden_items(folder: Path, question: str, total_points: float) -> list[HiddenItem]:
    """Items of ``hidden/test_<question>.py``, the question's points split by their weights."""
    path = hidden_test_path(folder, question)
    if not path.is_file():
        raise BuildError(f"question {question} has no hidden tests: expected {path}")
    collector = _Collector()
    forget_modules_under(path.parent)
    with contextlib.redirect_stdout(io.StringIO()):
        pytest.main([str(path), "--collect-only", "-q", "-p", "no:cacheprovider", "--noconftest",
                     "--import-mode=importlib",
                     "-c", "/dev/null", "--rootdir", str(path.parent)], plugins=[collector])
    forget_modules_under(path.parent)
    if collector.errors or not collector.items:
        raise BuildError(f"could not collect the hidden tests in {path}: "
                         + ("\n".join(collector.errors) or "no test found"))
    total_weight = sum(w for _, w in collector.items)
    shares = [round(total_points * w / total_weight, 4) for _, w in collector.items]
    shares[-1] = round(total_points - sum(shares[:-1]), 4)   # the shares add up exactly
    return [HiddenItem(question, name, share) for (name, _), share in zip(collector.items, shares)]

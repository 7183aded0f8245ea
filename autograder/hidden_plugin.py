"""The pytest plugin that runs a hidden test module against one student.

It provides the fixtures hidden tests use (``student``, ``rng``, ``sizes``,
``hidden_seed``) and records one verdict per test item: passed, or the
feedback message of the first failure. Tracebacks are never kept, since they
would show hidden inputs.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autograder.judge import Feedback


@dataclass
class ItemResult:
    """One hidden test's verdict."""

    nodeid: str
    passed: bool
    message: str = ""
    mistakes: tuple[str, ...] = ()     # slugs of the catalogued mistakes it matched


@dataclass(eq=False)   # pytest registers plugins in sets: keep identity hashing
class HiddenSuitePlugin:
    """Fixtures and result capture for one run of the hidden tests."""

    student: Any
    hidden_seed: int
    sizes: dict = field(default_factory=dict)
    results: dict[str, ItemResult] = field(default_factory=dict)

    def pytest_configure(self, config):
        config.addinivalue_line("markers", "points(n): the test's weight within its question")

    @pytest.fixture(name="student")
    def _student(self):
        return self.student

    @pytest.fixture(name="hidden_seed")
    def _hidden_seed(self):
        return self.hidden_seed

    @pytest.fixture(name="sizes")
    def _sizes(self):
        return dict(self.sizes)

    @pytest.fixture(name="rng")
    def _rng(self, request):
        # Seeded by the test's name too, so each test's inputs are fixed
        # whatever order the tests run in or which of them are selected.
        return np.random.default_rng([self.hidden_seed, zlib.crc32(request.node.name.encode())])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or report.failed:
            message, mistakes = "", ()
            if call.excinfo is not None and report.failed:
                exc = call.excinfo.value
                if isinstance(exc, Feedback):
                    message, mistakes = str(exc), exc.mistakes
                else:
                    message = f"the test stopped with {type(exc).__name__}: {exc}"
            if item.nodeid not in self.results or report.failed:
                self.results[item.nodeid] = ItemResult(item.nodeid, report.passed, message, mistakes)


def run_hidden_suite(paths: list[str | Path], plugin: HiddenSuitePlugin) -> dict[str, dict[str, ItemResult]]:
    """Run hidden modules ``test_<question>.py`` in one pytest session.

    Returns ``{question: {test name: result}}``. One session for all modules
    matters: pytest's start-up costs about as much as a whole module's tests.
    """
    paths = [Path(p).resolve() for p in paths]
    folders = sorted({p.parent for p in paths})
    # Plain asserts (no rewriting, so no values in messages), no conftest or
    # ini file from the submission's folder, no cache written next to it.
    args = [*map(str, paths), "-q", "--no-header", "-s", "--assert=plain", "--noconftest", "--color=no",
            "--import-mode=importlib", "-p", "no:cacheprovider", "-p", "no:randomly",
            "--rootdir", str(folders[0]), "-c", os.devnull, "-W", "ignore"]
    for folder in folders:
        forget_modules_under(folder)
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        pytest.main(args, plugins=[plugin])
    for folder in folders:
        forget_modules_under(folder)
    by_question: dict[str, dict[str, ItemResult]] = {Path(p).stem.removeprefix("test_"): {} for p in paths}
    for nodeid, result in plugin.results.items():
        module, _, name = nodeid.partition("::")
        by_question.setdefault(Path(module).stem.removeprefix("test_"), {})[name] = result
    return by_question


def run_hidden_module(path: str | Path, plugin: HiddenSuitePlugin) -> dict[str, ItemResult]:
    """Run one hidden module; results by test name."""
    return run_hidden_suite([path], plugin)[Path(path).stem.removeprefix("test_")]


def forget_modules_under(folder: Path) -> None:
    """Drop imported test modules that live in ``folder`` from ``sys.modules``.

    Every assignment names its hidden modules ``test_q1.py`` ...; without this,
    a second assignment run in the same process would reuse the first one's.
    """
    prefix = str(Path(folder).resolve()) + os.sep
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if file and file.startswith(prefix) and os.sep not in file[len(prefix):]:
            del sys.modules[name]

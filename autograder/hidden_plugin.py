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

from autograder.judge import Feedback, reset_diagnosis_memo


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
        _register_markers(config)

    def pytest_sessionstart(self, session):
        reset_diagnosis_memo()

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
        return rng_for_test(self.hidden_seed, request.node.name)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or report.failed:
            message, mistakes = "", ()
            if call.excinfo is not None and report.failed:
                message, mistakes = failure_of(call.excinfo.value)
            if item.nodeid not in self.results or report.failed:
                self.results[item.nodeid] = ItemResult(item.nodeid, report.passed, message, mistakes)


def hidden_test_path(folder: Path, question: str) -> Path:
    """Where a support or assignment folder keeps ``question``'s hidden module."""
    return Path(folder) / "hidden" / f"test_{question}.py"


def rng_for_test(hidden_seed: int, test_name: str) -> np.random.Generator:
    """The ``rng`` fixture of one test.

    Seeded by the test's name too, so each test's inputs are fixed whatever
    order the tests run in or which of them are selected, and are the same
    under pytest and under ``CollectedSuite``.
    """
    return np.random.default_rng([hidden_seed, zlib.crc32(test_name.encode())])


def failure_of(exc: BaseException) -> tuple[str, tuple[str, ...]]:
    """What a failed test tells the student, and the mistakes it matched."""
    if isinstance(exc, Feedback):
        return str(exc), exc.mistakes
    return f"the test stopped with {type(exc).__name__}: {exc}", ()


def _register_markers(config: Any) -> None:
    config.addinivalue_line("markers", "points(n): the test's weight within its question")


def _quiet_pytest(paths: list[Path], plugin: Any, extra_args: list[str]) -> None:
    """One pytest session over hidden modules, its output swallowed.

    The modules are imported afresh and forgotten afterwards (see
    ``forget_modules_under``); no conftest or ini file from their folder is
    read and no cache is written next to them.
    """
    folders = sorted({p.parent for p in paths})
    args = [*map(str, paths), "-q", "--noconftest", "--import-mode=importlib", "-p", "no:cacheprovider",
            "--rootdir", str(folders[0]), "-c", os.devnull, "-W", "ignore", *extra_args]
    for folder in folders:
        forget_modules_under(folder)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            pytest.main(args, plugins=[plugin])
    finally:
        for folder in folders:
            forget_modules_under(folder)


def run_hidden_suite(paths: list[str | Path], plugin: HiddenSuitePlugin) -> dict[str, dict[str, ItemResult]]:
    """Run hidden modules ``test_<question>.py`` in one pytest session.

    Returns ``{question: {test name: result}}``. One session for all modules
    matters: pytest's start-up costs about as much as a whole module's tests.
    """
    paths = [Path(p).resolve() for p in paths]
    # Plain asserts: no rewriting, so no values in messages.
    _quiet_pytest(paths, plugin, ["--no-header", "-s", "--assert=plain", "--color=no", "-p", "no:randomly"])
    by_question: dict[str, dict[str, ItemResult]] = {Path(p).stem.removeprefix("test_"): {} for p in paths}
    for nodeid, result in plugin.results.items():
        module, _, name = nodeid.partition("::")
        by_question.setdefault(Path(module).stem.removeprefix("test_"), {})[name] = result
    return by_question


def run_hidden_module(path: str | Path, plugin: HiddenSuitePlugin) -> dict[str, ItemResult]:
    """Run one hidden module; results by test name."""
    return run_hidden_suite([path], plugin)[Path(path).stem.removeprefix("test_")]


def forget_modules_under(folder: Path) -> None:
    """Drop imported hidden-test modules that live in, or share a name with one in, ``folder``.

    Every assignment names its hidden modules ``test_q1.py`` ...; pytest's
    importlib mode names modules after the file, so without this a second
    assignment in the same process would reuse the first one's modules.
    """
    folder = Path(folder).resolve()
    prefix = str(folder) + os.sep
    stems = {p.stem for p in folder.glob("test_*.py")}
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None) or ""
        here = file.startswith(prefix) and os.sep not in file[len(prefix):]
        if here or name.rpartition(".")[2] in stems:
            del sys.modules[name]


class _ItemCollector:
    """Keeps the collected test items and any collection errors."""

    def __init__(self):
        self.items: list = []
        self.errors: list[str] = []

    def pytest_configure(self, config):
        _register_markers(config)

    def pytest_collection_modifyitems(self, items):
        self.items.extend(items)

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(str(report.longrepr))


def collect_items(paths: list[str | Path]) -> list:
    """The pytest items of hidden modules, collected without running them.

    Raises ``RuntimeError`` with pytest's report when a module cannot be collected.
    """
    collector = _ItemCollector()
    _quiet_pytest([Path(p).resolve() for p in paths], collector, ["--collect-only"])
    if collector.errors:
        raise RuntimeError("could not collect the hidden tests:\n" + "\n".join(collector.errors))
    return collector.items


@dataclass(frozen=True)
class _Case:
    question: str
    name: str
    function: Any
    params: dict
    fixtures: tuple[str, ...]


class CollectedSuite:
    """Hidden modules collected once, then run directly for many students.

    Bulk grading runs the same suite hundreds of times; pytest's session
    start-up and collection would cost more than the tests. This collects
    with pytest once (so test names and parameters are exactly pytest's)
    and afterwards calls each test function with its parameters and the
    same fixtures ``HiddenSuitePlugin`` provides. Only the fixtures
    ``student``, ``rng``, ``sizes`` and ``hidden_seed`` are supported.
    """

    FIXTURES = ("student", "rng", "sizes", "hidden_seed")

    def __init__(self, paths: list[str | Path]):
        self.cases: list[_Case] = []
        for item in collect_items(paths):
            fixtures = tuple(f for f in item.fixturenames
                             if f not in getattr(getattr(item, "callspec", None), "params", {}))
            unknown = [f for f in fixtures if f not in self.FIXTURES and f != "request"]
            if unknown:
                raise RuntimeError(f"{item.nodeid} uses fixtures the suite cannot provide: {unknown}")
            params = dict(item.callspec.params) if hasattr(item, "callspec") else {}
            module = Path(str(item.path)).stem.removeprefix("test_")
            self.cases.append(_Case(module, item.name, item.obj, params, fixtures))

    def run(self, student: Any, hidden_seed: int, sizes: dict) -> dict[str, dict[str, ItemResult]]:
        """Run every case against ``student``: ``{question: {test name: result}}``."""
        results: dict[str, dict[str, ItemResult]] = {}
        reset_diagnosis_memo()
        for case in self.cases:
            values = {"student": student, "sizes": dict(sizes), "hidden_seed": hidden_seed,
                      "rng": rng_for_test(hidden_seed, case.name)}
            kwargs = {**{f: values[f] for f in case.fixtures if f in values}, **case.params}
            try:
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    case.function(**kwargs)
                result = ItemResult(case.name, True)
            except Exception as exc:   # feedback, or a student error the test did not turn into it
                result = ItemResult(case.name, False, *failure_of(exc))
            results.setdefault(case.question, {})[case.name] = result
        return results

"""The one engine that runs hidden tests: collected by pytest once, then run per student.

Every path that grades runs this engine: ``grader grade`` (many students
per process), the otter plugin under ``otter run`` and on Gradescope, the
build's self-check (through ``otter run``), and the in-kernel adapter that
otter's own test cells call. pytest collects the hidden modules, so test
names, parameters and markers are exactly pytest's; afterwards each test
function is called directly with its parameters and the two fixtures hidden
tests may use:

``student``
    the student's namespace (a sandbox proxy, or a notebook's globals);
``rng``
    a ``numpy.random.Generator`` seeded by the submission's seed and the
    test's name, so each test's inputs are fixed for one submission whatever
    order the tests run in.

Outcomes follow pytest's, with one addition: a test passes only if it
returns after at least one of its checks passed (``judge.expect`` with a
right answer, or ``judge.record_evidence``), so an early return earns
nothing. ``pytest.fail`` and any exception fail it; ``pytest.skip`` and
``pytest.xfail`` do not pass it either, since a test earns points only on
positive evidence; after ``pytest.exit`` the remaining tests are not run (and
fail). Only ``KeyboardInterrupt`` propagates. Tracebacks are never kept: they would show
hidden inputs.
"""
from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pytest
from _pytest.outcomes import Exit, Failed, Skipped, XFailed

from autograder.runtime.catalogue import Catalogue
from autograder.runtime.errors import GraderError
from autograder.runtime.grading.outcome import Diagnosis, ItemOutcome
from autograder.runtime.helper_blame import HelperJudge
from autograder.runtime.helper_blame import recording as recording_helper_calls
from autograder.runtime.judge import Feedback, counting_evidence, reset_diagnosis_memo
from autograder.runtime.text import code

#: A run swaps sys.stdout and sys.stderr, the catalogue in use and the diagnosis memo: all of it
#: process-wide state, so two threads running suites at once (the build verifies assignments side
#: by side) would restore each other's streams and leave print() writing into a dead buffer.
_PROCESS_WIDE = threading.RLock()
#: The fixtures a hidden test may ask for.
FIXTURES = ("student", "rng")
#: The verdict of a test that returned without any check passing.
NO_EVIDENCE = ("This test could not check your work (it finished without comparing anything), so it "
               "earns nothing; please tell your instructor.")
#: Markers that would make pytest skip a test or expect it to fail: refused,
#: since a test that does not run cannot be evidence of anything.
REFUSED_MARKERS = ("skip", "skipif", "xfail", "usefixtures")


class HiddenSuiteError(GraderError):
    """The hidden modules cannot be collected, or use what the engine cannot provide.

    At grading time this usually means the autograder zip was built by
    another version of the grader: rebuild it with ``grader build``.
    """


def hidden_test_path(folder: Path, question: str) -> Path:
    """Where a support or assignment folder keeps ``question``'s hidden module."""
    return Path(folder) / "hidden" / f"test_{question}.py"


def question_of(path: str | Path) -> str:
    """The question a hidden module ``test_<question>.py`` belongs to."""
    return Path(path).stem.removeprefix("test_")


def rng_for_test(seed: int, test_name: str) -> np.random.Generator:
    """The ``rng`` fixture of one test for the submission whose seed is ``seed``."""
    return np.random.default_rng([seed, zlib.crc32(test_name.encode())])


def failure_of(exc: BaseException) -> tuple[str, tuple[Diagnosis, ...]]:
    """What a failed test tells the student (without the named mistakes), and the mistakes it matched."""
    if isinstance(exc, Feedback):
        return exc.base, tuple(Diagnosis(d.name, d.function, d.title, d.explanation) for d in exc.diagnoses)
    if isinstance(exc, XFailed):
        return f"the test was marked as an expected failure ({exc.msg or 'no reason given'}), so it earns nothing.", ()
    if isinstance(exc, Skipped):
        return f"the test was skipped ({exc.msg or 'no reason given'}), so it earns nothing.", ()
    if isinstance(exc, Failed):
        return exc.msg or "the test failed.", ()
    # Its text may quote what a student's code or the worker produced: a code span keeps it text.
    return f"the test stopped with {code(f'{type(exc).__name__}: {exc}')}", ()


def _register_markers(config: Any) -> None:
    config.addinivalue_line("markers", "points(n): the test's weight within its question")
    config.addinivalue_line("markers", "contract(*keys): the requirements the test enforces beyond the "
                            "question's stated behaviour, as keys of the question's contracts; none: nothing more")


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

    def __init__(self) -> None:
        self.items: list = []
        self.errors: list[str] = []

    def pytest_configure(self, config: Any) -> None:
        _register_markers(config)

    def pytest_collection_modifyitems(self, items: list) -> None:
        self.items.extend(items)

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.errors.append(str(report.longrepr))


@contextlib.contextmanager
def _no_plugin_autoload() -> Iterator[None]:
    """Collect without the pytest plugins installed alongside (hypothesis, playwright...): the
    engine runs the tests itself, and loading them took most of the collection's 0.8 s, paid by
    every grading run and every Gradescope submission. (An environment variable, as the
    ``--disable-plugin-autoload`` option needs pytest 8.4; set under the process-wide lock.)"""
    name = "PYTEST_DISABLE_PLUGIN_AUTOLOAD"
    before = os.environ.get(name)
    os.environ[name] = "1"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def collect_items(paths: Iterable[str | Path]) -> list:
    """The pytest items of hidden modules, collected without running them.

    The modules are imported afresh and forgotten afterwards; no conftest or
    ini file from their folder is read and no cache is written next to them.

    Raises:
        HiddenSuiteError: a module cannot be collected.
    """
    paths = [Path(p).resolve() for p in paths]
    folders = sorted({p.parent for p in paths})
    collector = _ItemCollector()
    args = [*map(str, paths), "-q", "--collect-only", "--noconftest", "--import-mode=importlib",
            "-p", "no:cacheprovider", "--rootdir", str(folders[0]), "-c", os.devnull, "-W", "ignore"]
    for folder in folders:
        forget_modules_under(folder)
    try:
        with _PROCESS_WIDE, _no_plugin_autoload(), contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            pytest.main(args, plugins=[collector])
    finally:
        for folder in folders:
            forget_modules_under(folder)
    if collector.errors:
        raise HiddenSuiteError("could not collect the hidden tests:\n" + "\n".join(collector.errors))
    return collector.items


def item_contracts(item: Any) -> tuple[str, ...] | None:
    """The contract keys a hidden test declares with ``@pytest.mark.contract(...)`` (on the test or,
    as ``pytestmark``, on its module), in order; ``()`` for a bare ``contract()`` (it enforces nothing
    beyond the question's stated behaviour); ``None`` when it declares nothing at all."""
    markers = list(item.iter_markers("contract"))
    if not markers:
        return None
    keys: list[str] = []
    for marker in reversed(markers):         # the module's first, then the test's own
        keys += [str(key) for key in marker.args if str(key) not in keys]
    return tuple(keys)


def item_points(item: Any) -> float:
    """The weight a hidden test declares with ``@pytest.mark.points(n)`` (1 without it)."""
    marker = item.get_closest_marker("points")
    return float(marker.args[0]) if marker else 1.0


@dataclass(frozen=True)
class Case:
    """One collected hidden test: what to call, with which parameters and fixtures, and its weight."""

    question: str
    name: str
    function: Any
    params: dict
    fixtures: tuple[str, ...]
    weight: float
    #: The requirements it enforces (``item_contracts``): keys of its question's ``contracts``.
    contracts: tuple[str, ...] | None = None


def case_of(item: Any) -> Case:
    """A collected pytest item as a ``Case``.

    Raises:
        HiddenSuiteError: the test asks for a fixture the engine does not
            provide, or carries a marker that would keep it from running.
    """
    params = dict(item.callspec.params) if hasattr(item, "callspec") else {}
    fixtures = tuple(f for f in item.fixturenames if f not in params)
    unknown = [f for f in fixtures if f not in FIXTURES]
    if unknown:
        raise HiddenSuiteError(f"{item.nodeid} asks for fixtures the hidden suite does not provide: "
                               f"{', '.join(unknown)} (available: {', '.join(FIXTURES)})")
    refused = [m.name for m in item.iter_markers() if m.name in REFUSED_MARKERS]
    if refused:
        raise HiddenSuiteError(f"{item.nodeid} is marked {', '.join(refused)}: a hidden test must run to "
                               "earn or lose points; remove the marker")
    return Case(question_of(item.path), item.name, item.obj, params, fixtures, item_points(item),
                item_contracts(item))


class HiddenSuite:
    """Hidden modules collected once, then run against any number of students.

    Args:
        paths: the hidden modules ``test_<question>.py``, in question order.
        items: ``{question: ((test name, points), ...)}`` from the build's
            hidden config; outcomes come back in this order with these
            points. Without it, every collected test counts one point.
        catalogue: the assignment's known mistakes, named in feedback.

    Raises:
        HiddenSuiteError: collection failed, a test uses a fixture or marker
            the engine refuses, or ``items`` names a test that does not exist.
    """

    def __init__(self, paths: Iterable[str | Path], items: dict[str, tuple[tuple[str, float], ...]] | None = None,
                 catalogue: Catalogue | None = None) -> None:
        self.cases = [case_of(item) for item in collect_items(paths)]
        self.catalogue = catalogue
        found = {(c.question, c.name) for c in self.cases}
        if items is None:
            items = {}
            for case in self.cases:
                items.setdefault(case.question, ())
                items[case.question] += ((case.name, 1.0),)
        missing = [f"{q}::{t}" for q, tests in items.items() for t, _ in tests if (q, t) not in found]
        if missing:
            raise HiddenSuiteError(f"the hidden config names tests the hidden modules do not have: "
                                   f"{', '.join(missing)}; rebuild the autograder with `grader build`")
        self.items = {q: tuple((t, float(p)) for t, p in tests) for q, tests in items.items()}

    @property
    def questions(self) -> tuple[str, ...]:
        return tuple(self.items)

    def run(self, student: Any, seed: int) -> SuiteRun:
        """Run every test against ``student`` with inputs drawn from ``seed``."""
        with _PROCESS_WIDE:
            return self._run(student, seed)

    def _run(self, student: Any, seed: int) -> SuiteRun:
        from autograder.runtime.diagnosis import (feedback_for, recording_ruled_out, ruled_out_by_passed_checks,
                                                   using_catalogue)

        wanted = {(q, t) for q, tests in self.items.items() for t, _ in tests}
        verdicts: dict[tuple[str, str], tuple[bool, str, tuple[Diagnosis, ...]]] = {}
        #: What the relations said beside a named mistake: said instead when every named one is ruled out.
        fallbacks: dict[tuple[str, str], str] = {}
        #: Per running test, the calls the student's functions made to the student's other graded
        #: ones (``helper_blame``): judged if the test fails, let go when it ends.
        calls: dict[tuple[str, str], list] = {}
        judge = self._helper_judge()
        stopped = ""
        reset_diagnosis_memo()
        with using_catalogue(self.catalogue), recording_ruled_out() as ruled_out:
            for case in self.cases:
                if (case.question, case.name) not in wanted:
                    continue
                if stopped:
                    verdicts[case.question, case.name] = (False, stopped, ())
                    continue
                values = {"student": student, "rng": rng_for_test(seed, case.name)}
                try:
                    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), \
                            counting_evidence() as evidence, recording_helper_calls() as helper_calls:
                        calls[case.question, case.name] = helper_calls
                        case.function(**{f: values[f] for f in case.fixtures}, **case.params)
                    calls.pop((case.question, case.name), None)   # passed: nothing to lay elsewhere
                    if evidence[0]:
                        verdicts[case.question, case.name] = (True, "", ())
                    else:   # returned without a single passed check: it could not decide
                        verdicts[case.question, case.name] = (False, NO_EVIDENCE, ())
                except KeyboardInterrupt:
                    raise
                except Exit as exc:
                    stopped = f"Not run: an earlier hidden test stopped the suite ({exc.msg})."
                    verdicts[case.question, case.name] = (False, f"the test stopped the suite: {exc.msg}", ())
                except BaseException as exc:   # feedback, pytest's outcomes, or an error the test did not handle
                    message, found = failure_of(exc)
                    made = calls.pop((case.question, case.name), None)
                    # An exception already laid on the helper that raised it stays as it is.
                    if made and judge is not None and not message.startswith("The error is raised inside your"):
                        laid = judge.lay(message, made)
                        if laid != message:    # the mistakes it matched read the caller's result: not named
                            message, found = laid, ()
                    verdicts[case.question, case.name] = (False, message, found)
                    if found and getattr(exc, "fallback", ""):
                        fallbacks[case.question, case.name] = exc.fallback
            named = {(d.function, d.slug) for _, _, found in verdicts.values() for d in found}
            ruled_out |= ruled_out_by_passed_checks(sorted((f, s) for f, s in named if s not in ruled_out))
        items, diagnoses = [], {}
        for question, tests in self.items.items():
            for test, points in tests:
                passed, message, found = verdicts.get((question, test), (False, "Not run.", ()))
                # One verdict per function: a mistake another test of it ruled out is not named.
                kept = tuple(d for d in found if d.slug not in ruled_out)
                if kept:
                    message += "\n\n" + feedback_for(list(kept))
                elif found and (question, test) in fallbacks:
                    message += "\n\n" + fallbacks[question, test]
                found = kept
                for d in found:
                    diagnoses.setdefault(d.slug, d)
                items.append(ItemOutcome(question, test, points, passed, message, tuple(d.slug for d in found)))
        return SuiteRun(tuple(items), tuple(diagnoses.values()))

    def _helper_judge(self) -> HelperJudge | None:
        """A judge of the student's helpers against this assignment's references (none without a
        catalogue: then nothing is laid on a helper)."""
        if self.catalogue is None:
            return None
        functions = set(self.catalogue.functions)
        return HelperJudge(lambda name: self.catalogue.reference(name) if name in functions else None)


@dataclass(frozen=True)
class SuiteRun:
    """One student's run of the hidden suite: every test's outcome, and the mistakes named."""

    items: tuple[ItemOutcome, ...]
    diagnoses: tuple[Diagnosis, ...]

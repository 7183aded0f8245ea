"""One engine, the same outcome on every path.

The hidden-suite engine is the only thing that runs hidden tests (bulk grading,
the otter plugin, the build's self-check through it). These tests hold it to
pytest's own outcomes for pytest's outcome exceptions, with the student called
in-process and through the sandbox alike, and (slow) require every catalogued
mistake and alternative to get the same per-test verdicts in-process and
through ``grader grade``.
"""
from __future__ import annotations

import os
import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.runtime.hidden_suite import HiddenSuite
from autograder.runtime.grading.runner import SandboxStudent
from autograder.runtime.sandbox import Limits, SandboxSession

HIDDEN = textwrap.dedent('''
    import pytest
    from autograder.runtime.judge import call, record_evidence

    class Odd(BaseException):
        pass

    def test_right(student, rng):
        if call(student, "double", 3) == 6:
            record_evidence()

    def test_wrong(student, rng):
        assert call(student, "double", 3) == 7, "double(3) should be 7 here"

    def test_no_check(student, rng):
        call(student, "double", 3)

    def test_fail(student, rng):
        pytest.fail("failed on purpose")

    def test_skip(student, rng):
        pytest.skip("not today")

    def test_xfail(student, rng):
        pytest.xfail("known to fail")

    def test_system_exit(student, rng):
        raise SystemExit(3)

    def test_odd_base_exception(student, rng):
        raise Odd("odd")

    def test_missing_function(student, rng):
        call(student, "triple", 3)

    def test_exit(student, rng):
        pytest.exit("stop here")

    def test_after_exit(student, rng):
        record_evidence()
''')
CONFTEST = textwrap.dedent('''
    import numpy as np
    import pytest
    from types import SimpleNamespace

    @pytest.fixture
    def student():
        return SimpleNamespace(double=lambda v: 2 * v)

    @pytest.fixture
    def rng():
        return np.random.default_rng(0)
''')
STUDENT_CODE = "def double(v):\n    return 2 * v\n"


@pytest.fixture(scope="module")
def module(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("parity")
    (folder / "test_q1.py").write_text(HIDDEN)
    return folder / "test_q1.py"


def pytest_outcomes(module: Path) -> dict[str, str]:
    """What pytest itself says of each test (``not run`` after ``pytest.exit``)."""
    folder = module.parent / "real"
    folder.mkdir(exist_ok=True)
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / module.name).write_text(module.read_text())
    seen: dict[str, str] = {}

    class Record:
        def pytest_runtest_logreport(self, report):
            if report.when == "call" or report.outcome != "passed":
                seen.setdefault(report.nodeid.rpartition("::")[2], "xfailed" if hasattr(report, "wasxfail")
                                else report.outcome)

    pytest.main([str(folder / module.name), "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
                 "-c", os.devnull], plugins=[Record()])
    return seen


def test_the_engine_agrees_with_pytest_and_pays_only_on_evidence(module):
    real = pytest_outcomes(module)
    assert real["test_right"] == "passed" and real["test_no_check"] == "passed"
    assert real["test_fail"] == "failed" and real["test_skip"] == "skipped" and real["test_xfail"] == "xfailed"
    assert "test_exit" not in real and "test_after_exit" not in real, "pytest.exit stops pytest's session"
    ours = {o.test: o for o in HiddenSuite([module]).run(SimpleNamespace(double=lambda v: 2 * v), 1).items}
    assert set(ours) == {*real, "test_exit", "test_after_exit"}
    for test, outcome in ours.items():
        # Passed in pytest and checked something: the only way to earn points.
        assert outcome.passed == (real.get(test) == "passed" and test != "test_no_check"), test
        assert outcome.passed or outcome.message, f"{test} failed without saying why"
    assert "skipped" in ours["test_skip"].message and "expected failure" in ours["test_xfail"].message
    assert "could not check your work" in ours["test_no_check"].message
    assert "stopped the suite" in ours["test_after_exit"].message


@pytest.mark.parametrize("isolation", ["bwrap"])
def test_the_sandboxed_student_gets_the_same_verdicts(module, isolation):
    in_process = HiddenSuite([module]).run(SimpleNamespace(double=lambda v: 2 * v), 1).items
    with SandboxSession([STUDENT_CODE], Limits(), isolation=isolation) as session:
        assert session.start().loaded
        sandboxed = HiddenSuite([module]).run(SandboxStudent(session), 1).items
    assert [(o.test, o.passed) for o in sandboxed] == [(o.test, o.passed) for o in in_process]


@pytest.mark.slow
def test_catalogue_and_alternatives_get_the_same_verdicts_in_process_and_through_grader_grade(tmp_path):
    """Every catalogued mistake and alternative of lm-head, as a script, through the sandboxed bulk
    grader: the same per-test pass/fail as the engine gives the plain functions in-process."""
    from autograder.build import build
    from autograder.runtime.grading.bulk import grade_batch
    from autograder.runtime.grading.extract import extract_program
    from autograder.runtime.grading.intake import read_submission
    from autograder.runtime.grading.support import load_autograder
    from tests.alternatives import ALTERNATIVES
    from tests.cohort import mistake_source
    from tests.suites import FUNCTIONS, MISTAKES, reference_namespace, run_for
    import inspect
    import solutions

    (built,) = build(["lm-head"], tmp_path / "dist", None, verify=False)
    names = [f for f, a in FUNCTIONS.items() if a == "lm-head"]
    reference = "import numpy as np\n\n" + "\n\n".join(inspect.getsource(getattr(solutions, n)) for n in names)
    folder = tmp_path / "subs"
    folder.mkdir()
    cases = {}
    for slug, m in MISTAKES.items():
        if m.function in names:
            (folder / f"m-{slug}.py").write_text(reference + "\n\n" + mistake_source(m))
            cases[f"m-{slug}"] = {m.function: m.implementation}
    import tests.alternatives as alternatives_module
    helpers = inspect.getsource(alternatives_module).replace("from __future__ import annotations\n", "")
    for key, impls in ALTERNATIVES.items():
        chosen = {f: fn for f, fn in impls.items() if f in names}
        if chosen:
            aliases = "\n".join(f"{f} = {fn.__name__}" for f, fn in chosen.items())
            (folder / f"a-{key}.py").write_text(reference + "\n\n" + helpers + "\n\n" + aliases + "\n")
            cases[f"a-{key}"] = chosen
    grade_batch([folder], built.autograder_zip, tmp_path / "out", timeout=60)
    ag = load_autograder(built.autograder_zip, tmp_path / "ag")
    differ = []
    for student, overrides in cases.items():
        results = json.loads((tmp_path / "out" / "students" / student / "results.json").read_text())
        graded = {t["extra_data"]["test"]: t["status"] == "passed" for t in results["tests"]}
        # The same inputs as the graded run: the seed grading drew for this submission's code.
        seed = ag.seed_for(extract_program(read_submission(folder / f"{student}.py", "lm-head")).digest)
        expected = {}
        for function in names:
            for test, outcome in run_for(function, reference_namespace(overrides), seed).items():
                expected[test] = outcome.passed
        mismatched = sorted(t for t in expected if graded.get(t) != expected[t])
        if mismatched:
            differ.append(f"{student}: {mismatched}")
    assert not differ, "\n".join(differ)

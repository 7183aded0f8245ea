"""The public checks students run in the notebook: they pass correct code, fail mistakes, and
never blame the wrong function.

Each question's checks are run here exactly as rendered into the student notebook, in the
namespace the notebook's setup cell makes, with the reference functions and one of them
replaced. The property: a catalogued mistake in one function never fails another
question's checks, and a correct implementation never fails its own.
"""
from __future__ import annotations

import contextlib
import inspect
import io
import warnings
from functools import lru_cache

import numpy as np
import pytest

import solutions
from autograder.build.config import resolve_settings
from autograder.build.master import public_sources
from autograder.build.spec import available_assignments
from tests.alternatives import ALTERNATIVES
from tests.suites import FUNCTIONS, MISTAKES


_COMPILED: dict[str, object] = {}


def _exec_compiled_once(source, *namespaces):
    """``exec`` for the checks run here: a source string is compiled once, not at every call.

    Each fixed-input check ships the kernel's sources as strings and runs them at every call;
    compiling them is nearly all a call costs, and this file runs every check on every blind
    case. Running the compiled code is what ``exec`` of the string does, so the checks behave as
    they do in a notebook.
    """
    if isinstance(source, str):
        if source not in _COMPILED:
            _COMPILED[source] = compile(source, "<string>", "exec")
        source = _COMPILED[source]
    return exec(source, *namespaces)


@lru_cache(maxsize=None)
def _assignment(name: str):
    """(setup namespace, {question: [check functions]}, {function: question}) of one assignment."""
    (settings,) = resolve_settings([name], None)
    setup, sources = public_sources(settings)
    base: dict = {}
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(setup, f"<{name} setup>", "exec"), base)
    checks = {}
    for question, functions in sources.items():
        checks[question] = []
        for source in functions:
            scope: dict = {"exec": _exec_compiled_once}
            exec(compile(source, f"<{name} {question}>", "exec"), scope)
            checks[question] += [v for k, v in scope.items() if k.startswith("test_")]
    owner = {f: q.name for q in settings.questions for f in q.functions}
    return base, checks, owner


def run_checks(name: str, overrides: dict) -> dict[str, list[str]]:
    """{question: [messages of the failed checks]} with the references and ``overrides``."""
    base, checks, _ = _assignment(name)
    namespace = {**base, **{f: getattr(solutions, f) for f, a in FUNCTIONS.items() if a == name}, **overrides}
    failed: dict[str, list[str]] = {}
    for question, functions in checks.items():
        for check in functions:
            args = {p: namespace[p] for p in inspect.signature(check).parameters}
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    check(**args)
            except Exception as exc:    # an assertion, or the student's code raising
                failed.setdefault(question, []).append(f"{check.__name__}: {type(exc).__name__}: {exc}")
    return failed


@pytest.mark.parametrize("name", available_assignments())
def test_the_references_pass_every_public_check(name):
    assert run_checks(name, {}) == {}


@pytest.mark.parametrize("key", sorted(ALTERNATIVES))
def test_alternatives_pass_every_public_check(key):
    impls = ALTERNATIVES[key]
    name = FUNCTIONS[next(iter(impls))]
    assert run_checks(name, impls) == {}


@pytest.mark.parametrize("slug", sorted(MISTAKES))
def test_a_mistake_never_fails_another_questions_checks(slug):
    m = MISTAKES[slug]
    name = FUNCTIONS[m.function]
    own = _assignment(name)[2][m.function]
    failed = run_checks(name, {m.function: m.implementation})
    assert set(failed) <= {own}, f"{slug} (in {m.function}, {own}) fails the checks of {sorted(set(failed) - {own})}"


def test_public_checks_catch_most_catalogued_mistakes():
    caught = [slug for slug, m in MISTAKES.items() if run_checks(FUNCTIONS[m.function], {m.function: m.implementation})]
    rate = len(caught) / len(MISTAKES)
    missed = sorted(set(MISTAKES) - set(caught))
    print(f"\nPUBLIC CHECKS fail for {len(caught)}/{len(MISTAKES)} catalogued mistakes ({rate:.0%}); "
          f"pass: {', '.join(missed)}")
    assert rate >= 0.8, f"public checks fail only {rate:.0%} of catalogued mistakes; they pass: {missed}"


def _named_by_public_checks(m) -> bool:
    failed = run_checks(FUNCTIONS[m.function], {m.function: m.implementation})
    return any(m.title in message for messages in failed.values() for message in messages)


def test_public_checks_name_most_catalogued_mistakes():
    # Named: the mistake's own title is in a failing check's message, as the hidden grading names it.
    named = [slug for slug, m in MISTAKES.items() if _named_by_public_checks(m)]
    rate = len(named) / len(MISTAKES)
    print(f"\nPUBLIC CHECKS name {len(named)}/{len(MISTAKES)} catalogued mistakes ({rate:.0%})")
    assert rate >= 0.6, f"public checks name only {rate:.0%}; unnamed: {sorted(set(MISTAKES) - set(named))}"


def test_fixed_input_checks_ship_values_only():
    # What a student's kernel runs: numbers, titles and explanations, the in-kernel comparison and
    # the relational probes; never a reference, a catalogued implementation or a hidden module.
    import ast
    from pathlib import Path

    import autograder.build.in_kernel as in_kernel
    import autograder.runtime.error_causes as error_causes
    import autograder.runtime.relations as relations
    for module in (in_kernel, relations, error_causes):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert imported <= {"__future__", "copy", "dis", "warnings", "numpy", "inspect", "itertools", "math", "re",
                            "typing"}, imported
    for name in available_assignments():
        (settings,) = resolve_settings([name], None)
        _, sources = public_sources(settings)
        text = "\n".join(s for checks in sources.values() for s in checks)
        assert "on_fixed_inputs" in text
        for marker in ("solutions", "autograder", "mistakes", "hidden", "hidden_seed"):
            assert f"import {marker}" not in text and f"from {marker}" not in text, marker


def _blind_cases():
    import json
    from pathlib import Path
    root = Path(__file__).parent / "blind"
    for corpus in sorted(p for p in root.iterdir() if (p / "cases.json").is_file()):
        for case in json.loads((corpus / "cases.json").read_text(encoding="utf-8")):
            yield corpus.name, case, corpus / case["assignment"] / f"{case['case']}.py"


def _blind_functions(path) -> dict:
    namespace: dict = {"__name__": "blind_case"}
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
    return {f: namespace[f] for f, a in FUNCTIONS.items() if f in namespace}


def test_blind_corpora_pass_their_own_checks_and_never_fail_another_questions():
    # Cases written from the notebook alone, by people who never saw these checks.
    blamed, rejected, caught, mistakes = [], [], 0, 0
    for corpus, case, path in _blind_cases():
        name = case["assignment"]
        failed = run_checks(name, _blind_functions(path))
        if case["kind"] == "correct":
            if failed:
                rejected.append((corpus, case["case"], failed))
            continue
        mistakes += 1
        caught += bool(failed)
        own = _assignment(name)[2].get(case["function"])
        if set(failed) - {own}:
            blamed.append((corpus, case["case"], case["function"], sorted(set(failed) - {own})))
    print(f"\nBLIND public checks fail for {caught}/{mistakes} mistakes")
    assert rejected == [], rejected
    assert blamed == [], blamed


def _student_namespace(name: str, source: str) -> dict:
    """The notebook's namespace after its setup cell, the references for the functions ``source``
    does not define, and ``source`` run in it, as a student's cells run in the kernel's globals."""
    base, _, _ = _assignment(name)
    namespace = {**base, "__name__": "__main__",
                 **{f: getattr(solutions, f) for f, a in FUNCTIONS.items() if a == name}}
    exec(compile(source, "<student cells>", "exec"), namespace)
    return namespace


@pytest.mark.parametrize("case", range(len(__import__("tests.cross_function").cross_function.CASES)))
def test_a_broken_helper_is_named_by_the_check_of_the_function_that_calls_it(case):
    # A correct function that calls the student's broken one: the caller's own check must say the
    # fault is in the broken one, whether that raises or returns wrong values.
    from tests.cross_function import CASES
    name, caller, broken, source = CASES[case]
    namespace = _student_namespace(name, source)
    failed = run_checks(name, {f: namespace[f] for f in FUNCTIONS if f in namespace and FUNCTIONS[f] == name})
    own = _assignment(name)[2][caller]
    fixed = [m for m in failed.get(own, []) if m.startswith(f"test_{own}_{caller}_on_fixed_inputs")]
    assert fixed, f"{caller}'s fixed-input check passed: {failed}"
    # A wrong value on the helper's own input says fix it; an error raised inside it says look there first.
    assert f"`{broken}`" in fixed[0] and (f"fix `{broken}` first" in fixed[0] or f"the fault is in `{broken}` or in what" in fixed[0]), fixed[0]


def test_a_workflow_cell_after_an_unwritten_function_says_not_written_yet():
    # An untouched notebook: the first workflow cell could not set `yb`, so the next one meets a
    # NameError for it; the student has written nothing wrong, so nothing is called a raise.
    base, _, _ = _assignment("lm-head")
    said = base["not_ready"]("the head or the loss", NameError("name 'yb' is not defined", name="yb"))
    assert "not written yet" in said and "raised" not in said, said


def test_the_starter_numerical_gradient_passes_no_check():
    def numerical_gradient(f, x, eps=1e-6):
        ...
    failed = run_checks("lm-head", {"numerical_gradient": numerical_gradient})
    q6 = [m for m in failed.get("q6", []) if "input_is_restored" in m]
    assert q6, failed.get("q6")


@pytest.fixture(scope="module")
def starters(tmp_path_factory):
    """Per assignment, the functions as the untouched student notebook defines them (its stubs)."""
    import nbformat

    from autograder.build import build
    root = tmp_path_factory.mktemp("starters")
    found = {}
    for name in available_assignments():
        (result,) = build([name], root / "dist", None, verify=False)
        scope: dict = {"np": np}
        for cell in nbformat.read(result.student, as_version=4).cells:
            if cell.cell_type == "code" and cell.source.lstrip().startswith("def "):
                exec(compile(cell.source, f"<{name} starter>", "exec"), {**_assignment(name)[0], **scope}, scope)
        found[name] = {k: v for k, v in scope.items() if callable(v) and k in FUNCTIONS}
    return found


@pytest.mark.parametrize("name", available_assignments())
def test_no_public_check_passes_the_untouched_notebook(starters, name):
    # Every check of every question, run on the starter functions as the student receives them:
    # a check that passes a stub tells a student who has written nothing that something is right.
    base, checks, _ = _assignment(name)
    assert set(starters[name]) == {f for f, a in FUNCTIONS.items() if a == name}, sorted(starters[name])
    namespace = {**base, **{f: getattr(solutions, f) for f, a in FUNCTIONS.items() if a == name}, **starters[name]}
    passed = []
    for question, functions in checks.items():
        for check in functions:
            args = {p: namespace[p] for p in inspect.signature(check).parameters}
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"), contextlib.redirect_stdout(io.StringIO()):
                    warnings.simplefilter("ignore")
                    check(**args)
            except Exception:
                continue
            passed.append(f"{question}: {check.__name__}")
    assert not passed, f"checks that pass the untouched {name} notebook: {passed}"

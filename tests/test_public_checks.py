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
            scope: dict = {}
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

"""Hidden suites of the built-in assignments, run in-process for the project's own tests.

``run_for(function, student)`` runs the hidden module of the question that
asks for ``function`` against a namespace, with the assignment's catalogue,
and returns the outcomes by test name. Each module is collected once.
"""
from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace
from typing import Any

import solutions
from autograder.build.spec import all_mistakes, available_assignments, load_spec, student_functions
from autograder.runtime.grading.outcome import ItemOutcome
from autograder.runtime.hidden_suite import HiddenSuite, hidden_test_path

#: Every built-in catalogued mistake by slug, and every student function with its assignment.
MISTAKES = all_mistakes()
FUNCTIONS = student_functions()
#: The submission seed the in-process runs use (any fixed number: inputs then stay put).
TEST_SEED = 20261201


@lru_cache(maxsize=None)
def suite_for(function: str) -> HiddenSuite:
    """The collected hidden module of the question that asks for ``function``."""
    for name in available_assignments():
        spec = load_spec(name)
        for q in spec.questions:
            if function in q.functions:
                return HiddenSuite([hidden_test_path(spec.folder, q.name)], catalogue=spec.catalogue())
    raise KeyError(function)


def reference_namespace(overrides: dict[str, Any] | None = None) -> SimpleNamespace:
    """Every reference function, with ``overrides`` swapped in."""
    base = {name: getattr(solutions, name) for name in FUNCTIONS}
    return SimpleNamespace(**{**base, **(overrides or {})})


def run_for(function: str, student: Any, seed: int = TEST_SEED) -> dict[str, ItemOutcome]:
    """Outcomes by test name of ``function``'s hidden module against ``student``."""
    return {o.test: o for o in suite_for(function).run(student, seed).items}

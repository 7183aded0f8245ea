"""Every requirement a hidden test enforces is stated in its question's text.

A hidden test that takes points for more than the question's stated behaviour (a
50,000-token vocabulary under the memory limit, float64 results for float32 inputs, a
Python ``int``, no in-place change, probabilities down to 1e-300, padding values, ...)
declares it with ``@pytest.mark.contract("key", ...)``; ``key`` names a sentence in the
question's ``contracts:`` in ``assignment.yaml``, and that sentence must appear in the
question's rendered text, where the student reads the question. A test that enforces
nothing beyond the stated behaviour says so with a bare ``@pytest.mark.contract()``.
The build refuses a test that declares nothing, an unknown key, or a sentence missing
from the text: a student must never lose points to a rule they could not read.
"""
from __future__ import annotations

from typing import Iterable

from autograder.build.hidden_items import HiddenItem
from autograder.build.spec import QuestionSpec
from autograder.runtime.errors import BuildError


def normalized(text: str) -> str:
    """``text`` with every run of white space one space (line breaks in a template do not count)."""
    return " ".join(text.split())


def missing_statements(question: QuestionSpec, text: str, items: Iterable[HiddenItem]) -> list[str]:
    """Why ``question``'s rendered ``text`` does not state what its hidden ``items`` enforce; empty if it does."""
    shown = normalized(text)
    problems = []
    for item in items:
        if item.contracts is None:
            problems.append(f"hidden test {item.test_name} declares no contract: add "
                            "@pytest.mark.contract(\"key\", ...) naming the requirements it enforces beyond the "
                            "question's stated behaviour, or a bare @pytest.mark.contract() if there are none")
            continue
        for key in item.contracts:
            sentence = question.contracts.get(key)
            if sentence is None:
                known = ", ".join(sorted(question.contracts)) or "none"
                problems.append(f"hidden test {item.test_name} enforces contract {key!r}, which question "
                                f"{question.name} does not define (its contracts: {known}); add it under the "
                                "question's contracts: in assignment.yaml")
            elif sentence not in shown:
                problems.append(f"hidden test {item.test_name} enforces contract {key!r}, but the question's "
                                f"text does not say {sentence!r}; show it in the question's template with "
                                f"{{{{ contract.{key} }}}}")
    return problems


def check_statements(question: QuestionSpec, text: str, items: list[HiddenItem], where: str) -> None:
    """Refuse the build when ``question``'s text leaves a requirement of its hidden tests unstated."""
    problems = missing_statements(question, text, items)
    if problems:
        raise BuildError(f"{where}: " + "; ".join(problems))

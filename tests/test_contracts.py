"""Every requirement a hidden test enforces is stated in its question, where the student reads it.

Each hidden test of both assignments declares what it enforces beyond the question's stated
behaviour (``@pytest.mark.contract``); each declared key must name a sentence of the question's
``contracts:`` that the rendered student notebook shows in that question's own text.
"""
from __future__ import annotations

import re

import nbformat
import pytest

from autograder.build import build
from autograder.build.contracts import missing_statements, normalized
from autograder.build.hidden_items import HiddenItem
from autograder.build.spec import QuestionSpec, load_spec
from autograder.runtime.errors import BuildError
from autograder.runtime.hidden_suite import HiddenSuite, hidden_test_path

ASSIGNMENTS = ("lm-head", "perplexity-and-parameters")


def _question_texts(student: nbformat.NotebookNode) -> dict[str, str]:
    """Each question's own text in the student notebook: its markdown cell headed "## Question N"."""
    texts = {}
    for cell in student.cells:
        found = re.match(r"## Question (\d+)", cell.source) if cell.cell_type == "markdown" else None
        if found:
            texts[f"q{found.group(1)}"] = normalized(cell.source)
    return texts


@pytest.mark.slow
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_each_hidden_test_states_what_it_enforces_in_its_question(assignment, tmp_path):
    (result,) = build([assignment], tmp_path, None, verify=False)
    texts = _question_texts(nbformat.read(result.student, as_version=4))
    spec = load_spec(assignment)
    cases = HiddenSuite([hidden_test_path(spec.folder, q.name) for q in spec.questions]).cases
    assert {c.question for c in cases} == set(texts) == {q.name for q in spec.questions}
    for case in cases:
        assert case.contracts is not None, f"{assignment} {case.name} declares no contract"
        question = spec.question(case.question)
        for key in case.contracts:
            assert key in question.contracts, f"{assignment} {case.name}: unknown contract {key!r}"
            assert question.contracts[key] in texts[case.question], (assignment, case.name, key)
    # The requirements the issue named are each stated where the student reads the question.
    lm = {q.name: q.contracts for q in load_spec("lm-head").questions}
    assert "50,000" in lm["q4"]["large_vocabulary"] and "memory" in lm["q4"]["large_vocabulary"]
    assert "float64" in lm["q4"]["float64_dlogits"] and "float32" in lm["q4"]["float64_dlogits"]


def _question(contracts: dict[str, str]) -> QuestionSpec:
    return QuestionSpec("q1", "A question", ("f",), 1.0, contracts=contracts)


def test_the_build_refuses_a_requirement_the_question_does_not_state():
    question = _question({"big": "V may be 50,000."})
    stated = "## Question 1\n\nWrite `f`. V may be\n50,000."
    assert missing_statements(question, stated, [HiddenItem("q1", "test_big", 1.0, ("big",)),
                                                 HiddenItem("q1", "test_plain", 1.0, ())]) == []
    problems = missing_statements(question, "## Question 1\n\nWrite `f`.",
                                  [HiddenItem("q1", "test_big", 1.0, ("big",)),
                                   HiddenItem("q1", "test_other", 1.0, ("memory",)),
                                   HiddenItem("q1", "test_silent", 1.0, None)])
    assert len(problems) == 3
    assert "does not say 'V may be 50,000.'" in problems[0] and "{{ contract.big }}" in problems[0]
    assert "'memory'" in problems[1] and "does not define" in problems[1]
    assert "test_silent declares no contract" in problems[2]

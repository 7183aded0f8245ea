"""Blind corpora: correct code and realistic mistakes written from the student notebooks alone,
by people who never saw the hidden tests, the catalogue or the references.

``tests/blind/<corpus>/cases.json`` lists each case with the score the grader gave it when the
corpus was written (``report-before.md`` is that measurement). This test holds the line: every
correct case keeps full marks, and every mistake caught then is still caught. It prints the
counts so a run shows how many more the grader catches and names now.
"""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from autograder.build import build
from autograder.runtime.grading.bulk import grade_batch

BLIND = Path(__file__).parent / "blind"
#: The corpora written from the notebooks alone; the real-code corpora (``r1``, ``r2``: adapted from
#: public repositories) run from ``test_real_code_corpora.py``, a file of their own, so that the
#: test workers grade the two kinds at once.
ALL_CORPORA = sorted(p.name for p in BLIND.iterdir() if (p / "cases.json").is_file())
REAL_CODE = [c for c in ALL_CORPORA if c.startswith("r")]
CORPORA = [c for c in ALL_CORPORA if c not in REAL_CODE]
ASSIGNMENTS = ("lm-head", "perplexity-and-parameters")


def test_every_case_has_its_submission_and_the_corpora_are_large():
    for corpus in ALL_CORPORA:
        cases = json.loads((BLIND / corpus / "cases.json").read_text(encoding="utf-8"))
        assert sum(c["kind"] == "correct" for c in cases) >= 10
        assert sum(c["kind"] == "mistake" for c in cases) >= 40
        for c in cases:
            assert (BLIND / corpus / c["assignment"] / f"{c['case']}.py").is_file(), c["case"]


@pytest.fixture(scope="module")
def zips(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    return {r.name: r.autograder_zip for r in build(list(ASSIGNMENTS), out, None, verify=False)}


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_correct_code_keeps_full_marks_and_caught_mistakes_stay_caught(zips, corpus, assignment, tmp_path):
    held_to_its_first_grading(zips, corpus, assignment, tmp_path)


def held_to_its_first_grading(zips, corpus: str, assignment: str, tmp_path) -> None:
    """Grade one corpus's cases of ``assignment``: correct code keeps full marks, every mistake caught at
    the corpus's first grading is still caught."""
    cases = [c for c in json.loads((BLIND / corpus / "cases.json").read_text(encoding="utf-8"))
             if c["assignment"] == assignment]
    grade_batch([BLIND / corpus / assignment], zips[assignment], tmp_path / "out", timeout=60)
    with open(tmp_path / "out" / "gradebook.csv", newline="", encoding="utf-8") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    rejected = [c["case"] for c in cases if c["kind"] == "correct" and book[c["case"]]["total"] != book[c["case"]]["possible"]]
    mistakes = [c for c in cases if c["kind"] == "mistake"]
    caught = [c for c in mistakes if float(book[c["case"]]["total"]) < float(book[c["case"]]["possible"])]
    named = [c for c in caught if book[c["case"]]["mistakes"]]
    lost = [c["case"] for c in mistakes if c["score_before"] < c["possible"] and c not in caught]
    before = sum(c["score_before"] < c["possible"] for c in mistakes)
    print(f"\nBLIND {corpus} {assignment}: {len(rejected)} correct cases marked down; mistakes caught "
          f"{len(caught)}/{len(mistakes)} (before {before}); with a catalogued name {len(named)}")
    assert rejected == [], f"correct code marked down: {rejected}"
    assert lost == [], f"mistakes caught before and missed now: {lost}"

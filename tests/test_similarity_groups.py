"""Is a solution shared by a group reported whole at every size, and does a small submission stay below copies?"""
from __future__ import annotations

import functools

import numpy as np
import pytest

from autograder.similarity import compare
from autograder.similarity.base import starter_cells
from autograder.similarity.compare import base_hashes, document, rank_pairs
from autograder.similarity.section import DEFAULT_THRESHOLD
from tests.similarity_groups_corpus import (ASSIGNMENT, disguised_copy, group_class, group_member, independent,
                                            small_student, starter_only)


@functools.lru_cache(maxsize=None)
def _base():
    return base_hashes(list(starter_cells(ASSIGNMENT)))


def _compare(submissions):
    docs = [document(s.name, s.cells) for s in submissions]
    return compare.compare_class(docs, _base(), starter=compare.starter_lines(list(starter_cells(ASSIGNMENT))))


def _group_pairs(result, members):
    return [p for p in result.pairs if p.a in members and p.b in members]


@pytest.mark.parametrize("size", [20, 60, 200])
@pytest.mark.parametrize("group", [3, 6, 12])
def test_a_group_sharing_one_solution_is_reported_whole(size, group):
    """Every member in one group, no one else, whatever the group's share of the class; and every pair of
    it scored above every other pair (a group of 6 in 20 once scored 0, its code held by over a tenth)."""
    submissions, members = group_class(size, group)
    result = _compare(submissions)
    found = [g for g in result.groups if set(g.members) & members]
    assert [set(g.members) for g in found] == [members], [g.members for g in result.groups]
    inside = _group_pairs(result, members)
    outside = [p.score for p in result.pairs if not (p.a in members and p.b in members)]
    assert len(inside) == group * (group - 1) // 2
    assert min(p.score for p in inside) > max(outside, default=0.0), (min(p.score for p in inside), max(outside))
    assert found[0].shared_tokens >= compare.Settings().group_tokens and found[0].lines and found[0].weight > 0


@pytest.mark.parametrize("size, group", [(20, 8), (200, 80)])
def test_a_group_of_two_fifths_of_the_class_is_reported_whole(size, group):
    submissions, members = group_class(size, group)
    result = _compare(submissions)
    assert [set(g.members) for g in result.groups if set(g.members) & members] == [members]
    assert len(_group_pairs(result, members)) == group * (group - 1) // 2


def test_independent_students_in_a_large_class_form_no_group():
    rng = np.random.default_rng(11)
    submissions = [independent(f"s{i}", rng) for i in range(200)] + [starter_only("a"), starter_only("b")]
    assert _compare(submissions).groups == ()


def test_a_small_submission_sharing_obvious_short_code_ranks_below_every_disguised_copy():
    rng = np.random.default_rng(5)
    drawn = [independent(f"s{i}", rng) for i in range(80)]
    # Three students wrote the obvious list-and-stack next_token_batch the small submission has (its
    # second slice right): few enough that it is not discounted as common, as in the class that showed it.
    obvious = [s for s in drawn if any(c.count("np.stack([data[") == 2 for c in s.cells)][:3]
    students = obvious + [s for s in drawn if not any("np.stack([data[" in c for c in s.cells)][:37]
    author = group_member("author", rng, 0)           # a solution of their own, most of it unusual
    copies = [disguised_copy("copy-of-author", author, rng)]
    small = small_student("small")
    pairs = rank_pairs([document(s.name, s.cells) for s in [*students, author, *copies, small]], _base())
    copy_scores = [p.score for p in pairs if {p.a, p.b} == {"author", "copy-of-author"}]
    small_scores = [p.score for p in pairs if "small" in (p.a, p.b)]
    assert len(copy_scores) == 1 and small_scores
    assert max(small_scores) < min(copy_scores) and max(small_scores) < DEFAULT_THRESHOLD, (small_scores, copy_scores)


def test_the_command_lists_a_group_larger_than_a_tenth_of_the_class_its_pairs_and_says_why(tmp_path):
    import csv
    import io

    from click.testing import CliRunner

    from autograder.cli import main
    from tests.test_similarity import _graded_folder

    submissions, members = group_class(20, 6)
    out = _graded_folder(tmp_path, {s.name: s.cells for s in submissions})
    result = CliRunner().invoke(main, ["similarity", str(out)])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO((out / "similarity-groups.csv").read_text(encoding="utf-8"))))
    assert [(set(r["students"].split()), r["size"]) for r in rows] == [(members, "6")] and float(rows[0]["weight_in_pairs"]) > 0
    pairs = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    inside = [r for r in pairs if r["student_a"] in members and r["student_b"] in members]
    assert len(inside) == 15 and all(r["flagged"] == "yes" for r in inside)
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "Group 1: 6 submissions" in page and "Discounted as common" in page and "<mark>" in page
    assert "is never discounted for the group" in page

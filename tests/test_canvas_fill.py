"""Filling a Canvas gradebook export, built as Canvas writes it (``tests/lms_formats.py``).

Does each submission land in exactly its student's row, matched as Canvas's importer
matches, in the export's own dialect, at the column's points, with every replaced score said?
"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.runtime.grading.bulk import BatchResult
from autograder.runtime.grading.gradebook import write_canvas_gradebook
from autograder.runtime.grading.canvas_gradebook import LmsFileError, fill_canvas_gradebook, read_canvas_export
from autograder.runtime.grading.outcome import Entry, GradeOutcome, GradeRecord, ItemOutcome
from autograder.runtime.grading.summary import lms_lines
from autograder.runtime.sandbox.policy import Clearance
from tests import lms_formats as F

POSSIBLE = 20.0
COLUMN = 6          # Student, ID, SIS User ID, SIS Login ID, Section, Warm-up, lm-head


def _record(student: str, total: float, **entry) -> GradeRecord:
    items = (ItemOutcome("q1", "t_a", total, True), ItemOutcome("q1", "t_b", POSSIBLE - total, False))
    return GradeRecord(Entry(student, Path(f"{student}.zip"), **entry),
                       GradeOutcome(student, "lm-head", "graded", "bwrap", items, POSSIBLE))


def from_gradescope(key: str, total: float) -> GradeRecord:
    """As discovery reads a Gradescope export: the SID the student typed, their e-mail."""
    p = F.roster()[key]
    return _record(p.sid, total, name=p.name, email=p.email, sid=p.sid, identity=f"sid:{p.sid}")


def from_canvas_download(key: str, total: float) -> GradeRecord:
    """As discovery reads Canvas's download: the mangled sortable name and the Canvas user id."""
    p = F.roster()[key]
    prefix = F.canvas_prefix(p.sortable_name, p.canvas_id)
    return _record(str(p.canvas_id), total, name=prefix.rsplit("_", 1)[0], lms_user_id=str(p.canvas_id),
                   identity=f"canvas:{p.canvas_id}")


def _export(tmp_path: Path, **options) -> Path:
    path = tmp_path / F.canvas_export_file_name("CS 101")
    path.write_bytes(F.canvas_gradebook_for_class(**{"points": POSSIBLE, **options}))
    return path


def _column(path: Path, col_sep: str = ",") -> dict[str, str]:
    """Student name -> the lm-head cell, for every row of a written file."""
    return {row[0]: row[COLUMN] for row in F.csv_rows(path.read_bytes(), col_sep)[1:]}


def test_a_gradescope_sid_equal_to_another_students_canvas_id_fills_only_its_own_row(tmp_path):
    """Hopper's SID 4102 is Turing's Canvas ID: only the SIS User ID column may match it."""
    export = read_canvas_export(_export(tmp_path), "lm-head", possible=POSSIBLE)
    fill = fill_canvas_gradebook(export, [from_gradescope("lovelace", 20), from_gradescope("hopper", 16.18)],
                                 tmp_path)
    cells = _column(fill.path)
    assert cells["Hopper, Grace"] == "16.18" and cells["Lovelace, Ada"] == "20"   # Lovelace by login
    assert cells["Turing, Alan"] == "" and fill.filled == 2


def test_a_canvas_user_id_equal_to_another_students_sis_id_fills_only_its_own_row(tmp_path):
    """Lovelace's Canvas ID 4101 is Knuth's SIS User ID: only the ID column may match it."""
    export = read_canvas_export(_export(tmp_path), "lm-head", possible=POSSIBLE)
    fill = fill_canvas_gradebook(export, [from_canvas_download("lovelace", 20)], tmp_path)
    cells = _column(fill.path)
    assert cells["Lovelace, Ada"] == "20" and cells["Knuth, Donald"] == "" and fill.filled == 1


def test_a_submission_fitting_two_rows_or_a_row_fitting_two_submissions_is_reported_and_left_blank(tmp_path):
    export = read_canvas_export(_export(tmp_path), "lm-head", possible=POSSIBLE)
    # SID of Turing's SIS id, e-mail of Lovelace's login: which student is it? Nobody guesses.
    torn = _record("x1", 20, email="ada@uni.edu", sid="S1002", identity="sid:S1002")
    twice = [from_gradescope("obrien", 20), _record("x2", 3, sid="S1004", identity="sid:S1004")]
    fill = fill_canvas_gradebook(export, [torn, *twice], tmp_path)
    cells = _column(fill.path)
    assert cells["Lovelace, Ada"] == cells["Turing, Alan"] == cells["O'Brien-Smith, Seán"] == ""
    assert fill.filled == 0 and len(fill.ambiguous) == 2
    assert "x1" in fill.ambiguous[0] and '"Lovelace, Ada" (ID 4101)' in fill.ambiguous[0]
    assert '"O\'Brien-Smith, Seán" (ID 4104)' in fill.ambiguous[1] and "x2" in fill.ambiguous[1]


def test_a_semicolon_decimal_comma_export_is_read_and_written_back_in_its_own_dialect(tmp_path):
    path = _export(tmp_path, col_sep=";", decimal=",", bom=True, manual_posting=True)
    fill = fill_canvas_gradebook(read_canvas_export(path, "lm-head", possible=POSSIBLE),
                                 [from_canvas_download("lovelace", 16.18), from_gradescope("hopper", 20)], tmp_path)
    before, after = path.read_bytes(), fill.path.read_bytes()
    assert after.startswith(b"\xef\xbb\xbf")
    old_rows, new_rows = F.csv_rows(before, ";"), F.csv_rows(after, ";")
    assert len(old_rows) == len(new_rows) and all(len(r) > COLUMN for r in new_rows)
    for old, new in zip(old_rows, new_rows):                 # only this assignment's cells change
        assert old[:COLUMN] + old[COLUMN + 1:] == new[:COLUMN] + new[COLUMN + 1:]
    assert new_rows[1][COLUMN] == "Manual Posting" and new_rows[2][COLUMN] == "20,00"
    assert _column(fill.path, ";")["Lovelace, Ada"] == "16,18" and _column(fill.path, ";")["Hopper, Grace"] == "20"
    # The Manual Posting row and the test student are not students without a submission.
    assert fill.students_without_submission == ['"Turing, Alan" (ID 4102)', '"O\'Brien-Smith, Seán" (ID 4104)',
                                                '"Nguyen_Tran, Mai" (ID 4105)', '"Knuth, Donald" (ID 4106)']


def test_a_score_already_in_the_column_is_listed_when_replaced_and_kept_on_request(tmp_path):
    path = _export(tmp_path, col_sep=";", decimal=",", scores={"hopper": 12.0, "lovelace": 20.0})
    records = [from_gradescope("hopper", 20), from_gradescope("lovelace", 20)]
    fill = fill_canvas_gradebook(read_canvas_export(path, "lm-head", possible=POSSIBLE), records, tmp_path)
    assert fill.changed == ['"Hopper, Grace" (ID 4103): 12 -> 20'] and fill.kept == []   # 20,00 -> 20 is no change
    assert _column(fill.path, ";")["Hopper, Grace"] == "20"
    kept = fill_canvas_gradebook(read_canvas_export(path, "lm-head", possible=POSSIBLE, keep_scores=True),
                                 records, tmp_path)
    assert _column(kept.path, ";")["Hopper, Grace"] == "12,00" and kept.changed == []
    assert kept.kept == ['"Hopper, Grace" (ID 4103): kept 12, graded 20'] and kept.filled == 1


def test_a_column_worth_other_points_is_refused_naming_both_or_scaled_on_request(tmp_path):
    path = _export(tmp_path, points=100.0)
    with pytest.raises(LmsFileError, match=r"worth 100 points.*total is 20.*--canvas-scale"):
        read_canvas_export(path, "lm-head", possible=POSSIBLE)
    export = read_canvas_export(path, "lm-head", possible=POSSIBLE, scale=True)
    fill = fill_canvas_gradebook(export, [from_gradescope("hopper", 16.18)], tmp_path)
    assert _column(fill.path)["Hopper, Grace"] == "80.9" and fill.scaled == (20.0, 100.0)
    assert read_canvas_export(_export(tmp_path), "lm-head", possible=POSSIBLE).scale == 1.0


def test_the_summary_names_every_unmatched_student_on_a_line_of_their_own(tmp_path):
    path = _export(tmp_path, manual_posting=True)
    fill = fill_canvas_gradebook(read_canvas_export(path, "lm-head", possible=POSSIBLE),
                                 [from_gradescope("lovelace", 20), from_gradescope("turing", 20)], tmp_path)
    result = BatchResult([], 0, 0, False, Clearance("bwrap", "bubblewrap"), fill,
                         canvas_csv=tmp_path / "gradebook_canvas.csv")
    lines = lms_lines(result)
    assert lines[0] == f"Canvas import file: {tmp_path / 'gradebook_canvas.csv'}"
    start = lines.index("  no submission graded (4):")
    assert lines[start + 1:start + 5] == ['    "Hopper, Grace" (ID 4103)', '    "O\'Brien-Smith, Seán" (ID 4104)',
                                          '    "Nguyen_Tran, Mai" (ID 4105)', '    "Knuth, Donald" (ID 4106)']


def test_the_canvas_import_file_keeps_each_id_in_its_own_column_and_takes_the_named_column(tmp_path):
    no_sid = _record("grace_uni.edu", 20, name="Grace Hopper", email="grace@uni.edu", identity="email:grace@uni.edu")
    moodle = _record("1234501", 10, name="Ada Lovelace", lms_user_id="1234501", identity="moodle:1234501")
    folder = _record("S1004", 7, identity="name:S1004")           # a plain folder named by SIS id
    path = write_canvas_gradebook(tmp_path, [no_sid, from_canvas_download("turing", 5), moodle, folder],
                                  "Homework 3 (555)", POSSIBLE)
    rows = F.csv_rows(path.read_bytes())
    assert rows[0][5] == "Homework 3 (555)" and rows[1][5] == "20"
    assert rows[2][1:4] == ["", "", "grace@uni.edu"]          # no SID: no e-mail in SIS User ID
    assert rows[3][1:4] == ["4102", "", ""]                   # a Canvas id only in ID
    assert rows[4][1:4] == ["", "", ""]                       # a Moodle participant is no Canvas id
    assert rows[5][1:4] == ["", "S1004", ""]

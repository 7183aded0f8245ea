"""Grades back into Canvas and Moodle: the files an instructor imports."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from autograder.runtime.grading.canvas_gradebook import LmsFileError, fill_canvas_gradebook, read_canvas_export
from autograder.runtime.grading.moodle_worksheet import write_moodle_files
from autograder.runtime.grading.outcome import Entry, GradeOutcome, GradeRecord, ItemOutcome

CANVAS_EXPORT = (
    "Student,ID,SIS User ID,SIS Login ID,Section,lm-head (1234),Quiz 1 (1235),Current Score,Final Score\r\n"
    "    Points Possible,,,,,20.00,10.00,(read only),(read only)\r\n"
    '"Lovelace, Ada",4101,1001,ada@uni.edu,Section A,,8.00,80,80\r\n'
    '"O\'Brien, José ""Pepe""",4102,1002,jose@uni.edu,Section A,,9.00,90,90\r\n'
    '"Nobody, No",4103,1003,no@uni.edu,Section B,,,,\r\n'
)


def record(student: str, total: float, **entry) -> GradeRecord:
    items = (ItemOutcome("q1", "test_a", total, True), ItemOutcome("q1", "test_b", 20 - total, False))
    outcome = GradeOutcome(student, "lm-head", "graded", "bwrap", items, 20.0)
    return GradeRecord(Entry(student, Path(f"{student}.zip"), **entry), outcome)


RECORDS = [
    record("4101", 16.18, name="lovelaceada", lms_user_id="4101", identity="canvas:4101"),   # Canvas download
    record("1002", 20.0, name="José", email="jose@uni.edu", sid="1002", identity="sid:1002"),  # Gradescope
    record("zed", 3.5, name="Zed"),                                                           # nobody in Canvas
]


def _rows(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")))


def test_the_canvas_copy_differs_from_the_export_only_in_the_assignment_column(tmp_path):
    export = tmp_path / "2026-12-01T0900_Grades-GPT.csv"
    export.write_bytes(("\ufeff" + CANVAS_EXPORT).encode())
    fill = fill_canvas_gradebook(read_canvas_export(export, "lm-head"), RECORDS, tmp_path)
    written = fill.path.read_bytes().decode()
    assert fill.path.name == "2026-12-01T0900_Grades-GPT-graded.csv" and written.startswith("\ufeff")
    before, after = _rows(CANVAS_EXPORT), _rows(written)
    assert len(before) == len(after)
    for old, new in zip(before, after):
        assert old[:5] + old[6:] == new[:5] + new[6:]
    assert [r[5] for r in after] == ["lm-head (1234)", "20.00", "16.18", "20", ""]
    assert written.count("\r\n") == CANVAS_EXPORT.count("\r\n")
    # Rows untouched by the fill are byte for byte what Canvas wrote.
    assert written.lstrip("\ufeff").splitlines()[:2] == CANVAS_EXPORT.splitlines()[:2]
    assert fill.filled == 2 and fill.column == "lm-head (1234)"
    assert fill.students_without_submission == ['"Nobody, No" (ID 4103)'] and fill.submissions_without_student == ["zed"]


def test_a_named_canvas_column_and_a_clear_error_when_there_is_none(tmp_path):
    export = tmp_path / "grades.csv"
    export.write_text(CANVAS_EXPORT)
    assert read_canvas_export(export, "other-name", column="lm-head (1234)").column == 5
    assert read_canvas_export(export, "other-name", column="lm-head").column == 5
    with pytest.raises(LmsFileError, match="no column titled 'perplexity'.*--canvas-column"):
        read_canvas_export(export, "perplexity")
    bad = tmp_path / "notcanvas.csv"
    bad.write_text("name,score\nA,1\n")
    with pytest.raises(LmsFileError, match="not a Canvas gradebook export.*Export Entire Gradebook"):
        read_canvas_export(bad, "lm-head")


def test_moodle_import_is_keyed_by_email_or_id_number_and_the_worksheet_by_participant(tmp_path):
    moodle = record("102", 12.5, name='José "Pepe" O\'Brien, Jr.', lms_user_id="102", identity="moodle:102")
    formula = record("1003", 7.0, name="=HYPERLINK(\"x\")", email="eve@uni.edu", sid="1003", identity="sid:1003")
    written = write_moodle_files(tmp_path, [*RECORDS, moodle, formula], "lm-head", 20.0).written
    assert [p.name for p in written] == ["gradebook_moodle.csv", "gradebook_moodle_worksheet.csv"]
    rows = _rows(written[0].read_text())
    assert rows[0] == ["Email address", "ID number", "Full name", "lm-head"]
    assert rows[1:] == [["jose@uni.edu", "1002", "José", "20"], ["eve@uni.edu", "1003", "'=HYPERLINK(\"x\")", "7"]]
    sheet = _rows(written[1].read_text())
    assert sheet[0][:3] == ["Identifier", "Full name", "Grade"] and "Last modified (grade)" in sheet[0]
    assert sheet[1][:4] == ["Participant 102", 'José "Pepe" O\'Brien, Jr.', "12.5", "20"]

"""The Moodle files, checked against what Moodle's importer does with them.

``moodle_worksheet_import`` below is a port of moodle/moodle
``mod/assign/feedback/offline/importgradeslib.php`` (``assignfeedback_offline_grade_importer::next``:
the ``Identifier``, ``Grade`` and ``Last modified (grade)`` columns by title, ``strtotime`` on the
time) and ``mod/assign/feedback/offline/locallib.php`` ``process_import_grades`` (the skips: same
grade, no grade, ``$usergrade->timemodified > ($modified + 60)`` unless "Ignore last modified
date", above the assignment's maximum grade).
"""
from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from autograder.runtime.grading.bulk import BatchResult
from autograder.runtime.grading.moodle_worksheet import (MOODLE_IMPORT_NAME, MOODLE_WORKSHEET_NAME,
                                                         write_moodle_files)
from autograder.runtime.grading.outcome import Entry, GradeOutcome, GradeRecord, ItemOutcome
from autograder.runtime.grading.summary import lms_lines
from autograder.runtime.sandbox.policy import Clearance
from tests import lms_formats as F

POSSIBLE = 20.0


def php_strtotime(text: str, server_zone: ZoneInfo) -> int | None:
    """``strtotime`` for the texts a worksheet holds: ISO 8601 with an offset is one instant on
    every server; Moodle's ``userdate`` text ("Tuesday, 1 December 2026, 8:15 AM") names no zone
    and is read in the server's (PHP's default zone, which Moodle sets to the server's)."""
    try:
        when = datetime.fromisoformat(text)
        if when.tzinfo is not None:
            return int(when.timestamp())
    except ValueError:
        pass
    try:
        return int(datetime.strptime(text, "%A, %d %B %Y, %I:%M %p").replace(tzinfo=server_zone).timestamp())
    except ValueError:
        return None                     # strtotime's false


def moodle_worksheet_import(sheet: bytes, held: dict[int, tuple[float, int]], max_grade: float,
                            server_zone: ZoneInfo, ignoremodified: bool = False) -> dict[int, float]:
    """The grades ``process_import_grades`` would store: participant -> grade.

    ``held``: participant -> (grade Moodle holds, its ``timemodified``).
    """
    rows = list(csv.reader(io.StringIO(sheet.decode("utf-8-sig"), newline="")))
    columns = rows[0]
    idindex, gradeindex, modifiedindex = (columns.index(t) for t in ("Identifier", "Grade", "Last modified (grade)"))
    stored = {}
    for record in rows[1:]:
        participant = int(record[idindex][len("Participant "):])
        grade_text = record[gradeindex].strip()
        grade = float(grade_text) if grade_text else None             # unformat_float
        modified = php_strtotime(record[modifiedindex], server_zone) or 0
        usergrade = held.get(participant)
        stale = usergrade is not None and usergrade[1] > modified + 60
        if usergrade is not None and usergrade[0] == grade:
            continue                                                  # grade not modified
        if grade is None or grade < 0:
            continue                                                  # no value
        if not ignoremodified and stale:
            continue                                                  # modified in Moodle since
        if grade > max_grade:
            continue                                                  # out of range
        stored[participant] = grade
    return stored


def _record(key: str, total: float, *, moodle: bool = True) -> GradeRecord:
    p = F.roster()[key]
    items = (ItemOutcome("q1", "t_a", total, True), ItemOutcome("q1", "t_b", POSSIBLE - total, False))
    outcome = GradeOutcome(key, "lm-head", "graded", "bwrap", items, POSSIBLE)
    if moodle:
        entry = Entry(str(p.moodle_uniqueid), Path("x.zip"), p.name, lms_user_id=str(p.moodle_uniqueid),
                      identity=f"moodle:{p.moodle_uniqueid}")
    else:   # from Canvas's download: no e-mail, no ID number, no participant
        entry = Entry(str(p.canvas_id), Path("x.zip"), p.name, lms_user_id=str(p.canvas_id),
                      identity=f"canvas:{p.canvas_id}")
    return GradeRecord(entry, outcome)


def test_moodles_own_worksheet_reads_with_the_port():
    """The port reads the worksheet Moodle writes (``lms_formats``) as Moodle does."""
    sheet = F.moodle_worksheet_for_class(max_grade=100.0)
    hopper = F.roster()["hopper"].moodle_uniqueid
    assert moodle_worksheet_import(sheet, {}, 100.0, ZoneInfo("UTC")) == {hopper: 55.0}


@pytest.mark.parametrize("zone", ["UTC", "Australia/Sydney", "Asia/Kolkata", "America/Los_Angeles"])
def test_a_regrade_is_not_skipped_as_stale_on_a_server_in_any_zone(tmp_path, zone):
    """An earlier import stored 12 an hour ago; the regrade's 20 must replace it wherever Moodle runs."""
    write_moodle_files(tmp_path, [_record("lovelace", 20.0)], "lm-head", POSSIBLE)
    sheet = (tmp_path / MOODLE_WORKSHEET_NAME).read_bytes()
    participant = F.roster()["lovelace"].moodle_uniqueid
    an_hour_ago = int((datetime.now(timezone.utc) - timedelta(hours=1)).timestamp())
    assert moodle_worksheet_import(sheet, {participant: (12.0, an_hour_ago)}, POSSIBLE, ZoneInfo(zone)) == \
        {participant: 20.0}


def test_a_grade_changed_in_moodle_after_the_worksheet_was_written_is_kept(tmp_path):
    """The other side of the same check: a TA's later grade is not overwritten."""
    write_moodle_files(tmp_path, [_record("lovelace", 20.0)], "lm-head", POSSIBLE)
    sheet = (tmp_path / MOODLE_WORKSHEET_NAME).read_bytes()
    participant = F.roster()["lovelace"].moodle_uniqueid
    later = int((datetime.now(timezone.utc) + timedelta(minutes=5)).timestamp())
    assert moodle_worksheet_import(sheet, {participant: (15.0, later)}, POSSIBLE, ZoneInfo("Australia/Sydney")) == {}


def test_grades_are_written_out_of_the_moodle_maximum_grade(tmp_path):
    """Moodle's default maximum is 100: 16.18 of 20 must arrive as 80.9, not 16.18."""
    result = write_moodle_files(tmp_path, [_record("lovelace", 16.18)], "lm-head", POSSIBLE, max_grade=100.0)
    sheet = (tmp_path / MOODLE_WORKSHEET_NAME).read_bytes()
    participant = F.roster()["lovelace"].moodle_uniqueid
    assert moodle_worksheet_import(sheet, {}, 100.0, ZoneInfo("UTC")) == {participant: 80.9}
    assert F.csv_rows(sheet)[1][3] == "100" and result.max_grade == 100.0
    # Out of the build's total by default; Moodle skips what is above its maximum, so the summary says to set it.
    result = write_moodle_files(tmp_path, [_record("lovelace", 16.18)], "lm-head", POSSIBLE)
    assert moodle_worksheet_import((tmp_path / MOODLE_WORKSHEET_NAME).read_bytes(), {}, 20.0, ZoneInfo("UTC")) == \
        {participant: 16.18}
    lines = lms_lines(BatchResult([], 0, 0, False, Clearance("bwrap", "bubblewrap"), moodle=result))
    assert any("grades out of 20: the Moodle assignment's Maximum grade must be 20" in line for line in lines)


def test_a_file_without_rows_is_not_written_and_the_summary_says_why(tmp_path):
    result = write_moodle_files(tmp_path, [_record("lovelace", 20.0, moodle=False)], "lm-head", POSSIBLE)
    assert not (tmp_path / MOODLE_IMPORT_NAME).exists() and not (tmp_path / MOODLE_WORKSHEET_NAME).exists()
    assert result.written == [] and result.left_out == ["4101"]
    lines = lms_lines(BatchResult([], 0, 0, False, Clearance("bwrap", "bubblewrap"), moodle=result))
    assert f"Moodle: not written: {MOODLE_IMPORT_NAME}: no student has an e-mail or ID number to match on" in lines
    assert not any(line.startswith("Moodle: /") for line in lines)

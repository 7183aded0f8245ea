"""Grades back into Moodle: the "Import grades from CSV" file and the offline grading worksheet.

- ``gradebook_moodle.csv`` for Grades > Import > CSV file: ``Email address`` or ``ID number``
  is mapped to the user in Moodle's import form, so only students with one of them are rows.
- ``gradebook_moodle_worksheet.csv`` for the assignment's "Upload grading worksheet" (offline
  grading worksheet on), for submissions from Moodle's own download, keyed by the participant
  ``Identifier`` Moodle put in each folder's name.

What Moodle's worksheet import does with each row (moodle/moodle
``mod/assign/feedback/offline/importgradeslib.php`` ``next`` and ``locallib.php``
``process_import_grades``): reads only ``Identifier``, ``Grade`` and ``Last modified (grade)``;
parses the time with PHP's ``strtotime`` (in the server's zone when the text names none); skips
the row when the grade Moodle holds was modified more than 60 s after that time (unless "Ignore
last modified date" is ticked), and when the grade is above the assignment's maximum grade
(Moodle's default maximum is 100). So grades are written out of the maximum grade the Moodle
assignment has, and the time names its zone (ISO 8601 with offset, which ``strtotime`` reads
exactly on any server).

The worksheet import also reads one column per feedback plugin's text field, by its title
(``importgradeslib.php`` ``init``: ``get_editor_fields``; the feedback comments plugin's is
"Feedback comments") and, for a row whose grade time is not stale, **replaces** the comment Moodle
holds with the cell whenever they differ, an empty cell included (``process_import_grades``,
``set_editor_text``; a new comment is stored as HTML). So the column is written only from the
comments of the worksheet the instructor passed (``--moodle-worksheet``), each kept as it is, with
the instructor's mistake-group notes added (``worksheet_comment``); without that worksheet, or
when it has no such column (feedback comments off), no comment is written.
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

from autograder.groups.note_html import note_html
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.gradebook import cell
from autograder.runtime.grading.outcome import GradeRecord, points

MOODLE_IMPORT_NAME = "gradebook_moodle.csv"
MOODLE_WORKSHEET_NAME = "gradebook_moodle_worksheet.csv"
#: The feedback comments plugin's column in the worksheet (``assignfeedback_comments`` ``pluginname``).
COMMENTS_COLUMN = "Feedback comments"
#: What a Moodle assignment's "Maximum grade" is unless the teacher changes it.
MOODLE_DEFAULT_MAX_GRADE = 100.0


@dataclass
class MoodleFiles:
    """What ``write_moodle_files`` wrote, out of what maximum, and what it did not write and why."""

    written: list[Path] = field(default_factory=list)
    not_written: list[str] = field(default_factory=list)
    max_grade: float = 0.0
    possible: float = 0.0
    #: Students in neither file: no e-mail, no ID number and not from Moodle's download.
    left_out: list[str] = field(default_factory=list)


def worksheet_time(now: datetime) -> str:
    """"Last modified (grade)" as ``strtotime`` reads it the same on every server: ISO 8601
    with the offset (a zone-less text would be read in the server's zone)."""
    return now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S+00:00")


def worksheet_comment(existing: str, group_notes: tuple[tuple[str, str], ...]) -> str:
    """The comment Moodle should hold: ``existing`` (what the worksheet says it holds: a TA's
    words, or notes an earlier import added) with each group note not yet in it appended as HTML,
    headed by its group id. A note is known by its id, so a rerun with the worksheet downloaded
    again adds nothing twice."""
    added = [f"<p><strong>A note from your instructor</strong> (mistake group <code>{gid}</code>)</p>\n"
             f"{note_html(text)}" for gid, text in group_notes if gid not in existing]
    return "\n".join([existing.rstrip(), *added]).strip() if added else existing


def _grade(record: GradeRecord, max_grade: float, possible: float) -> str:
    """The grade out of ``max_grade``, with ``.`` (``unformat_float`` reads it in every language)."""
    return points(record.outcome.total * max_grade / possible if possible else record.outcome.total)


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(header)
    writer.writerows(rows)
    write_atomic(path, text.getvalue())


def write_moodle_files(out: Path, records: list[GradeRecord], assignment: str, possible: float,
                       max_grade: float | None = None, now: datetime | None = None,
                       comments: Mapping[str, str] | None = None) -> MoodleFiles:
    """Write the files that have rows; grades out of ``max_grade`` (default: the build's total).

    ``comments`` (participant number -> the comment Moodle holds, from the worksheet passed with
    ``--moodle-worksheet``, ``None`` without one or without the column) gives the worksheet a
    "Feedback comments" column when any row gets a group note: every row keeps its comment, and
    the group notes are added to their members'."""
    maximum = possible if max_grade is None else max_grade
    result = MoodleFiles(max_grade=maximum, possible=possible)
    by_mail = [r for r in records if r.entry.email or r.entry.sid]
    if by_mail:
        _write(out / MOODLE_IMPORT_NAME, ["Email address", "ID number", "Full name", cell(assignment)],
               [[cell(r.entry.email), cell(r.entry.sid), cell(r.entry.name), _grade(r, maximum, possible)]
                for r in by_mail])
        result.written.append(out / MOODLE_IMPORT_NAME)
    else:
        result.not_written.append(f"{MOODLE_IMPORT_NAME}: no student has an e-mail or ID number to match on")
    from_moodle = [r for r in records if r.entry.identity.startswith("moodle:")]
    if from_moodle:
        # The importer skips a grade Moodle holds that is newer than this time; the grades are now.
        when = worksheet_time(now or datetime.now(timezone.utc))
        header = ["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)"]
        rows = [[f"Participant {r.entry.lms_user_id}", cell(r.entry.name), _grade(r, maximum, possible),
                 points(maximum), when] for r in from_moodle]
        if comments is not None and any(r.outcome.group_notes for r in from_moodle):
            # Moodle stores the cell as it is (HTML): no spreadsheet formula guard, which would show.
            header.append(COMMENTS_COLUMN)
            for row, r in zip(rows, from_moodle):
                row.append(worksheet_comment(comments.get(r.entry.lms_user_id, ""), r.outcome.group_notes))
        _write(out / MOODLE_WORKSHEET_NAME, header, rows)
        result.written.append(out / MOODLE_WORKSHEET_NAME)
    else:
        result.not_written.append(f"{MOODLE_WORKSHEET_NAME}: no submission came from Moodle's download "
                                  "(its folders name the participant)")
    placed = {id(r) for r in (*by_mail, *from_moodle)}
    result.left_out = sorted(r.entry.student for r in records if id(r) not in placed)
    return result

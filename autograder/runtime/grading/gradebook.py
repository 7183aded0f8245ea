"""The gradebook CSVs: exports of the graded folder's records.

``gradebook.csv`` has one row per student, built from each ``outcome.json``;
``gradebook_canvas.csv`` is the same totals in the layout Canvas's gradebook
import reads. Text cells come from submissions and LMS exports (a student
picks their display name), so any that a spreadsheet would run as a formula
is neutralised (:func:`cell`); the numbers the gradebook writes are left as
numbers.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.outcome import GradeRecord, points

GRADEBOOK_NAME = "gradebook.csv"
CANVAS_NAME = "gradebook_canvas.csv"
#: The gradebook's columns before and after its one column per question.
LEADING_COLUMNS: tuple[str, ...] = ("student", "name", "email", "total", "possible")
TRAILING_COLUMNS: tuple[str, ...] = ("status", "flags", "mistakes", "submission", "note", "isolation")
#: Identities of submissions from plain files and folders: their id is the name they were given.
PLAIN_FOLDER_IDENTITIES = ("name:", "file:")
#: What a spreadsheet reads as the start of a formula (or hides before one).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(text: object) -> str:
    """A text cell a spreadsheet shows as text: a leading apostrophe before a formula start."""
    value = str(text)
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def gradebook_row(record: GradeRecord, questions: tuple[str, ...]) -> dict[str, str]:
    """One student's row of ``gradebook.csv``."""
    outcome, entry = record.outcome, record.entry
    scores = outcome.question_scores()
    # Every note, graded or not: a cell that raised costs points and must show here too.
    group_notes = [f"instructor note ({group}): {' '.join(text.split())}" for group, text in outcome.group_notes]
    notes = [n for n in (entry.note, *outcome.notes, *group_notes) if n] or ([outcome.status] if outcome.status != "graded" else [])
    text = {"student": entry.student, "name": entry.name, "email": entry.email, "status": outcome.status,
            "flags": ";".join(outcome.flags), "mistakes": ";".join(outcome.mistakes),
            "submission": str(entry.path), "note": " | ".join(notes)[:500], "isolation": outcome.isolation}
    return {**{k: cell(v) for k, v in text.items()},
            "total": points(outcome.total), "possible": points(outcome.possible),
            **{q: points(scores.get(q, 0.0)) for q in questions}}


def write_gradebook(out: Path, records: list[GradeRecord], questions: tuple[str, ...]) -> list[dict[str, str]]:
    """Write ``out/gradebook.csv`` from ``records`` and return its rows."""
    rows = [gradebook_row(r, questions) for r in records]
    _write_csv(out / GRADEBOOK_NAME, [*LEADING_COLUMNS, *questions, *TRAILING_COLUMNS], rows)
    return rows


def write_canvas_gradebook(out: Path, records: list[GradeRecord], title: str, possible: float,
                           scale: float = 1.0) -> Path:
    """Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then the column
    ``title``; returns the file's path.

    Each identity column holds only its own kind of id, as Canvas's importer reads it
    (``GradebookImporter#process_student``): ``ID`` the Canvas user id (from Canvas's download),
    ``SIS User ID`` the student's SID, ``SIS Login ID`` the e-mail; an id Canvas would look up in
    the wrong namespace could give the grade to someone else. A plain folder's only id is its
    name, written as the SIS User ID (name the folders so); an id made from an e-mail or a
    Moodle participant number is none of Canvas's ids. Grades times ``scale``.
    """
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", cell(title)])
    writer.writerow(["Points Possible", "", "", "", "", points(possible * scale)])
    for r in records:
        e = r.entry
        canvas_id = e.lms_user_id if e.identity.startswith("canvas:") else ""
        sis_user_id = e.sid or (e.student if e.identity.startswith(PLAIN_FOLDER_IDENTITIES) else "")
        writer.writerow([cell(e.name or e.student), cell(canvas_id), cell(sis_user_id),
                         cell(r.entry.email), "", points(r.outcome.total * scale)])
    write_atomic(out / CANVAS_NAME, text.getvalue())
    return out / CANVAS_NAME


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())

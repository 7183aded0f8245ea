"""The gradebook CSVs: exports of the graded folder's records.

``gradebook.csv`` has one row per student, built from each ``outcome.json``;
``gradebook_canvas.csv`` is the same totals in the layout Canvas's gradebook
import reads.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.outcome import GradeRecord

GRADEBOOK_NAME = "gradebook.csv"
CANVAS_NAME = "gradebook_canvas.csv"
#: The gradebook's columns before and after its one column per question.
LEADING_COLUMNS: tuple[str, ...] = ("student", "name", "email", "total", "possible")
TRAILING_COLUMNS: tuple[str, ...] = ("status", "mistakes", "submission", "note", "isolation")


def gradebook_row(record: GradeRecord, questions: tuple[str, ...]) -> dict[str, str]:
    """One student's row of ``gradebook.csv``."""
    outcome, entry = record.outcome, record.entry
    scores = outcome.question_scores()
    notes = [n for n in (entry.note,) if n]
    if outcome.status != "graded":
        notes.append(outcome.notes[0] if outcome.notes else outcome.status)
    return {"student": entry.student, "name": entry.name, "email": entry.email,
            "total": f"{outcome.total:g}", "possible": f"{outcome.possible:g}",
            **{q: f"{scores.get(q, 0.0):g}" for q in questions},
            "status": outcome.status, "mistakes": ";".join(outcome.mistakes),
            "submission": str(entry.path), "note": " | ".join(notes)[:500],
            "isolation": outcome.isolation}


def write_gradebook(out: Path, records: list[GradeRecord], questions: tuple[str, ...]) -> list[dict[str, str]]:
    """Write ``out/gradebook.csv`` from ``records`` and return its rows."""
    rows = [gradebook_row(r, questions) for r in records]
    _write_csv(out / GRADEBOOK_NAME, [*LEADING_COLUMNS, *questions, *TRAILING_COLUMNS], rows)
    return rows


def write_canvas_gradebook(out: Path, records: list[GradeRecord], assignment: str, possible: float) -> None:
    """Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then the assignment."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", assignment])
    writer.writerow(["Points Possible", "", "", "", "", f"{possible:g}"])
    for r in records:
        writer.writerow([r.entry.name or r.entry.student, "", r.entry.student, r.entry.email, "",
                         f"{r.outcome.total:g}"])
    write_atomic(out / CANVAS_NAME, text.getvalue())


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(path, text.getvalue())

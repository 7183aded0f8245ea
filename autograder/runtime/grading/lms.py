"""Grades back into the LMS: a filled copy of a Canvas gradebook export, and Moodle's two imports.

- **Canvas** ("Export" in the Gradebook, then "Import"): the export's own file
  with this assignment's column filled and every other cell, the header and the
  "Points Possible" row kept as Canvas wrote them. Students are matched on the
  columns Canvas itself matches on: ``ID`` (Canvas's user id), ``SIS User ID``
  and ``SIS Login ID``.
- **Moodle**, "Import grades from CSV": a plain CSV whose ``Email address`` or
  ``ID number`` column is mapped to the user in Moodle's import form.
- **Moodle**, "Upload grading worksheet" (assignment settings, offline grading
  worksheet enabled): for submissions from Moodle's own download, keyed by the
  participant ``Identifier`` Moodle put in each folder's name.

Every text cell goes through :func:`~autograder.runtime.grading.gradebook.cell`.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from autograder.runtime.errors import GraderError
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.gradebook import cell
from autograder.runtime.grading.outcome import GradeRecord, points

MOODLE_IMPORT_NAME = "gradebook_moodle.csv"
MOODLE_WORKSHEET_NAME = "gradebook_moodle_worksheet.csv"
#: Canvas's identity columns, in the order it matches on them.
CANVAS_KEYS = ("ID", "SIS User ID", "SIS Login ID")
#: Rows of a Canvas export that are not students (their first cell, stripped).
CANVAS_NON_STUDENTS = {"Points Possible", "Manual Posting", "Student, Test"}


class LmsFileError(GraderError):
    """An LMS file given to ``grader grade`` cannot be used."""


@dataclass
class CanvasFill:
    """What filling a Canvas export did: where it wrote, and who could not be matched."""

    path: Path
    column: str
    filled: int = 0
    students_without_submission: list[str] = field(default_factory=list)
    submissions_without_student: list[str] = field(default_factory=list)


def _keys(record: GradeRecord) -> set[str]:
    """Every value a Canvas identity column could hold for this record."""
    e = record.entry
    return {v.strip().lower() for v in (e.lms_user_id, e.sid, e.student, e.email) if v and v.strip()}


def _assignment_column(header: list[str], assignment: str, column: str | None, path: Path) -> int:
    """The index of the assignment's column: named with ``--canvas-column``, or titled like the assignment."""
    def bare(title: str) -> str:               # Canvas titles assignment columns "Name (12345)"
        return re.sub(r"\s*\(\d+\)\s*$", "", title).strip().lower()
    if column is not None:
        hits = [i for i, h in enumerate(header) if h.strip() == column.strip() or bare(h) == column.strip().lower()]
    else:
        hits = [i for i, h in enumerate(header) if bare(h) == assignment.lower()]
    if len(hits) != 1:
        wanted = repr(column) if column is not None else f"titled {assignment!r}"
        raise LmsFileError(f"{path}: {'no' if not hits else len(hits)} column{'s' if hits else ''} {wanted}; "
                           f"its columns are {', '.join(repr(h) for h in header[5:15])}"
                           f"{' ...' if len(header) > 15 else ''}. Pass --canvas-column with the exact title.")
    return hits[0]


@dataclass(frozen=True)
class CanvasExport:
    """A Canvas gradebook export as read: its rows, BOM and line ends kept for writing back."""

    path: Path
    rows: list[list[str]]
    column: int
    bom: str
    newline: str


def read_canvas_export(export: Path, assignment: str, column: str | None = None) -> CanvasExport:
    """Read and check a Canvas gradebook export before anything is graded.

    Raises:
        LmsFileError: the file is not a Canvas gradebook export, or the column cannot be found.
    """
    export = Path(export)
    try:
        raw = export.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LmsFileError(f"cannot read {export} as a UTF-8 CSV ({exc}); export the gradebook from "
                           "Canvas again.") from None
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    newline = "\r\n" if "\r\n" in raw else "\n"
    rows = list(csv.reader(io.StringIO(raw[len(bom):], newline="")))
    if not rows or not {"Student", *CANVAS_KEYS} <= {h.strip() for h in rows[0]}:
        raise LmsFileError(f"{export} is not a Canvas gradebook export: its first row should name the "
                           f"columns Student, {', '.join(CANVAS_KEYS)}. In Canvas: Grades > Export > "
                           "Export Entire Gradebook.")
    return CanvasExport(export, rows, _assignment_column(rows[0], assignment, column, export), bom, newline)


def fill_canvas_gradebook(export: CanvasExport, records: list[GradeRecord], out: Path) -> CanvasFill:
    """Write ``out/<export name>-graded.csv``: the export with the assignment's column filled."""
    rows = [list(r) for r in export.rows]
    header, index, bom, newline = rows[0], export.column, export.bom, export.newline
    key_columns = [header.index(k) for k in CANVAS_KEYS if k in header]
    by_key: dict[str, GradeRecord] = {}
    for record in records:
        for key in _keys(record):
            by_key.setdefault(key, record)
    fill = CanvasFill(export.path, header[index])
    matched: set[str] = set()
    for row in rows[1:]:
        if not row or row[0].strip() in CANVAS_NON_STUDENTS or len(row) <= index:
            continue
        record = next((by_key[v] for v in (row[i].strip().lower() for i in key_columns if i < len(row))
                       if v in by_key), None)
        if record is None:
            fill.students_without_submission.append(row[0])
            continue
        row[index] = points(record.outcome.total)
        matched.add(record.entry.student)
        fill.filled += 1
    fill.submissions_without_student = sorted(r.entry.student for r in records if r.entry.student not in matched)
    text = io.StringIO(newline="")
    csv.writer(text, lineterminator=newline).writerows(rows)
    fill.path = out / f"{export.path.stem}-graded.csv"
    write_atomic(fill.path, bom + text.getvalue())
    return fill


def write_moodle_files(out: Path, records: list[GradeRecord], assignment: str, possible: float) -> list[Path]:
    """Moodle's "Import grades from CSV" file, and the grading worksheet for submissions from
    Moodle's own download. Returns the files written."""
    written = []
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["Email address", "ID number", "Full name", cell(assignment)])
    for r in records:
        if r.entry.email or r.entry.sid:
            writer.writerow([cell(r.entry.email), cell(r.entry.sid), cell(r.entry.name), points(r.outcome.total)])
    write_atomic(out / MOODLE_IMPORT_NAME, text.getvalue())
    written.append(out / MOODLE_IMPORT_NAME)
    from_moodle = [r for r in records if r.entry.identity.startswith("moodle:")]
    if from_moodle:
        # The importer needs Identifier, Grade and Last modified (grade); it skips a grade
        # older than the one Moodle holds, so the time is now.
        now = datetime.now(timezone.utc).strftime("%A, %d %B %Y, %I:%M %p")
        text = io.StringIO(newline="")
        writer = csv.writer(text)
        writer.writerow(["Identifier", "Full name", "Grade", "Maximum Grade", "Last modified (grade)"])
        for r in from_moodle:
            writer.writerow([f"Participant {r.entry.lms_user_id}", cell(r.entry.name), points(r.outcome.total),
                             points(possible), now])
        write_atomic(out / MOODLE_WORKSHEET_NAME, text.getvalue())
        written.append(out / MOODLE_WORKSHEET_NAME)
    return written

"""Grades back into Canvas: a filled copy of the instructor's own gradebook export.

Canvas's Gradebook > Export writes the file, its Gradebook > Import reads it back
(instructure/canvas-lms ``lib/gradebook_exporter.rb``, ``app/models/gradebook_importer.rb``,
``lib/csv_with_i18n.rb``). The copy keeps everything Canvas wrote (BOM, line ends, the
"Manual Posting" and "Points Possible" rows, every other column) and changes only this
assignment's cells, in the export's own dialect: ``,`` or ``;`` between fields, ``.`` or
``,`` in numbers.

Students are matched as Canvas's importer identifies a row (``process_student``): the
``ID`` column against Canvas user ids only, else ``SIS User ID`` against SIS ids only, else
``SIS Login ID`` against logins only. A submission that would fit two rows, or a row two
submissions fit, is reported and left blank: a grade in the wrong row is worse than none.
"""
from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from autograder.runtime.errors import GraderError
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.gradebook import PLAIN_FOLDER_IDENTITIES
from autograder.runtime.grading.outcome import GradeRecord, points

#: Canvas's identity columns, in the order its importer tries them.
CANVAS_KEYS = ("ID", "SIS User ID", "SIS Login ID")
#: The test student Canvas puts last in every export (``StudentViewEnrollment``).
CANVAS_TEST_STUDENT = "Student, Test"
#: ``check_for_non_student_row``: a row whose every non-empty cell says this is not a student.
_NOT_A_STUDENT_CELL = re.compile(r"^\s*(Muted|Manual Posting.*)?\s*$", re.IGNORECASE)
#: ``CSV::Converters[:decimal_comma_to_period]``: the cells Canvas's importer reads as numbers.
_CANVAS_NUMBER = re.compile(r"^-?[0-9.,]+%?$")
#: Two numbers Canvas shows alike (it compares at two decimals, ``no_change_to_value?``).
_SAME_POINTS = 0.005


class LmsFileError(GraderError):
    """An LMS file given to ``grader grade`` cannot be used."""


@dataclass(frozen=True)
class CanvasDialect:
    """How one export was written, so the copy is written the same way."""

    col_sep: str = ","
    decimal: str = "."
    bom: str = ""
    newline: str = "\n"

    def number(self, value: float) -> str:
        return points(value).replace(".", self.decimal)


@dataclass(frozen=True)
class CanvasStudent:
    """One student row of an export: where it is and who Canvas says it is."""

    row: int
    name: str
    user_id: str
    sis_user_id: str
    login_id: str

    @property
    def label(self) -> str:
        """How the summary names the row: the name as Canvas shows it, quoted, and the Canvas id."""
        return f'"{self.name}" (ID {self.user_id})' if self.user_id else f'"{self.name}"'


@dataclass(frozen=True)
class CanvasExport:
    """A Canvas gradebook export as read and checked before grading."""

    path: Path
    rows: list[list[str]]
    column: int
    dialect: CanvasDialect
    #: The column's "Points Possible", or ``None`` when the export has no such cell.
    points_possible: float | None = None
    #: What each of the build's points is worth in the column (1 unless scaled on request).
    scale: float = 1.0
    #: Keep a score already in the column instead of replacing it.
    keep_scores: bool = False
    #: The row layout: LastName/FirstName columns instead of Student.
    first_last: bool = False

    @property
    def title(self) -> str:
        return self.rows[0][self.column]


@dataclass
class CanvasFill:
    """What filling a Canvas export did: where it wrote, and everything it did not do silently."""

    path: Path
    column: str
    filled: int = 0
    students_without_submission: list[str] = field(default_factory=list)
    submissions_without_student: list[str] = field(default_factory=list)
    #: Submissions or rows left blank because the match was not one to one.
    ambiguous: list[str] = field(default_factory=list)
    #: Scores already in the column that the fill replaced: "label: old -> new".
    changed: list[str] = field(default_factory=list)
    #: Scores already in the column kept (``keep_scores``): "label: kept old, graded new".
    kept: list[str] = field(default_factory=list)
    #: ``(build total, column points)`` when grades were scaled.
    scaled: tuple[float, float] | None = None


# --------------------------------------------------------------------------- reading


def canvas_number(text: str) -> float | None:
    """A cell as Canvas's importer reads a number (``decimal_comma_to_period``): the last ``.``
    or ``,`` is the decimal point, the others group thousands; ``None`` for anything else."""
    text = text.strip()
    if not _CANVAS_NUMBER.match(text) or text.endswith("%"):
        return None
    *whole, last = re.split(r"[,.]", text)
    try:
        return float(f"{''.join(whole)}.{last}" if whole else last)
    except ValueError:
        return None


def _column_separator(lines: list[str]) -> str:
    """``GradebookImporter#identify_delimiter`` on the first three lines: ``;`` when it splits
    every line into the same number of fields and into more than ``,`` does."""
    counts = {}
    for sep in (";", ","):
        sizes = [len(next(csv.reader([line], delimiter=sep), [])) for line in lines]
        counts[sep] = sizes[0] if sizes and len(set(sizes)) == 1 else 0
    return ";" if counts[";"] > counts[","] else ","


def _decimal_mark(rows: list[list[str]], col_sep: str) -> str:
    """The export's decimal mark, from its numbers (``I18n.n`` writes two decimals, "9,50" or
    "9.50"); with none to tell, the one Canvas pairs with the separator (``csv_with_i18n.rb``)."""
    for row in rows[1:]:
        for value in row:
            if re.fullmatch(r"-?\d+,\d{2}", value.strip()):
                return ","
            if re.fullmatch(r"-?\d+\.\d{2}", value.strip()):
                return "."
    return "," if col_sep == ";" else "."


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


def _is_student_row(row: list[str]) -> bool:
    """Not the header's followers Canvas's importer skips (``check_for_non_student_row``): the
    "Points Possible" row, the "Manual Posting"/"Muted" row, an empty row; nor the test student."""
    if not row or "Points Possible" in row[0]:
        return False
    if all(_NOT_A_STUDENT_CELL.match(c) for c in row if c):
        return False
    return row[0].strip() != CANVAS_TEST_STUDENT


def _points_possible(rows: list[list[str]], column: int) -> float | None:
    for row in rows[1:]:
        if row and "Points Possible" in row[0]:
            return canvas_number(row[column]) if column < len(row) else None
    return None


def read_canvas_export(export: Path, assignment: str, column: str | None = None, *, possible: float | None = None,
                       scale: bool = False, keep_scores: bool = False) -> CanvasExport:
    """Read and check a Canvas gradebook export before anything is graded.

    ``possible`` is the build's total: when the column's "Points Possible" differs, grades
    are scaled to the column with ``scale``, else the export is refused naming both numbers.

    Raises:
        LmsFileError: the file is not a Canvas gradebook export, the column cannot be found,
            or its points differ from the build's and ``scale`` is off.
    """
    export = Path(export)
    try:
        raw = export.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LmsFileError(f"cannot read {export} as a UTF-8 CSV ({exc}); export the gradebook from "
                           "Canvas again.") from None
    bom = "\ufeff" if raw.startswith("\ufeff") else ""
    text = raw[len(bom):]
    col_sep = _column_separator(text.splitlines()[:3])
    rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=col_sep))
    header = [h.strip() for h in rows[0]] if rows else []
    first_last = header[:2] == ["LastName", "FirstName"]
    if not rows or not (("Student" in header or first_last) and {"ID", "SIS Login ID"} <= set(header)):
        found = ", ".join(repr(h) for h in header[:6]) or "nothing"
        raise LmsFileError(f"{export} is not a Canvas gradebook export: its first row should name the columns "
                           f"Student (or LastName, FirstName), ID, SIS Login ID, then the assignments, "
                           f"separated by ',' or ';'; it starts with {found}. In Canvas: Grades > Export > "
                           "Export Entire Gradebook.")
    index = _assignment_column(rows[0], assignment, column, export)
    dialect = CanvasDialect(col_sep, _decimal_mark(rows, col_sep), bom, "\r\n" if "\r\n" in text else "\n")
    column_points = _points_possible(rows, index)
    factor = 1.0
    if possible is not None and column_points is not None and abs(column_points - possible) >= _SAME_POINTS:
        if not scale:
            raise LmsFileError(
                f"{export}: column {rows[0][index]!r} is worth {points(column_points)} points in Canvas "
                f"(its Points Possible row), but the autograder's total is {points(possible)}. Pass "
                f"--canvas-scale to write each grade scaled to {points(column_points)} points, or set the "
                f"assignment's points to {points(possible)} in Canvas and export the gradebook again.")
        factor = column_points / possible if possible else 1.0
    return CanvasExport(export, rows, index, dialect, column_points, factor, keep_scores, first_last)


def canvas_students(export: CanvasExport) -> list[CanvasStudent]:
    """The export's student rows, as Canvas's importer reads them."""
    header = [h.strip() for h in export.rows[0]]

    def at(row: list[str], title: str) -> str:
        i = header.index(title) if title in header else -1
        return row[i].strip() if 0 <= i < len(row) else ""

    students = []
    for number, row in enumerate(export.rows[1:], start=1):
        if not _is_student_row(row):
            continue
        name = f"{row[1].strip()} {row[0].strip()}".strip() if export.first_last else row[0].strip()
        students.append(CanvasStudent(number, name, at(row, "ID"), at(row, "SIS User ID"), at(row, "SIS Login ID")))
    return students


# --------------------------------------------------------------------------- matching


@dataclass
class CanvasMatch:
    """Which row each submission fills: one to one, or reported."""

    by_row: dict[int, GradeRecord] = field(default_factory=dict)
    student_of: dict[str, CanvasStudent] = field(default_factory=dict)      # record's student id -> row
    ambiguous: list[str] = field(default_factory=list)
    unmatched: list[str] = field(default_factory=list)


def _canvas_user_id(record: GradeRecord) -> str:
    """The Canvas user id a submission carries: only one from Canvas's own download."""
    e = record.entry
    return e.lms_user_id.strip() if e.identity.startswith("canvas:") else ""


def _candidates(record: GradeRecord, students: list[CanvasStudent]) -> tuple[list[CanvasStudent], str]:
    """The rows this submission could be, and by which column, in the importer's order."""
    user_id = _canvas_user_id(record)
    if user_id:
        return [s for s in students if s.user_id == user_id], "ID"
    e = record.entry
    # A plain file's or folder's name is the only id it has: it may be the SIS id or the login.
    named = e.student if e.identity.startswith(PLAIN_FOLDER_IDENTITIES) else ""
    sid, login = (e.sid or named).strip(), (e.email or named).strip().lower()
    by_sis = [s for s in students if sid and s.sis_user_id == sid]
    by_login = [s for s in students if login and s.login_id.lower() == login]
    if by_sis and by_login and {s.row for s in by_sis} != {s.row for s in by_login}:
        return [*by_sis, *by_login], "SIS User ID and SIS Login ID"
    return (by_sis, "SIS User ID") if by_sis else (by_login, "SIS Login ID")


def _who(record: GradeRecord) -> str:
    e = record.entry
    known = ", ".join(f"{k} {v}" for k, v in (("Canvas ID", _canvas_user_id(record)), ("SID", e.sid),
                                                ("e-mail", e.email)) if v)
    return f"{e.student}" + (f" ({known})" if known else "")


def match_canvas_rows(export: CanvasExport, records: list[GradeRecord]) -> CanvasMatch:
    """Pair submissions with rows, one to one; anything else is reported and left blank."""
    students = canvas_students(export)
    match = CanvasMatch()
    claims: dict[int, list[GradeRecord]] = {}
    row_student = {s.row: s for s in students}
    for record in records:
        rows, column = _candidates(record, students)
        distinct = {s.row: s for s in rows}
        if not distinct:
            match.unmatched.append(record.entry.student)
        elif len(distinct) > 1:
            match.ambiguous.append(f"submission {_who(record)} fits {len(distinct)} rows by {column}: "
                                   + "; ".join(s.label for s in distinct.values()) + ": left blank")
        else:
            claims.setdefault(next(iter(distinct)), []).append(record)
    for row, claimants in claims.items():
        if len(claimants) > 1:
            match.ambiguous.append(f"row {row_student[row].label} fits {len(claimants)} submissions: "
                                   + "; ".join(_who(r) for r in claimants) + ": left blank")
            continue
        match.by_row[row] = claimants[0]
        match.student_of[claimants[0].entry.student] = row_student[row]
    return match


def with_canvas_identity(record: GradeRecord, student: CanvasStudent) -> GradeRecord:
    """The record with the name Canvas shows (not a download's ``lovelaceada`` or a bare id), and
    the login as e-mail when it is one and the record has none."""
    email = record.entry.email or (student.login_id if "@" in student.login_id else "")
    entry = replace(record.entry, name=student.name or record.entry.name, email=email)
    return replace(record, entry=entry)


# --------------------------------------------------------------------------- writing


def fill_canvas_gradebook(export: CanvasExport, records: list[GradeRecord], out: Path) -> CanvasFill:
    """Write ``out/<export name>-graded.csv``: the export with the assignment's column filled."""
    rows = [list(r) for r in export.rows]
    index, dialect = export.column, export.dialect
    match = match_canvas_rows(export, records)
    fill = CanvasFill(export.path, export.title, ambiguous=match.ambiguous,
                      submissions_without_student=sorted(match.unmatched))
    if export.scale != 1.0 and export.points_possible is not None:
        fill.scaled = (round(export.points_possible / export.scale, 2), export.points_possible)
    for student in canvas_students(export):
        row = rows[student.row]
        record = match.by_row.get(student.row)
        if record is None:
            fill.students_without_submission.append(student.label)
            continue
        while len(row) <= index:
            row.append("")
        new = round(record.outcome.total * export.scale, 2)
        old_text = row[index].strip()
        if old_text:
            old = canvas_number(old_text)
            if old is None or abs(old - new) >= _SAME_POINTS:
                shown = old_text if old is None else dialect.number(old)
                if export.keep_scores:
                    fill.kept.append(f"{student.label}: kept {shown}, graded {dialect.number(new)}")
                    continue
                fill.changed.append(f"{student.label}: {shown} -> {dialect.number(new)}")
        row[index] = dialect.number(new)
        fill.filled += 1
    text = io.StringIO(newline="")
    csv.writer(text, delimiter=dialect.col_sep, lineterminator=dialect.newline).writerows(rows)
    fill.path = out / f"{export.path.stem}-graded.csv"
    write_atomic(fill.path, dialect.bom + text.getvalue())
    return fill

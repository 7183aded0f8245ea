"""Reading a class roster: a CSV file with one student id per row, and optionally a name."""
from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from question_bank.errors import RosterError

#: Accepted names of the id column, in order of preference (case-insensitive).
ID_COLUMNS = ("student_id", "id", "sid", "email")

#: Columns holding a whole name, in order of preference (case-insensitive; spaces read as ``_``).
#: ``student`` is the name column of a Canvas gradebook export.
NAME_COLUMNS = ("name", "student_name", "full_name", "student")
#: Given-name and family-name columns (a Moodle export's "First name" and "Last name"), joined
#: with a space when no whole-name column exists.
FIRST_NAME_COLUMNS = ("first_name", "given_name", "firstname")
LAST_NAME_COLUMNS = ("last_name", "surname", "family_name", "lastname")


@dataclass(frozen=True)
class RosterEntry:
    """One roster row: the id that seeds the student's questions, and the name printed on a paper
    exam (``""`` when the roster has no name column). Both are untrusted text."""

    student_id: str
    name: str = ""


_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def read_roster(path: Path) -> list[str]:
    """Student ids from ``path``, in file order; see :func:`read_roster_entries`."""
    return [entry.student_id for entry in read_roster_entries(path)]


def read_roster_entries(path: Path) -> list[RosterEntry]:
    """Student ids and names from ``path``, in file order.

    The file needs a header row with one of :data:`ID_COLUMNS`; the name comes
    from one of :data:`NAME_COLUMNS`, else from a first- and a last-name column;
    other columns are ignored.

    Raises:
        RosterError: if the file cannot be read, has no id column, no rows, an
            empty id, a repeated id, or two ids that map to the same file name.
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise RosterError(f"cannot read roster {str(path)!r}: {exc}. "
                          "Pass a UTF-8 CSV file with a header row.") from exc
    reader = csv.DictReader(text.splitlines())
    header = {(name or "").strip().lower(): name for name in (reader.fieldnames or [])}
    column = next((header[c] for c in ID_COLUMNS if c in header), None)
    if column is None:
        raise RosterError(
            f"roster {str(path)!r} has columns {list(reader.fieldnames or [])}; expected a header "
            f"with one of {list(ID_COLUMNS)}, e.g. a first line 'student_id,name'."
        )
    ids: list[str] = []
    names: list[str] = []
    name_of = _name_reader(list(reader.fieldnames or []), column)
    for line_no, row in enumerate(reader, start=2):
        student = (row.get(column) or "").strip()
        if not student:
            raise RosterError(f"roster {str(path)!r} line {line_no}: empty {column!r}; every row needs an id.")
        if student in ids:
            raise RosterError(f"roster {str(path)!r} line {line_no}: id {student!r} appears twice.")
        ids.append(student)
        names.append(name_of(row))
    if not ids:
        raise RosterError(f"roster {str(path)!r} has a header but no students.")
    stems = [safe_file_stem(s) for s in ids]
    if len(set(stems)) != len(stems):
        raise RosterError(f"roster {str(path)!r}: two ids differ only in characters that are not "
                          "allowed in file names; make the ids distinct.")
    return [RosterEntry(student, name) for student, name in zip(ids, names)]


def _name_reader(fieldnames: list[str], id_column: str) -> Callable[[dict[str, str]], str]:
    """A function row -> the student's name, from the columns the header has (``""`` if none)."""
    by_key = {re.sub(r"\s+", "_", (name or "").strip().lower()): name for name in fieldnames if name != id_column}
    whole = next((by_key[c] for c in NAME_COLUMNS if c in by_key), None)
    if whole is not None:
        return lambda row: " ".join((row.get(whole) or "").split())
    parts = [next((by_key[c] for c in group if c in by_key), None)
             for group in (FIRST_NAME_COLUMNS, LAST_NAME_COLUMNS)]
    present = [p for p in parts if p is not None]
    return lambda row: " ".join(" ".join((row.get(p) or "").strip() for p in present).split())


def safe_file_stem(student_id: str) -> str:
    """A file name for ``student_id``: characters other than ``A-Za-z0-9._@+-`` become ``_``."""
    stem = _UNSAFE.sub("_", student_id)
    return stem if stem.strip(".") else "_" + stem

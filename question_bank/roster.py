"""Reading a class roster: a CSV file with one student id per row."""
from __future__ import annotations

import csv
import re
from pathlib import Path

from question_bank.errors import RosterError

#: Accepted names of the id column, in order of preference (case-insensitive).
ID_COLUMNS = ("student_id", "id", "sid", "email")

_UNSAFE = re.compile(r"[^A-Za-z0-9._@+-]")


def read_roster(path: Path) -> list[str]:
    """Student ids from ``path``, in file order.

    The file needs a header row with one of :data:`ID_COLUMNS`; other columns
    are ignored.

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
    for line_no, row in enumerate(reader, start=2):
        student = (row.get(column) or "").strip()
        if not student:
            raise RosterError(f"roster {str(path)!r} line {line_no}: empty {column!r}; every row needs an id.")
        if student in ids:
            raise RosterError(f"roster {str(path)!r} line {line_no}: id {student!r} appears twice.")
        ids.append(student)
    if not ids:
        raise RosterError(f"roster {str(path)!r} has a header but no students.")
    names = [safe_file_stem(s) for s in ids]
    if len(set(names)) != len(names):
        raise RosterError(f"roster {str(path)!r}: two ids differ only in characters that are not "
                          "allowed in file names; make the ids distinct.")
    return ids


def safe_file_stem(student_id: str) -> str:
    """A file name for ``student_id``: characters other than ``A-Za-z0-9._@+-`` become ``_``."""
    stem = _UNSAFE.sub("_", student_id)
    return stem if stem.strip(".") else "_" + stem

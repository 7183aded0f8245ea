"""``grader groups``: read a graded folder, apply the notes if given, write ``groups.csv``."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.groups.class_groups import ClassGroups, class_groups
from autograder.groups.groups_csv import GROUPS_NAME, write_groups_csv
from autograder.groups.notes import NotesApplied, apply_notes
from autograder.runtime.errors import GraderError
from autograder.runtime.grading.gradebook import write_gradebook
from autograder.runtime.grading.outcome import read_record, record_folders


class GroupsError(GraderError):
    """The folder is not one ``grader grade`` wrote."""


@dataclass(frozen=True)
class GroupsRun:
    found: ClassGroups
    csv_path: Path
    notes: NotesApplied | None


def run_groups(out: Path, dest: Path | None = None, notes: dict[str, str] | None = None) -> GroupsRun:
    """Group the class graded into ``out``; with ``notes``, give each member its group's note first
    (its files, and ``gradebook.csv``'s note column, are rewritten).

    Raises:
        GroupsError: ``out`` holds no grading record.
    """
    out = Path(out)
    try:
        folders = record_folders(out)
    except ValueError as exc:
        raise GroupsError(str(exc)) from None
    records = [r for r in (read_record(f) for f in folders) if r is not None]
    if not records:
        raise GroupsError(f"{out} holds no grading record (students/<student>/outcome.json): pass the folder "
                          "`grader grade -o` wrote.")
    applied = None
    if notes is not None:
        applied = apply_notes(out, records, notes)
        records = applied.records
        if applied.changed:
            # The gradebook's columns are the questions in the records' order, as grading wrote them.
            questions = tuple(dict.fromkeys(i.question for r in records for i in r.outcome.items))
            write_gradebook(out, records, questions)
    found = class_groups(records)
    return GroupsRun(found, write_groups_csv(Path(dest) if dest else out / GROUPS_NAME, found), applied)

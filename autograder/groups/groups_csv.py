"""``groups.csv``: the class's mistake groups, one row each, in reading order (``class_groups``).

Every text cell from a submission (ids, code, the grader's sentences that quote student text) goes
through ``gradebook.cell``, so a spreadsheet shows it as text, never as a formula.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

from autograder.groups.class_groups import ClassGroups, MistakeGroup
from autograder.groups.function_code import function_code
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.gradebook import cell
from autograder.runtime.grading.outcome import GradeRecord, points

GROUPS_NAME = "groups.csv"
COLUMNS = ("group", "function", "question", "size", "points_lost", "share_of_lost_points", "named", "mistakes",
           "failed_tests", "grader_says", "note", "representative", "representative_code", "second_member",
           "second_code", "members")


def unit_code(record: GradeRecord, unit: str) -> str:
    """The code of the group's function (each of them, for a unit ``f+g``) in ``record``'s submission."""
    return "\n\n".join(function_code(record.entry.path, record.outcome.assignment, f) for f in unit.split("+"))


def group_row(found: ClassGroups, group: MistakeGroup) -> dict[str, str]:
    first = group.members[0]
    second = group.members[1] if group.size > 1 else None
    note = next((text for gid, text in first.outcome.group_notes if gid == group.id), "")
    text = {"group": group.id, "function": group.unit, "question": group.question, "named": "yes" if group.named else "no",
            "mistakes": ";".join(group.mistakes), "failed_tests": ";".join(group.failed_tests),
            "grader_says": "\n\n".join(group.said), "note": note, "representative": first.entry.student,
            "representative_code": unit_code(first, group.unit),
            "second_member": second.entry.student if second else "",
            "second_code": unit_code(second, group.unit) if second else "",
            "members": ";".join(r.entry.student for r in group.members)}
    return {**{k: cell(v) for k, v in text.items()}, "size": str(group.size), "points_lost": points(group.points_lost),
            "share_of_lost_points": f"{found.share(group):.3f}"}


def write_groups_csv(dest: Path, found: ClassGroups) -> Path:
    """Write ``found``'s groups to ``dest`` (one row per group) and return the path."""
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=list(COLUMNS))
    writer.writeheader()
    writer.writerows(group_row(found, g) for g in found.groups)
    write_atomic(Path(dest), text.getvalue())
    return Path(dest)

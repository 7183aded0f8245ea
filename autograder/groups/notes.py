"""The instructor's notes for mistake groups (``notes.yaml``), carried to every member's files.

``notes.yaml`` maps a group id (as ``grader groups`` lists it) to Markdown the instructor wrote::

    softmax-3f9c0a1b22d4e5f6: |
      Your softmax normalises over the whole array ...

Kept with the course, it is applied to a graded folder by ``grader grade --notes`` or ``grader
groups --notes``: each record gets the notes of the groups it is in now (and loses any it is no
longer in), and its ``feedback.md``, ``results.json`` and ``outcome.json`` are rewritten; the
gradebook's note column shows them. Membership depends on the record alone, so a regrade or a late
submission with the same behaviour gets the group's note on the run that grades it. The notes are
the instructor's text and are rendered as Markdown; nothing of a student's reaches them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from autograder.groups.membership import memberships
from autograder.runtime.errors import GraderError
from autograder.runtime.grading.outcome import GradeRecord

NOTES_NAME = "notes.yaml"


class NotesError(GraderError):
    """``notes.yaml`` is missing or not a mapping of group ids to text."""


def read_notes(path: Path) -> dict[str, str]:
    """The notes in ``path``: group id -> Markdown.

    Raises:
        NotesError: the file cannot be read, or is not a mapping of group ids to text.
    """
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise NotesError(f"cannot read the group notes {path}: {exc}; expected a YAML file mapping group ids "
                         "(as `grader groups` lists them) to the text for the group.") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise NotesError(f"{path} should map group ids to text (`softmax-3f9c0a1b22d4e5f6: Your softmax ...`), "
                         f"but holds a {type(data).__name__} with other entries; quote an id that YAML reads "
                         "as a number, and write each note as a string.")
    return {k.strip(): v.strip() for k, v in data.items() if v.strip()}


def notes_for(record: GradeRecord, notes: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The (group id, note) pairs of the groups ``record`` is in, in the order of its questions."""
    return tuple((m.group, notes[m.group]) for m in memberships(record) if m.group in notes)


@dataclass(frozen=True)
class NotesApplied:
    """What applying the notes did."""

    records: list[GradeRecord]          # every record, with its notes as they now are
    changed: tuple[str, ...]            # students whose files were rewritten
    unused: tuple[str, ...]             # ids in notes.yaml no submission is in


def apply_notes(out: Path, records: list[GradeRecord], notes: dict[str, str]) -> NotesApplied:
    """Give every record the notes of its groups and rewrite the files of those whose notes changed."""
    from autograder.runtime.grading.bulk import write_outcome

    result, changed, used = [], [], set()
    for record in records:
        wanted = notes_for(record, notes)
        used |= {g for g, _ in wanted}
        if wanted != record.outcome.group_notes:
            record = replace(record, outcome=replace(record.outcome, group_notes=wanted))
            write_outcome(Path(out), record)
            changed.append(record.entry.student)
        result.append(record)
    return NotesApplied(result, tuple(changed), tuple(sorted(set(notes) - used)))

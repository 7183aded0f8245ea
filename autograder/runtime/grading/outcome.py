"""The grading record: what became of one submission, as plain data.

``GradeOutcome`` is what grading produces (the same on every path: ``grader
grade``, ``otter run``, Gradescope); ``GradeRecord`` is one student's
``outcome.json`` in a graded folder: the outcome, whose submission it was and
which autograder and file it came from. Everything later (the gradebook
CSVs, the class report, reruns) reads these records and nothing else.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

#: What became of a submission, in the order summaries and reports list them.
STATUSES: tuple[str, ...] = ("graded", "rejected", "timeout", "error")
#: What grading noticed about a graded submission besides its score:
#: ``not-attempted`` (every student function missing or still the starter
#: stub), ``load-error`` (a cell raised while the notebook ran, e.g. a
#: SyntaxError: what it defined later may be missing).
FLAGS: tuple[str, ...] = ("not-attempted", "load-error")
#: File name of a student's record in a graded folder.
RECORD_NAME = "outcome.json"
#: The folder of a graded folder that holds one folder per student. Class-level files
#: (``gradebook.csv``, ``report.html``, ``similarity.csv``, ...) sit beside it, so no
#: student id, whatever the file it came from was called, can name one of them.
STUDENTS_DIR = "students"


def points(value: float) -> str:
    """Points as people write them: at most two decimals, no trailing zeros (``16.18``, ``20``, ``3.5``)."""
    text = f"{round(value, 2):.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _fields_of(instance: Any) -> dict[str, Any]:
    """A dataclass instance's fields by name, not converted (``asdict`` without the recursion)."""
    return {f.name: getattr(instance, f.name) for f in fields(instance)}


@dataclass(frozen=True)
class Diagnosis:
    """A named mistake the feedback explains: from the catalogue, or recognised by its effect."""

    slug: str
    function: str
    title: str
    explanation: str


@dataclass(frozen=True)
class ItemOutcome:
    """One hidden test's verdict for one submission."""

    question: str
    test: str
    points: float
    passed: bool
    message: str = ""
    mistakes: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        return self.points if self.passed else 0.0


@dataclass(frozen=True)
class GradeOutcome:
    """Everything known about one graded (or refused) submission."""

    student: str
    assignment: str
    status: str                         # one of STATUSES
    isolation: str
    items: tuple[ItemOutcome, ...] = ()
    possible: float = 0.0
    notes: tuple[str, ...] = ()
    stdout: str = ""
    seconds: float = 0.0
    submission: str = ""
    diagnoses: tuple[Diagnosis, ...] = ()
    flags: tuple[str, ...] = ()
    #: What the student is told of a sandbox weaker than bubblewrap ('' at bubblewrap): see
    #: ``Clearance.student_note``.
    isolation_note: str = ""
    #: (question, function, digest) for each function of a question that lost points: its digest on
    #: the class's shared probes (``class_probes``), ``"="`` where it matched the reference on all
    #: of them. What mistake groups (``autograder.groups``) are made of.
    behaviour: tuple[tuple[str, str, str], ...] = ()
    #: Notes the instructor wrote for a mistake group this submission is in: (group id, Markdown).
    group_notes: tuple[tuple[str, str], ...] = ()

    @property
    def total(self) -> float:
        # Item points are hundredths (see the build's split), so two decimals are exact.
        return round(sum(i.score for i in self.items), 2)

    @property
    def mistakes(self) -> tuple[str, ...]:
        """Distinct diagnosed mistakes, in the order they were first seen."""
        seen: dict[str, None] = {}
        for item in self.items:
            for slug in item.mistakes:
                seen.setdefault(slug, None)
        return tuple(seen)

    def question_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for item in self.items:
            scores[item.question] = round(scores.get(item.question, 0.0) + item.score, 2)
        return scores

    def question_points(self) -> dict[str, float]:
        """Each question's possible points, from its tests' weights."""
        points: dict[str, float] = {}
        for item in self.items:
            points[item.question] = round(points.get(item.question, 0.0) + item.points, 2)
        return points

    def to_dict(self) -> dict:
        # One level at a time: the items and diagnoses hold only strings, numbers and
        # tuples of strings (``asdict`` copied everything recursively, twice over).
        data = _fields_of(self)
        data["items"] = [_fields_of(i) for i in self.items]
        data["diagnoses"] = [_fields_of(d) for d in self.diagnoses]
        data["behaviour"] = [{"question": q, "function": f, "digest": d} for q, f, d in self.behaviour]
        data["group_notes"] = [{"group": g, "text": t} for g, t in self.group_notes]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "GradeOutcome":
        items = tuple(ItemOutcome(**{**i, "mistakes": tuple(i.get("mistakes", ()))}) for i in data["items"])
        known = {f.name for f in fields(cls)}
        diagnoses = tuple(Diagnosis(**d) for d in data.get("diagnoses", ()))
        return cls(**{**{k: v for k, v in data.items() if k in known}, "items": items,
                      "notes": tuple(data.get("notes", ())), "diagnoses": diagnoses,
                      "flags": tuple(data.get("flags", ())),
                      "behaviour": tuple((str(b["question"]), str(b["function"]), str(b["digest"]))
                                         for b in data.get("behaviour", ())),
                      "group_notes": tuple((str(n["group"]), str(n["text"])) for n in data.get("group_notes", ()))})


@dataclass(frozen=True)
class Entry:
    """One submission to grade and whose it is.

    ``student`` is the id the graded folder is named after; ``name``,
    ``email``, ``sid`` (the institution's student id) and ``lms_user_id``
    (the LMS's own user id) come from an LMS export where there is one.
    """

    student: str
    path: Path
    name: str = ""
    email: str = ""
    submitted_at: str = ""
    note: str = ""
    sid: str = ""
    lms_user_id: str = ""
    #: Who submitted, as the source knows them (``sid:...``, ``email:...``); submissions
    #: with the same identity are one person's, of whom the latest is graded.
    identity: str = ""
    #: The text ``student`` was made from (a file or folder name, an SID, an e-mail), as found.
    id_source: str = ""
    #: Why this submission is not run (a link in the class folder), or empty: it is then
    #: recorded as rejected with this reason, and its file is never read.
    refused: str = ""
    #: The group submission this entry is one member's row of (``gradescope:submission_409194002``),
    #: or empty: every member is graded on the same file, which is no sign of copying.
    group: str = ""

    def to_dict(self) -> dict:
        return {"student": self.student, "path": str(self.path), "name": self.name, "email": self.email,
                "submitted_at": self.submitted_at, "note": self.note, "sid": self.sid,
                "lms_user_id": self.lms_user_id, "identity": self.identity, "id_source": self.id_source,
                "refused": self.refused, "group": self.group}

    @classmethod
    def from_dict(cls, data: dict) -> "Entry":
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        return cls(**{**values, "path": Path(values.get("path", ""))})


@dataclass(frozen=True)
class GradeRecord:
    """One student's ``outcome.json``: the entry, the outcome, and where they came from.

    ``autograder`` and ``submission_sha256`` let a rerun tell whether the
    autograder or the submission changed since this record was written.
    """

    entry: Entry
    outcome: GradeOutcome
    autograder: str = ""
    submission_sha256: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"autograder": self.autograder, "submission_sha256": self.submission_sha256,
                           "entry": self.entry.to_dict(), "outcome": self.outcome.to_dict(),
                           **({"extra": self.extra} if self.extra else {})}) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "GradeRecord":
        """Parse a record; raises ``ValueError`` (or ``KeyError``/``TypeError``) if it is malformed."""
        data = json.loads(text)
        return cls(Entry.from_dict(data["entry"]), GradeOutcome.from_dict(data["outcome"]),
                   str(data.get("autograder", "")), str(data.get("submission_sha256", "")),
                   dict(data.get("extra", {})))


def student_folder(out: Path, student: str) -> Path:
    """Where ``student``'s files live in the graded folder ``out``: ``OUT/students/<student>``."""
    return Path(out) / STUDENTS_DIR / student


def record_folders(out: Path) -> list[Path]:
    """The student folders of the graded folder ``out`` that hold a record, sorted by id.

    A link among them is not followed: every folder ``grader grade`` writes is a real one.

    Raises:
        ValueError: ``out`` has no ``students`` folder but holds records in the layout of
            earlier versions (``OUT/<student>/outcome.json``); the message says what to do.
    """
    out = Path(out)
    students = out / STUDENTS_DIR
    if not students.is_dir() or students.is_symlink():
        legacy = [p for p in out.iterdir() if p.is_dir() and (p / RECORD_NAME).is_file()] if out.is_dir() else []
        if legacy:
            raise ValueError(f"{out} holds grading records in the layout of an earlier version "
                             f"(<student>/{RECORD_NAME}, e.g. {legacy[0].name}); this version keeps them in "
                             f"{STUDENTS_DIR}/<student>/. Run `grader grade` into {out} again: it grades "
                             "into the new layout.")
        return []
    return sorted(p for p in students.iterdir()
                  if not p.is_symlink() and p.is_dir() and (p / RECORD_NAME).is_file())


def read_record(folder: Path) -> GradeRecord | None:
    """The record in ``folder/outcome.json``, or ``None`` if it is missing or unreadable."""
    try:
        return GradeRecord.from_json((Path(folder) / RECORD_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError, TypeError):
        return None

"""Whose each folder of a Moodle download is, checked against the assignment's grading worksheet.

A Moodle download's folder names carry a name and a number, and nothing else
(``layouts/moodle.py``). For an individual assignment the number is the participant number;
for a **team** assignment in 4.1+ it is the *group* id and the name is the group's, and the
download lists no member (moodle/moodle ``mod/assign/classes/downloader.php``
``get_student_prefix``). The two read alike: only the assignment's participants tell them apart.

Moodle's "Download grading worksheet" (offline grading on) lists them. It is the assignment's
grading table downloaded (``mod/assign/gradingtable.php``): "Identifier" (``Participant N``,
the number the download uses), "Full name" and the identity fields (left out under blind
marking), "Status", **"Group"** (only when the assignment takes team submissions:
``col_team`` gives the group's name, or ``defaultteam``, "Default group", for students in
no group), "Grade", "Maximum Grade", ... The file is UTF-8 with a byte-order mark.

With it, every Moodle folder is placed for sure:

- an individual assignment: the folder's number must be a participant's, and its name that
  participant's full name (Moodle wrote both from one record); anything else is refused;
- a team assignment: a group's folder goes to every participant the worksheet puts in that
  group (by name: the worksheet carries no group id), each graded on the group's file; a 3.x
  download's per-member folder (``{group}-{full name}_{participant}``) goes to that member.
"""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from autograder.runtime.errors import GraderError

#: What ``clean_filename`` (``PARAM_FILE``) removes from a name before it becomes a folder's.
_CLEANED = re.compile(r"[\x00-\x1f\x7f]|[&<>\"`|':\\/]")
#: A worksheet larger than this is no worksheet of a class (Moodle's are a few KB per hundred students).
MAX_WORKSHEET_BYTES = 20 * 1024 * 1024


class WorksheetError(GraderError):
    """The file given as Moodle's grading worksheet cannot be read as one."""


def same_name(text: str) -> str:
    """A name as a download folder and the worksheet both show it: Moodle turned ``_`` into a space
    and dropped ``clean_filename``'s characters in the folder only, so both sides are compared
    after the same changes (and case and Unicode form aside)."""
    text = _CLEANED.sub("", unicodedata.normalize("NFC", text).replace("_", " "))
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class Participant:
    """One row of the worksheet."""

    number: str          # the digits of "Participant N"
    name: str = ""       # "Full name" ("" under blind marking)
    email: str = ""
    group: str = ""      # "Group": the team's name, or Moodle's name for no group ("" if no such column)
    comments: str = ""   # "Feedback comments": the comment Moodle holds for the participant now


@dataclass
class Participants:
    """The assignment's participants as its grading worksheet lists them."""

    source: Path
    by_number: dict[str, Participant] = field(default_factory=dict)
    #: Whether the worksheet has Moodle's "Group" column: the assignment takes team submissions.
    teams: bool = False
    #: The worksheet's "Maximum Grade" where every row gives the same one.
    max_grade: float | None = None
    #: Whether it has the "Feedback comments" column (the assignment's feedback comments are on):
    #: only then does Moodle's worksheet import read comments.
    comments: bool = False

    def in_group(self, folder_name: str) -> list[Participant]:
        key = same_name(folder_name)
        return [p for p in self.by_number.values() if p.group and same_name(p.group) == key]

    def is_named(self, participant: Participant, folder_name: str) -> bool:
        """Whether a folder named ``folder_name`` with this participant's number is this participant's:
        their full name (4.1, or 3.x alone), ``{group}-{full name}`` (a 3.x team download), or
        Moodle's "Participant" under blind marking, when the worksheet holds no names."""
        shown = same_name(folder_name)
        if not participant.name:
            return True
        names = {same_name(participant.name)}
        if participant.group:
            names.add(same_name(f"{participant.group}-{participant.name}"))
        return shown in names


def _number(identifier: str) -> str:
    found = re.fullmatch(r"\D*?(\d+)\s*", identifier)
    return found.group(1) if found else ""


def read(path: str | Path) -> Participants:
    """The participants of the worksheet at ``path``; ``WorksheetError`` says what is wrong with it."""
    path = Path(path)
    try:
        if path.stat().st_size > MAX_WORKSHEET_BYTES:
            raise WorksheetError(f"{path} is larger than {MAX_WORKSHEET_BYTES // 2**20} MB: not a grading worksheet")
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise WorksheetError(f"{path} is not UTF-8 text: pass the CSV Moodle writes under Assignment > "
                             "View all submissions > Download grading worksheet, unchanged") from None
    except OSError as exc:
        raise WorksheetError(f"{path} cannot be read ({exc.strerror})") from None
    rows = list(csv.reader(io.StringIO(text)))
    header = [h.strip() for h in rows[0]] if rows else []
    if "Identifier" not in header:
        raise WorksheetError(f"{path} has no \"Identifier\" column, so it is not Moodle's grading worksheet: "
                             "download it under Assignment > View all submissions > Download grading worksheet "
                             "(offline grading worksheet on) and pass it unchanged")
    col = {h: i for i, h in enumerate(header)}
    out = Participants(path, teams="Group" in col, comments="Feedback comments" in col)

    def cell(row: list[str], name: str) -> str:
        i = col.get(name)
        return row[i].strip() if i is not None and i < len(row) else ""

    def raw(row: list[str], name: str) -> str:       # a comment as Moodle holds it, spaces and all
        i = col.get(name)
        return row[i] if i is not None and i < len(row) else ""

    maxima = set()
    for line, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        number = _number(cell(row, "Identifier"))
        if not number:
            raise WorksheetError(f"{path}, line {line}: the Identifier {cell(row, 'Identifier')!r} holds no "
                                 "participant number (Moodle writes \"Participant 1234567\")")
        if number in out.by_number:
            raise WorksheetError(f"{path}, line {line}: participant {number} is listed twice")
        out.by_number[number] = Participant(number, cell(row, "Full name"), cell(row, "Email address"),
                                            cell(row, "Group"), raw(row, "Feedback comments"))
        maxima.add(cell(row, "Maximum Grade"))
    if len(maxima) == 1:
        try:
            value = float(next(iter(maxima)).replace(",", "."))
            out.max_grade = value if value > 0 else None
        except ValueError:
            pass
    return out


@dataclass(frozen=True)
class Placement:
    """Whose a Moodle folder is: its participants (one, or a group's members), or why none."""

    members: tuple[Participant, ...] = ()
    group: str = ""        # the group's name when the folder is a team's
    refusal: str = ""      # for the instructor and the student: why the folder is no one's


def place(participants: Participants, folder_name: str, number: str) -> Placement:
    """Whose the folder ``{folder_name}_{number}_assignsubmission_...`` is (``number`` is "" for the
    numberless folder of a team download's students in no group)."""
    sheet = participants.source.name
    own = participants.by_number.get(number) if number else None
    is_own = own is not None and participants.is_named(own, folder_name)
    members = participants.in_group(folder_name) if participants.teams else []
    if is_own and members and own not in members:
        return Placement(refusal=f"the folder names {folder_name!r} with number {number}: both participant "
                                 f"{number} ({own.name}) and the group {folder_name!r} of {sheet}, so whose it "
                                 "is cannot be told; grade it by hand")
    if is_own:
        return Placement(members=(own,))
    names = sorted({p.group for p in members})
    if len(names) > 1:
        # Moodle writes ``_`` as a space and drops some characters: "Team A" and "Team_A" (or a
        # group named "default_group" and Moodle's "Default group") give one folder name, and the
        # worksheet has no group id to tell whose folder it is.
        return Placement(refusal=f"the folder names {folder_name!r}, which the groups "
                                 + " and ".join(repr(n) for n in names) + f" of {sheet} all read as in a "
                                 "folder name: whose it is cannot be told; grade it by hand")
    if members:
        return Placement(members=tuple(sorted(members, key=lambda p: (p.name, p.number))), group=folder_name)
    if participants.teams:
        return Placement(refusal=f"the folder names {folder_name!r}, which is neither a group of {sheet} (its "
                                 "\"Group\" column) nor, with its number, one of its participants; was the "
                                 "download taken from another assignment? Not graded")
    if own is None:
        return Placement(refusal=f"the folder names participant {number or '(no number)'}, who is not in {sheet}; "
                                 "was the download taken from another assignment? Not graded")
    return Placement(refusal=f"the folder names {folder_name!r} with number {number}, but participant {number} "
                             f"of {sheet} is {own.name!r}: a team download's group (pass the worksheet of a "
                             "team assignment, which has a \"Group\" column) or another assignment's download? "
                             "Not graded")

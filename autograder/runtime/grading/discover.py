"""Find the submissions to grade and whose each one is.

Why one module: the layouts' readers are small modules of their own (``layouts/``); what stays
here is the one rule every layout shares (which of a student's files is graded, unique ids, links
refused, wrappers and whole classes recognised), which must read the same for all of them.

``discover`` takes files and folders as instructors get them; one small reader per
layout (``layouts/``) says whose each file is:

- Gradescope's "Export Submissions" folder, whose ``submission_metadata.yml``
  names each submitter (SID, e-mail, name, time); every member of a group
  submission gets a row of their own, graded on the group's file;
- Canvas's "Download Submissions", flat files named
  ``{sortable name}_{LATE_}{user id}_{attachment id}_{file name}``,
  ``{...}_text.html`` / ``{...}_link.html`` for text and URL entries, and
  ``{LATE_}anon_{anonymous id}_...`` under anonymous grading;
- Moodle's "Download all submissions", one folder per participant and plugin
  (``{Full Name}_{participant}_assignsubmission_file`` in 4.1+, with a trailing
  ``_`` in 3.x) or, with folders off, flat files with that prefix;
- a plain folder of files (the id is the file name) or of per-student
  subfolders (the id is the folder name).

Everything a student handed in is a candidate: notebooks, scripts and export zips
are graded; anything else (a PDF, a text entry, online text) is recorded as
rejected with a sentence saying what was received. Of one student's files one is
graded, by one rule in every layout: a notebook or export zip before a script,
before what cannot be graded; then the latest by the LMS's own record
(Gradescope's submission time, Canvas's upload order), else by file time; at a
tie, the export zip. The choice and every file not graded are named in the note
the gradebook and the student's feedback show.

A path that holds a whole class is never one submission: a single folder around
the class (what an unzip makes) is looked through, with a warning; the LMS's
download zip, or a class inside the class folder, is refused before grading with
what to do.

The id comes from the layout; a file still carrying otter's export name
(``lm-head_2026_12_01T06_12_34_567890.zip``) says nothing about whose it is,
so it is graded under that name without the timestamp and reported.

Every student gets an id of their own, by construction: different names that
clean to the same id (``José`` and ``Josè`` both give ``Jos``, and so do the
NFC and NFD spellings of one name) each get a suffix made from their own name,
checked against every id in the class (a real ``Jos-2`` included), with a note.

Links inside the folders being graded are never followed: a submission that is
a link (or lies in a linked folder) is recorded as refused with the reason, so
one file can never be graded as two students' work unseen; two names for one
file (a hard link) are both graded, each with a note.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Iterable

import yaml

from autograder.runtime.errors import GraderError
from autograder.runtime.grading.layouts import canvas, downloads, gradescope, handed_in, moodle, moodle_participants
from autograder.runtime.grading.layouts.gradescope import METADATA_FILE
from autograder.runtime.grading.outcome import Entry
from autograder.runtime.text import code


class GradingInputError(GraderError):
    """A path given to ``grader grade`` cannot be used."""


#: What can be graded; anything else a student handed in is recorded as rejected.
SUBMISSION_SUFFIXES = tuple(handed_in.GRADABLE_RANK)
#: The timestamp otter's export cell adds to the assignment's name.
EXPORT_STAMP = re.compile(r"_\d{4}_\d{2}_\d{2}T\d{2}_\d{2}_\d{2}(?:_\d+)?$")
#: Longest id before a suffix: a folder name must stay under the file system's 255 bytes.
MAX_ID_CHARS = 100
#: Hex digits of the suffix that tells apart names giving the same id (more if even that is taken).
SUFFIX_DIGITS = 8


def _student_id(text: str) -> str:
    """A safe folder name from a file name or an id: ASCII letters, digits and ``._@-``, the rest ``_``.

    Different texts can give the same id (``José`` and ``Josè`` both give ``Jos``):
    :func:`_unique_ids` settles that for a class, never this function.
    """
    cleaned = re.sub(r"[^A-Za-z0-9._@-]+", "_", text).strip("._")[:MAX_ID_CHARS].strip("._")
    return cleaned or "student"


def _linked(path: Path, root: Path) -> bool:
    """Whether ``path`` or a folder between ``root`` and it is a link (``root`` itself may be one)."""
    try:
        relative = path.relative_to(root)
        return os.path.realpath(path) != os.path.join(os.path.realpath(root), *relative.parts)
    except (ValueError, OSError):
        return True


def _refusal(path: Path) -> str:
    """The reason a linked submission is not graded, as the student and the instructor read it."""
    return (f"{code(path.name)} is a link in the class folder, not a file: links are not graded (one file "
            "could be graded as several students' work). Put the submission itself in its place.")


@dataclass
class Discovery:
    """The submissions found, one per student, and what was left out or needs a look.

    ``skipped`` and ``warnings`` are for the terminal and hold names as found: the command
    line prints them through ``text.terminal``, which shows control characters as escapes.

    ``skipped`` names links found where submissions are looked for (never
    followed; one that is a student's submission is also an entry, refused) and
    loose files whose name says neither whose they are nor that they can be graded;
    ``warnings`` name ids two different students would have shared, files
    submitted under two names, and a wrapper folder looked through.
    """

    entries: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Candidate:
    """One file a student handed in, and what orders it among that student's files."""

    entry: Entry
    kind: str = ""          # what the layout says it is: "text", "link", "onlinetext" or "" (a file)
    order: int = 0          # the LMS's own upload order (Canvas's attachment id), 0 if it keeps none
    link: bool = False      # a link in the class folder: never read


def _skip_link(path: Path, found: Discovery) -> None:
    try:
        target = os.path.realpath(path)
    except OSError:
        target = "?"
    found.skipped.append(f"{path}: a link (to {target}), not followed")


def _handed_in(entry: Entry, path: Path, root: Path | None, found: Discovery, kind: str = "",
               order: int = 0) -> _Candidate:
    """``entry`` for the file ``path``: refused if it is a link (listed in ``found.skipped``) or cannot be graded."""
    if root is not None and _linked(path, root):
        _skip_link(path, found)
        return _Candidate(replace(entry, path=path, refused=_refusal(path)), kind, order, link=True)
    if handed_in.rank(path) == 0:
        return _Candidate(replace(entry, path=path, refused=handed_in.refusal(path, kind),
                                  note=_joined(entry.note, handed_in.instructor_note(path, kind))), kind, order)
    return _Candidate(replace(entry, path=path), kind, order)


def _files_in(folder: Path) -> list[Path]:
    """Every file a student's folder holds, at any depth, but what systems and editors leave there."""
    out = []
    for p in sorted(folder.rglob("*")):
        if handed_in.ignored(p.relative_to(folder)):
            continue
        if p.is_symlink() or p.is_file():
            out.append(p)
    return out


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)


def _with_note(entry: Entry, note: str) -> Entry:
    return replace(entry, note=_joined(entry.note, note))


# --------------------------------------------------------------------------- Gradescope


def _from_gradescope_export(folder: Path, found: Discovery) -> list[_Candidate]:
    try:
        submissions = gradescope.read(folder)
    except (yaml.YAMLError, OSError, UnicodeDecodeError, ValueError) as exc:
        raise GradingInputError(f"{folder / METADATA_FILE} cannot be read ({exc}); re-download the "
                                "export from Gradescope.") from None
    out = []
    for sub in submissions:
        sub_folder = folder / sub.key
        group = f"gradescope:{sub.key}" if len(sub.submitters) > 1 else ""
        files = _files_in(sub_folder) if sub_folder.is_dir() and not _linked(sub_folder, folder) else []
        for index, person in enumerate(sub.submitters):
            # Two people never share an id: the SID, else the whole e-mail, else the submission.
            identity = person.who or f"submission:{sub.key}" + (f"#{index + 1}" if index else "")
            source = person.id_source or sub.key + (f"-{index + 1}" if index else "")
            entry = Entry(_student_id(source), sub_folder, person.name, person.email, sub.created_at,
                          sid=person.sid, identity=identity, id_source=source, group=group)
            if group:
                others = [o for o in sub.submitters if o is not person]
                entry = _with_note(entry, f"group submission ({code(sub.key)} on Gradescope) with "
                                          # A name is what its owner typed into Gradescope: quoted.
                                          + ", ".join(code(o.name or o.email or o.sid) if (o.name or o.email or o.sid)
                                                      else "an unnamed member" for o in others)
                                          + ": every member is graded on the same file")
            if sub_folder.is_symlink():
                _skip_link(sub_folder, found)
                out.append(_Candidate(replace(entry, refused=_refusal(sub_folder)), link=True))
            elif not files:
                out.append(_Candidate(replace(
                    entry, refused="Your Gradescope submission holds no file: " + handed_in.WHAT_TO_SUBMIT + ".",
                    note=_joined(entry.note, f"no file in {code(sub.key)} of the export: rejected"))))
            else:
                out += [_handed_in(entry, f, folder, found) for f in files]
    return out


# --------------------------------------------------------------------------- Canvas, Moodle, plain


def _from_canvas(path: Path, name: canvas.CanvasName) -> tuple[Entry, str, int]:
    late = "submitted late (Canvas)" if name.late else ""
    entry = Entry(_student_id(name.student_id), path, name.name, note=late, lms_user_id=name.user_id,
                  identity=name.who, id_source=name.student_id)
    return entry, name.entry, name.attachment_id


def _from_moodle(path: Path, name: moodle.MoodleName) -> Entry:
    return Entry(_student_id(name.participant), path, name.name, lms_user_id=name.participant,
                 identity=name.who, id_source=name.participant)


def _from_file(path: Path, root: Path | None, found: Discovery, export_named: list[Path]) -> _Candidate | None:
    """A file on its own: a Canvas or Moodle name says whose it is; a plain name is the id.

    ``None`` for a plain-named file in a folder (``root``) that cannot be graded, listed in
    ``found.skipped``: whose it is cannot be told, so it is no student's row. A file given
    by name (``root`` None) is always a row.
    """
    # Moodle's first: its fixed ``_assignsubmission_`` cannot be a Canvas name's, while a Moodle
    # file's own name (``x_12_34_y.ipynb``) could read as a Canvas user and attachment id.
    in_moodle = moodle.flat(path.name)
    if in_moodle:
        return _handed_in(_from_moodle(path, in_moodle), path, root, found, in_moodle.kind)
    in_canvas = canvas.parse(path.name)
    if in_canvas:
        entry, kind, order = _from_canvas(path, in_canvas)
        return _handed_in(entry, path, root, found, kind, order)
    if handed_in.rank(path) == 0 and root is not None:
        found.skipped.append(f"{path}: not a notebook, script or zip, and its name is not an LMS download's, "
                             "so whose it is cannot be told: not graded")
        return None
    if path.suffix.lower() == ".zip" and (what := downloads.class_in_zip(path)):
        if root is None:              # the instructor passed the download zip itself
            raise GradingInputError(downloads.refusal(path, what))
        # Inside a class the zip is a student's file, whatever it holds: a student must never be able
        # to stop the class's grading by handing in something shaped like a download.
        return _whole_class_handed_in(Entry(_student_id(path.stem), path, identity=f"name:{path.stem}",
                                            id_source=path.stem), path, what, found)
    stem = EXPORT_STAMP.sub("", path.stem)
    if stem != path.stem:
        export_named.append(path)
        # Whose it is cannot be known: never merged with another file of the same name.
        return _handed_in(Entry(_student_id(stem), path, identity=f"file:{path}", id_source=stem),
                          path, root, found)
    # The name exactly as written: two names that only look alike (NFC and NFD) are two people.
    return _handed_in(Entry(_student_id(path.stem), path, identity=f"name:{path.stem}", id_source=path.stem),
                      path, root, found)


def _from_student_folder(sub: Path, root: Path, found: Discovery) -> list[_Candidate]:
    """Every file of one student's folder (a Moodle participant's, or a plain one named after the student)."""
    in_moodle = moodle.folder(sub.name)
    if in_moodle:
        entry, kind = _from_moodle(sub, in_moodle), in_moodle.kind
    else:
        what = "" if sub.is_symlink() else downloads.class_in_folder(sub, plain=False)
        # A file and a folder of one name are one student's (as two files of one name are).
        entry, kind = Entry(_student_id(sub.name), sub, identity=f"name:{sub.name}", id_source=sub.name), ""
        if what:
            return [_whole_class_handed_in(entry, sub, what, found)]
    if _linked(sub, root):
        _skip_link(sub, found)
        return [_Candidate(replace(entry, refused=_refusal(sub)), kind, link=True)]
    return [_handed_in(entry, f, root, found, kind) for f in _files_in(sub)]


def _whole_class_handed_in(entry: Entry, path: Path, what: str, found: Discovery) -> _Candidate:
    """A student's file or folder inside a class that holds a whole class: a refused row of its own
    (the rest of the class is graded), and a warning for the instructor in case it is a class."""
    found.warnings.append(f"{path} holds {what}: it is not graded as one student's submission (its row says "
                          f"so). If it is a class, grade it on its own (`grader grade {path} ...`).")
    return _Candidate(replace(entry, refused=(f"{code(path.name)} holds a whole class's download ({what}), not one "
                                              "student's notebook: it was not graded. "
                                              + handed_in.WHAT_TO_SUBMIT.capitalize() + ".")), link=False)


def _refuse_team_download(folder: Path) -> None:
    """Refuse a Moodle team download before anything is graded: its folders name groups by their
    group id, which would be read as participant numbers (a group's grade given to whichever
    student has that number), and it lists no group's members."""
    sign = next((c for c in sorted(folder.iterdir()) if moodle.team_download_sign(c.name)), None)
    if sign is not None:
        raise GradingInputError(
            f"{sign} is how Moodle names the submission of the students in no group when an assignment takes "
            f"team submissions: the other folders of {folder} then name groups, and their numbers are group ids, "
            "not participant numbers, with no member listed. Nothing was graded. Grade a team assignment per "
            "student: put each group's submission in a folder named after each member (a plain folder each), "
            "or grade it where the groups' members are listed (a Gradescope group export).")


def _from_folder(folder: Path, found: Discovery, export_named: list[Path], teams_listed: bool) -> list[_Candidate]:
    """The submissions of a plain, Canvas or Moodle folder: its files, then one per subfolder.
    ``teams_listed``: a Moodle worksheet naming each participant's group was given."""
    if not teams_listed:
        _refuse_team_download(folder)
    out: list[_Candidate] = []
    for child in sorted(folder.iterdir()):
        if handed_in.ignored(child.relative_to(folder)):
            continue
        if child.is_dir():            # a linked folder too: its row says it is refused
            out += _from_student_folder(child, folder, found)
        elif child.is_symlink() or child.is_file():
            candidate = _from_file(child, folder, found, export_named)
            if candidate is not None:
                out.append(candidate)
    return out


def _unwrapped(folder: Path, found: Discovery) -> Path:
    """The class inside ``folder`` when ``folder`` holds nothing but one folder that is a class.

    What an unzip makes: Windows's "Extract All" always adds a folder named after the zip
    (a Gradescope export, itself one folder, becomes ``X/X/...``), and an instructor may
    pass the folder one level above the download.
    """
    while not (folder / METADATA_FILE).is_file():
        children = [c for c in sorted(folder.iterdir()) if not handed_in.ignored(c.relative_to(folder))]
        if len(children) != 1 or not children[0].is_dir() or children[0].is_symlink():
            return folder
        inner = children[0]
        what = downloads.class_in_folder(inner)
        if not what:
            return folder
        found.warnings.append(f"{folder} holds only the folder {inner.name}, which is {what}: "
                              f"graded {inner} as the class")
        folder = inner
    return folder


# --------------------------------------------------------------------------- Moodle's participants


def _placed(candidates: list[_Candidate], participants: moodle_participants.Participants | None,
            found: Discovery) -> list[_Candidate]:
    """Moodle's candidates placed by the worksheet: a participant's own, each member of a team's
    (graded on the team's file), or refused with the reason. Without a worksheet a team
    download's numberless folder can only be a file given by name: refused, as its folder is."""
    out, unchecked = [], False
    placements = {id(c): moodle_participants.place(participants, c.entry.name, c.entry.lms_user_id)
                  for c in candidates if participants is not None
                  and c.entry.identity.startswith(("moodle:", "moodle-team:"))}
    teams: dict[str, set[str]] = {}     # a group's name as folders show it -> the numbers of its folders
    for c in candidates:
        where = placements.get(id(c))
        if where is not None and where.group:
            teams.setdefault(moodle_participants.same_name(where.group), set()).add(c.entry.lms_user_id)
    for c in candidates:
        e = c.entry
        if not e.identity.startswith(("moodle:", "moodle-team:")):
            out.append(c)
            continue
        if participants is None:
            unchecked = True
            out.append(c if e.identity.startswith("moodle:") else replace(c, entry=replace(
                e, refused="This is a Moodle team submission, and the members of a team are listed only in the "
                           "assignment's grading worksheet: it was not graded.")))
            continue
        where = placements[id(c)]
        numbers = sorted(teams.get(moodle_participants.same_name(where.group), ())) if where.group else []
        if not where.refusal and len(numbers) > 1:
            where = moodle_participants.Placement(refusal=(
                f"{len(numbers)} folders of the download name the group {where.group!r} (group ids "
                f"{', '.join(n or 'none' for n in numbers)}), and the worksheet has no group id to tell "
                "which is whose; grade them by hand"))
        if where.refusal:
            found.warnings.append(f"{e.path}: {where.refusal}")
            # Refused, it is no participant's: never a row of Moodle's worksheet (a 0 there would be imported).
            out.append(replace(c, entry=replace(
                e, refused="This submission could not be matched to a participant of the assignment: "
                           + where.refusal + ".", note=_joined(e.note, where.refusal), lms_user_id="",
                identity=f"moodle-unplaced:{e.path}")))
            continue
        for person in where.members:
            member = replace(e, student=_student_id(person.number), name=person.name or e.name, email=person.email,
                             lms_user_id=person.number, identity=f"moodle:{person.number}", id_source=person.number,
                             group=f"moodle-team:{where.group}" if where.group else "")
            if where.group:
                others = [code(o.name or f"participant {o.number}") for o in where.members if o is not person]
                member = _with_note(member, f"group submission (Moodle group {code(where.group)}) "
                                            + ("with " + ", ".join(others) + ": every member is graded on the "
                                               "same file" if others else "of one member"))
            out.append(replace(c, entry=member))
    if unchecked:
        found.warnings.append(
            "a Moodle download was read without its grading worksheet: each folder's number was taken as the "
            "participant number, unchecked. In a team assignment whose students are all in groups the numbers "
            "are group ids and read the same; pass --moodle-worksheet (Download grading worksheet) to check "
            "every folder and to grade each group's members.")
    return out


# --------------------------------------------------------------------------- one file per student


def _when(candidate: _Candidate) -> str:
    """The file's time: the LMS's submission time where it records one, else the file's own."""
    if candidate.entry.submitted_at:
        return str(candidate.entry.submitted_at)
    try:
        return datetime.fromtimestamp(candidate.entry.path.lstat().st_mtime).isoformat()
    except OSError:
        return ""


def _rank(candidate: _Candidate) -> tuple:
    """What decides between one student's files, least preferred first (see the module's docstring)."""
    entry = candidate.entry
    gradable = 0 if candidate.link or entry.refused else handed_in.rank(entry.path)
    return (gradable, entry.submitted_at, candidate.order, _when(candidate),
            entry.path.suffix.lower() == ".zip", entry.path.name)


def _shown(path: Path, group: list[_Candidate]) -> str:
    """The file's name, with its folder when another of the student's files has the same name
    (two Gradescope submissions' ``lm-head.zip``)."""
    same = sum(c.entry.path.name == path.name for c in group) > 1
    return code(f"{path.parent.name}/{path.name}" if same else path.name)


def _described(candidate: _Candidate, group: list[_Candidate]) -> str:
    entry = candidate.entry
    if candidate.link:
        return f"{_shown(entry.path, group)} (a link, not followed)"
    if entry.refused:
        return handed_in.received(entry.path, candidate.kind)
    return f"{_shown(entry.path, group)} ({_when(candidate)})"


def _why(latest: _Candidate, others: list[_Candidate]) -> str:
    """Why ``latest`` was graded rather than ``others`` (the rule of :func:`_rank`, in words)."""
    top = _rank(latest)
    if all(_rank(o)[0] == 0 for o in others):
        return "the only file that can be graded"
    tied = [o for o in others if _rank(o)[:4] == top[:4]]
    if tied:
        if top[4] and not any(_rank(o)[4] for o in tied):
            return "the files carry the same time, and the export zip is taken before a notebook"
        return "the files carry the same time, and the last by name was taken"
    basis = ("Gradescope's submission time" if latest.entry.submitted_at else
             "Canvas's upload order (attachment id)" if latest.order else "file time")
    passed_over = " (a notebook or export zip before a script or another file)" \
        if any(_rank(o)[0] < top[0] for o in others) else ""
    return f"the latest by {basis}{passed_over}"


def _chosen(group: list[_Candidate]) -> Entry:
    """The one file of a student's that is graded, with a note naming it and every file not graded."""
    group = sorted(group, key=_rank)
    latest, others = group[-1], group[:-1]
    entry = latest.entry
    if not others:
        return entry
    if entry.refused and not latest.link:
        # Nothing can be graded: one note lists all that was handed in, in place of the one-file note.
        note = _joined(*[n for n in entry.note.split("; ") if not n.startswith("handed in ")])
        return replace(entry, note=_joined(note, f"handed in {len(group)} files, none a notebook or export zip: "
                                                 + ", ".join(_described(c, group) for c in reversed(group))
                                                 + "; rejected, nothing was graded"))
    return _with_note(entry, f"handed in {len(group)} files; graded {_shown(entry.path, group)}, "
                             f"{_why(latest, others)}; not graded: "
                             + ", ".join(_described(o, group) for o in reversed(others)))


def _latest_per_student(candidates: list[_Candidate], found: Discovery) -> list[Entry]:
    """One submission per person (see :func:`_chosen`), each under an id of its own (see :func:`_unique_ids`)."""
    groups: dict[str, list[_Candidate]] = {}
    for c in candidates:
        groups.setdefault(c.entry.identity or f"id:{c.entry.student}", []).append(c)
    kept = [_chosen(group) for _, group in sorted(groups.items())]
    return _same_file_noted(_unique_ids(kept, found), found)


def _suffixed(entry: Entry, taken: set[str]) -> str:
    """``entry``'s id with a suffix made from who it is (so the same file gets the same id on every
    run, whatever else is in the class), lengthened until no id in ``taken`` has it."""
    digest = hashlib.sha256((entry.identity or entry.id_source or str(entry.path))
                            .encode("utf-8", "surrogatepass")).hexdigest()
    for digits in range(SUFFIX_DIGITS, len(digest) + 1, 4):
        candidate = f"{entry.student}-{digest[:digits]}"
        if candidate.lower() not in taken:
            return candidate
    number = 2
    while f"{entry.student}-{digest}-{number}".lower() in taken:
        number += 1
    return f"{entry.student}-{digest}-{number}"


def _unique_ids(entries: list[Entry], found: Discovery) -> list[Entry]:
    """Every entry under an id no other has, case aside (a folder on macOS or Windows ignores case).

    Where different people's names give one id, the one whose name is that id exactly (``Jos``
    beside ``José``) keeps it; each other gets a suffix from its own name, checked against every
    id of the class, natural ones included, and a note in its row and feedback saying so.
    """
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.student.lower(), []).append(e)
    taken = set(groups)
    unique = []
    for _, same in sorted(groups.items()):
        if len(same) == 1:
            unique += same
            continue
        exact = [e for e in same if e.id_source == e.student]
        keeper = exact[0] if len(exact) == 1 else None
        for e in sorted(same, key=lambda e: (e.identity, e.id_source, str(e.path))):
            if e is keeper:
                unique.append(e)
                continue
            new_id = _suffixed(e, taken)
            taken.add(new_id.lower())
            note = (f"the name {code(e.id_source or e.student)} gives the id {code(e.student)}, as "
                    f"{len(same) - 1} other submission(s) in this class do; graded as {code(new_id)}")
            found.warnings.append(f"{note} ({e.path})")
            unique.append(_with_note(replace(e, student=new_id), note))
    return sorted(unique, key=lambda e: e.student)


def _same_file_noted(entries: list[Entry], found: Discovery) -> list[Entry]:
    """Entries whose files are one file under several names (a hard link) are each graded, with a note:
    which name is the owner's cannot be told, and refusing both would zero the owner."""
    by_file: dict[tuple[int, int], list[Entry]] = {}
    for e in entries:
        if e.refused:
            continue
        try:
            info = e.path.stat()
        except OSError:
            continue
        by_file.setdefault((info.st_dev, info.st_ino), []).append(e)
    # The members of one group submission share its file by design; their note says so.
    by_file = {k: g for k, g in by_file.items() if len(g) > 1 and not (g[0].group and all(
        e.group == g[0].group for e in g))}
    shared = {id(e): len(group) for group in by_file.values() for e in group}
    for group in by_file.values():
        if len(group) > 1:
            found.warnings.append(f"one file is the submission of {len(group)} students (hard links or one "
                                  "file given twice); each is graded, with a note: "
                                  + ", ".join(f"{e.student} ({e.path})" for e in group))
    return [_with_note(e, f"this file is also the submission of {shared[id(e)] - 1} other student(s) in "
                          "this class (the same file under another name); check whose work it is")
            if id(e) in shared else e for e in entries]


def discover(paths: Iterable[str | Path],
             participants: moodle_participants.Participants | None = None) -> Discovery:
    """Submissions under ``paths`` (files, folders, LMS downloads), one per student, each id its own.

    Links inside a folder are never followed: a student's submission found as a link
    is an entry refused with the reason, and every link is listed in ``skipped``. An
    LMS's download zip, or a class inside a class folder, raises ``GradingInputError``
    before anything is graded. With ``participants`` (Moodle's grading worksheet), every
    Moodle folder is placed by it (:func:`_placed`), team downloads included.
    """
    found = Discovery()
    candidates: list[_Candidate] = []
    export_named: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise GradingInputError(f"{path} does not exist; pass submission files or folders.")
        if path.is_file():
            # Given by name, even a file that cannot be graded is a student's: a rejected row.
            candidates.append(_from_file(path, None, found, export_named))
            continue
        folder = _unwrapped(path, found)
        if (folder / METADATA_FILE).is_file():
            candidates += _from_gradescope_export(folder, found)
        else:
            candidates += _from_folder(folder, found, export_named,
                                       teams_listed=participants is not None and participants.teams)
    if not candidates:
        raise GradingInputError("no submissions found: give .ipynb, .py or .zip files, folders of them "
                                "(one file or one subfolder per student), a Canvas or Moodle download, "
                                "or a Gradescope export folder.")
    if export_named:
        shown = ", ".join(p.name for p in export_named[:3]) + (" ..." if len(export_named) > 3 else "")
        found.warnings.append(
            f"{len(export_named)} file(s) still have the export cell's name ({shown}): whose they are cannot "
            "be known, so each is graded under that name without the timestamp. Rename each to the "
            "student's id, put it in a folder named after the student, or grade your LMS's download.")
    candidates = _placed(candidates, participants, found)
    found.entries = _latest_per_student(candidates, found)
    return found

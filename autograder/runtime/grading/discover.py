"""Find the submissions to grade and whose each one is.

``discover`` takes files and folders as instructors get them:

- Gradescope's "Export Submissions" folder, whose ``submission_metadata.yml``
  names each submitter (SID, e-mail, name, time);
- Canvas's "Download Submissions", files named
  ``{sortable name}_{late_}{user id}_{submission id}_{file name}``;
- Moodle's assignment download, one folder per participant named
  ``{Full Name}_{participant id}_assignsubmission_file_``;
- a plain folder of files (the id is the file name) or of per-student
  subfolders (the id is the folder name).

The id comes from the layout; a file still carrying otter's export name
(``lm-head_2026_12_01T06_12_34_567890.zip``) says nothing about whose it is,
so it is graded under that name without the timestamp and reported. One
submission per person is kept: the latest, with a note saying so.

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
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import yaml

from autograder.runtime.errors import GraderError
from autograder.runtime.grading.outcome import Entry
from autograder.runtime.text import code


class GradingInputError(GraderError):
    """A path given to ``grader grade`` cannot be used."""


SUBMISSION_SUFFIXES = (".ipynb", ".py", ".zip")
METADATA_FILE = "submission_metadata.yml"
#: Canvas "Download Submissions": ``{sortable name}_{late_}{user id}_{submission id}_{file name}``.
CANVAS_FILE = re.compile(r"^(?P<name>[^_]+)_(?P<late>late_)?(?P<user>\d+)_(?P<submission>\d+)_(?P<file>.+)$",
                         re.IGNORECASE)
#: Moodle's assignment download: one folder per participant.
MOODLE_FOLDER = re.compile(r"^(?P<name>.+)_(?P<participant>\d+)_assignsubmission_(?:file|onlinetext)_?$")
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
    followed; one that is a student's submission is also an entry, refused);
    ``warnings`` name ids two different students would have shared, and files
    submitted under two names.
    """

    entries: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _skip_link(path: Path, found: Discovery) -> None:
    try:
        target = os.path.realpath(path)
    except OSError:
        target = "?"
    found.skipped.append(f"{path}: a link (to {target}), not followed")


def _candidates(folder: Path, root: Path, found: Discovery, recursive: bool) -> tuple[list[Path], list[Path]]:
    """Submission files in ``folder`` (and below, if ``recursive``): the files, and the links (not followed)."""
    paths = folder.rglob("*") if recursive else folder.iterdir()
    files, links = [], []
    for p in sorted(paths):
        relative = p.relative_to(folder).parts
        if any(part.startswith(".") for part in relative) or p.suffix.lower() not in SUBMISSION_SUFFIXES:
            continue
        if _linked(p, root):
            links.append(p)
        elif p.is_file():
            files.append(p)
    return files, links


def _submission_file(folder: Path, root: Path, found: Discovery) -> tuple[Path | None, str]:
    """The submission in a student's folder (a notebook or zip first), or the link found in its place
    and why it is refused; links not taken are listed in ``found.skipped``."""
    if _linked(folder, root):
        _skip_link(folder, found)
        return folder, _refusal(folder)
    files, links = _candidates(folder, root, found, recursive=True)
    for link in links:
        _skip_link(link, found)
    notebooks = [p for p in files if p.suffix.lower() in (".zip", ".ipynb")]
    if notebooks or files:
        return (notebooks or files)[0], ""
    return (links[0], _refusal(links[0])) if links else (None, "")


def _from_gradescope_export(folder: Path, found: Discovery) -> list[Entry]:
    try:
        metadata = yaml.safe_load((folder / METADATA_FILE).read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise GradingInputError(f"{folder / METADATA_FILE} cannot be read ({exc}); re-download the "
                                "export from Gradescope.") from None
    entries = []
    for key, info in sorted(metadata.items(), key=lambda kv: str(kv[0])):
        info = info or {}
        sub_folder = folder / str(key)
        first = (_field(info, "submitters") or [{}])[0] or {}
        name, email, sid = (str(_field(first, k) or "") for k in ("name", "email", "sid"))
        created = _field(info, "created_at")
        if isinstance(created, datetime):     # YAML timestamps: compare instants, not text
            created = created.astimezone(timezone.utc).isoformat()
        # Two people never share an id: the SID, else the whole e-mail, else the submission.
        identity = f"sid:{sid}" if sid else f"email:{email.lower()}" if email else f"submission:{key}"
        source = sid or email or str(key)
        path, refused = _submission_file(sub_folder, folder, found) if sub_folder.is_dir() else (None, "")
        if path is None:
            entries.append(Entry(_student_id(source), sub_folder, name, email, str(created or ""),
                                 f"no .ipynb, .py or .zip found in {code(sub_folder.name)}", sid=sid,
                                 identity=identity, id_source=source))
        else:
            entries.append(Entry(_student_id(source), path, name, email, str(created or ""), sid=sid,
                                 identity=identity, id_source=source, refused=refused))
    return entries


def _field(mapping: dict, key: str):
    """Gradescope writes Ruby-symbol keys (``:name``); accept plain keys too."""
    for candidate in (f":{key}", key, f":{key}:"):
        if candidate in mapping:
            return mapping[candidate]
    return None


def _with_note(entry: Entry, note: str) -> Entry:
    return replace(entry, note="; ".join(x for x in (entry.note, note) if x))


def _latest_per_student(entries: list[Entry], found: Discovery) -> list[Entry]:
    """One submission per person (the latest file that is not a link, by submission time, file time
    otherwise, noted), each under an id of its own (see :func:`_unique_ids`)."""
    def when(e: Entry) -> str:
        if e.submitted_at:
            return str(e.submitted_at)
        try:
            return datetime.fromtimestamp(e.path.lstat().st_mtime).isoformat()
        except OSError:
            return ""
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.identity or f"id:{e.student}", []).append(e)
    kept = []
    for identity, group in sorted(groups.items()):
        group.sort(key=lambda e: (not e.refused, when(e)))
        latest = group[-1]
        if len(group) > 1:
            latest = _with_note(latest, f"{len(group)} submissions; graded the latest "
                                        f"({code(when(latest))}, {code(latest.path.name)})")
        kept.append(latest)
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
    shared = {id(e): len(group) for group in by_file.values() if len(group) > 1 for e in group}
    for group in by_file.values():
        if len(group) > 1:
            found.warnings.append(f"one file is the submission of {len(group)} students (hard links or one "
                                  "file given twice); each is graded, with a note: "
                                  + ", ".join(f"{e.student} ({e.path})" for e in group))
    return [_with_note(e, f"this file is also the submission of {shared[id(e)] - 1} other student(s) in "
                          "this class (the same file under another name); check whose work it is")
            if id(e) in shared else e for e in entries]


def _from_file(path: Path, export_named: list[Path]) -> Entry:
    """A submission file on its own: a Canvas download's name says whose it is, a plain name is the id."""
    canvas = CANVAS_FILE.match(path.name)
    # An export name's date (``_2026_12_01T06_...``) would read as a Canvas user and submission id.
    if canvas and not re.match(r"\d{2}T\d{2}_", canvas["file"]):
        late = "submitted late (Canvas)" if canvas["late"] else ""
        return Entry(_student_id(canvas["user"]), path, canvas["name"], note=late,
                     lms_user_id=canvas["user"], identity=f"canvas:{canvas['user']}", id_source=canvas["user"])
    stem = EXPORT_STAMP.sub("", path.stem)
    if stem != path.stem:
        export_named.append(path)
        # Whose it is cannot be known: never merged with another file of the same name.
        return Entry(_student_id(stem), path, identity=f"file:{path}", id_source=stem)
    # The name exactly as written: two names that only look alike (NFC and NFD) are two people.
    return Entry(_student_id(path.stem), path, identity=f"name:{path.stem}", id_source=path.stem)


def _from_folder(folder: Path, found: Discovery, export_named: list[Path]) -> list[Entry]:
    """The submissions of a plain, Canvas or Moodle folder: its files, then one per subfolder."""
    files, links = _candidates(folder, folder, found, recursive=False)
    entries = [_from_file(f, export_named) for f in files]
    for link in links:
        _skip_link(link, found)
        entries.append(replace(_from_file(link, export_named), refused=_refusal(link)))
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        path, refused = _submission_file(sub, folder, found)
        if path is None:
            continue
        moodle = MOODLE_FOLDER.match(sub.name)
        if moodle:
            entries.append(Entry(_student_id(moodle["participant"]), path, moodle["name"],
                                 lms_user_id=moodle["participant"], identity=f"moodle:{moodle['participant']}",
                                 id_source=moodle["participant"], refused=refused))
        else:
            # A file and a folder of one name are one student's (as two files of one name are).
            entries.append(Entry(_student_id(sub.name), path, identity=f"name:{sub.name}", id_source=sub.name,
                                 refused=refused))
    return entries


def discover(paths: Iterable[str | Path]) -> Discovery:
    """Submissions under ``paths`` (files, folders, LMS downloads), one per student, each id its own.

    Links inside a folder are never followed: a student's submission found as a link
    is an entry refused with the reason, and every link is listed in ``skipped``.
    """
    found = Discovery()
    entries: list[Entry] = []
    export_named: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise GradingInputError(f"{path} does not exist; pass submission files or folders.")
        if path.is_file():
            entries.append(_from_file(path, export_named))
        elif (path / METADATA_FILE).is_file():
            entries += _from_gradescope_export(path, found)
        else:
            entries += _from_folder(path, found, export_named)
    if not entries:
        raise GradingInputError("no submissions found: give .ipynb, .py or .zip files, folders of them "
                                "(one file or one subfolder per student), a Canvas or Moodle download, "
                                "or a Gradescope export folder.")
    if export_named:
        shown = ", ".join(p.name for p in export_named[:3]) + (" ..." if len(export_named) > 3 else "")
        found.warnings.append(
            f"{len(export_named)} file(s) still have the export cell's name ({shown}): whose they are cannot "
            "be known, so each is graded under that name without the timestamp. Rename each to the "
            "student's id, put it in a folder named after the student, or grade your LMS's download.")
    found.entries = _latest_per_student(entries, found)
    return found

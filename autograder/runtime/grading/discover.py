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
submission per person is kept: the latest.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable

import yaml

from autograder.runtime.errors import GraderError
from autograder.runtime.grading.outcome import Entry


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


def _student_id(text: str) -> str:
    """A safe folder name from a file name or an id."""
    cleaned = re.sub(r"[^A-Za-z0-9._@-]+", "_", text).strip("._")
    return cleaned or "student"


def _inside(path: Path, root: Path) -> bool:
    """Whether ``path``, with every link resolved, is still under ``root``."""
    try:
        path.resolve().relative_to(root.resolve())
        return True
    except (ValueError, OSError):
        return False


@dataclass
class Discovery:
    """The submissions found, one per student, and what was left out or needs a look.

    ``skipped`` names links that lead outside the folder being graded (never
    followed); ``warnings`` name ids two different students would have shared.
    """

    entries: list[Entry] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _candidates(folder: Path, root: Path, found: Discovery, recursive: bool) -> list[Path]:
    """Submission files in ``folder`` (and below, if ``recursive``), links outside ``root`` skipped."""
    paths = folder.rglob("*") if recursive else folder.iterdir()
    files = []
    for p in sorted(paths):
        relative = p.relative_to(folder).parts
        if any(part.startswith(".") for part in relative) or p.suffix.lower() not in SUBMISSION_SUFFIXES:
            continue
        if not _inside(p, root):
            found.skipped.append(f"{p}: a link to {p.resolve()}, outside {root}")
            continue
        if p.is_file():
            files.append(p)
    return files


def _submission_file(folder: Path, root: Path, found: Discovery) -> Path | None:
    files = _candidates(folder, root, found, recursive=True)
    notebooks = [p for p in files if p.suffix.lower() in (".zip", ".ipynb")]
    return (notebooks or files or [None])[0]


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
        student = _student_id(sid or email or str(key))
        path = _submission_file(sub_folder, folder, found) if sub_folder.is_dir() and _inside(sub_folder, folder) else None
        if path is None:
            entries.append(Entry(student, sub_folder, name, email, str(created or ""),
                                 f"no .ipynb, .py or .zip found in {sub_folder.name}", sid=sid, identity=identity))
        else:
            entries.append(Entry(student, path, name, email, str(created or ""), sid=sid, identity=identity))
    return entries


def _field(mapping: dict, key: str):
    """Gradescope writes Ruby-symbol keys (``:name``); accept plain keys too."""
    for candidate in (f":{key}", key, f":{key}:"):
        if candidate in mapping:
            return mapping[candidate]
    return None


def _latest_per_student(entries: list[Entry], found: Discovery) -> list[Entry]:
    """One submission per person (the latest by submission time, file time otherwise), each with its own id."""
    def when(e: Entry) -> str:
        if e.submitted_at:
            return str(e.submitted_at)
        try:
            return datetime.fromtimestamp(e.path.stat().st_mtime).isoformat()
        except OSError:
            return ""
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.identity or e.student, []).append(e)
    kept = []
    for identity, group in sorted(groups.items()):
        group.sort(key=when)
        latest = group[-1]
        if len(group) > 1:
            latest = replace(latest, note=(f"{len(group)} submissions; graded the latest "
                                           f"({when(latest)}, {latest.path.name})"))
        kept.append(latest)
    # Different people whose ids came out the same (say, names that differ only in
    # characters a folder name cannot hold) each keep their submission, under ids of their own.
    by_id: dict[str, list[Entry]] = {}
    for e in kept:
        by_id.setdefault(e.student, []).append(e)
    unique = []
    for student, same in sorted(by_id.items()):
        for number, e in enumerate(same, start=1):
            if len(same) > 1:
                new_id = student if number == 1 else f"{student}-{number}"
                note = (f"id {student!r} was shared by {len(same)} different students; this one is "
                        f"graded as {new_id!r}")
                found.warnings.append(f"{note} ({e.path})")
                e = replace(e, student=new_id, note="; ".join(x for x in (e.note, note) if x))
            unique.append(e)
    return sorted(unique, key=lambda e: e.student)


def _from_file(path: Path, export_named: list[Path]) -> Entry:
    """A submission file on its own: a Canvas download's name says whose it is, a plain name is the id."""
    canvas = CANVAS_FILE.match(path.name)
    # An export name's date (``_2026_12_01T06_...``) would read as a Canvas user and submission id.
    if canvas and not re.match(r"\d{2}T\d{2}_", canvas["file"]):
        late = "submitted late (Canvas)" if canvas["late"] else ""
        return Entry(_student_id(canvas["user"]), path, canvas["name"], note=late,
                     lms_user_id=canvas["user"], identity=f"canvas:{canvas['user']}")
    stem = EXPORT_STAMP.sub("", path.stem)
    if stem != path.stem:
        export_named.append(path)
        # Whose it is cannot be known: never merged with another file of the same name.
        return Entry(_student_id(stem), path, identity=f"file:{path}")
    return Entry(_student_id(path.stem), path)


def _from_folder(folder: Path, found: Discovery, export_named: list[Path]) -> list[Entry]:
    """The submissions of a plain, Canvas or Moodle folder: its files, then one per subfolder."""
    entries = [_from_file(f, export_named) for f in _candidates(folder, folder, found, recursive=False)]
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if not _inside(sub, folder):
            found.skipped.append(f"{sub}: a link to {sub.resolve()}, outside {folder}")
            continue
        path = _submission_file(sub, folder, found)
        if path is None:
            continue
        moodle = MOODLE_FOLDER.match(sub.name)
        if moodle:
            entries.append(Entry(_student_id(moodle["participant"]), path, moodle["name"],
                                 lms_user_id=moodle["participant"], identity=f"moodle:{moodle['participant']}"))
        else:
            entries.append(Entry(_student_id(sub.name), path, identity=f"folder:{sub.name}"))
    return entries


def discover(paths: Iterable[str | Path]) -> Discovery:
    """Submissions under ``paths`` (files, folders, LMS downloads), one per student.

    Links inside a folder that lead outside it are skipped and listed, never followed.
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

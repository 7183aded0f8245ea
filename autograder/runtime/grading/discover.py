"""Find the submissions to grade and whose each one is.

``discover`` takes files, plain folders of them, and Gradescope's "export
submissions" folder (whose ``submission_metadata.yml`` names each
submitter), and keeps one submission per student: the latest.
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


def discover(paths: Iterable[str | Path]) -> Discovery:
    """Submissions under ``paths`` (files, folders, Gradescope exports), one per student.

    Links inside a folder that lead outside it are skipped and listed, never followed.
    """
    found = Discovery()
    entries: list[Entry] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise GradingInputError(f"{path} does not exist; pass submission files or folders.")
        if path.is_file():
            entries.append(Entry(_student_id(path.stem), path))
        elif (path / METADATA_FILE).is_file():
            entries += _from_gradescope_export(path, found)
        else:
            for file in _candidates(path, path, found, recursive=False):
                entries.append(Entry(_student_id(file.stem), file))
    if not entries:
        raise GradingInputError("no submissions found: give .ipynb, .py or .zip files, folders of "
                                "them, or a Gradescope export folder.")
    found.entries = _latest_per_student(entries, found)
    return found

"""Find the submissions to grade and whose each one is.

``discover`` takes files, plain folders of them, and Gradescope's "export
submissions" folder (whose ``submission_metadata.yml`` names each
submitter), and keeps one submission per student: the latest.
"""
from __future__ import annotations

import re
from dataclasses import replace
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


def _submission_file(folder: Path) -> Path | None:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix.lower() in SUBMISSION_SUFFIXES
                   and not any(part.startswith(".") for part in p.relative_to(folder).parts))
    notebooks = [p for p in files if p.suffix.lower() in (".zip", ".ipynb")]
    return (notebooks or files or [None])[0]


def _from_gradescope_export(folder: Path) -> list[Entry]:
    try:
        metadata = yaml.safe_load((folder / METADATA_FILE).read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise GradingInputError(f"{folder / METADATA_FILE} cannot be read ({exc}); re-download the "
                                "export from Gradescope.") from None
    entries = []
    for key, info in sorted(metadata.items()):
        info = info or {}
        sub_folder = folder / str(key)
        first = (_field(info, "submitters") or [{}])[0] or {}
        name, email, sid = (str(_field(first, k) or "") for k in ("name", "email", "sid"))
        created = _field(info, "created_at")
        if isinstance(created, datetime):     # YAML timestamps: compare instants, not text
            created = created.astimezone(timezone.utc).isoformat()
        student = _student_id(sid or email.split("@")[0] or str(key))
        path = _submission_file(sub_folder) if sub_folder.is_dir() else None
        if path is None:
            entries.append(Entry(student, sub_folder, name, email, str(created or ""),
                                 f"no .ipynb, .py or .zip found in {sub_folder.name}"))
        else:
            entries.append(Entry(student, path, name, email, str(created or "")))
    return entries


def _field(mapping: dict, key: str):
    """Gradescope writes Ruby-symbol keys (``:name``); accept plain keys too."""
    for candidate in (f":{key}", key, f":{key}:"):
        if candidate in mapping:
            return mapping[candidate]
    return None


def _latest_per_student(entries: list[Entry]) -> list[Entry]:
    """Keep one submission per student: the latest by submission time (file time otherwise)."""
    def when(e: Entry) -> str:
        if e.submitted_at:
            return str(e.submitted_at)
        try:
            return datetime.fromtimestamp(e.path.stat().st_mtime).isoformat()
        except OSError:
            return ""
    groups: dict[str, list[Entry]] = {}
    for e in entries:
        groups.setdefault(e.student, []).append(e)
    kept = []
    for student, group in groups.items():
        group.sort(key=when)
        latest = group[-1]
        if len(group) > 1:
            latest = replace(latest, note=(f"{len(group)} submissions; graded the latest "
                                           f"({when(latest)}, {latest.path.name})"))
        kept.append(latest)
    return sorted(kept, key=lambda e: e.student)


def discover(paths: Iterable[str | Path]) -> list[Entry]:
    """Submissions under ``paths`` (files, folders, Gradescope exports), one per student."""
    entries: list[Entry] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise GradingInputError(f"{path} does not exist; pass submission files or folders.")
        if path.is_file():
            entries.append(Entry(_student_id(path.stem), path))
        elif (path / METADATA_FILE).is_file():
            entries += _from_gradescope_export(path)
        else:
            for file in sorted(path.iterdir()):
                if file.is_file() and file.suffix.lower() in SUBMISSION_SUFFIXES and not file.name.startswith("."):
                    entries.append(Entry(_student_id(file.stem), file))
    if not entries:
        raise GradingInputError("no submissions found: give .ipynb, .py or .zip files, folders of "
                                "them, or a Gradescope export folder.")
    return _latest_per_student(entries)

"""Grade a whole class: find the submissions, grade them in parallel, and
keep a consistent, resumable output folder.

Layout of ``OUT``::

    OUT/gradebook.csv              one row per student
    OUT/<student>/results.json     Gradescope format
    OUT/<student>/feedback.md      for the student
    OUT/<student>/outcome.json     everything, for resuming and reports

Each student's files are written atomically by this (trusted) process after
the submission's sandbox is gone; the gradebook is rewritten from the
outcome files at the end, also after an interruption, so it always matches
what is on disk.
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import multiprocessing
import multiprocessing.util
import os
import re
import tempfile
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable

import yaml

from autograder.errors import GraderError
from autograder.grading.results import (LEADING_COLUMNS, TRAILING_COLUMNS, GradeOutcome, feedback_markdown,
                                        results_json)
from autograder.grading.runner import LoadedAutograder, grade_submission, load_autograder, rejected_outcome
from autograder.hidden_plugin import CollectedSuite
from autograder.sandbox import ForkServer, Limits, WarmStart

SUBMISSION_SUFFIXES = (".ipynb", ".py", ".zip")
METADATA_FILE = "submission_metadata.yml"


class GradingInputError(GraderError):
    """A path given to ``grader grade`` cannot be used."""


@dataclass(frozen=True)
class Entry:
    """One submission to grade and whose it is."""

    student: str
    path: Path
    name: str = ""
    email: str = ""
    submitted_at: str = ""
    note: str = ""


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


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _write_atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:   # text keeps its own line ends
        handle.write(text)
    os.replace(tmp, path)


def _already_graded(out: Path, entry: Entry, ag_digest: str, submission_sha256: str) -> GradeOutcome | None:
    record = out / entry.student / "outcome.json"
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    if data.get("autograder") != ag_digest or data.get("submission_sha256") != submission_sha256:
        return None
    return GradeOutcome.from_dict(data["outcome"])


def write_outcome(out: Path, entry: Entry, outcome: GradeOutcome, ag_digest: str, submission_sha256: str) -> None:
    """The student's three files; outcome.json last, so it marks a complete set.

    ``submission_sha256`` is the submission file's ``_sha256``, recorded so a
    rerun can tell whether the file changed.
    """
    folder = out / entry.student
    _write_atomic(folder / "results.json", json.dumps(results_json(outcome), indent=2) + "\n")
    _write_atomic(folder / "feedback.md", feedback_markdown(outcome))
    _write_atomic(folder / "outcome.json", json.dumps({
        "autograder": ag_digest, "submission_sha256": submission_sha256,
        "entry": {"student": entry.student, "path": str(entry.path), "name": entry.name,
                  "email": entry.email, "submitted_at": entry.submitted_at, "note": entry.note},
        "outcome": outcome.to_dict()}, indent=2) + "\n")


# -------------------------------------------------------------------- workers

_worker_state: dict = {}


def _init_worker(ag: LoadedAutograder, suite: CollectedSuite, limits: Limits, isolation: str) -> None:
    # Each pool process forks its sandbox workers from one fork server where
    # the strongest isolation runs (see ForkServer), and otherwise keeps one
    # worker started ahead (see WarmStart); either stops with the pool process.
    server = ForkServer(limits, isolation)
    warm = server if server.usable else WarmStart(limits, isolation)
    multiprocessing.util.Finalize(None, warm.close, exitpriority=10)
    _worker_state.update(ag=ag, suite=suite, limits=limits, isolation=isolation, warm=warm)


def _grade_entry(entry: Entry) -> tuple[Entry, dict]:
    s = _worker_state
    try:
        outcome = grade_submission(entry.path, s["ag"], entry.student, limits=s["limits"],
                                   isolation=s["isolation"], suite=s["suite"], warm=s["warm"])
    except Exception as exc:   # one bad submission never stops the batch
        outcome = replace(rejected_outcome(s["ag"], entry.student, f"grading failed: {type(exc).__name__}: {exc}",
                                           entry.path.name), status="error")
    return entry, outcome.to_dict()


@dataclass(frozen=True)
class BatchResult:
    """What a ``grade_entries`` (or ``grade_batch``) run did."""

    rows: list[dict]
    graded: int
    skipped: int
    interrupted: bool
    isolation: str


def _no_progress(entry: Entry, outcome: GradeOutcome, skipped: bool) -> None:
    pass


def grade_batch(
    paths: Iterable[str | Path],
    autograder_zip: str | Path,
    out: str | Path,
    *,
    workers: int | None = None,
    timeout: float = 30.0,
    force: bool = False,
    isolation: str = "auto",
    canvas_csv: bool = False,
    on_done: Callable[[Entry, GradeOutcome, bool], None] = _no_progress,
) -> BatchResult:
    """Grade every submission under ``paths`` (see ``discover``) as ``grade_entries`` does."""
    return grade_entries(discover(paths), autograder_zip, out, workers=workers, timeout=timeout, force=force,
                         isolation=isolation, canvas_csv=canvas_csv, on_done=on_done)


def grade_entries(
    entries: list[Entry],
    autograder_zip: str | Path,
    out: str | Path,
    *,
    workers: int | None = None,
    timeout: float = 30.0,
    force: bool = False,
    isolation: str = "auto",
    canvas_csv: bool = False,
    on_done: Callable[[Entry, GradeOutcome, bool], None] = _no_progress,
) -> BatchResult:
    """Grade the discovered ``entries`` with ``autograder_zip`` into ``out``.

    Already-graded submissions (same autograder, same file) are skipped
    unless ``force``. On KeyboardInterrupt the workers are stopped, the
    gradebook is written for what finished, and the interruption is reported.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    limits = Limits(wall_seconds_total=timeout, wall_seconds_per_call=min(timeout, Limits().wall_seconds_per_call))
    with tempfile.TemporaryDirectory(prefix="lmhead-grade-") as tmp:
        ag = load_autograder(autograder_zip, tmp)
        suite = CollectedSuite(ag.hidden_paths)
        todo, skipped = [], 0
        hashes: dict[str, str] = {}      # each submission file is hashed once per run
        for entry in entries:
            hashes[entry.student] = _sha256(entry.path)
            previous = None if force else _already_graded(out, entry, ag.digest, hashes[entry.student])
            if previous is not None:
                skipped += 1
                on_done(entry, previous, True)
            else:
                todo.append(entry)
        interrupted = False
        graded = 0
        workers = max(1, workers or os.cpu_count() or 1)
        context = multiprocessing.get_context("fork")
        pool = context.Pool(min(workers, max(1, len(todo))), initializer=_init_worker,
                            initargs=(ag, suite, limits, isolation)) if todo else None
        try:
            if pool is not None:
                for entry, data in pool.imap_unordered(_grade_entry, todo):
                    outcome = GradeOutcome.from_dict(data)
                    write_outcome(out, entry, outcome, ag.digest, hashes[entry.student])
                    graded += 1
                    on_done(entry, outcome, False)
                pool.close()
                pool.join()          # workers exit normally and stop their spare sandboxes
        except KeyboardInterrupt:
            interrupted = True
        finally:
            if pool is not None:
                pool.terminate()     # the spare sandboxes die with their pool process
                pool.join()
            rows = write_gradebook(out, entries, ag, canvas_csv=canvas_csv)
    return BatchResult(rows, graded, skipped, interrupted, _isolation_of(rows))


def _isolation_of(rows: list[dict]) -> str:
    levels = sorted({r["isolation"] for r in rows if r.get("isolation") and not r["isolation"].startswith("none")})
    return ", ".join(levels)


def write_gradebook(out: Path, entries: list[Entry], ag: LoadedAutograder, *, canvas_csv: bool = False) -> list[dict]:
    """Rewrite ``gradebook.csv`` (and the Canvas CSV) from the outcome files on disk."""
    rows = []
    for entry in entries:
        record = out / entry.student / "outcome.json"
        try:
            data = json.loads(record.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue    # not graded (yet): left out rather than guessed
        outcome = GradeOutcome.from_dict(data["outcome"])
        meta = data.get("entry", {})
        scores = outcome.question_scores()
        notes = [n for n in (meta.get("note", ""),) if n]
        if outcome.status != "graded":
            notes.append(outcome.notes[0] if outcome.notes else outcome.status)
        row = {"student": entry.student, "name": meta.get("name", ""), "email": meta.get("email", ""),
               "total": f"{outcome.total:g}", "possible": f"{outcome.possible:g}",
               **{q: f"{scores.get(q, 0.0):g}" for q in ag.questions},
               "status": outcome.status, "mistakes": ";".join(outcome.mistakes),
               "submission": meta.get("path", ""), "note": " | ".join(notes)[:500],
               "isolation": outcome.isolation}
        rows.append(row)
    columns = [*LEADING_COLUMNS, *ag.questions, *TRAILING_COLUMNS]
    _write_csv(out / "gradebook.csv", columns, rows)
    if canvas_csv:
        _write_canvas_csv(out / "gradebook_canvas.csv", ag, rows)
    return rows


def _write_csv(path: Path, columns: list[str], rows: list[dict]) -> None:
    text = io.StringIO(newline="")
    writer = csv.DictWriter(text, fieldnames=columns, extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    _write_atomic(path, text.getvalue())


def _write_canvas_csv(path: Path, ag: LoadedAutograder, rows: list[dict]) -> None:
    """Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section, then the assignment."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ag.assignment])
    writer.writerow(["Points Possible", "", "", "", "", f"{ag.possible:g}"])
    for r in rows:
        writer.writerow([r["name"] or r["student"], "", r["student"], r["email"], "", r["total"]])
    _write_atomic(path, text.getvalue())

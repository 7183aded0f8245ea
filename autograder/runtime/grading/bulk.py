"""Grade a whole class in parallel and keep a consistent, resumable output folder.

Layout of ``OUT``::

    OUT/gradebook.csv                       one row per student (an export of the records)
    OUT/students/<student>/results.json     Gradescope format
    OUT/students/<student>/feedback.md      for the student
    OUT/students/<student>/outcome.json     the record: what the gradebook, the report and reruns read

Class-level files sit at OUT's top and students' folders under ``students/``, so
no id (a file name, in a plain folder) can name a class-level file. Every
folder is 0700 and every file 0600 (see ``files``): the folder names the class.

Each student's files are written atomically by this (trusted) process after
the submission's sandbox is gone; the gradebook is rewritten from the
records at the end, also after an interruption, so it always matches what
is on disk.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable

from autograder.runtime.grading.discover import discover
from autograder.runtime.grading.feedback import feedback_markdown, results_json
from autograder.runtime.grading.files import PRIVATE_DIR, private_dir, write_atomic
from autograder.runtime.grading.gradebook import write_canvas_gradebook, write_gradebook
from autograder.runtime.grading.layouts import moodle_participants
from autograder.runtime.grading.canvas_gradebook import (CanvasExport, CanvasFill, fill_canvas_gradebook,
                                                         match_canvas_rows, read_canvas_export, with_canvas_identity)
from autograder.runtime.grading.moodle_worksheet import MoodleFiles, write_moodle_files
from autograder.runtime.grading.outcome import (RECORD_NAME, STUDENTS_DIR, Entry, GradeOutcome, GradeRecord,
                                                read_record, student_folder)
from autograder.runtime.grading.processes import GradingProcesses
from autograder.runtime.grading.runner import failed_outcome
from autograder.runtime.grading.support import LoadedAutograder, load_autograder
from autograder.runtime.sandbox import Limits
from autograder.runtime.sandbox.policy import Clearance, clear
from autograder.runtime.sandbox.isolation import staged_runtime
from autograder.runtime.sandbox.reach import world_writable_dirs


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    if path.is_file():
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _submission_digest(entry: Entry) -> str:
    """The digest reruns compare: a refused link's is that of nothing, as its file is never read."""
    return hashlib.sha256().hexdigest() if entry.refused else _sha256(entry.path)


def _already_graded(out: Path, entry: Entry, ag_digest: str, submission_sha256: str) -> GradeOutcome | None:
    record = read_record(student_folder(out, entry.student))
    if record is None or record.autograder != ag_digest or record.submission_sha256 != submission_sha256:
        return None
    return record.outcome


def write_outcome(out: Path, record: GradeRecord) -> None:
    """The student's three files; outcome.json last, so it marks a complete set.

    What discovery noted about the entry (a merge, a new id, a refusal) is shown to the
    student too: those notes name only the student's own files.
    """
    folder = student_folder(out, record.entry.student)
    outcome = record.outcome
    if record.entry.note:
        outcome = replace(outcome, notes=(record.entry.note, *outcome.notes))
    # Written without indentation: indenting runs json's pure-Python encoder, which took
    # 6 ms per student for these two files, in the process that also feeds the workers.
    write_atomic(folder / "results.json", json.dumps(results_json(outcome)) + "\n")
    write_atomic(folder / "feedback.md", feedback_markdown(outcome))
    write_atomic(folder / RECORD_NAME, record.to_json())


def write_outcome_or_error(out: Path, record: GradeRecord, ag: LoadedAutograder) -> None:
    """``write_outcome``, or, where rendering this one student's files fails on what the submission
    produced, an error row for them in its place: one submission never costs the class its grades.
    A failure of the disk (``OSError``) stops the batch, as it would fail every student."""
    try:
        write_outcome(out, record)
    except OSError:
        raise
    except Exception as exc:                          # noqa: BLE001 - any bug reached by student text
        outcome = failed_outcome(ag, record.entry.student, type(exc).__name__, record.outcome.submission)
        write_outcome(out, replace(record, outcome=outcome))


@dataclass(frozen=True)
class BatchResult:
    """What a ``grade_entries`` (or ``grade_batch``) run did."""

    rows: list[dict]
    graded: int
    skipped: int
    interrupted: bool
    clearance: Clearance
    #: The Canvas export filled in, when one was given.
    canvas: CanvasFill | None = None
    #: The Moodle files written (and not written, and why), when asked for.
    moodle: MoodleFiles | None = None
    #: ``gradebook_canvas.csv``, when asked for.
    canvas_csv: Path | None = None


def _no_progress(entry: Entry, outcome: GradeOutcome, skipped: bool) -> None:
    pass


def moodle_options(worksheet: str | Path | None, moodle_csv: bool, max_grade: float | None
                   ) -> tuple[moodle_participants.Participants | None, bool, float | None]:
    """The participants of Moodle's grading worksheet, if one is given, and what it implies: the
    Moodle files are written, out of the worksheet's Maximum Grade unless one is given."""
    if worksheet is None:
        return None, moodle_csv, max_grade
    participants = moodle_participants.read(worksheet)
    return participants, True, max_grade or participants.max_grade


def moodle_comments(participants: moodle_participants.Participants | None) -> dict[str, str] | None:
    """Participant number -> the feedback comment Moodle holds, from the worksheet; ``None`` when
    there is no worksheet or it has no "Feedback comments" column (Moodle would read none)."""
    if participants is None or not participants.comments:
        return None
    return {number: p.comments for number, p in participants.by_number.items()}


def grade_batch(
    paths: Iterable[str | Path],
    autograder_zip: str | Path,
    out: str | Path,
    *,
    workers: int | None = None,
    timeout: float = 30.0,
    force: bool = False,
    isolation: str = "auto",
    trusted: bool = False,
    canvas_csv: bool = False,
    canvas_gradebook: str | Path | None = None,
    canvas_column: str | None = None,
    canvas_scale: bool = False,
    canvas_keep_scores: bool = False,
    moodle_csv: bool = False,
    moodle_max_grade: float | None = None,
    moodle_worksheet: str | Path | None = None,
    on_done: Callable[[Entry, GradeOutcome, bool], None] = _no_progress,
    notes: dict[str, str] | None = None,
) -> BatchResult:
    """Grade every submission under ``paths`` (see ``discover``) as ``grade_entries`` does; with
    ``moodle_worksheet``, Moodle folders are placed by it and its Maximum Grade is the default."""
    participants, moodle_csv, moodle_max_grade = moodle_options(moodle_worksheet, moodle_csv, moodle_max_grade)
    return grade_entries(discover(paths, participants).entries, autograder_zip, out, workers=workers, timeout=timeout, force=force,
                         isolation=isolation, trusted=trusted, canvas_csv=canvas_csv,
                         canvas_gradebook=canvas_gradebook, canvas_column=canvas_column, canvas_scale=canvas_scale,
                         canvas_keep_scores=canvas_keep_scores, moodle_csv=moodle_csv,
                         moodle_max_grade=moodle_max_grade, on_done=on_done, notes=notes,
                         moodle_comments=moodle_comments(participants))


def grade_entries(
    entries: list[Entry],
    autograder_zip: str | Path,
    out: str | Path,
    *,
    workers: int | None = None,
    timeout: float = 30.0,
    force: bool = False,
    isolation: str = "auto",
    trusted: bool = False,
    canvas_csv: bool = False,
    canvas_gradebook: str | Path | None = None,
    canvas_column: str | None = None,
    canvas_scale: bool = False,
    canvas_keep_scores: bool = False,
    moodle_csv: bool = False,
    moodle_max_grade: float | None = None,
    on_done: Callable[[Entry, GradeOutcome, bool], None] = _no_progress,
    notes: dict[str, str] | None = None,
    moodle_comments: dict[str, str] | None = None,
) -> BatchResult:
    """Grade the discovered ``entries`` with ``autograder_zip`` into ``out``.

    ``notes`` (``groups.notes.read_notes``) gives every member of a mistake group
    the instructor's note for it, in its files and its gradebook row, before the
    gradebooks are written. ``moodle_comments`` (``moodle_comments``: the comments Moodle holds,
    from its worksheet) lets the Moodle worksheet carry the notes in its "Feedback comments".

    The isolation level is settled first (``policy.clear``): a level that
    cannot keep the hidden suite, the references and the other submissions
    from student code is refused with ``SandboxUnavailable`` before anything
    runs, unless ``trusted``. Already-graded submissions (same autograder,
    same file) are skipped unless ``force``. On KeyboardInterrupt the workers
    are stopped, the gradebook is written for what finished, and the
    interruption is reported.
    """
    out = Path(out)
    # Made here, before the probe: at the user level it checks what a sandbox uid could reach.
    os.chmod(private_dir(private_dir(out) / STUDENTS_DIR), PRIVATE_DIR)
    limits = Limits(wall_seconds_total=timeout, wall_seconds_per_call=min(timeout, Limits().wall_seconds_per_call))
    with tempfile.TemporaryDirectory(prefix="lmhead-grade-") as tmp:
        clearance = clear(isolation, [tmp, autograder_zip, out, *(e.path for e in entries)], trusted=trusted)
        if clearance.level == "user":
            world_writable_dirs()         # found once, before the pool forks, for the cleanup
            staged_runtime()              # made (and later removed) by this process, not each grading one
        ag = load_autograder(autograder_zip, tmp)
        # Read before grading: a wrong file or column is an error before any time is spent.
        # Its points are checked against the build's total here too, for the same reason.
        canvas = read_canvas_export(Path(canvas_gradebook), ag.assignment, canvas_column, possible=ag.possible,
                                    scale=canvas_scale, keep_scores=canvas_keep_scores) if canvas_gradebook else None
        ag.suite                          # collected once, before the pool forks
        ag.class_probes                   # drawn once, likewise
        todo, skipped = [], 0
        hashes: dict[str, str] = {}      # each submission file is hashed once per run
        for entry in entries:
            hashes[entry.student] = _submission_digest(entry)
            previous = None if force else _already_graded(out, entry, ag.digest, hashes[entry.student])
            if previous is not None:
                skipped += 1
                on_done(entry, previous, True)
            else:
                todo.append(entry)
        interrupted = False
        graded = 0
        workers = max(1, workers or os.cpu_count() or 1)
        if clearance.level != "bwrap":
            # Below bubblewrap, workers running at the same time share /tmp, /dev/shm and Unix
            # socket names: two submissions graded side by side could talk. One at a time, each
            # submission's traces are swept before the next one starts.
            workers = 1
        pool = GradingProcesses(workers, ag, limits, clearance)
        try:
            for entry, outcome in pool.grade(todo):
                write_outcome_or_error(out, GradeRecord(entry, outcome, ag.digest, hashes[entry.student]), ag)
                graded += 1
                on_done(entry, outcome, False)
            pool.close()             # processes exit normally and stop their spare sandboxes
        except KeyboardInterrupt:
            interrupted = True
        finally:
            pool.terminate()         # the spare sandboxes die with their process
            records = [r for r in (read_record(student_folder(out, e.student)) for e in entries) if r is not None]
            if canvas is not None:
                records = with_canvas_names(out, canvas, records)
            if notes is not None:
                from autograder.groups.notes import apply_notes
                records = apply_notes(out, records, notes).records
            rows = write_gradebook(out, records, ag.questions)
            title = canvas.title if canvas is not None else (canvas_column or ag.assignment)
            canvas_file = write_canvas_gradebook(out, records, title, ag.possible,
                                                 canvas.scale if canvas is not None else 1.0) if canvas_csv else None
            filled = fill_canvas_gradebook(canvas, records, out) if canvas is not None else None
            moodle = write_moodle_files(out, records, ag.assignment, ag.possible,
                                        moodle_max_grade, comments=moodle_comments) if moodle_csv else None
    return BatchResult(rows, graded, skipped, interrupted, clearance, filled, moodle, canvas_file)


def with_canvas_names(out: Path, canvas: CanvasExport, records: list[GradeRecord]) -> list[GradeRecord]:
    """The records with the names (and e-mails) of their rows in the Canvas export, saved to
    each ``outcome.json`` so the gradebook, the report and similarity show them, not a
    download's ``lovelaceada`` or a bare id. Records not matched one to one keep theirs."""
    rows = match_canvas_rows(canvas, records).student_of
    named = []
    for record in records:
        student = rows.get(record.entry.student)
        better = with_canvas_identity(record, student) if student is not None else record
        if better != record:
            write_atomic(student_folder(out, record.entry.student) / RECORD_NAME, better.to_json())
        named.append(better)
    return named

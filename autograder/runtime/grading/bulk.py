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
import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import os
import signal
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from multiprocessing.connection import Connection
from typing import Callable, Iterable, Iterator

from threadpoolctl import threadpool_limits

from autograder.runtime.allocator import keep_freed_memory
from autograder.runtime.grading.discover import discover
from autograder.runtime.grading.feedback import feedback_markdown, results_json
from autograder.runtime.grading.files import PRIVATE_DIR, private_dir, write_atomic
from autograder.runtime.grading.gradebook import write_canvas_gradebook, write_gradebook
from autograder.runtime.grading.lms import CanvasFill, fill_canvas_gradebook, read_canvas_export, write_moodle_files
from autograder.runtime.grading.outcome import (RECORD_NAME, STUDENTS_DIR, Entry, GradeOutcome, GradeRecord,
                                                read_record, student_folder)
from autograder.runtime.grading.runner import grade_submission, rejected_outcome
from autograder.runtime.grading.support import LoadedAutograder, load_autograder
from autograder.runtime.text import code
from autograder.runtime.sandbox import ForkServer, Limits, WarmStart
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


# -------------------------------------------------------------------- workers

_worker_state: dict = {}


def _init_worker(ag: LoadedAutograder, limits: Limits, clearance: Clearance) -> None:
    # One BLAS thread per pool process: the pool already runs one process per
    # core, and OpenBLAS threads waiting for work spin on the other cores,
    # which took as much CPU as the grading itself on a 2-core machine.
    threadpool_limits(1)
    keep_freed_memory()
    # Each pool process forks its sandbox workers from one fork server where
    # the strongest isolation runs (see ForkServer), and otherwise keeps one
    # worker started ahead (see WarmStart); either stops with the pool process.
    server = ForkServer(limits, clearance.level)
    warm = server if server.usable else WarmStart(limits, clearance.level)
    multiprocessing.util.Finalize(None, warm.close, exitpriority=10)
    _worker_state.update(ag=ag, limits=limits, clearance=clearance, warm=warm)


def _grade_entry(entry: Entry) -> tuple[Entry, GradeOutcome]:
    s = _worker_state
    if entry.refused:     # a link in the class folder: never read
        return entry, rejected_outcome(s["ag"], entry.student, entry.refused, entry.path.name)
    try:
        outcome = grade_submission(entry.path, s["ag"], entry.student, s["clearance"], limits=s["limits"],
                                   warm=s["warm"])
    except Exception as exc:   # one bad submission never stops the batch
        outcome = _error_outcome(s["ag"], entry, f"grading failed: {code(f'{type(exc).__name__}: {exc}')}")
    return entry, outcome


def _error_outcome(ag: LoadedAutograder, entry: Entry, note: str) -> GradeOutcome:
    return replace(rejected_outcome(ag, entry.student, note, entry.path.name), status="error")


def _serve(conn: Connection, ag: LoadedAutograder, limits: Limits, clearance: Clearance) -> None:
    """A grading process: grade each entry the batch sends until it sends ``None``."""
    _init_worker(ag, limits, clearance)
    try:
        while (entry := conn.recv()) is not None:
            conn.send(_grade_entry(entry))
    except (EOFError, OSError, KeyboardInterrupt):   # the batch ended or was interrupted
        pass
    finally:
        _worker_state["warm"].close()


def task_seconds(timeout: float) -> float:
    """Longest a grading process may spend on one submission before it is stopped: the
    submission's own budget three times over (start-up and the grader's checks come on
    top of it), plus a minute. Only a grading process that hangs ever reaches it."""
    return 3 * timeout + 60


class GradingProcesses:
    """Processes that grade one submission at a time each; none of them can hang the batch.

    ``multiprocessing.Pool`` loses a task whose process dies (the OOM killer
    took grading processes when submissions held memory outside their
    limits) and then waits for it forever. Here the submissions each
    process holds are known, in order: one that dies or overruns
    ``task_seconds`` on a submission is replaced, that student gets an
    error row, and the submission queued behind it goes to the next process.
    """

    #: Submissions sent ahead to each process, so it never waits for this one to write files.
    AHEAD = 2

    def __init__(self, count: int, ag: LoadedAutograder, limits: Limits, clearance: Clearance,
                 timeout: float) -> None:
        self._context = multiprocessing.get_context("fork")
        self._args = (ag, limits, clearance)
        self._ag = ag
        self._count = count
        self._seconds = task_seconds(timeout)
        self._slots: list[dict] = []
        self._waiting: list[Entry] = []

    def _start(self) -> dict:
        ours, theirs = self._context.Pipe()
        process = self._context.Process(target=_serve, args=(theirs, *self._args), daemon=True)
        process.start()
        theirs.close()
        return {"process": process, "conn": ours, "entries": [], "deadline": 0.0}

    def grade(self, entries: list[Entry]) -> Iterator[tuple[Entry, GradeOutcome]]:
        """Grade ``entries``, yielding each ``(entry, outcome)`` as it finishes."""
        self._waiting = list(reversed(entries))
        self._slots = [self._start() for _ in range(min(self._count, len(entries)))]
        for index in range(len(self._slots)):
            self._top_up(index)
        while any(slot["entries"] for slot in self._slots):
            for index in range(len(self._slots)):
                if not self._slots[index]["entries"]:
                    continue
                done = self._collect(index)
                if done is not None:
                    self._top_up(index)
                    yield done
            self._wait()

    def _top_up(self, index: int) -> None:
        """Send slot ``index`` waiting entries until it holds ``AHEAD`` (replacing a dead idle process)."""
        if not self._slots[index]["entries"] and not self._slots[index]["process"].is_alive():
            self._replace(index)
        slot = self._slots[index]
        while self._waiting and len(slot["entries"]) < self.AHEAD:
            entry = self._waiting.pop()
            if not slot["entries"]:
                slot["deadline"] = time.monotonic() + self._seconds
            slot["entries"].append(entry)
            try:
                slot["conn"].send(entry)
            except OSError:
                return     # the process died: ``_collect`` gives the error row

    def _collect(self, index: int) -> tuple[Entry, GradeOutcome] | None:
        """Slot ``index``'s next result, an error row if its process died or overran, else ``None``."""
        slot = self._slots[index]
        entry, conn, process = slot["entries"][0], slot["conn"], slot["process"]
        try:
            if conn.poll():
                result = conn.recv()
                if isinstance(result, tuple) and len(result) == 2 and result[0] == entry:
                    slot["entries"].pop(0)
                    slot["deadline"] = time.monotonic() + self._seconds
                    return result
        except (EOFError, OSError):
            pass
        if process.is_alive() and time.monotonic() < slot["deadline"]:
            return None
        if process.is_alive():
            why = (f"was still grading it after {self._seconds:g} s and was stopped (the grader, not the "
                   "submission, went over its time)")
        else:
            process.join(5)
            why = _describe_death(process.exitcode)
        self._waiting.extend(reversed(slot["entries"][1:]))     # never started: graded elsewhere
        self._replace(index)
        return entry, _error_outcome(self._ag, entry, f"grading failed: the grading process {why}. The rest "
                                     "of the class was graded; grade this submission again with `--force`.")

    def _replace(self, index: int) -> None:
        old = self._slots[index]
        old["conn"].close()
        if old["process"].is_alive():
            old["process"].kill()
        old["process"].join(5)
        self._slots[index] = self._start()

    def _wait(self) -> None:
        busy = [slot for slot in self._slots if slot["entries"]]
        if not busy:
            return
        remaining = min(slot["deadline"] for slot in busy) - time.monotonic()
        handles = [slot["conn"] for slot in busy] + [slot["process"].sentinel for slot in busy]
        multiprocessing.connection.wait(handles, timeout=max(0.0, min(remaining, 5.0)))

    def close(self) -> None:
        """Let the processes finish (stopping their sandboxes), then kill what is left."""
        for slot in self._slots:
            try:
                slot["conn"].send(None)
            except OSError:
                pass
        for slot in self._slots:
            slot["process"].join(10)
            if slot["process"].is_alive():
                slot["process"].kill()
                slot["process"].join(5)
            slot["conn"].close()
        self._slots = []

    def terminate(self) -> None:
        """Stop every process now (an interrupted batch); their sandboxes die with them."""
        for slot in self._slots:
            if slot["process"].is_alive():
                slot["process"].kill()
        for slot in self._slots:
            slot["process"].join(5)
            slot["conn"].close()
        self._slots = []


def _describe_death(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        hint = " (the system may have run out of memory)" if -exitcode == signal.SIGKILL else ""
        return f"was killed by {name}{hint} while grading it"
    return f"ended with exit code {exitcode} while grading it"


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
    #: The Moodle files written, when asked for.
    moodle: list[Path] = field(default_factory=list)


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
    trusted: bool = False,
    canvas_csv: bool = False,
    canvas_gradebook: str | Path | None = None,
    canvas_column: str | None = None,
    moodle_csv: bool = False,
    on_done: Callable[[Entry, GradeOutcome, bool], None] = _no_progress,
) -> BatchResult:
    """Grade every submission under ``paths`` (see ``discover``) as ``grade_entries`` does."""
    return grade_entries(discover(paths).entries, autograder_zip, out, workers=workers, timeout=timeout, force=force,
                         isolation=isolation, trusted=trusted, canvas_csv=canvas_csv,
                         canvas_gradebook=canvas_gradebook, canvas_column=canvas_column, moodle_csv=moodle_csv,
                         on_done=on_done)


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
    moodle_csv: bool = False,
    on_done: Callable[[Entry, GradeOutcome, bool], None] = _no_progress,
) -> BatchResult:
    """Grade the discovered ``entries`` with ``autograder_zip`` into ``out``.

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
        canvas = read_canvas_export(Path(canvas_gradebook), ag.assignment, canvas_column) if canvas_gradebook else None
        ag.suite                          # collected once, before the pool forks
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
        pool = GradingProcesses(workers, ag, limits, clearance, timeout)
        try:
            for entry, outcome in pool.grade(todo):
                write_outcome(out, GradeRecord(entry, outcome, ag.digest, hashes[entry.student]))
                graded += 1
                on_done(entry, outcome, False)
            pool.close()             # processes exit normally and stop their spare sandboxes
        except KeyboardInterrupt:
            interrupted = True
        finally:
            pool.terminate()         # the spare sandboxes die with their process
            records = [r for r in (read_record(student_folder(out, e.student)) for e in entries) if r is not None]
            rows = write_gradebook(out, records, ag.questions)
            if canvas_csv:
                write_canvas_gradebook(out, records, ag.assignment, ag.possible)
            filled = fill_canvas_gradebook(canvas, records, out) if canvas is not None else None
            moodle = write_moodle_files(out, records, ag.assignment, ag.possible) if moodle_csv else []
    return BatchResult(rows, graded, skipped, interrupted, clearance, filled, moodle)

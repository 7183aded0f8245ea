"""Grading processes for a batch: each grades one submission at a time in its sandboxes,
and none of them can hang the batch or take another student's row with it.

``multiprocessing.Pool`` loses a task whose process dies and waits for it forever; the
batch instead talks to each process over its own pipe, with a deadline per submission
(see ``GradingProcesses``).
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import signal
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Iterator

from threadpoolctl import threadpool_limits

from autograder.runtime.allocator import keep_freed_memory
from autograder.runtime.grading.outcome import Entry, GradeOutcome
from autograder.runtime.grading.runner import grade_submission, rejected_outcome
from autograder.runtime.grading.support import LoadedAutograder
from autograder.runtime.sandbox import ForkServer, Limits, WarmStart
from autograder.runtime.sandbox.policy import Clearance
from autograder.runtime.text import code

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
    _worker_state.update(ag=ag, limits=limits, clearance=clearance, warm=warm, probes=ag.class_probes)


def _grade_entry(entry: Entry) -> tuple[Entry, GradeOutcome]:
    s = _worker_state
    if entry.refused:     # a link in the class folder: never read
        return entry, rejected_outcome(s["ag"], entry.student, entry.refused, entry.path.name)
    try:
        outcome = grade_submission(entry.path, s["ag"], entry.student, s["clearance"], limits=s["limits"],
                                   warm=s["warm"], probes=s["probes"])
    except Exception as exc:   # one bad submission never stops the batch
        # The student reads this note: the folders above the submission are the instructor's.
        said = f"{type(exc).__name__}: {exc}".replace(str(entry.path), entry.path.name)
        said = said.replace(str(entry.path.parent), "...")
        outcome = _error_outcome(s["ag"], entry, f"grading failed: {code(said)}")
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


def task_seconds(limits: Limits, functions: int) -> float:
    """Longest a grading process may spend on one submission before it is stopped: the
    longest sandbox session (the submission's budget, plus the hangs of each of the
    ``functions`` graded, which are not taken from it) three times over (start-up and the
    grader's checks come on top of it), plus a minute. Only a grading process that hangs
    ever reaches it."""
    return 3 * limits.longest_session(functions) + 60


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

    def __init__(self, count: int, ag: LoadedAutograder, limits: Limits, clearance: Clearance) -> None:
        self._context = multiprocessing.get_context("fork")
        self._args = (ag, limits, clearance)
        self._ag = ag
        self._count = count
        self._seconds = task_seconds(limits, len(ag.student_functions))
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

"""A sandboxed submission's session: load its code once, call its functions, end it.

``SandboxSession`` runs one submission. The student's code runs in a worker
process (``process.py``); this process keeps the hidden tests and
references, sends arguments, and judges what comes back. Workers may come
from a ``WorkerSource`` (a ``WarmStart`` that launched one ahead of time, or
a ``forkserver.ForkServer``) instead of being started on demand.

Time: each round trip (loading the code, each call) gets
``Limits.wall_seconds_per_call``, and the whole session
``Limits.wall_seconds_total``. A worker that overruns is killed with all its
processes; the next call starts a fresh one, which loads the code again.

A function that hung once is not called again: its later calls fail at once
("did not return earlier"). The time its hang took, and the reload of the code
it forced, is not taken from the total: one hanging function must not leave the
others without time. The run stays bounded all the same, since each function
hangs at most once: at most ``wall_seconds_total`` plus two per-call windows for
each function called, and one more window for the call that was running when the
total ran out (``Limits.longest_session``).

Why one module of this size: a session's protocol and its reading of the worker's replies change
together (every field the worker sends is validated where the request is made), and the worker
runs student code, so nothing it reports may be trusted unread.
"""
from __future__ import annotations

import keyword
import logging
import re
import threading
import time
from typing import Any, Protocol, Sequence

import numpy as np

from autograder.runtime.sandbox import channel
from autograder.runtime.sandbox import isolation as iso
from autograder.runtime.sandbox.errors import SandboxError
from autograder.runtime.sandbox.limits import Limits
from autograder.runtime.sandbox.process import (OutputBuffer, WorkerDied, WorkerProcess, WorkerProtocolError,
                                                WorkerTimeout, describe_exit, ran_out_of_cpu)
from autograder.runtime.sandbox.results import CallError, CallResult, CellError, HelperCall, ImportResult
from autograder.runtime.text import WorkerText, code

logger = logging.getLogger(__name__)

#: Restarts of the worker per session after a crash or timeout, at most.
MAX_RESTARTS = 20
#: Seconds a worker may take to report ready (an interpreter and NumPy starting, nothing of the student's).
START_SECONDS = 30.0
#: Longest error text kept from the worker (it is untrusted).
_TEXT_LIMITS = {"type": 200, "message": 2000, "traceback": 4000}
_WORKER_KINDS = frozenset({"raised", "missing", "not_callable", "unencodable", "not_loaded",
                           "bad_request", "worker"})


class WorkerSource(Protocol):
    """Where a session takes its workers from instead of starting them itself.

    ``WarmStart`` and ``forkserver.ForkServer`` implement it.
    """

    #: Whether restarts after a timeout or crash also take from the source.
    every_start: bool

    def take(self, level: str, limits: Limits) -> WorkerProcess | None:
        """A launched worker for this level and these limits, or ``None`` (the session starts one)."""

    def refill(self) -> None:
        """Prepare the next worker, if the source keeps one ready."""

    def close(self) -> None:
        """Stop whatever the source still holds."""

def _text(fields: dict, key: str) -> WorkerText:
    """Field ``key`` of a worker's reply as the student's text (empty if it is not a string)."""
    value = fields.get(key)
    if not isinstance(value, str):
        return WorkerText()
    limit = _TEXT_LIMITS.get(key, 2000)
    return WorkerText(value if len(value) <= limit else value[:limit] + " ...[truncated]")


class WarmStart:
    """One worker launched ahead of time, so the next session skips start-up.

    Starting the interpreter and importing NumPy is most of a small
    submission's sandbox cost; bulk grading launches the next worker while
    the current submission is being judged. A spare is launched before any
    submission is known, so it holds nothing of anyone's, and a session
    adopts it once: it is never reused. Use from one thread (the thread that
    launched a worker is the one whose exit kills it).
    """

    #: The spare serves a session's first start only, not restarts after a timeout or crash.
    every_start = False

    def __init__(self, limits: Limits = Limits(), isolation: str = "auto") -> None:
        chosen = iso.detect_isolation() if isolation == "auto" else iso.check_level(isolation)
        self.level = chosen.level
        self.limits = limits
        self._spare: WorkerProcess | None = None

    def take(self, level: str, limits: Limits) -> WorkerProcess | None:
        """The spare worker if it matches and is still alive, else ``None``."""
        spare, self._spare = self._spare, None
        if spare is not None and (spare.level != level or spare.limits != limits or not spare.alive()):
            spare.close()
            spare = None
        return spare

    def refill(self) -> None:
        """Launch the next spare (errors are left for a session to report)."""
        if self._spare is None:
            worker = WorkerProcess(self.level, self.limits, OutputBuffer(self.limits.stdout_bytes))
            try:
                worker.launch()
            except SandboxError:
                return
            self._spare = worker

    def close(self) -> None:
        """Stop the spare, if any."""
        if self._spare is not None:
            self._spare.close()
            self._spare = None


class SandboxSession:
    """Run one submission in a sandboxed worker and call its functions.

    Use as a context manager; ``start()`` (called by ``__enter__``) loads the
    code and returns an ``ImportResult``, ``call()`` calls one function and
    returns a ``CallResult``, ``close()`` (called by ``__exit__``) kills every
    process of the submission and deletes its files. Not for concurrent use
    from several threads: run one session per thread.

    Args:
        code: the submission's Python source, or its cells in order (a cell
            that raises does not stop the next one, as in a notebook).
        limits: resource and time limits.
        isolation: ``"auto"`` (the strongest level that works here),
            ``"bwrap"``, ``"user"`` or ``"rlimits"``; see ``isolation.py``.
        warm: a ``WarmStart`` whose spare worker this session may adopt
            for its first load (and which it refills for the next session),
            or a ``forkserver.ForkServer`` that forks the session's workers.
        numbers_for: the functions whose notebook-level numbers the worker
            reports (``numbers_read``); ``None`` for every function it finds.
            Walking the bytecode of every helper of a long notebook cost
            several milliseconds per submission.
        record_calls_of: the submission's functions whose calls, made inside a call of another,
            the worker records and sends back (``CallResult.helper_calls``): the graded ones, so a
            wrong value can be laid on the helper that made it.

    Raises:
        SandboxUnavailable: the requested isolation level cannot run here.
    """

    def __init__(self, code: str | Sequence[str], limits: Limits = Limits(),
                 isolation: str = "auto", warm: Any = None, numbers_for: Sequence[str] | None = None,
                 record_calls_of: Sequence[str] = ()) -> None:
        self.cells = [code] if isinstance(code, str) else list(code)
        self._numbers_for = None if numbers_for is None else [str(name) for name in numbers_for]
        self._record = [str(name) for name in record_calls_of]
        if not all(isinstance(cell, str) for cell in self.cells):
            raise TypeError("code must be a str or a sequence of str cells.")
        self.limits = limits
        chosen = iso.detect_isolation() if isolation == "auto" \
            else iso.check_level(isolation)
        self.isolation: str = chosen.level
        self.isolation_detail: str = chosen.detail
        self.import_result: ImportResult | None = None
        self.functions: dict[str, tuple[str, ...]] = {}
        #: Per function, the notebook-level whole numbers it reads (e.g. ``{"B": 4}``).
        self.numbers_read: dict[str, dict[str, int]] = {}
        self.survivors: list[int] = []
        self._output = OutputBuffer(limits.stdout_bytes)
        self._worker: WorkerProcess | None = None
        self._dropped_before = 0        # output dropped by workers that have ended
        self._started_at: float | None = None
        self._restarts = 0
        self._seq = 0
        self._closed = False
        self._lock = threading.Lock()
        self._warm = warm
        self._load_end: int | None = None      # where the first load's output ends in the buffer
        self._load_dropped = 0
        #: Each function that did not return within its window, with that window (seconds).
        self.hung: dict[str, float] = {}
        self._excused = 0.0             # seconds of hangs and of the reloads they forced
        self._reload_excused = False    # the worker was stopped by a hang: its reload is excused too

    def __enter__(self) -> SandboxSession:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- public ------------------------------------------------------------

    @property
    def stdout(self) -> str:
        """What the submission printed (stdout and stderr) that was kept, up to the limit."""
        return self._output.text()

    @property
    def stdout_dropped(self) -> int:
        """Bytes the submission printed past the limit, counted by the grader and the worker."""
        current = self._worker.dropped if self._worker is not None else 0
        return self._output.dropped + self._dropped_before + current

    @property
    def load_stdout(self) -> str:
        """What the submission printed while its code first loaded and was kept.

        Output printed later, while the grader calls its functions, is left
        out: those calls get the hidden inputs, which printing would reveal.
        """
        if self._load_end is None:
            return ""
        return self._output.text(upto=self._load_end)

    @property
    def load_stdout_dropped(self) -> int:
        """Bytes printed while the code first loaded that were not kept."""
        return self._load_dropped if self._load_end is not None else 0

    @property
    def call_output_bytes(self) -> int:
        """Bytes printed after the first load (kept or dropped)."""
        if self._load_end is None:
            return 0
        current = self._worker.dropped if self._worker is not None else 0
        total = len(self._output.kept) + self._output.dropped + self._dropped_before + current
        return max(total - self._load_end - self._load_dropped, 0)

    def remaining_seconds(self) -> float:
        """Wall-clock time left in the session's total budget."""
        if self._started_at is None:
            return self.limits.wall_seconds_total
        spent = time.monotonic() - self._started_at - self._excused
        return max(self.limits.wall_seconds_total - spent, 0.0)

    def start(self) -> ImportResult:
        """Start the worker and load the code (once; later calls return the first result)."""
        with self._lock:
            self._check_open()
            if self.import_result is None:
                self._started_at = time.monotonic()
                logger.info("sandbox isolation: %s (%s)", self.isolation, self.isolation_detail)
                self.import_result = self._load()
                if self._worker is not None:
                    self._worker.drain_output()   # printed before the worker replied: still in the pipe
                self._load_end = self._output.mark()
                self._load_dropped = self._output.dropped + self._dropped_before + (
                    self._worker.dropped if self._worker is not None else 0)
            return self.import_result

    def call(self, function: str, *args: Any, timeout: float | None = None) -> CallResult:
        """Call the submission's ``function`` with ``args``; never raises for the student's failures.

        ``timeout`` replaces ``Limits.wall_seconds_per_call`` for this call. A call
        is made only while the session's total budget lasts; it then gets its whole
        window, and a call that runs it out is not charged to the budget (its
        function is not called again).
        """
        if self.import_result is None:
            self.start()
        with self._lock:
            self._check_open()
            return self._call(function, args, timeout)

    def close(self) -> None:
        """Kill all of the submission's processes and delete its files. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._stop_worker()

    # -- internals ---------------------------------------------------------

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _check_open(self) -> None:
        if self._closed:
            raise SandboxError("this sandbox session is closed; start a new one.")

    def _stop_worker(self) -> None:
        if self._worker is not None:
            self.survivors += self._worker.close()
            self._dropped_before += self._worker.dropped
            self._worker = None

    def _load(self) -> ImportResult:
        begun = time.monotonic()
        mark = self._output.mark()
        window = min(self.limits.wall_seconds_per_call, self.remaining_seconds())

        running = [-1]     # the cell the worker last said it started (untrusted: checked)

        def started(fields: dict) -> None:
            cell = fields.get("cell")
            if type(cell) is int and 0 <= cell < len(self.cells):
                running[0] = cell

        def failed(error: str, timed_out: bool = False) -> ImportResult:
            self._stop_worker()
            return ImportResult(ok=False, loaded=False, error=error, timed_out=timed_out,
                                seconds=time.monotonic() - begun, stdout=self._output.since(mark),
                                hung_cell=running[0] if timed_out else -1)

        try:
            seq = self._next_seq()
            request = channel.encode({"op": "load", "seq": seq, "cells": self.cells,
                                    "numbers_for": self._numbers_for}, max_bytes=self.limits.message_bytes)
        except channel.ChannelError as exc:
            return ImportResult(ok=False, loaded=False, error=f"the submission's code cannot be sent: {exc}")
        usable = self._warm is not None and (not self._restarts or self._warm.every_start)
        spare = self._warm.take(self.isolation, self.limits) if usable else None
        if spare is not None:
            spare.output = self._output      # its start-up printed nothing of the student's
            self._worker = spare
        else:
            self._worker = WorkerProcess(self.isolation, self.limits, self._output)
            self._worker.launch()
        if self._warm is not None:
            self._warm.refill()
        # Starting the worker runs none of the student's code: it has a deadline of its own and
        # is not charged to them. Under load, or on a reload when little of the total is left, the
        # load's window alone could end before the interpreter is up, and the grader would fail.
        waited = time.monotonic()
        self._worker.handshake(waited + START_SECONDS)
        started_at = time.monotonic()
        self._excused += started_at - waited
        deadline = started_at + window
        try:
            fields, _ = self._worker.exchange(request, seq, deadline, progress=started)
        except WorkerTimeout:
            return failed(f"the code did not finish running within {window:g} s (wall clock) and was "
                          "stopped: look for an endless loop or long computation at the top level.", True)
        except WorkerDied:
            # A loop at the top level ends at whichever limit comes first, the CPU time or the wall
            # clock (on a busy machine, the latter): either way it took too long, as for a call.
            if ran_out_of_cpu(self._worker.exit_code(), self.isolation):
                return failed(f"the code used up its CPU time limit of {self.limits.cpu_seconds} s while "
                              "loading and was stopped: look for an endless loop or long computation at the "
                              "top level.", True)
            return failed("the code stopped the worker process while loading: "
                          f"{describe_exit(self._worker.exit_code(), self.isolation, self.limits)}.")
        except WorkerProtocolError as exc:
            # What the worker sent is quoted in the exception: the student's text.
            return failed(f"the worker sent malformed data while loading ({code(exc)}).")
        if fields.get("ok") is not True or not isinstance(fields.get("errors"), list):
            # A WorkerText formats as a code span: the worker's message is quoted, never written.
            return failed(f"the code could not be loaded: {_text(fields, 'message') or 'malformed reply'}.")
        self.functions = _parse_functions(fields.get("functions"))
        self.numbers_read = _parse_numbers_read(fields.get("numbers_read"), self.functions)
        cell_errors = tuple(_parse_cell_error(e, len(self.cells)) for e in fields["errors"][:len(self.cells)])
        error = None
        if cell_errors:
            first = cell_errors[0]
            where = f" in cell {first.cell + 1}" if len(self.cells) > 1 and first.cell >= 0 else ""
            error = f"the code raised {first}{where} while loading."
        return ImportResult(ok=not cell_errors, loaded=True, error=error, cell_errors=cell_errors,
                            seconds=time.monotonic() - begun, stdout=self._output.since(mark))

    def _ensure_worker(self, function: str) -> CallError | None:
        """Restart the worker if a previous call killed it; say why not if it cannot be."""
        if self._worker is not None and self._worker.alive():
            return None
        result = self.import_result
        if result is None or not result.loaded:
            reason = result.error if result is not None and result.error else "it did not load"
            return CallError("not_loaded", function, "", f"`{function}` cannot be called: the "
                             f"submission's code did not finish loading ({reason})")
        if self._restarts >= MAX_RESTARTS:
            return CallError("not_loaded", function, "", f"`{function}` cannot be called: the worker "
                             f"was restarted {MAX_RESTARTS} times already.")
        self._restarts += 1
        self._stop_worker()
        self._output.feed(b"\n[sandbox: worker restarted, the code was loaded again]\n")
        excused, self._reload_excused = self._reload_excused, False
        before, begun = self._excused, time.monotonic()
        reloaded = self._load()
        if excused:
            # The hang forced this reload: its time, like the hang's, is not the others' to pay
            # (the worker's start, which ``_load`` excuses anyway, is in it once).
            self._excused = before + time.monotonic() - begun
        if not reloaded.loaded:
            return CallError("not_loaded", function, "", f"`{function}` cannot be called: loading the "
                             f"code again failed ({reloaded.error})")
        return None

    def _call(self, function: str, args: tuple, timeout: float | None) -> CallResult:
        begun = time.monotonic()
        mark = self._output.mark()

        def failed(error: CallError, timed_out: bool = False, stop: bool = False) -> CallResult:
            if stop:
                self._stop_worker()
            return CallResult(ok=False, error=error, timed_out=timed_out,
                              stdout=self._output.since(mark), seconds=time.monotonic() - begun)

        try:
            seq = self._next_seq()
            request = channel.encode({"op": "call", "seq": seq, "function": function,
                                      **({"record": self._record} if self._record else {})}, {"args": tuple(args)},
                                   max_bytes=self.limits.message_bytes, views=True)
        except channel.ChannelError as exc:
            return failed(CallError("unsendable", function, "ChannelError",
                                    f"the arguments for `{function}` cannot be sent to the sandbox: {exc}"))
        if function in self.hung:
            return failed(CallError("hung", function, "", f"`{function}` was not called: it did not return "
                                    f"earlier (stopped after {self.hung[function]:g} s), so its later calls "
                                    "fail at once and your other functions keep their time."), timed_out=True)
        if self.remaining_seconds() <= 0:
            return failed(self._budget_error(function), timed_out=True)
        problem = self._ensure_worker(function)
        if problem is not None:
            return failed(problem, timed_out=self.remaining_seconds() <= 0)
        # The full window, whatever is left of the total: a call that runs it out hung, and is
        # excused; one that returns is charged, so the total is overrun by one call at most.
        wanted = self.limits.wall_seconds_per_call if timeout is None else timeout
        sent = time.monotonic()
        try:
            fields, values = self._worker.exchange(request, seq, sent + wanted)
        except WorkerTimeout:
            self.hung[function] = wanted
            self._excused += time.monotonic() - sent
            self._reload_excused = True
            return failed(CallError("timeout", function, "", f"`{function}` did not return within {wanted:g} s "
                                    "(wall clock) and was stopped: look for an endless loop or a very slow "
                                    "computation."), timed_out=True, stop=True)
        except WorkerDied:
            if ran_out_of_cpu(self._worker.exit_code(), self.isolation):
                # Its CPU limit stopped it before its wall-clock window did: it hung all the same.
                self.hung[function] = self.limits.cpu_seconds
                self._excused += time.monotonic() - sent
                self._reload_excused = True
                return failed(CallError("timeout", function, "", f"`{function}` did not return within "
                                        f"{self.limits.cpu_seconds:g} s (its CPU time limit) and was stopped: look "
                                        "for an endless loop or a very slow computation."), timed_out=True, stop=True)
            reason = describe_exit(self._worker.exit_code(), self.isolation, self.limits)
            return failed(CallError("crashed", function, "", f"`{function}` stopped the worker "
                                    f"process: {reason}."), stop=True)
        except WorkerProtocolError as exc:
            return failed(CallError("protocol", function, "", f"the worker sent malformed data "
                                    f"after calling `{function}` ({code(exc)})."), stop=True)
        self._worker.drain_output()
        return self._result(function, fields, values, begun, mark)

    def _result(self, function: str, fields: dict, values: dict, begun: float, mark: int) -> CallResult:
        args_after = values.get("args_after")
        after = {int(k): v for k, v in args_after.items()
                 if k.isascii() and k.isdigit() and len(k) <= 4 and type(v) is np.ndarray} \
            if isinstance(args_after, dict) else {}
        seconds, stdout = time.monotonic() - begun, self._output.since(mark)
        if fields.get("ok") is True and "value" in values:
            return CallResult(ok=True, value=values["value"], args_after=after, stdout=stdout, seconds=seconds,
                              helper_calls=self._helper_calls(values.get("calls")))
        kind = fields.get("kind")
        if fields.get("ok") is not False or kind not in _WORKER_KINDS:
            self._stop_worker()
            return CallResult(ok=False, error=CallError("protocol", function, "", "the worker sent a "
                              f"malformed reply after calling `{function}`."), stdout=stdout, seconds=seconds)
        error = CallError(kind, function, _text(fields, "type"), _text(fields, "message"),
                          _text(fields, "traceback"), self._raised_in(fields.get("raised_in")))
        return CallResult(ok=False, error=error, args_after=after, stdout=stdout, seconds=seconds,
                          helper_calls=self._helper_calls(values.get("calls")))

    def _raised_in(self, raw: Any) -> tuple[str, ...]:
        """The worker's chain of functions an exception passed through, kept only where each is a
        function the submission defined (the worker runs student code: its report is not trusted)."""
        if not isinstance(raw, list):
            return ()
        return tuple(name for name in raw[:20] if isinstance(name, str) and name in self.functions)

    def _helper_calls(self, raw: Any) -> tuple[HelperCall, ...]:
        """The worker's record of helper calls, kept only where it names functions this session
        asked to record (the worker runs student code: its report is checked, and later judged)."""
        if not isinstance(raw, list):
            return ()
        found = []
        for entry in raw[:4 * max(len(self._record), 1)]:
            if not isinstance(entry, dict) or entry.get("helper") not in self._record:
                continue
            caller = entry.get("caller")
            caller = caller if isinstance(caller, str) and caller in self.functions else ""
            args, kwargs = entry.get("args"), entry.get("kwargs")
            recorded = isinstance(args, (tuple, list)) and isinstance(kwargs, dict) and "value" in entry
            found.append(HelperCall(entry["helper"], caller, recorded, tuple(args) if recorded else (),
                                    dict(kwargs) if recorded else {}, entry.get("value") if recorded else None))
        return tuple(found)

    def _budget_error(self, function: str) -> CallError:
        return CallError("budget", function, "", f"`{function}` was not called: the submission used up its "
                         f"total time of {self.limits.wall_seconds_total:g} s (a function that hung does not "
                         "count against it): look for the slowest of your functions.")


def _is_name(text: Any) -> bool:
    """Whether ``text`` can name a Python function or parameter (what a notebook defines)."""
    return isinstance(text, str) and text.isidentifier() and not keyword.iskeyword(text)


def _parse_functions(raw: Any) -> dict[str, tuple[str, ...]]:
    """The worker's list of defined callables, keeping only well-formed entries.

    A name or parameter that Python could not define is not the notebook's: it is dropped (a
    function with such a parameter keeps the ones before it), so what reaches signatures and
    messages is a plain identifier.
    """
    if not isinstance(raw, dict):
        return {}
    found = {}
    for name, params in raw.items():
        if _is_name(name) and isinstance(params, list):
            kept = []
            for param in params:
                if not _is_name(param) or param in kept:
                    break
                kept.append(param)
            found[name] = tuple(kept)
    return found


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")


def _parse_numbers_read(raw: Any, functions: dict[str, tuple[str, ...]]) -> dict[str, dict[str, int]]:
    """The worker's report of notebook-level numbers each function reads: plain ASCII names and
    ints only, a few per function (the worker runs student code, so its report is not trusted)."""
    if not isinstance(raw, dict):
        return {}
    found: dict[str, dict[str, int]] = {}
    for function, numbers in raw.items():
        if function not in functions or not isinstance(numbers, dict):
            continue
        plain = {name: value for name, value in list(numbers.items())[:6]
                 if isinstance(name, str) and _IDENTIFIER.fullmatch(name)
                 and type(value) is int and 2 <= value < 10**12}
        if plain:
            found[function] = plain
    return found


def _parse_cell_error(raw: Any, cells: int) -> CellError:
    """One cell's exception as the worker reported it; ``cells``: how many cells were sent."""
    if not isinstance(raw, dict):
        return CellError(-1, WorkerText("Error"), WorkerText("malformed error report"))
    cell = raw.get("cell")
    known = isinstance(cell, int) and not isinstance(cell, bool) and 0 <= cell < cells
    return CellError(cell if known else -1, _text(raw, "type"), _text(raw, "message"), _text(raw, "traceback"))

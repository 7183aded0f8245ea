"""The trusted side of the sandbox: start the worker, call into it, kill it.

``SandboxSession`` runs one submission. The student's code runs in a worker
process (see ``worker.py``) isolated as ``isolation.py`` describes; this
process keeps the hidden tests and references, sends arguments, and judges
what comes back. Every failure of the student's code (an exception, a hang,
a crash, an unsendable return value) comes back as data, never as an
exception here.

Time: each round trip (loading the code, each call) gets
``Limits.wall_seconds_per_call``, and the whole session
``Limits.wall_seconds_total``. A worker that overruns is killed with all its
processes; the next call starts a fresh one, which loads the code again.
"""
from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Sequence

import numpy as np

from autograder.sandbox import channel, procs, worker
from autograder.sandbox import isolation as iso
from autograder.sandbox.errors import SandboxError
from autograder.sandbox.limits import Limits

logger = logging.getLogger(__name__)

#: Start of a sandboxed interpreter's program: the config, and ``load`` for
#: modules sent as source text (the project's packages are not installed there).
LOADER = """\
import json, sys, types
config = json.loads(sys.argv[1])
sys.path.insert(0, config["site"])
def load(name, source):
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, "<" + name + ">", "exec"), module.__dict__)
    return module
"""
#: The worker's program: load the channel and worker from their source text and run.
BOOTSTRAP = LOADER + """\
channel = load("sandbox_channel", sys.argv[2])
load("sandbox_worker", sys.argv[3]).main(channel, config)
"""
#: Restarts of the worker per session after a crash or timeout, at most.
MAX_RESTARTS = 20
#: Longest error text kept from the worker (it is untrusted).
_TEXT_LIMITS = {"type": 200, "message": 2000, "traceback": 4000}
_WORKER_KINDS = frozenset({"raised", "missing", "not_callable", "unencodable", "not_loaded",
                           "bad_request", "worker"})
_READ_CHUNK = 1 << 20
_DRAIN_CHUNKS = 16


@dataclass(frozen=True)
class CellError:
    """An exception raised while a cell of the submission ran."""

    cell: int
    type_name: str
    message: str
    traceback: str = ""

    def __str__(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


@dataclass(frozen=True)
class ImportResult:
    """Outcome of loading the submission's code.

    Attributes:
        ok: every cell ran without an exception.
        loaded: the worker finished all cells and serves calls (a cell may
            have raised: later cells still ran, as in a notebook).
        error: what went wrong, for the student; ``None`` when ok.
        timed_out: loading exceeded its wall-clock limit.
        cell_errors: the exception of each failing cell.
        seconds: wall-clock time, worker start included.
        stdout: output printed while loading (within the session's budget).
    """

    ok: bool
    loaded: bool
    error: str | None = None
    timed_out: bool = False
    cell_errors: tuple[CellError, ...] = ()
    seconds: float = 0.0
    stdout: str = ""


@dataclass(frozen=True)
class CallError:
    """Why a call did not return a value.

    ``kind`` is one of: ``raised`` (the function raised, ``SystemExit`` and
    ``KeyboardInterrupt`` included), ``missing``, ``not_callable``,
    ``unencodable`` (its return value cannot cross the channel),
    ``unsendable`` (the arguments cannot), ``timeout``, ``crashed`` (the
    worker process died), ``protocol`` (the worker sent malformed data),
    ``budget`` (the session's total time is used up), ``not_loaded`` (the
    code never finished loading).
    """

    kind: str
    function: str
    type_name: str
    message: str
    traceback: str = ""

    def __str__(self) -> str:
        if self.kind == "raised":
            detail = f"{self.type_name}: {self.message}" if self.message else self.type_name
            return f"`{self.function}` raised {detail}"
        return self.message


@dataclass(frozen=True)
class CallResult:
    """Outcome of one call: the returned value, or why there is none.

    ``args_after`` maps the index of each array argument the function
    changed in place to its content afterwards (empty when none changed).
    """

    ok: bool
    value: Any = None
    error: CallError | None = None
    args_after: dict[int, Any] = field(default_factory=dict)
    timed_out: bool = False
    stdout: str = ""
    seconds: float = 0.0


class _Timeout(Exception):
    """The deadline passed before the worker answered."""


class _Died(Exception):
    """The worker's pipes closed: the process ended."""


class _Protocol(Exception):
    """The worker sent something that is not a valid message."""


class OutputBuffer:
    """The student's output, bounded: the first ``limit`` bytes are kept, the rest counted."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    def feed(self, data: bytes) -> None:
        room = max(self.limit - len(self.kept), 0)
        self.kept += data[:room]
        self.dropped += max(len(data) - room, 0)

    def mark(self) -> int:
        return len(self.kept)

    def since(self, mark: int) -> str:
        return self.kept[mark:].decode("utf-8", "replace")

    def text(self, also_dropped: int = 0) -> str:
        shown = self.kept.decode("utf-8", "replace")
        lost = self.dropped + also_dropped
        if lost:
            shown += (f"\n[output truncated: the first {len(self.kept)} bytes are shown; "
                      f"about {lost} more were not kept]\n")
        return shown


def _sources(*modules: ModuleType) -> list[str]:
    """Source text of the modules a sandboxed program loads (default: channel and worker)."""
    return [Path(module.__file__).read_text(encoding="utf-8") for module in modules or (channel, worker)]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe_exit(returncode: int | None, level: str, limits: Limits) -> str:
    """Say in words why the worker ended, from its exit status."""
    if returncode is None:
        return "the worker process stopped answering"
    number = -returncode if returncode < 0 else None
    if number is None and level == "bwrap" and returncode > 128:
        number = returncode - 128          # bubblewrap reports a signal as 128 + its number
    if number == signal.SIGXCPU:
        return f"it used up its CPU time limit of {limits.cpu_seconds} s and was stopped"
    if number == signal.SIGKILL:
        return ("it was killed (SIGKILL), which usually means it went over the CPU time "
                f"({limits.cpu_seconds} s) or memory limit")
    if number == signal.SIGSEGV:
        return "it crashed with a segmentation fault (for example from very deep recursion)"
    if number is not None:
        return f"it was killed by {_signal_name(number)}"
    return f"the process exited with code {returncode} (for example through os._exit)"


class _Resources:
    """What must be undone when a worker ends; shared with its finalizer."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.fds: list[int] = []
        self.tmpdir: str | None = None
        self.uid: int | None = None
        self.namespace: str | None = None
        self.token = ""
        self.survivors: list[int] = []
        #: A worker forked by a fork server: a descriptor of its process
        #: (it is the server's child, not ours) and its pid inside the sandbox.
        self.pidfd: int | None = None
        self.sandbox_pid: int | None = None

    def release(self) -> None:
        """Kill every process of the worker, close its pipes, delete its files."""
        proc = self.proc
        if self.pidfd is not None:
            self.survivors = self._end_forked()
        elif proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            if proc.poll() is None:
                proc.kill()
            self.survivors = self._sweep(proc.pid)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.survivors.append(proc.pid)
            if self.survivors:
                logger.warning("sandbox: processes %s of a worker survived SIGKILL", self.survivors)
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []
        if self.tmpdir:
            _remove_tree(self.tmpdir)
            self.tmpdir = None
        if self.uid is not None:
            _remove_files_of(self.uid)
            iso.release_uid(self.uid)
            self.uid = None
        self.proc = None

    def _end_forked(self) -> list[int]:
        # The worker and everything it started run as its own uid, and the
        # fork server's sandbox lives on: kill by uid, never the namespace.
        pidfd, self.pidfd = self.pidfd, None
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            select.select([pidfd], [], [], 5.0)      # readable once the process has ended
        except OSError:
            pass
        finally:
            os.close(pidfd)
        return self._sweep_uid()

    def _sweep_uid(self) -> list[int]:
        """Kill every process of the worker's own uid, if it has one; return survivors."""
        if self.uid is None:
            return []
        uid = self.uid
        return procs.kill_until_gone(lambda: procs.of_uid(uid), lambda _pids: procs.kill_all_of_uid(uid))

    def _sweep(self, pid: int) -> list[int]:
        left: list[int] = []
        if self.namespace is not None:
            namespace = self.namespace
            left += procs.kill_until_gone(lambda: procs.in_namespace(namespace), procs.kill_pids)
        left += self._sweep_uid()
        if self.namespace is None and self.uid is None:
            token = self.token
            left += procs.kill_until_gone(lambda: procs.related(pid, token), procs.kill_pids)
        return left


def _remove_tree(path: str) -> None:
    def make_writable(function: Any, target: str, _info: Any) -> None:
        # The student may have made its files read-only; as their owner we can undo that.
        try:
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
            function(target)
        except OSError:
            pass
    shutil.rmtree(path, onerror=make_writable)


def _remove_files_of(uid: int) -> None:
    """Delete what ``uid`` left in the shared temporary directories (``user`` level)."""
    for base in ("/tmp", "/var/tmp", "/dev/shm"):
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
                if entry.is_dir(follow_symlinks=False):
                    _remove_tree(entry.path)
                else:
                    os.unlink(entry.path)
            except OSError:
                pass


#: Pipe capacity asked for (Linux's default maximum for unprivileged users).
PIPE_BYTES = 1 << 20


def _widen_pipes(*fds: int) -> None:
    # The default 64 KiB pipe moves a 50,000-token vocabulary's logits in
    # dozens of write/wake-up rounds; a wider pipe in a few.
    for fd in fds:
        try:
            fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (OSError, AttributeError):     # not Linux, or above the system's maximum
            pass


class _Worker:
    """One worker process and its three pipes: requests, replies, output."""

    def __init__(self, level: str, limits: Limits, output: OutputBuffer) -> None:
        self.level = level
        self.limits = limits
        self.output = output
        self.resources = _Resources()
        self._finalizer = weakref.finalize(self, self.resources.release)
        self.pending = bytearray()
        self.dropped = 0          # output the worker itself dropped past its budget
        self.request_fd = self.reply_fd = self.output_fd = -1
        self.server: Any = None   # the fork server this worker came from, if any
        self.ready: dict[str, Any] | None = None     # the worker's ``ready`` message, once received

    # -- start -------------------------------------------------------------

    def launch(self, server: Any = None) -> None:
        """Start the process; raise ``SandboxError`` if that fails.

        With ``server`` (a ``forkserver.ForkServer``), the worker is forked
        inside the server's sandbox instead of starting an interpreter.
        """
        res = self.resources
        res.token = os.urandom(8).hex()
        root = iso.running_as_root() and self.level in ("bwrap", "user")
        if root:
            res.uid = iso.reserve_uid()
        self.server = server
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        _widen_pipes(request_w, reply_w)
        output_r, output_w = os.pipe()
        res.fds = [request_w, reply_r, output_r]
        self.request_fd, self.reply_fd, self.output_fd = request_w, reply_r, output_r
        try:
            config = {"drop": [res.uid, res.uid] if res.uid is not None else None,
                      "max_bytes": self.limits.message_bytes, "stdout_bytes": self.limits.stdout_bytes,
                      "session": res.token, "parent": os.getpid(),
                      # bwrap's --die-with-parent covers its level; elsewhere the worker asks itself.
                      "die_with_parent": self.level != "bwrap"}
            if server is not None:
                res.sandbox_pid, res.pidfd = server.fork(config, (request_r, reply_w, output_w), res.token)
            else:
                argv, env, cwd, site = self._command(res)
                config.update(requests=request_r, replies=reply_w, site=site)
                nproc = self.limits.max_processes if root else \
                    procs.task_count(os.getuid()) + self.limits.max_processes
                preexec = iso.make_preexec(iso.rlimit_settings(self.limits, nproc),
                                           subreaper=self.level == "rlimits")
                res.proc = subprocess.Popen(
                    argv + ["-I", "-S", "-B", "-c", BOOTSTRAP, json.dumps(config), *_sources()],
                    stdin=subprocess.DEVNULL, stdout=output_w, stderr=output_w,
                    pass_fds=(request_r, reply_w), cwd=cwd, env=env, close_fds=True,
                    start_new_session=True, preexec_fn=preexec)
        except (OSError, subprocess.SubprocessError, SandboxError) as exc:
            self.close()
            raise SandboxError(f"the sandbox worker could not be started: {exc}") from exc
        except BaseException:
            self.close()
            raise
        finally:
            for fd in (request_r, reply_w, output_w):
                os.close(fd)
        for fd in res.fds:
            os.set_blocking(fd, False)

    def _command(self, res: _Resources) -> tuple[list[str], dict[str, str], str, str]:
        """Interpreter command (bwrap prefix included), environment, cwd and site dir."""
        view = iso.runtime_view()
        if self.level == "bwrap":
            env = iso.worker_env(iso.SANDBOX_WORK, res.token)
            prefix = iso.bwrap_arguments(view, self.limits, env, iso.running_as_root())
            return prefix + [view.executable], env, "/", iso.SANDBOX_SITE
        res.tmpdir = tempfile.mkdtemp(prefix="lmhead-sandbox-")
        os.chmod(res.tmpdir, 0o711)     # the worker's uid may cross it, not list it
        work, site = os.path.join(res.tmpdir, "work"), os.path.join(res.tmpdir, "site")
        os.mkdir(work, 0o700)
        os.mkdir(site, 0o755)
        if res.uid is not None:
            os.chown(work, res.uid, res.uid)
        for path in view.numpy:
            # Only NumPy on the path: the grader's own packages stay unimportable.
            os.symlink(path, os.path.join(site, os.path.basename(path)))
        return [view.executable], iso.worker_env(work, res.token), work, site

    def handshake(self, deadline: float) -> dict[str, Any]:
        """Wait for the worker's ``ready``; check it runs as the uid it was given (once)."""
        if self.ready is not None:
            return self.ready
        try:
            fields, _ = self.receive(deadline)
        except (_Died, _Protocol, _Timeout) as exc:
            reason = "it did not get ready in time" if isinstance(exc, _Timeout) else \
                describe_exit(self.exit_code(), self.level, self.limits)
            tail = self.output.since(0)[-2000:].strip()
            self.close()
            raise SandboxError(f"the sandbox worker ({self.level}) failed to start: {reason}"
                               + (f"\n{tail}" if tail else "")) from None
        res = self.resources
        if fields.get("op") != "ready" or (res.uid is not None and fields.get("uid") != res.uid):
            self.close()
            raise SandboxError(f"the sandbox worker did not start as expected: {fields}")
        if self.level == "bwrap" and res.proc is not None:
            inner = procs.children(res.proc.pid)
            namespace = procs.pid_namespace(inner[0]) if inner else None
            if namespace and namespace != procs.pid_namespace(os.getpid()):
                res.namespace = namespace
        self.ready = fields
        return fields

    # -- talking -----------------------------------------------------------

    def exchange(self, request: bytes, seq: int, deadline: float) -> tuple[dict, dict]:
        """Send one request and return the decoded reply, which must echo ``seq``."""
        self.send(request, deadline)
        fields, values = self.receive(deadline)
        if fields.get("seq") != seq:
            raise _Protocol(f"a reply to request {fields.get('seq')!r} instead of {seq}")
        return fields, values

    def send(self, data: bytes, deadline: float) -> None:
        view = memoryview(data)
        while view:
            self._wait(self.request_fd, select.POLLOUT, deadline)
            try:
                view = view[os.write(self.request_fd, view):]
            except BlockingIOError:
                continue
            except OSError:
                raise _Died() from None

    def receive(self, deadline: float) -> tuple[dict, dict]:
        """Read one framed reply and decode it (values: data only, never ``Named``)."""
        limit = self.limits.message_bytes
        while True:
            if len(self.pending) >= channel.FRAME.size:
                (length,) = channel.FRAME.unpack_from(self.pending)
                if length > limit:
                    raise _Protocol(f"a reply of {length} bytes (at most {limit})")
                end = channel.FRAME.size + length
                if len(self.pending) >= end:
                    with memoryview(self.pending) as view:
                        body = bytes(view[channel.FRAME.size:end])
                    del self.pending[:end]
                    try:
                        fields, values = channel.unpack(body, allow_named=False)
                    except channel.ChannelError as exc:
                        raise _Protocol(str(exc)) from None
                    dropped = fields.get("dropped")
                    if isinstance(dropped, int) and not isinstance(dropped, bool) and dropped >= 0:
                        self.dropped = dropped
                    return fields, values
            self._wait(self.reply_fd, select.POLLIN, deadline)
            try:
                chunk = os.read(self.reply_fd, _READ_CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                raise _Died()
            self.pending += chunk

    def _wait(self, fd: int, event: int, deadline: float) -> None:
        """Block until ``fd`` is ready for ``event``, draining output meanwhile."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _Timeout()
            poller = select.poll()
            poller.register(fd, event)
            if self.output_fd >= 0:
                poller.register(self.output_fd, select.POLLIN)
            for ready, _events in poller.poll(math.ceil(remaining * 1000)):
                if ready == self.output_fd:
                    self.drain_output()
                elif ready == fd:
                    return

    def drain_output(self) -> None:
        """Move what the worker printed into the bounded buffer (a bounded amount per turn)."""
        if self.output_fd < 0:
            return
        for _ in range(_DRAIN_CHUNKS):
            try:
                data = os.read(self.output_fd, 1 << 16)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                self.output_fd = -1      # closed: stop polling it (it is closed in release())
                return
            self.output.feed(data)

    # -- end ---------------------------------------------------------------

    def alive(self) -> bool:
        res = self.resources
        if res.pidfd is not None:
            return not select.select([res.pidfd], [], [], 0)[0]
        return res.proc is not None and res.proc.poll() is None

    def exit_code(self, wait: float = 1.0) -> int | None:
        res = self.resources
        if self.server is not None:
            return self.server.exit_code(res.sandbox_pid, wait)
        proc = res.proc
        if proc is None:
            return None
        try:
            return proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> list[int]:
        """Kill the worker's whole process tree and remove its files; return survivors."""
        self.drain_output()
        self._finalizer()
        return self.resources.survivors


def _text(fields: dict, key: str) -> str:
    value = fields.get(key)
    if not isinstance(value, str):
        return ""
    limit = _TEXT_LIMITS.get(key, 2000)
    return value if len(value) <= limit else value[:limit] + " ...[truncated]"


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
        self._spare: _Worker | None = None

    def take(self, level: str, limits: Limits) -> _Worker | None:
        """The spare worker if it matches and is still alive, else ``None``."""
        spare, self._spare = self._spare, None
        if spare is not None and (spare.level != level or spare.limits != limits or not spare.alive()):
            spare.close()
            spare = None
        return spare

    def refill(self) -> None:
        """Launch the next spare (errors are left for a session to report)."""
        if self._spare is None:
            worker = _Worker(self.level, self.limits, OutputBuffer(self.limits.stdout_bytes))
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

    Raises:
        SandboxUnavailable: the requested isolation level cannot run here.
    """

    def __init__(self, code: str | Sequence[str], limits: Limits = Limits(),
                 isolation: str = "auto", warm: Any = None) -> None:
        self.cells = [code] if isinstance(code, str) else list(code)
        if not all(isinstance(cell, str) for cell in self.cells):
            raise TypeError("code must be a str or a sequence of str cells.")
        self.limits = limits
        chosen = iso.detect_isolation() if isolation == "auto" \
            else iso.check_level(isolation)
        self.isolation: str = chosen.level
        self.isolation_detail: str = chosen.detail
        self.import_result: ImportResult | None = None
        self.functions: dict[str, tuple[str, ...]] = {}
        self.survivors: list[int] = []
        self._output = OutputBuffer(limits.stdout_bytes)
        self._worker: _Worker | None = None
        self._dropped_before = 0        # output dropped by workers that have ended
        self._started_at: float | None = None
        self._restarts = 0
        self._seq = 0
        self._closed = False
        self._lock = threading.Lock()
        self._warm = warm

    def __enter__(self) -> SandboxSession:
        self.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # -- public ------------------------------------------------------------

    @property
    def stdout(self) -> str:
        """Everything the submission printed (stdout and stderr), truncated to the limit with a note."""
        current = self._worker.dropped if self._worker is not None else 0
        return self._output.text(self._dropped_before + current)

    def remaining_seconds(self) -> float:
        """Wall-clock time left in the session's total budget."""
        if self._started_at is None:
            return self.limits.wall_seconds_total
        return max(self.limits.wall_seconds_total - (time.monotonic() - self._started_at), 0.0)

    def start(self) -> ImportResult:
        """Start the worker and load the code (once; later calls return the first result)."""
        with self._lock:
            self._check_open()
            if self.import_result is None:
                self._started_at = time.monotonic()
                logger.info("sandbox isolation: %s (%s)", self.isolation, self.isolation_detail)
                self.import_result = self._load()
            return self.import_result

    def call(self, function: str, *args: Any, timeout: float | None = None) -> CallResult:
        """Call the submission's ``function`` with ``args``; never raises for the student's failures.

        ``timeout`` replaces ``Limits.wall_seconds_per_call`` for this call;
        the session's remaining total budget caps either.
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
        deadline = begun + window

        def failed(error: str, timed_out: bool = False) -> ImportResult:
            self._stop_worker()
            return ImportResult(ok=False, loaded=False, error=error, timed_out=timed_out,
                                seconds=time.monotonic() - begun, stdout=self._output.since(mark))

        try:
            seq = self._next_seq()
            request = channel.pack({"op": "load", "seq": seq, "cells": self.cells},
                                   max_bytes=self.limits.message_bytes)
        except channel.ChannelError as exc:
            return ImportResult(ok=False, loaded=False, error=f"the submission's code cannot be sent: {exc}")
        usable = self._warm is not None and (not self._restarts or self._warm.every_start)
        spare = self._warm.take(self.isolation, self.limits) if usable else None
        if spare is not None:
            spare.output = self._output      # its start-up printed nothing of the student's
            self._worker = spare
        else:
            self._worker = _Worker(self.isolation, self.limits, self._output)
            self._worker.launch()
        if self._warm is not None:
            self._warm.refill()
        try:
            self._worker.handshake(deadline)
            fields, _ = self._worker.exchange(request, seq, deadline)
        except _Timeout:
            return failed(f"the code did not finish running within {window:g} s (wall clock) and was "
                          "stopped: look for an endless loop or long computation at the top level.", True)
        except _Died:
            return failed("the code stopped the worker process while loading: "
                          f"{describe_exit(self._worker.exit_code(), self.isolation, self.limits)}.")
        except _Protocol as exc:
            return failed(f"the worker sent malformed data while loading ({exc}).")
        if fields.get("ok") is not True or not isinstance(fields.get("errors"), list):
            return failed(f"the code could not be loaded: {_text(fields, 'message') or 'malformed reply'}.")
        self.functions = _parse_functions(fields.get("functions"))
        cell_errors = tuple(_parse_cell_error(e) for e in fields["errors"][:len(self.cells)])
        error = None
        if cell_errors:
            first = cell_errors[0]
            where = f" in cell {first.cell + 1}" if len(self.cells) > 1 else ""
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
        reloaded = self._load()
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
            request = channel.pack({"op": "call", "seq": seq, "function": function}, {"args": tuple(args)},
                                   max_bytes=self.limits.message_bytes)
        except channel.ChannelError as exc:
            return failed(CallError("unsendable", function, "ChannelError",
                                    f"the arguments for `{function}` cannot be sent to the sandbox: {exc}"))
        if self.remaining_seconds() <= 0:
            return failed(self._budget_error(function), timed_out=True)
        problem = self._ensure_worker(function)
        if problem is not None:
            return failed(problem, timed_out=self.remaining_seconds() <= 0)
        wanted = self.limits.wall_seconds_per_call if timeout is None else timeout
        window = min(wanted, self.remaining_seconds())
        try:
            fields, values = self._worker.exchange(request, seq, time.monotonic() + window)
        except _Timeout:
            error = self._budget_error(function) if window < wanted else CallError(
                "timeout", function, "", f"`{function}` did not return within {wanted:g} s "
                "(wall clock) and was stopped: look for an endless loop or a very slow computation.")
            return failed(error, timed_out=True, stop=True)
        except _Died:
            reason = describe_exit(self._worker.exit_code(), self.isolation, self.limits)
            return failed(CallError("crashed", function, "", f"`{function}` stopped the worker "
                                    f"process: {reason}."), stop=True)
        except _Protocol as exc:
            return failed(CallError("protocol", function, "", f"the worker sent malformed data "
                                    f"after calling `{function}` ({exc})."), stop=True)
        self._worker.drain_output()
        return self._result(function, fields, values, begun, mark)

    def _result(self, function: str, fields: dict, values: dict, begun: float, mark: int) -> CallResult:
        args_after = values.get("args_after")
        after = {int(k): v for k, v in args_after.items() if k.isdigit() and type(v) is np.ndarray} \
            if isinstance(args_after, dict) else {}
        seconds, stdout = time.monotonic() - begun, self._output.since(mark)
        if fields.get("ok") is True and "value" in values:
            return CallResult(ok=True, value=values["value"], args_after=after, stdout=stdout, seconds=seconds)
        kind = fields.get("kind")
        if fields.get("ok") is not False or kind not in _WORKER_KINDS:
            self._stop_worker()
            return CallResult(ok=False, error=CallError("protocol", function, "", "the worker sent a "
                              f"malformed reply after calling `{function}`."), stdout=stdout, seconds=seconds)
        error = CallError(kind, function, _text(fields, "type"), _text(fields, "message"),
                          _text(fields, "traceback"))
        return CallResult(ok=False, error=error, args_after=after, stdout=stdout, seconds=seconds)

    def _budget_error(self, function: str) -> CallError:
        return CallError("budget", function, "", f"`{function}` was not run to the end: the submission "
                         f"used up its total time of {self.limits.wall_seconds_total:g} s.")


def _parse_functions(raw: Any) -> dict[str, tuple[str, ...]]:
    """The worker's list of defined callables, keeping only well-formed entries."""
    if not isinstance(raw, dict):
        return {}
    return {name: tuple(p for p in params if isinstance(p, str))
            for name, params in raw.items()
            if isinstance(name, str) and isinstance(params, list)}


def _parse_cell_error(raw: Any) -> CellError:
    if not isinstance(raw, dict):
        return CellError(-1, "Error", "malformed error report")
    cell = raw.get("cell")
    return CellError(cell if isinstance(cell, int) and not isinstance(cell, bool) else -1,
                     _text(raw, "type"), _text(raw, "message"), _text(raw, "traceback"))


"""One sandboxed worker process: start it, talk to it over its pipes, end it.

``WorkerProcess`` owns a worker's process (or, with a fork server, its pid
descriptor), its three pipes and whatever must be undone at the end: every
process it started is killed, its files deleted and its uid released. The
program it runs (``worker.py`` and ``channel.py``) is sent as source text to
a fresh ``python -I -S``, isolated as ``isolation.py`` describes.

Why one module of this size: starting, talking to and ending a worker share one object's state (its pipes, pid descriptor, uid and cleanup); split, that state would leak across modules.
"""
from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import select
import signal
import subprocess
import tempfile
import time
import weakref
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

from autograder.runtime.sandbox import channel, procs, reach, worker
from autograder.runtime.sandbox import isolation as iso
from autograder.runtime.sandbox.errors import SandboxError
from autograder.runtime.sandbox.limits import Limits
from autograder.runtime.sandbox.trees import remove_tree

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
_READ_CHUNK = 1 << 20
_DRAIN_CHUNKS = 16


class WorkerTimeout(Exception):
    """The deadline passed before the worker answered."""


class WorkerDied(Exception):
    """The worker's pipes closed: the process ended."""


class WorkerProtocolError(Exception):
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

    def text(self, upto: int | None = None) -> str:
        """What was kept (up to the mark ``upto``). What was dropped is a count, never text
        in here: the student writes this text, so a notice inside it could be forged."""
        kept = self.kept if upto is None else self.kept[:upto]
        return kept.decode("utf-8", "replace")


def program_sources(*modules: ModuleType) -> list[str]:
    """Source text of the modules a sandboxed program loads (default: channel and worker)."""
    return [Path(module.__file__).read_text(encoding="utf-8") for module in modules or (channel, worker)]


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def ran_out_of_cpu(returncode: int | None, level: str) -> bool:
    """Whether the worker was stopped by its CPU time limit (SIGXCPU): a call that hung, as surely
    as one that ran out its wall-clock window."""
    if returncode is None:
        return False
    number = -returncode if returncode < 0 else None
    if number is None and level == "bwrap" and returncode > 128:
        number = returncode - 128
    return number == signal.SIGXCPU


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


class WorkerResources:
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
        #: A descriptor that becomes readable when a worker started here (``proc``) ends; kept in
        #: ``fds`` so it is closed with the pipes.
        self.exit_fd: int | None = None
        #: Whether the worker could write outside its own folders (the ``user`` level):
        #: then its uid's files are swept from every world-writable directory.
        self.shares_filesystem = False
        #: The worker's shared arena (see ``new_arena``), if it has one: read and written, never mapped here.
        self.arena: channel.FileArena | None = None

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
        self.exit_fd = None
        if self.arena is not None:
            try:
                os.close(self.arena.fd)
            except OSError:
                pass
            self.arena = None
        try:
            if self.tmpdir:
                remove_tree(self.tmpdir)
                self.tmpdir = None
            if self.uid is not None and self.shares_filesystem:
                reach.remove_traces_of(self.uid)
        finally:
            # Whatever the removal met, the uid goes back only after it ran.
            if self.uid is not None:
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


#: Size of each worker's shared arena: a 50,000-token vocabulary's logits
#: (1.6 MB) many times over. Larger messages carry their arrays inline.
ARENA_BYTES = 16 << 20


def new_arena(size: int) -> int | None:
    """A descriptor of a fresh shared-memory file of ``size`` bytes, sealed at that size.

    The worker maps the file; this side reads and writes it with
    ``pread``/``pwrite`` (``channel.FileArena``). A call's arrays are copied
    in once and out once instead of through the pipes in chunks (moving a
    1.6 MB array that way cost 4 ms of CPU on each side). The seals keep the
    worker from resizing the file. ``None`` where there is no ``memfd``.
    """
    try:
        fd = os.memfd_create("lmhead-arena", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    except (AttributeError, OSError):
        return None
    try:
        os.ftruncate(fd, size)
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SEAL)
        return fd
    except (AttributeError, OSError):
        os.close(fd)
        return None


def _own_view(fd: int, size: int) -> channel.FileArena | None:
    """This side's arena: the file opened afresh, so that flags the worker sets on the
    descriptor it is given (``O_APPEND`` would turn every write of ours into an error)
    belong to its open file, not to ours. ``None`` if it cannot be reopened."""
    try:
        return channel.FileArena(os.open(f"/proc/self/fd/{fd}", os.O_RDWR | os.O_CLOEXEC), size)
    except OSError:
        return None


class WorkerProcess:
    """One worker process, its three pipes (requests, replies, output) and its shared arena."""

    def __init__(self, level: str, limits: Limits, output: OutputBuffer) -> None:
        self.level = level
        self.limits = limits
        self.output = output
        self.resources = WorkerResources()
        self._finalizer = weakref.finalize(self, self.resources.release)
        self.pending = bytearray()
        self.dropped = 0          # output the worker itself dropped past its budget
        self.request_fd = self.reply_fd = self.output_fd = -1
        self.server: Any = None   # the fork server this worker came from, if any
        self.ready: dict[str, Any] | None = None     # the worker's ``ready`` message, once received
        self._staged: dict[str, str] = {}     # import directories the worker uses copies of

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
            res.shares_filesystem = self.level == "user"
        self.server = server
        request_r, request_w = os.pipe()
        reply_r, reply_w = os.pipe()
        _widen_pipes(request_w, reply_w)
        output_r, output_w = os.pipe()
        res.fds = [request_w, reply_r, output_r]
        self.request_fd, self.reply_fd, self.output_fd = request_w, reply_r, output_r
        # A new arena for every worker: nothing one submission saw or wrote reaches the next.
        size = min(ARENA_BYTES, self.limits.message_bytes)
        arena_fd = new_arena(size)
        if arena_fd is not None:
            res.arena = _own_view(arena_fd, size)
            if res.arena is None:
                os.close(arena_fd)
                arena_fd = None
        theirs = (request_r, reply_w, output_w, *([arena_fd] if arena_fd is not None else []))
        try:
            config = {"drop": [res.uid, res.uid] if res.uid is not None else None,
                      "max_bytes": self.limits.message_bytes, "stdout_bytes": self.limits.stdout_bytes,
                      "session": res.token, "parent": os.getpid(),
                      # bwrap's --die-with-parent covers its level; elsewhere the worker asks itself.
                      "die_with_parent": self.level != "bwrap",
                      "arena_bytes": size if arena_fd is not None else 0}
            if server is not None:
                res.sandbox_pid, res.pidfd = server.fork(config, theirs, res.token)
            else:
                argv, env, cwd, site = self._command(res)
                config.update(requests=request_r, replies=reply_w, site=site, arena=arena_fd,
                              staged=self._staged)
                nproc = self.limits.max_processes if root else \
                    procs.task_count(os.getuid()) + self.limits.max_processes
                preexec = iso.make_preexec(iso.rlimit_settings(self.limits, nproc),
                                           subreaper=self.level == "rlimits")
                res.proc = subprocess.Popen(
                    argv + ["-I", "-S", "-B", "-c", BOOTSTRAP, json.dumps(config), *program_sources()],
                    stdin=subprocess.DEVNULL, stdout=output_w, stderr=output_w,
                    pass_fds=tuple(fd for fd in (request_r, reply_w, arena_fd) if fd is not None), cwd=cwd,
                    env=env, close_fds=True,
                    start_new_session=True, preexec_fn=preexec)
        except (OSError, subprocess.SubprocessError, SandboxError) as exc:
            self.close()
            raise SandboxError(f"the sandbox worker could not be started: {exc}") from exc
        except BaseException:
            self.close()
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        for fd in res.fds:
            os.set_blocking(fd, False)
        if res.proc is not None:
            try:
                res.exit_fd = os.pidfd_open(res.proc.pid)
            except OSError:     # no pidfd here: a death is then seen when the pipes close
                res.exit_fd = None
            else:
                res.fds.append(res.exit_fd)

    def _command(self, res: WorkerResources) -> tuple[list[str], dict[str, str], str, str]:
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
        staged = {}
        if res.uid is not None:
            os.chown(work, res.uid, res.uid)
            # The worker imports from copies it can enter once it has dropped root (see
            # ``iso.staged_runtime``); it keeps no descriptor of the originals.
            staged = iso.staged_runtime()
        for path in view.numpy:
            # Only NumPy on the path: the grader's own packages stay unimportable.
            os.symlink(staged.get(path, path), os.path.join(site, os.path.basename(path)))
        self._staged = staged
        return [view.executable], iso.worker_env(work, res.token), work, site

    def handshake(self, deadline: float) -> dict[str, Any]:
        """Wait for the worker's ``ready``; check it runs as the uid it was given (once)."""
        if self.ready is not None:
            return self.ready
        try:
            fields, _ = self.receive(deadline)
        except (WorkerDied, WorkerProtocolError, WorkerTimeout) as exc:
            reason = "it did not get ready in time" if isinstance(exc, WorkerTimeout) else \
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

    def exchange(self, request: channel.Outgoing, seq: int, deadline: float,
                 progress: Callable[[dict], None] | None = None) -> tuple[dict, dict]:
        """Send one request and return the decoded reply, which must echo ``seq``.

        With ``progress``, the worker's ``progress`` frames for this request (sent while it works,
        e.g. the cell a load is running) are handed to it, untrusted, until the reply comes."""
        self.send(request.frame(self.resources.arena), deadline)
        fields, values = self.receive(deadline)
        while progress is not None and fields.get("op") == "progress" and fields.get("seq") == seq:
            progress(fields)
            fields, values = self.receive(deadline)
        if fields.get("seq") != seq:
            raise WorkerProtocolError(f"a reply to request {fields.get('seq')!r} instead of {seq}")
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
                raise WorkerDied() from None

    def receive(self, deadline: float) -> tuple[dict, dict]:
        """Read one framed reply and decode it (values: data only, never ``Named``)."""
        limit = self.limits.message_bytes
        while True:
            if len(self.pending) >= channel.FRAME.size:
                (length,) = channel.FRAME.unpack_from(self.pending)
                if length > limit:
                    raise WorkerProtocolError(f"a reply of {length} bytes (at most {limit})")
                end = channel.FRAME.size + length
                if len(self.pending) >= end:
                    with memoryview(self.pending) as view:
                        body = bytes(view[channel.FRAME.size:end])
                    del self.pending[:end]
                    try:
                        fields, values = channel.unpack(body, allow_named=False, arena=self.resources.arena)
                    except channel.ChannelError as exc:
                        raise WorkerProtocolError(str(exc)) from None
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
                raise WorkerDied()
            self.pending += chunk

    def _wait(self, fd: int, event: int, deadline: float) -> None:
        """Block until ``fd`` is ready for ``event``, draining output meanwhile.

        A worker that dies while processes it started still hold its pipes open never closes
        them: without watching the process itself, that death would be waited out to the
        deadline and reported as a hang. The worker's process descriptor ends the wait when it exits.
        """
        res = self.resources
        pidfd = res.pidfd if res.pidfd is not None else res.exit_fd
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise WorkerTimeout()
            poller = select.poll()
            poller.register(fd, event)
            if self.output_fd >= 0:
                poller.register(self.output_fd, select.POLLIN)
            if pidfd is not None:
                poller.register(pidfd, select.POLLIN)
            ready = {r for r, _events in poller.poll(math.ceil(remaining * 1000))}
            if self.output_fd in ready:
                self.drain_output()
            if fd in ready:
                return
            if pidfd is not None and pidfd in ready:
                # Whatever it wrote before it died is read first; then its death is what happened.
                last = select.poll()
                last.register(fd, event)
                if last.poll(0):
                    return
                raise WorkerDied()

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

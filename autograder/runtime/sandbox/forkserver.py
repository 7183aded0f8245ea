"""Fork sandboxed workers from one long-lived sandbox instead of starting each.

Starting an interpreter and importing NumPy costs about 0.12 s of CPU, the
largest single share of grading a small submission. ``ForkServer`` starts
one bubblewrap sandbox per grading process running ``zygote.py``, which
imports NumPy once and forks a worker per session. Each worker still runs
under a fresh uid with its own ``/tmp``, ``/dev/shm``, work directory and
IPC namespace (see ``zygote.py``), and is killed by uid when its session
ends, so submissions see nothing of each other.

Only where the grader is root and bubblewrap works (the strongest level):
other levels have no per-submission uid to tell workers apart, and
``take`` returns ``None`` so sessions start their own workers as before.
If the server cannot start or dies, sessions fall back the same way.
"""
from __future__ import annotations

import json
import logging
import os
import resource
import select
import signal
import socket
import subprocess
import tempfile
import threading
import time
from typing import Any

from autograder.runtime.sandbox import channel, procs, worker, zygote
from autograder.runtime.sandbox import isolation as iso
from autograder.runtime.sandbox.errors import SandboxError
from autograder.runtime.sandbox.limits import Limits
from autograder.runtime.sandbox.process import LOADER, OutputBuffer, WorkerProcess, program_sources

logger = logging.getLogger(__name__)

#: The server's program: load channel, worker and zygote from their source text and serve.
BOOTSTRAP = LOADER + """\
channel = load("sandbox_channel", sys.argv[2])
worker = load("sandbox_worker", sys.argv[3])
load("sandbox_zygote", sys.argv[4]).serve(channel, worker, config)
"""
#: Longest wait for the server to start or to answer a fork request.
START_SECONDS = 20.0
FORK_SECONDS = 10.0
#: Starts of the server per grading process before giving up on it.
MAX_STARTS = 3


def _sandbox_pid(host_pid: int) -> int | None:
    """The pid ``host_pid`` has inside its own (innermost) PID namespace."""
    try:
        with open(f"/proc/{host_pid}/status") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return None


class ForkServer:
    """One sandbox that forks a fresh worker for each session; see the module docstring.

    Passed to ``SandboxSession(warm=...)`` like a ``WarmStart``. Thread-safe;
    ``close()`` stops the sandbox and every worker still in it.
    """

    #: Sessions use the server for restarts after a timeout or crash too.
    every_start = True

    def __init__(self, limits: Limits = Limits(), isolation: str = "auto") -> None:
        chosen = iso.detect_isolation() if isolation == "auto" else iso.check_level(isolation)
        self.level = chosen.level
        self.limits = limits
        self.usable = self.level == "bwrap" and iso.running_as_root()
        self._lock = threading.RLock()
        self._proc: subprocess.Popen | None = None
        self._control: socket.socket | None = None
        self._log: Any = None
        self._host_pid: int | None = None
        self._pidfd: int | None = None
        self._exits: dict[int, int] = {}
        self._seq = 0
        self._starts = 0
        # The server lives for the whole batch: no CPU limit of its own; each
        # worker sets its own after the fork. The other limits are inherited.
        settings = iso.rlimit_settings(limits, limits.max_processes)
        self._server_rlimits = [(kind, pair) for kind, pair in settings if kind != resource.RLIMIT_CPU]
        self._worker_rlimits = [[kind, *pair] for kind, pair in settings if kind == resource.RLIMIT_CPU]

    # -- the session's side ------------------------------------------------

    def take(self, level: str, limits: Limits) -> WorkerProcess | None:
        """A freshly forked worker, or ``None`` when the session should start its own."""
        if not self.usable or level != self.level or limits != self.limits:
            return None
        with self._lock:
            while self.usable:
                try:
                    if self._proc is None or self._proc.poll() is not None:
                        self._start()
                    worker_ = WorkerProcess(level, limits, OutputBuffer(limits.stdout_bytes))
                    worker_.launch(server=self)
                    # A worker that cannot get ready here is the server's fault,
                    # not the submission's: find out before handing it over.
                    worker_.handshake(time.monotonic() + FORK_SECONDS)
                    return worker_
                except SandboxError as exc:
                    logger.warning("sandbox fork server: %s", exc)
                    self._stop()
                    if self._starts >= MAX_STARTS:
                        logger.warning("sandbox fork server: giving up; each submission starts its own worker")
                        self.usable = False
        return None

    def refill(self) -> None:
        """Nothing to prepare: forking is the cheap part."""

    def close(self) -> None:
        """Stop the server's sandbox (and any worker left in it). Idempotent."""
        with self._lock:
            self._stop()
            self.usable = False

    # -- the worker's side (called by WorkerProcess) -----------------------------

    def fork(self, config: dict[str, Any], fds: tuple[int, ...], token: str) -> tuple[int, int]:
        """Fork a worker that talks over ``fds`` (its three pipe ends, and its arena if it has one);
        return its sandbox pid and a pidfd for it."""
        with self._lock:
            if self._control is None or self._host_pid is None:
                raise SandboxError("the fork server is not running")
            self._seq += 1
            request = {"op": "fork", "seq": self._seq, "config": config, "cwd": iso.SANDBOX_WORK,
                       "rlimits": self._worker_rlimits, "mounts": iso.scratch_mounts(self.limits, True),
                       "env": iso.worker_env(iso.SANDBOX_WORK, token)}
            try:
                socket.send_fds(self._control, [json.dumps(request).encode()], list(fds))
            except OSError as exc:
                raise SandboxError(f"the fork server stopped accepting requests ({exc})") from None
            seq = self._seq
            reply = self._receive(lambda m: m.get("op") == "error" or
                                  (m.get("op") == "forked" and m.get("seq") == seq), FORK_SECONDS)
            if reply.get("op") == "error":
                raise SandboxError(f"the fork server could not fork a worker: {reply.get('message')}")
            pid = reply.get("pid")
            if not isinstance(pid, int) or isinstance(pid, bool):
                raise SandboxError(f"the fork server sent a malformed reply: {reply}")
            self._exits.pop(pid, None)     # a pid number ended before may be in use again
            for child in procs.children(self._host_pid):
                if _sandbox_pid(child) == pid:
                    try:
                        return pid, os.pidfd_open(child)
                    except OSError:
                        break
            raise SandboxError(f"the worker ended as soon as it was forked (exit code "
                               f"{self._exits.get(pid)}){self._log_tail()}")

    def exit_code(self, sandbox_pid: int, wait: float) -> int | None:
        """How the worker with ``sandbox_pid`` ended, as ``Popen.returncode`` would say."""
        with self._lock:
            if sandbox_pid not in self._exits and self._control is not None:
                try:
                    self._receive(lambda m: m.get("op") == "exited" and m.get("pid") == sandbox_pid, wait)
                except SandboxError:
                    pass
            return self._exits.get(sandbox_pid)

    # -- internals ---------------------------------------------------------

    def _receive(self, wanted: Any, seconds: float) -> dict[str, Any]:
        """Read messages until one matches ``wanted``; exit notices are recorded on the way."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._control], [], [], remaining)[0]:
                raise SandboxError("the fork server did not answer in time")
            data = self._control.recv(1 << 16)
            if not data:
                raise SandboxError(f"the fork server ended{self._log_tail()}")
            try:
                message = json.loads(data)
            except ValueError:
                raise SandboxError("the fork server sent malformed data") from None
            if not isinstance(message, dict):
                raise SandboxError("the fork server sent malformed data")
            if message.get("op") == "exited" and isinstance(message.get("pid"), int) \
                    and isinstance(message.get("code"), int):
                self._exits[message["pid"]] = message["code"]
            if wanted(message):
                return message

    def _start(self) -> None:
        self._stop()
        self._starts += 1
        view = iso.runtime_view()
        env = iso.worker_env(iso.SANDBOX_WORK, "fork-server")
        prefix = iso.bwrap_arguments(view, self.limits, env, True, extra_caps=("CAP_SYS_ADMIN",))
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {"control": theirs.fileno(), "site": iso.SANDBOX_SITE}
        self._log = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(
                prefix + [view.executable, "-I", "-S", "-B", "-c", BOOTSTRAP, json.dumps(config),
                                *program_sources(channel, worker, zygote)],
                stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log, pass_fds=(theirs.fileno(),),
                cwd="/", env=env, close_fds=True, start_new_session=True,
                preexec_fn=iso.make_preexec(self._server_rlimits, subreaper=False))
        except (OSError, subprocess.SubprocessError) as exc:
            ours.close()
            raise SandboxError(f"the fork server could not be started: {exc}") from None
        finally:
            theirs.close()
        self._control = ours
        ready = self._receive(lambda m: m.get("op") == "ready", START_SECONDS)
        self._host_pid = self._find_server(ready.get("pid"))
        if self._host_pid is None:
            raise SandboxError("the fork server started, but its process could not be found")
        self._pidfd = os.pidfd_open(self._host_pid)

    def _find_server(self, sandbox_pid: Any) -> int | None:
        """The host pid of the server: below bwrap, with ``sandbox_pid`` in its namespace."""
        stack = procs.children(self._proc.pid)
        while stack:
            pid = stack.pop()
            if _sandbox_pid(pid) == sandbox_pid:
                return pid
            stack += procs.children(pid)
        return None

    def _log_tail(self) -> str:
        try:
            self._log.seek(0)
            tail = self._log.read()[-2000:].decode("utf-8", "replace").strip()
        except (OSError, AttributeError, ValueError):
            return ""
        return f":\n{tail}" if tail else ""

    def _stop(self) -> None:
        if self._control is not None:
            self._control.close()       # the server exits when its socket closes
            self._control = None
        if self._proc is not None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                logger.warning("sandbox fork server: bwrap %s did not end", self._proc.pid)
            self._proc = None
        if self._pidfd is not None:
            # bwrap is gone; its namespace's processes are killed by the kernel, not waited for.
            try:
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
                select.select([self._pidfd], [], [], 5.0)
            except OSError:
                pass
            os.close(self._pidfd)
            self._pidfd = None
        if self._log is not None:
            self._log.close()
            self._log = None
        self._host_pid = None
        self._exits.clear()

"""A fork server inside one bubblewrap sandbox: NumPy imported once, a fresh worker per submission.

Bulk grading (see ``forkserver.py``) starts this program once per grading
process instead of one interpreter per submission: starting Python and
importing NumPy was the largest share of grading a small submission. Like
``worker.py`` it is sent as source text and imports only the standard
library (and, through the worker, NumPy).

The zygote runs as root inside the sandbox, with no capability but
``CAP_SETUID``, ``CAP_SETGID`` and ``CAP_SYS_ADMIN``, and never runs a
student's code itself. For each ``fork`` request from the grader, which
arrives on a Unix socket together with the three pipe ends of the new
worker (and its shared arena), it forks a child that, before any student code runs:

* leaves the zygote's socket and signal set-up behind;
* gets a private mount, IPC and network namespace with fresh, empty ``/tmp``,
  ``/dev/shm`` and work directory (so nothing a previous submission wrote or
  created is visible, and everything it made disappears with its processes);
* sets the limits the grader sends (its CPU limit: the zygote's own is
  unlimited, as it lives for the batch);
* then becomes ``worker.main``, which switches to the fresh uid the grader
  reserved for this submission. Changing to a non-zero uid clears every
  capability, and ``no_new_privs`` keeps them from coming back.

The student's processes therefore share nothing with the zygote they could
use: a different uid (no signals, no ptrace, no ``/proc`` access to it), no
descriptor of its socket, and the zygote is marked not dumpable. The grader
kills a worker's processes by uid and learns exit statuses from the zygote,
which reaps its children.

Messages on the socket are JSON, one per datagram (``SOCK_SEQPACKET``).
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import socket
import sys
from types import ModuleType
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 2, 4, 1 << 14, 1 << 18
PR_SET_DUMPABLE, PR_SET_NO_NEW_PRIVS = 4, 38
MESSAGE_BYTES = 1 << 16

_libc = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _private_filesystems(mounts: list[list[Any]]) -> None:
    """New mount, IPC and network namespaces, with fresh tmpfs at each ``[path, mode, bytes]``.

    The network namespace is the worker's own (no interface but a loopback
    that is down): sockets, ports, their ``TIME_WAIT`` entries in
    ``/proc/net`` and abstract Unix socket names die with it, instead of
    staying visible to the next submission forked from this server.
    """
    _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET), "unshare")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    for path, mode, size in mounts:
        options = f"mode={int(mode):o},size={int(size)}".encode()
        _check(_libc.mount(b"tmpfs", str(path).encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options),
               f"mounting a tmpfs on {path}")


def _become_worker(worker: ModuleType, channel: ModuleType, request: dict[str, Any],
                   fds: list[int], keep_closed: list[int]) -> None:
    """In the forked child: set up, then serve as a worker. Never returns."""
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        for fd in keep_closed:
            os.close(fd)
        request_r, reply_w, output_w, *arena = fds
        os.dup2(output_w, 1)
        os.dup2(output_w, 2)
        os.close(output_w)
        devnull = os.open("/dev/null", os.O_RDONLY)
        os.dup2(devnull, 0)
        os.close(devnull)
        os.setsid()
        _private_filesystems(request["mounts"])
        os.chdir(request["cwd"])       # the old work directory is now hidden under the new one
        for kind, soft, hard in request["rlimits"]:    # the CPU limit: the server has none
            resource.setrlimit(int(kind), (int(soft), int(hard)))
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in request["env"].items()})
        config = dict(request["config"], requests=request_r, replies=reply_w, arena=arena[0] if arena else None)
    except BaseException:
        worker.setup_failed("sandbox worker")
    worker.main(channel, config)
    os._exit(0)


def _reap(control: socket.socket) -> None:
    """Collect ended children and tell the grader how each ended."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        code = os.waitstatus_to_exitcode(status)
        try:
            control.send(json.dumps({"op": "exited", "pid": pid, "code": code}).encode())
        except OSError:
            os._exit(0)


def serve(channel: ModuleType, worker: ModuleType, config: dict[str, Any]) -> None:
    """Entry point inside the sandbox; never returns."""
    try:
        control = socket.socket(fileno=config["control"])
        # No core dumps, no ptrace, no /proc/<pid>/mem for anyone but root outside.
        _check(_libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0), "not dumpable")
        worker.preimport()
        wake_r, wake_w = os.pipe()
        for fd in (wake_r, wake_w):
            os.set_blocking(fd, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        control.send(json.dumps({"op": "ready", "pid": os.getpid(), "uid": os.getuid()}).encode())
    except BaseException:
        worker.setup_failed("sandbox fork server")
    while True:
        try:
            ready = select.select([control, wake_r], [], [])[0]
        except InterruptedError:
            continue
        if wake_r in ready:
            try:
                while os.read(wake_r, 512):
                    pass
            except BlockingIOError:
                pass
            _reap(control)
        if control not in ready:
            continue
        try:
            data, fds, _flags, _addr = socket.recv_fds(control, MESSAGE_BYTES, 4)
        except OSError:
            os._exit(0)
        if not data:          # the grader closed its end: the batch is over
            os._exit(0)
        try:
            request = json.loads(data)
            if request.get("op") != "fork" or len(fds) not in (3, 4):
                raise ValueError("expected a fork request with three or four descriptors")
            pid = os.fork()
        except BaseException as exc:
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"op": "error", "message": f"{type(exc).__name__}: {exc}"}).encode())
            continue
        if pid == 0:
            _become_worker(worker, channel, request, fds, [control.fileno(), wake_r, wake_w])
        for fd in fds:
            os.close(fd)
        control.send(json.dumps({"op": "forked", "pid": pid, "seq": request.get("seq")}).encode())


if __name__ == "__main__":   # pragma: no cover - started through forkserver.BOOTSTRAP
    sys.exit("run through the grader's fork server")

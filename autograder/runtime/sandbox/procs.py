"""Finding and killing the processes a submission left behind, through ``/proc``.

Each isolation level has its own exact handle on the submission's processes:
a PID namespace under bubblewrap, a uid of its own where the grader runs as
root. Where neither exists (the ``rlimits`` level), the submission's
processes are recognised by session, ancestry, or the session token in
their command line or environment, which a determined program can shed:
that level is documented as best effort.
"""
from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Callable, Iterator


@dataclass(frozen=True)
class ProcessInfo:
    """What ``/proc/<pid>`` says about one live process."""

    pid: int
    ppid: int
    pgid: int
    sid: int
    uid: int
    state: str


def _read_info(pid: int) -> ProcessInfo | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read().decode("utf-8", "replace")
        with open(f"/proc/{pid}/status", "rb") as handle:
            status = handle.read().decode("utf-8", "replace")
    except OSError:   # the process ended while we looked
        return None
    # The command name in parentheses may hold spaces or ')', so split after the last one.
    fields = stat[stat.rfind(")") + 2:].split()
    uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "Uid: -1")
    return ProcessInfo(pid=pid, ppid=int(fields[1]), pgid=int(fields[2]), sid=int(fields[3]),
                       uid=int(uid_line.split()[1]), state=fields[0])


def _live_uid(pid: int) -> int | None:
    """The real uid of ``pid`` from its status file alone; ``None`` if it ended or is a zombie.

    The uid scans run twice per graded submission (reserving a uid, and
    checking that none of its processes is left), so they read one file per
    process instead of the two ``_read_info`` reads.
    """
    try:
        with open(f"/proc/{pid}/status", "rb") as handle:
            status = handle.read()
    except OSError:
        return None
    state = status.find(b"\nState:")
    uid = status.find(b"\nUid:")
    if state < 0 or uid < 0:
        return None
    if status[state + 7:state + 9].strip()[:1] in (b"Z", b"X"):
        return None
    try:
        return int(status[uid + 5:status.find(b"\n", uid + 5)].split()[0])
    except (ValueError, IndexError):
        return None


def _live_uids() -> Iterator[tuple[int, int]]:
    """``(pid, real uid)`` of every process that is not a zombie."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            pid = int(name)
            uid = _live_uid(pid)
            if uid is not None:
                yield pid, uid


def processes() -> Iterator[ProcessInfo]:
    """Every process that is not a zombie (zombies are already dead)."""
    for name in os.listdir("/proc"):
        if name.isdigit():
            info = _read_info(int(name))
            if info is not None and info.state not in ("Z", "X"):
                yield info


def task_count(uid: int) -> int:
    """Threads of ``uid`` on the machine: what ``RLIMIT_NPROC`` counts against."""
    count = 0
    for info in processes():
        if info.uid == uid:
            try:
                count += len(os.listdir(f"/proc/{info.pid}/task"))
            except OSError:
                pass
    return count


def uids_in_use() -> set[int]:
    """Real uids of the running processes."""
    return {uid for _pid, uid in _live_uids()}


def pid_namespace(pid: int) -> str | None:
    """The PID namespace of ``pid`` (like ``pid:[4026532]``), if readable."""
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def children(pid: int) -> list[int]:
    """Direct children of ``pid`` (all its threads'), from ``/proc``."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as handle:
                found.extend(int(p) for p in handle.read().split())
        except OSError:
            pass
    return found


def _cmdline_or_environ_has(pid: int, token: bytes) -> bool:
    for part in ("cmdline", "environ"):
        try:
            with open(f"/proc/{pid}/{part}", "rb") as handle:
                if token in handle.read():
                    return True
        except OSError:
            pass
    return False


def related(root_pid: int, token: str) -> list[int]:
    """Processes that belong to the worker started as ``root_pid``.

    A process belongs if it is in the worker's session or process group, descends
    from it, or carries the session token in its command line or environment.
    The grader itself and its ancestors never match.
    """
    own = {os.getpid()}
    pid = os.getppid()
    while pid > 1 and pid not in own:
        own.add(pid)
        info = _read_info(pid)
        pid = info.ppid if info else 0
    table = {info.pid: info for info in processes()}
    marker = token.encode()
    found = set()
    for info in table.values():
        if info.pid in own:
            continue
        if root_pid in (info.pid, info.sid, info.pgid) or _descends(info, root_pid, table) \
                or _cmdline_or_environ_has(info.pid, marker):
            found.add(info.pid)
    return sorted(found)


def _descends(info: ProcessInfo, ancestor: int, table: dict[int, ProcessInfo]) -> bool:
    seen = set()
    while info.ppid in table and info.ppid not in seen:
        if info.ppid == ancestor:
            return True
        seen.add(info.ppid)
        info = table[info.ppid]
    return info.ppid == ancestor


def in_namespace(namespace: str) -> list[int]:
    """Processes in the PID namespace ``namespace``."""
    return [info.pid for info in processes() if pid_namespace(info.pid) == namespace]


def of_uid(uid: int) -> list[int]:
    """Processes whose real uid is ``uid``."""
    return [pid for pid, owner in _live_uids() if owner == uid]


def kill_all_of_uid(uid: int) -> None:
    """Send SIGKILL to every process of ``uid`` in one atomic sweep.

    A child process becomes ``uid`` and calls ``kill(-1, SIGKILL)``, which
    the kernel delivers to all processes that user may signal while holding
    the task list lock, so a fork bomb cannot outrun it. Needs root.
    """
    pid = os.fork()
    if pid == 0:   # the child only makes system calls, then leaves without cleanup
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def kill_pids(pids: list[int]) -> None:
    """SIGKILL each of ``pids``, ignoring those already gone."""
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def kill_until_gone(find: Callable[[], list[int]], kill: Callable[[list[int]], None],
                    timeout: float = 5.0) -> list[int]:
    """Kill what ``find`` returns until it returns nothing; return the survivors, if any."""
    deadline = time.monotonic() + timeout
    while True:
        left = find()
        if not left or time.monotonic() > deadline:
            return left
        kill(left)
        time.sleep(0.01)

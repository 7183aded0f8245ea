"""What a sandboxed worker could reach at the ``user`` level, where no namespace hides anything.

At that level the worker runs as a fresh uid with no groups: it can read
every world-readable file and write in every world-writable directory. Two
things follow, and this module does both:

- before any student code runs, :func:`readable_by_stranger` checks, as such
  a uid, that the references, hidden tests, secret and other submissions are
  not readable; grading refuses otherwise (``policy.py``);
- after each submission, :func:`remove_traces_of` deletes whatever its uid
  left behind: files and directories in every world-writable directory of the
  machine (found once per process by :func:`world_writable_dirs`), and its
  System V shared memory, message queues and semaphores.
"""
from __future__ import annotations

import ctypes
import json
import logging
import os
import stat
import threading
from pathlib import Path

from autograder.runtime.sandbox.trees import remove_tree
from typing import Iterable

from autograder.runtime.sandbox import isolation as iso

logger = logging.getLogger(__name__)

#: Files and folders a probe looks at, at most, under one path. A folder the stranger
#: cannot enter costs one look, so only folders left open to other users come near it; past
#: it the path counts as readable (the probe fails closed: once a shared budget ran out and
#: the references, checked last, were never looked at).
PROBE_FILES = 20000
#: Filesystems whose directories are not places a process leaves files in.
_VIRTUAL = ("/proc", "/sys")
#: ``/proc/sysvipc`` files and the name of their identifier column.
_IPC_KINDS = (("shm", "shmid"), ("msg", "msqid"), ("sem", "semid"))
_IPC_RMID = 0
#: Where POSIX message queues show as files, when the mqueue filesystem is mounted.
MQUEUE_DIR = "/dev/mqueue"
_LIBC = ctypes.CDLL(None, use_errno=True)


def _readable(path: Path) -> bool:
    try:
        if path.is_dir():
            os.listdir(path)
            return False            # names alone are no leak; the files are checked one by one
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.read(fd, 1)
        finally:
            os.close(fd)
        return True
    except OSError:
        return False


def _probe(paths: list[str]) -> list[str]:
    """Readable files under ``paths`` (run as the stranger); a path too large to check whole
    is itself listed, as if readable."""
    found = []
    for raw in paths:
        stack, seen = [Path(raw)], 0
        while stack:
            if seen >= PROBE_FILES:
                found.append(raw)
                break
            path = stack.pop()
            seen += 1
            try:
                if path.is_symlink():
                    continue
                if path.is_file() and _readable(path):
                    found.append(str(path))
                elif path.is_dir():
                    stack.extend(sorted(path.iterdir()))
            except OSError:     # cannot even look (a parent it may not enter): nothing to read here
                continue
    return found


def readable_by_stranger(paths: Iterable[str | Path]) -> list[str]:
    """The files under ``paths`` that a fresh uid without groups can read.

    Needs root (to become that uid in a child process); elsewhere every path
    counts as readable, since the worker would run as the grader's own user.
    """
    # A guarded path given through a link (the class folder, the zip) is checked at its
    # target as well: the worker reads straight through the link. Links below them are not
    # followed, as their targets are checked wherever they are guarded themselves.
    given = [Path(p) for p in paths if os.path.lexists(p)]
    paths = list(dict.fromkeys([str(p) for p in given] + [str(p.resolve()) for p in given]))
    if not paths:
        return []
    if not iso.running_as_root():
        return paths
    uid = iso.reserve_uid()
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:      # the child: become the stranger, look, report, exit
            try:
                os.close(read_end)
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                data = json.dumps(_probe(paths)).encode()
                while data:
                    data = data[os.write(write_end, data):]
                os._exit(0)
            except BaseException:
                os._exit(1)
        os.close(write_end)
        chunks = []
        while chunk := os.read(read_end, 1 << 16):
            chunks.append(chunk)
        _, status = os.waitpid(pid, 0)
    finally:
        os.close(read_end)
        iso.release_uid(uid)
    if os.waitstatus_to_exitcode(status) != 0:
        return paths     # the probe itself failed: assume the worst
    return list(dict.fromkeys(json.loads(b"".join(chunks))))


_writable: tuple[str, ...] | None = None
_writable_lock = threading.Lock()


def world_writable_dirs() -> tuple[str, ...]:
    """Every world-writable directory a stranger can reach on this machine (scanned once per process).

    A uid with no groups can write only there, and in the directories it
    makes there. Virtual filesystems (``/proc``, ``/sys``) are skipped;
    ``/dev/shm`` and ``/dev/mqueue`` are found like any other.
    """
    global _writable
    with _writable_lock:
        if _writable is None:
            _writable = tuple(sorted(writable_below("/")))
        return _writable


def writable_below(top: str) -> list[str]:
    """The world-writable directories under ``top`` that a uid with no groups can reach.

    A folder others may not search (no ``o+x``, such as ``/root`` or a 0700
    temporary folder) is not entered: the worker's uid cannot open any path
    through it, so nothing below it can hold its files. Skipping those
    folders is what keeps the walk short (a Python install or a virtual
    environment under one holds tens of thousands of folders).
    """
    found, stack = [], [top]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.path in _VIRTUAL:
                continue
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                mode = entry.stat(follow_symlinks=False).st_mode
            except OSError:
                continue
            if mode & stat.S_IWOTH:
                found.append(entry.path)
            if mode & stat.S_IXOTH:
                stack.append(entry.path)
    return found


def _remove(path: str) -> None:
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            remove_tree(path)         # any depth: a recursive removal stops on a deep enough chain
        else:
            os.unlink(path)
    except OSError:
        pass


def remove_files_of(uid: int, folders: Iterable[str]) -> list[str]:
    """Delete every entry of ``folders`` owned by ``uid``; return what was removed."""
    removed = []
    for folder in folders:
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.stat(follow_symlinks=False).st_uid != uid:
                    continue
            except OSError:
                continue
            _remove(entry.path)
            removed.append(entry.path)
    return removed


def _ipc_objects(kind: str, id_column: str) -> list[tuple[int, int, int]]:
    """``(id, owner uid, creator uid)`` of each System V object of ``kind`` (``/proc/sysvipc``)."""
    try:
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
    except OSError:
        return []
    header = lines[0].split() if lines else []
    if not {id_column, "uid", "cuid"} <= set(header):
        logger.warning("sandbox: /proc/sysvipc/%s has no %s, uid and cuid columns (found %s): the "
                       "submission's IPC objects of that kind cannot be found and removed", kind, id_column, header)
        return []
    columns = [header.index(name) for name in (id_column, "uid", "cuid")]
    found = []
    for line in lines[1:]:
        fields = line.split()
        try:
            found.append(tuple(int(fields[c]) for c in columns))
        except (ValueError, IndexError):
            continue
    return found


def remove_ipc_of(uid: int) -> list[str]:
    """Remove the System V shared memory, message queues and semaphores ``uid`` created or owns,
    and its POSIX message queues; return what was removed (``shm 3``, ``/dev/mqueue/name``...)."""
    ctls = {"shm": _LIBC.shmctl, "msg": _LIBC.msgctl, "sem": _LIBC.semctl}
    removed = []
    for kind, id_column in _IPC_KINDS:
        for ident, owner, creator in _ipc_objects(kind, id_column):
            if uid not in (owner, creator):
                continue
            # A detached segment is only marked for removal while attached; its
            # attachers are the submission's processes, killed before this runs.
            done = ctls[kind](ident, 0, _IPC_RMID) if kind == "sem" else ctls[kind](ident, _IPC_RMID, None)
            if done == 0:
                removed.append(f"{kind} {ident}")
    removed += remove_files_of(uid, [MQUEUE_DIR] if os.path.ismount(MQUEUE_DIR) else [])
    return removed


def remove_traces_of(uid: int) -> list[str]:
    """Everything ``uid`` left in world-writable places, and its IPC objects, removed."""
    removed = remove_files_of(uid, world_writable_dirs())
    return removed + remove_ipc_of(uid)

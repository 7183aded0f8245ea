"""Removing a folder tree a submission made, however deep or odd it is.

``shutil.rmtree`` recurses once per level and builds full paths: a chain of a few
thousand nested folders raises ``RecursionError`` (not an ``OSError``, so
``ignore_errors`` does not catch it) or ``ENAMETOOLONG``, and the tree outlives the
submission that made it. Here the walk is a loop that holds one directory
descriptor at a time and names each entry relative to it, so neither depth nor
path length limits it, and links are removed, never followed.
"""
from __future__ import annotations

import os
import stat

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _open_dir(name: str, dir_fd: int | None) -> int:
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def _clear_files(fd: int) -> tuple[list[str], bool]:
    """Unlink every non-folder entry of the folder open at ``fd``; return its subfolders, and
    whether every file went."""
    folders, complete = [], True
    try:
        with os.scandir(fd) as entries:
            listed = [(e.name, _is_folder(e)) for e in entries]
    except OSError:
        return [], False
    for name, is_folder in listed:
        if is_folder:
            folders.append(name)
            continue
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        except OSError:
            _writable(fd)
            try:
                os.unlink(name, dir_fd=fd)
            except OSError:
                complete = False
    return folders, complete


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _writable(fd: int) -> None:
    # The student may have made its folders read-only; their owner (or root) can undo that.
    try:
        os.fchmod(fd, stat.S_IRWXU)
    except OSError:
        pass


def remove_tree(path: str) -> bool:
    """Delete the folder ``path`` and everything below it; True if nothing of it is left.

    Entries that cannot be removed are left in place (and make the result False);
    the walk never stops early on them and never raises for them.
    """
    try:
        fd = _open_dir(path, None)
    except OSError:
        try:
            os.unlink(path)                   # a file or a link where a folder was expected
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False
    _writable(fd)
    names: list[str] = []                     # the folders descended into, from ``path`` down
    folders, complete = _clear_files(fd)
    pending: list[list[str]] = [folders]      # per level, subfolders still to remove
    while True:
        if pending[-1]:
            name = pending[-1].pop()
            try:
                child = _open_dir(name, fd)
            except OSError:
                complete = False
                continue
            _writable(child)
            os.close(fd)
            fd = child
            names.append(name)
            folders, cleared = _clear_files(fd)
            complete = complete and cleared
            pending.append(folders)
            continue
        # This folder is as empty as it will get: go up and remove it.
        if not names:
            os.close(fd)
            break
        try:
            parent = _open_dir("..", fd)
        except OSError:
            os.close(fd)
            return False
        os.close(fd)
        fd = parent
        pending.pop()
        try:
            os.rmdir(names.pop(), dir_fd=fd)
        except OSError:
            complete = False
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return complete

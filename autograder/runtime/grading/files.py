"""Writing a graded folder's files so that a reader never sees half of one, and no other user any.

Everything written here is its owner's alone: folders 0700, files 0600, whatever the umask.
A graded folder names every student (ids are often e-mail addresses) and holds their grades;
at the ``user`` isolation level student code runs as another user of this machine, and a
folder it could list would tell a later submission who else is in the class.
"""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path


#: Mode of every folder the grader creates for its output: its owner's alone.
PRIVATE_DIR = 0o700


def private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parent as folders only their owner can enter; return it.

    An existing folder is left as it is (one ``mkdir`` call finds it): the instructor may
    have made it, and chose its mode. The mode of a new one is set after creating it, as the
    umask may have taken bits off (or left group and other bits on).
    """
    path = Path(path)
    try:
        os.mkdir(path, PRIVATE_DIR)
    except FileExistsError:
        return path
    except FileNotFoundError:
        private_dir(path.parent)
        try:
            os.mkdir(path, PRIVATE_DIR)
        except FileExistsError:      # made meanwhile by another writer
            return path
    os.chmod(path, PRIVATE_DIR)
    return path


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` to ``path`` through a temporary file renamed over it; the file is 0600
    (``mkstemp``'s mode) and a missing folder is made 0700. ``text`` may come in pieces (an
    iterable of strings), so that a file of a hundred thousand rows is never one string in memory."""
    private_dir(path.parent)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        # Text keeps its own line ends. Text from a submission can hold lone surrogates (an escaped
        # one in its JSON, or a file name that is not UTF-8): they are written as ``\udce9`` escapes
        # rather than stopping the whole batch at the first such student.
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            for piece in ((text,) if isinstance(text, str) else text):
                handle.write(piece)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

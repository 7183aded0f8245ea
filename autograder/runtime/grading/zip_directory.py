"""A zip's central directory, read by hand before ``zipfile`` reads it.

``zipfile`` decodes every entry's extra field when it opens an archive, in time that grows with the
square of the field's size: a student's zip of many entries, each with a 64 KiB extra field of empty
records, costs the grader about a third of a CPU second per megabyte before any limit of ours is
checked. The directory's own fixed-size headers say how many entries there are and how long each
extra field is, so a zip that would cost that much is refused after reading those headers alone.
"""
from __future__ import annotations

import struct
from pathlib import Path

_END = b"PK\x05\x06"            # end of central directory record
_ENTRY = b"PK\x01\x02"          # central directory file header
_END_SIZE, _ENTRY_SIZE = 22, 46
#: An entry's extra field longer than this is refused: real archivers write a few dozen bytes
#: (timestamps, Unicode names, zip64 sizes).
MAX_EXTRA_BYTES = 4096


def directory_problem(path: Path, max_entries: int | None = None, max_extra: int = MAX_EXTRA_BYTES) -> str:
    """Why ``path`` must not be opened with ``zipfile`` ('' when its directory is ordinary, or when
    it is no zip at all: ``zipfile`` then says so itself). ``max_entries``: refuse more entries."""
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, 2)
            tail_start = max(0, size - (_END_SIZE + 0xFFFF))
            handle.seek(tail_start)
            tail = handle.read()
            at = tail.rfind(_END)
            if at < 0 or len(tail) - at < _END_SIZE:
                return ""
            _, _, _, entries, directory_size, directory_offset, _ = struct.unpack("<HHHHIIH", tail[at + 4:at + _END_SIZE])
            if max_entries is not None and entries > max_entries:
                return f"it holds {entries} files; at most {max_entries} are accepted"
            if directory_offset + directory_size > size:
                return ""                   # inconsistent: zipfile refuses it as a bad zip
            handle.seek(directory_offset)
            directory = handle.read(directory_size)
    except OSError:
        return ""
    position = 0
    while position + _ENTRY_SIZE <= len(directory) and directory[position:position + 4] == _ENTRY:
        name_length, extra_length, comment_length = struct.unpack("<HHH", directory[position + 28:position + 34])
        if extra_length > max_extra:
            return f"an entry carries {extra_length} bytes of extra data (archivers write a few dozen)"
        position += _ENTRY_SIZE + name_length + extra_length + comment_length
    return ""

"""A zip's central directory, read as ``zipfile`` will read it, before ``zipfile`` reads it.

Opening an archive, ``zipfile`` reads the whole central directory into memory, makes an object per
entry and decodes every entry's extra field (in time that grows with the square of the field's
size). All of that is the student's choice: millions of tiny entries, or 64 KiB extra fields, cost
the grader gigabytes or minutes before any limit of ours is checked.

A check that finds the directory another way than ``zipfile`` does protects nothing: an end record
pointing at a harmless directory while the bytes ``zipfile`` computes (its shift for data
prepended to the archive, its ZIP64 records) hold the heavy one. So the directory is located by
``zipfile``'s own end-record reader and the same arithmetic as ``ZipFile._RealGetContents``, and
its size, its entry count and every extra field are bounded before ``zipfile`` opens the file.
"""
from __future__ import annotations

import struct
import zipfile
from pathlib import Path

_ENTRY = b"PK\x01\x02"          # central directory file header
_ENTRY_SIZE = 46
#: An entry's extra field longer than this is refused: real archivers write a few dozen bytes
#: (timestamps, Unicode names, zip64 sizes).
MAX_EXTRA_BYTES = 4096
#: A central directory larger than this is refused. An LMS download of a class of 1,000 (a few
#: files each) has one of a few hundred kilobytes; ``zipfile`` holds about ten times the
#: directory's size in memory while it reads it.
MAX_DIRECTORY_BYTES = 4 * 1024 * 1024


def _directory_as_zipfile_finds_it(handle) -> tuple[int, int] | None:
    """(start, size) of the central directory exactly where ``zipfile`` will read it, or ``None``
    when ``zipfile`` will refuse the file as no zip (it then costs nothing)."""
    try:
        # The reader ``ZipFile`` itself calls (a private name, stable since Python 2): whatever it
        # makes of comments, several end records or ZIP64 records, this check makes of them too.
        end = zipfile._EndRecData(handle)
    except (OSError, struct.error, ValueError):
        return None
    if not end:
        return None
    size, offset = end[zipfile._ECD_SIZE], end[zipfile._ECD_OFFSET]
    shift = end[zipfile._ECD_LOCATION] - size - offset
    if end[zipfile._ECD_SIGNATURE] == zipfile.stringEndArchive64:
        shift -= zipfile.sizeEndCentDir64 + zipfile.sizeEndCentDir64Locator
    start = offset + shift
    return (start, size) if start >= 0 else None


def directory_problem(path: Path, max_entries: int | None = None, max_extra: int = MAX_EXTRA_BYTES,
                      max_directory: int = MAX_DIRECTORY_BYTES) -> str:
    """Why ``path`` must not be opened with ``zipfile`` ('' when its directory is ordinary, or when
    it is no zip at all: ``zipfile`` then says so itself, at no cost). ``max_entries``: refuse more
    entries than that."""
    try:
        with open(path, "rb") as handle:
            found = _directory_as_zipfile_finds_it(handle)
            if found is None:
                return ""
            start, size = found
            if size > max_directory:
                return (f"its list of files is {size:,} bytes long (a class's download has one of a few "
                        f"hundred kilobytes; at most {max_directory:,} are read)")
            handle.seek(start)
            directory = handle.read(size)
    except OSError:
        return ""
    # The entries as ``zipfile`` walks them: until ``size`` bytes are consumed; a header that is not
    # an entry's makes ``zipfile`` refuse the file at once.
    position, entries = 0, 0
    while position < len(directory):
        header = directory[position:position + _ENTRY_SIZE]
        if len(header) < _ENTRY_SIZE or header[:4] != _ENTRY:
            return ""
        name_length, extra_length, comment_length = struct.unpack("<HHH", header[28:34])
        if extra_length > max_extra:
            return f"an entry carries {extra_length} bytes of extra data (archivers write a few dozen)"
        entries += 1
        position += _ENTRY_SIZE + name_length + extra_length + comment_length
    if max_entries is not None and entries > max_entries:
        return f"it holds {entries} files; at most {max_entries} are accepted"
    return ""

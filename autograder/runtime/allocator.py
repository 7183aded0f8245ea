"""Let a grading process reuse the memory it frees instead of returning it to the system.

The hidden tests and the references make fresh arrays of a 50,000-token
vocabulary's logits (1.6 MB) over and over. With glibc's defaults every such
array is a new mapping, or heap the allocator has just given back, and
touching it faults in about 400 fresh pages: that cost ten times the
arithmetic on those arrays. Raising the mapping and trimming thresholds
keeps freed blocks for the next array of the same size. The process then
holds on to its peak working set, a few tens of MB here.

The sandbox worker does the same for the student's code (``worker.py``
cannot import this module: it is sent into the sandbox as source text).
"""
from __future__ import annotations

import ctypes
import ctypes.util

#: ``mallopt`` parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: Blocks below this size come from the heap, which is kept up to ``TRIM_BYTES`` free.
MMAP_BYTES = 64 << 20
TRIM_BYTES = 256 << 20


def keep_freed_memory() -> bool:
    """Set this process's allocator to keep freed memory; ``False`` where there is no glibc ``mallopt``."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_BYTES)) and bool(mallopt(M_TRIM_THRESHOLD, TRIM_BYTES))

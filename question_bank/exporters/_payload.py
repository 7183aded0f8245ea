"""Obfuscated answer payloads for practice pages and notebooks.

Self-checking practice material has to carry its answers. They are stored
XOR-ed with a keystream and base64-encoded so that they cannot be read in
the page source or notebook JSON at a glance. This is obfuscation, not
security: anyone who runs the decoder gets the answers, which is acceptable
for practice and is why exams never use these formats.

The keystream is a 32-bit xorshift generator seeded with the FNV-1a hash of
a key string; the self-check page's script implements the same two functions
(``fnv1a`` and ``xorshift``) so both sides decode alike. Standard library
only: the practice notebook embeds this module's source.
"""
from __future__ import annotations

import base64
import json
from typing import Any

_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193
_MASK = 0xFFFFFFFF


def fnv1a(text: str) -> int:
    """32-bit FNV-1a hash of the UTF-8 bytes of ``text`` (never 0, so xorshift can start)."""
    h = _FNV_OFFSET
    for byte in text.encode("utf-8"):
        h = ((h ^ byte) * _FNV_PRIME) & _MASK
    return h or 1


def keystream(key: str, n: int) -> bytes:
    """``n`` pseudo-random bytes from xorshift32 seeded with ``fnv1a(key)``."""
    state = fnv1a(key)
    out = bytearray()
    for _ in range(n):
        state ^= (state << 13) & _MASK
        state ^= state >> 17
        state ^= (state << 5) & _MASK
        out.append(state & 0xFF)
    return bytes(out)


def encode_payload(data: Any, key: str) -> str:
    """JSON ``data`` -> base64 text of its UTF-8 bytes XOR-ed with ``keystream(key)``."""
    raw = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    mixed = bytes(b ^ k for b, k in zip(raw, keystream(key, len(raw))))
    return base64.b64encode(mixed).decode("ascii")


def decode_payload(text: str, key: str) -> Any:
    """Inverse of :func:`encode_payload`."""
    mixed = base64.b64decode(text)
    raw = bytes(b ^ k for b, k in zip(mixed, keystream(key, len(mixed))))
    return json.loads(raw.decode("utf-8"))

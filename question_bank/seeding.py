"""Deterministic seeds for variants and for students.

Seeds come from cryptographic hashes of their ingredients, never from
Python's salted ``hash()``, so they are the same in every process. They are
kept below 2**53 so that JavaScript (self-check pages) reads them exactly.
"""
from __future__ import annotations

import hashlib
import hmac

#: Seeds are integers in [0, 2**SEED_BITS).
SEED_BITS = 52


def _to_seed(digest: bytes) -> int:
    return int.from_bytes(digest[:8], "big") >> (64 - SEED_BITS)


def variant_seed(root_seed: int, family: str, index: int) -> int:
    """Seed of the ``index``-th variant of ``family`` in a set drawn from ``root_seed``.

    Hashing the family name in keeps families independent: adding a family
    or asking for more variants never changes the others.
    """
    message = f"lmhead-question/{int(root_seed)}/{family}/{int(index)}".encode()
    return _to_seed(hashlib.sha256(message).digest())


def student_seed(student_id: str, salt: str, seed: int = 0) -> int:
    """A student's root seed: HMAC-SHA256 keyed by the secret ``salt``.

    Without the salt nobody can recompute a classmate's set from their id;
    ``seed`` lets an instructor draw several different sets with one salt.
    """
    message = f"{int(seed)}/{student_id}".encode()
    return _to_seed(hmac.new(salt.encode(), message, hashlib.sha256).digest())

"""Fingerprints of a token stream by winnowing (Schleimer, Wilkerson and Aiken, SIGMOD 2003).

Every run of ``k`` consecutive tokens (a k-gram) is hashed; from every window
of ``w`` consecutive hashes the smallest is kept (the rightmost one on ties),
each kept once. Two token streams that share a run of at least
``w + k - 1`` tokens then share at least one fingerprint, and a run shorter
than ``k`` tokens is never seen, which keeps the one-line idioms every
student writes (``return x @ W + b``) below the noise floor by construction.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

#: Tokens per k-gram: about a line and a half of Python.
K = 12
#: Hashes per winnowing window. 1 keeps every k-gram, so that every shared run of ``K`` tokens is
#: found: a class is small enough to afford it, and with a wider window a rare region shorter than
#: ``K + W - 1`` tokens (a one-line function differing from the obvious one by a token) can go unseen,
#: its window's minimum falling on a k-gram much of the class shares.
W = 1


@dataclass(frozen=True)
class Fingerprint:
    """A kept k-gram hash and the index of the k-gram's first token."""

    hash: int
    position: int


@lru_cache(maxsize=65536)
def _token_hash(text: str) -> int:
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big")


#: The odd multiplier of the polynomial k-gram hash (any odd 64-bit constant; this is splitmix64's).
_BASE = np.uint64(0x9E3779B97F4A7C15)


def kgram_array(texts: list[str] | tuple[str, ...], k: int = K) -> np.ndarray:
    """The hash of every k-gram of ``texts``, in order, as unsigned 64-bit integers (empty under ``k`` tokens).

    Each token is hashed once with blake2b, so a fingerprint means the same
    thing across submissions, reruns and machines; a k-gram's hash is the
    polynomial of its tokens' hashes modulo 2**64, mixed by splitmix64's
    finaliser so that every bit depends on every token. Computed for all
    k-grams at once, it costs microseconds per submission where hashing
    each k-gram's text cost a millisecond.
    """
    count = len(texts) - k + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    tokens = np.fromiter((_token_hash(t) for t in texts), dtype=np.uint64, count=len(texts))
    h = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(k):
            h = h * _BASE + tokens[j:j + count]
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
    return h


def kgram_hashes(texts: list[str], k: int = K) -> list[int]:
    """The hash of every k-gram of ``texts``, in order (none when there are fewer than ``k`` tokens)."""
    return kgram_array(texts, k).tolist()


def winnow(hashes: list[int], w: int = W) -> list[Fingerprint]:
    """The fingerprints winnowing keeps from ``hashes`` (see the module docstring)."""
    if not hashes:
        return []
    if len(hashes) <= w:
        low = min(range(len(hashes)), key=lambda i: (hashes[i], -i))
        return [Fingerprint(hashes[low], low)]
    kept: list[Fingerprint] = []
    low = -1
    for end in range(w - 1, len(hashes)):
        start = end - w + 1
        if low < start:            # the last minimum left the window: look at the whole window
            low = min(range(start, end + 1), key=lambda i: (hashes[i], -i))
        elif hashes[end] <= hashes[low]:
            low = end
        else:
            continue
        kept.append(Fingerprint(hashes[low], low))
    return kept

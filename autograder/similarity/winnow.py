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


def kgram_hashes(texts: list[str], k: int = K) -> list[int]:
    """The hash of every k-gram of ``texts``, in order (none when there are fewer than ``k`` tokens).

    blake2b gives the same hashes in every run and on every machine, so a
    fingerprint means the same thing across submissions and reruns.
    """
    out = []
    for start in range(len(texts) - k + 1):
        data = "\x1f".join(texts[start:start + k]).encode("utf-8", "surrogatepass")
        out.append(int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big"))
    return out


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

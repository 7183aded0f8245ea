"""Every pair's shared unusual code at once, from an inverted index of the class's fingerprints.

Comparing 1,000 submissions pair by pair is half a million pairs; most share
nothing but the obvious code. The index lists, for every distinct fingerprint
of the class, the submissions holding it, so a submission meets only the
submissions it shares a weighted fingerprint with, and all of them at once: its
fingerprints' weights are laid out along its tokens, one row per partner, the
ones the partner lacks zeroed, and a sliding maximum over ``k`` tokens gives
each token's coverage (the heaviest shared fingerprint covering it) for every
partner in a few array operations. The numbers are the ones
``autograder.similarity.compare`` defines; only how they are computed differs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Most partner rows times tokens held at once (float64): about 16 MB, whatever the class.
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True, eq=False)
class ClassIndex:
    """The class's distinct fingerprints, who holds each, and what each weighs as evidence."""

    ids: tuple[np.ndarray, ...]         # per submission: each fingerprint's id (into ``weight``)
    positions: tuple[np.ndarray, ...]   # per submission: each fingerprint's first token
    lengths: tuple[int, ...]            # per submission: tokens
    holder_start: np.ndarray            # (ids + 1,) CSR offsets into ``holder_doc``
    holder_doc: np.ndarray              # submissions holding each id, ascending within an id
    in_base: np.ndarray                 # (ids,) bool: a k-gram of the starter code
    weight: np.ndarray                  # (ids,) float64: 0 for base and common fingerprints
    k: int

    def holders(self, fid: int) -> np.ndarray:
        return self.holder_doc[self.holder_start[fid]:self.holder_start[fid + 1]]

    def token_weights(self, doc: int) -> np.ndarray:
        """(tokens,) the weight of the fingerprint starting at each token (0 where none does)."""
        out = np.zeros(self.lengths[doc])
        np.maximum.at(out, self.positions[doc], self.weight[self.ids[doc]])
        return out


def build_index(hashes: list[np.ndarray], positions: list[np.ndarray], lengths: list[int], base: np.ndarray,
                common_limit: int, k: int) -> ClassIndex:
    """Index a class: ``hashes[d]``/``positions[d]`` are submission ``d``'s fingerprints."""
    n = len(hashes)
    every = np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.uint64)
    owner = np.repeat(np.arange(n, dtype=np.int64), [len(h) for h in hashes])
    distinct, fid = np.unique(every, return_inverse=True)
    held = np.unique(fid.astype(np.int64) * max(n, 1) + owner)       # one (id, submission) per holding, sorted
    held_id, held_doc = held // max(n, 1), held % max(n, 1)
    counts = np.bincount(held_id, minlength=len(distinct))
    start = np.concatenate([[0], np.cumsum(counts)])
    in_base = np.isin(distinct, base)
    with np.errstate(divide="ignore"):
        weight = (np.ones(len(distinct)) if n <= 2
                  else np.minimum(1.0, np.log(n / np.maximum(counts, 1)) / math.log(n / 2)))
    weight[in_base | (counts > common_limit)] = 0.0
    split = np.cumsum([len(h) for h in hashes])[:-1]
    return ClassIndex(tuple(np.split(fid.astype(np.int64), split)), tuple(positions), tuple(lengths),
                      start, held_doc, in_base, weight, k)


def coverage(weights: np.ndarray, k: int) -> np.ndarray:
    """(rows, tokens): each token's heaviest fingerprint among those starting up to ``k - 1`` tokens before it.

    The maximum over a window doubles in width with each pass, and one last pass joins two
    overlapping windows into one of ``k``: four array passes for ``k = 12`` where shifting one
    token at a time takes eleven.
    """
    out = weights.copy()
    width = 1                       # ``out`` holds the maximum over the ``width`` tokens ending at each token
    while 2 * width <= k:
        if width < out.shape[-1]:
            np.maximum(out[..., width:], out[..., :-width], out=out[..., width:])   # numpy buffers the overlap
        width *= 2
    rest = k - width                # 0 <= rest < width: a window of ``width`` ending ``rest`` tokens back
    if 0 < rest < out.shape[-1]:
        joined = out.copy()
        np.maximum(joined[..., rest:], out[..., :-rest], out=joined[..., rest:])
        out = joined
    return out


@dataclass(frozen=True, eq=False)
class Side:
    """One submission's side of its pairs: for each partner, what of its code the partner also holds."""

    partners: np.ndarray      # (P,) submission indices, ascending
    matched: np.ndarray       # (P,) weight of this side's tokens covered by fingerprints both hold
    tokens: np.ndarray        # (P,) tokens so covered
    covered: np.ndarray       # (P, tokens) bool, which tokens
    units: np.ndarray         # (P, functions) matched weight per function (see ``function_ranges``)


def side(index: ClassIndex, doc: int, function_ranges: list[tuple[int, int]]) -> Side:
    """``doc``'s side of every pair it is in (partners sharing a weighted fingerprint with it)."""
    ids, positions, length = index.ids[doc], index.positions[doc], index.lengths[doc]
    weighted = np.unique(ids[index.weight[ids] > 0])
    starts, ends = index.holder_start[weighted], index.holder_start[weighted + 1]
    sizes = ends - starts
    rows = np.repeat(np.arange(len(weighted)), sizes)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    partner_of = index.holder_doc[np.repeat(starts, sizes) + offsets]
    keep = partner_of != doc
    partners, row_of = np.unique(partner_of[keep], return_inverse=True)
    units = np.zeros((len(partners), len(function_ranges)))
    if len(partners) == 0:
        return Side(partners, np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros((0, length), bool), units)
    holds = np.zeros((len(partners), len(weighted)), dtype=bool)
    holds[row_of, rows[keep]] = True
    column = np.searchsorted(weighted, ids)
    column[column >= len(weighted)] = 0
    mine = (len(weighted) > 0) & (weighted[column] == ids) & (index.weight[ids] > 0)
    at, column, w = positions[mine], column[mine], index.weight[ids[mine]]
    matched = np.zeros(len(partners))
    tokens = np.zeros(len(partners), dtype=np.int64)
    covered = np.zeros((len(partners), length), dtype=bool)
    step = max(1, _CHUNK_CELLS // max(length, 1))
    for first in range(0, len(partners), step):
        chunk = holds[first:first + step]
        laid = np.zeros((len(chunk), length))
        laid[:, at] = chunk[:, column] * w          # with one fingerprint per position, no two write one cell
        cover = coverage(laid, index.k)
        matched[first:first + step] = cover.sum(axis=1)
        covered[first:first + step] = cover > 0
        tokens[first:first + step] = covered[first:first + step].sum(axis=1)
        for u, (lo, hi) in enumerate(function_ranges):
            units[first:first + step, u] = cover[:, lo:hi].sum(axis=1)
    return Side(partners, matched, tokens, covered, units)


def pair_coverage(index: ClassIndex, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """(tokens of a,), (tokens of b,): coverage of each side by the weighted fingerprints both hold."""
    shared = np.intersect1d(index.ids[a], index.ids[b])
    shared = shared[index.weight[shared] > 0]
    out = []
    for doc in (a, b):
        ids = index.ids[doc]
        laid = np.zeros(index.lengths[doc])
        mine = np.isin(ids, shared)
        np.maximum.at(laid, index.positions[doc][mine], index.weight[ids[mine]])
        out.append(coverage(laid, index.k))
    return out[0], out[1]

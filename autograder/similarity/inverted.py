"""Every pair's shared unusual code at once, from an inverted index of the class's fingerprints.

Comparing 1,000 submissions pair by pair is half a million pairs; most share
nothing but the obvious code. The index lists, for every distinct fingerprint
of the class, the submissions holding it, so a submission meets only the
submissions it shares a weighted fingerprint with, and all of them at once: its
fingerprints' weights are laid out along its tokens, one row per distinct set
of them that its partners hold (partners holding the same set share the row),
the ones that set lacks zeroed, and a sliding maximum over ``k`` tokens gives
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
    weight = rarity(counts, n)
    weight[in_base | (counts > common_limit)] = 0.0
    split = np.cumsum([len(h) for h in hashes])[:-1]
    return ClassIndex(tuple(np.split(fid.astype(np.int64), split)), tuple(positions), tuple(lengths),
                      start, held_doc, in_base, weight, k)


def rarity(holders: np.ndarray | int, n: int) -> np.ndarray:
    """What a fingerprint held by ``holders`` of ``n`` submissions weighs: ``log(n / holders) / log(n / 2)``,
    1 for one only two hold (or in a class of two), less the more hold it."""
    holders = np.asarray(holders, dtype=np.float64)
    if n <= 2:
        return np.ones(holders.shape)
    return np.minimum(1.0, np.log(n / np.maximum(holders, 1)) / math.log(n / 2))


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
    """One submission's side of its pairs: for each partner, what of its code the partner also holds.

    Partners that hold the same of this submission's weighted fingerprints share
    the same code with it: such a side is computed once, as one ``pattern``, and
    each partner points at its pattern (in a class of 1,000, about a third as
    many patterns as partners)."""

    partners: np.ndarray      # (P,) submission indices, ascending
    pattern: np.ndarray       # (P,) each partner's row in the arrays below
    matched: np.ndarray       # (U,) weight of this side's tokens covered by fingerprints both hold
    tokens: np.ndarray        # (U,) tokens so covered
    covered: np.ndarray       # (U, tokens) bool, which tokens
    units: np.ndarray         # (U, functions) matched weight per function (see ``function_ranges``)
    peaks: np.ndarray         # (U, functions) the heaviest matched token's weight per function

def distinct_weight(index: ClassIndex) -> np.ndarray:
    """(submissions,) the weight of each submission's distinct fingerprints, summed."""
    return np.array([index.weight[np.unique(ids)].sum() for ids in index.ids])


#: A fingerprint held by more submissions than this is counted in pairs by a matrix product; one held by
#: fewer, pair by pair. Without a limit on how many hold a fingerprint that weighs something, the pairs of
#: widely held fingerprints would number a few hundred million in a class of 1,000.
_WIDE = 48
#: Widely held fingerprints multiplied at once.
_WIDE_COLUMNS = 2048
#: Most pair entries counted at once for the others (int64 and float64 each): about 16 MB.
_PAIR_ENTRIES = 1_000_000


@dataclass(frozen=True, eq=False)
class Shared:
    """What each pair of submissions shares, before any token is looked at."""

    weight: np.ndarray     # (n, n) the weight of the distinct weighted fingerprints both hold
    wide: np.ndarray       # (ids,) the column in ``holds`` of a widely held fingerprint, -1 for any other
    holds: np.ndarray      # (n, wide fingerprints) bool


def shared_weight(index: ClassIndex) -> Shared:
    """Every pair's shared weight: widely held fingerprints by one matrix product, the others pair by pair."""
    n = len(index.lengths)
    counts = np.diff(index.holder_start)
    live = index.weight > 0
    fid_of = np.repeat(np.arange(len(counts)), counts)          # the fingerprint of each holding
    wide_ids = np.flatnonzero(live & (counts > _WIDE))
    column = np.full(len(counts), -1, dtype=np.int64)
    column[wide_ids] = np.arange(len(wide_ids))
    holds = np.zeros((n, len(wide_ids)), dtype=bool)
    chosen = column[fid_of] >= 0
    holds[index.holder_doc[chosen], column[fid_of[chosen]]] = True
    total = np.zeros((n, n))
    for first in range(0, len(wide_ids), _WIDE_COLUMNS):     # a few MB at a time, not n x (wide fingerprints) floats
        dense = holds[:, first:first + _WIDE_COLUMNS].astype(np.float32)
        total += (dense * index.weight[wide_ids[first:first + _WIDE_COLUMNS]].astype(np.float32)) @ dense.T
    for count in range(2, _WIDE + 1):
        ids = np.flatnonzero(live & (counts == count))
        step = max(1, _PAIR_ENTRIES // (count * count))
        for first in range(0, len(ids), step):
            part = ids[first:first + step]
            members = index.holder_doc[index.holder_start[part][:, None] + np.arange(count)]      # (part, count)
            cells = (members[:, :, None] * n + members[:, None, :]).reshape(-1)
            total += np.bincount(cells, weights=np.repeat(index.weight[part], count * count),
                                 minlength=n * n).reshape(n, n)
    np.fill_diagonal(total, 0.0)
    return Shared(total, column, holds)


def side(index: ClassIndex, doc: int, function_ranges: list[tuple[int, int]], partners: np.ndarray,
         shared: Shared) -> Side:
    """``doc``'s side of its pairs with ``partners`` (ascending submission indices)."""
    ids, positions, length = index.ids[doc], index.positions[doc], index.lengths[doc]
    weighted = np.unique(ids[index.weight[ids] > 0])
    if len(partners) == 0:
        return Side(partners, np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64),
                    np.zeros((0, length), bool), np.zeros((0, len(function_ranges))), np.zeros((0, len(function_ranges))))
    holds = _holdings(index, partners, weighted, shared)
    patterns, pattern = _distinct_rows(holds)
    column = np.searchsorted(weighted, ids)
    column[column >= len(weighted)] = 0
    mine = (len(weighted) > 0) & (weighted[column] == ids) & (index.weight[ids] > 0)
    at, column, w = positions[mine], column[mine], index.weight[ids[mine]]
    # Only the tokens a weighted fingerprint of this side covers can be matched: the others are left out of
    # the rows below. A covered stretch ends where no weighted fingerprint reaches, so the last fingerprint
    # of a stretch starts ``k`` tokens or more before the next stretch begins, and laying the stretches end
    # to end changes no token's window.
    support = np.zeros(length)
    support[at] = 1.0
    kept = np.flatnonzero(coverage(support, index.k) > 0)
    place = np.searchsorted(kept, at)            # each weighted fingerprint's column among the kept tokens
    units = np.zeros((len(patterns), len(function_ranges)))
    peaks = np.zeros((len(patterns), len(function_ranges)))
    matched = np.zeros(len(patterns))
    tokens = np.zeros(len(patterns), dtype=np.int64)
    covered = np.zeros((len(patterns), length), dtype=bool)
    bounds = np.searchsorted(kept, np.array(function_ranges, dtype=np.int64).reshape(-1, 2))
    step = max(1, _CHUNK_CELLS // max(len(kept), 1))
    for first in range(0, len(patterns), step):
        chunk = patterns[first:first + step]
        laid = np.zeros((len(chunk), len(kept)))
        laid[:, place] = chunk[:, column] * w          # with one fingerprint per position, no two write one cell
        cover = coverage(laid, index.k)
        matched[first:first + step] = cover.sum(axis=1)
        hit = cover > 0
        covered[first:first + step, kept] = hit
        tokens[first:first + step] = hit.sum(axis=1)
        for u, (lo, hi) in enumerate(bounds.tolist()):
            units[first:first + step, u] = cover[:, lo:hi].sum(axis=1)
            if hi > lo:
                peaks[first:first + step, u] = cover[:, lo:hi].max(axis=1)
    return Side(partners, pattern, matched, tokens, covered, units, peaks)


def _holdings(index: ClassIndex, partners: np.ndarray, weighted: np.ndarray, shared: Shared) -> np.ndarray:
    """(partners, weighted) bool: which of ``weighted`` (a side's weighted fingerprints) each partner holds."""
    holds = np.zeros((len(partners), len(weighted)), dtype=bool)
    wide = shared.wide[weighted]
    holds[:, wide >= 0] = shared.holds[np.ix_(partners, wide[wide >= 0])]
    narrow = np.flatnonzero(wide < 0)
    starts, sizes = index.holder_start[weighted[narrow]], np.diff(index.holder_start)[weighted[narrow]]
    rows = np.repeat(narrow, sizes)
    offsets = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    partner_of = index.holder_doc[np.repeat(starts, sizes) + offsets]
    at_partner = np.minimum(np.searchsorted(partners, partner_of), len(partners) - 1)
    found = partners[at_partner] == partner_of
    holds[at_partner[found], rows[found]] = True
    return holds


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a bool matrix, and for each row the index of its distinct row."""
    if rows.shape[1] == 0:
        return rows[:1], np.zeros(len(rows), dtype=np.int64)
    packed = np.ascontiguousarray(np.packbits(rows, axis=1))
    keys = packed.view(np.dtype((np.void, packed.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], inverse.reshape(-1)


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

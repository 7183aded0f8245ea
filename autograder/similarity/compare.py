"""Rank pairs of submissions by how much unusual code they share, and find the groups sharing one solution.

Each submission's code becomes normalised tokens (``normalize``) and
winnowed fingerprints (``winnow``). A fingerprint is evidence only in
proportion to how rare it is:

- fingerprints of the starter code (the "base code", as MOSS calls it) are
  no evidence at all;
- any other fingerprint shared by ``d`` of ``n`` submissions weighs
  ``log(n / d) / log(n / 2)`` (1 for a fingerprint only two submissions
  have, less the more submissions have it), however many hold it: a
  ``common_fraction`` below 1 makes the ones held by more than that share
  of the class weigh nothing, which is off by default, because a solution
  passed round a group is held by the group, whatever its share of the class.

The obvious code many students write alone is held by many and weighs
little; it is short too (a one-line idiom is a handful of k-grams), and
a pair sharing only that stays under the evidence floor below.

Every token a submission holds under a weighted fingerprint is "unusual"
code, weighing the largest weight of a fingerprint covering it. For a pair,
each side's matched weight is the weight of its tokens covered by
fingerprints both hold, and the score is the larger of the two sides' shares
of their own unusual code, each with a prior of ``prior_tokens`` and never
over less than ``evidence_tokens`` of unusual code:

    score = max(matched(A) / (max(unusual(A), evidence_tokens) + prior_tokens),
                matched(B) / (max(unusual(B), evidence_tokens) + prior_tokens))

It lies in [0, 1): near 1 when one submission's unusual code is nearly all
in the other, near 0 when what they share is what everyone wrote. The larger
share is the one that counts (JPlag's "maximum similarity"): a copier who
rewrote some of the copied functions the obvious way keeps less unusual code
than the student copied, and what is left is still all in the original. The
prior keeps a submission whose unusual code is a handful of tokens from
scoring high on a coincidence of one line, and the floor keeps a small
submission (three functions attempted) from scoring high on the one short
function it shares with many: a score near 1 needs at least
``evidence_tokens`` of shared unusual code, whatever the share. A pair is
scored at all only when the distinct fingerprints it shares weigh at least
``least_share`` of the smaller side's; the others are left out. A side's share
is never less than ``E / (E + function_prior)``, ``E`` the evidence of the
functions its partner holds whole (:func:`whole_function_evidence`), scaled down while the side's matched
unusual code is under ``evidence_tokens`` (:func:`function_floor`).

A group is found from its pairs (``find_groups``): three or more submissions
whose pairs all score at least ``group_score``, that all hold most of one
member's own code, and that are unlikely to have written it alone (each
function they share is weighed by how many in the class wrote it alike).
Who holds exactly which fingerprint cannot tell a group: each function of a
leaked solution is also written alike by a few students outside it, so the
code held by exactly the group can be none.

A pair also says which of the assignment's functions it shares: on one side,
a function with at least ``function_tokens`` of unusual code of which at
least ``function_share`` is matched (``shared_functions``). A partial copy is
two or three functions copied whole inside otherwise different submissions,
which the pair's single score blurs.

Pairs are scored all at once per submission (``inverted``): the numbers are
the ones above, computed from an inverted index of the fingerprints.

Why one module of this size: fingerprinting, the inverted index, pair scoring, function views and groups read one Document and Settings and are tuned together for speed on a class of 1,000; split, the hot loop would cross module boundaries with its arrays.
"""
from __future__ import annotations

import math
from array import array
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from autograder.similarity.inverted import (ClassIndex, Shared, build_index, coverage, distinct_weight, pair_coverage,
                                            rarity, shared_weight, side)
from autograder.similarity.normalize import Token, defined_functions, program_tokens
from autograder.similarity.shared_work import shared_map
from autograder.similarity.winnow import K, W, Fingerprint, kgram_array, winnow


@dataclass(frozen=True)
class Settings:
    """The method's parameters (the defaults are the measured ones, see docs/grading-guide.md)."""

    k: int = K
    w: int = W
    common_fraction: float = 1.0
    common_minimum: int = 3
    prior_tokens: float = 30.0
    #: Least weight of shared distinct fingerprints, as a share of the smaller side's, for a pair to be scored.
    least_share: float = 0.1
    #: Least unusual code a side's share is taken over: about six lines.
    evidence_tokens: float = 80.0
    #: Least score of the pairs that join submissions into a group...
    group_score: float = 0.6
    #: ...and least code every member holds: about eight lines...
    group_tokens: int = 120
    #: ...and at least this share of the code of its own the member shown has (a solution, not a function or two).
    group_share: float = 0.8
    #: A function counts as shared by a pair when it has at least this much unusual code (two lines)...
    function_tokens: float = 24.0
    #: ...and the other submission holds at least this share of it.
    function_share: float = 0.6
    #: A function is held whole by a partner when it has at least this much unusual code (one k-gram)...
    whole_tokens: float = 12.0
    #: ...and the partner holds at least this share of it (see :func:`whole_function_evidence`).
    whole_share: float = 0.9
    #: A side's share is at least ``E / (E + function_prior)`` for the evidence ``E`` of the functions held
    #: whole: one function of code only the two hold gives 0.5, two 0.67, three 0.75.
    function_prior: float = 1.0


@dataclass(frozen=True, eq=False)
class Document:
    """One submission's code as the comparison sees it: tokens, and the fingerprints kept from them
    (``hashes[i]`` is the k-gram starting at token ``positions[i]``)."""

    name: str
    cells: tuple[str, ...]
    tokens: tuple[Token, ...]
    hashes: np.ndarray = field(repr=False)       # (F,) uint64
    positions: np.ndarray = field(repr=False)    # (F,) int64
    #: The top-level functions: (name, first token, end token), in token order.
    functions: tuple[tuple[str, int, int], ...] = ()

    @property
    def fingerprints(self) -> tuple[Fingerprint, ...]:
        return tuple(Fingerprint(h, p) for h, p in zip(self.hashes.tolist(), self.positions.tolist()))


class LineSpan(NamedTuple):
    """Lines ``first``..``last`` (1-based, inclusive) of code cell ``cell`` (0-based).

    A named tuple: the CSV of 1,000 submissions holds a few hundred thousand."""

    cell: int
    first: int
    last: int


class LineSpans(bytes):
    """A pair side's lines: :class:`LineSpan` triples in (cell, line) order, packed as 32-bit integers
    (as 16-bit ones by :class:`ShortLineSpans` when every number fits).

    A class of 1,000 submissions scores a few hundred thousand pairs, each with a
    dozen spans a side: as tuples of named tuples they took 300 MB and most of
    the time spent ranking; packed, a side is one bytes object (the bytes
    themselves, not an object holding them: at 400,000 distinct sides the
    wrapper alone was 15 MB, and 32-bit numbers another 35 MB)."""

    __slots__ = ()
    _code = "i"             # the ``array`` type code of the numbers
    _width = 12             # bytes per span

    def __new__(cls, packed: bytes | memoryview = b"") -> "LineSpans":
        return super().__new__(cls, packed)

    @classmethod
    def of(cls, spans: tuple[LineSpan, ...] | list[LineSpan]) -> "LineSpans":
        return packed_spans(np.array(spans, dtype=np.int64).reshape(-1, 3))

    def flat(self) -> list[int]:
        """[cell, first, last, cell, first, last, ...], in (cell, line) order."""
        numbers = array(self._code)
        numbers.frombytes(self)     # for a few dozen numbers, much faster than numpy
        return numbers.tolist()

    def __iter__(self):
        numbers = iter(self.flat())
        return (LineSpan(c, first, last) for c, first, last in zip(numbers, numbers, numbers))

    def __len__(self) -> int:
        return bytes.__len__(self) // self._width

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LineSpans):
            return bytes.__eq__(self, other) if type(self) is type(other) else self.flat() == other.flat()
        return isinstance(other, tuple) and tuple(self) == other

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash(tuple(self.flat()))     # the same spans packed either way are equal

    def __repr__(self) -> str:
        return f"LineSpans({tuple(self)!r})"


class ShortLineSpans(LineSpans):
    """:class:`LineSpans` whose numbers (cells and lines) all fit in 16 bits: nearly every side."""

    __slots__ = ()
    _code = "h"
    _width = 6


_SHORT = 1 << 15


def packed_spans(triples: np.ndarray) -> LineSpans:
    """(spans, 3) cell, first and last line as one :class:`LineSpans`, 16-bit when every number fits."""
    if triples.size == 0 or int(triples.max()) < _SHORT:
        return ShortLineSpans(triples.astype(np.int16).tobytes())
    return LineSpans(triples.astype(np.int32).tobytes())


@dataclass(frozen=True, slots=True)
class Pair:
    """Two submissions, their score, and the code they share: the lines on each side, and the
    functions of the assignment it is mostly made of (see :func:`shared_functions`)."""

    a: str
    b: str
    score: float
    matched_tokens: int
    lines_a: LineSpans = ShortLineSpans()
    lines_b: LineSpans = ShortLineSpans()
    functions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Group:
    """Three or more submissions joined by pairs that score at least ``group_score``.

    ``tokens`` are the indices, in ``shown``'s tokens, of the code every member
    holds (``lines`` in ``shown``'s cells; starter lines left out), and
    ``weight`` what each of its tokens weighs in a pair score: the rarity of
    code held by as many submissions as the group has (1 for code only two
    hold), never 0, so a group's pairs score on that code whatever its size.
    """

    members: tuple[str, ...]
    shared_tokens: int
    weight: float
    shown: str
    tokens: tuple[int, ...]
    lines: tuple[LineSpan, ...]
    functions: tuple[str, ...] = ()     # the functions of ``shown`` mostly made of that code


@dataclass(frozen=True, eq=False)
class Comparison:
    """One class compared: ranked pairs, groups, and how much was discounted as common and why."""

    pairs: tuple[Pair, ...]
    groups: tuple[Group, ...]
    compared: int
    common_limit: int          # a fingerprint held by more submissions than this weighs nothing in a pair
    common_fingerprints: int   # distinct fingerprints, outside the starter code, discounted for that reason
    documents: tuple[Document, ...] = ()
    index: ClassIndex | None = None

    def matched(self, a: str, b: str) -> tuple[set[int], set[int]]:
        """Indices of the tokens of ``a`` and of ``b`` covered by weighted fingerprints both hold."""
        where = {d.name: i for i, d in enumerate(self.documents)}
        if self.index is None or a not in where or b not in where:
            return set(), set()
        cover_a, cover_b = pair_coverage(self.index, where[a], where[b])
        return set(np.flatnonzero(cover_a).tolist()), set(np.flatnonzero(cover_b).tolist())


def _unit_runs(tokens: tuple[Token, ...] | list[Token]) -> list[tuple[int, int]]:
    """``[start, end)`` token ranges of each top-level statement (each function, each import...).

    K-grams never span two of them: the order of cells, and of the functions
    within a cell, is the student's to choose and says nothing.
    """
    if not tokens:
        return []
    # A unit is known by (cell, unit); a new one starts wherever that pair changes.
    keys = np.fromiter(((t.cell << 32) | t.unit for t in tokens), dtype=np.int64, count=len(tokens))
    edges = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist(), len(tokens)]
    return list(zip(edges, edges[1:]))


@lru_cache(maxsize=8192)
def _defined_functions(source: str) -> tuple[tuple[str, int, int], ...]:
    """(name, first line, last line) of each top-level function of a cell (none if it does not parse), read
    from the parse that normalising the cell made."""
    return defined_functions(source)


def _function_ranges(cells: tuple[str, ...], tokens: tuple[Token, ...],
                     runs: list[tuple[int, int]]) -> tuple[tuple[str, int, int], ...]:
    """The top-level statements that define a function, named as the student's cell names them."""
    found = []
    for start, end in runs:
        first = tokens[start]
        for name, lo, hi in _defined_functions(cells[first.cell]):
            if lo <= first.line <= hi:
                found.append((name, start, end))
                break
    return tuple(found)


def document(name: str, cells: tuple[str, ...] | list[str], settings: Settings = Settings()) -> Document:
    """Normalise and fingerprint one submission's code cells."""
    cells = tuple(cells)
    tokens = tuple(program_tokens(list(cells)))
    texts = [t.text for t in tokens]
    runs = _unit_runs(tokens)
    if settings.w == 1:              # every k-gram is kept: no window to slide, and the whole program is hashed at once
        grams = kgram_array(texts, settings.k)
        ends = np.repeat([end for _, end in runs], [end - start for start, end in runs])
        within = np.flatnonzero(ends[:len(grams)] - np.arange(len(grams)) >= settings.k)    # no k-gram spans two units
        return Document(name, cells, tokens, grams[within], within.astype(np.int64), _function_ranges(cells, tokens, runs))
    hashes, positions = [], []
    for start, end in runs:
        kept = winnow(kgram_array(texts[start:end], settings.k).tolist(), settings.w)
        hashes.append(np.array([f.hash for f in kept], dtype=np.uint64))
        positions.append(np.array([f.position + start for f in kept], dtype=np.int64))
    return Document(name, cells, tokens,
                    np.concatenate(hashes) if hashes else np.zeros(0, dtype=np.uint64),
                    np.concatenate(positions) if positions else np.zeros(0, dtype=np.int64),
                    _function_ranges(cells, tokens, runs))


def base_hashes(cells: tuple[str, ...] | list[str], settings: Settings = Settings()) -> frozenset[int]:
    """Every k-gram hash of the starter code (all of them, not only the winnowed ones)."""
    tokens = program_tokens(list(cells))
    texts = [t.text for t in tokens]
    hashes: set[int] = set()
    for start, end in _unit_runs(tokens):
        hashes.update(kgram_array(texts[start:end], settings.k).tolist())
    return frozenset(hashes)


def _line_texts(tokens: list[Token] | tuple[Token, ...]) -> dict[tuple[int, int], tuple[str, ...]]:
    """(cell, line) -> the line's tokens, indentation tokens left out."""
    lines: dict[tuple[int, int], list[str]] = defaultdict(list)
    for t in tokens:
        if t.text not in ("INDENT", "DEDENT"):
            lines[(t.cell, t.line)].append(t.text)
    return {key: tuple(texts) for key, texts in lines.items()}


def starter_lines(cells: tuple[str, ...] | list[str]) -> frozenset[tuple[str, ...]]:
    """Every normalised line of the starter code: a student line equal to one of them is the starter's own."""
    return frozenset(_line_texts(program_tokens(list(cells))).values())


def own_tokens(doc: Document, starter: frozenset[tuple[str, ...]]) -> set[int]:
    """Indices of ``doc``'s tokens on lines that are not a starter line (a signature, a setup line)."""
    lines = {key for key, texts in _line_texts(doc.tokens).items() if texts not in starter}
    return {i for i, t in enumerate(doc.tokens) if (t.cell, t.line) in lines}


def common_limit(n: int, settings: Settings = Settings()) -> int:
    """The most submissions of ``n`` a fingerprint may be held by and still weigh something in a pair."""
    return max(settings.common_minimum, math.ceil(settings.common_fraction * n))


def _runs(indices: list[int]) -> list[list[int]]:
    """Sorted token indices split into runs of consecutive ones."""
    runs: list[list[int]] = []
    for i in indices:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def line_spans(doc: Document, indices: list[int] | set[int]) -> tuple[LineSpan, ...]:
    """The lines holding the tokens at ``indices``, as spans of consecutive lines per cell."""
    return _spans_of(sorted({(doc.tokens[i].cell, doc.tokens[i].line) for i in indices}))


class _Lines:
    """A submission's tokens grouped into runs on one line, to turn covered tokens into line spans fast."""

    def __init__(self, doc: Document):
        keys = np.fromiter(((t.cell << 32) | t.line for t in doc.tokens), dtype=np.int64, count=len(doc.tokens))
        self.starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if len(keys) else keys
        run_keys = keys[self.starts]
        self.cell, self.line = run_keys >> 32, run_keys & 0xFFFFFFFF
        # Lines in order, each once: then any subset is in order too, and spans are found with array operations.
        self.ordered = bool(np.all(run_keys[1:] > run_keys[:-1]))

    def runs(self, covered: np.ndarray) -> np.ndarray:
        """(rows, runs) bool: which runs hold a covered token, for each row of ``covered`` (rows, tokens)."""
        if covered.shape[-1] == 0:
            return np.zeros(covered.shape[:-1] + (0,), dtype=bool)
        return np.logical_or.reduceat(covered, self.starts, axis=-1)

    def spans(self, hits: np.ndarray) -> list[LineSpans]:
        """For each row of ``hits`` (rows, runs; see :meth:`runs`), the line spans of the runs it marks."""
        if not self.ordered:
            keys = list(zip(self.cell.tolist(), self.line.tolist()))
            return [LineSpans.of(_spans_of(sorted({keys[g] for g in np.flatnonzero(row).tolist()}))) for row in hits]
        rows, runs = np.nonzero(hits)
        if len(runs) == 0:
            return [ShortLineSpans() for _ in range(len(hits))]
        cells, lines = self.cell[runs], self.line[runs]
        new = np.ones(len(runs), dtype=bool)        # a span starts at a new row, a new cell or a gap of a line
        new[1:] = (rows[1:] != rows[:-1]) | (cells[1:] != cells[:-1]) | (lines[1:] - lines[:-1] > 1)
        first = np.flatnonzero(new)
        last = np.append(first[1:], len(runs)) - 1
        triples = np.stack([cells[first], lines[first], lines[last]], axis=1)
        bounds = np.searchsorted(rows[first], np.arange(len(hits) + 1)).tolist()
        if int(triples.max()) < _SHORT:             # as :func:`packed_spans` packs each, all at once
            packed = memoryview(triples.astype(np.int16).tobytes())
            return [ShortLineSpans(packed[6 * a:6 * b]) for a, b in zip(bounds, bounds[1:])]
        return [packed_spans(triples[a:b]) for a, b in zip(bounds, bounds[1:])]


def _spans_of(lines: list[tuple[int, int]]) -> tuple[LineSpan, ...]:
    """Sorted (cell, line) pairs as spans of consecutive lines per cell."""
    spans: list[LineSpan] = []
    for cell, line in lines:
        if spans and spans[-1].cell == cell and spans[-1].last + 1 >= line:
            spans[-1] = LineSpan(cell, spans[-1].first, line)
        else:
            spans.append(LineSpan(cell, line, line))
    return tuple(spans)


def shared_functions(doc: Document, matched: np.ndarray, unusual: np.ndarray,
                     settings: Settings = Settings()) -> list[list[str]]:
    """For each row of ``matched`` (partners, functions): the functions of ``doc`` that partner holds most
    of: at least ``function_tokens`` of unusual code (``unusual``, per function), of which at least
    ``function_share`` is matched."""
    shared = (matched >= settings.function_share * unusual) & (unusual >= settings.function_tokens)
    names = [name for name, _, _ in doc.functions]
    out: list[list[str]] = [[] for _ in range(len(matched))]
    for row, unit in zip(*(u.tolist() for u in np.nonzero(shared))):
        out[row].append(names[unit])
    return out


def whole_function_evidence(matched: np.ndarray, peaks: np.ndarray, unusual: np.ndarray,
                            settings: Settings = Settings()) -> np.ndarray:
    """(partners,) the evidence of the functions of a side that a partner holds whole: for each function with
    at least ``whole_tokens`` of unusual code (``unusual``, per function) of which the partner holds at least
    ``whole_share`` (``matched``, (partners, functions)), the weight of the rarest code it holds there
    (``peaks``, (partners, functions)), summed.

    Each function two students wrote alike by chance is a coincidence of its own, as rare as the rarest code
    in it; a partial copy is two or three functions taken whole, each with code only the two hold, while the
    pair's share of all its unusual code stays low. A function the class wrote alike (held by many) weighs
    little however long it is, and starter code nothing."""
    whole = (unusual >= settings.whole_tokens) & (matched >= settings.whole_share * unusual)
    return (peaks * whole).sum(axis=1)


def function_floor(evidence: np.ndarray, matched: np.ndarray, settings: Settings = Settings()) -> np.ndarray:
    """(partners,) the least share a side takes from the functions its partners hold whole: ``E / (E +
    function_prior)``, ``E`` their evidence (:func:`whole_function_evidence`) scaled down by
    ``matched / evidence_tokens`` while the side's matched unusual code is under ``evidence_tokens``.

    The share of a side's unusual code rests on at least ``evidence_tokens`` of it; so does this floor. A
    student who wrote two short functions and nothing else holds one of them whole with anyone who wrote it
    the obvious way: on lmhead-e-1000 of the blind corpus such a pair (a softmax of 45 tokens held by 38 of
    1,000, 30 weighted tokens shared in all) took 0.345 from the floor alone, above a copy sharing 72."""
    scaled = evidence * np.minimum(1.0, matched / settings.evidence_tokens)
    return scaled / (scaled + settings.function_prior)


def rank_pairs(documents: list[Document], base: frozenset[int] = frozenset(),
               settings: Settings = Settings()) -> list[Pair]:
    """Every pair of ``documents`` sharing at least one weighted fingerprint, highest score first.

    Pairs sharing none score 0 and are left out. Ties are broken by name, so
    the order is the same on every run.
    """
    return list(compare_class(documents, base, settings).pairs)


def compare_class(documents: list[Document], base: frozenset[int] = frozenset(),
                  settings: Settings = Settings(), starter: frozenset[tuple[str, ...]] = frozenset()) -> Comparison:
    """The ranked pairs of ``documents`` (see :func:`rank_pairs`), its groups, and what counted as common."""
    limit = common_limit(len(documents), settings)
    index = build_index([d.hashes for d in documents], [d.positions for d in documents],
                        [len(d.tokens) for d in documents], np.fromiter(base, dtype=np.uint64, count=len(base)),
                        limit, settings.k)
    prior = settings.prior_tokens
    # A pair is scored when the distinct fingerprints it shares weigh at least ``least_share`` of the smaller
    # side's (with the prior): the same test from either side, and most pairs of a large class fail it.
    own_weight = distinct_weight(index)
    shared = shared_weight(index)
    smaller = np.minimum(own_weight[:, None], own_weight[None, :])
    scored = shared.weight >= settings.least_share * (smaller + prior)
    np.fill_diagonal(scored, False)
    scored &= scored.T          # a pair's two sides are computed from two rows: both must hold it
    del smaller                 # n x n floats, not needed while the sides are made and joined
    # Each submission's sides are made on every core (``shared_work``); equal lists of functions are then kept
    # once: at 1,000 submissions half a million sides hold a few hundred.
    halves = shared_map(lambda i: _sides_of(index, i, documents[i], np.flatnonzero(scored[i]), shared, settings),
                        len(documents))
    interned: dict[tuple[str, ...], tuple[str, ...]] = {}
    for h in halves:
        h.functions[:] = [interned.setdefault(f, f) for f in h.functions]
    del shared, scored          # (n, n) and (n, widely held fingerprints): freed before the pairs are made
    pairs = _joined(documents, halves)
    common = int(np.count_nonzero((np.diff(index.holder_start) > limit) & ~index.in_base))
    ranked = tuple(pairs)
    return Comparison(ranked, find_groups(documents, index, ranked, settings, starter), len(documents), limit, common,
                      tuple(documents), index)


class _Halves(NamedTuple):
    """One submission's sides of its pairs: per distinct pattern of what its partners hold (see
    :func:`_sides_of`), and each partner's pattern."""

    partners: np.ndarray             # (P,) ascending
    pattern: np.ndarray              # (P,) each partner's pattern
    shares: np.ndarray               # (U,) its share of its own unusual code the partner holds
    tokens: np.ndarray               # (U,) its tokens the partner's fingerprints cover
    lines: list[LineSpans]           # (U,)
    functions: list[tuple[str, ...]]  # (U,)


def _sides_of(index: ClassIndex, i: int, doc: Document, partners: np.ndarray, shared: Shared,
              settings: Settings, interned: dict[tuple[str, ...], tuple[str, ...]] | None = None) -> _Halves:
    """Submission ``i``'s side of its pairs with ``partners``: computed once per distinct pattern of what the
    partners hold (``inverted.side``), each partner then given its pattern's numbers, lines and functions."""
    ranges = [(lo, hi) for _, lo, hi in doc.functions]
    own = _coverage_of(index, i)
    unusual = float(own.sum())
    own_units = np.array([own[lo:hi].sum() for lo, hi in ranges]).reshape(len(ranges))
    mine = side(index, i, ranges, partners, shared)
    lines = _Lines(doc)
    kept = {} if interned is None else interned
    share = mine.matched / (max(unusual, settings.evidence_tokens) + settings.prior_tokens)
    evidence = whole_function_evidence(mine.units, mine.peaks, own_units, settings)
    return _Halves(mine.partners, mine.pattern, np.maximum(share, function_floor(evidence, mine.matched, settings)),
                   mine.tokens,
                   lines.spans(lines.runs(mine.covered)),
                   [kept.setdefault(f, f) for f in map(tuple, shared_functions(doc, mine.units, own_units, settings))])


def _joined(documents: list[Document], halves: list[_Halves]) -> list[Pair]:
    """Every scored pair from its two sides, highest score first, ties by name: the score the larger share,
    the first side the earlier submission."""
    if not halves:
        return []
    # Every side of every submission, numbered across the class: a partner's side is its pattern's number.
    offset = np.cumsum([0] + [len(h.shares) for h in halves])
    earlier_side, later_side = [], []        # (later, earlier, side) per pair
    for me, h in enumerate(halves):
        cut = int(np.searchsorted(h.partners, me))
        numbered = h.pattern + offset[me]
        earlier_side.append(np.stack([h.partners[cut:], np.full(len(h.partners) - cut, me), numbered[cut:]]))
        later_side.append(np.stack([np.full(cut, me), h.partners[:cut], numbered[:cut]]))
    up, down = np.concatenate(earlier_side, axis=1), np.concatenate(later_side, axis=1)
    up = up[:, np.lexsort((up[1], up[0]))]      # both now list each pair once, by (later, earlier)
    first, second = up[2], down[2]
    shares = np.concatenate([h.shares for h in halves])
    larger = np.maximum(shares[first], shares[second])
    score = np.empty(len(larger))
    for lo in range(0, len(larger), _JOIN_CHUNK):
        score[lo:lo + _JOIN_CHUNK] = [round(x, 4) for x in larger[lo:lo + _JOIN_CHUNK].tolist()]
    rank = np.empty(len(documents), dtype=np.int64)
    rank[sorted(range(len(documents)), key=lambda d: documents[d].name)] = np.arange(len(documents))
    # Sorted as ``sorted(key=(-score, a, b))`` on names would sort them, but on arrays.
    order = np.lexsort((rank[up[0]], rank[up[1]], -score))
    tokens = np.concatenate([h.tokens for h in halves])
    lines = [spans for h in halves for spans in h.lines]
    functions = [f for h in halves for f in h.functions]
    names = [d.name for d in documents]
    pairs: list[Pair] = []
    union: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[str, ...]] = {}
    # One object per distinct score and per distinct token count, not one per pair (two dicts: 0 == 0.0).
    scores: dict[float, float] = {}
    counts: dict[int, int] = {}
    # A few thousand pairs at a time: their numbers as Python lists all at once took 70 MB at 400,000 pairs.
    for lo in range(0, len(order), _JOIN_CHUNK):
        part = order[lo:lo + _JOIN_CHUNK]
        for s, t, e, l, a, b in zip(score[part].tolist(), tokens[first[part]].tolist(), up[1][part].tolist(),
                                    up[0][part].tolist(), first[part].tolist(), second[part].tolist()):
            key = (functions[a], functions[b])
            shared = union.get(key)
            if shared is None:
                shared = union[key] = tuple(sorted(set(key[0]) | set(key[1])))
            pairs.append(Pair(names[e], names[l], scores.setdefault(s, s), counts.setdefault(t, t), lines[a],
                              lines[b], shared))
    return pairs


#: Pairs joined at once (see :func:`_joined`).
_JOIN_CHUNK = 8192


def _coverage_of(index: ClassIndex, doc: int) -> np.ndarray:
    """(tokens,) each token's unusual weight: the heaviest weighted fingerprint covering it."""
    return coverage(index.token_weights(doc), index.k)


def _covered(positions: list[int], k: int, length: int) -> list[int]:
    """Sorted token indices covered by the k-grams starting at ``positions``."""
    return sorted({i for p in positions for i in range(p, min(p + k, length))})


def find_groups(documents: list[Document], index: ClassIndex, pairs: list[Pair] | tuple[Pair, ...],
                settings: Settings = Settings(), starter: frozenset[tuple[str, ...]] = frozenset()) -> tuple[Group, ...]:
    """Sets of three or more submissions joined by pairs scoring at least ``group_score`` in which every
    member holds the same ``group_tokens`` of code or more (starter lines left out, in runs of at least
    ``k`` tokens) over two or more functions.

    A group is found from its pairs, not from who holds a fingerprint: each function of a solution passed
    round can also be written the same way by students outside the group, so the code held by exactly the
    group may be none; what only the group holds is the whole solution, function after function, which is
    what its pairs' scores measure, whatever the group's share of the class. Submissions joined by pairs
    that share different code (a chain of partial copies, students who each wrote some of the obvious
    functions alike) hold little in common: such a set is split again with a higher score, until its
    parts hold a solution in common or are pairs.
    """
    where = {d.name: i for i, d in enumerate(documents)}
    edges = [(where[p.a], where[p.b], p.score) for p in pairs if p.score >= settings.group_score]
    strong = [(a, b) for a, b, _ in edges]
    own: dict[int, set[int]] = {}
    found: list[Group] = []
    pending = [(sorted({i for a, b, _ in edges for i in (a, b)}), settings.group_score)]
    while pending:
        members, least = pending.pop()
        for part in _components(members, [(a, b) for a, b, s in edges if s >= least]):
            if len(part) < 3:
                continue
            group, mine, surprise = _group(documents, index, part, settings, starter, own)
            inside = set(part)
            joined = sum(a in inside and b in inside for a, b in strong)
            if (joined == len(part) * (len(part) - 1) // 2 and surprise >= _sets_of(len(documents), len(part))
                    and group.shared_tokens >= max(settings.group_tokens, settings.group_share * mine)):
                found.append(group)
            elif least < 1.0:
                pending.append((part, round(least + 0.05, 2)))
    return tuple(sorted(found, key=lambda g: (-len(g.members), -g.shared_tokens, g.members)))


def _sets_of(n: int, k: int) -> float:
    """log of the number of sets of ``k`` submissions in a class of ``n``."""
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def _components(members: list[int], edges: list[tuple[int, int]]) -> list[list[int]]:
    """The connected parts of ``members`` under ``edges`` (edges leaving ``members`` ignored)."""
    parent = {i: i for i in members}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for a, b in edges:
        if a in parent and b in parent:
            parent[root(a)] = root(b)
    parts: dict[int, list[int]] = defaultdict(list)
    for i in members:
        parts[root(i)].append(i)
    return list(parts.values())


def _group(documents: list[Document], index: ClassIndex, members: list[int], settings: Settings,
           starter: frozenset[tuple[str, ...]], own_of: dict[int, set[int]]) -> tuple[Group, int, float]:
    """The group ``members``, shown in the member whose code the others hold most of; how many tokens of its
    own (not on a starter line) that member has; and how unlikely it is that they wrote alone all the
    functions they share: for each such function, held by ``c`` of the ``n`` submissions (in the median
    of its fingerprints), another student writes it alike with a chance of about ``c / n``, so ``k``
    members who all wrote it alone did so with a chance of ``(c / n) ** (k - 1)``. The log of one over the
    product over the functions is returned; it is compared with the log of the number of sets of ``k``
    submissions in the class, so that a class has about one set that independent work makes look like this."""
    inside = np.zeros(len(documents), dtype=np.int64)
    inside[members] = 1
    starts = np.minimum(index.holder_start[:-1], max(len(index.holder_doc) - 1, 0))
    held_by = np.add.reduceat(inside[index.holder_doc], starts) if len(index.holder_doc) else np.zeros(0, np.int64)
    held_by[np.diff(index.holder_start) == 0] = 0
    best: tuple[int, list[int], int, np.ndarray] | None = None
    for m in members:
        ids = index.ids[m]
        everyone = (held_by[ids] == len(members)) & ~index.in_base[ids]
        if m not in own_of:
            own_of[m] = own_tokens(documents[m], starter)
        own = own_of[m]
        covered = [i for i in _covered(index.positions[m][everyone].tolist(), settings.k, len(documents[m].tokens))
                   if i in own]
        tokens = [i for run in _runs(covered) if len(run) >= settings.k for i in run]
        if best is None or len(tokens) > len(best[1]):
            best = (m, tokens, len(own), everyone)
    shown, tokens, own_count, everyone = best
    doc = documents[shown]
    held = set(tokens)
    own = own_of[shown]
    functions = tuple(name for name, lo, hi in doc.functions
                      if len(held.intersection(range(lo, hi))) >= max(settings.function_tokens,
                                                                     settings.function_share * len(own.intersection(range(lo, hi)))))
    return Group(tuple(sorted(documents[i].name for i in members)), len(tokens), float(rarity(len(members), len(documents))),
                 doc.name, tuple(tokens), line_spans(doc, tokens), functions), own_count, \
        _surprise(index, shown, everyone, doc, functions, len(members))


def _surprise(index: ClassIndex, doc_index: int, everyone: np.ndarray, doc: Document, functions: tuple[str, ...],
              k: int) -> float:
    """``-log`` of the chance that ``k`` students alone wrote alike every function of ``functions`` (see :func:`_group`)."""
    n = len(index.lengths)
    counts = np.diff(index.holder_start)[index.ids[doc_index]]
    positions = index.positions[doc_index]
    total = 0.0
    for name, lo, hi in doc.functions:
        if name not in functions:
            continue
        inside = everyone & (positions >= lo) & (positions < hi)
        if inside.any():
            total += math.log(n / float(np.median(counts[inside])))
    return (k - 1) * total

"""Rank pairs of submissions by how much unusual code they share.

Each submission's code becomes normalised tokens (``normalize``) and
winnowed fingerprints (``winnow``). A fingerprint is evidence only in
proportion to how rare it is:

- fingerprints of the starter code (the "base code", as MOSS calls it) are
  no evidence at all;
- a fingerprint found in more than ``common_fraction`` of the class (and in
  at least ``common_minimum`` submissions) is the obvious code many students
  converge on, and is no evidence either;
- below that, a fingerprint shared by ``d`` of ``n`` submissions weighs
  ``log(n / d) / log(n / 2)`` (1 for a fingerprint only two submissions
  have, less the more submissions have it).

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
``evidence_tokens`` of shared unusual code, whatever the share.

The rarity discount cannot see a group: a solution passed around ``k``
students is held by ``k`` of them, and once ``k`` is more than a tenth of the
class its fingerprints count for nothing in any pair. What tells a group from
an idiom is not how many hold the code but how much of it they share: an
idiom many students arrive at alone is a line or two, and the students who
write it differ everywhere else, so no other code is held by exactly the same
students. ``find_groups`` therefore collects, for every set of three or more
submissions, the code held by exactly that set (starter lines left out), keeps
its unbroken runs of at least ``block_tokens`` tokens (an idiom is shorter)
and reports the set as a group when those runs add up to at least
``group_tokens`` tokens, however large the set.

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

import ast
import math
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from autograder.similarity.inverted import ClassIndex, build_index, coverage, pair_coverage, side
from autograder.similarity.normalize import Token, program_tokens
from autograder.similarity.winnow import K, W, Fingerprint, kgram_array, winnow


@dataclass(frozen=True)
class Settings:
    """The method's parameters (the defaults are the measured ones, see docs/grading-guide.md)."""

    k: int = K
    w: int = W
    common_fraction: float = 0.1
    common_minimum: int = 3
    prior_tokens: float = 30.0
    #: Least unusual code a side's share is taken over: about six lines.
    evidence_tokens: float = 80.0
    #: Shortest unbroken run of code held by exactly one set of submissions that counts towards a group:
    #: about six lines, longer than a short function written the obvious way (its signature excepted).
    block_tokens: int = 80
    #: Least code, in such runs, a set of three or more submissions must share to be reported as a group.
    group_tokens: int = 120
    #: A function counts as shared by a pair when it has at least this much unusual code (two lines)...
    function_tokens: float = 24.0
    #: ...and the other submission holds at least this share of it.
    function_share: float = 0.6


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


@dataclass(frozen=True)
class Pair:
    """Two submissions, their score, and the code they share: the lines on each side, and the
    functions of the assignment it is mostly made of (see :func:`shared_functions`)."""

    a: str
    b: str
    score: float
    matched_tokens: int
    lines_a: tuple[LineSpan, ...] = ()
    lines_b: tuple[LineSpan, ...] = ()
    functions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Group:
    """Submissions sharing one block of code that no other submission holds.

    ``tokens`` are the indices, in ``shown``'s tokens, of the code the whole
    group shares and no one else does (``lines`` in ``shown``'s cells);
    ``discounted`` says whether pair scores count that code as common (the
    group is larger than the rarity limit), so that its pairs score low or
    not at all and only this group shows it.
    """

    members: tuple[str, ...]
    shared_tokens: int
    discounted: bool
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
    """(name, first line, last line) of each top-level function of a cell (none if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ()
    return tuple((node.name, min([node.lineno] + [d.lineno for d in node.decorator_list]), node.end_lineno or node.lineno)
                 for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))


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
    hashes, positions = [], []
    for start, end in runs:
        grams = kgram_array(texts[start:end], settings.k)
        if settings.w == 1:          # every k-gram is kept: no window to slide
            hashes.append(grams)
            positions.append(np.arange(start, start + len(grams), dtype=np.int64))
        else:
            kept = winnow(grams.tolist(), settings.w)
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

    def spans(self, hits: np.ndarray) -> list[tuple[LineSpan, ...]]:
        """For each row of ``hits`` (rows, runs; see :meth:`runs`), the line spans of the runs it marks."""
        if not self.ordered:
            keys = list(zip(self.cell.tolist(), self.line.tolist()))
            return [_spans_of(sorted({keys[g] for g in np.flatnonzero(row).tolist()})) for row in hits]
        rows, runs = np.nonzero(hits)
        if len(runs) == 0:
            return [() for _ in range(len(hits))]
        cells, lines = self.cell[runs], self.line[runs]
        new = np.ones(len(runs), dtype=bool)        # a span starts at a new row, a new cell or a gap of a line
        new[1:] = (rows[1:] != rows[:-1]) | (cells[1:] != cells[:-1]) | (lines[1:] - lines[:-1] > 1)
        first = np.flatnonzero(new)
        last = np.append(first[1:], len(runs)) - 1
        spans = list(map(LineSpan, cells[first].tolist(), lines[first].tolist(), lines[last].tolist()))
        bounds = np.searchsorted(rows[first], np.arange(len(hits) + 1)).tolist()
        return [tuple(spans[a:b]) for a, b in zip(bounds, bounds[1:])]


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
    any_shared = shared.any(axis=1).tolist() if shared.size else [False] * len(matched)
    return [[names[u] for u in np.flatnonzero(row).tolist()] if hit else [] for row, hit in zip(shared, any_shared)]


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
    floor, prior = settings.evidence_tokens, settings.prior_tokens
    halves: dict[tuple[int, int], tuple[float, int, tuple[LineSpan, ...], list[str]]] = {}
    pairs: list[Pair] = []
    for i, doc in enumerate(documents):
        ranges = [(lo, hi) for _, lo, hi in doc.functions]
        own = _coverage_of(index, i)
        unusual = float(own.sum())
        own_units = np.array([own[lo:hi].sum() for lo, hi in ranges]).reshape(len(ranges))
        mine = side(index, i, ranges)
        lines = _Lines(doc)
        spans = lines.spans(lines.runs(mine.covered))
        functions = shared_functions(doc, mine.units, own_units, settings)
        shares = (mine.matched / (max(unusual, floor) + prior)).tolist()
        for row, j in enumerate(mine.partners.tolist()):
            half = (shares[row], int(mine.tokens[row]), spans[row], functions[row])
            if j > i:
                halves[(i, j)] = half
                continue
            first = halves.pop((j, i))          # ``j``'s side, met first
            pairs.append(Pair(documents[j].name, doc.name, round(max(first[0], half[0]), 4), first[1], first[2],
                              half[2], tuple(sorted(set(first[3]) | set(half[3])))))
    common = int(np.count_nonzero((np.diff(index.holder_start) > limit) & ~index.in_base))
    return Comparison(tuple(sorted(pairs, key=lambda p: (-p.score, p.a, p.b))),
                      find_groups(documents, index, settings, starter), len(documents), limit, common,
                      tuple(documents), index)


def _coverage_of(index: ClassIndex, doc: int) -> np.ndarray:
    """(tokens,) each token's unusual weight: the heaviest weighted fingerprint covering it."""
    return coverage(index.token_weights(doc), index.k)


def _covered(positions: list[int], k: int, length: int) -> list[int]:
    """Sorted token indices covered by the k-grams starting at ``positions``."""
    return sorted({i for p in positions for i in range(p, min(p + k, length))})


def find_groups(documents: list[Document], index: ClassIndex, settings: Settings = Settings(),
                starter: frozenset[tuple[str, ...]] = frozenset()) -> tuple[Group, ...]:
    """Sets of three or more submissions sharing at least ``group_tokens`` tokens, in runs of at least
    ``block_tokens``, that no one else holds (starter lines ``starter`` left out).

    A set whose code is all inside a larger group's (one member rewrote a
    function the others kept) is part of that group, not another one.
    """
    limit = common_limit(len(documents), settings)
    counts = np.diff(index.holder_start)
    eligible = (counts >= 3) & ~index.in_base
    first_holder = index.holder_doc[np.minimum(index.holder_start[:-1], len(index.holder_doc) - 1)]
    starts: dict[tuple[int, ...], list[int]] = defaultdict(list)     # holder set -> k-gram starts in its first member
    members_of: dict[int, tuple[int, ...]] = {}
    for doc_index in range(len(documents)):
        ids = index.ids[doc_index]
        mine = eligible[ids] & (first_holder[ids] == doc_index)
        for fid, position in zip(ids[mine].tolist(), index.positions[doc_index][mine].tolist()):
            members = members_of.get(fid)
            if members is None:
                members = members_of[fid] = tuple(index.holders(fid).tolist())
            starts[members].append(position)
    found: list[tuple[tuple[int, ...], list[int]]] = []
    own: dict[int, set[int]] = {}
    for members, positions in starts.items():
        first = members[0]
        if first not in own:
            own[first] = own_tokens(documents[first], starter)
        covered = [i for i in _covered(positions, settings.k, len(documents[first].tokens)) if i in own[first]]
        tokens = [i for run in _runs(covered) if len(run) >= settings.block_tokens for i in run]
        if len(tokens) >= settings.group_tokens:
            found.append((members, tokens))
    found.sort(key=lambda m: (-len(m[1]), -len(m[0]), m[0]))
    groups: list[Group] = []
    kept: list[frozenset[int]] = []
    for members, tokens in found:
        if any(set(members) <= g for g in kept):
            continue
        kept.append(frozenset(members))
        first = documents[members[0]]
        held = set(tokens)
        functions = tuple(name for name, lo, hi in first.functions
                          if len(held.intersection(range(lo, hi))) >= max(settings.function_tokens, settings.function_share
                                                                         * len(own[members[0]].intersection(range(lo, hi)))))
        groups.append(Group(tuple(documents[i].name for i in members), len(tokens), len(members) > limit,
                            first.name, tuple(tokens), line_spans(first, tokens), functions))
    return tuple(groups)

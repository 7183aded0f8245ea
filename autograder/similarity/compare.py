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
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from itertools import combinations

from autograder.similarity.normalize import Token, program_tokens
from autograder.similarity.winnow import K, W, Fingerprint, kgram_hashes, winnow


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


@dataclass(frozen=True)
class Document:
    """One submission's code as the comparison sees it."""

    name: str
    cells: tuple[str, ...]
    tokens: tuple[Token, ...]
    fingerprints: tuple[Fingerprint, ...]


@dataclass(frozen=True)
class LineSpan:
    """Lines ``first``..``last`` (1-based, inclusive) of code cell ``cell`` (0-based)."""

    cell: int
    first: int
    last: int


@dataclass(frozen=True)
class Region:
    """One matched region: where it is in each submission, and how many tokens it covers in ``a``."""

    a: tuple[LineSpan, ...]
    b: tuple[LineSpan, ...]
    tokens: int


@dataclass(frozen=True)
class Pair:
    """Two submissions, their score, and the regions they share (in ``a``'s order)."""

    a: str
    b: str
    score: float
    matched_tokens: int
    regions: tuple[Region, ...] = field(default_factory=tuple)


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


@dataclass(frozen=True)
class Comparison:
    """One class compared: ranked pairs, groups, and how much was discounted as common and why."""

    pairs: tuple[Pair, ...]
    groups: tuple[Group, ...]
    compared: int
    common_limit: int          # a fingerprint held by more submissions than this weighs nothing in a pair
    common_fingerprints: int   # distinct fingerprints, outside the starter code, discounted for that reason


def _unit_runs(tokens: tuple[Token, ...] | list[Token]) -> list[tuple[int, int]]:
    """``[start, end)`` token ranges of each top-level statement (each function, each import...).

    K-grams never span two of them: the order of cells, and of the functions
    within a cell, is the student's to choose and says nothing.
    """
    runs: list[tuple[int, int]] = []
    for i, t in enumerate(tokens):
        if runs and (tokens[runs[-1][0]].cell, tokens[runs[-1][0]].unit) == (t.cell, t.unit):
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def document(name: str, cells: tuple[str, ...] | list[str], settings: Settings = Settings()) -> Document:
    """Normalise and fingerprint one submission's code cells."""
    tokens = tuple(program_tokens(list(cells)))
    fingerprints: list[Fingerprint] = []
    for start, end in _unit_runs(tokens):
        hashes = kgram_hashes([t.text for t in tokens[start:end]], settings.k)
        fingerprints += [Fingerprint(f.hash, f.position + start) for f in winnow(hashes, settings.w)]
    return Document(name, tuple(cells), tokens, tuple(fingerprints))


def base_hashes(cells: tuple[str, ...] | list[str], settings: Settings = Settings()) -> frozenset[int]:
    """Every k-gram hash of the starter code (all of them, not only the winnowed ones)."""
    tokens = program_tokens(list(cells))
    hashes: set[int] = set()
    for start, end in _unit_runs(tokens):
        hashes.update(kgram_hashes([t.text for t in tokens[start:end]], settings.k))
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


def holders(documents: list[Document]) -> dict[int, list[int]]:
    """Fingerprint hash -> indices (into ``documents``, ascending) of the submissions holding it."""
    held: dict[int, list[int]] = defaultdict(list)
    for index, doc in enumerate(documents):
        for h in {f.hash for f in doc.fingerprints}:
            held[h].append(index)
    return held


def rarity_weights(documents: list[Document], base: frozenset[int], settings: Settings = Settings(),
                   held: dict[int, list[int]] | None = None) -> dict[int, float]:
    """Each fingerprint's weight as evidence (see the module docstring); absent means 0."""
    n = len(documents)
    counts = {h: len(ds) for h, ds in (held if held is not None else holders(documents)).items()}
    limit = common_limit(n, settings)
    weights: dict[int, float] = {}
    for h, d in counts.items():
        if h in base or d > limit:
            continue
        weights[h] = 1.0 if n <= 2 else min(1.0, math.log(n / d) / math.log(n / 2))
    return weights


def _coverage(doc: Document, weights: dict[int, float], k: int, only: set[int] | None = None) -> dict[int, float]:
    """Token index -> weight of the heaviest weighted fingerprint (in ``only``, if given) covering it."""
    covered: dict[int, float] = {}
    for f in doc.fingerprints:
        weight = weights.get(f.hash, 0.0)
        if weight <= 0.0 or (only is not None and f.hash not in only):
            continue
        for i in range(f.position, min(f.position + k, len(doc.tokens))):
            if covered.get(i, 0.0) < weight:
                covered[i] = weight
    return covered


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
    lines = sorted({(doc.tokens[i].cell, doc.tokens[i].line) for i in indices})
    spans: list[LineSpan] = []
    for cell, line in lines:
        if spans and spans[-1].cell == cell and spans[-1].last + 1 >= line:
            spans[-1] = LineSpan(cell, spans[-1].first, line)
        else:
            spans.append(LineSpan(cell, line, line))
    return tuple(spans)


def _regions(a: Document, b: Document, shared: set[int], covered_a: dict[int, float], k: int) -> tuple[Region, ...]:
    positions_b: dict[int, list[int]] = defaultdict(list)
    for f in b.fingerprints:
        if f.hash in shared:
            positions_b[f.hash].append(f.position)
    starts_a: dict[int, list[int]] = defaultdict(list)      # token index in a -> hashes starting there
    for f in a.fingerprints:
        if f.hash in shared:
            starts_a[f.position].append(f.hash)
    regions = []
    for run in _runs(sorted(covered_a)):
        in_b: set[int] = set()
        for start in range(max(0, run[0] - k + 1), run[-1] + 1):
            for h in starts_a.get(start, ()):
                for p in positions_b[h]:
                    in_b.update(range(p, min(p + k, len(b.tokens))))
        regions.append(Region(line_spans(a, run), line_spans(b, in_b), len(run)))
    return tuple(regions)


def score_pair(a: Document, b: Document, weights: dict[int, float], unusual: dict[str, float],
               settings: Settings = Settings()) -> Pair:
    """The pair's score and matched regions (see the module docstring)."""
    shared = {f.hash for f in a.fingerprints if weights.get(f.hash, 0.0) > 0.0} & {f.hash for f in b.fingerprints}
    covered_a = _coverage(a, weights, settings.k, shared)
    covered_b = _coverage(b, weights, settings.k, shared)
    floor, prior = settings.evidence_tokens, settings.prior_tokens
    score = max(sum(covered_a.values()) / (max(unusual[a.name], floor) + prior),
                sum(covered_b.values()) / (max(unusual[b.name], floor) + prior))
    return Pair(a.name, b.name, round(score, 4), len(covered_a), _regions(a, b, shared, covered_a, settings.k))


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
    held = holders(documents)
    weights = rarity_weights(documents, base, settings, held)
    unusual = {d.name: sum(_coverage(d, weights, settings.k).values()) for d in documents}
    candidates: set[tuple[int, int]] = set()
    for h, indices in held.items():
        if h in weights:
            candidates.update(combinations(indices, 2))
    pairs = [score_pair(documents[i], documents[j], weights, unusual, settings) for i, j in sorted(candidates)]
    limit = common_limit(len(documents), settings)
    common = sum(1 for h, ds in held.items() if len(ds) > limit and h not in base)
    return Comparison(tuple(sorted(pairs, key=lambda p: (-p.score, p.a, p.b))),
                      find_groups(documents, base, held, settings, starter), len(documents), limit, common)


def _covered(positions: list[int], k: int, length: int) -> list[int]:
    """Sorted token indices covered by the k-grams starting at ``positions``."""
    return sorted({i for p in positions for i in range(p, min(p + k, length))})


def find_groups(documents: list[Document], base: frozenset[int], held: dict[int, list[int]],
                settings: Settings = Settings(), starter: frozenset[tuple[str, ...]] = frozenset()) -> tuple[Group, ...]:
    """Sets of three or more submissions sharing at least ``group_tokens`` tokens, in runs of at least
    ``block_tokens``, that no one else holds (starter lines ``starter`` left out).

    A set whose code is all inside a larger group's (one member rewrote a
    function the others kept) is part of that group, not another one.
    """
    limit = common_limit(len(documents), settings)
    starts: dict[tuple[int, ...], list[int]] = defaultdict(list)     # holder set -> k-gram starts in its first member
    by_hash = {h: tuple(ds) for h, ds in held.items() if len(ds) >= 3 and h not in base}
    for index, doc in enumerate(documents):
        for f in doc.fingerprints:
            members = by_hash.get(f.hash)
            if members is not None and members[0] == index:
                starts[members].append(f.position)
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
        groups.append(Group(tuple(documents[i].name for i in members), len(tokens), len(members) > limit,
                            first.name, tuple(tokens), line_spans(first, tokens)))
    return tuple(groups)

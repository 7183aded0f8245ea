"""Choosing which distractors to show so the key has no visible place among the choices.

A student who does not work a question can still look at its printed
choices: which number is smallest or largest, which is closest to the others,
which text is longest, which text is most alike to the rest. If the key sits
at the same place in any of those orders variant after variant, that place
gives it away. Every distractor is the key with a mistake applied, so left to
chance the key is usually the middle one (most alike, closest in value).

:func:`balanced_subset` therefore draws, for each visible order, the place the
key should take (uniformly, from "below all the others" to "above all the
others"), and keeps the set of distractors, among every set the family's
mistakes allow, whose key places are nearest those draws. Over many variants
the key's place in each order is then near uniform, as far as the mistakes
allow: a family whose mistakes all lie on one side of the key, or are all one
edit of it, needs more mistakes (the other side, two mistakes at once, sign
slips of wrong values) before any draw can help.
"""
from __future__ import annotations

import difflib
import itertools
import math
from typing import Callable, Sequence

import numpy as np

from question_bank.cues import choice_number, plain

#: Distractor pools above this size are cut (after shuffling) so the sets to compare stay few.
MAX_POOL = 10

class _Features:
    """What a reader sees of each printed text (the key at index 0, then the pool), computed once."""

    def __init__(self, texts: Sequence[str]):
        bodies = [plain(t) for t in texts]
        numbers = [choice_number(t) for t in texts]
        self.values = None if any(v is None for v in numbers) else [float(v) for v in numbers if v is not None]
        self.scaled = None if self.values is None else [math.copysign(math.log10(1 + abs(v)), v)
                                                         for v in self.values]
        self.lengths = [float(len(b)) for b in bodies]
        n = len(bodies)
        self.likeness = [[0.0] * n for _ in range(n)]
        for i, j in itertools.combinations(range(n), 2):
            ratio = difflib.SequenceMatcher(None, bodies[i], bodies[j]).ratio()
            self.likeness[i][j] = self.likeness[j][i] = ratio

    def orders(self, members: Sequence[int]) -> list[list[float] | None]:
        """Each visible order's scores for the texts ``members`` (the key first); None where it does not apply.

        The orders: the printed value (smallest ... largest), the printed
        length, how alike a text is to the others, and how close a value is
        to the others on a signed log scale.
        """
        alike = [sum(self.likeness[i][j] for j in members if j != i) for i in members]
        lengths = [self.lengths[i] for i in members]
        if self.values is None or self.scaled is None:
            return [None, lengths, alike, None]
        scaled = self.scaled
        central = [-sum(abs(scaled[i] - scaled[j]) for j in members) for i in members]
        return [[self.values[i] for i in members], lengths, alike, central]


def key_place(scores: Sequence[float]) -> int:
    """How many other choices score strictly below the key (``scores[0]``)."""
    key = scores[0]
    return sum(1 for s in scores[1:] if s < key and not math.isclose(s, key, rel_tol=1e-12, abs_tol=1e-12))


def balanced_subset(rng: np.random.Generator, key_text: str, pool_texts: Sequence[str],
                    allowed: Sequence[Sequence[int]]) -> Sequence[int]:
    """The allowed set of pool indices whose key places best match places drawn uniformly.

    The orders are taken one after the other, most telling first (value,
    length, likeness, closeness of value): for each, a place for the key is
    drawn uniformly among the places the remaining sets reach, and only the
    sets that put the key there stay. Taking them in turn rather than adding
    up misses keeps each place uniform where the sets allow it (a summed miss
    favours middle places).

    Args:
        rng: the variant's generator.
        key_text: the key as printed.
        pool_texts: every usable distractor as printed.
        allowed: candidate sets of pool indices (each clearly distinct, of the same size).
    """
    features = _Features([key_text, *pool_texts])
    places = [[None if scores is None else key_place(scores)
               for scores in features.orders([0, *(i + 1 for i in subset)])] for subset in allowed]
    remaining = list(range(len(allowed)))
    for order in range(len(places[0])):
        reachable = sorted({places[s][order] for s in remaining if places[s][order] is not None})
        if reachable:
            target = reachable[int(rng.integers(len(reachable)))]
            remaining = [s for s in remaining if places[s][order] in (None, target)]
    return allowed[remaining[int(rng.integers(len(remaining)))]]


def candidate_sets(n: int, k: int, compatible: Callable[[int, int], bool]) -> list[tuple[int, ...]]:
    """Every ``k``-set of ``range(n)`` whose members are pairwise compatible."""
    return [combo for combo in itertools.combinations(range(n), k)
            if all(compatible(a, b) for a, b in itertools.combinations(combo, 2))]


__all__ = ["MAX_POOL", "balanced_subset", "candidate_sets", "key_place"]

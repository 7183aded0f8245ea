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

Why one module of this size: what a reader sees of the choices, the places and targets of the key,
and the fit that meets them are one mechanism; families that add readers of their own reuse its fit.
"""
from __future__ import annotations

import itertools
import math
from typing import Callable, Sequence

import numpy as np

from question_bank.cues import (
    CLOSE_RTOL,
    EXACT_RTOL,
    LINK_RTOL,
    Paths,
    choice_number,
    completes,
    likeness,
    link_matrix,
    plain,
    printed_exactly,
    structure_links,
    text_body,
    text_linked,
)

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
            ratio = likeness(bodies[i], bodies[j])
            self.likeness[i][j] = self.likeness[j][i] = ratio
        self.relations = self._relations(texts, bodies)

    def _relations(self, texts: Sequence[str], bodies: Sequence[str]) -> dict[str, np.ndarray]:
        """Pairwise links a reader finds between two printed choices, as (texts, texts) boolean matrices.

        ``link``: one is the other with one slip (:func:`question_bank.cues.linked`, or a
        truncation or shift of a text); ``neg``: ``-x`` of the other; ``double``, ``above``,
        ``completes``: entry ``[i, j]`` holds when choice ``j`` is choice ``i`` counted twice, a
        little below choice ``i``, or choice ``i`` cut short.
        """
        n = len(bodies)
        rel = {name: np.zeros((n, n), dtype=bool) for name in ("link", "neg", "double", "above", "completes")}
        values = self.values
        inner = [text_body(b) for b in bodies]
        if values is not None:
            exact = [printed_exactly(t) for t in texts]
            rel["link"] = link_matrix(values, exact)
            rel["neg"], rel["double"], rel["above"] = _value_relations(np.array(values), np.array(exact))
            return rel
        for i, j in itertools.permutations(range(n), 2):
            rel["link"][i, j] = text_linked(inner[i], inner[j])
            rel["completes"][i, j] = completes(inner[i], inner[j])
        return rel

    def order_scores(self, members: np.ndarray) -> list[np.ndarray | None]:
        """Each visible order's scores, for many sets at once; None where an order does not apply.

        ``members`` is (sets, texts), each row the key (0) then the set's texts;
        each order's scores come back as a (sets, texts) array. The orders: the
        printed value (smallest ... largest), the printed length, how alike a
        text is to the others, how close a value is to the others on a signed
        log scale, and how many of the others a choice is one slip away from.
        """
        like = np.array(self.likeness)
        alike = like[members[:, :, None], members[:, None, :]].sum(axis=2)
        lengths = np.array(self.lengths)[members]
        # how many of the others each choice is one slip away from: the hub player's order
        hub = self.relations["link"][members[:, :, None], members[:, None, :]].sum(axis=2).astype(float)
        if self.values is None or self.scaled is None:
            return [None, lengths, alike, None, hub]
        scaled = np.array(self.scaled)[members]
        central = -np.abs(scaled[:, :, None] - scaled[:, None, :]).sum(axis=2)
        return [np.array(self.values)[members], lengths, alike, central, hub]

    def pick_hits(self, members: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """For each player that picks a group of choices (not a place in an order), per set: the share
        of its pick on the key and whether it picks at all. ``members`` is (sets, texts), the key first.

        The players: one of a pair x / -x; the member of such a pair whose sign most others share;
        the half of a value and its double; the larger of two close values; a text of which
        another is a truncation. Each mirrors the same-named player of :mod:`question_bank.cues`.
        """
        sub = {name: m[members[:, :, None], members[:, None, :]] for name, m in self.relations.items()}
        hits = [_group_hits(sub[name].any(axis=2)) for name in ("neg", "double", "above", "completes")]
        hits.append(_group_hits(_sign_majority(sub["neg"], np.array(self.values)[members]))
                    if self.values is not None else (np.zeros(len(members)), np.zeros(len(members), dtype=bool)))
        return hits


def _value_relations(values: np.ndarray, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`~question_bank.cues.negated`, :func:`~question_bank.cues.doubled` and
    :func:`~question_bank.cues.just_above` of every ordered pair of distinct choices at once, as
    (texts, texts) boolean matrices: entry ``[i, j]`` is the relation of ``values[i]`` to ``values[j]``.

    The same arithmetic entry by entry as those functions (a relation is a threshold, so the draw
    must see exactly what a player sees), without a Python call per pair.
    """
    a, b = values[:, None], values[None, :]
    rtol = np.where(exact[:, None] & exact[None, :], EXACT_RTOL, LINK_RTOL)
    other = ~np.eye(len(values), dtype=bool)
    neg = (a != 0) & (np.abs(a - -b) <= rtol * np.maximum(np.abs(a), np.abs(b))) & other
    double = (a != 0) & (np.abs(b - 2 * a) <= rtol * np.maximum(np.abs(b), np.abs(2 * a))) & other
    above = (a > b) & (a - b <= CLOSE_RTOL * np.abs(a)) & other
    return neg, double, above


#: Per order of :meth:`_Features.order_scores`, the places of the key a content-blind player picks
#: (0: below all the others, -1: above all the others; ``None``: every place, as for the value,
#: where the 1st, 2nd and 3rd smallest and the largest are each a player's pick).
PLAYED_PLACES: tuple[tuple[int, ...] | None, ...] = (
    None,       # value: every rank is a player
    (0, -1),    # length: the shortest and the longest text
    (-1,),      # likeness: the text most alike to the others
    (-1,),      # closeness of value: the number closest to the others
    (-1,),      # links: the choice one slip away from the most others (the hub)
)


def _group_hits(picked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A player picking the (sets, texts) mask ``picked`` uniformly: its share on the key (column 0)
    per set, and the sets where it picks anything."""
    count = picked.sum(axis=1)
    return np.where(count > 0, picked[:, 0] / np.maximum(count, 1), 0.0), count > 0


def _sign_majority(neg: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per set, the members of a pair x / -x whose sign most of the other (unpaired) choices share;
    nothing where every paired member scores the same (the player abstains)."""
    paired = neg.any(axis=2)
    same = np.sign(values[:, :, None] * values[:, None, :])
    width = values.shape[1]
    counted = ~neg & ~np.eye(width, dtype=bool)[None]
    score = np.where(counted, same, 0.0).sum(axis=2)
    score = np.where(paired, score, -np.inf)
    best = score.max(axis=1, keepdims=True)
    top = paired & (score == best)
    return top & (top.sum(axis=1) < paired.sum(axis=1))[:, None]


def place_target(reached: np.ndarray, played: tuple[int, ...] | None) -> np.ndarray:
    """The spread of the key's place to fit, over places ``0 .. width``, given the places the sets reach.

    A place a player picks gets chance, ``1 / (width + 1)``, of the key and
    no more; the rest goes evenly to the reached places no player picks (a
    key in the middle of the lengths is found by nobody). An even spread
    over the reached places instead hands a player more than chance whenever
    some place is out of reach: a key that no set makes the longest was the
    shortest a third of the time with four choices (lm-head-shapes' hidden
    states, the only three-axis shape, was found 18 times in 30). Where only
    played places are reached, or every place is played (the value), the
    spread is even over the reached places, the best the sets allow.
    """
    width = len(reached) - 1
    even = reached / max(int(reached.sum()), 1)
    if played is None:
        return even
    is_played = np.zeros(width + 1, dtype=bool)
    is_played[[p % (width + 1) for p in played]] = True
    free = reached & ~is_played
    if not free.any():
        return even
    target = np.where(reached & is_played, 1.0 / (width + 1), 0.0)
    target[free] = (1.0 - target.sum()) / free.sum()
    return target


def _same_as(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether ``a`` and ``b`` are the same number, entry by entry: ``math.isclose`` at 1e-12 (its
    symmetric test, not ``np.isclose``'s)."""
    return np.abs(a - b) <= np.maximum(1e-12 * np.maximum(np.abs(a), np.abs(b)), 1e-12)


def place_table(scores: np.ndarray, strict: bool = False) -> np.ndarray:
    """The key's place in one order, for many sets at once: ``scores`` is (sets, texts), the key first
    in each row; returns (sets, texts) weights over the key's places ``0 .. width`` (others below it).

    Without ties the key has one place. With ties the key is equally likely
    at each place of the tied range, as in a random tie-break: a reader who
    prefers the shortest text and sees the key tied with two others for it
    picks the key a third of the time. Where every choice ties, the order
    shows nothing (a reader cannot use it) and the weights are all zero;
    with ``strict`` (a rank among numbers, which two equal numbers leave
    undefined) any tie at all shows nothing.
    """
    count, width = scores.shape[0], scores.shape[1] - 1
    key, others = scores[:, :1], scores[:, 1:]
    tied = _same_as(others, key)
    below = ((others < key) & ~tied).sum(axis=1)
    ties = tied.sum(axis=1)
    table = np.zeros((count, width + 1))
    places = np.arange(width + 1)
    inside = (places >= below[:, None]) & (places < (below + ties + 1)[:, None])
    table[inside] = np.repeat(1.0 / (ties + 1), inside.sum(axis=1))
    blank = ties == width                      # every choice ties: the order shows nothing
    if strict:
        pairs = _same_as(scores[:, :, None], scores[:, None, :])
        blank |= (pairs.sum(axis=(1, 2)) - (width + 1)) > 0
    table[blank] = 0.0
    return table


#: Most rounds of proportional fitting; where the orders pull against each other the weights
#: keep moving for a while (30 rounds left visible cues that 100 remove), elsewhere they settle early.
FIT_ROUNDS = 100


#: Per pool option, the sets of mistakes that reach it (:func:`question_bank.cues.structure_links`), or None.
Parts = Sequence[Paths | None] | None


def balanced_subset(rng: np.random.Generator, key_text: str, pool_texts: Sequence[str],
                    allowed: Sequence[Sequence[int]], parts: Parts = None) -> Sequence[int]:
    """One allowed set of pool indices, drawn so the key's place in every visible order is near uniform.

    Each set puts the key at some place in each order (value, length,
    likeness, closeness of value). The sets get weights, fitted by iterative
    proportional fitting so that, under those weights, the key's place in
    every order at once is spread as evenly as the sets allow over the places
    they reach; one set is then drawn by weight. Fitting all orders together
    matters: the orders are correlated (a middle value is also a central
    one), and filtering on one order at a time leaves the last ones to chance.

    Args:
        rng: the variant's generator.
        key_text: the key as printed.
        pool_texts: every usable distractor as printed.
        allowed: candidate sets of pool indices (each clearly distinct, of the same size).
        parts: per pool text, the mistakes it carries (None where unknown): then the key's place
            among the choices by how many others are one mistake from each is fitted too.
    """
    weights = fitted_weights(key_text, pool_texts, allowed, parts)
    return allowed[int(rng.choice(len(allowed), p=weights))]


def fitted_weights(key_text: str, pool_texts: Sequence[str], allowed: Sequence[Sequence[int]],
                   parts: Parts = None) -> np.ndarray:
    """The weight :func:`balanced_subset` draws each of the ``allowed`` sets by (summing to 1)."""
    return problem_weights(fit_problem(key_text, pool_texts, allowed, parts), len(allowed))


def problem_weights(problem: tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], list[tuple[np.ndarray, np.ndarray]], float],
                    count: int, caps: Sequence[tuple[np.ndarray, np.ndarray, float]] = ()) -> np.ndarray:
    """The weights of ``count`` sets fitted to a :func:`fit_problem` answer, with more capped players
    ``caps`` ((hit, applies, limit) per set) fitted after its own."""
    orders, groups, chance = problem
    # The value order last: met exactly where it can be.
    return fit_weights([_OrderFit(table, target) for table, target, _ in orders[::-1]],
                       [*(_CapFit(hit, applies, CAP_SHARE * chance) for hit, applies in groups),
                        *(_CapFit(hit, applies, limit) for hit, applies, limit in caps)], count)


def fit_problem(key_text: str, pool_texts: Sequence[str], allowed: Sequence[Sequence[int]], parts: Parts = None
                ) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], list[tuple[np.ndarray, np.ndarray]], float]:
    """What the fit of the ``allowed`` sets is asked: for each visible order that applies and places the key
    somewhere, its place table (sets, places), the target spread of the key's place and which places a
    player picks (booleans: a pool whose sets cannot reach some place is judged by those); for each
    group-picking player that picks in some set, where it hits the key and where it picks (sets,), as
    floats; and chance, one over the number of choices."""
    width = len(allowed[0])
    features = _Features([key_text, *pool_texts])
    members = np.array([[0, *(i + 1 for i in subset)] for subset in allowed])
    orders = []
    for order, scores in enumerate(features.order_scores(members)):
        if scores is None:
            continue    # an order that does not apply (a text that is not a number) is not fitted
        table = place_table(scores, strict=order == 0)
        reached = table.sum(axis=0) > 0
        if reached.any():
            orders.append((table, place_target(reached, PLAYED_PLACES[order]), _played(width, PLAYED_PLACES[order])))
    if parts is not None and all(p is not None for p in parts):
        # the mistake hub: how many choices are one mistake from each (the key carries none)
        links = structure_links([(frozenset(),), *(p for p in parts if p is not None)])
        degrees = links[members[:, :, None], members[:, None, :]].sum(axis=2).astype(float)
        table = place_table(degrees)
        reached = table.sum(axis=0) > 0
        if reached.any():
            orders.append((table, place_target(reached, (-1,)), _played(width, (-1,))))
    groups = [(hit, applies.astype(float)) for hit, applies in features.pick_hits(members) if applies.any()]
    return orders, groups, 1.0 / (width + 1)


def _played(width: int, played: tuple[int, ...] | None) -> np.ndarray:
    """Which of the places ``0 .. width`` a player picks (every place where ``played`` is None)."""
    mask = np.zeros(width + 1, dtype=bool)
    mask[[p % (width + 1) for p in played] if played is not None else slice(None)] = True
    return mask


class _OrderFit:
    """One order's fitting step, its arrays laid out once so a round costs two small products.

    The step is proportional fitting of the key's place: each place's share among the sets where
    the order shows (``spread``) is scaled to the target, and a set's weight by its row of the
    place table times those ratios; a set where the order shows nothing (its row all 0) keeps its
    weight. Only the places some set reaches are kept (the others are 0 in every row), and the
    shown mass is the sum of the place masses (a shown row sums to 1), so one product gives both.
    """

    def __init__(self, table: np.ndarray, target: np.ndarray):
        reached = table.sum(axis=0) > 0
        hidden = (table.sum(axis=1) == 0).astype(float)
        # (sets, places + 1): the reached places, then 1 where the order shows nothing
        self.matrix = np.column_stack([table[:, reached], hidden])
        self.target = [float(t) for t in target[reached]]

    def factors(self, weights: np.ndarray) -> np.ndarray:
        """Each set's factor for this step: its row times the place ratios (1 where nothing shows)."""
        mass = np.dot(weights, self.matrix).tolist()
        shown = math.fsum(mass[:-1])
        # A place whose mass underflowed to 0 gets no share, as the target over an empty place.
        ratio = [t * shown / m if m > 0 else 0.0 for t, m in zip(self.target, mass)]
        ratio.append(1.0)
        return np.dot(self.matrix, ratio)


class _CapFit:
    """One group-picking player's step: reweight the sets so its share on the key, where it picks,
    is at most ``chance``.

    Proportional fitting on two cells (the key picked, another choice picked): the player's
    hits are scaled down to chance and its misses up by the same total; sets where it does not
    pick keep their weight. A player already at or below chance leaves the weights alone. Both
    sums come from one product, the factors from another.
    """

    def __init__(self, hit: np.ndarray, applies: np.ndarray, chance: float):
        self.sums = np.column_stack([hit, applies])
        # (sets, 3): the share picked on the key, on another choice, and where the player abstains
        self.cells = np.column_stack([hit, applies - hit, 1 - applies])
        self.chance = chance

    def factors(self, weights: np.ndarray) -> np.ndarray | None:
        """Each set's factor bringing the player's rate down to :attr:`chance`; None when already there."""
        hits, applied = np.dot(weights, self.sums).tolist()
        if applied <= 0:
            return None
        rate = hits / applied
        if rate <= self.chance or rate >= 1.0:
            return None
        return np.dot(self.cells, [self.chance / rate, (1 - self.chance) / (1 - rate), 1.0])


def fit_weights(orders: Sequence[_OrderFit], caps: Sequence[_CapFit], count: int) -> np.ndarray:
    """Weights of ``count`` sets, by rounds of proportional fitting: each order's step in turn, then
    each cap's, until a round moves no weight by 1e-6 or :data:`FIT_ROUNDS` rounds have run.

    Every step multiplies the weights by per-set factors and both kinds of step depend only on
    ratios of weighted sums, so the weights are normalised once per round, not after every step:
    the same fit as normalising each time, up to rounding.
    """
    weights = np.full(count, 1.0 / count)
    for _ in range(FIT_ROUNDS):
        before = weights
        for order in orders:
            weights = weights * order.factors(weights)
        # The group players last: a pick of a group is met less closely than a place otherwise
        # (the half of a shown double came back above the margin in two families).
        for cap in caps:
            factors = cap.factors(weights)
            if factors is not None:
                weights = weights * factors
        weights = weights / weights.sum()
        # Settled: where a cap pulls against an order the weights creep by tiny steps for all the
        # rounds, which cost a third of the generation time and moved no player's rate.
        if np.abs(weights - before).max() < 1e-6:
            break
    return weights


#: The share of chance a group-picking player is fitted to: a little under chance, since the fit
#: trades it against the orders and a player measured at chance plus noise must stay under the margin.
CAP_SHARE = 0.9


def candidate_sets(n: int, k: int, compatible: Callable[[int, int], bool]) -> list[tuple[int, ...]]:
    """Every ``k``-set of ``range(n)`` whose members are pairwise compatible.

    Each pair is judged once (the sets share their pairs; a judgement costs tens of microseconds).
    """
    ok = {(a, b): compatible(a, b) for a, b in itertools.combinations(range(n), 2)}
    return [combo for combo in itertools.combinations(range(n), k)
            if all(ok[pair] for pair in itertools.combinations(combo, 2))]


__all__ = ["MAX_POOL", "PLAYED_PLACES", "balanced_subset", "candidate_sets", "fit_problem", "fit_weights", "fitted_weights",
           "place_table", "place_target", "problem_weights"]

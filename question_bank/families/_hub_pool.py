"""The wrong options a family hands the draw, chosen so the mistake hub can be kept at chance.

The draw (:func:`question_bank.choice_balance.balanced_subset`) fits the key's place in every
visible order over the sets of a pool of at most :data:`~question_bank.choice_balance.MAX_POOL`
options, cut at random from a larger one. The mistake hub (the choice one mistake from the most
others, :func:`question_bank.cues.structure_links`) is one of those orders, and it pulls against
the others: a set where another choice is as linked as the key holds a single and a double that
shares its mistake, so its values and lengths are not free. A random cut often leaves such sets at
few value ranks (the key never the largest), and the fit then gives the hub more than chance to
meet the value order.

:func:`hub_fair_pool` therefore offers the draw a pool of its own: two-mistake options with the
singles they share, then other singles, drawn a few times; it keeps the first pool over whose sets
the draw's own fitted weights put the key on the mistake hub no more often than chance (the pool
with the least, if none does). The variant's parameters and its list of known mistakes are not
touched: only which of the known mistakes may be shown.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from question_bank.choice_balance import MAX_POOL, candidate_sets, fit_problem, fitted_weights, problem_weights
from question_bank.choices import N_DISTRACTORS, apart, known_mistakes, numeric_options, reaching_paths
from question_bank.cues import mistake_parts, structure_links
from question_bank.variant import Option

#: Pools tried before the one with the least hub share is kept.
POOL_TRIES = 8
#: Pools tried where the fit is costly (many mistakes, every other cut linked): eight kept the
#: merges-vs-vocab table's mistake hub at 0.280 against four's 0.284 (300 variants, seed 99), at
#: three times the generation time.
FEW_POOL_TRIES = 4


def linked_pool(rng: np.random.Generator, usable: Sequence[Option], size: int = MAX_POOL) -> list[Option]:
    """Up to ``size`` of ``usable``: the two-mistake options, each with the singles it shares, in a
    random order, then the other options in a random order."""
    by_parts = {mistake_parts(o.formula): o for o in usable}
    doubles = [o for o in usable if len(mistake_parts(o.formula) or ()) > 1]
    kept: list[Option] = []
    for k in rng.permutation(len(doubles)):
        double = doubles[int(k)]
        singles = [by_parts[frozenset([m])] for m in sorted(mistake_parts(double.formula) or ())
                   if frozenset([m]) in by_parts]
        new = [o for o in [double, *singles] if o not in kept]
        if len(kept) + len(new) <= size:
            kept += new
    rest = [o for o in usable if o not in kept]
    return kept + [rest[int(k)] for k in rng.permutation(len(rest))][:size - len(kept)]


def pool_excess(key_text: str, pool: Sequence[Option], k: int = N_DISTRACTORS,
                ways: Sequence[Option] | None = None) -> float:
    """How far past chance the draw over ``pool`` leaves its worst cue: under the draw's own fitted
    weights, the largest share of the key at any place a player picks (the smallest, the longest,
    the mistake hub, ...) beyond chance, and of any group player beyond chance. 1 when no set can
    be drawn. Chance, not the fit's target: a pool none of whose sets makes the key the largest is
    fitted to a third at each other rank, which the 2nd-smallest player reads as a cue."""
    sets = candidate_sets(len(pool), k, lambda a, b: apart(pool[a], pool[b]))
    if not sets:
        return 1.0
    texts, parts = [o.text for o in pool], reaching_paths(pool, pool if ways is None else ways)
    orders, groups, chance = problem = fit_problem(key_text, texts, sets, parts)
    weights = problem_weights(problem, len(sets))
    excess = 0.0
    for table, _, played in orders:
        mass = weights @ table
        shown = float(mass.sum())
        if shown > 0:
            excess = max(excess, float((mass[played] / shown).max()) - chance)
    for hit, applies in groups:
        picked = float(weights @ applies)
        if picked > 0:
            excess = max(excess, float(weights @ hit) / picked - chance)
    return excess


def random_pool(rng: np.random.Generator, usable: Sequence[Option], size: int = MAX_POOL) -> list[Option]:
    """Up to ``size`` of ``usable`` in a random order: the cut the draw itself makes."""
    return [usable[int(k)] for k in rng.permutation(len(usable))][:size]


def least_cued_pool(rng: np.random.Generator, key_value: Any, key_text: str, wrong: Sequence[Option],
                    k: int = N_DISTRACTORS, tries: int = POOL_TRIES, linked: bool = False) -> list[Option]:
    """Of ``tries`` cuts of the usable ``wrong`` (only one when they fit in one pool), the one whose
    fitted draw leaves the smallest cue past chance (:func:`pool_excess`). The cuts are random, or with
    ``linked`` every other one a :func:`linked_pool` (doubles with the singles they share), which a
    family with many doubles needs for sets that take the mistake hub off the key. Hand ``wrong`` to
    :func:`question_bank.choices.numeric_options` as its ``ways``: a value two formulas give is then
    reached both ways in the draw, as in the judging of its pool here (:func:`least_cued_options`
    does both)."""
    usable = [o for o in known_mistakes(key_value, wrong) if o.text != key_text]
    if len(usable) <= MAX_POOL:
        return usable
    scored = []
    for t in range(tries):
        pool = (linked_pool if linked and t % 2 else random_pool)(rng, usable)
        scored.append((pool_excess(key_text, pool, k, wrong), t, pool))
    return min(scored)[2]


def least_cued_options(rng: np.random.Generator, key_value: Any, key_text: str, wrong: Sequence[Option],
                       correct_feedback: str, tries: int = POOL_TRIES, linked: bool = False) -> list[Option]:
    """:func:`question_bank.choices.numeric_options` over the :func:`least_cued_pool` of ``wrong``, the
    draw reading every way of ``wrong`` a value is reached, as the pool was judged."""
    pool = least_cued_pool(rng, key_value, key_text, wrong, tries=tries, linked=linked)
    return numeric_options(rng, key_value, key_text, pool, correct_feedback, ways=wrong)


def hub_share(key_text: str, pool: Sequence[Option], k: int = N_DISTRACTORS,
              ways: Sequence[Option] | None = None) -> float:
    """How often the draw, over ``pool``, shows the key as the choice one mistake from the most others,
    among the sets where that choice is defined (0 when it never is); ``ways`` (default ``pool``) are
    every mistake the family computed, so a value two formulas give is reached both ways."""
    sets = candidate_sets(len(pool), k, lambda a, b: apart(pool[a], pool[b]))
    if not sets:
        return 1.0
    parts = reaching_paths(pool, pool if ways is None else ways)
    if any(p is None for p in parts):
        return 0.0
    weights = fitted_weights(key_text, [o.text for o in pool], sets, parts)
    hits, shown = np.zeros(len(sets)), np.zeros(len(sets))
    for s, chosen in enumerate(sets):
        degrees = structure_links([(frozenset(),), *(parts[i] for i in chosen)]).sum(axis=1)
        top = degrees == degrees.max()
        if not top.all():               # every choice tied: the reader sees nothing
            shown[s] = 1.0
            hits[s] = top[0] / top.sum()
    mass = float(weights @ shown)
    return float(weights @ hits) / mass if mass > 0 else 0.0


def hub_fair_pool(rng: np.random.Generator, key_value: Any, key_text: str, wrong: Sequence[Option],
                  k: int = N_DISTRACTORS, tries: int = POOL_TRIES) -> list[Option]:
    """The wrong options to hand :func:`question_bank.choices.numeric_options`: a :func:`linked_pool`
    of the usable ``wrong`` over which the key is the mistake hub at most at chance, ``1 / (k + 1)``
    (the best of ``tries`` pools otherwise)."""
    usable = [o for o in known_mistakes(key_value, wrong) if o.text != key_text]
    best: tuple[float, list[Option]] | None = None
    for _ in range(tries):
        pool = linked_pool(rng, usable)
        share = hub_share(key_text, pool, k, wrong)
        if best is None or share < best[0]:
            best = (share, pool)
        if share <= 1.0 / (k + 1) + 1e-9:
            break
    return best[1] if best is not None else []


__all__ = ["FEW_POOL_TRIES", "POOL_TRIES", "hub_fair_pool", "hub_share", "least_cued_options", "least_cued_pool", "linked_pool", "pool_excess", "random_pool"]

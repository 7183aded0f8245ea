"""Is the distractor draw's fast fit the proportional fitting it documents, and its grid of value
relations the cue players' own relations?

The draw's fit (:func:`question_bank.choice_balance.fit_weights`) takes each step as two small
products and normalises once per round; here it is compared with the fit written out step by step
(normalised after every step, the spread and the cap computed from their definitions), on the same
place tables, targets and group players (:func:`question_bank.choice_balance.fit_problem`).
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from question_bank.choice_balance import (
    CAP_SHARE,
    FIT_ROUNDS,
    _value_relations,
    candidate_sets,
    fit_problem,
    fitted_weights,
)
from question_bank.cues import doubled, just_above, negated


def _fit_step_by_step(key_text: str, pool_texts: list[str], allowed: list[tuple[int, ...]]) -> np.ndarray:
    """Proportional fitting as documented: per order, each place's share among the sets where the
    order shows is scaled to its target (a set where it shows nothing keeps its weight); per group
    player above its cap, hits scaled down to the cap and misses up; normalised after every step."""
    steps, groups, chance = fit_problem(key_text, pool_texts, allowed)
    cap = CAP_SHARE * chance
    weights = np.full(len(allowed), 1.0 / len(allowed))
    for _ in range(FIT_ROUNDS):
        before = weights
        for table, target, _ in steps[::-1]:
            shows = table.sum(axis=1) > 0
            spread = (weights @ table) / (weights @ shows)
            ratio = np.divide(target, spread, out=np.zeros_like(target), where=spread > 0)
            weights = weights * np.where(shows, table @ ratio, 1.0)
            weights = weights / weights.sum()
        for hit, applies in groups:
            rate = (weights @ hit) / (weights @ applies)
            if cap < rate < 1.0:
                weights = weights * (hit * (cap / rate) + (applies - hit) * ((1 - cap) / (1 - rate))
                                     + (1 - applies))
                weights = weights / weights.sum()
        if np.abs(weights - before).max() < 1e-6:
            break
    return weights


#: Pools a family could print: numbers with sign pairs, doubles and close counts (both printed
#: exactly and rounded), and texts with truncations, so every order and group player takes part.
POOLS = [
    ("$120$", ["$-120$", "$240$", "$60$", "$-60$", "$124$", "$7$", "$-240$", "$118$"]),
    ("$0.3466$", ["$0.6931$", "$-0.3466$", "$0.5$", "$1.386$", "$0.1733$", "$2.303$", "$0.3610$"]),
    ("$4.6 \\times 10^{3}$", ["$9.2 \\times 10^{3}$", "$2.3 \\times 10^{3}$", "$-4.6 \\times 10^{3}$",
                              "$4.7 \\times 10^{3}$", "$46$"]),
    ("`'the bay'`", ["`'the ba'`", "`' the ba'`", "`'he bay'`", "`'he ba'`", "`'e bay w'`"]),
    ("`(4, 8, 24)`", ["`(4, 24, 8)`", "`(8, 24)`", "`(4, 8)`", "`(32, 24)`", "`(4, 8, 1)`"]),
]


@pytest.mark.parametrize("key_text, pool_texts", POOLS)
def test_the_fit_is_proportional_fitting_normalised_after_every_step(key_text, pool_texts):
    """Normalising once per round, from two products per step, gives the documented fit's weights."""
    allowed = candidate_sets(len(pool_texts), 3, lambda a, b: True)
    fast = fitted_weights(key_text, pool_texts, allowed)
    reference = _fit_step_by_step(key_text, pool_texts, allowed)
    assert fast.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(fast, reference, rtol=1e-9, atol=1e-15)
    # the fit moved the weights: a test over uniform weights would not tell the two apart
    assert np.ptp(reference) > 1e-3


def test_the_relations_grid_is_the_players_relations_pair_by_pair():
    """Sign pairs, doubles and close counts for all pairs at once equal the scalar relations, at and
    around their thresholds (printed exactly and rounded)."""
    rng = np.random.default_rng(7)
    slips = [1.0, -1.0, 2.0, -2.0, 0.5, 1.0005, 1.002, 1.05, 1.0501, 0.95, 1 + 1e-13, 3.0, 0.0]
    for _ in range(500):
        base = float(rng.choice([1.0, 3.5, -2.0, 1e-3, 47057.0, 123456.0]))
        values = [base * float(f) for f in rng.choice(slips, size=6)]
        exact = [bool(e) for e in rng.integers(0, 2, size=6)]
        neg, double, above = _value_relations(np.array(values), np.array(exact))
        for i, j in itertools.product(range(6), repeat=2):
            both = exact[i] and exact[j]
            expected = (i != j and negated(values[i], values[j], both),
                        i != j and doubled(values[i], values[j], both),
                        i != j and just_above(values[i], values[j]))
            assert (neg[i, j], double[i, j], above[i, j]) == expected, (values, exact, i, j)

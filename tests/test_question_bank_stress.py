"""Does the stress test pass every family, and does it notice what it should?"""
from __future__ import annotations

import math
from collections import Counter

import pytest

from question_bank import get_family, run_stress
from question_bank.stress import UNIFORMITY_P_MIN, _uniformity_p, chi2_sf, stress_family
from tests.test_question_bank_cues import STILL_CUED


#: Cues the short run (60 variants, seed 1) still finds, though the same sub-questions pass at 200
#: variants (seed 99) and at 1,000 (seeds 0, 99, 12345): the dlogits row as the 3rd smallest choice,
#: 11 times in 20 (limit 54%), since its two-mistake rows came in. Strict: see the test.
SHORT_RUN_CUED = {"head-gradient-values/dlogits_row"}


def _only_known_cues(row, known: set[str] = STILL_CUED) -> bool:
    """The row passes but for cues in sub-questions still listed in ``known``."""
    from question_bank.stress import UNIFORMITY_P_MIN as p_min
    other_ok = (row.failed == 0 and row.distinct >= row.distinct_target
                and (row.uniform_p is None or row.uniform_p >= p_min))
    labels = {f"{row.family}/{sub}" if sub else row.family for sub, _, _ in row.cues.cues()}
    return other_ok and labels <= known


def test_every_family_passes_a_short_stress_run():
    report = run_stress(n=60, seed=1)
    assert all(_only_known_cues(row, STILL_CUED | SHORT_RUN_CUED) for row in report.rows), report.table()
    assert all(row.failed == 0 for row in report.rows)
    found = {f"{row.family}/{sub}" if sub else row.family for row in report.rows for sub, _, _ in row.cues.cues()}
    assert SHORT_RUN_CUED <= found, f"no longer cued, remove from SHORT_RUN_CUED: {SHORT_RUN_CUED - found}"


@pytest.mark.parametrize("x, df, p", [(3.841459, 1, 0.05), (5.991465, 2, 0.05), (7.814728, 3, 0.05),
                                      (9.487729, 4, 0.05), (11.070498, 5, 0.05), (0.0, 3, 1.0),
                                      (18.420681, 2, 1e-4)])
def test_chi2_survival_function_matches_tables(x, df, p):
    assert math.isclose(chi2_sf(x, df), p, rel_tol=1e-5)


def test_uniformity_test_flags_a_biased_spread():
    fair = {4: Counter({0: 250, 1: 251, 2: 249, 3: 250})}
    biased = {4: Counter({0: 400, 1: 200, 2: 200, 3: 200})}
    assert _uniformity_p(fair) > 0.9
    assert _uniformity_p(biased) < UNIFORMITY_P_MIN


def test_stress_counts_failures_from_the_independent_check(monkeypatch):
    fam = get_family("uniform-baseline")
    monkeypatch.setattr(type(fam), "check", lambda self, variant: ["disagrees"])
    row = stress_family("uniform-baseline", 7)
    assert row.failed == 7 and not row.ok
    assert row.messages[0].endswith("disagrees")


def test_stress_reports_a_crashing_check_as_a_failure(monkeypatch):
    def crash(self, variant):
        raise ZeroDivisionError("boom")
    monkeypatch.setattr(type(get_family("param-count")), "check", crash)
    row = stress_family("param-count", 3)
    assert row.failed == 3
    assert "ZeroDivisionError" in row.messages[0]


def test_stress_flags_too_few_distinct_variants(monkeypatch):
    fam = get_family("perplexity-from-probs")
    monkeypatch.setattr(type(fam), "distinct_target", 10_000)
    row = stress_family("perplexity-from-probs", 20)
    assert row.failed == 0 and row.distinct < row.distinct_target and not row.ok


def test_stress_table_lists_every_row_and_the_verdict():
    report = run_stress(["causal-mask", "teacher-forcing"], n=20)
    table = report.table()
    assert "causal-mask" in table and "teacher-forcing" in table
    assert "2 families, 40 variants, 0 failed variants" in table




def test_the_two_halves_of_the_full_run_cover_every_family_once():
    """The -n 1000 run is made in two files (tests/full_stress.py): together, every family once."""
    from question_bank.registry import family_names
    from tests.full_stress import HALVES, families_of
    halves = [families_of(h) for h in range(1, HALVES + 1)]
    assert sorted(sum(halves, [])) == sorted(family_names())
    assert all(halves) and len(set(sum(halves, []))) == len(family_names())

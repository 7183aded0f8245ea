"""The mistake-groups benchmark's class and metrics (benchmarks/mistake_groups.py): its copies of a
case compute the case's results in another round-off, and its reads are counted for the groups and
for a grouping exactly by the corpus truth."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from autograder.runtime.class_probes import ClassProbes
from benchmarks.mistake_groups import (behaviour_of, by_reciprocal, kept_divisions, reads_to_cover, same_behaviour,
                                       truth_losses, variant, zipf_class)

BASELINE = Path(__file__).parent / "blind" / "a" / "lm-head" / "baseline.py"


def _functions(text: str) -> dict:
    namespace: dict = {}
    exec(compile(text, "<variant>", "exec"), namespace)       # noqa: S102 - the corpus's own code
    return namespace


def test_a_copy_of_a_case_computes_its_results_in_another_round_off():
    original = _functions(variant(BASELINE.read_text(encoding="utf-8"), 0))
    restyled = _functions(variant(BASELINE.read_text(encoding="utf-8"), 2))
    rng = np.random.default_rng(5)
    logits, targets = rng.standard_normal((4, 8, 33)), rng.integers(0, 33, size=(4, 8))
    pairs = [(original["softmax"](logits), restyled["softmax"](logits)),
             (original["cross_entropy_loss"](logits, targets)[1], restyled["cross_entropy_loss"](logits, targets)[1])]
    for before, after in pairs:
        np.testing.assert_allclose(after, before, rtol=1e-13, atol=0)
    assert any(not np.array_equal(before, after) for before, after in pairs)


def test_reads_go_largest_loss_first_until_nine_tenths_of_the_loss():
    assert reads_to_cover([5.0] * 10) == 9
    assert reads_to_cover([1.0] * 9 + [91.0]) == 1
    assert reads_to_cover([]) == 0


def _record(student: str, question: str, lost: float) -> SimpleNamespace:
    item = SimpleNamespace(question=question, passed=False, points=lost)
    return SimpleNamespace(entry=SimpleNamespace(student=student), outcome=SimpleNamespace(items=[item]))


def test_a_grouping_by_truth_goes_by_cause_and_keeps_another_functions_group_whole():
    mixed = SimpleNamespace(id="f-1", unit="f", question="q1",
                            members=(_record("a0", "q1", 1.0), _record("a1", "q1", 1.0), _record("b0", "q1", 2.0)))
    split_off = SimpleNamespace(id="f-2", unit="f", question="q1", members=(_record("b1", "q1", 0.5),))
    through = SimpleNamespace(id="g-1", unit="g", question="q2",
                              members=(_record("c0", "q2", 3.0), _record("d0", "q2", 3.0)))
    cause = {"a0": "a", "a1": "a", "b0": "b", "b1": "b", "c0": "c", "d0": "d"}
    function = dict.fromkeys(cause, "f")
    assert sorted(truth_losses([mixed, split_off, through], cause, function)) == [2.0, 2.5, 6.0]


def test_a_zipf_class_is_seeded_and_repeats_its_cases_as_one_over_their_rank():
    names = [f"case{i}" for i in range(40)]
    drawn = zipf_class(names, 20_000, 1.0, seed=3)
    assert drawn == zipf_class(names, 20_000, 1.0, seed=3) and len(drawn) == 20_000
    counts = sorted((drawn.count(n) for n in names), reverse=True)
    harmonic = sum(1.0 / r for r in range(1, 41))
    # The most common case about 1/H of the class, the second half as often, the tenth a tenth.
    assert abs(counts[0] / 20_000 - 1 / harmonic) < 0.02
    assert 1.7 < counts[0] / counts[1] < 2.3 and 7 < counts[0] / counts[9] < 13
    assert zipf_class(names, 300, 1.0, seed=4) != zipf_class(names, 300, 1.0, seed=3)


def test_a_weighted_grouping_by_truth_counts_each_member_as_its_cases_copies():
    mixed = SimpleNamespace(id="f-1", unit="f", question="q1",
                            members=(_record("a0", "q1", 1.0), _record("b0", "q1", 2.0)))
    cause, function = {"a0": "a", "b0": "b"}, {"a0": "f", "b0": "f"}
    assert sorted(truth_losses([mixed], cause, function, {"a0": 10.0, "b0": 0.0})) == [10.0]


#: A case that divides a NumPy sum by a Python count (0 for an empty input: nan, as NumPy divides)
#: and a float32 array by a Python number (float32 still).
_DIVIDES_BY_A_COUNT = """import numpy as np


def mean_loss(x):
    n = len(x)
    return np.sum(x) / n, x / 2
"""


def test_a_copy_keeps_a_division_whose_reciprocal_changes_what_the_case_does_on_the_probes():
    """``1.0 / n`` raises for a Python 0 where ``np.sum(x) / n`` gives nan: the copy would be another
    behaviour, and a split it made the benchmark's. That division stays one in the copies; the one
    whose reciprocal is round-off only is rewritten, and every style behaves as the case."""
    inputs = ((np.linspace(-1.0, 1.0, 6, dtype=np.float32),), (np.zeros(0, dtype=np.float32),))
    reference = tuple((np.float32(np.sum(x) / len(x)) if len(x) else np.float32(0.0), x / 2) for (x,) in inputs)
    probes = ClassProbes("lm-head", {"mean_loss": inputs}, {"mean_loss": reference})
    original = behaviour_of(_DIVIDES_BY_A_COUNT, probes)
    assert behaviour_of(by_reciprocal(_DIVIDES_BY_A_COUNT), probes) != original      # the premise
    kept = kept_divisions(_DIVIDES_BY_A_COUNT, probes)
    assert len(kept) == 1
    copy = variant(_DIVIDES_BY_A_COUNT, 2, kept)
    assert "np.sum(x) / n" in copy and "x * (1.0 / 2)" in copy
    assert behaviour_of(copy, probes) == original
    assert same_behaviour({"case": _DIVIDES_BY_A_COUNT}, probes) == ({"case": kept}, [])

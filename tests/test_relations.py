"""How a wrong result relates to the right one, named when no catalogued mistake matches."""
from __future__ import annotations

import math

import numpy as np

from autograder.runtime.relations import relation

RNG = np.random.default_rng(0)
LOGITS = RNG.standard_normal((2, 3, 5))
TARGETS = RNG.integers(0, 5, size=(2, 3))
PARAMS = ["logits", "targets"]
ARGS = (LOGITS, TARGETS)


def test_a_factor_is_named_with_where_it_comes_from():
    right = RNG.standard_normal((2, 3, 5))
    said = relation(right * 6, right, PARAMS, ARGS)
    assert said == ("Your result is exactly 6 times too large (6 = 2 × 3, the sizes of axes 0 and 1 of "
                    "`logits`).")
    assert "3 times too small" in relation(right / 3, right, PARAMS, ARGS)
    assert "opposite sign" in relation(-right, right, PARAMS, ARGS)


def test_scalars_name_only_ratios_with_a_meaning():
    assert "base 2" in relation(1.2 / math.log(2), 1.2, PARAMS, ARGS)
    assert "6 times too large (6 = 2 × 3" in relation(7.2, 1.2, PARAMS, ARGS)
    assert relation(1.2, 1.2, PARAMS, ARGS) is None
    assert relation(1.2 * 1.14, 1.2, PARAMS, ARGS) is None        # any two numbers have some ratio
    assert relation(1.2 * 7, 1.2, PARAMS, ARGS) is None           # 7 is no size of the inputs
    assert relation(35, 1, PARAMS, ARGS) is None                  # token ids and counts: no ratios


def test_whole_number_arrays_and_single_entries_claim_no_factor():
    ids = np.arange(1, 9).reshape(2, 4)
    assert relation(ids * 2, ids, PARAMS, ARGS) is None
    assert relation(np.array([2.5]), np.array([1.0]), PARAMS, ARGS) is None


def test_offsets_zeros_moved_axes_and_shifts():
    right = RNG.standard_normal((2, 3, 5))
    assert "same constant everywhere" in relation(right + 0.7, right, PARAMS, ARGS)
    per_row = right + RNG.standard_normal((2, 3, 1))
    assert "a different one at each position" in relation(per_row, right, PARAMS, ARGS)
    assert "0 everywhere" in relation(np.zeros_like(right), right, PARAMS, ARGS)
    assert "axes in the order (1, 0, 2)" in relation(np.transpose(right, (1, 0, 2)), right, PARAMS, ARGS)
    seq = np.arange(12.0).reshape(2, 6) ** 2
    shifted = np.concatenate([seq[:, :1], seq[:, :-1]], axis=1)
    assert "moved one place forward along axis 1" in relation(shifted, seq, PARAMS, ARGS)


def test_tuples_are_compared_part_by_part_and_unrelated_results_say_nothing():
    right = RNG.standard_normal((2, 3, 5))
    said = relation((1.0, right * 6), (1.0, right), PARAMS, ARGS)
    assert said.startswith("Value 2 of the 2 you returned is exactly 6 times too large")
    assert relation(RNG.standard_normal((2, 3, 5)), right, PARAMS, ARGS) is None
    assert relation(np.full((2, 3, 5), np.nan), right, PARAMS, ARGS) is None
    # Right values of another dtype: the failure is the dtype, and no relation is claimed.
    ints = np.arange(6).reshape(2, 3)
    assert relation(ints.astype(float), ints, PARAMS, ARGS) is None


def test_regions_rows_normalisation_and_mask_counts():
    right = RNG.standard_normal((2, 3, 5))
    mask = np.array([[True, True, False], [True, False, False]])
    leak = right.copy()
    right_masked = right * mask[..., None]
    leak[~mask] += 0.3
    said = relation(leak, right_masked, ["logits", "targets", "mask"], (LOGITS, TARGETS, mask))
    assert "not 0 where `mask` is False" in said
    # Three kept positions: a gradient divided by 6 (all positions) instead of 3 (the kept ones).
    said = relation(right_masked / 2, right_masked, ["logits", "targets", "mask"], (LOGITS, TARGETS, mask))
    assert "2 times too small" in said
    said = relation(right * 3 / 6, right, ["logits", "targets", "mask"], (LOGITS, TARGETS, mask))
    assert "3/6" in said or "2 times too small" in said
    rows = right.reshape(6, 5)[[3, 4, 5, 0, 1, 2]].reshape(2, 3, 5)
    assert "right rows along the last axis, but at other positions" in relation(rows, right, PARAMS, ARGS)
    probs = np.exp(right) / np.exp(right).sum(axis=-1, keepdims=True)
    whole = np.exp(right) / np.exp(right).sum()
    assert "sums to 1 over the whole array" in relation(whole, probs, PARAMS, ARGS)
    first = right.copy()
    first[:, -1] *= 1.7
    assert "wrong only at index 2 of axis 1" in relation(first, right, PARAMS, ARGS)
    # Unrelated noise claims nothing.
    assert relation(RNG.standard_normal((2, 3, 5)), right, PARAMS, ARGS) is None


def test_a_log_base_inside_an_exponent_and_a_transposed_operand():
    from autograder.runtime.relations import operand_relation
    assert "raised to the power 0.4343" in relation(2.3 ** (1 / math.log(10)), 2.3, PARAMS, ARGS)
    hidden, W = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 4))

    def head(h, w):
        return h @ w
    said = operand_relation(hidden @ W.T, head, ["hidden", "W_head"], (hidden, W))
    assert "`W_head` transposed" in said
    W_rect = RNG.standard_normal((4, 6))
    said = operand_relation(hidden @ W_rect.reshape(6, 4).T, head, ["hidden", "W_head"], (hidden, W_rect))
    assert "reshape where a transpose was meant" in said
    assert operand_relation(hidden @ W_rect * 2, head, ["hidden", "W_head"], (hidden, W_rect)) is None


def test_a_transposed_operand_is_never_claimed_for_an_id():
    from autograder.runtime.relations import operand_relation
    h, W = RNG.standard_normal(4), RNG.standard_normal((4, 4))

    def greedy(h_last, W_head):
        return int(np.argmax(h_last @ W_head))
    # Whatever W's transpose gives, an id equal to it by chance is no evidence.
    assert operand_relation(greedy(h, W.T), greedy, ["h_last", "W_head"], (h, W)) is None

"""How a wrong result relates to the right one, named when no catalogued mistake matches."""
from __future__ import annotations

import math

import numpy as np

from autograder.runtime.diagnosis import whole_number_probes
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


def test_a_factor_two_different_quantities_give_is_not_put_down_to_either():
    logits = RNG.standard_normal((3, 6, 10))
    mask = np.zeros((3, 6), dtype=bool)
    mask[:, :3] = True
    mask[0, 3] = True                    # 10 kept positions: as many as the vocabulary has entries
    params, args = ["logits", "targets", "mask"], (logits, np.zeros((3, 6), dtype=np.int64), mask)
    right = 1.7
    # Divided by B = 3 where M = 10 was due: 10/3 is also V/B (and 60/18). Neither reading is stated.
    said = relation(right * 10 / 3, right, params, args)
    assert said is None, said
    said = relation(np.full((3, 6, 10), 0.5) * 10 / 3, np.full((3, 6, 10), 0.5), params, args)
    assert "60/18" not in said and "10/3" not in said and "constant factor (3.333)" in said, said
    mask[0, 3] = False                   # 9 kept: 9/3 = 3 is also B; 3 is put down to neither
    assert "(3 =" not in (relation(np.full((3, 6, 10), 1.5), np.full((3, 6, 10), 0.5), params, args) or "")
    mask[1, 4] = mask[2, 4] = mask[1, 5] = mask[2, 5] = True    # 13 kept: a count nothing else gives
    said = relation(right * 13 / 3, right, params, args)
    assert "times 13/3 (13 = the number of True entries of `mask`" in said, said


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
    said = operand_relation(hidden @ W.T, head, head(hidden, W), ["hidden", "W_head"], (hidden, W))
    assert "`W_head` transposed" in said
    W_rect = RNG.standard_normal((4, 6))
    said = operand_relation(hidden @ W_rect.reshape(6, 4).T, head, head(hidden, W_rect), ["hidden", "W_head"],
                            (hidden, W_rect))
    assert "reshape where a transpose was meant" in said
    assert operand_relation(hidden @ W_rect * 2, head, head(hidden, W_rect), ["hidden", "W_head"],
                            (hidden, W_rect)) is None


def test_a_transposed_operand_is_never_claimed_for_an_id():
    from autograder.runtime.relations import operand_relation
    h, W = RNG.standard_normal(4), RNG.standard_normal((4, 4))

    def greedy(h_last, W_head):
        return int(np.argmax(h_last @ W_head))
    # Whatever W's transpose gives, an id equal to it by chance is no evidence.
    assert operand_relation(greedy(h, W.T), greedy, greedy(h, W), ["h_last", "W_head"], (h, W)) is None


def test_notebook_level_numbers_explain_a_factor_before_the_arguments_sizes():
    from autograder.runtime.relations import notebook_sizes
    right = RNG.standard_normal((2, 3, 5))
    said = relation(right / 32, right, PARAMS, ARGS, notebook_sizes({"B": 4, "T": 8}))
    assert "32 times too small (32 = 4 × 8, your notebook-level `B` × `T`)" in said


def test_a_non_finite_result_is_read_against_its_inputs():
    right = RNG.standard_normal((2, 3, 5))
    empty = np.zeros((2, 3), dtype=bool)
    said = relation(np.full((2, 3, 5), np.nan), right, ["logits", "targets", "mask"], (LOGITS, TARGETS, empty))
    assert "`mask` keeps no position" in said
    said = relation(float("inf"), 1.5, PARAMS, (LOGITS + 1000.0, TARGETS))
    assert "larger than 700" in said
    said = relation(float("-inf"), -3.0, ["cond_probs"], (np.array([0.5, 1e-300, 0.2]),))
    assert "too small for float32" in said
    assert relation(float("inf"), 1.5, PARAMS, ARGS) is None        # nothing in the inputs explains it


def test_values_where_positions_are_due_are_named():
    logits = RNG.standard_normal((5, 7))
    said = relation(logits.max(axis=-1), logits.argmax(axis=-1), ["logits"], (logits,))
    assert "argmax" in said and "`logits`" in said


def test_an_exponential_in_another_base_is_named():
    from autograder.runtime.relations import operand_relation

    def softmax(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)
    x = RNG.standard_normal((2, 3, 5))
    base2 = 2.0 ** (x - x.max(-1, keepdims=True))
    said = operand_relation(base2 / base2.sum(-1, keepdims=True), softmax, softmax(x), ["x"], (x,))
    assert "base 2" in said
    assert operand_relation(softmax(x) * 1.01, softmax, softmax(x), ["x"], (x,)) is None


def test_a_variant_the_result_does_not_depend_on_is_no_evidence():
    from autograder.runtime.relations import operand_relation

    def zero_loss(logits):                 # like a masked loss with nothing scored: 0 for any logits
        return 0.0, np.zeros_like(logits)
    x = RNG.standard_normal((2, 3, 5))
    assert operand_relation((0.0, np.ones_like(x)), zero_loss, zero_loss(x), ["logits"], (x,)) is None


def test_a_wrong_count_is_decomposed_into_a_term_of_the_convention():
    params = ["vocab_size", "block_size", "n_embd", "n_layer", "ffn_dim", "tied"]
    args = (1000, 64, 48, 3, 192, True)

    def right(V, T, d, L, f, tied=True):
        return {"ffn": L * (2 * d * f + f + d), "total": 10}

    def said(change):
        wrong = lambda *a: {"ffn": right(*a)["ffn"] + change(*a), "total": 10}
        seen = [(wrong(*p), right(*p), p) for p in whole_number_probes(args)]
        return relation(wrong(*args), right(*args), params, args, (), seen)
    assert said(lambda V, T, d, L, f, tied: -L * d).startswith("Your `ffn` is `n_embd` × `n_layer` too small (144 here")
    assert "`vocab_size` × `n_embd` too large (48000 here" in said(lambda V, T, d, L, f, tied: V * d)
    assert said(lambda V, T, d, L, f, tied: 7) is None
    # Right only at this setting: a coincidence the probes expose says nothing.
    assert said(lambda V, T, d, L, f, tied: -L * d if (V, T) == (1000, 64) else -T * L) is None


def test_errors_of_float32_size_are_named():
    right = RNG.standard_normal((3, 4)) * 5
    scale = np.abs(right).max()
    noisy = right + 2e-6 * scale * RNG.choice([-1.0, 1.0], size=right.shape)   # beyond the tolerance
    said = relation(noisy, right, ["x"], (right,))
    # The size is a fact; float32 is one of the slips that give it, never stated as the cause.
    assert "only a little (at most 2e-06" in said and "another step size or formula" in said, said
    assert "compute in float64" not in said
    assert "float32" not in (relation(right + 1e-3 * scale, right, ["x"], (right,)) or "")
    # A 0/1 integer mask's count is a quantity: M/B that equals (T·V)/(B·T) is said without a source.
    logits = RNG.standard_normal((3, 6, 8))
    mask = np.zeros((3, 6), dtype=np.int64)
    mask[0, :4] = mask[1, :3] = mask[2, :1] = 1           # 8 kept, as many as V
    said = relation(1.7 * 8 / 3, 1.7, ["logits", "targets", "mask"], (logits, np.zeros((3, 6), np.int64), mask))
    assert said is None, said


def test_exceptions_are_read_for_their_cause():
    from autograder.runtime.error_causes import cause_of
    x = np.zeros((2, 3, 5))
    said = cause_of("ValueError: operands could not be broadcast together with shapes (2,3,5) (2,3) ", ["x"], (x,))
    assert "keepdims=True" in said and "axis 2" in said
    targets, mask = np.array([[1, -100, 2]]), np.array([[True, False, True]])
    said = cause_of("IndexError: index -100 is out of bounds for axis 1 with size 5", ["logits", "targets", "mask"],
                    (x, targets, mask))
    assert "`targets` holds -100" in said and "padding" in said
    said = cause_of("IndexError: index 2 is out of bounds for axis 0 with size 1", ["logits", "targets"],
                    (x, targets))                           # no mask: the ids go along the wrong axis
    assert "another axis" in said and "padding" not in said
    assert "einsum" in cause_of("ValueError: einstein sum subscripts string contains too many subscripts "
                                "for operand 0", ["x"], (x,))
    assert "50000 × 50000" in cause_of("MemoryError: Unable to allocate 18.6 GiB for an array with shape "
                                       "(50000, 50000) and data type float64", ["x"], (x,))
    assert "keeps no position" in cause_of("ZeroDivisionError: division by zero", ["mask"],
                                           (np.zeros((2, 2), dtype=bool),))
    assert cause_of("ValueError: <script>alert(1)</script>", ["x"], (x,)) == ""
    # a crafted message cannot put its own words into the cause: only numbers are read from it
    crafted = cause_of("Cannot cast ufunc 'add' output from dtype('grade_is_20') to dtype('int64')", ["x"], (x,))
    assert crafted == ""


def _raised(action) -> str:
    try:
        action()
    except Exception as exc:           # noqa: BLE001 - NumPy's own wording is what is read
        return f"{type(exc).__name__}: {exc}"
    raise AssertionError("expected an exception")


def test_numpys_own_messages_for_a_fixed_size_a_choice_limit_a_function_and_a_row_are_read():
    """The messages as this NumPy writes them (NumPy 2 prints a reshape's -1 as ``newaxis``)."""
    from autograder.runtime.error_causes import cause_of
    dlogits, hidden = np.zeros((8, 64)), np.zeros((2, 4, 16))
    said = cause_of(_raised(lambda: dlogits.reshape(100, -1)), ["dlogits", "hidden"], (dlogits, hidden))
    assert "cannot be reshaped into (100, -1)" in said and "not taken from the input" in said, said
    probs = np.zeros((4, 200))
    said = cause_of(_raised(lambda: np.choose(np.zeros(4, int), list(probs.T))), ["probs"], (probs,))
    assert "at most 64 choices" in said and "np.arange(N)" in said, said
    said = cause_of(_raised(lambda: 1 - np.triu), ["T"], (4,))
    assert "an operand of `-` is a function" in said, said
    x = np.ones((3, 4))
    said = cause_of(_raised(lambda: float(x[0])), ["f", "x"], (None, x))
    assert "picks a row, not an entry (`x` has 2 axes here)" in said, said
    # Another type than a function: nothing is claimed.
    assert cause_of(_raised(lambda: 1 - "a"), ["x"], (x,)) == ""


def test_a_0_1_integer_mask_is_read_as_a_mask_and_a_region_is_never_overstated():
    rng = np.random.default_rng(5)
    right = rng.standard_normal((2, 6, 5))
    mask = np.array([[1, 1, 0, 1, 0, 0], [1, 0, 1, 1, 1, 0]], dtype=np.int64)
    right[mask == 0] = 0.0
    student = right.copy()
    student[mask == 0] = rng.random((int((mask == 0).sum()), 5))    # padded positions not set to 0
    targets = rng.integers(0, 5, size=mask.shape)
    said = relation(student, right, ["logits", "targets", "mask"], (right, targets, mask))
    assert "right where `mask` is 1, but not 0 where `mask` is 0" in said, said
    # Wrong at five of six indices of an axis, and right at every entry of the sixth: said as such,
    # never as "right only at" (most entries at the other indices are right too).
    student = right.copy()
    student[:, [0, 1, 2, 4, 5], [0, 1, 2, 3, 4]] += 1.0
    said = relation(student, right, ["x"], (right,))
    assert "has wrong entries at every index of axis 1 (of size 6) but 3" in said, said


def test_a_formula_of_a_single_number_and_every_second_entry_skipped_are_named():
    from autograder.runtime.diagnosis import whole_number_probes
    from autograder.runtime.error_causes import cause_of
    right, wrong = (lambda x: float(np.exp(x))), (lambda x: float(np.sqrt(x)))
    args = (2.7,)
    seen = [(wrong(*p), right(*p), p) for p in whole_number_probes(args)]
    said = relation(wrong(*args), right(*args), ["mean_nll"], args, (), seen)
    assert said.startswith("Your result is `np.sqrt(mean_nll)`, here and on 2 other values of `mean_nll` tried"), said
    assert relation(wrong(*args), right(*args), ["mean_nll"], args) is None     # one value fits many formulas
    r = np.arange(1.0, 13.0).reshape(3, 4)
    s = r.copy()
    s.reshape(-1)[1::2] = 0.0
    assert "right at every second entry" in relation(s, r, ["x"], (r,))
    assert "math.log(0.0)" in cause_of("ValueError: math domain error", ["p"], (np.zeros(3),))


def test_a_missing_position_or_axis_is_said_with_a_cause_only_where_the_values_show_it():
    from autograder.runtime.error_causes import cause_of
    r = RNG.standard_normal((2, 3, 5))
    said = relation(r[:, [-1], :], r, ["x"], (r,))
    assert "right values of the last position only" in said and "stops too early" not in said, said
    said = relation(RNG.standard_normal((2, 2, 5)), r, ["x"], (r,))
    assert said == "Your result has 2 entries along axis 1 where 3 are due.", said
    hidden = np.zeros((4, 8, 16))
    try:
        hidden.reshape(4, 16)             # (B, C): the T axis left out, every size from the input
    except ValueError as exc:
        said = cause_of(f"ValueError: {exc}", ["hidden"], (hidden,))
    assert "leaves out axes whose sizes multiply to 8 (8 = the size of axis 1 of `hidden`)" in said, said
    assert "not taken from the input" not in said


def test_an_argument_the_student_ignores_is_named_only_when_changing_it_moves_nothing():
    from autograder.runtime.diagnosis import _ignored_argument
    import solutions

    def cube(x):
        return float(np.sum(x ** 3))

    def fixed_step(f, x, eps=1e-6):
        return solutions.numerical_gradient(f, x, 1e-4)
    x = RNG.standard_normal(5)
    args = (cube, x, 1e-2)
    right = solutions.numerical_gradient(cube, x.copy(), 1e-2)
    said = _ignored_argument(solutions.numerical_gradient, lambda *a: fixed_step(*a), ["f", "x", "eps"], args,
                             fixed_step(*args), right)
    assert said.startswith("Your result stays exactly the same when `eps` is ten times larger"), said
    one_sided = lambda f, x, eps=1e-6: (solutions.numerical_gradient(f, x, eps) + 3 * eps)
    assert _ignored_argument(solutions.numerical_gradient, one_sided, ["f", "x", "eps"], args, one_sided(*args),
                             right) is None


def test_a_matrix_product_of_mismatched_sizes_says_what_the_shapes_show_not_a_transpose():
    from autograder.runtime.error_causes import cause_of
    hidden, W, b = np.zeros((4, 8, 16)), np.zeros((16, 50)), np.zeros(50)
    try:
        hidden.reshape(4, -1) @ W          # image-style flattening: no transpose fixes it
    except ValueError as exc:
        said = cause_of(f"ValueError: {exc}", ["hidden", "W_head", "b_head"], (hidden, W, b))
    assert said.startswith("What the shapes show:") and "transpose" not in said and "wrong order" not in said
    assert "128 = 8 × 16, axes 1 and 2 of `hidden` together" in said
    assert "16 (" not in said              # 16 is two axes' size here: where it came from is not said


def test_the_judge_names_an_inexact_restore_and_notebook_level_numbers():
    import types

    import pytest

    from autograder.runtime.compare import check_number
    from autograder.runtime.judge import Feedback, call, expect, reset_diagnosis_memo

    def numerical_gradient(f, x, eps=1e-6):
        for i in range(x.size):              # up, down twice, up: rounding stays behind
            x.flat[i] += eps
            x.flat[i] -= 2 * eps
            x.flat[i] += eps
        return np.zeros_like(x)

    def loss(logits):
        return float(logits.sum())
    loss.numbers_read = {"B": 4, "T": 8}      # what the sandbox reports for a function reading them

    student = types.SimpleNamespace(numerical_gradient=numerical_gradient, loss=loss)
    x = np.random.default_rng(0).standard_normal(20) * 3
    with pytest.raises(Feedback) as raised:
        call(student, "numerical_gradient", lambda z: 0.0, x)
    assert "back only approximately" in str(raised.value) and "in place" not in str(raised.value)

    reset_diagnosis_memo()
    out = call(student, "loss", x)
    with pytest.raises(Feedback) as raised:
        expect(check_number("loss", out, out + 1.0), function="loss", output=out)
    assert "`B` (= 4), `T` (= 8)" in str(raised.value)
    reset_diagnosis_memo()
    with pytest.raises(Feedback) as raised:     # forgotten with the student: never told to the next
        expect(check_number("loss", out, out + 1.0), function="loss", output=out)
    assert "notebook-level" not in str(raised.value)


def test_shapes_off_by_one_along_one_axis_and_one_blocks_count_are_named():
    right = np.arange(12).reshape(3, 4)
    said = relation(right[:, :3], right, ["data"], (np.arange(40),))
    assert "3 entries along axis 1 where 4 are due" in said and "stops too early" in said
    params = ["vocab_size", "block_size", "n_embd", "n_layer", "ffn_dim", "tied"]
    args = (1000, 64, 48, 5, 192, True)
    one_block = lambda V, T, d, L, f, tied: {"attention": 4 * d * d + 4 * d}
    every_block = lambda V, T, d, L, f, tied: {"attention": L * (4 * d * d + 4 * d)}
    seen = [(one_block(*p), every_block(*p), p) for p in whole_number_probes(args)]
    said = relation(one_block(*args), every_block(*args), params, args, (), seen)
    assert "is exactly `n_layer` times too small" in said


def test_a_whole_array_ratio_and_padded_ids_used_as_indices_are_found_by_probes():
    import solutions
    from autograder.runtime.catalogue import Catalogue
    from autograder.runtime.diagnosis import _not_entry_by_entry, out_of_range_ids_feedback, using_catalogue
    from tests.suites import FUNCTIONS, MISTAKES
    a = RNG.standard_normal((3, 4))
    n = a + 1e-3 * RNG.standard_normal((3, 4))
    norm_ratio = lambda a, n: float(np.linalg.norm(a - n) / (np.linalg.norm(a) + np.linalg.norm(n)))
    right = solutions.max_rel_err(a, n)
    said = _not_entry_by_entry(solutions.max_rel_err, norm_ratio, ["a", "n"], (a, n), norm_ratio(a, n), right)
    assert said and said.startswith("Scaling one entry of `a` and `n` together by 1000"), said
    signed = lambda a, n: float(np.max((a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))   # entry by entry
    assert _not_entry_by_entry(solutions.max_rel_err, signed, ["a", "n"], (a, n), signed(a, n), right) is None
    # Entry by entry with a floor of 1e-8: on entries near the floor, scaling one changes it too, so
    # tiny entries say nothing either way.
    floor = lambda a, n: float(np.max(np.abs(a - n) / np.maximum(1e-8, np.abs(a) + np.abs(n))))
    tiny_a, tiny_n = a * 1e-9, n * 1e-9
    assert _not_entry_by_entry(solutions.max_rel_err, floor, ["a", "n"], (tiny_a, tiny_n), floor(tiny_a, tiny_n),
                               solutions.max_rel_err(tiny_a, tiny_n)) is None

    def everywhere_then_mask(logits, targets, mask):
        if (targets < 0).any() or (targets >= logits.shape[-1]).any():
            raise IndexError("Target out of bounds")
        return solutions.masked_cross_entropy(logits, np.where(mask, targets, 0), mask)
    logits = RNG.standard_normal((2, 3, 5))
    mask = np.array([[True, True, False], [True, False, False]])
    targets = np.where(mask, RNG.integers(0, 5, size=(2, 3)), -100)
    with using_catalogue(Catalogue("all", tuple(FUNCTIONS), dict(MISTAKES))):
        said = out_of_range_ids_feedback("masked_cross_entropy", lambda v: everywhere_then_mask(*v),
                                         (logits, targets, mask))
        assert said.startswith("`masked_cross_entropy` runs once the entries of `targets` that are not ids from 0 to 4 "
                               "(here -100) are replaced by 0"), said
        broken = lambda v: 1 / 0
        assert out_of_range_ids_feedback("masked_cross_entropy", broken, (logits, targets, mask)) == ""


def test_a_function_that_raises_on_three_axes_but_not_on_two_is_told_so():
    import types

    import pytest

    from autograder.runtime.judge import Feedback, call, reset_diagnosis_memo

    def softmax(x, axis=-1):          # written for the notebook's 2-D example
        shifted = x - x.max(axis=axis).reshape(-1, 1)
        e = np.exp(shifted)
        return e / e.sum(axis=axis).reshape(-1, 1)

    def broken(x, axis=-1):           # raises whatever the number of axes
        raise ValueError("cannot reshape array of size 3 into shape (2,)")

    x = RNG.standard_normal((4, 8, 24))
    reset_diagnosis_memo()
    with pytest.raises(Feedback) as raised:
        call(types.SimpleNamespace(softmax=softmax), "softmax", x)
    said = str(raised.value)
    assert "raises on this `x` of shape (4, 8, 24) (3 axes), but returns on the same values with the first " \
           "two axes merged into one, shape (32, 24) (2 axes)" in said, said
    for args in ((x,), (x[0, 0],)):           # raising on 2 axes too; 1-D, nothing to merge
        reset_diagnosis_memo()
        with pytest.raises(Feedback) as raised:
            call(types.SimpleNamespace(softmax=broken), "softmax", *args)
        assert "merged" not in str(raised.value), str(raised.value)
    reset_diagnosis_memo()


def test_a_nan_from_entries_that_are_zero_in_every_array_is_traced_to_them():
    import solutions
    from autograder.runtime.catalogue import Catalogue
    from autograder.runtime.diagnosis import using_catalogue, zero_positions_feedback
    from tests.suites import FUNCTIONS, MISTAKES

    a, n = RNG.standard_normal(12), RNG.standard_normal(12)
    a[[3, 7]] = n[[3, 7]] = 0.0
    unguarded = lambda a, n: float(np.max(np.abs(a - n) / (np.abs(a) + np.abs(n))))
    overflowing = lambda a, n: float(np.max(np.exp(np.abs(a - n) * 1e3)))     # inf whatever the zeros
    with using_catalogue(Catalogue("all", tuple(FUNCTIONS), dict(MISTAKES))), np.errstate(all="ignore"):
        said = zero_positions_feedback("max_rel_err", lambda: (a, n), unguarded(a, n), unguarded)
        assert "not finite because of the 2 positions where `a` and `n` are both 0" in said, said
        assert zero_positions_feedback("max_rel_err", lambda: (a, n), overflowing(a, n), overflowing) == ""
        assert zero_positions_feedback("max_rel_err", lambda: (a, n), 0.5, unguarded) == ""      # finite
    assert math.isfinite(solutions.max_rel_err(a, n))


def test_a_function_right_on_two_axes_but_wrong_on_three_is_told_so():
    from autograder.runtime.catalogue import Catalogue
    from autograder.runtime.diagnosis import relation_feedback, using_catalogue
    from tests.suites import FUNCTIONS, MISTAKES

    def two_axes_only(x, axis=-1):          # 3-D input comes back untouched
        if x.ndim != 2:
            return x
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    def wrong_everywhere(x, axis=-1):
        e = np.exp(x)
        return e / e.sum()

    x = RNG.standard_normal((2, 3, 5))
    with using_catalogue(Catalogue("all", tuple(FUNCTIONS), dict(MISTAKES))):
        said = relation_feedback("softmax", lambda: (x,), two_axes_only(x), call_student=two_axes_only)
        assert "right result on the same values with the first two axes of `x` merged into one (shape (6, 5) " \
               "instead of (2, 3, 5))" in said, said
        said = relation_feedback("softmax", lambda: (x,), wrong_everywhere(x), call_student=wrong_everywhere)
        assert "merged" not in said, said


def _loss(logits, targets, divide=False):
    """Mean cross-entropy of (N, V) ``logits``; with ``divide``, the real slip of dividing it by the
    sum of exponentials (shifted by the row maximum) of the first row."""
    z = logits - logits.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = -logp[np.arange(len(targets)), targets].mean()
    return loss / np.exp(z[0]).sum() if divide else loss


def test_a_number_that_is_a_size_times_too_small_on_the_test_only_is_not_put_down_to_the_size():
    # Equal logits in every row: dividing by the sum of exponentials is dividing by V, on this input
    # only. A probe input with unequal rows shows the ratio is not V, so the size is not named.
    params = ["logits", "targets"]
    flat, targets = np.zeros((4, 9)), np.array([1, 2, 3, 4])
    rng = np.random.default_rng(0)
    probe_logits, probe_targets = rng.normal(size=(3, 7)), np.array([0, 5, 6])
    observations = [(_loss(probe_logits, probe_targets, True), _loss(probe_logits, probe_targets),
                     (probe_logits, probe_targets))]
    assert "9 times too small" in relation(_loss(flat, targets, True), _loss(flat, targets), params, (flat, targets))
    assert relation(_loss(flat, targets, True), _loss(flat, targets), params, (flat, targets),
                    observations=observations) is None
    # A factor that holds on the probe too (the loss divided by V, whatever the logits) is still said.
    divided = [(_loss(probe_logits, probe_targets) / 7, _loss(probe_logits, probe_targets), (probe_logits, probe_targets))]
    said = relation(_loss(flat, targets) / 9, _loss(flat, targets), params, (flat, targets), observations=divided)
    assert said and "9 times too small" in said and "axis 1 of `logits`" in said

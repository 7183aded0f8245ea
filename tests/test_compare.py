"""Does the comparison helper check existence, type, shape, dtype, finiteness, then values?"""
import numpy as np
import pytest

from autograder.runtime.compare import MISSING, check_array, check_number

EXPECTED = np.array([[0.1, 0.2], [0.3, 0.4]])


class LyingArray(np.ndarray):
    """An ndarray subclass whose comparisons always say 'equal'."""

    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)


class LyingFloat(float):
    def __eq__(self, other):
        return True


def test_correct_array_passes():
    assert check_array("probs", EXPECTED.copy(), EXPECTED).ok


@pytest.mark.parametrize("value, fragment", [
    (MISSING, "was not returned"),
    (None, "is None"),
    ([[0.1, 0.2], [0.3, 0.4]], "should be a numpy.ndarray"),
    (EXPECTED.view(LyingArray), "LyingArray"),
    (np.ma.masked_array(EXPECTED), "MaskedArray"),
    (EXPECTED.T.reshape(4), "shape (4,)"),
    (EXPECTED.astype(np.int64), "dtype int64"),
    (np.array([[0.1, np.inf], [0.3, np.nan]]), "2 non-finite entries"),
    (EXPECTED * 2, "4 of 4 entries have wrong values"),
])
def test_array_failures_name_the_variable_and_the_problem(value, fragment):
    verdict = check_array("probs", value, EXPECTED)
    assert not verdict.ok
    assert "`probs`" in verdict.message
    assert fragment in verdict.message


def test_checks_run_in_order_type_before_shape():
    verdict = check_array("probs", np.ones(3).view(LyingArray), EXPECTED)
    assert "numpy.ndarray" in verdict.message   # the type problem is reported, not the shape


def test_array_message_never_prints_expected_values():
    verdict = check_array("probs", EXPECTED + 1.0, EXPECTED)
    assert "0.1" not in verdict.message and "0.4" not in verdict.message


def test_a_float_result_must_have_the_expected_float_dtype():
    # float64 results feed the gradient checks: float32 is refused, with the reason
    verdict = check_array("probs", EXPECTED.astype(np.float32), EXPECTED, rtol=1e-6, atol=1e-7)
    assert not verdict.ok and "float32" in verdict.message and "float64" in verdict.message
    assert check_array("probs", EXPECTED.astype(np.float32), EXPECTED.astype(np.float32)).ok


def test_integer_arrays_compare_exactly_and_accept_any_integer_dtype():
    expected = np.array([3, 1, 2])
    assert check_array("yb", expected.astype(np.int32), expected, exact=True).ok
    assert not check_array("yb", np.array([3, 1, 3]), expected, exact=True).ok


def test_a_float32_scalar_is_refused_for_its_precision():
    verdict = check_number("ppl", np.float32(2.154435), 2.154435, rtol=1e-6)
    assert not verdict.ok and "float32" in verdict.message


@pytest.mark.parametrize("value", [2.154435, np.float64(2.154435)])
def test_plain_numbers_are_accepted(value):
    assert check_number("ppl", value, 2.154435, rtol=1e-6).ok


def test_a_plain_int_is_a_number_but_can_be_wrong():
    verdict = check_number("ppl", 2, 2.154435)
    assert not verdict.ok and "wrong value" in verdict.message


@pytest.mark.parametrize("value, fragment", [
    (MISSING, "was not returned"),
    (None, "is None"),
    (LyingFloat(1.0), "LyingFloat"),
    (True, "bool"),
    (np.array(2.154435), "ndarray"),
    (float("nan"), "nan"),
])
def test_number_failures(value, fragment):
    verdict = check_number("ppl", value, 2.154435)
    assert not verdict.ok
    assert "`ppl`" in verdict.message and fragment in verdict.message


def test_integer_answers_compare_exactly():
    assert check_number("total", 116534784, 116534784, integer=True).ok
    assert not check_number("total", 116534785, 116534784, integer=True).ok
    assert not check_number("total", 1.5, 2, integer=True).ok


def test_closeness_follows_numpys_rule_on_every_kind_of_entry():
    """The grader's own closeness test agrees with ``numpy.isclose`` entry by entry: nan, both
    infinities, signed zeros, huge and tiny values, and differences on both sides of the tolerance."""
    from autograder.runtime.compare import count_not_close, numbers_close
    rng = np.random.default_rng(0)
    specials = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-300, 1e300, 1.0, 1.0 + 1e-7, 1.0 + 2e-6, -1.0]
    for _ in range(500):
        n = int(rng.integers(1, 20))
        a = rng.choice(specials + list(rng.standard_normal(5)), n)
        b = a.copy()
        swap = rng.random(n) < 0.5
        b[swap] = rng.choice(specials + list(rng.standard_normal(5)), int(swap.sum()))
        nudged = b + rng.choice([0.0, 1e-9, 1e-7, 1e-5], n) * np.isfinite(b)
        for x, y in ((a, b), (a, nudged), (nudged, a)):
            for rtol, atol in ((1e-6, 1e-9), (0.0, 0.0), (1e-3, 1e-9)):
                expected = np.isclose(x, y, rtol=rtol, atol=atol)
                assert count_not_close(x, y, rtol, atol) == x.size - np.count_nonzero(expected)
                assert [numbers_close(float(u), float(v), rtol, atol) for u, v in zip(x, y)] == expected.tolist()

"""Hidden tests for question 3: softmax."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array, check_dtype
from autograder.runtime.judge import call, expect

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


@pytest.mark.contract("any_shape")
@pytest.mark.points(1)
@pytest.mark.parametrize("shape", [(4, 8, 24), (1, 1, 5), (7,)])
def test_softmax_matches_reference(student, rng, shape):
    args = (rng.standard_normal(shape) * 3,)
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)


@pytest.mark.contract("large_scores")
@pytest.mark.points(2)
@pytest.mark.parametrize("shape", [(2, 3, 50), (50,)])
def test_large_offsets_stay_finite(student, rng, shape):
    """Scores near 1000, in a batch and in a single vector (a 1-D branch needs the shift too)."""
    args = (1000.0 + rng.standard_normal(shape) * 3,)
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)


@pytest.mark.contract("any_shape")
@pytest.mark.points(1)
@pytest.mark.parametrize("axis", [0, 1])
def test_other_axes(student, rng, axis):
    args = (rng.standard_normal((3, 4, 5)), axis)
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)


@pytest.mark.contract("large_scores")
@pytest.mark.points(1)
def test_rows_far_apart(student, rng):
    """Each row shifted by its own large amount: subtracting one maximum for the whole
    array underflows every row but the highest."""
    offsets = rng.uniform(-400.0, 400.0, size=(3, 4, 1))
    offsets[0, 0, 0], offsets[-1, -1, 0] = 400.0, -400.0
    args = (offsets + rng.standard_normal((3, 4, 10)) * 2,)
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)


@pytest.mark.contract("large_scores")
@pytest.mark.points(1)
def test_a_row_spanning_a_wide_range_stays_finite(student, rng):
    """Scores from -400 to 400 within each row: shifting by the row's minimum overflows."""
    args = (rng.uniform(-400.0, 400.0, size=(2, 3, 10)),)
    args[0][..., 0], args[0][..., 1] = 400.0, -400.0
    # A few scores within 3 of the top share the mass, so the answer is not one-hot: a one-hot
    # at the row's maximum (or any guess) passes no more than it would on another row.
    args[0][..., 2:5] = 400.0 - rng.uniform(0.0, 3.0, size=(2, 3, 3))
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)


@pytest.mark.contract("keep_float_dtype")
@pytest.mark.points(1)
def test_float32_input_keeps_its_dtype(student, rng):
    args = ((rng.standard_normal((2, 3, 7)) * 3).astype(np.float32),)
    out = call(student, "softmax", *args)
    expect(check_dtype("probs", out, np.float32, "the docstring promises the same float dtype as `x`"),
           function="softmax", make_args=lambda: args, output=out)
    expect(check_array("probs", out, ref.softmax(args[0].astype(np.float64)).astype(np.float32),
                       rtol=1e-5, atol=1e-6),
           function="softmax", make_args=lambda: args, output=out)

"""Hidden tests for question 3: softmax."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array
from autograder.runtime.judge import call, expect


@pytest.mark.points(1)
@pytest.mark.parametrize("shape", [(4, 8, 24), (1, 1, 5), (7,)])
def test_softmax_matches_reference(student, rng, shape):
    args = (rng.standard_normal(shape) * 3,)
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)


@pytest.mark.points(2)
def test_large_offsets_stay_finite(student, rng):
    args = (1000.0 + rng.standard_normal((2, 3, 50)) * 3,)
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)


@pytest.mark.points(1)
@pytest.mark.parametrize("axis", [0, 1])
def test_other_axes(student, rng, axis):
    args = (rng.standard_normal((3, 4, 5)), axis)
    out = call(student, "softmax", *args)
    expect(check_array("probs", out, ref.softmax(*args)), function="softmax",
           make_args=lambda: args, output=out)

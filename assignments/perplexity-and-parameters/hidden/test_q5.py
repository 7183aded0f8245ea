"""Hidden tests for question 5: causal_mask.

The mask is a function of ``T`` alone, so every ``T`` that earns points is drawn from the
submission's seed over a wide range: a fixed ``T`` could be answered from memory (the whole
question once was, as four bit strings), and a one- or two-position mask by a guess. The
smallest sizes are still checked, but only in a test that also checks a drawn size.
"""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array
from autograder.runtime.judge import call, expect


def _check(student, T):
    T = int(T)
    out = call(student, "causal_mask", T)
    expect(check_array("mask", out, ref.causal_mask(T), exact=True), function="causal_mask",
           make_args=lambda: (T,), output=out)


@pytest.mark.contract("sizes")
@pytest.mark.points(1)
@pytest.mark.parametrize("low, high", [(3, 60), (61, 200), (201, 400)])
def test_mask_matches_reference(student, rng, low, high):
    for T in rng.choice(np.arange(low, high + 1), size=2, replace=False):
        _check(student, T)


@pytest.mark.contract("sizes")
@pytest.mark.points(1)
def test_one_and_two_positions(student, rng):
    """T = 1 and T = 2, where a guessed mask is often right: paid only with a drawn T beside them."""
    for T in (1, 2, int(rng.integers(3, 401))):
        _check(student, T)

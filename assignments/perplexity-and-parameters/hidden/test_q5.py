"""Hidden tests for question 5: causal_mask."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array
from autograder.runtime.judge import call, expect


@pytest.mark.points(1)
@pytest.mark.parametrize("T", [1, 2, 7, 64])
def test_mask_matches_reference(student, T):
    out = call(student, "causal_mask", T)
    expect(check_array("mask", out, ref.causal_mask(T), exact=True), function="causal_mask",
           make_args=lambda: (T,), output=out)

"""Hidden tests for question 2: lm_head."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array
from autograder.runtime.judge import call, expect

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


@pytest.mark.contract("other_sizes")
@pytest.mark.points(1)
@pytest.mark.parametrize("B, T, C, V", [(4, 8, 16, 24), (1, 1, 3, 5), (2, 5, 7, 7)])
def test_logits_match_reference(student, rng, B, T, C, V):
    args = (rng.standard_normal((B, T, C)), rng.standard_normal((C, V)), rng.standard_normal(V))
    out = call(student, "lm_head", *args)
    expect(check_array("logits", out, ref.lm_head(*args)), function="lm_head",
           make_args=lambda: args, output=out)

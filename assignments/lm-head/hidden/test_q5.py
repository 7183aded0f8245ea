"""Hidden tests for question 5: lm_head_backward."""
import numpy as np
import pytest

import solutions as ref
from autograder.compare import check_array
from autograder.judge import call, expect, unpack


@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, C, V", [(4, 8, 16, 24), (1, 1, 3, 4), (2, 3, 6, 6)])
def test_gradients_match_reference(student, rng, B, T, C, V):
    args = (rng.standard_normal((B, T, C)), rng.standard_normal((C, V)), rng.standard_normal((B, T, V)))
    out = call(student, "lm_head_backward", *args)
    grads = unpack(out, "lm_head_backward", ("dW_head", "db_head", "dhidden"))
    for name, got, want in zip(("dW_head", "db_head", "dhidden"), grads, ref.lm_head_backward(*args)):
        expect(check_array(name, got, want), function="lm_head_backward", make_args=lambda: args, output=out)

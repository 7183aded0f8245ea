"""Hidden tests for question 3: masked_cross_entropy."""
import numpy as np
import pytest

import solutions as ref
from autograder.compare import check_array, check_number
from autograder.judge import call, expect, unpack
from autograder.tolerances import SCALAR_ATOL, SCALAR_RTOL


def _padded_batch(rng, B, T, V):
    logits = rng.standard_normal((B, T, V)) * 2
    lengths = rng.integers(1, T + 1, size=B)
    mask = np.arange(T)[None, :] < lengths[:, None]
    targets = np.where(mask, rng.integers(0, V, size=(B, T)), -1)   # padding ids are junk
    return logits, targets, mask


@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, V", [(3, 6, 10), (1, 1, 4), (4, 9, 25)])
def test_masked_loss_and_gradient_match_reference(student, rng, B, T, V):
    args = _padded_batch(rng, B, T, V)
    out = call(student, "masked_cross_entropy", *args)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    want_loss, want_d = ref.masked_cross_entropy(*args)
    make_args = lambda: args
    expect(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="masked_cross_entropy", make_args=make_args, output=out)
    expect(check_array("dlogits", dlogits, want_d), function="masked_cross_entropy",
           make_args=make_args, output=out)

"""Hidden tests for question 4: cross_entropy_loss."""
import numpy as np
import pytest

import solutions as ref
from autograder.compare import check_array, check_number
from autograder.judge import call, expect, unpack
from autograder.tolerances import SCALAR_ATOL, SCALAR_RTOL


def _check(student, args):
    out = call(student, "cross_entropy_loss", *args)
    loss, dlogits = unpack(out, "cross_entropy_loss", ("loss", "dlogits"))
    want_loss, want_d = ref.cross_entropy_loss(*args)
    make_args = lambda: args
    expect(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="cross_entropy_loss", make_args=make_args, output=out)
    expect(check_array("dlogits", dlogits, want_d), function="cross_entropy_loss",
           make_args=make_args, output=out)


@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, V", [(4, 8, 24), (1, 1, 6), (3, 5, 11)])
def test_loss_and_gradient_match_reference(student, rng, B, T, V):
    _check(student, (rng.standard_normal((B, T, V)), rng.integers(0, V, size=(B, T))))


@pytest.mark.points(1)
def test_large_offsets(student, rng):
    logits = 1000.0 + rng.standard_normal((2, 4, 30)) * 3
    _check(student, (logits, rng.integers(0, 30, size=(2, 4)).astype(np.int32)))

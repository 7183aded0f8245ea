"""Hidden tests for question 5: lm_head_backward."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array
from autograder.runtime.judge import call, expect, unpack


@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, C, V", [(4, 8, 16, 24), (1, 1, 3, 4), (2, 3, 6, 6)])
def test_gradients_match_reference(student, rng, B, T, C, V):
    args = (rng.standard_normal((B, T, C)), rng.standard_normal((C, V)), rng.standard_normal((B, T, V)))
    out = call(student, "lm_head_backward", *args)
    grads = unpack(out, "lm_head_backward", ("dW_head", "db_head", "dhidden"))
    for name, got, want in zip(("dW_head", "db_head", "dhidden"), grads, ref.lm_head_backward(*args)):
        expect(check_array(name, got, want), function="lm_head_backward", make_args=lambda: args, output=out)


@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, C, V", [(2, 3, 4, 5), (1, 1, 2, 3)])
def test_gradients_agree_with_your_own_head(student, rng, B, T, C, V):
    """dW_head, db_head and dhidden must be the vector-Jacobian products of
    the student's own lm_head for a random upstream gradient."""
    from autograder.runtime.gradcheck import projection_check
    from autograder.runtime.judge import Feedback

    hidden, W, b = rng.standard_normal((B, T, C)), rng.standard_normal((C, V)), rng.standard_normal(V)
    upstream = rng.standard_normal((B, T, V))
    # Agreement with a wrong head proves nothing (zeros agree with zeros):
    # the head itself must be right before its backward can earn this test.
    if not check_array("logits", call(student, "lm_head", hidden, W, b), ref.lm_head(hidden, W, b)).ok:
        raise Feedback("This test checks your backward pass against your own `lm_head`, which does "
                       "not give the right logits yet: fix question 2 first.")
    grads = unpack(call(student, "lm_head_backward", hidden, W, upstream), "lm_head_backward",
                   ("dW_head", "db_head", "dhidden"))
    forwards = {
        "dW_head": (W, lambda w: call(student, "lm_head", hidden, w, b)),
        "db_head": (b, lambda c: call(student, "lm_head", hidden, W, c)),
        "dhidden": (hidden, lambda h: call(student, "lm_head", h, W, b)),
    }
    for name, grad in zip(("dW_head", "db_head", "dhidden"), grads):
        x, forward = forwards[name]
        if type(grad) is not np.ndarray or grad.shape != x.shape:
            raise Feedback(f"`{name}` should be an ndarray shaped like the quantity it belongs to.")
        scalar = lambda z, forward=forward: float(np.sum(upstream * np.asarray(forward(z), dtype=np.float64)))
        if not projection_check(scalar, x, rng, grad=grad).passed:
            raise Feedback(f"`{name}` does not match a finite-difference check of your own `lm_head`: "
                           "either the backward formula or the forward pass is off. Compare the shapes "
                           "each one contracts over.")

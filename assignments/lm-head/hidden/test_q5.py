"""Hidden tests for question 5: lm_head_backward."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import array_structure, check_array
from autograder.runtime.judge import call, expect, unpack

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


@pytest.mark.contract("other_sizes")
@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, C, V", [(4, 8, 16, 24), (1, 1, 3, 4), (2, 3, 6, 6)])
def test_gradients_match_reference(student, rng, B, T, C, V):
    args = (rng.standard_normal((B, T, C)), rng.standard_normal((C, V)), rng.standard_normal((B, T, V)))
    out = call(student, "lm_head_backward", *args)
    grads = unpack(out, "lm_head_backward", ("dW_head", "db_head", "dhidden"))
    for name, got, want in zip(("dW_head", "db_head", "dhidden"), grads, ref.lm_head_backward(*args)):
        expect(check_array(name, got, want), function="lm_head_backward", make_args=lambda: args, output=out)


@pytest.mark.contract("own_head", "other_sizes")
@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, C, V", [(2, 3, 4, 5), (1, 1, 2, 3)])
def test_gradients_agree_with_your_own_head(student, rng, B, T, C, V):
    """dW_head, db_head and dhidden must be right and be the vector-Jacobian
    products of the student's own lm_head for a random upstream gradient."""
    from autograder.runtime.gradcheck import projection_check
    from autograder.runtime.judge import FAR_POINT_SCALE, Feedback, record_evidence

    hidden, W, b = rng.standard_normal((B, T, C)), rng.standard_normal((C, V)), rng.standard_normal(V)
    upstream = rng.standard_normal((B, T, V))
    # Agreement with a wrong head proves nothing (zeros agree with zeros), and
    # a head right only where it was first called proves nothing either: the
    # head must be right here and at a point it has never seen.
    far = tuple(a + FAR_POINT_SCALE * rng.standard_normal(a.shape) for a in (hidden, W, b))
    for args in ((hidden, W, b), far):
        if not check_array("logits", call(student, "lm_head", *args), ref.lm_head(*args)).ok:
            raise Feedback("This test checks your backward pass against your own `lm_head`, which does "
                           "not give the right logits yet: fix question 2 first.")
    grads = unpack(call(student, "lm_head_backward", hidden, W, upstream), "lm_head_backward",
                   ("dW_head", "db_head", "dhidden"))
    expected = ref.lm_head_backward(hidden, W, upstream)
    forwards = {
        "dW_head": (W, lambda w: call(student, "lm_head", hidden, w, b)),
        "db_head": (b, lambda c: call(student, "lm_head", hidden, W, c)),
        "dhidden": (hidden, lambda h: call(student, "lm_head", h, W, b)),
    }
    for (name, grad), want in zip(zip(("dW_head", "db_head", "dhidden"), grads), expected):
        x, forward = forwards[name]
        structure = array_structure(name, grad, want)
        if not structure.ok:
            raise Feedback(structure.message)
        scalar = lambda z, forward=forward: float(np.sum(upstream * np.asarray(forward(z), dtype=np.float64)))
        if not projection_check(scalar, x, rng, grad=grad).passed:
            # Your lm_head was right at two points above, so the fault is this gradient's formula; its
            # verdict against the right gradient says how (a factor, a sum where a mean is due, ...).
            expect(check_array(name, grad, want), function="lm_head_backward",
                   make_args=lambda: (hidden, W, upstream), output=grads)
            raise Feedback(f"`{name}` does not match a finite-difference check of your own `lm_head`, "
                           "which gives the right logits: the backward formula for it is off.")
        if not check_array(name, grad, want).ok:
            raise Feedback(f"`{name}` agrees with your `lm_head` near this input but is not its gradient: "
                           "check it on other inputs of the same shapes.")
    record_evidence()

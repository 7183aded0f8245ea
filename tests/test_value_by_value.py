"""A function that returns two values (a loss and its gradient) is judged value by value: a right
value is never called wrong because the other one is."""
from __future__ import annotations

import numpy as np
import pytest

import solutions
from autograder.runtime.judge import Feedback, check_gradient_of_own_loss

ce = solutions.cross_entropy_loss


def _verdict(loss_of) -> str:
    rng = np.random.default_rng(3)
    logits = rng.standard_normal((3, 4, 13))
    targets = rng.integers(0, 13, size=(3, 4))
    right_loss, right_grad = ce(logits, targets)
    student_loss, student_grad = loss_of(logits, targets)
    with pytest.raises(Feedback) as failed:
        check_gradient_of_own_loss(lambda z: loss_of(z, targets)[0], lambda z: ce(z, targets)[0], logits,
                                   student_loss, student_grad, right_grad, grad_name="dlogits",
                                   x_name="logits", rng=rng)
    return str(failed.value)


def test_a_right_gradient_beside_a_wrong_loss_is_called_right():
    said = _verdict(lambda z, t: (ce(z, t)[0] * z.shape[1], ce(z, t)[1]))     # the loss summed over T
    assert "`dlogits` is right" in said and "needs no change" in said
    assert "not the gradient" not in said and "Both" not in said


def test_a_wrong_gradient_of_a_wrong_loss_is_called_wrong_and_a_right_loss_is_not_blamed():
    said = _verdict(lambda z, t: (ce(z, t)[0] * 2, ce(z, t)[1] * 3))
    assert "The loss value is wrong, and `dlogits` is wrong too" in said
    said = _verdict(lambda z, t: (ce(z, t)[0], ce(z, t)[1] * 3))
    assert said.startswith("Your loss is right, but `dlogits` is not its gradient")
    said = _verdict(lambda z, t: (ce(z, t)[0] * 2, ce(z, t)[1] * 2))          # consistent with its own loss
    assert said.startswith("`dlogits` is the gradient of your loss, but the loss itself is wrong")


def test_an_argument_left_changed_gets_advice_that_fits_any_function():
    """A numerical gradient that nudges x and never puts it back was told to subtract a max."""
    import types
    from autograder.runtime.judge import call

    def numerical_gradient(f, x, eps=1e-6):
        grad = np.zeros_like(x)
        for i in range(x.size):
            x.flat[i] += eps
            grad.flat[i] = f(x)
        return grad
    student = types.SimpleNamespace(numerical_gradient=numerical_gradient)
    with pytest.raises(Feedback) as failed:
        call(student, "numerical_gradient", lambda z: float(np.sum(z ** 2)), np.ones(4), 1e-3)
    said = str(failed.value)
    assert "did not put it back" in said and "restore every entry" in said and "max" not in said, said

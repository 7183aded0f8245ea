"""Does the gradient-check library pass correct gradients and catch wrong ones?"""
import time

import numpy as np
import pytest

import solutions as S
from autograder.runtime.gradcheck import projection_check
from autograder.runtime.tolerances import FD_EPS, GRAD_MAX_REL_ERR

# The elementwise check is the course's own definition, so it is the reference's.
max_rel_err, numerical_gradient = S.max_rel_err, S.numerical_gradient


def gradient_check(f, x, analytic, eps=FD_EPS):
    """Max relative error of ``analytic`` against the central-difference gradient of ``f`` at ``x``."""
    return max_rel_err(analytic, numerical_gradient(f, x, eps))


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    B, T, C, V = 2, 3, 5, 7
    hidden = rng.standard_normal((B, T, C))
    W = rng.standard_normal((C, V)) * 0.5
    b = rng.standard_normal(V) * 0.1
    targets = rng.integers(0, V, size=(B, T))
    return hidden, W, b, targets


def test_numerical_gradient_restores_its_input(problem):
    hidden, W, b, targets = problem
    logits = S.lm_head(hidden, W, b)
    before = logits.copy()
    numerical_gradient(lambda z: S.cross_entropy_loss(z, targets)[0], logits)
    np.testing.assert_array_equal(logits, before)


def test_numerical_gradient_restores_input_even_when_f_raises():
    x = np.arange(4.0)
    calls = []

    def f(z):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return float(z.sum())

    with pytest.raises(RuntimeError):
        numerical_gradient(f, x)
    np.testing.assert_array_equal(x, np.arange(4.0))


def test_max_rel_err_is_the_lesson_definition():
    a, n = np.array([1.0, 0.0, -2.0]), np.array([1.1, 0.0, -2.0])
    assert max_rel_err(a, n) == pytest.approx(0.1 / (1.1 + 1e-12))
    assert max_rel_err(np.zeros(3), np.zeros(3)) == 0.0   # the guard avoids 0/0


def test_analytic_cross_entropy_gradient_passes(problem):
    hidden, W, b, targets = problem
    logits = S.lm_head(hidden, W, b)
    _, dlogits = S.cross_entropy_loss(logits, targets)
    err = gradient_check(lambda z: S.cross_entropy_loss(z, targets)[0], logits.copy(), dlogits)
    assert err < GRAD_MAX_REL_ERR


def test_gradient_scaled_by_two_fails(problem):
    hidden, W, b, targets = problem
    logits = S.lm_head(hidden, W, b)
    _, dlogits = S.cross_entropy_loss(logits, targets)
    err = gradient_check(lambda z: S.cross_entropy_loss(z, targets)[0], logits.copy(), 2 * dlogits)
    assert err > GRAD_MAX_REL_ERR


def test_dlogits_missing_one_over_n_fails(problem):
    hidden, W, b, targets = problem
    logits = S.lm_head(hidden, W, b)
    _, dlogits = S.cross_entropy_loss(logits, targets)
    N = targets.size
    err = gradient_check(lambda z: S.cross_entropy_loss(z, targets)[0], logits.copy(), dlogits * N)
    assert err > GRAD_MAX_REL_ERR


def test_transposed_dW_head_fails():
    rng = np.random.default_rng(1)
    C = V = 6   # square, so a transposed dW has the right shape and only values can tell
    hidden, W, b = rng.standard_normal((2, 3, C)), rng.standard_normal((C, V)), np.zeros(V)
    targets = rng.integers(0, V, size=(2, 3))
    _, dlogits = S.cross_entropy_loss(S.lm_head(hidden, W, b), targets)
    dW, _, _ = S.lm_head_backward(hidden, W, dlogits)
    f = lambda w: S.cross_entropy_loss(S.lm_head(hidden, w, b), targets)[0]
    assert gradient_check(f, W.copy(), dW) < GRAD_MAX_REL_ERR
    assert gradient_check(f, W.copy(), dW.T) > GRAD_MAX_REL_ERR


def test_projection_check_passes_correct_and_fails_wrong_gradients(problem):
    hidden, W, b, targets = problem
    logits = S.lm_head(hidden, W, b)
    _, dlogits = S.cross_entropy_loss(logits, targets)
    f = lambda z: S.cross_entropy_loss(z, targets)[0]
    for seed in range(5):
        assert projection_check(f, logits, np.random.default_rng(seed), grad=dlogits).passed
        assert not projection_check(f, logits, np.random.default_rng(seed), grad=2 * dlogits).passed


def test_projection_check_with_vector_output_uses_a_vjp():
    rng = np.random.default_rng(2)
    hidden, W = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    f = lambda h: S.lm_head(h, W, np.zeros(5))           # (2, 3, 5): not scalar
    vjp = lambda v: v @ W.T                               # vᵀJ with respect to hidden
    assert projection_check(f, hidden, rng, vjp=vjp).passed
    assert not projection_check(f, hidden, rng, vjp=lambda v: v @ W.T * 0.5).passed
    with pytest.raises(ValueError):
        projection_check(f, hidden, rng)


def test_projection_check_catches_missing_one_over_n_at_vocab_50000_quickly():
    rng = np.random.default_rng(11)
    B, T, V = 2, 2, 50_000
    logits = rng.standard_normal((B, T, V))
    targets = rng.integers(0, V, size=(B, T))
    start = time.perf_counter()
    _, dlogits = S.cross_entropy_loss(logits, targets)
    f = lambda z: S.cross_entropy_loss(z, targets)[0]
    good = projection_check(f, logits, np.random.default_rng(0), grad=dlogits)
    bad = projection_check(f, logits, np.random.default_rng(0), grad=dlogits * B * T)
    elapsed = time.perf_counter() - start
    assert good.passed, good
    assert not bad.passed, bad
    assert elapsed < 1.0, f"projection checks took {elapsed:.2f} s"

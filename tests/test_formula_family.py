"""Is a formula named only when probes separate it from the other ways of writing the number?

Each reading of ``formula_family`` is shown stated where the student's function follows a formula
on the test's input and on the probes, and not stated where the evidence does not separate it: a
function that fits only on the test's own input, an input where several formulas coincide (one
probability), a result of exactly 0, an array off at one entry, a step too small to tell quotients apart.
"""
from __future__ import annotations

import numpy as np

import solutions
from autograder.runtime.formula_family import difference_feedback, formula_feedback, gradient_feedback
from autograder.runtime.sandbox.channel import Named

RNG = np.random.default_rng(29)
P = RNG.uniform(0.05, 0.9, size=9)


def _n_plus_one(p):
    p = np.asarray(p, dtype=np.float64)
    return float(np.exp(-np.sum(np.log(p)) / (p.size + 1)))


def test_a_denominator_is_named_where_it_fits_the_probes_and_not_where_it_fits_the_test_only():
    said = formula_feedback(solutions.perplexity, _n_plus_one, ["token_probs"], (P,), _n_plus_one(P),
                            solutions.perplexity(P))
    assert said and "`np.exp(-np.sum(np.log(token_probs)) / (N + 1))`" in said
    assert "`np.exp(-np.mean(np.log(token_probs)))`" in said
    # The same number on the test's input, but another formula elsewhere: no formula is confirmed.
    memorised = lambda p: _n_plus_one(p) if np.array_equal(p, P) else solutions.perplexity(p) * 1.5
    assert formula_feedback(solutions.perplexity, memorised, ["token_probs"], (P,), _n_plus_one(P),
                            solutions.perplexity(P)) is None


def test_one_probability_where_formulas_coincide_and_a_zero_from_underflow_say_nothing():
    one = P[:1]
    assert formula_feedback(solutions.perplexity, _n_plus_one, ["token_probs"], (one,), _n_plus_one(one),
                            solutions.perplexity(one)) is None
    prod_over_n = lambda p: float(np.prod(p) / len(p))
    tiny = np.full(400, 1e-3)
    assert prod_over_n(tiny) == 0.0
    assert formula_feedback(solutions.sequence_log_prob, prod_over_n, ["cond_probs"], (tiny,), 0.0,
                            solutions.sequence_log_prob(tiny)) is None


def test_a_product_is_told_from_its_sign_flipped_twin_by_a_probe_of_the_other_parity():
    product = lambda p: float(np.prod(-np.log(p)))
    said = formula_feedback(solutions.perplexity, product, ["token_probs"], (P,), product(P), solutions.perplexity(P))
    assert said and "`np.prod(-np.log(token_probs))`" in said


def _masked_args():
    logits = RNG.standard_normal((3, 5, 7))
    mask = np.arange(5)[None, :] < np.array([5, 2, 4])[:, None]
    targets = np.where(mask, RNG.integers(0, 7, size=(3, 5)), -1)
    return logits, targets, mask


def test_a_gradient_is_named_where_every_entry_fits_and_not_where_one_entry_is_off():
    logits, targets, mask = _masked_args()
    loss, right = solutions.masked_cross_entropy(logits, targets, mask)
    p = np.exp(logits - logits.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    no_onehot = p * mask[..., None] / mask.sum()
    params = ["logits", "targets", "mask"]
    said = gradient_feedback(params, (logits, targets, mask), (loss, no_onehot), (loss, right))
    assert said and "`p * mask / M`" in said and "without the one-hot" in said
    off = no_onehot.copy()
    off[0, 0, 0] += 0.01
    assert gradient_feedback(params, (logits, targets, mask), (loss, off), (loss, right)) is None
    assert gradient_feedback(params, (logits, targets, mask), (loss, right), (loss, right)) is None


def _minus_from_plus(f, x, eps):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        fp = f(x)
        x[i] -= eps
        grad[i] = (fp - f(x)) / (2 * eps)
        x[i] = old
    return grad


def test_a_difference_quotient_is_named_at_a_step_that_separates_it_and_not_at_a_linear_f():
    x = RNG.standard_normal((2, 3))
    f = Named("cubic")
    params = ["f", "x", "eps"]
    said = difference_feedback(params, (f, x, 1e-2), _minus_from_plus(f, x.copy(), 1e-2),
                               solutions.numerical_gradient(f, x.copy(), 1e-2))
    assert said and "the minus point is x itself" in said
    # For f = sum(w * x) the quotient from x equals the right one halved: no quotient is named.
    linear = Named("weighted_softplus", weights=np.ones((2, 3)))
    flat = np.full((2, 3), 40.0)                 # softplus is linear this far out
    assert difference_feedback(params, (linear, flat, 1e-2), _minus_from_plus(linear, flat.copy(), 1e-2),
                               solutions.numerical_gradient(linear, flat.copy(), 1e-2)) is None

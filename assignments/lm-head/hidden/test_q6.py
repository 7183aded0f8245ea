"""Hidden tests for question 6: numerical_gradient and max_rel_err."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array, check_number, explained
from autograder.runtime.judge import call, expect
from autograder.runtime.sandbox.channel import Named

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


# Functions the student's numerical_gradient differentiates are passed by
# name, so they can be sent into the grading sandbox as plain data; in a
# notebook they are ordinary callables.
_cubic = Named("cubic")


@pytest.mark.contract()
@pytest.mark.points(2)
@pytest.mark.parametrize("shape, eps", [((5,), 1e-6), ((2, 3), 1e-3), ((1, 1, 4), 1e-2)])
def test_numerical_gradient_matches_central_differences(student, rng, shape, eps):
    # A large eps makes a one-sided difference visibly different from a
    # central one (O(eps) against O(eps^2) error).
    args = (_cubic, rng.standard_normal(shape), eps)
    out = call(student, "numerical_gradient", *args)
    expect(check_array("grad", out, ref.numerical_gradient(_cubic, args[1].copy(), eps), rtol=1e-7, atol=1e-9),
           function="numerical_gradient", make_args=lambda: (args[0], args[1].copy(), eps), output=out)


@pytest.mark.contract()
@pytest.mark.points(1)
def test_max_rel_err_matches_definition(student, rng):
    a = rng.standard_normal((3, 4))
    n = a + rng.standard_normal((3, 4)) * 1e-3
    n[0, 0] = a[0, 0] = 0.0
    args = (a, n)
    out = call(student, "max_rel_err", *args)
    expect(check_number("max_rel_err", out, ref.max_rel_err(*args)), function="max_rel_err",
           make_args=lambda: args, output=out)


@pytest.mark.contract()
@pytest.mark.points(1)
def test_max_rel_err_guard_on_tiny_entries(student, rng):
    """Entries near the 1e-12 guard: the guard is added to the larger magnitude, as the docstring
    writes it, so putting it inside the max (or using another size) gives another result here."""
    a = rng.uniform(1e-13, 5e-12, size=(2, 4))
    n = a * rng.uniform(0.2, 0.8, size=(2, 4))
    args = (a, n)
    out = call(student, "max_rel_err", *args)
    expect(explained(check_number("max_rel_err", out, ref.max_rel_err(*args)),
                     "Here the entries are about as small as the guard, so the formula must be followed "
                     "exactly: `|a - n| / (max(|a|, |n|) + 1e-12)`, the guard added to the larger "
                     "magnitude.",
                     lambda: _right_where_the_guard_is_negligible(student, args)),
           function="max_rel_err", make_args=lambda: args, output=out)


def _right_where_the_guard_is_negligible(student, args):
    """Whether the student's max_rel_err is right on the same entries scaled up 10^12 times, where the
    guard no longer matters: then what is wrong at the small entries is the guard (the hint's subject)."""
    big = tuple(x * 1e12 for x in args)
    try:
        return check_number("max_rel_err", call(student, "max_rel_err", *big), ref.max_rel_err(*big)).ok
    except AssertionError:         # the call itself failed (Feedback): no evidence for the hint
        return False


@pytest.mark.contract()
@pytest.mark.points(1)
def test_max_rel_err_treats_both_gradients_alike(student, rng):
    """Every entry of ``n`` smaller than ``a``, then the other way round: dividing by one of the
    two magnitudes instead of the larger gives a different worst entry in one of the orders."""
    a = rng.uniform(1.0, 2.0, size=(2, 5)) * rng.choice([-1.0, 1.0], size=(2, 5))
    # The ratios' range is drawn: the answer is 1 - the smallest ratio, which for a fixed range
    # sits within a few percent of the same number for every submission.
    low = rng.uniform(0.1, 0.6)
    n = a * rng.uniform(low, low + 0.3, size=(2, 5))
    # and both negative everywhere: a denominator without absolute values turns negative there
    for args in ((a, n), (n, a), (-np.abs(a), -np.abs(n))):
        out = call(student, "max_rel_err", *args)
        expect(check_number("max_rel_err", out, ref.max_rel_err(*args)), function="max_rel_err",
               make_args=lambda: args, output=out)


@pytest.mark.contract("strided_view")
@pytest.mark.points(1)
def test_numerical_gradient_on_a_strided_view(student, rng):
    """A smooth non-linear function's gradient at x that is a transposed (non-contiguous) view."""
    weights = rng.standard_normal((3, 4))
    f = Named("weighted_softplus", weights=weights)              # of (3, 4) inputs
    x = np.ascontiguousarray(rng.standard_normal((4, 3))).T      # (3, 4), not C-contiguous
    out = call(student, "numerical_gradient", f, x)
    expect(check_array("grad", out, ref.numerical_gradient(f, x.copy()), rtol=1e-5, atol=1e-8),
           function="numerical_gradient", make_args=lambda: (f, x.copy()), output=out)


@pytest.mark.contract()
@pytest.mark.points(1)
def test_numerical_gradient_is_zero_where_f_does_not_depend_on_x(student, rng):
    """Entries ``f`` ignores (a zero weight, like a masked position) give f(x + eps) == f(x - eps)
    exactly: their gradient is 0, and the loop must still move on to the next entry."""
    weights = rng.standard_normal((3, 4))
    weights[rng.random((3, 4)) < 0.4] = 0.0
    weights[tuple(rng.integers(0, (3, 4)))] = 0.0
    f = Named("weighted_softplus", weights=weights)
    x = rng.standard_normal((3, 4))
    out = call(student, "numerical_gradient", f, x)
    expect(check_array("grad", out, ref.numerical_gradient(f, x.copy()), rtol=1e-5, atol=1e-8),
           function="numerical_gradient", make_args=lambda: (f, x.copy()), output=out)


@pytest.mark.contract()
@pytest.mark.points(1)
def test_x_holds_exactly_its_original_values_after_large_steps(student, rng):
    """Entries from 1e-7 to 1e3 and a step of 1e-2: adding the step and subtracting it again does not
    give every entry back bit for bit, so only a saved value restores them all."""
    x = rng.standard_normal(12) * 10.0 ** rng.uniform(-7, 3, size=12)
    out = call(student, "numerical_gradient", _cubic, x, 1e-2)     # call() fails a changed x
    expect(check_array("grad", out, ref.numerical_gradient(_cubic, x.copy(), 1e-2), rtol=1e-6, atol=1e-9),
           function="numerical_gradient", make_args=lambda: (_cubic, x.copy(), 1e-2), output=out)

"""Hidden tests for question 2: perplexity and perplexity_from_loss."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_number, explained
from autograder.runtime.hint_evidence import right_without_the_feature, within_what_tiny_terms_allow
from autograder.runtime.judge import call, expect
from autograder.runtime.tolerances import SCALAR_ATOL, SCALAR_RTOL

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


@pytest.mark.contract("long_inputs")
@pytest.mark.points(1)
@pytest.mark.parametrize("length", [1, 9, 300])
def test_perplexity_matches_reference(student, rng, length):
    # The upper end is drawn too: the perplexity of 300 draws of one distribution barely varies.
    args = (rng.uniform(0.05, rng.uniform(0.2, 1.0), size=length),)
    out = call(student, "perplexity", *args)
    expect(check_number("perplexity", out, ref.perplexity(*args), rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="perplexity", make_args=lambda: args, output=out)


@pytest.mark.contract("long_inputs")
@pytest.mark.points(1)
def test_long_inputs_do_not_underflow(student, rng):
    """20,000 probabilities of about 1e-3: their product is 0 in floating point, their mean log is not.
    Their range is drawn: with a fixed one the perplexity is within 0.3 % of the same number every time."""
    low = rng.uniform(2e-4, 1e-3)
    args = (rng.uniform(low, low * rng.uniform(1.5, 6.0), size=20_000),)
    out = call(student, "perplexity", *args)
    expect(check_number("perplexity", out, ref.perplexity(*args), rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="perplexity", make_args=lambda: args, output=out)


@pytest.mark.contract()
@pytest.mark.points(1)
def test_perplexity_from_loss_matches_reference(student, rng):
    args = (float(rng.uniform(0.1, 5.0)),)
    out = call(student, "perplexity_from_loss", *args)
    expect(check_number("perplexity", out, ref.perplexity_from_loss(*args), rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="perplexity_from_loss", make_args=lambda: args, output=out)


@pytest.mark.contract("tiny_probabilities")
@pytest.mark.points(1)
def test_tiny_probabilities_are_taken_exactly(student, rng):
    """Three probabilities between 1e-300 and 1e-100 among ordinary ones: an epsilon or a clip changes
    their logs, and the perplexity (about e^50 to e^210, finite) with them."""
    tiny = 10.0 ** -rng.uniform(100, 300, size=3)
    ordinary = rng.uniform(0.1, 1.0, size=7)
    args = (rng.permutation(np.concatenate([tiny, ordinary])),)
    out = call(student, "perplexity", *args)
    right = ref.perplexity(*args)
    plain = np.concatenate([rng.uniform(0.1, 1.0, size=3), ordinary])    # the same without the tiny ones
    # An epsilon or a clip only lowers the perplexity (each tiny log rises towards 0), never below 0.
    tiny_total = float(right)
    expect(explained(check_number("perplexity", out, right, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
                     "Here some probabilities are as small as 1e-300: their logs must be exact, so add no epsilon "
                     "inside the log and clip nothing (a log of a positive float64 is always finite).",
                     lambda: within_what_tiny_terms_allow(out, right, -1, tiny_total) and right_without_the_feature(
                         lambda: call(student, "perplexity", plain), ref.perplexity(plain))),
           function="perplexity", make_args=lambda: args, output=out)


@pytest.mark.contract("large_losses")
@pytest.mark.points(1)
def test_perplexity_from_loss_of_a_large_loss(student, rng):
    """A mean loss of 100 to 700 nats: its exponential is finite in float64 (not in float32)."""
    args = (float(rng.uniform(100.0, 700.0)),)
    out = call(student, "perplexity_from_loss", *args)
    ordinary = float(rng.uniform(0.1, 5.0))
    expect(explained(check_number("perplexity", out, ref.perplexity_from_loss(*args), rtol=SCALAR_RTOL,
                                  atol=SCALAR_ATOL),
                     "Your function is right on an ordinary loss (checked once more here) but not on this loss "
                     "above 100 nats: the exponential of a loss up to about 709 nats is a finite float64, so "
                     "nothing may cap, clip or shrink a large loss, and a float32 exponential overflows above "
                     "about 88.7.",
                     lambda: right_without_the_feature(lambda: call(student, "perplexity_from_loss", ordinary),
                                                       ref.perplexity_from_loss(ordinary))),
           function="perplexity_from_loss", make_args=lambda: args, output=out)

"""Hidden tests for question 2: perplexity and perplexity_from_loss."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_number
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

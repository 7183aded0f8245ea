"""Hidden tests for question 1: sequence_log_prob."""
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


@pytest.mark.contract("long_sequences")
@pytest.mark.points(1)
@pytest.mark.parametrize("length", [1, 7, 500])
def test_log_prob_matches_reference(student, rng, length):
    # The upper end is drawn too: a sum of 500 logs of one distribution is nearly the same number
    # for every submission, close enough to be guessed once in some ten thousand.
    args = (rng.uniform(0.01, rng.uniform(0.1, 1.0), size=length),)
    out = call(student, "sequence_log_prob", *args)
    expect(check_number("log_prob", out, ref.sequence_log_prob(*args), rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="sequence_log_prob", make_args=lambda: args, output=out)


@pytest.mark.contract("long_sequences")
@pytest.mark.points(1)
def test_long_sequences_do_not_underflow(student, rng):
    # The product is far below the smallest float. Length and range are drawn: the log of a
    # product of 3000 draws of one distribution is within 0.3 % of the same number every time.
    args = (rng.uniform(0.01, rng.uniform(0.05, 0.3), size=int(rng.integers(2000, 4000))),)
    out = call(student, "sequence_log_prob", *args)
    expect(check_number("log_prob", out, ref.sequence_log_prob(*args), rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="sequence_log_prob", make_args=lambda: args, output=out)


@pytest.mark.contract("tiny_probabilities")
@pytest.mark.points(1)
def test_tiny_probabilities_are_taken_exactly(student, rng):
    """Conditionals down to 1e-300: an epsilon added inside the log, or a clip, changes their logs."""
    args = (np.concatenate([10.0 ** -rng.uniform(100, 300, size=5), rng.uniform(0.1, 1.0, size=5)]),)
    out = call(student, "sequence_log_prob", *args)
    right = ref.sequence_log_prob(*args)
    plain = np.concatenate([rng.uniform(0.1, 1.0, size=5), args[0][5:]])   # no tiny conditional
    # An epsilon or a clip raises only the tiny conditionals' logs, by at most their whole size.
    tiny_total = float(-np.log(args[0][:5]).sum())
    expect(explained(check_number("log_prob", out, right, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
                     "Here some conditionals are as small as 1e-300: their logs must be exact, so add no "
                     "epsilon inside the log and clip nothing (a log of a positive float64 is always finite).",
                     lambda: within_what_tiny_terms_allow(out, right, +1, tiny_total) and right_without_the_feature(
                         lambda: call(student, "sequence_log_prob", plain), ref.sequence_log_prob(plain))),
           function="sequence_log_prob", make_args=lambda: args, output=out)

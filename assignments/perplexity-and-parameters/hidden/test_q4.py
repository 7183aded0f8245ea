"""Hidden tests for question 4: tied_lm_head and greedy_next_token.

``greedy_next_token`` answers one id out of V, so on a small vocabulary a guess (or a constant) is
often right. Each of its tests therefore ends with ``_gate``: two draws over a vocabulary of
thousands, which a guess passes less than once in a million times, and without which the test
earns nothing.
"""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array, check_number, check_plain, explained
from autograder.runtime.judge import call, expect

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


@pytest.mark.contract()
@pytest.mark.points(1)
@pytest.mark.parametrize("shape", [(2, 3, 8), (1, 1, 4), (5, 6)])
def test_tied_head_matches_reference(student, rng, shape):
    args = (rng.standard_normal(shape), rng.standard_normal((11, shape[-1])))
    out = call(student, "tied_lm_head", *args)
    expect(check_array("logits", out, ref.tied_lm_head(*args)), function="tied_lm_head",
           make_args=lambda: args, output=out)


def _check_greedy(student, args, why=""):
    out = call(student, "greedy_next_token", *args)
    expect(explained(check_number("token", out, ref.greedy_next_token(*args), integer=True), why),
           function="greedy_next_token", make_args=lambda: args, output=out)


def _gate(student, rng):
    """Two draws over a vocabulary of 1,000 to 3,000 ids: a guessed id passes one with a chance of at
    most 1 in 1,000, both with less than 1 in a million. (Drawing a small vocabulary again until a
    guess is that unlikely would take 20 calls where V = 2; a sandboxed call costs about 0.5 ms.)"""
    for _ in range(2):
        C, V = int(rng.integers(2, 9)), int(rng.integers(1000, 3001))
        _check_greedy(student, (rng.standard_normal(C), rng.standard_normal((C, V))),
                      "Here the vocabulary has thousands of ids.")


@pytest.mark.contract()
@pytest.mark.points(1)
def test_the_largest_logit_at_either_end_of_the_vocabulary(student, rng):
    """The largest logit at id 0, then at id V - 1: a hand-written argmax whose loop starts at 1 or
    stops one id early misses one of them (on random logits it is caught only by chance)."""
    _gate(student, rng)                     # ids at the two ends are guessable: points need the gate too
    C, V = 6, int(rng.integers(20, 60))
    for end in rng.permutation([0, V - 1]):
        h, W = rng.standard_normal(C), rng.standard_normal((C, V))
        logits = h @ W
        W[:, end] += h * (float(logits.max() - logits[end]) + 1.0) / float(h @ h)   # its logit: the max + 1
        _check_greedy(student, (h, W))


@pytest.mark.contract()
@pytest.mark.points(1)
@pytest.mark.parametrize("C, V", [(8, 30), (3, 2)])
def test_greedy_matches_reference(student, rng, C, V):
    _check_greedy(student, (rng.standard_normal(C), rng.standard_normal((C, V))))
    _gate(student, rng)


@pytest.mark.contract()
@pytest.mark.points(1)
def test_each_logit_sums_over_the_width(student, rng):
    """One feature alone favours a decoy token strongly, every feature favours the right one a
    little, and one token is strongly disfavoured: a logit is a sum over all C features, and the
    next token has the largest logit, so another reduction, or the largest size, picks another."""
    C, V = 6, 20
    h = rng.uniform(0.5, 1.5, size=C)
    W = rng.uniform(-0.1, 0.1, size=(C, V))
    best, decoy, shunned = rng.choice(V, size=3, replace=False)
    W[:, best] += 1.0
    W[:, decoy] = -1.0
    W[0, decoy] = 4.0 / h[0]
    W[:, shunned] = -3.0                 # the logit largest in size, and negative
    args = (h, W)
    out = call(student, "greedy_next_token", *args)
    expect(explained(check_number("token", out, ref.greedy_next_token(*args), integer=True),
                     "Here one feature alone strongly favours another token, every feature favours the "
                     "right one a little, and one token has a large negative logit: each logit is the sum "
                     "over all features, `h_last @ W_head`, and the next token has the largest logit (not "
                     "the largest in size).",
                     # what that sentence is about: the student picked the decoy or the shunned token
                     lambda: out in (int(decoy), int(shunned))),
           function="greedy_next_token", make_args=lambda: args, output=out)
    _gate(student, rng)


@pytest.mark.contract("large_logits")
@pytest.mark.points(1)
def test_large_logits(student, rng):
    """Logits in the thousands: the argmax needs no softmax, and one without its max subtraction
    overflows to nan there."""
    h = rng.standard_normal(8)
    # Every logit between 1000 and 2950, 50 apart, the largest never at id 0: a softmax without
    # its max subtraction is inf/inf = nan at every id, and its argmax (id 0) is always wrong.
    offsets = 1000.0 + 50.0 * rng.permutation(40)
    if np.argmax(offsets) == 0:
        offsets[[0, 1]] = offsets[[1, 0]]
    W = rng.standard_normal((8, 40)) + np.outer(h / (h @ h), offsets)
    args = (h, W)
    out = call(student, "greedy_next_token", *args)
    expect(explained(check_number("token", out, ref.greedy_next_token(*args), integer=True),
                     "Here every logit is between 1000 and 2950: `np.exp` of them overflows, so a softmax "
                     "without its maximum subtracted is nan everywhere and its argmax is 0. Take the argmax "
                     "of the logits themselves (the softmax keeps their order), or subtract the maximum.",
                     lambda: out == 0),                     # the argmax of an all-nan softmax
           function="greedy_next_token", make_args=lambda: args, output=out)
    _gate(student, rng)


@pytest.mark.contract("ties")
@pytest.mark.points(1)
def test_ties_go_to_the_lowest_id(student, rng):
    """Two (then three) tokens share the highest logit exactly; the docstring picks the lowest id.
    The tied ids are drawn (fixed ones made the answers the same two numbers for everyone)."""
    C, V = 6, 12
    h = rng.standard_normal(C)
    W = rng.standard_normal((C, V)) * 0.1
    for k in (2, 3):
        W_tied = W.copy()
        for j in rng.choice(V, size=k, replace=False):
            W_tied[:, j] = h * 10.0 / float(h @ h)        # logit exactly 10 at each tied id
        _check_greedy(student, (h, W_tied))
    _gate(student, rng)


@pytest.mark.contract("python_int")
@pytest.mark.points(1)
def test_returns_a_python_int(student, rng):
    args = (rng.standard_normal(5), rng.standard_normal((5, 9)))
    out = call(student, "greedy_next_token", *args)
    expect(check_plain("token", out, int, "the docstring promises an int: wrap np.argmax in int(...)"),
           function="greedy_next_token", make_args=lambda: args, output=out)
    expect(check_number("token", out, ref.greedy_next_token(*args), integer=True),
           function="greedy_next_token", make_args=lambda: args, output=out)
    _gate(student, rng)

"""Hidden tests for question 4: tied_lm_head and greedy_next_token.

``greedy_next_token`` answers one id out of V, so a guess is right once in V times: each of its
tests draws fresh inputs from the submission's seed ``_draws(V)`` times and passes only if every
draw is right, which a guess (or a constant) does with a chance below one in a million.
"""
import math

import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array, check_number, check_plain, explained
from autograder.runtime.judge import call, expect


@pytest.mark.points(1)
@pytest.mark.parametrize("shape", [(2, 3, 8), (1, 1, 4), (5, 6)])
def test_tied_head_matches_reference(student, rng, shape):
    args = (rng.standard_normal(shape), rng.standard_normal((11, shape[-1])))
    out = call(student, "tied_lm_head", *args)
    expect(check_array("logits", out, ref.tied_lm_head(*args)), function="tied_lm_head",
           make_args=lambda: args, output=out)


def _draws(V, per_draw=None):
    """How many draws bring a guess's chance of passing them all below 2 ** -20, when one draw is
    passed by a guess with chance ``per_draw`` (1 / V: a uniform answer among V ids)."""
    per_draw = 1.0 / V if per_draw is None else per_draw
    return max(1, math.ceil(20 / -math.log2(per_draw)))


@pytest.mark.points(1)
@pytest.mark.parametrize("C, V", [(8, 30), (3, 2)])
def test_greedy_matches_reference(student, rng, C, V):
    for _ in range(_draws(V)):
        args = (rng.standard_normal(C), rng.standard_normal((C, V)))
        out = call(student, "greedy_next_token", *args)
        expect(check_number("token", out, ref.greedy_next_token(*args), integer=True),
               function="greedy_next_token", make_args=lambda args=args: args, output=out)


@pytest.mark.points(1)
def test_each_logit_sums_over_the_width(student, rng):
    """One feature alone favours a decoy token strongly, every feature favours the right one a
    little, and one token is strongly disfavoured: a logit is a sum over all C features, and the
    next token has the largest logit, so another reduction, or the largest size, picks another."""
    C, V = 6, 20
    for _ in range(_draws(V)):
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
                         "right one a little, and one token has a large negative logit: each logit is the "
                         "sum over all features, `h_last @ W_head`, and the next token has the largest logit "
                         "(not the largest in size)."),
               function="greedy_next_token", make_args=lambda args=args: args, output=out)


@pytest.mark.points(1)
def test_large_logits(student, rng):
    """Logits in the thousands: the argmax needs no softmax, and one without its max subtraction
    overflows to nan there."""
    for _ in range(_draws(40)):
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
                         "without its maximum subtracted is nan everywhere and its argmax is 0. Take the "
                         "argmax of the logits themselves (the softmax keeps their order), or subtract the "
                         "maximum."),
               function="greedy_next_token", make_args=lambda args=args: args, output=out)


@pytest.mark.points(1)
def test_ties_go_to_the_lowest_id(student, rng):
    """Two (then three) tokens share the highest logit exactly; the docstring picks the lowest id.
    The tied ids are drawn: the lowest of k random ids out of V is 0 with chance k / V, so a guess
    of 0 passes one draw (a pair, then a triple) with chance 2 * 3 / V ** 2."""
    C, V = 6, 12
    for _ in range(_draws(V, per_draw=2 * 3 / V ** 2)):
        h = rng.standard_normal(C)
        W = rng.standard_normal((C, V)) * 0.1
        for k in (2, 3):
            W_tied = W.copy()
            for j in rng.choice(V, size=k, replace=False):
                W_tied[:, j] = h * 10.0 / float(h @ h)        # logit exactly 10 at each tied id
            args = (h, W_tied)
            out = call(student, "greedy_next_token", *args)
            expect(check_number("token", out, ref.greedy_next_token(*args), integer=True),
                   function="greedy_next_token", make_args=lambda args=args: args, output=out)


@pytest.mark.points(1)
def test_returns_a_python_int(student, rng):
    for _ in range(_draws(9)):
        args = (rng.standard_normal(5), rng.standard_normal((5, 9)))
        out = call(student, "greedy_next_token", *args)
        expect(check_plain("token", out, int, "the docstring promises an int: wrap np.argmax in int(...)"),
               function="greedy_next_token", make_args=lambda args=args: args, output=out)
        expect(check_number("token", out, ref.greedy_next_token(*args), integer=True),
               function="greedy_next_token", make_args=lambda args=args: args, output=out)

"""Hidden tests for question 4: cross_entropy_loss.

Shapes include B = 1, T = 1 and V = 50,000; logits include a +1000 offset
(a softmax without max subtraction overflows there, while the lesson's own
softmax-then-log loss stays finite because the spread is a few units); targets
include the vocabulary's first and last ids and integer dtypes other than int64.
"""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array, check_number, explained
from autograder.runtime.hint_evidence import (differs_only_in_rows, non_finite_where_right_is_finite,
                                              right_without_the_feature, within_what_tiny_terms_allow)
from autograder.runtime.judge import call, check_gradient_of_own_loss, expect, unpack
from autograder.runtime.tolerances import SCALAR_ATOL, SCALAR_RTOL

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")

FUNCTION = "cross_entropy_loss"


def _targets(rng, B, T, V, dtype=np.int64):
    targets = rng.integers(0, V, size=(B, T))
    targets.flat[0] = 0                 # the vocabulary's edges
    targets.flat[-1] = V - 1
    return targets.astype(dtype)


#: What the tiny-probability test's inputs need, said when it fails.
TINY = ("Here some targets' logits are 100 to 300 below their row's largest, so their probability is tiny "
        "(about 1e-87 at 200 below) but still exact in float64, and the loss there is about 200: an epsilon "
        "added inside the log or a clip of the probabilities changes it. Take the log of the probability "
        "itself, or compute log-probabilities as `x - max - log(sum(exp(x - max)))`.")


def _check_against_reference(student, args, why="", loss_shows=None, dlogits_shows=None):
    """Compare with the reference; ``why`` is added to a failed verdict only where the matching
    ``*_shows(got, right)`` finds in the student's result what ``why`` is about (no predicate: never)."""
    out = call(student, FUNCTION, *args)
    loss, dlogits = unpack(out, FUNCTION, ("loss", "dlogits"))
    want_loss, want_d = ref.cross_entropy_loss(*args)
    make_args = lambda: args

    def hint(shows, got, right):
        return (lambda: shows(got, right)) if shows is not None else (lambda: False)
    expect(explained(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL), why,
                     hint(loss_shows, loss, want_loss)),
           function=FUNCTION, make_args=make_args, output=out)
    expect(explained(check_array("dlogits", dlogits, want_d), why, hint(dlogits_shows, dlogits, want_d)),
           function=FUNCTION, make_args=make_args, output=out)


def _position_losses(logits, targets):
    """Each position's own loss, -log softmax at its target (B, T)."""
    p = ref.softmax(logits)
    return -np.log(np.take_along_axis(p, targets[..., None].astype(np.int64), axis=-1)[..., 0])


@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, V, dtype", [(4, 8, 24, np.int64), (1, 1, 6, np.int64),
                                            (3, 5, 11, np.int32), (2, 7, 200, np.uint8)])
@pytest.mark.contract("target_dtypes")
def test_loss_and_gradient_match_reference(student, rng, B, T, V, dtype):
    _check_against_reference(student, (rng.standard_normal((B, T, V)), _targets(rng, B, T, V, dtype)))


@pytest.mark.contract("large_logits", "target_dtypes")
@pytest.mark.points(1)
def test_large_offsets(student, rng):
    logits = 1000.0 + rng.standard_normal((2, 4, 30)) * 3
    _check_against_reference(student, (logits, _targets(rng, 2, 4, 30, np.int16)))


@pytest.mark.contract("large_logits")
@pytest.mark.points(1)
def test_rows_far_apart(student, rng):
    """Each position's logits shifted by its own large amount (one maximum for all underflows)."""
    offsets = rng.uniform(-400.0, 400.0, size=(2, 3, 1))
    offsets[0, 0, 0], offsets[-1, -1, 0] = 400.0, -400.0
    logits = offsets + rng.standard_normal((2, 3, 12)) * 2
    _check_against_reference(student, (logits, _targets(rng, 2, 3, 12)))


@pytest.mark.contract("tiny_probabilities")
@pytest.mark.points(1)
def test_targets_with_tiny_probabilities(student, rng):
    """Targets 100 to 300 below their row's maximum: probabilities far below any epsilon or clip a
    student might add inside the log, yet exact in float64 (the lesson's log of the softmax is exact)."""
    logits = rng.standard_normal((2, 4, 15)) * 2
    targets = _targets(rng, 2, 4, 15)
    rows = np.arange(4)
    plain = logits.copy()                   # the same batch without the tiny probabilities
    logits[0, rows, targets[0]] = logits[0].max(axis=-1) - rng.uniform(100.0, 300.0, size=4)
    tiny = np.zeros(targets.shape, dtype=bool)
    tiny[0] = True
    # An epsilon or a clip lowers only the tiny targets' terms, by at most their whole size.
    tiny_total = float(_position_losses(logits, targets)[tiny].sum()) / targets.size
    _check_against_reference(
        student, (logits, targets), TINY,
        loss_shows=lambda got, right: within_what_tiny_terms_allow(got, right, -1, tiny_total) and
        right_without_the_feature(lambda: unpack(call(student, FUNCTION, plain, targets), FUNCTION,
                                                 ("loss", "dlogits"))[0], ref.cross_entropy_loss(plain, targets)[0]),
        dlogits_shows=lambda got, right: differs_only_in_rows(got, right, tiny))


@pytest.mark.contract("many_positions")
@pytest.mark.points(1)
def test_many_positions(student, rng):
    """512 positions: a product of their probabilities underflows to 0 long before the end."""
    args = (rng.standard_normal((8, 64, 16)), _targets(rng, 8, 64, 16))
    _check_against_reference(student, args, "Here there are 512 positions: a product of that many "
                                            "probabilities underflows to 0, so sum their logs instead.",
                             loss_shows=non_finite_where_right_is_finite)


@pytest.mark.contract("float64_dlogits")
@pytest.mark.points(1)
def test_float32_logits_give_float64_dlogits(student, rng):
    """The docstring promises float64 dlogits whatever float dtype the logits have."""
    args = ((rng.standard_normal((2, 3, 9)) * 3).astype(np.float32), _targets(rng, 2, 3, 9))
    _check_against_reference(student, args)     # a float32 dlogits is refused with its dtype named


@pytest.mark.contract()
@pytest.mark.points(1)
def test_confident_and_uniform_extremes(student, rng):
    targets = _targets(rng, 2, 3, 9)
    _check_against_reference(student, (np.full((2, 3, 9), -4.0), targets))
    _check_against_reference(student, (20.0 * np.eye(9)[targets] + rng.standard_normal((2, 3, 9)), targets))


@pytest.mark.contract("large_vocabulary")
@pytest.mark.points(1)
def test_vocabulary_of_50000(student, rng):
    args = (rng.standard_normal((2, 2, 50_000)) * 2, _targets(rng, 2, 2, 50_000))
    _check_against_reference(student, args)


@pytest.mark.contract("large_vocabulary")
@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, V", [(3, 4, 13), (1, 1, 5), (2, 2, 50_000)])
def test_gradient_is_the_derivative_of_your_own_loss(student, rng, B, T, V):
    logits, targets = rng.standard_normal((B, T, V)), _targets(rng, B, T, V)
    out = call(student, FUNCTION, logits, targets)
    loss, dlogits = unpack(out, FUNCTION, ("loss", "dlogits"))
    check_gradient_of_own_loss(
        lambda z: unpack(call(student, FUNCTION, z, targets), FUNCTION, ("loss", "dlogits"))[0],
        lambda z: ref.cross_entropy_loss(z, targets)[0],
        logits, loss, dlogits, ref.cross_entropy_loss(logits, targets)[1],
        grad_name="dlogits", x_name="logits", rng=rng)

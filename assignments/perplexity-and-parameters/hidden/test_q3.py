"""Hidden tests for question 3: masked_cross_entropy."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array, check_number, explained
from autograder.runtime.hint_evidence import (differs_only_in_rows, right_without_the_feature,
                                              within_what_tiny_terms_allow)
from autograder.runtime.judge import call, expect, unpack
from autograder.runtime.tolerances import SCALAR_ATOL, SCALAR_RTOL

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


def _padded_batch(rng, B, T, V):
    logits = rng.standard_normal((B, T, V)) * 2
    lengths = rng.integers(1, T + 1, size=B)
    mask = np.arange(T)[None, :] < lengths[:, None]
    targets = np.where(mask, rng.integers(0, V, size=(B, T)), -1)   # padding ids are junk
    return logits, targets, mask


@pytest.mark.contract("padding")
@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, V", [(3, 6, 10), (1, 1, 4), (4, 9, 25)])
def test_masked_loss_and_gradient_match_reference(student, rng, B, T, V):
    args = _padded_batch(rng, B, T, V)
    out = call(student, "masked_cross_entropy", *args)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    want_loss, want_d = ref.masked_cross_entropy(*args)
    make_args = lambda: args
    expect(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="masked_cross_entropy", make_args=make_args, output=out)
    expect(check_array("dlogits", dlogits, want_d), function="masked_cross_entropy",
           make_args=make_args, output=out)


def _check(student, args, why, loss_shows=None, dlogits_shows=None):
    """Compare with the reference; ``why`` is added to a failed verdict only where the matching
    ``*_shows(got, right)`` finds in the student's result what ``why`` is about (no predicate: never)."""
    out = call(student, "masked_cross_entropy", *args)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    want_loss, want_d = ref.masked_cross_entropy(*args)
    make_args = lambda: args

    def hint(shows, got, right):
        return (lambda: shows(got, right)) if shows is not None else (lambda: False)
    expect(explained(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL), why,
                     hint(loss_shows, loss, want_loss)),
           function="masked_cross_entropy", make_args=make_args, output=out)
    expect(explained(check_array("dlogits", dlogits, want_d), why, hint(dlogits_shows, dlogits, want_d)),
           function="masked_cross_entropy", make_args=make_args, output=out)


@pytest.mark.contract("tiny_probabilities", "padding")
@pytest.mark.points(1)
def test_scored_targets_with_tiny_probabilities(student, rng):
    """Scored targets 100 to 300 below their row's maximum: exact in float64, changed by any epsilon
    or clip inside the log."""
    logits, targets, mask = _padded_batch(rng, 3, 5, 12)
    plain = logits.copy()                   # the same batch without the tiny probabilities
    for b in range(3):                      # position 0 is always scored
        logits[b, 0, targets[b, 0]] = logits[b, 0].max() - rng.uniform(100.0, 300.0)
    tiny = np.zeros(mask.shape, dtype=bool)
    tiny[:, 0] = True
    z = logits[:, 0] - logits[:, 0].max(axis=-1, keepdims=True)
    tiny_terms = -(z[np.arange(3), targets[:, 0]] - np.log(np.exp(z).sum(axis=-1)))
    # An epsilon or a clip lowers only the tiny targets' terms, by at most their whole size.
    tiny_total = float(tiny_terms.sum()) / int(mask.sum())
    _check(student, (logits, targets, mask),
           "Here some scored targets' logits are 100 to 300 below their row's largest: their probability is "
           "tiny but exact in float64, and an epsilon added inside the log or a clip of the probabilities "
           "changes their loss. Take the log of the probability itself, or compute log-probabilities as "
           "`x - max - log(sum(exp(x - max)))`.",
           loss_shows=lambda got, right: within_what_tiny_terms_allow(got, right, -1, tiny_total) and
           right_without_the_feature(lambda: call(student, "masked_cross_entropy", plain, targets, mask)[0],
                                     ref.masked_cross_entropy(plain, targets, mask)[0]),
           dlogits_shows=lambda got, right: differs_only_in_rows(got, right, tiny))


@pytest.mark.contract("float64_dlogits", "padding")
@pytest.mark.points(1)
def test_float32_logits_give_float64_dlogits(student, rng):
    logits, targets, mask = _padded_batch(rng, 2, 4, 7)
    _check(student, (logits.astype(np.float32), targets, mask), "")   # a float32 dlogits: its dtype is named


@pytest.mark.contract("integer_mask", "padding")
@pytest.mark.points(1)
def test_a_0_1_integer_mask(student, rng):
    """The docstring allows a 0/1 mask: used as an index, an integer array picks positions 0 and 1."""
    logits = rng.standard_normal((3, 6, 8)) * 2
    mask = rng.random((3, 6)) < 0.6
    mask[:, 0], mask[0, 2] = False, True    # position 0 unscored: indexing with the ints shows
    targets = np.where(mask, rng.integers(0, 8, size=(3, 6)), -1)
    _check(student, (logits, targets, mask.astype(np.int64)), "")   # the catalogue names the index slip


@pytest.mark.contract("nothing_scored", "padding")
@pytest.mark.points(1)
def test_nothing_scored_gives_zero_loss_and_gradient(student, rng):
    """No position scored: the loss and its gradient are 0 (not 0 / 0). Zeros answer that whatever
    the input, so the test pays only with a drawn batch that does score positions checked beside it."""
    B, T, V = (int(n) for n in rng.integers(2, 7, size=3))
    args = (rng.standard_normal((B, T, V)), rng.integers(0, V, size=(B, T)), np.zeros((B, T), dtype=bool))
    out = call(student, "masked_cross_entropy", *args)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    want_loss, want_d = ref.masked_cross_entropy(*args)
    make_args = lambda: args
    expect(check_number("loss", loss, want_loss, atol=SCALAR_ATOL), function="masked_cross_entropy",
           make_args=make_args, output=out)
    expect(check_array("dlogits", dlogits, want_d), function="masked_cross_entropy",
           make_args=make_args, output=out)
    _check(student, _padded_batch(rng, B, T, V), "")


@pytest.mark.contract("large_inputs", "integer_mask", "padding")
@pytest.mark.points(1)
def test_large_offsets_and_a_big_vocabulary(student, rng):
    logits, targets, mask = _padded_batch(rng, 2, 3, 50_000)
    args = (logits + 1000.0, targets, mask.astype(np.int8))      # a 0/1 mask is accepted too
    out = call(student, "masked_cross_entropy", *args)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    want_loss, want_d = ref.masked_cross_entropy(*args)
    expect(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="masked_cross_entropy", make_args=lambda: args, output=out)
    expect(check_array("dlogits", dlogits, want_d), function="masked_cross_entropy",
           make_args=lambda: args, output=out)


@pytest.mark.contract("padding")
@pytest.mark.points(1)
def test_padding_targets_may_hold_any_value(student, rng):
    """Unscored positions hold -100 (a common ignore index) and ids past the vocabulary."""
    logits, targets, mask = _padded_batch(rng, 3, 6, 10)
    mask[:, -2:] = False
    targets = np.where(mask, targets, -100)
    targets[:, -1] = 10 + 7
    args = (logits, targets, mask)
    out = call(student, "masked_cross_entropy", *args)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    want_loss, want_d = ref.masked_cross_entropy(*args)
    expect(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="masked_cross_entropy", make_args=lambda: args, output=out)
    expect(check_array("dlogits", dlogits, want_d), function="masked_cross_entropy",
           make_args=lambda: args, output=out)


@pytest.mark.contract("large_inputs", "padding")
@pytest.mark.points(1)
def test_rows_far_apart(student, rng):
    """Each position's logits shifted by its own large amount (one maximum for all underflows)."""
    logits, targets, mask = _padded_batch(rng, 2, 4, 9)
    offsets = rng.uniform(-400.0, 400.0, size=(2, 4, 1))
    offsets[0, 0, 0], offsets[-1, -1, 0] = 400.0, -400.0
    mask[:, 0] = mask[:, -1] = True
    targets = np.where(mask, np.abs(targets) % 9, targets)
    args = (logits + offsets, targets, mask)
    out = call(student, "masked_cross_entropy", *args)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    want_loss, want_d = ref.masked_cross_entropy(*args)
    expect(check_number("loss", loss, want_loss, rtol=SCALAR_RTOL, atol=SCALAR_ATOL),
           function="masked_cross_entropy", make_args=lambda: args, output=out)
    expect(check_array("dlogits", dlogits, want_d), function="masked_cross_entropy",
           make_args=lambda: args, output=out)


@pytest.mark.contract("padding")
@pytest.mark.points(2)
def test_gradient_is_the_derivative_of_your_own_loss(student, rng):
    from autograder.runtime.judge import check_gradient_of_own_loss
    logits, targets, mask = _padded_batch(rng, 3, 4, 7)
    out = call(student, "masked_cross_entropy", logits, targets, mask)
    loss, dlogits = unpack(out, "masked_cross_entropy", ("loss", "dlogits"))
    check_gradient_of_own_loss(
        lambda z: unpack(call(student, "masked_cross_entropy", z, targets, mask), "masked_cross_entropy",
                         ("loss", "dlogits"))[0],
        lambda z: ref.masked_cross_entropy(z, targets, mask)[0],
        logits, loss, dlogits, ref.masked_cross_entropy(logits, targets, mask)[1],
        grad_name="dlogits", x_name="logits", rng=rng)

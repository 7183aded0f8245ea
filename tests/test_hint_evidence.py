"""A hidden test's built-in hint about a cause is shown only when the student's result shows that
cause: a loss that sums instead of averaging is told it is 512 times too large, not that a product
underflows or that an epsilon changes tiny probabilities."""
from __future__ import annotations

import numpy as np

import solutions
from tests.suites import MISTAKES, reference_namespace, run_for

UNDERFLOW = "underflows to 0, so sum their logs instead"
EPSILON = "an epsilon added inside the log or a clip"


def _loss_with_epsilon(logits, targets):
    loss, dlogits = solutions.cross_entropy_loss(logits, targets)
    p = solutions.softmax(logits)
    picked = np.take_along_axis(p, targets[..., None].astype(np.int64), axis=-1)[..., 0]
    return float(-np.mean(np.log(picked + 1e-12))), dlogits


def _loss_as_a_product(logits, targets):
    _, dlogits = solutions.cross_entropy_loss(logits, targets)
    p = solutions.softmax(logits)
    picked = np.take_along_axis(p, targets[..., None].astype(np.int64), axis=-1)[..., 0]
    return float(-np.log(np.prod(picked)) / picked.size), dlogits


def _messages(loss):
    return {name: o.message for name, o in run_for("cross_entropy_loss", reference_namespace(
        {"cross_entropy_loss": loss})).items()}


def test_a_summed_loss_gets_no_underflow_or_epsilon_hint():
    said = _messages(MISTAKES["loss-summed"].implementation)
    assert "times too large" in said["test_many_positions"] or "512" in said["test_many_positions"], said
    assert UNDERFLOW not in said["test_many_positions"], said["test_many_positions"]
    assert EPSILON not in said["test_targets_with_tiny_probabilities"], said["test_targets_with_tiny_probabilities"]


def test_the_hints_are_shown_where_the_result_shows_their_cause():
    assert EPSILON in _messages(_loss_with_epsilon)["test_targets_with_tiny_probabilities"]
    assert UNDERFLOW in _messages(_loss_as_a_product)["test_many_positions"]


def test_a_sequence_log_prob_without_its_epsilon_hint_when_it_sums_probabilities():
    from autograder.runtime.hint_evidence import within_what_tiny_terms_allow
    assert within_what_tiny_terms_allow(-10.0, -12.0, +1, 5.0)
    assert not within_what_tiny_terms_allow(-20.0, -12.0, +1, 5.0)     # moved the other way
    assert not within_what_tiny_terms_allow(-1.0, -12.0, +1, 5.0)      # more than the tiny terms hold

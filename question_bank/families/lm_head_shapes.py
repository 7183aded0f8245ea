"""Shapes in the LM head's forward and backward pass for random B, T, C, V."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.errors import Redraw
from question_bank.families._common import check_equal, shape_answer
from question_bank.mistakes import register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.shape_probe import ShapeProbe
from question_bank.variant import Draft
from solutions import lm_head, lm_head_backward

QUANTITIES = ("hidden", "W_head", "b_head", "logits", "dlogits", "dW_head", "db_head", "dhidden")

_DESCRIPTIONS = {
    "hidden": "the hidden states entering the head",
    "W_head": "the head's weight matrix",
    "b_head": "the head's bias",
    "logits": "the logits",
    "dlogits": "dlogits, the gradient of the loss with respect to the logits",
    "dW_head": "dW_head, the gradient with respect to the head's weight",
    "db_head": "db_head, the gradient with respect to the head's bias",
    "dhidden": "dhidden, the gradient passed back to the transformer stack",
}


def draw_sizes(rng: np.random.Generator) -> tuple[int, int, int, int]:
    """Realistic, pairwise different B, T, C, V (equal sizes would make shapes ambiguous)."""
    B = int(rng.integers(1, 65))
    T = int(rng.choice([16, 32, 64, 128, 256, 512, 1024]) if rng.random() < 0.5 else rng.integers(8, 1025))
    C = 16 * int(rng.integers(2, 65))
    V = int(rng.choice([24, 256, 32000, 40478, 50257]) if rng.random() < 0.3 else rng.integers(24, 65537))
    if len({B, T, C, V}) < 4:
        raise Redraw("two sizes coincide")
    return B, T, C, V


def reference_shapes(B: int, T: int, C: int, V: int) -> dict[str, list[int]]:
    """Every quantity's shape, obtained by running the reference head on shape probes."""
    hidden, W_head, b_head = ShapeProbe((B, T, C)), ShapeProbe((C, V)), ShapeProbe((V,))
    logits = lm_head(hidden, W_head, b_head)
    dlogits = ShapeProbe(logits.shape)      # the loss gradient has the logits' shape
    dW_head, db_head, dhidden = lm_head_backward(hidden, W_head, dlogits)
    tensors = {"hidden": hidden, "W_head": W_head, "b_head": b_head, "logits": logits, "dlogits": dlogits,
               "dW_head": dW_head, "db_head": db_head, "dhidden": dhidden}
    return {name: list(t.shape) for name, t in tensors.items()}


#: Every wrong shape this family knows, by quantity: (name, misconception, formula, compute, feedback).
MISTAKES = register_mistakes("lm-head-shapes", [
    ("hidden/forgets-batch-axis", "forgets-batch-axis", "(T, C)", lambda f: [f["T"], f["C"]],
     "The hidden states keep the batch axis B."),
    ("hidden/flattened-batch", "flattened-batch", "(B * T, C)", lambda f: [f["B"] * f["T"], f["C"]],
     "The stack returns (B, T, C); flattening is an internal step."),
    ("hidden/hidden-is-logits", "hidden-is-logits", "(B, T, V)", lambda f: [f["B"], f["T"], f["V"]],
     "That is the logits' shape; hidden states have width C."),
    ("hidden/scores-only-last-position", "scores-only-last-position", "(B, C)", lambda f: [f["B"], f["C"]],
     "The stack returns a state for every position."),
    ("W_head/weight-transposed", "weight-transposed", "(V, C)", lambda f: [f["V"], f["C"]],
     "W_head maps width C to V, so it is (C, V)."),
    ("W_head/weight-has-batch-axis", "weight-has-batch-axis", "(B, C, V)", lambda f: [f["B"], f["C"], f["V"]],
     "The weight is shared by every sequence; it has no batch axis."),
    ("W_head/confuses-context-with-vocab", "confuses-context-with-vocab", "(C, T)", lambda f: [f["C"], f["T"]],
     "The output axis is the vocabulary V, not the context T."),
    ("b_head/bias-sized-by-width", "bias-sized-by-width", "(C)", lambda f: [f["C"]],
     "The bias adds one number per vocabulary entry."),
    ("b_head/bias-per-position-2", "bias-per-position", "(T, V)", lambda f: [f["T"], f["V"]],
     "One bias vector is shared by every position."),
    ("logits/head-keeps-width", "head-keeps-width", "(B, T, C)", lambda f: [f["B"], f["T"], f["C"]],
     "The head replaces the width C by the vocabulary V."),
    ("logits/flattened-batch", "flattened-batch", "(B * T, V)", lambda f: [f["B"] * f["T"], f["V"]],
     "The head returns (B, T, V), one row per position."),
    ("logits/scores-only-last-position", "scores-only-last-position", "(B, V)", lambda f: [f["B"], f["V"]],
     "In training every position gets logits."),
    ("logits/confuses-context-with-vocab", "confuses-context-with-vocab", "(B, T, T)", lambda f: [f["B"], f["T"], f["T"]],
     "The last axis has one score per vocabulary entry."),
    ("dlogits/grad-shape-mismatch", "grad-shape-mismatch", "(B, T)", lambda f: [f["B"], f["T"]],
     "That is the targets' shape; dlogits has one entry per logit."),
    ("dlogits/flattened-batch", "flattened-batch", "(B * T, V)", lambda f: [f["B"] * f["T"], f["V"]],
     "dlogits is returned in the logits' shape (B, T, V)."),
    ("dlogits/grad-shape-mismatch-2", "grad-shape-mismatch", "(B, T, C)", lambda f: [f["B"], f["T"], f["C"]],
     "That is the hidden states' shape; dlogits matches the logits."),
    ("dlogits/scores-only-last-position", "scores-only-last-position", "(B, V)", lambda f: [f["B"], f["V"]],
     "Every position contributes to the loss, so every position has a gradient row."),
    ("dW_head/weight-transposed", "weight-transposed", "(V, C)", lambda f: [f["V"], f["C"]],
     "dW_head has W_head's shape (C, V)."),
    ("dW_head/weight-grad-per-position", "weight-grad-per-position", "(B, T, C, V)", lambda f: [f["B"], f["T"], f["C"], f["V"]],
     "The weight is shared, so its gradient sums over B and T."),
    ("dW_head/grad-shape-mismatch", "grad-shape-mismatch", "(B, T, V)", lambda f: [f["B"], f["T"], f["V"]],
     "That is dlogits' shape; dW_head matches W_head."),
    ("db_head/bias-per-position-2", "bias-per-position", "(B * T, V)", lambda f: [f["B"] * f["T"], f["V"]],
     "db_head sums the flattened rows."),
    ("db_head/bias-sized-by-width", "bias-sized-by-width", "(C)", lambda f: [f["C"]],
     "The bias has one entry per vocabulary token."),
    ("dhidden/grad-shape-mismatch", "grad-shape-mismatch", "(B, T, V)", lambda f: [f["B"], f["T"], f["V"]],
     "That is dlogits' shape; dhidden matches the hidden states."),
    ("dhidden/grad-shape-mismatch-2", "grad-shape-mismatch", "(C, V)", lambda f: [f["C"], f["V"]],
     "That is W_head's shape; dhidden matches the hidden states."),
    ("dhidden/flattened-batch", "flattened-batch", "(B * T, C)", lambda f: [f["B"] * f["T"], f["C"]],
     "dhidden is returned as (B, T, C) for the stack below."),
    ("dhidden/scores-only-last-position", "scores-only-last-position", "(B, C)", lambda f: [f["B"], f["C"]],
     "Every position receives a gradient."),
    # Slips that leave a shape alike to the other mistakes rather than to the key.
    ("logits/no-batch-axis", "forgets-batch-axis", "(T, V)", lambda f: [f["T"], f["V"]],
     "The logits keep the batch axis B."),
    ("logits/no-contraction", "head-keeps-width", "(B, T, C, V)", lambda f: [f["B"], f["T"], f["C"], f["V"]],
     "The product contracts the width C; the result has no C axis."),
    ("dlogits/no-batch-axis", "forgets-batch-axis", "(T, V)", lambda f: [f["T"], f["V"]],
     "dlogits has the logits' shape, batch axis included."),
    ("dlogits/no-contraction", "grad-shape-mismatch", "(B, T, C, V)", lambda f: [f["B"], f["T"], f["C"], f["V"]],
     "dlogits has one entry per logit: (B, T, V)."),
    # The key's own axes in the time-major order, so a three-axis key is not the one choice
    # alike to every other (the most-alike and longest players found it).
    ("hidden/time-major", "time-major", "(T, B, C)", lambda f: [f["T"], f["B"], f["C"]],
     "The stack returns batch-first hidden states, (B, T, C)."),
    ("logits/time-major", "time-major", "(T, B, V)", lambda f: [f["T"], f["B"], f["V"]],
     "The logits keep the hidden states' batch-first layout: (B, T, V)."),
    ("dlogits/time-major", "time-major", "(T, B, V)", lambda f: [f["T"], f["B"], f["V"]],
     "dlogits has the logits' batch-first shape (B, T, V)."),
    ("dhidden/time-major", "time-major", "(T, B, C)", lambda f: [f["T"], f["B"], f["C"]],
     "dhidden has the hidden states' batch-first shape (B, T, C)."),
    # Shapes on the side of the key that had too few (b_head's size is almost always the
    # second smallest; dW_head's (C, V) tied with its transpose as the shortest).
    ("dW_head/bias-shape", "grad-shape-mismatch", "(V)", lambda f: [f["V"]],
     "That is db_head's shape; dW_head matches W_head (C, V)."),
    ("dW_head/context-for-vocab", "confuses-context-with-vocab", "(C, T)", lambda f: [f["C"], f["T"]],
     "The output axis of W_head, and of its gradient, is the vocabulary V, not the context T."),
    ("dlogits/axes-swapped", "grad-shape-mismatch", "(B, V, T)", lambda f: [f["B"], f["V"], f["T"]],
     "dlogits has the logits' shape with its axes in the same order: (B, T, V)."),
    ("db_head/summed-over-batch-only", "bias-per-position", "(T, V)", lambda f: [f["T"], f["V"]],
     "db_head sums over both B and T."),
    ("db_head/summed-over-time-only", "bias-per-position", "(B, V)", lambda f: [f["B"], f["V"]],
     "db_head sums over both B and T."),
    # More shapes on the side of the key that had too few, and shapes alike to the other mistakes
    # rather than to the key (measured with stress -n 1000 at seeds 0, 99 and 12345: db_head's key
    # was the smallest choice up to 47 times in 108; b_head's the largest 45 in 119; the three-axis
    # keys and dW_head's (C, V) the most alike text up to 56 times in 131).
    ("b_head/per-sequence-row", "bias-per-position", "(B, V)", lambda f: [f["B"], f["V"]],
     "One bias vector of V entries is shared by every sequence of the batch."),
    ("b_head/per-flattened-position", "bias-per-position", "(B * T, V)", lambda f: [f["B"] * f["T"], f["V"]],
     "One bias vector of V entries is shared by every position; it is not one row per position."),
    ("dlogits/softmax-jacobian", "grad-shape-mismatch", "(B, T, V, V)", lambda f: [f["B"], f["T"], f["V"], f["V"]],
     "That is the softmax's Jacobian per position; the gradient of the scalar loss has the logits' shape, "
     "(B, T, V), the Jacobian already folded in."),
    ("dlogits/context-for-vocab", "confuses-context-with-vocab", "(B, T, T)", lambda f: [f["B"], f["T"], f["T"]],
     "The last axis of dlogits, as of the logits, has one entry per vocabulary token: (B, T, V)."),
    ("dhidden/no-batch-axis", "forgets-batch-axis", "(T, C)", lambda f: [f["T"], f["C"]],
     "dhidden has the hidden states' shape, batch axis included: (B, T, C)."),
    ("dW_head/hidden-shape", "grad-shape-mismatch", "(B, T, C)", lambda f: [f["B"], f["T"], f["C"]],
     "That is the hidden states' shape; dW_head matches W_head, (C, V)."),
])


#: Slips whose shape alone is a scalar, ``()``: never a choice (a text with no number in it would take
#: every choice set of its question out of the value order), but made together with another slip they give
#: a shape that is (the bias of one number per position, ``(T)``, keeps the position axis and drops V).
_UNSHOWN_SLIPS = frozenset({"b_head/no-vocab-axis", "db_head/sums-vocab-too"})


def _register_doubles(entries: Sequence[tuple[tuple[str, ...], str, Callable[[dict[str, Any]], list[int]], str]]
                      ) -> None:
    """Register ``(slips, formula, compute, feedback)``: a quantity's shape with two (or three) of its own
    single slips made at once.

    Each is named ``<first>+<next slip's short name>...``, the record the draw and the mistake-hub
    player read (one mistake per part), and keeps the first slip's misconception. Its feedback is
    written for the shape itself (a single slip's feedback says "that is X's shape", which the double
    is not) and names every slip. With single slips only, the key is the one choice every distractor
    is one slip from; a double shares a slip with two singles, so some choice sets give a distractor
    as many links as the key, or more.

    Raises:
        ValueError: when a slip is not one of the same quantity's single slips (an authoring slip).
    """
    rows = []
    for slips, formula, compute, feedback in entries:
        quantity = slips[0].split("/", 1)[0]
        known = [s in MISTAKES or (i > 0 and s in _UNSHOWN_SLIPS) for i, s in enumerate(slips)]
        if len(slips) < 2 or not all(known) or any(not s.startswith(quantity + "/") for s in slips):
            raise ValueError(f"the slips {slips!r} are not two or more single slips of {quantity}")
        name = "+".join([slips[0], *(s.rsplit("/", 1)[-1] for s in slips[1:])])
        rows.append((name, MISTAKES[slips[0]].misconception, formula, compute, feedback))
    MISTAKES.update(register_mistakes("lm-head-shapes", rows))


# Two (or three) slips at once, each computed by making all of them (each slip applied to the shape
# the others give).
_register_doubles([
    (("hidden/hidden-is-logits", "hidden/forgets-batch-axis"), "(T, V)", lambda f: [f["T"], f["V"]],
     "That is one sequence's logits: the hidden states keep the batch axis B and have width C, (B, T, C)."),
    (("hidden/hidden-is-logits", "hidden/flattened-batch"), "(B * T, V)", lambda f: [f["B"] * f["T"], f["V"]],
     "That is the flattened logits: the stack returns the hidden states unflattened, with width C: (B, T, C)."),
    (("hidden/hidden-is-logits", "hidden/time-major"), "(T, B, V)", lambda f: [f["T"], f["B"], f["V"]],
     "That is the time-major logits: the hidden states are batch-first, with width C: (B, T, C)."),
    (("hidden/hidden-is-logits", "hidden/scores-only-last-position"), "(B, V)", lambda f: [f["B"], f["V"]],
     "That is the last position's logits: the stack returns a state of width C for every position, (B, T, C)."),
    (("W_head/weight-has-batch-axis", "W_head/weight-transposed"), "(B, V, C)", lambda f: [f["B"], f["V"], f["C"]],
     "The weight has no batch axis, and it maps C to V, so it is (C, V)."),
    (("W_head/confuses-context-with-vocab", "W_head/weight-transposed"), "(T, C)", lambda f: [f["T"], f["C"]],
     "The output axis is the vocabulary V, not the context T, and W_head is (C, V), width first."),
    (("W_head/weight-has-batch-axis", "W_head/confuses-context-with-vocab"), "(B, C, T)",
     lambda f: [f["B"], f["C"], f["T"]],
     "The weight is shared by every sequence, so it has no batch axis, and its output axis is the vocabulary V, "
     "not the context T: (C, V)."),
    (("b_head/bias-per-position-2", "b_head/per-sequence-row"), "(B, T, V)", lambda f: [f["B"], f["T"], f["V"]],
     "That is a bias row for every position of every sequence; one bias vector of one entry per vocabulary "
     "token, (V,), is shared by every position and every sequence."),
    (("b_head/bias-per-position-2", "b_head/per-sequence-row", "b_head/bias-sized-by-width"), "(B, T, C)",
     lambda f: [f["B"], f["T"], f["C"]],
     "That is a bias for every position of every sequence, sized by the width C; one bias vector of one "
     "entry per vocabulary token, (V,), is shared by every position and every sequence."),
    # Without the vocabulary axis (the slip alone gives a scalar, see _UNSHOWN_SLIPS).
    (("b_head/bias-per-position-2", "b_head/no-vocab-axis"), "(T)", lambda f: [f["T"]],
     "That is one entry per position; the bias has one entry per vocabulary token, shared by all positions."),
    (("b_head/per-sequence-row", "b_head/no-vocab-axis"), "(B)", lambda f: [f["B"]],
     "That is one entry per sequence; the bias has one entry per vocabulary token, shared by every sequence."),
    (("b_head/bias-per-position-2", "b_head/per-sequence-row", "b_head/no-vocab-axis"), "(B, T)",
     lambda f: [f["B"], f["T"]],
     "That is one entry per position of every sequence; the bias has one entry per vocabulary token, (V,), "
     "shared by every position and every sequence."),
    (("db_head/summed-over-batch-only", "db_head/sums-vocab-too"), "(T)", lambda f: [f["T"]],
     "That sums over the sequences and the vocabulary, leaving one entry per position; db_head sums over the "
     "sequences and positions to one entry per vocabulary token, (V,)."),
    (("db_head/summed-over-time-only", "db_head/sums-vocab-too"), "(B)", lambda f: [f["B"]],
     "That keeps one entry per sequence; db_head sums over the sequences and positions to one entry per "
     "vocabulary token, (V,)."),
    (("db_head/summed-over-batch-only", "db_head/summed-over-time-only", "db_head/sums-vocab-too"), "(B, T)",
     lambda f: [f["B"], f["T"]],
     "That is the targets' shape, dlogits summed over the vocabulary instead of over the positions; db_head "
     "has b_head's shape (V,)."),
    (("b_head/bias-per-position-2", "b_head/bias-sized-by-width"), "(T, C)", lambda f: [f["T"], f["C"]],
     "That is a bias per position, sized by the width C; one bias vector of one entry per vocabulary token, "
     "(V,), is shared by every position."),
    (("b_head/per-sequence-row", "b_head/bias-sized-by-width"), "(B, C)", lambda f: [f["B"], f["C"]],
     "That is a bias per sequence, sized by the width C; one bias vector of one entry per vocabulary token, "
     "(V,), is shared by every sequence."),
    (("b_head/per-flattened-position", "b_head/bias-sized-by-width"), "(B * T, C)",
     lambda f: [f["B"] * f["T"], f["C"]],
     "That is a bias per flattened position, sized by the width C; one bias vector of one entry per "
     "vocabulary token, (V,), is shared by every position."),
    (("logits/flattened-batch", "logits/head-keeps-width"), "(B * T, C)", lambda f: [f["B"] * f["T"], f["C"]],
     "The head replaces C by V and returns one row per position in (B, T, V), unflattened."),
    (("logits/time-major", "logits/head-keeps-width"), "(T, B, C)", lambda f: [f["T"], f["B"], f["C"]],
     "The head replaces the width C by the vocabulary V, and the logits stay batch-first: (B, T, V)."),
    (("logits/no-batch-axis", "logits/head-keeps-width"), "(T, C)", lambda f: [f["T"], f["C"]],
     "The head replaces the width C by the vocabulary V, and the logits keep the batch axis: (B, T, V)."),
    (("logits/scores-only-last-position", "logits/head-keeps-width"), "(B, C)", lambda f: [f["B"], f["C"]],
     "In training every position gets logits, and the head replaces the width C by the vocabulary V: (B, T, V)."),
    (("logits/no-batch-axis", "logits/confuses-context-with-vocab"), "(T, T)", lambda f: [f["T"], f["T"]],
     "The logits keep the batch axis B, and their last axis has one score per vocabulary entry: (B, T, V)."),
    (("dlogits/flattened-batch", "dlogits/grad-shape-mismatch-2"), "(B * T, C)", lambda f: [f["B"] * f["T"], f["C"]],
     "That is the flattened hidden states' shape; dlogits matches the logits (B, T, V), unflattened."),
    (("dlogits/time-major", "dlogits/grad-shape-mismatch-2"), "(T, B, C)", lambda f: [f["T"], f["B"], f["C"]],
     "That is the time-major hidden states' shape; dlogits matches the batch-first logits, (B, T, V)."),
    (("dlogits/no-batch-axis", "dlogits/grad-shape-mismatch-2"), "(T, C)", lambda f: [f["T"], f["C"]],
     "That is one sequence's hidden states; dlogits matches the logits, batch axis included: (B, T, V)."),
    (("dlogits/scores-only-last-position", "dlogits/grad-shape-mismatch-2"), "(B, C)", lambda f: [f["B"], f["C"]],
     "That is the last position's hidden states; every position has a gradient row, and dlogits matches "
     "the logits: (B, T, V)."),
    (("logits/flattened-batch", "logits/no-contraction"), "(B * T, C, V)", lambda f: [f["B"] * f["T"], f["C"], f["V"]],
     "The product contracts the width C, and the head returns the logits unflattened: (B, T, V)."),
    (("logits/no-batch-axis", "logits/no-contraction"), "(T, C, V)", lambda f: [f["T"], f["C"], f["V"]],
     "The product contracts the width C, and the logits keep the batch axis B: (B, T, V)."),
    (("logits/time-major", "logits/no-contraction"), "(T, B, C, V)", lambda f: [f["T"], f["B"], f["C"], f["V"]],
     "The product contracts the width C, and the logits stay batch-first: (B, T, V)."),
    (("logits/no-contraction", "logits/confuses-context-with-vocab"), "(B, T, C, T)",
     lambda f: [f["B"], f["T"], f["C"], f["T"]],
     "The product contracts the width C, and the last axis has one score per vocabulary entry: (B, T, V)."),
    (("logits/scores-only-last-position", "logits/no-contraction"), "(B, C, V)", lambda f: [f["B"], f["C"], f["V"]],
     "In training every position gets logits, and the product contracts the width C: (B, T, V)."),
    (("dlogits/flattened-batch", "dlogits/grad-shape-mismatch"), "(B * T)", lambda f: [f["B"] * f["T"]],
     "That is the flattened targets' shape; dlogits has one entry per logit, unflattened: (B, T, V)."),
    (("dlogits/no-batch-axis", "dlogits/grad-shape-mismatch"), "(T)", lambda f: [f["T"]],
     "That is one sequence's targets; dlogits has one entry per logit of every sequence: (B, T, V)."),
    (("dlogits/time-major", "dlogits/grad-shape-mismatch"), "(T, B)", lambda f: [f["T"], f["B"]],
     "That is the time-major targets' shape; dlogits has one entry per logit, batch-first: (B, T, V)."),
    (("dlogits/flattened-batch", "dlogits/softmax-jacobian"), "(B * T, V, V)", lambda f: [f["B"] * f["T"], f["V"], f["V"]],
     "That is the softmax's Jacobian per flattened row; the gradient of the scalar loss has the logits' "
     "shape, unflattened: (B, T, V)."),
    (("dlogits/no-batch-axis", "dlogits/softmax-jacobian"), "(T, V, V)", lambda f: [f["T"], f["V"], f["V"]],
     "That is one sequence's softmax Jacobians; the gradient of the scalar loss has the logits' shape, "
     "batch axis included: (B, T, V)."),
    (("dlogits/flattened-batch", "dlogits/context-for-vocab"), "(B * T, T)", lambda f: [f["B"] * f["T"], f["T"]],
     "dlogits matches the logits unflattened, and its last axis has one entry per vocabulary token: (B, T, V)."),
    (("dlogits/no-batch-axis", "dlogits/context-for-vocab"), "(T, T)", lambda f: [f["T"], f["T"]],
     "dlogits keeps the batch axis B, and its last axis has one entry per vocabulary token: (B, T, V)."),
    (("dlogits/no-batch-axis", "dlogits/axes-swapped"), "(V, T)", lambda f: [f["V"], f["T"]],
     "dlogits keeps the batch axis B, and its axes stay in the logits' order: (B, T, V)."),
    (("dlogits/flattened-batch", "dlogits/no-contraction"), "(B * T, C, V)", lambda f: [f["B"] * f["T"], f["C"], f["V"]],
     "dlogits has one entry per logit, so no C axis, and the logits' unflattened shape: (B, T, V)."),
    (("dlogits/no-batch-axis", "dlogits/no-contraction"), "(T, C, V)", lambda f: [f["T"], f["C"], f["V"]],
     "dlogits has one entry per logit, so no C axis, and keeps the batch axis B: (B, T, V)."),
    (("dlogits/no-batch-axis", "dlogits/scores-only-last-position"), "(V)", lambda f: [f["V"]],
     "That is one position's row in one sequence; every position of every sequence has a gradient row: "
     "(B, T, V)."),
    (("dW_head/context-for-vocab", "dW_head/weight-transposed"), "(T, C)", lambda f: [f["T"], f["C"]],
     "The output axis of W_head, and of its gradient, is the vocabulary V, and the width C comes first: (C, V)."),
    (("dW_head/weight-grad-per-position", "dW_head/weight-transposed"), "(B, T, V, C)",
     lambda f: [f["B"], f["T"], f["V"], f["C"]],
     "The weight is shared, so its gradient sums over B and T, and it has W_head's shape with C first: (C, V)."),
    (("db_head/summed-over-batch-only", "db_head/summed-over-time-only"), "(B, T, V)",
     lambda f: [f["B"], f["T"], f["V"]],
     "That is dlogits' shape, summed over neither B nor T; db_head sums over both, to b_head's shape, one "
     "entry per vocabulary token (V,)."),
    (("db_head/summed-over-batch-only", "db_head/summed-over-time-only", "db_head/bias-sized-by-width"),
     "(B, T, C)", lambda f: [f["B"], f["T"], f["C"]],
     "That is dhidden's shape: summed over neither B nor T, and sized by the width C; db_head sums over the "
     "positions to b_head's shape, one entry per vocabulary token (V,)."),
    (("db_head/summed-over-batch-only", "db_head/bias-sized-by-width"), "(T, C)", lambda f: [f["T"], f["C"]],
     "That sums over B only and is sized by the width C; db_head sums over both B and T, to one entry per "
     "vocabulary token (V,)."),
    (("db_head/summed-over-time-only", "db_head/bias-sized-by-width"), "(B, C)", lambda f: [f["B"], f["C"]],
     "That sums over T only and is sized by the width C; db_head sums over both B and T, to one entry per "
     "vocabulary token (V,)."),
    (("db_head/bias-per-position-2", "db_head/bias-sized-by-width"), "(B * T, C)", lambda f: [f["B"] * f["T"], f["C"]],
     "That keeps the flattened rows and is sized by the width C; db_head sums the rows to one entry per "
     "vocabulary token (V,)."),
    (("dhidden/time-major", "dhidden/grad-shape-mismatch"), "(T, B, V)", lambda f: [f["T"], f["B"], f["V"]],
     "That is the time-major logits' shape; dhidden matches the batch-first hidden states, (B, T, C)."),
    (("dhidden/flattened-batch", "dhidden/grad-shape-mismatch"), "(B * T, V)", lambda f: [f["B"] * f["T"], f["V"]],
     "That is the flattened dlogits' shape; dhidden matches the hidden states, (B, T, C), unflattened."),
    (("dhidden/no-batch-axis", "dhidden/grad-shape-mismatch"), "(T, V)", lambda f: [f["T"], f["V"]],
     "That is one sequence's dlogits; dhidden matches the hidden states, batch axis included: (B, T, C)."),
    (("dhidden/no-batch-axis", "dhidden/scores-only-last-position"), "(C)", lambda f: [f["C"]],
     "That is one position's gradient in one sequence; every position of every sequence receives one, and "
     "dhidden matches the hidden states: (B, T, C)."),
    (("dhidden/no-batch-axis", "dhidden/scores-only-last-position", "dhidden/grad-shape-mismatch"), "(V)",
     lambda f: [f["V"]],
     "That is one position's dlogits row in one sequence; every position of every sequence receives a "
     "gradient, and dhidden matches the hidden states: (B, T, C)."),
    (("dhidden/scores-only-last-position", "dhidden/grad-shape-mismatch"), "(B, V)", lambda f: [f["B"], f["V"]],
     "That is the last position's dlogits; every position receives a gradient, and dhidden matches the "
     "hidden states: (B, T, C)."),
])


@register_family
class LmHeadShapes(Family):
    name = "lm-head-shapes"
    version = 8  # v8: two- and three-slip shapes recorded as such, and more of them (the key was the mistake hub); v7: more mistakes on the side of the key that had few
    title = "Shapes through the LM head"
    summary = "Shape of hidden, W_head, b_head, logits or a gradient for random B, T, C, V."
    tags = ("shapes", "lm-head", "gradient")
    subquestion_key = "quantity"
    subquestion_values = QUANTITIES

    def build(self, rng: np.random.Generator) -> Draft:
        B, T, C, V = draw_sizes(rng)
        quantity = QUANTITIES[int(rng.integers(len(QUANTITIES)))]
        shape = reference_shapes(B, T, C, V)[quantity]
        stem = (f"A GPT processes a batch of B = {fmt.integer(B)} sequences of T = {fmt.integer(T)} tokens with "
                f"model width C = {fmt.integer(C)} and vocabulary size V = {fmt.integer(V)}. Its head computes "
                "`logits = hidden @ W_head + b_head`, and the backward pass returns "
                "`dW_head`, `db_head` and `dhidden` from `dlogits`. Every tensor is batch-first, and none is "
                "reshaped: per-position tensors keep their B and T axes. What is the shape of "
                f"{_DESCRIPTIONS[quantity]}?")
        answer = shape_answer(shape)
        solution = (f"hidden is (B, T, C) = {fmt.shape([B, T, C])}, W_head is (C, V) = {fmt.shape([C, V])} and "
                    f"b_head is (V,) = {fmt.shape([V])}; the product contracts C, so logits (and dlogits) are "
                    f"(B, T, V) = {fmt.shape([B, T, V])}. Each gradient has the shape of its tensor: "
                    "dW_head = hiddenᵀ @ dlogits summed over all positions is (C, V), db_head sums dlogits "
                    "over positions to (V,), and dhidden = dlogits @ W_headᵀ is (B, T, C). "
                    f"So {quantity} is {fmt.shape(shape)}.")
        parameters = {"B": B, "T": T, "C": C, "V": V, "quantity": quantity}
        wrong = wrong_options(MISTAKES, [k for k in MISTAKES if k.startswith(quantity + "/")], parameters,
                              fmt.shape)
        options = numeric_options(rng, shape, fmt.shape(shape), wrong,
                                  "Correct: each tensor and its gradient share a shape.")
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        B, T, C, V = p["B"], p["T"], p["C"], p["V"]
        expected = {"hidden": [B, T, C], "W_head": [C, V], "b_head": [V], "logits": [B, T, V],
                    "dlogits": [B, T, V], "dW_head": [C, V], "db_head": [V], "dhidden": [B, T, C]}
        return check_equal(variant["answer"]["value"], expected[p["quantity"]])

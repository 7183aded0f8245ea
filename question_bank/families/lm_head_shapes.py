"""Shapes in the LM head's forward and backward pass for random B, T, C, V."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.errors import Redraw
from question_bank.families._common import check_equal, shape_answer
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


def wrong_shapes(quantity: str, B: int, T: int, C: int, V: int) -> list[tuple[str, list[int], str]]:
    """Plausible wrong shapes for ``quantity``, each tied to a misconception."""
    table: dict[str, list[tuple[str, list[int], str]]] = {
        "hidden": [
            ("forgets-batch-axis", [T, C], "The hidden states keep the batch axis B."),
            ("flattened-batch", [B * T, C], "The stack returns (B, T, C); flattening is an internal step."),
            ("hidden-is-logits", [B, T, V], "That is the logits' shape; hidden states have width C."),
            ("scores-only-last-position", [B, C], "The stack returns a state for every position."),
        ],
        "W_head": [
            ("weight-transposed", [V, C], "W_head maps width C to V, so it is (C, V)."),
            ("weight-has-batch-axis", [B, C, V], "The weight is shared by every sequence; it has no batch axis."),
            ("confuses-context-with-vocab", [C, T], "The output axis is the vocabulary V, not the context T."),
        ],
        "b_head": [
            ("bias-sized-by-width", [C], "The bias adds one number per vocabulary entry."),
            ("bias-per-position", [B, T, V], "One bias vector is shared by every position."),
            ("bias-per-position", [T, V], "One bias vector is shared by every position."),
        ],
        "logits": [
            ("head-keeps-width", [B, T, C], "The head replaces the width C by the vocabulary V."),
            ("flattened-batch", [B * T, V], "The head returns (B, T, V), one row per position."),
            ("scores-only-last-position", [B, V], "In training every position gets logits."),
            ("confuses-context-with-vocab", [B, T, T], "The last axis has one score per vocabulary entry."),
        ],
        "dlogits": [
            ("grad-shape-mismatch", [B, T], "That is the targets' shape; dlogits has one entry per logit."),
            ("flattened-batch", [B * T, V], "dlogits is returned in the logits' shape (B, T, V)."),
            ("grad-shape-mismatch", [B, T, C], "That is the hidden states' shape; dlogits matches the logits."),
            ("scores-only-last-position", [B, V], "Every position contributes to the loss, so every "
             "position has a gradient row."),
        ],
        "dW_head": [
            ("weight-transposed", [V, C], "dW_head has W_head's shape (C, V)."),
            ("weight-grad-per-position", [B, T, C, V], "The weight is shared, so its gradient sums over B and T."),
            ("grad-shape-mismatch", [B, T, V], "That is dlogits' shape; dW_head matches W_head."),
        ],
        "db_head": [
            ("bias-per-position", [B, T, V], "db_head sums dlogits over the B*T positions."),
            ("bias-per-position", [B * T, V], "db_head sums the flattened rows."),
            ("bias-sized-by-width", [C], "The bias has one entry per vocabulary token."),
        ],
        "dhidden": [
            ("grad-shape-mismatch", [B, T, V], "That is dlogits' shape; dhidden matches the hidden states."),
            ("grad-shape-mismatch", [C, V], "That is W_head's shape; dhidden matches the hidden states."),
            ("flattened-batch", [B * T, C], "dhidden is returned as (B, T, C) for the stack below."),
            ("scores-only-last-position", [B, C], "Every position receives a gradient."),
        ],
    }
    return table[quantity]


@register_family
class LmHeadShapes(Family):
    name = "lm-head-shapes"
    title = "Shapes through the LM head"
    summary = "Shape of hidden, W_head, b_head, logits or a gradient for random B, T, C, V."
    tags = ("shapes", "lm-head", "gradient")

    def build(self, rng: np.random.Generator) -> Draft:
        B, T, C, V = draw_sizes(rng)
        quantity = QUANTITIES[int(rng.integers(len(QUANTITIES)))]
        shape = reference_shapes(B, T, C, V)[quantity]
        stem = (f"A GPT processes a batch of B = {B} sequences of T = {T} tokens with model width "
                f"C = {C} and vocabulary size V = {fmt.integer(V)}. Its head computes "
                "`logits = hidden @ W_head + b_head`, and the backward pass returns "
                "`dW_head`, `db_head` and `dhidden` from `dlogits`. What is the shape of "
                f"{_DESCRIPTIONS[quantity]}?")
        answer = shape_answer(shape)
        solution = (f"hidden is (B, T, C) = {fmt.shape([B, T, C])}, W_head is (C, V) = {fmt.shape([C, V])} and "
                    f"b_head is (V,) = {fmt.shape([V])}; the product contracts C, so logits (and dlogits) are "
                    f"(B, T, V) = {fmt.shape([B, T, V])}. Each gradient has the shape of its tensor: "
                    "dW_head = hiddenᵀ @ dlogits summed over all positions is (C, V), db_head sums dlogits "
                    "over positions to (V,), and dhidden = dlogits @ W_headᵀ is (B, T, C). "
                    f"So {quantity} is {fmt.shape(shape)}.")
        options = numeric_options(rng, shape, fmt.shape(shape), wrong_shapes(quantity, B, T, C, V), fmt.shape,
                                  "Correct: each tensor and its gradient share a shape.")
        return Draft(parameters={"B": B, "T": T, "C": C, "V": V, "quantity": quantity}, stem=stem,
                     answer=answer, options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        B, T, C, V = p["B"], p["T"], p["C"], p["V"]
        expected = {"hidden": [B, T, C], "W_head": [C, V], "b_head": [V], "logits": [B, T, V],
                    "dlogits": [B, T, V], "dW_head": [C, V], "db_head": [V], "dhidden": [B, T, C]}
        return check_equal(variant["answer"]["value"], expected[p["quantity"]])

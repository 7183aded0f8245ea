"""A head tied to the token embedding: the transpose, the logits' shape, the saving."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import pick_distractors
from question_bank.errors import Redraw
from question_bank.families._common import check_equal, enumerate_param_counts, int_answer, shape_answer
from question_bank.families._hub_pool import FEW_POOL_TRIES, least_cued_options
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.shape_probe import ShapeProbe
from question_bank.variant import Answer, Draft, Option
from solutions import gpt_param_count, softmax, tied_lm_head

ASKS = ("logits_shape", "right_operand", "untied_total", "expression")

#: Candidate expressions for the tied logits and the misconception behind each wrong one.
EXPRESSIONS = (
    ("hidden @ E.T", None, "Correct: the (V, C) embedding is transposed to (C, V)."),
    ("hidden @ E", "missing-transpose", "hidden is (..., C) and E is (V, C): the inner sizes do not "
     "match; E must be transposed."),
    ("E.T @ hidden", "operand-order", "The hidden states go on the left: (..., C) @ (C, V)."),
    ("softmax(hidden @ E.T)", "softmax-in-head", "That returns probabilities; the head's output is the raw logits."),
    # Two mistakes at once: the one-mistake expressions are each one edit of the key, which makes
    # the key the expression most alike to all the others.
    ("E @ hidden", "operand-order", "The hidden states go on the left, and E (V, C) must be transposed: "
     "`hidden @ E.T`."),
    ("softmax(hidden @ E)", "softmax-in-head", "That would return probabilities, and E (V, C) must be "
     "transposed for the inner sizes to match."),
    ("softmax(E.T @ hidden)", "softmax-in-head", "That would return probabilities, and the hidden states go "
     "on the left: (..., C) @ (C, V)."),
    # A transpose on the wrong operand: "E @ hidden" cut short is then not only the key's
    # truncation ("hidden @ E"), so the complete form of a cut text is not always the key.
    ("E @ hidden.T", "operand-order", "That transposes the hidden states instead of E, and puts them on "
     "the right: the head is `hidden @ E.T`, (..., C) @ (C, V)."),
    # Another complete form of a wrong expression ("E.T @ hidden" cut short): the completed-text
    # player found the key, the complete form of "hidden @ E", 53 times in 147.
    ("E.T @ hidden.T", "operand-order", "That puts E first and transposes the hidden states as well; the "
     "hidden states go on the left: `hidden @ E.T`, (..., C) @ (C, V)."),
)


#: Every wrong value this family knows: (name, misconception, formula, compute, feedback).
MISTAKES = register_mistakes("tied-weights", [
    ("logits_shape/keeps-width", "head-keeps-width", "(B, T, C)", lambda f: [f["B"], f["T"], f["C"]],
     "The head maps width C to one score per vocabulary entry."),
    ("logits_shape/flattened", "flattened-batch", "(B*T, V)", lambda f: [f["B"] * f["T"], f["V"]],
     "The logits keep the (B, T) layout."),
    ("logits_shape/last-position", "scores-only-last-position", "(B, V)", lambda f: [f["B"], f["V"]],
     "In training every position gets logits."),
    ("logits_shape/context-for-vocab", "confuses-context-with-vocab", "(B, T, T)",
     lambda f: [f["B"], f["T"], f["T"]], "The last axis is the vocabulary, not the context."),
    ("logits_shape/keeps-width-and-vocab", "head-keeps-width", "(B, T, C, V)",
     lambda f: [f["B"], f["T"], f["C"], f["V"]], "The product contracts the width C; the logits have no C axis."),
    # Shapes whose size is not the key's on either side: the key's size, B*T*V, was the 3rd smallest
    # or the largest in every set where the sizes differ (29 and 27 times in 56).
    ("logits_shape/one-position-short", "positions-off-by-one", "(B, T-1, V)",
     lambda f: [f["B"], f["T"] - 1, f["V"]],
     "Every one of the T positions gets logits; only the loss leaves out a position without a target."),
    ("logits_shape/one-position-more", "positions-off-by-one", "(B, T+1, V)",
     lambda f: [f["B"], f["T"] + 1, f["V"]],
     "The T positions give T rows of logits, one per position, the last one predicting the next token; "
     "there is no extra row."),
    ("logits_shape/weight-per-sequence", "weight-has-batch-axis", "(B, C, V)",
     lambda f: [f["B"], f["C"], f["V"]],
     "That is a copy of the (C, V) matrix per sequence; the logits hold one row of V scores per position."),
    ("right_operand/untransposed", "missing-transpose", "(V, C)", lambda f: [f["V"], f["C"]],
     "That is E itself; the head multiplies by its transpose."),
    ("right_operand/batch-axis", "weight-has-batch-axis", "(B, C, V)", lambda f: [f["B"], f["C"], f["V"]],
     "The shared matrix has no batch axis."),
    ("right_operand/context-for-vocab", "confuses-context-with-vocab", "(C, T)", lambda f: [f["C"], f["T"]],
     "M maps width C to the vocabulary V, not to T."),
    ("untied_total/head-not-added", "untied-not-counted", "tied total",
     lambda f: f["tied_total"], "An untied head is a separate V x C matrix and adds V*C."),
    ("untied_total/two-matrices", "tied-counted-twice", "tied total + 2*V*C",
     lambda f: f["tied_total"] + 2 * f["V"] * f["C"], "Untying adds one V x C matrix, not two."),
    ("untied_total/output-bias", "counts-output-bias", "tied total + V*C + V",
     lambda f: f["tied_total"] + f["V"] * f["C"] + f["V"], "The convention has no output bias."),
    ("untied_total/position-table-added", "position-table-in-head", "tied total + (V + T)*C",
     lambda f: f["tied_total"] + (f["V"] + f["T"]) * f["C"],
     "Only the token matrix is copied into the head; the position table stays at the input."),
    ("untied_total/no-position-table", "forgot-position-embeddings", "tied total + V*C - T*C",
     lambda f: f["tied_total"] + f["V"] * f["C"] - f["T"] * f["C"], "The position table (T x C) counts too."),
    ("untied_total/one-layernorm-per-block", "one-layernorm-per-block", "tied total + V*C - 2*L*C",
     lambda f: f["tied_total"] + f["V"] * f["C"] - 2 * f["n_layer"] * f["C"], "Each block has two LayerNorms."),
    # A count far from the key, alike to the tied total: most mistakes are the key give or take a
    # small part, which made the key the most alike text (87 times in 244 at seed 99).
    ("untied_total/context-for-vocab", "confuses-context-with-vocab", "tied total + T*C",
     lambda f: f["tied_total"] + f["T"] * f["C"],
     "That adds a T x C matrix; the head scores the V vocabulary entries, so untying adds V x C."),
])

# Two mistakes at once, so the key is not the one shape every distractor is one edit away from.
register_double_mistakes("tied-weights", MISTAKES, [
    ("logits_shape/flattened", "logits_shape/keeps-width", "(B*T, C)", lambda f: [f["B"] * f["T"], f["C"]]),
    ("logits_shape/flattened", "logits_shape/context-for-vocab", "(B*T, T)",
     lambda f: [f["B"] * f["T"], f["T"]]),
    ("logits_shape/last-position", "logits_shape/keeps-width", "(B, C)", lambda f: [f["B"], f["C"]]),
    ("logits_shape/flattened", "logits_shape/keeps-width-and-vocab", "(B*T, C, V)",
     lambda f: [f["B"] * f["T"], f["C"], f["V"]]),
    ("logits_shape/last-position", "logits_shape/context-for-vocab", "(B, T)", lambda f: [f["B"], f["T"]]),
    ("logits_shape/flattened", "logits_shape/one-position-short", "(B*(T-1), V)",
     lambda f: [f["B"] * (f["T"] - 1), f["V"]]),
    ("logits_shape/flattened", "logits_shape/one-position-more", "(B*(T+1), V)",
     lambda f: [f["B"] * (f["T"] + 1), f["V"]]),
    ("logits_shape/keeps-width-and-vocab", "logits_shape/one-position-short", "(B, T-1, C, V)",
     lambda f: [f["B"], f["T"] - 1, f["C"], f["V"]]),
    ("logits_shape/keeps-width-and-vocab", "logits_shape/one-position-more", "(B, T+1, C, V)",
     lambda f: [f["B"], f["T"] + 1, f["C"], f["V"]]),
    ("right_operand/untransposed", "right_operand/context-for-vocab", "(T, C)", lambda f: [f["T"], f["C"]]),
    ("right_operand/batch-axis", "right_operand/untransposed", "(B, V, C)",
     lambda f: [f["B"], f["V"], f["C"]]),
    ("right_operand/batch-axis", "right_operand/context-for-vocab", "(B, C, T)",
     lambda f: [f["B"], f["C"], f["T"]]),
    ("untied_total/two-matrices", "untied_total/output-bias", "tied total + 2*V*C + V",
     lambda f: f["tied_total"] + 2 * f["V"] * f["C"] + f["V"]),
    # Two mistakes sharing one with a single mistake, several on the same one (the output bias, the
    # position table left out): with single mistakes only, the key is the one total a mistake away
    # from every other, and a reader who spots the one-mistake relations found it 27 times in 37.
    ("untied_total/head-not-added", "untied_total/output-bias", "tied total + V",
     lambda f: f["tied_total"] + f["V"]),
    ("untied_total/output-bias", "untied_total/position-table-added", "tied total + (V + T)*C + V",
     lambda f: f["tied_total"] + (f["V"] + f["T"]) * f["C"] + f["V"]),
    ("untied_total/two-matrices", "untied_total/no-position-table", "tied total + 2*V*C - T*C",
     lambda f: f["tied_total"] + 2 * f["V"] * f["C"] - f["T"] * f["C"]),
    ("untied_total/two-matrices", "untied_total/one-layernorm-per-block", "tied total + 2*V*C - 2*L*C",
     lambda f: f["tied_total"] + 2 * f["V"] * f["C"] - 2 * f["n_layer"] * f["C"]),
    ("untied_total/no-position-table", "untied_total/one-layernorm-per-block", "tied total + V*C - T*C - 2*L*C",
     lambda f: f["tied_total"] + f["V"] * f["C"] - f["T"] * f["C"] - 2 * f["n_layer"] * f["C"]),
    ("untied_total/context-for-vocab", "untied_total/output-bias", "tied total + T*C + T",
     lambda f: f["tied_total"] + f["T"] * f["C"] + f["T"]),
])

class _RecordingProbe(ShapeProbe):
    """A shape probe that remembers the shape of what it is multiplied by."""

    def __init__(self, shape: tuple[int, ...]):
        super().__init__(shape)
        self.right_operand: tuple[int, ...] | None = None

    def __matmul__(self, other: Any) -> ShapeProbe:
        self.right_operand = tuple(other.shape)
        return super().__matmul__(other)


@register_family
class TiedWeights(Family):
    name = "tied-weights"
    version = 9  # v9: the shapes and totals drawn from the pool of their mistakes whose fit leaves no player past chance; v8: two-mistake totals sharing a mistake with the single ones, so the key is not the mistake hub
    title = "A head tied to the token embedding"
    summary = "Tied head: the transpose of E, the logits' shape, the parameters untying adds, the expression."
    tags = ("shapes", "weight-tying", "parameters")
    subquestion_key = "ask"
    subquestion_values = ASKS

    def build(self, rng: np.random.Generator) -> Draft:
        B = int(rng.integers(1, 33))
        T = int(rng.choice([64, 128, 256, 512, 1024]))
        C = 64 * int(rng.integers(1, 17))
        V = int(rng.integers(1000, 60001))
        if len({B, T, C, V}) < 4:
            raise Redraw("two sizes coincide")
        ask = ASKS[int(rng.integers(len(ASKS)))]
        intro = (f"A GPT with model width C = {fmt.integer(C)} and vocabulary V = {fmt.integer(V)} ties its output head to "
                 f"the token embedding matrix `E` of shape {fmt.shape([V, C])}. The final hidden states for a "
                 f"batch of B = {fmt.integer(B)} sequences of T = {fmt.integer(T)} tokens have shape {fmt.shape([B, T, C])}.")
        params: dict[str, Any] = {"B": B, "T": T, "C": C, "V": V, "ask": ask}
        if ask == "expression":
            return self._expression(rng, intro, params)
        if ask == "untied_total":
            return self._untied_total(rng, intro, params)
        hidden, E = _RecordingProbe((B, T, C)), ShapeProbe((V, C))
        logits = tied_lm_head(hidden, E)
        if ask == "logits_shape":
            shape = list(logits.shape)
            question = "What is the shape of the logits?"
        else:
            shape = list(hidden.right_operand)
            question = "The head computes `logits = hidden @ M`. What is the shape of `M`?"
        solution = (f"With tying, `M = E.T` has shape (C, V) = {fmt.shape([C, V])}, and "
                    f"`hidden @ E.T` gives logits of shape (B, T, V) = {fmt.shape([B, T, V])}. "
                    "The same matrix serves as input embedding and output projection.")
        wrong = self._wrong(ask, params, fmt.shape)
        # of a few pools of its mistakes, the one whose fit leaves no player past chance: a random cut
        # often left the key the mistake hub (the logits' shape 64 times in 185 at 1,000 variants)
        options = least_cued_options(rng, shape, fmt.shape(shape), wrong,
                                     "Correct: the tied head multiplies by the transpose of E.",
                                     tries=FEW_POOL_TRIES, linked=True)
        return Draft(parameters=params, stem=f"{intro} {question}", answer=shape_answer(shape),
                     options=options, solution=solution, mistakes=wrong)

    def _wrong(self, ask: str, params: dict[str, Any], render: Callable[[Any], str]) -> list[Option]:
        names = [name for name in MISTAKES if name.startswith(ask + "/")]
        return wrong_options(MISTAKES, names, self.facts(params), render)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The sizes, plus the tied model's total for the untying question."""
        facts = dict(parameters)
        if parameters["ask"] == "untied_total":
            T, C, V = parameters["T"], parameters["C"], parameters["V"]
            facts["tied_total"] = gpt_param_count(V, T, C, parameters["n_layer"], 4 * C, tied=True)["total"]
        return facts

    def _untied_total(self, rng: np.random.Generator, intro: str, params: dict[str, Any]) -> Draft:
        T, C, V = params["T"], params["C"], params["V"]
        L = int(rng.integers(2, 25))
        params["n_layer"] = L
        tied = gpt_param_count(V, T, C, L, 4 * C, tied=True)
        untied = gpt_param_count(V, T, C, L, 4 * C, tied=False)
        total = untied["total"]
        stem = (f"{intro} With {L} blocks and FFN width 4C, the tied model has "
                f"{fmt.integer(tied['total'])} parameters (context length T = {fmt.integer(T)}). How many parameters does "
                "the same model have if the output head is **untied** (a separate matrix, no output bias)?")
        solution = (f"Untying adds one V x C matrix: {fmt.integer(V)} x {C} = {fmt.integer(V * C)}, so the "
                    f"total becomes {fmt.integer(tied['total'])} + {fmt.integer(V * C)} = {fmt.integer(total)}.")
        wrong = self._wrong("untied_total", params, fmt.integer)
        options = least_cued_options(rng, total, fmt.integer(total), wrong,
                                     "Correct: untying adds exactly V*C parameters.",
                                     tries=FEW_POOL_TRIES, linked=True)
        return Draft(parameters=params, stem=stem, answer=int_answer(total), options=options, solution=solution,
                     mistakes=wrong)

    def _expression(self, rng: np.random.Generator, intro: str, params: dict[str, Any]) -> Draft:
        # Which expression is right is decided by evaluating each one on small
        # random arrays and comparing with the reference tied head.
        small = np.random.default_rng(0)
        hidden, E = small.standard_normal((2, 3, 4)), small.standard_normal((5, 4))
        reference = tied_lm_head(hidden, E)
        options = []
        for code, misconception, feedback in EXPRESSIONS:
            correct = _evaluates_to(code, hidden, E, reference, softmax)
            options.append(Option(value=code, text=f"`{code}`", correct=correct,
                                  misconception=None if correct else misconception, feedback=feedback))
        key = next(o for o in options if o.correct)
        options = [key, *pick_distractors(rng, key.value, [o for o in options if not o.correct],
                                          answer_text=key.text)]
        stem = f"{intro} Which expression computes the logits of the tied head?"
        solution = ("The embedding stores one C-vector per token as the rows of E (V, C). The head needs a "
                    "(C, V) matrix, so it multiplies by the transpose: `hidden @ E.T`, giving one raw score "
                    "per token and position; softmax comes later, in the loss or when sampling.")
        answer = Answer(kind="single_choice", value=None, display="`hidden @ E.T`")
        return Draft(parameters=params, stem=stem, answer=answer, options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        B, T, C, V = p["B"], p["T"], p["C"], p["V"]
        ask = p["ask"]
        if ask == "logits_shape":
            return check_equal(variant["answer"]["value"], [B, T, V])
        if ask == "right_operand":
            return check_equal(variant["answer"]["value"], [C, V])
        if ask == "untied_total":
            expected = enumerate_param_counts(V, T, C, p["n_layer"], 4 * C, tied=False)["total"]
            return check_equal(variant["answer"]["value"], expected)
        # expression: evaluate every choice with an einsum written here, not the reference
        rng = np.random.default_rng(1)
        hidden, E = rng.standard_normal((2, 3, 4)), rng.standard_normal((5, 4))
        expected = np.einsum("btc,vc->btv", hidden, E)
        problems = []
        for choice in variant["choices"]:
            if _evaluates_to(choice["value"], hidden, E, expected, _own_softmax) != choice["correct"]:
                problems.append(f"choice {choice['value']!r} is marked correct={choice['correct']}")
        return problems


def _own_softmax(x: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, written here so the check does not use the reference."""
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _evaluates_to(code: str, hidden: np.ndarray, E: np.ndarray, expected: np.ndarray,
                  softmax_fn: Callable[[np.ndarray], np.ndarray]) -> bool:
    """Whether a candidate expression (one of :data:`EXPRESSIONS`) reproduces ``expected``.

    The expressions are this module's own constants, evaluated with no builtins.
    """
    try:
        value = eval(code, {"__builtins__": {}}, {"hidden": hidden, "E": E, "softmax": softmax_fn})  # noqa: S307
    except ValueError:  # a shape mismatch: the expression cannot be right
        return False
    return value.shape == expected.shape and bool(np.allclose(value, expected))

"""Softmax values and properties: a probability from logits with a bias, a shift of every logit, a masked score row.

Three tasks (``ask``):

* ``probability``: logits ``z = h @ W_head + b_head`` for one position, then
  one softmax probability;
* ``shifted``: every logit raised by the same constant c (up to 1000, where
  a naive ``np.exp`` overflows): what the probability becomes ("what changes
  if ..."; nothing does);
* ``masked``: one query's attention scores with the causal mask applied as
  -inf before the softmax, then one key's weight.

Every distractor is a probability (between 0 and 1), so no choice is ruled
out by its range alone.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import at_common_width, known_mistakes, numeric_options
from question_bank.errors import Redraw
from question_bank.families._common import check_close, float_answer
from question_bank.families._hub_pool import least_cued_options
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft, Option
from solutions import causal_mask, lm_head, softmax

ASKS = ("probability", "shifted", "masked")

#: Shifts of the ``shifted`` task; 1000 overflows ``np.exp`` in float64 (e^709.8 is the largest finite).
SHIFTS = (1, 2, 3, 5, 10, 100, 1000)


def _softmax_entry(scores: Sequence[float], j: int, base: float = math.e) -> float:
    """``base**s_j / sum_k base**s_k``, shifted by the maximum so no power overflows."""
    top = max(scores)
    powers = [base ** (s - top) for s in scores]
    return powers[j] / math.fsum(powers)


def _zero_blocked(scores: Sequence[float], allowed: int) -> list[float]:
    """The scores with every key from ``allowed`` on set to 0 (a mask applied as 0 instead of -inf)."""
    return [s if k < allowed else 0.0 for k, s in enumerate(scores)]


def _sigmoid(x: float, base: float = math.e) -> float:
    """1 / (1 + base^-x), written so no power overflows (c * z_j reaches -6000 at the largest shift)."""
    small = math.exp(-abs(x) * math.log(base))       # base^-|x|, at most 1
    return 1.0 / (1.0 + small) if x >= 0 else small / (1.0 + small)


#: Every wrong value this family knows: (name, misconception, formula, compute, feedback).
MISTAKES = register_mistakes("softmax-values", [
    # probability: z = h @ W + b, p_j = softmax(z)_j
    ("probability/bias-dropped", "logit-bias-dropped", "softmax(h @ W)_j",
     lambda f: _softmax_entry(f["z_no_bias"], f["j"]),
     "That leaves the bias out: the logits are h @ W_head + b_head = {z_text}."),
    ("probability/base-2", "wrong-log-base", "2^z_j / sum_k 2^z_k",
     lambda f: _softmax_entry(f["z"], f["j"], base=2.0),
     "Softmax exponentiates with base e, not 2."),
    ("probability/sigmoid", "sigmoid-for-softmax", "sigmoid(z_j)",
     lambda f: _sigmoid(f["z"][f["j"]]),
     "That scores token {j} on its own with a sigmoid; softmax normalises over all the logits {z_text}."),
    ("probability/base-10", "wrong-log-base", "10^z_j / sum_k 10^z_k",
     lambda f: _softmax_entry(f["z"], f["j"], base=10.0),
     "Softmax exponentiates with base e, not 10."),
    # shifted: every logit + c leaves the softmax unchanged
    ("shifted/target-only", "softmax-shift-changes-probabilities", "softmax of z with only z_j + c",
     lambda f: _softmax_entry([z + (f["c"] if k == f["j"] else 0) for k, z in enumerate(f["z"])], f["j"]),
     "Every logit is raised by c, not only token {j}'s; the common factor e^c cancels in the ratio."),
    ("shifted/others-only", "softmax-shift-changes-probabilities", "softmax of z with every z_k + c but z_j",
     lambda f: _softmax_entry([z + (f["c"] if k != f["j"] else 0) for k, z in enumerate(f["z"])], f["j"]),
     "Token {j}'s logit is raised by c too; the common factor e^c cancels in the ratio."),
    ("shifted/divided", "softmax-shift-changes-probabilities", "softmax(z / c)_j",
     lambda f: _softmax_entry([z / f["c"] for z in f["z"]], f["j"]),
     "Adding c is not dividing by c (that would raise the temperature); a shift cancels."),
    ("shifted/scaled", "softmax-shift-changes-probabilities", "softmax(c * z)_j",
     lambda f: _softmax_entry([f["c"] * z for z in f["z"]], f["j"]),
     "Adding c is not multiplying by c (that would change the temperature); a shift cancels."),
    ("shifted/uniform", "softmax-shift-changes-probabilities", "1/V",
     lambda f: 1 / len(f["z"]),
     "A large shift does not flatten the softmax: only differences between logits matter."),
    ("shifted/bias-dropped", "logit-bias-dropped", "softmax(h @ W)_j",
     lambda f: _softmax_entry(f["z_no_bias"], f["j"]),
     "The shift changes nothing, but the logits include the bias: h @ W_head + b_head = {z_text}."),
    # the shift seen to cancel, the probability still computed wrongly: mistakes that can land above
    # the key (with the others the key was the 3rd smallest choice 80 to 94 times in about 280)
    ("shifted/sigmoid", "sigmoid-for-softmax", "sigmoid(z_j)",
     lambda f: _sigmoid(f["z"][f["j"]]),
     "The shift cancels, but that scores token {j} on its own with a sigmoid; softmax normalises over "
     "all the logits {z_text}."),
    ("shifted/base-2", "wrong-log-base", "2^z_j / sum_k 2^z_k",
     lambda f: _softmax_entry(f["z"], f["j"], base=2.0),
     "The shift cancels, but softmax exponentiates with base e, not 2."),
    # masked: one query's scores, -inf where key > query, then softmax
    ("masked/no-mask", "no-mask", "softmax over all T scores",
     lambda f: _softmax_entry(f["scores"], f["key"]),
     "That lets query {query} attend to later keys; the mask sets their scores to -inf first."),
    ("masked/zero-not-inf", "mask-with-zero", "blocked scores set to 0",
     lambda f: _softmax_entry([s if k <= f["query"] else 0.0 for k, s in enumerate(f["scores"])], f["key"]),
     "Setting a blocked score to 0 still gives it weight e^0 = 1; the mask uses -inf, whose exp is 0."),
    ("masked/diagonal-blocked", "mask-counts-diagonal", "softmax over keys < query",
     lambda f: (_softmax_entry(f["scores"][:f["query"]], f["key"]) if f["key"] < f["query"] else 0.0),
     "A query may attend to its own key: keys 0 to {query} are allowed."),
    ("masked/past-blocked", "mask-blocks-past", "softmax over keys >= query",
     lambda f: (_softmax_entry(f["scores"][f["query"]:], f["key"] - f["query"]) if f["key"] >= f["query"] else 0.0),
     "The causal mask blocks the future (keys after the query), not the past."),
    ("masked/only-itself", "attends-only-to-itself", "1 for the query's own key, else 0",
     lambda f: 1.0 if f["key"] == f["query"] else 0.0,
     "The mask blocks only the keys after the query; keys 0 to {query} share the weight by softmax."),
    ("masked/base-2", "wrong-log-base", "2^s_key / sum over keys <= query of 2^s",
     lambda f: _softmax_entry(f["scores"][:f["query"] + 1], f["key"], base=2.0),
     "The mask is right, but softmax exponentiates with base e, not 2."),
    ("masked/sigmoid", "sigmoid-for-softmax", "sigmoid(s_key)",
     lambda f: _sigmoid(f["scores"][f["key"]]),
     "That scores key {key} on its own; softmax normalises over the allowed keys 0 to {query}."),
    # Mistakes that can land above the key as well as below: with the others (the mask left out,
    # blocked scores set to 0) the key was the largest choice 118 times in 354 (seed 0, 1,000
    # variants, limit 32%) and the smallest only 46 times.
    ("masked/unnormalised", "softmax-not-normalised", "e^(s_key - max over keys <= query)",
     lambda f: math.exp(f["scores"][f["key"]] - max(f["scores"][:f["query"] + 1])),
     "That shifts the allowed scores by their maximum and exponentiates, but never divides by the sum; "
     "the weights of keys 0 to {query} must add up to 1."),
    ("masked/base-10", "wrong-log-base", "10^s_key / sum over keys <= query of 10^s",
     lambda f: _softmax_entry(f["scores"][:f["query"] + 1], f["key"], base=10.0),
     "The mask is right, but softmax exponentiates with base e, not 10."),
    # and below the key as well as above: the probability was the smallest or 2nd smallest choice
    # 205 times in 315 (seed 0), the largest 39 times
    ("probability/negated", "lowest-logit-wins", "softmax(-z)_j",
     lambda f: _softmax_entry([-z for z in f["z"]], f["j"]),
     "That negates the logits, as if a lower logit meant a likelier token; softmax gives the largest "
     "logit the largest probability."),
])
#: Two mistakes at once, so the key is not the one choice each distractor is one step from.
register_double_mistakes("softmax-values", MISTAKES, [
    ("probability/bias-dropped", "probability/base-2", "2^(hW)_j / sum_k 2^(hW)_k",
     lambda f: _softmax_entry(f["z_no_bias"], f["j"], base=2.0)),
    ("probability/bias-dropped", "probability/sigmoid", "sigmoid((h @ W)_j)",
     lambda f: _sigmoid(f["z_no_bias"][f["j"]])),
    ("masked/no-mask", "probability/base-2", "2^s_key / sum over all T of 2^s",
     lambda f: _softmax_entry(f["scores"], f["key"], base=2.0)),
    ("shifted/others-only", "shifted/bias-dropped", "softmax of hW with every entry + c but token j's",
     lambda f: _softmax_entry([z + (f["c"] if k != f["j"] else 0) for k, z in enumerate(f["z_no_bias"])], f["j"])),
    ("shifted/divided", "shifted/bias-dropped", "softmax(hW / c)_j",
     lambda f: _softmax_entry([z / f["c"] for z in f["z_no_bias"]], f["j"])),
    ("probability/bias-dropped", "probability/base-10", "10^(hW)_j / sum_k 10^(hW)_k",
     lambda f: _softmax_entry(f["z_no_bias"], f["j"], base=10.0)),
    ("masked/diagonal-blocked", "probability/base-2", "2^s_key / sum over keys < query of 2^s",
     lambda f: (_softmax_entry(f["scores"][:f["query"]], f["key"], base=2.0) if f["key"] < f["query"] else 0.0)),
    ("masked/diagonal-blocked", "probability/base-10", "10^s_key / sum over keys < query of 10^s",
     lambda f: (_softmax_entry(f["scores"][:f["query"]], f["key"], base=10.0) if f["key"] < f["query"] else 0.0)),
    ("probability/negated", "probability/bias-dropped", "softmax(-(h @ W))_j",
     lambda f: _softmax_entry([-z for z in f["z_no_bias"]], f["j"])),
])
#: More mistakes made two at once, each sharing a mistake with the single ones, so that some choice sets
#: have a distractor one mistake from as many others as the key is, or more (with single mistakes and the
#: few doubles above, a reader spotting every one-mistake relation found the masked key 44 times in 75 and
#: the shifted key 38 times in 64, stress -n 200 --seed 99). The second mistake's feedback is the one that
#: reads true beside the first (base e, without "the mask is right").
register_double_mistakes("softmax-values", MISTAKES, [
    ("masked/no-mask", "probability/base-10", "10^s_key / sum over all T of 10^s",
     lambda f: _softmax_entry(f["scores"], f["key"], base=10.0)),
    ("masked/zero-not-inf", "probability/base-2", "2^s_key / sum of 2^s, blocked scores set to 0",
     lambda f: _softmax_entry(_zero_blocked(f["scores"], f["query"] + 1), f["key"], base=2.0)),
    ("masked/zero-not-inf", "probability/base-10", "10^s_key / sum of 10^s, blocked scores set to 0",
     lambda f: _softmax_entry(_zero_blocked(f["scores"], f["query"] + 1), f["key"], base=10.0)),
    ("masked/zero-not-inf", "masked/diagonal-blocked", "softmax with the scores of keys >= query set to 0",
     lambda f: _softmax_entry(_zero_blocked(f["scores"], f["query"]), f["key"])),
    ("masked/past-blocked", "probability/base-2", "2^s_key / sum over keys >= query of 2^s",
     lambda f: (_softmax_entry(f["scores"][f["query"]:], f["key"] - f["query"], base=2.0)
                if f["key"] >= f["query"] else 0.0)),
    ("shifted/target-only", "shifted/bias-dropped", "softmax of hW with only token j's entry + c",
     lambda f: _softmax_entry([z + (f["c"] if k == f["j"] else 0) for k, z in enumerate(f["z_no_bias"])], f["j"])),
    ("shifted/scaled", "shifted/bias-dropped", "softmax(c * hW)_j",
     lambda f: _softmax_entry([f["c"] * z for z in f["z_no_bias"]], f["j"])),
    ("shifted/sigmoid", "shifted/bias-dropped", "sigmoid((h @ W)_j)",
     lambda f: _sigmoid(f["z_no_bias"][f["j"]])),
    ("shifted/base-2", "shifted/bias-dropped", "2^(hW)_j / sum_k 2^(hW)_k",
     lambda f: _softmax_entry(f["z_no_bias"], f["j"], base=2.0)),
    ("shifted/target-only", "probability/base-2", "2^z_j / sum_k 2^z_k with only z_j + c",
     lambda f: _softmax_entry([z + (f["c"] if k == f["j"] else 0) for k, z in enumerate(f["z"])], f["j"], base=2.0)),
    ("shifted/others-only", "probability/base-2", "2^z_j / sum_k 2^z_k with every z_k + c but z_j",
     lambda f: _softmax_entry([z + (f["c"] if k != f["j"] else 0) for k, z in enumerate(f["z"])], f["j"], base=2.0)),
    ("shifted/divided", "probability/base-2", "2^(z_j / c) / sum_k 2^(z_k / c)",
     lambda f: _softmax_entry([z / f["c"] for z in f["z"]], f["j"], base=2.0)),
    ("shifted/scaled", "probability/base-2", "2^(c z_j) / sum_k 2^(c z_k)",
     lambda f: _softmax_entry([f["c"] * z for z in f["z"]], f["j"], base=2.0)),
    ("masked/past-blocked", "masked/zero-not-inf", "softmax with the scores of keys < query set to 0",
     lambda f: _softmax_entry([0.0 if k < f["query"] else x for k, x in enumerate(f["scores"])], f["key"])),
    ("masked/past-blocked", "probability/base-10", "10^s_key / sum over keys >= query of 10^s",
     lambda f: (_softmax_entry(f["scores"][f["query"]:], f["key"] - f["query"], base=10.0)
                if f["key"] >= f["query"] else 0.0)),
    ("masked/unnormalised", "probability/base-2", "2^(s_key - max over keys <= query)",
     lambda f: 2.0 ** (f["scores"][f["key"]] - max(f["scores"][:f["query"] + 1]))),
    ("masked/unnormalised", "probability/base-10", "10^(s_key - max over keys <= query)",
     lambda f: 10.0 ** (f["scores"][f["key"]] - max(f["scores"][:f["query"] + 1]))),
    ("masked/diagonal-blocked", "masked/unnormalised", "e^(s_key - max over keys < query)",
     lambda f: (math.exp(f["scores"][f["key"]] - max(f["scores"][:f["query"]])) if f["key"] < f["query"] else 0.0)),
    ("masked/zero-not-inf", "masked/unnormalised", "e^(s_key - max of the scores, blocked ones set to 0)",
     lambda f: math.exp(f["scores"][f["key"]] - max(_zero_blocked(f["scores"], f["query"] + 1)))),
    ("shifted/target-only", "probability/sigmoid", "sigmoid(z_j + c)",
     lambda f: _sigmoid(f["z"][f["j"]] + f["c"])),
    ("shifted/divided", "probability/sigmoid", "sigmoid(z_j / c)",
     lambda f: _sigmoid(f["z"][f["j"]] / f["c"])),
    ("shifted/scaled", "probability/sigmoid", "sigmoid(c * z_j)",
     lambda f: _sigmoid(f["c"] * f["z"][f["j"]])),
    ("probability/negated", "probability/base-2", "2^(-z_j) / sum_k 2^(-z_k)",
     lambda f: _softmax_entry([-z for z in f["z"]], f["j"], base=2.0)),
    ("masked/sigmoid", "probability/base-2", "1 / (1 + 2^-s_key)",
     lambda f: _sigmoid(f["scores"][f["key"]], base=2.0)),
    ("masked/sigmoid", "probability/base-10", "1 / (1 + 10^-s_key)",
     lambda f: _sigmoid(f["scores"][f["key"]], base=10.0)),
    ("probability/sigmoid", "probability/base-2", "1 / (1 + 2^-z_j)",
     lambda f: _sigmoid(f["z"][f["j"]], base=2.0)),
    ("probability/sigmoid", "probability/base-10", "1 / (1 + 10^-z_j)",
     lambda f: _sigmoid(f["z"][f["j"]], base=10.0)),
    ("probability/negated", "probability/base-10", "10^(-z_j) / sum_k 10^(-z_k)",
     lambda f: _softmax_entry([-z for z in f["z"]], f["j"], base=10.0)),
    ("probability/negated", "probability/sigmoid", "sigmoid(-z_j)",
     lambda f: _sigmoid(-f["z"][f["j"]])),
])
#: Three mistakes at once: each is one mistake from two doubles, none from the key.
register_double_mistakes("softmax-values", MISTAKES, [
    ("masked/zero-not-inf+diagonal-blocked", "probability/base-2",
     "2^s_key / sum of 2^s, the scores of keys >= query set to 0",
     lambda f: _softmax_entry(_zero_blocked(f["scores"], f["query"]), f["key"], base=2.0)),
    ("masked/past-blocked+zero-not-inf", "probability/base-2", "2^s_key / sum of 2^s, the scores of keys < query set to 0",
     lambda f: _softmax_entry([0.0 if k < f["query"] else x for k, x in enumerate(f["scores"])], f["key"], base=2.0)),
    ("masked/zero-not-inf+diagonal-blocked", "probability/base-10",
     "10^s_key / sum of 10^s, the scores of keys >= query set to 0",
     lambda f: _softmax_entry(_zero_blocked(f["scores"], f["query"]), f["key"], base=10.0)),
    ("masked/past-blocked+zero-not-inf", "probability/base-10",
     "10^s_key / sum of 10^s, the scores of keys < query set to 0",
     lambda f: _softmax_entry([0.0 if k < f["query"] else x for k, x in enumerate(f["scores"])], f["key"], base=10.0)),
    ("masked/diagonal-blocked+unnormalised", "probability/base-2", "2^(s_key - max over keys < query)",
     lambda f: (2.0 ** (f["scores"][f["key"]] - max(f["scores"][:f["query"]])) if f["key"] < f["query"] else 0.0)),
    ("probability/negated+bias-dropped", "probability/base-2", "2^(-(hW)_j) / sum_k 2^(-(hW)_k)",
     lambda f: _softmax_entry([-z for z in f["z_no_bias"]], f["j"], base=2.0)),
    ("probability/bias-dropped+sigmoid", "probability/base-2", "1 / (1 + 2^-(hW)_j)",
     lambda f: _sigmoid(f["z_no_bias"][f["j"]], base=2.0)),
])


#: Clearly different mistakes a question needs on each side of its key.
SIDE_MISTAKES = 2


def _both_sides(value: float, wrong: list[Option]) -> None:
    """Redraw unless :data:`SIDE_MISTAKES` clearly different mistakes lie above the key and as many below.

    With fewer on one side the key's rank among the choices is forced: a masked weight near 1
    (two allowed keys, one score far above the other) has every mistake below it or at 1, and
    such keys were the largest choice often enough to fail the value order at 1,000 variants
    (118 in 354 at seed 0, limit 32%).
    """
    values = [float(o.value) for o in known_mistakes(value, wrong)]
    if sum(v > value for v in values) < SIDE_MISTAKES or sum(v < value for v in values) < SIDE_MISTAKES:
        raise Redraw("too few mistakes on one side of the key")


def _printed(value: float, wrong: list[Option]) -> tuple[str, list[Option]]:
    """The key's text and the wrong options, every one printed at one length where that fits.

    At four figures a probability under 0.1 prints longer than one above it, and a 0 or a 1
    (a blocked key, a key that attends only to itself) prints shorter than any: the masked key
    was the longest text 91 times in 271 (seed 99, 1,000 variants, limit 33%).
    """
    printed = at_common_width(value, wrong)
    if printed is None:
        # A mistake made two or three at once in base 10 can land far below the key (10^-9), too small
        # to print at a common width; such a value is left out rather than every choice printed apart.
        fits = [o for o in wrong if "+" not in (o.formula or "") or at_common_width(value, [o]) is not None]
        printed = at_common_width(value, fits)
    key_text, shown = printed or (fmt.num_tex(value), wrong)
    _both_sides(value, shown)
    return key_text, shown


def _vector(values: Sequence[float]) -> str:
    return "(" + ", ".join(fmt.exact(v) for v in values) + ")"


@register_family
class SoftmaxValues(Family):
    name = "softmax-values"
    version = 5  # v5: the shifted task draws from the least cued of two pool cuts (the mistake hub); v4: more mistakes made two and three at once, so the key is not the mistake hub; v3: choices at one length, mistakes on both sides of the key (two each, else redrawn), seven more mistakes; v2: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Softmax: values, shifts and masks"
    summary = "A softmax probability from logits with a bias, after shifting every logit, or under a causal mask."
    tags = ("softmax", "lm-head", "attention")
    subquestion_key = "ask"
    subquestion_values = ASKS

    def build(self, rng: np.random.Generator) -> Draft:
        ask = ASKS[int(rng.integers(len(ASKS)))]
        if ask == "masked":
            return self._masked(rng)
        V = int(rng.integers(3, 5))
        hidden = rng.integers(-2, 3, size=2).astype(np.float64)          # (C,) with C = 2
        W_head = rng.integers(-2, 3, size=(2, V)).astype(np.float64)     # (C, V)
        b_head = rng.integers(-1, 3, size=V).astype(np.float64)          # (V,)
        if not b_head.any():
            raise Redraw("a zero bias would make the bias question moot")
        j = int(rng.integers(V))
        parameters: dict[str, Any] = {"ask": ask, "hidden": hidden.astype(int).tolist(),
                                      "W_head": W_head.astype(int).tolist(), "b_head": b_head.astype(int).tolist(),
                                      "j": j}
        if ask == "shifted":
            parameters["c"] = int(SHIFTS[int(rng.integers(len(SHIFTS)))])
        facts = self.facts(parameters)
        value = float(softmax(lm_head(hidden[None, None], W_head, b_head))[0, 0, j])
        setup = (f"An LM head computes the logits of one position as `z = h @ W_head + b_head` with "
                 f"h = {_vector(hidden)}, b_head = {_vector(b_head)} and\n\n"
                 f"{fmt.table(['W_head'] + [f'token {v}' for v in range(V)], [[f'row {r}'] + [int(w) for w in W_head[r]] for r in range(2)])}\n\n")
        steps = (f"$z = hW + b = {_vector(facts['z_no_bias'])} + {_vector(b_head)} = {facts['z_text']}$; "
                 f"$p_{{{j}}} = e^{{z_{{{j}}}}} / \\sum_k e^{{z_k}} = {fmt.num(value)}$.")
        if ask == "probability":
            stem = setup + f"What probability does the softmax of these logits give token {j}?"
            solution = steps
            correct = "Correct: bias added, then e^z normalised over every token."
        else:
            c = parameters["c"]
            overflow = (" (In float64 `np.exp` overflows above about 709, so a naive softmax of the "
                        "shifted logits returns nan; the question is about the exact value.)" if c >= 710 else "")
            stem = (setup + f"Every one of these logits is now raised by the same constant c = {fmt.integer(c)}."
                    f"{overflow} What probability does the softmax give token {j} after the shift?")
            solution = (steps + f" Raising every logit by c multiplies each $e^{{z_k}}$ by $e^c$, which "
                        f"cancels between numerator and denominator, so $p_{{{j}}}$ is still {fmt.num(value)}. "
                        "The stable softmax uses exactly this: it subtracts the largest logit (a shift by "
                        "c = -max z) so that no exponential overflows, without changing the result.")
            correct = "Correct: a common shift cancels; softmax depends only on differences of logits."
        key_text, wrong = _printed(value, wrong_options(MISTAKES, [n for n in MISTAKES if n.startswith(ask + "/")],
                                                        facts, fmt.num_tex))
        # The shifted task's pool is the least cued of two cuts: cut at random, its key (a dozen mistakes and
        # more of them twice) was the mistake hub 31% of the time (expected share, seed 99, 300 variants).
        options = (least_cued_options(rng, value, key_text, wrong, correct, tries=2) if ask == "shifted"
                   else numeric_options(rng, value, key_text, wrong, correct))
        return Draft(parameters=parameters, stem=stem, answer=float_answer(value), options=options,
                     solution=solution, mistakes=wrong)

    def _masked(self, rng: np.random.Generator) -> Draft:
        T = int(rng.integers(3, 6))
        query = int(rng.integers(1, T - 1))          # a query with earlier keys and later (blocked) ones
        key = int(rng.integers(query + 1))
        scores = rng.integers(-2, 4, size=T).astype(np.float64)          # (T,) one query's row
        parameters = {"ask": "masked", "scores": scores.astype(int).tolist(), "query": query, "key": key}
        masked = np.where(causal_mask(T)[query], -np.inf, scores)        # (T,) -inf where key > query
        weights = softmax(masked)
        value = float(weights[key])
        facts = self.facts(parameters)
        stem = (f"In causal self-attention over T = {T} positions (numbered 0 to {T - 1}), query {query} has the "
                f"scores $q \\cdot k / \\sqrt{{d}}$ = {_vector(scores)} against keys 0 to {T - 1}. The causal "
                f"mask is applied to the scores before the softmax. What attention weight does query {query} "
                f"give key {key}?")
        shown = ", ".join(fmt.exact(s) if k <= query else "-\\infty" for k, s in enumerate(scores))
        solution = (f"The mask sets the scores of keys after {query} to $-\\infty$: $({shown})$. Their "
                    f"exponentials are 0, so the softmax runs over keys 0 to {query} only: weight of key {key} "
                    f"$= e^{{{fmt.exact(scores[key])}}} / \\sum_{{k \\le {query}}} e^{{s_k}} = {fmt.num(value)}$.")
        key_text, wrong = _printed(value, wrong_options(MISTAKES, [n for n in MISTAKES if n.startswith("masked/")],
                                                        facts, fmt.num_tex))
        options = numeric_options(rng, value, key_text, wrong,
                                  "Correct: -inf before the softmax, so blocked keys get exactly zero weight.")
        return Draft(parameters=parameters, stem=stem, answer=float_answer(value), options=options,
                     solution=solution, mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The logits with and without the bias (and as printed), or the masked task's parameters."""
        if parameters["ask"] == "masked":
            return dict(parameters)
        hidden, W_head, b_head = parameters["hidden"], parameters["W_head"], parameters["b_head"]
        no_bias = [float(sum(h * W_head[r][v] for r, h in enumerate(hidden))) for v in range(len(b_head))]
        z = [a + b for a, b in zip(no_bias, b_head)]
        return {**parameters, "z_no_bias": no_bias, "z": z, "z_text": _vector(z)}

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Exact-arithmetic softmax in plain Python, the shift applied literally, the mask as a key filter."""
        p = variant["parameters"]
        if p["ask"] == "masked":
            allowed = p["scores"][:p["query"] + 1]
            expected = math.exp(p["scores"][p["key"]]) / math.fsum(math.exp(s) for s in allowed)
        else:
            logits = [b + sum(h * p["W_head"][r][v] for r, h in enumerate(p["hidden"]))
                      for v, b in enumerate(p["b_head"])]
            shift = p.get("c", 0)
            shifted = [z + shift for z in logits]
            # exp of the shifted logits overflows for c = 1000; scale numerator and sum by e^-shift-max by hand
            top = max(shifted)
            expected = math.exp(shifted[p["j"]] - top) / math.fsum(math.exp(z - top) for z in shifted)
        return check_close(variant["answer"]["value"], expected)

"""A multi-part item: one LM-head scenario carried from a logit to a gradient entry.

One seed draws one scenario (hidden states ``h`` of N positions, ``W_head``,
``b_head`` and the targets) and four parts that build on each other:

* ``logit`` (a): the logit of position i's target token, ``z[i, t_i]``;
* ``probability`` (b): ``softmax(z[i])[t_i]``, computed with the max shift;
* ``loss`` (c): the mean cross-entropy over the N positions;
* ``gradient`` (d): ``dlogits[i, t_i] = (p - 1) / N``.

Every part is its own variant (:func:`question_bank.generate.generate_item`
makes all four from one seed, with ids ending ``-a`` to ``-d``) with its own
mistakes, choices and tolerance; the scenario text is the same in each. A
part that reads an earlier one carries a ``carry`` record (see
:mod:`question_bank.answers`, :func:`carried_value`): how its key follows from
the earlier part's answer, so a judge can say when a wrong answer is right
given the student's own wrong earlier answer. The seed's generator draws the
scenario (kept only when every part has enough clearly different mistakes),
the part a seed asks by itself, and a root; each part draws its choices from
a generator of its own, seeded by the root and the part's index, so a variant
builds one part only and is the same part whichever part its seed asks.

Why one module of this size: a family is one module the registry loads, and its four parts share one scenario, its mistakes and the carried-error readings that tie each part to the one before.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from question_bank import formatting as fmt
from question_bank.choice_balance import MAX_POOL
from question_bank.choices import N_DISTRACTORS, at_common_width, can_pick_distractors, known_mistakes, numeric_options
from question_bank.errors import GenerationError, Redraw
from question_bank.families._common import check_close, check_equal, float_answer, int_answer
from question_bank.families._hub_pool import POOL_TRIES, linked_pool, pool_excess, random_pool
from question_bank.mistakes import (
    register_double_mistakes,
    register_mistakes,
    register_sign_slips,
    wrong_options,
)
from question_bank.registry import Family, register_family
from question_bank.variant import Draft, Option
from solutions import cross_entropy_loss, lm_head, softmax

#: The parts in the order they build on each other, with the letter each is printed under.
PARTS = ("logit", "probability", "loss", "gradient")
LABELS = dict(zip(PARTS, "abcd"))

FAMILY = "logits-to-gradient"


def _softmax(row: list[float], j: int, base: float = math.e) -> float:
    """``base**row[j] / sum base**row``, shifted by the row's maximum so nothing overflows."""
    top = max(row)
    powers = [base ** (z - top) for z in row]
    return powers[j] / math.fsum(powers)


def _shifted_power(row: list[float], j: int, base: float = math.e) -> float:
    """``base**(row[j] - max(row))``: the softmax's numerator after the max shift, never divided by the sum."""
    return base ** (row[j] - max(row))


def _column_softmax(f: dict[str, Any], n: int) -> float:
    """Position n's target probability normalised over the positions (axis 0) instead of the vocabulary."""
    column = [row[f["targets"][n]] for row in f["z"]]
    return _softmax(column, n)


def _mean(values: list[float]) -> float:
    return math.fsum(values) / len(values)


def _whole_array(rows: list[list[float]], n: int, j: int) -> float:
    """``e^rows[n][j]`` over the sum of ``e`` to every entry of every row: one normalisation for the whole array."""
    top = max(max(row) for row in rows)
    return math.exp(rows[n][j] - top) / math.fsum(math.exp(z - top) for row in rows for z in row)


def _loss(rows: list[list[float]], targets: list[int]) -> float:
    """Mean of ``-ln softmax(row)[target]`` over the rows."""
    return _mean([-math.log(_softmax(row, t)) for row, t in zip(rows, targets)])


def _column_indexed_loss(rows: list[list[float]], targets: list[int]) -> float:
    """Mean of ``-ln probs[:, targets]``: every position scored on every position's target (an N x N block)."""
    return _mean([-math.log(_softmax(row, t)) for row in rows for t in targets])


#: Every wrong value of every part: (name, misconception, formula, compute, feedback).
MISTAKES = register_mistakes(FAMILY, [
    # (a) the logit z[i, t] = h_i . W[:, t] + b[t]
    ("logit/bias-dropped", "logit-bias-dropped", "h_i @ W_head[:, t]",
     lambda f: f["z_no_bias"][f["i"]][f["t"]],
     "That leaves out the bias: z = h @ W_head + b_head, and b_head[{t}] = {b_t}."),
    ("logit/bias-twice", "factor-counted-twice", "h_i @ W_head[:, t] + 2 b[t]",
     lambda f: f["z"][f["i"]][f["t"]] + f["b_t"],
     "That adds the bias b_head[{t}] = {b_t} twice."),
    ("logit/neighbour-state", "off-by-one-alignment", "h_(i±1) @ W_head[:, t] + b[t]",
     lambda f: f["z"][f["neighbour"]][f["t"]],
     "That uses the hidden state of position {neighbour}; position {i}'s logits come from h_{i}."),
    ("logit/other-token", "target-column-indexing", "z[i, t_other]",
     lambda f: f["z"][f["i"]][f["other"]],
     "That is the logit of token {other}; the target of position {i} is token {t}."),
    ("logit/negated", "log-sign", "-(h_i @ W_head[:, t] + b[t])",
     lambda f: -f["z"][f["i"]][f["t"]],
     "The sign is flipped: a logit is h @ W_head + b_head as it is."),
    # (b) p = softmax(z_i)[t]
    ("probability/wrong-axis", "softmax-wrong-axis", "softmax over the positions (axis 0)",
     lambda f: _column_softmax(f, f["i"]),
     "That normalises over the {N} positions (axis 0); softmax runs over the {V} tokens of one position."),
    ("probability/whole-array", "softmax-whole-array", "e^z[i,t] / sum over all N*V logits",
     lambda f: math.exp(f["z"][f["i"]][f["t"]] - f["top"]) / math.fsum(math.exp(z - f["top"]) for row in f["z"] for z in row),
     "That normalises over every logit of every position; softmax runs over one position's {V} tokens."),
    ("probability/base-2", "wrong-log-base", "2^z_t / sum_k 2^z_k",
     lambda f: _softmax(f["z"][f["i"]], f["t"], base=2.0),
     "Softmax exponentiates with base e, not 2."),
    # Base 10 sharpens the softmax where base 2 flattens it: with the target's logit the row's largest
    # (a probability near 1), every other mistake lay below the key and the largest player found it
    # 37% of the time (expected share, seed 99, 300 variants).
    ("probability/base-10", "wrong-log-base", "10^z_t / sum_k 10^z_k",
     lambda f: _softmax(f["z"][f["i"]], f["t"], base=10.0),
     "Softmax exponentiates with base e, not 10."),
    # The shifted exponential without the sum lies above the key (at 1 where the target's logit is
    # the row's largest), where few other mistakes do.
    ("probability/unnormalised", "softmax-not-normalised", "e^(z_t - max_k z_k)",
     lambda f: _shifted_power(f["z"][f["i"]], f["t"]),
     "That shifts by the row's maximum but never divides by the sum of the shifted exponentials."),
    # Dividing by the mean of the exponentials is V times the key: above it even where the key is near 1
    # and no value at most 1 is clearly apart from it.
    ("probability/mean-normalised", "softmax-not-normalised", "e^z_t / mean_k e^z_k",
     lambda f: f["V"] * f["p"],
     "That divides by the mean of the exponentials; softmax divides by their sum, so the probabilities "
     "sum to 1 (these sum to V = {V})."),
    ("probability/sigmoid", "sigmoid-for-softmax", "sigmoid(z[i, t])",
     lambda f: 1 / (1 + math.exp(-f["z"][f["i"]][f["t"]])),
     "That scores the target on its own with a sigmoid; softmax normalises over all {V} logits of the position."),
    ("probability/bias-dropped", "logit-bias-dropped", "softmax(h_i @ W_head)[t]",
     lambda f: _softmax(f["z_no_bias"][f["i"]], f["t"]),
     "That leaves the bias out of the logits: z = h @ W_head + b_head."),
    ("probability/neighbour-row", "off-by-one-alignment", "softmax(z[i±1])[t]",
     lambda f: _softmax(f["z"][f["neighbour"]], f["t"]),
     "That is the softmax of position {neighbour}'s logits; position {i}'s probabilities come from its own row z[{i}]."),
    ("probability/other-token", "target-column-indexing", "softmax(z[i])[t_other]",
     lambda f: _softmax(f["z"][f["i"]], f["other"]),
     "That is the probability of token {other}; the target of position {i} is token {t}."),
    # (c) L = mean over n of -ln p_n
    ("loss/no-1-over-n", "missing-1-over-n", "sum over n of -ln p_n",
     lambda f: f["loss"] * f["N"],
     "That is the sum over the N = {N} positions; the loss is their mean."),
    ("loss/log-base-2", "wrong-log-base", "mean of -log2 p_n",
     lambda f: f["loss"] / math.log(2.0),
     "Cross-entropy uses the natural log (nats), not log base 2."),
    ("loss/sign", "log-sign", "mean of ln p_n",
     lambda f: -f["loss"],
     "The sign is flipped: the loss is minus the mean log-probability, so it is positive."),
    ("loss/wrong-axis", "softmax-wrong-axis", "mean of -ln of the softmax over positions",
     lambda f: _mean([-math.log(_column_softmax(f, n)) for n in range(f["N"])]),
     "That takes the softmax over the positions (axis 0); each position's softmax runs over its {V} tokens."),
    ("loss/over-vocab", "divide-by-vocab", "sum over n of -ln p_n, divided by V",
     lambda f: f["loss"] * f["N"] / f["V"],
     "That divides by V = {V}; the mean runs over the N = {N} positions."),
    ("loss/log-base-10", "wrong-log-base", "mean of -log10 p_n",
     lambda f: f["loss"] / math.log(10.0),
     "Cross-entropy uses the natural log (nats), not log base 10."),
    ("loss/column-indexing", "target-column-indexing", "mean of -ln probs[:, targets] (an N x N block)",
     lambda f: _column_indexed_loss(f["z"], f["targets"]),
     "probs[:, targets] scores every position on every position's target (an N x N block); "
     "each position n is scored on its own target only, probs[arange(N), targets]."),
    ("loss/bias-dropped", "logit-bias-dropped", "the mean cross-entropy of h @ W_head",
     lambda f: _loss(f["z_no_bias"], f["targets"]),
     "That leaves the bias out of the logits: z = h @ W_head + b_head."),
    ("loss/bias-twice", "factor-counted-twice", "the mean cross-entropy of h @ W_head + 2 b_head",
     lambda f: _loss([[z + b for z, b in zip(row, f["b_head"])] for row in f["z"]], f["targets"]),
     "That adds the bias b_head twice to the logits."),
    ("loss/shifted-targets", "off-by-one-alignment", "mean over n < N-1 of -ln softmax(z[n])[t_(n+1)]",
     lambda f: _loss(f["z"][:-1], f["targets"][1:]),
     "That scores position n on the target of position n + 1; each position's target is already the next token."),
    ("loss/base-2-softmax", "wrong-log-base", "mean of -ln of the base-2 softmax",
     lambda f: _mean([-math.log(_softmax(row, t, base=2.0)) for row, t in zip(f["z"], f["targets"])]),
     "Softmax exponentiates with base e, not 2."),
    ("loss/whole-array", "softmax-whole-array", "mean of -ln e^z[n,t_n] / sum over all N*V logits",
     lambda f: _mean([-math.log(_whole_array(f["z"], n, t)) for n, t in enumerate(f["targets"])]),
     "That normalises over every logit of every position; each position's softmax runs over its {V} tokens."),
    # (d) dlogits[i, t] = (p - 1) / N
    ("gradient/no-1-over-n", "missing-1-over-n", "(p - 1)",
     lambda f: f["p"] - 1,
     "That leaves out the 1/N = 1/{N} of the mean."),
    ("gradient/no-onehot", "softmax-without-onehot", "p / N",
     lambda f: f["p"] / f["N"],
     "That forgets to subtract the one-hot: the target entry is (p - 1)/N."),
    ("gradient/negated", "gradient-sign", "(1 - p) / N",
     lambda f: (1 - f["p"]) / f["N"],
     "That is onehot minus softmax, the negative of the gradient."),
    ("gradient/over-vocab", "divide-by-vocab", "(p - 1) / V",
     lambda f: (f["p"] - 1) / f["V"],
     "That divides by V = {V}; the mean runs over the N = {N} positions."),
    ("gradient/wrong-axis", "softmax-wrong-axis", "(softmax over positions - 1) / N",
     lambda f: (_column_softmax(f, f["i"]) - 1) / f["N"],
     "That takes the softmax over the positions (axis 0); it runs over the {V} tokens of position {i}."),
    ("gradient/logit-for-probability", "logits-not-probabilities", "(z[i, t] - 1) / N",
     lambda f: (f["z"][f["i"]][f["t"]] - 1) / f["N"],
     "That uses the raw logit z[{i}, {t}] where the softmax probability belongs."),
    ("gradient/whole-array", "softmax-whole-array", "(e^z[i,t] / sum over all N*V logits - 1) / N",
     lambda f: (_whole_array(f["z"], f["i"], f["t"]) - 1) / f["N"],
     "That normalises over every logit of every position; the softmax runs over the {V} tokens of position {i}."),
    ("gradient/bias-dropped", "logit-bias-dropped", "(softmax(h_i @ W_head)[t] - 1) / N",
     lambda f: (_softmax(f["z_no_bias"][f["i"]], f["t"]) - 1) / f["N"],
     "That leaves the bias out of the logits: z = h @ W_head + b_head."),
    ("gradient/log-probability", "log-for-probability", "(ln p - 1) / N",
     lambda f: (math.log(f["p"]) - 1) / f["N"],
     "That uses the log-probability ln p, which the loss computes, where the softmax probability p belongs."),
    ("gradient/neighbour-row", "off-by-one-alignment", "(softmax(z[i±1])[t] - 1) / N",
     lambda f: (_softmax(f["z"][f["neighbour"]], f["t"]) - 1) / f["N"],
     "That takes the softmax of position {neighbour}'s logits; the entry at position {i} uses its own row."),
    ("gradient/mean-over-all-entries", "divide-by-vocab", "(p - 1) / (N V)",
     lambda f: (f["p"] - 1) / (f["N"] * f["V"]),
     "That divides by N V = {N} * {V}, as if the loss averaged every logit; the mean runs over the N = {N} positions."),
])
#: Sign slips on wrong values too, so an x / -x pair does not surround only the key.
register_sign_slips(FAMILY, MISTAKES, "logit/negated",
                    ["logit/bias-dropped", "logit/neighbour-state", "logit/other-token", "logit/bias-twice"])
register_sign_slips(FAMILY, MISTAKES, "loss/sign", ["loss/no-1-over-n", "loss/log-base-2"])
register_sign_slips(FAMILY, MISTAKES, "gradient/negated",
                    ["gradient/no-1-over-n", "gradient/over-vocab", "gradient/wrong-axis", "gradient/no-onehot"])
#: Two mistakes at once, so the key is not the one choice every distractor is one slip from.
register_double_mistakes(FAMILY, MISTAKES, [
    ("logit/bias-dropped", "logit/neighbour-state", "h_(i±1) @ W_head[:, t]",
     lambda f: f["z_no_bias"][f["neighbour"]][f["t"]]),
    # the logit part's other pairs: a single and its double share a mistake, so the key is not the
    # one choice every other is one slip from (the mistake hub found it 20 times in 40, seed 99)
    ("logit/other-token", "logit/bias-dropped", "h_i @ W_head[:, t_other]",
     lambda f: f["z_no_bias"][f["i"]][f["other"]]),
    ("logit/other-token", "logit/neighbour-state", "z[i±1, t_other]",
     lambda f: f["z"][f["neighbour"]][f["other"]]),
    ("logit/other-token", "logit/bias-twice", "h_i @ W_head[:, t_other] + 2 b[t_other]",
     lambda f: f["z"][f["i"]][f["other"]] + f["b_head"][f["other"]]),
    ("logit/neighbour-state", "logit/bias-twice", "h_(i±1) @ W_head[:, t] + 2 b[t]",
     lambda f: f["z"][f["neighbour"]][f["t"]] + f["b_t"]),
    ("probability/bias-dropped", "probability/base-2", "2^(hW)_t / sum_k 2^(hW)_k",
     lambda f: _softmax(f["z_no_bias"][f["i"]], f["t"], base=2.0)),
    ("probability/wrong-axis", "probability/base-2", "base-2 softmax over the positions",
     lambda f: _softmax([row[f["t"]] for row in f["z"]], f["i"], base=2.0)),
    ("loss/no-1-over-n", "loss/log-base-2", "sum over n of -log2 p_n",
     lambda f: f["loss"] * f["N"] / math.log(2.0)),
    ("gradient/no-1-over-n", "gradient/no-onehot", "p",
     lambda f: f["p"]),
    ("gradient/no-1-over-n", "gradient/wrong-axis", "softmax over positions - 1",
     lambda f: _column_softmax(f, f["i"]) - 1),
    ("gradient/no-1-over-n", "gradient/whole-array", "e^z[i,t] / sum over all N*V logits - 1",
     lambda f: _whole_array(f["z"], f["i"], f["t"]) - 1),
    ("gradient/logit-for-probability", "gradient/no-1-over-n", "z[i, t] - 1",
     lambda f: f["z"][f["i"]][f["t"]] - 1),
    ("gradient/log-probability", "gradient/no-1-over-n", "ln p - 1",
     lambda f: math.log(f["p"]) - 1),
    ("probability/bias-dropped", "probability/base-10", "10^(hW)_t / sum_k 10^(hW)_k",
     lambda f: _softmax(f["z_no_bias"][f["i"]], f["t"], base=10.0)),
    ("probability/wrong-axis", "probability/base-10", "base-10 softmax over the positions",
     lambda f: _softmax([row[f["t"]] for row in f["z"]], f["i"], base=10.0)),
    ("probability/other-token", "probability/base-10", "10^z_other / sum_k 10^z_k",
     lambda f: _softmax(f["z"][f["i"]], f["other"], base=10.0)),
    ("probability/neighbour-row", "probability/base-10", "base-10 softmax(z[i±1])[t]",
     lambda f: _softmax(f["z"][f["neighbour"]], f["t"], base=10.0)),
    ("probability/unnormalised", "probability/base-2", "2^(z_t - max_k z_k)",
     lambda f: _shifted_power(f["z"][f["i"]], f["t"], base=2.0)),
    ("probability/unnormalised", "probability/bias-dropped", "e^((hW)_t - max_k (hW)_k)",
     lambda f: _shifted_power(f["z_no_bias"][f["i"]], f["t"])),
    ("probability/unnormalised", "probability/other-token", "e^(z_other - max_k z_k)",
     lambda f: _shifted_power(f["z"][f["i"]], f["other"])),
    ("probability/unnormalised", "probability/neighbour-row", "e^(z[i±1, t] - max_k z[i±1, k])",
     lambda f: _shifted_power(f["z"][f["neighbour"]], f["t"])),
    ("probability/mean-normalised", "probability/base-2", "2^z_t / mean_k 2^z_k",
     lambda f: f["V"] * _softmax(f["z"][f["i"]], f["t"], base=2.0)),
    ("probability/mean-normalised", "probability/bias-dropped", "e^(hW)_t / mean_k e^(hW)_k",
     lambda f: f["V"] * _softmax(f["z_no_bias"][f["i"]], f["t"])),
    ("probability/mean-normalised", "probability/other-token", "e^z_other / mean_k e^z_k",
     lambda f: f["V"] * _softmax(f["z"][f["i"]], f["other"])),
    ("probability/mean-normalised", "probability/neighbour-row", "e^z[i±1, t] / mean_k e^z[i±1, k]",
     lambda f: f["V"] * _softmax(f["z"][f["neighbour"]], f["t"])),
    ("probability/neighbour-row", "probability/bias-dropped", "softmax(h_(i±1) @ W_head)[t]",
     lambda f: _softmax(f["z_no_bias"][f["neighbour"]], f["t"])),
    # the probability part's other pairs (the mistake hub found its key 18 times in 40, seed 99)
    ("probability/other-token", "probability/bias-dropped", "softmax(h_i @ W_head)[t_other]",
     lambda f: _softmax(f["z_no_bias"][f["i"]], f["other"])),
    ("probability/other-token", "probability/base-2", "2^z_other / sum_k 2^z_k",
     lambda f: _softmax(f["z"][f["i"]], f["other"], base=2.0)),
    ("probability/neighbour-row", "probability/base-2", "base-2 softmax(z[i±1])[t]",
     lambda f: _softmax(f["z"][f["neighbour"]], f["t"], base=2.0)),
    ("probability/other-token", "probability/neighbour-row", "softmax(z[i±1])[t_other]",
     lambda f: _softmax(f["z"][f["neighbour"]], f["other"])),
    ("probability/sigmoid", "probability/bias-dropped", "sigmoid(h_i @ W_head[:, t])",
     lambda f: 1 / (1 + math.exp(-f["z_no_bias"][f["i"]][f["t"]]))),
    ("probability/whole-array", "probability/bias-dropped", "e^(hW)[i,t] / sum over all N*V of e^(hW)",
     lambda f: _whole_array(f["z_no_bias"], f["i"], f["t"])),
    ("loss/log-base-10", "loss/no-1-over-n", "sum over n of -log10 p_n",
     lambda f: f["loss"] * f["N"] / math.log(10.0)),
    ("loss/bias-dropped", "loss/no-1-over-n", "sum over n of -ln p_n from h @ W_head",
     lambda f: _loss(f["z_no_bias"], f["targets"]) * f["N"]),
])

#: The loss part's slips of the scores (the logits, the softmax, which entries are scored) with a log in
#: another base or a sum for the mean: each is that slip's loss scaled, by 1/ln 2 or 1/ln 10 (a log's base)
#: or by N (a sum of N per-position terms). With the three doubles above only, the key was one slip from
#: more choices than any other and the mistake hub found it 34% of the time (expected share, seed 0,
#: 600 variants).
_LOSS_SCALES = {"loss/log-base-2": ("in bits", lambda f: 1 / math.log(2.0)),
                "loss/log-base-10": ("in base 10", lambda f: 1 / math.log(10.0)),
                "loss/no-1-over-n": ("summed over the positions", lambda f: f["N"])}
_LOSS_SCORES = ("loss/wrong-axis", "loss/bias-dropped", "loss/bias-twice", "loss/base-2-softmax",
                "loss/whole-array", "loss/column-indexing", "loss/shifted-targets", "loss/over-vocab")
register_double_mistakes(FAMILY, MISTAKES, [
    (score, scale, f"{MISTAKES[score].formula}, {words}",
     (lambda slip, factor: lambda f: slip(f) * factor(f))(MISTAKES[score].compute, factor))
    for score in _LOSS_SCORES
    for scale, (words, factor) in _LOSS_SCALES.items()
    # a sum of the N x N block or of N - 1 shifted terms is not N times their mean; a sum divided by V
    # is already summed
    if not (scale == "loss/no-1-over-n" and score in ("loss/column-indexing", "loss/shifted-targets", "loss/over-vocab"))
    and f"{score}+{scale.rsplit('/', 1)[-1]}" not in MISTAKES
    and f"{scale}+{score.rsplit('/', 1)[-1]}" not in MISTAKES
])

#: Three slips at once on the logit: a double with its sign flipped too, one mistake from the double
#: and from two sign-slipped singles, so a set of them has its own centre.
register_double_mistakes(FAMILY, MISTAKES, [
    ("logit/bias-dropped+neighbour-state", "logit/negated", "-(h_(i±1) @ W_head[:, t])",
     lambda f: -f["z_no_bias"][f["neighbour"]][f["t"]]),
    ("logit/other-token+bias-dropped", "logit/negated", "-(h_i @ W_head[:, t_other])",
     lambda f: -f["z_no_bias"][f["i"]][f["other"]]),
    ("logit/other-token+neighbour-state", "logit/negated", "-z[i±1, t_other]",
     lambda f: -f["z"][f["neighbour"]][f["other"]]),
])

_NAMES = {part: [name for name in MISTAKES if name.startswith(part + "/")] for part in PARTS}


#: The parts whose choices print at one length (:func:`question_bank.choices.at_common_width`): their
#: values are fractions whose sign and leading zeros otherwise show in the length (at seed 99 the
#: gradient's key, a small negative number, was the longest choice 87 times in 237).
COMMON_WIDTH_PARTS = ("probability", "loss", "gradient")


#: Choice draws a part tries before giving up (a draw fails only when its shuffled pool is cut badly).
CHOICE_DRAWS = 20


def _value_places(value: float, options: list[Option]) -> set[int]:
    """The key's ranks among the values (how many shown choices lie below it) that some choice of
    :data:`N_DISTRACTORS` of ``options`` gives, whether or not they are apart from each other."""
    below = sum(float(o.value) < value for o in options)
    above = sum(float(o.value) > value for o in options)
    return {r for r in range(N_DISTRACTORS + 1) if r <= below and N_DISTRACTORS - r <= above}


def _choice_pool(rng: np.random.Generator, value: Any, text: str, wrong: list[Option]) -> list[Option]:
    """The usable ``wrong`` options to hand the draw: of :data:`POOL_TRIES` random cuts, one that keeps
    every rank of the key among the values the whole list allows, the least cued of those.

    The least cued cut alone (:func:`question_bank.families._hub_pool.least_cued_pool`) once measured
    each order against the places that cut reaches, so a cut with no mistake below a gradient entry,
    where the key can only be the smallest, scored as well as one where it can be anywhere: the
    gradient's key was the smallest choice 80 times in 240 (seed 0, 1,000 variants). Judged against
    chance it still missed a rank in 5 of 120 gradient parts (seed 7); here none may.
    """
    usable = [o for o in known_mistakes(value, wrong) if o.text != text]
    if len(usable) <= MAX_POOL:
        return usable
    places = _value_places(float(value), usable)
    best: tuple[int, float, list[Option]] | None = None
    for t in range(POOL_TRIES):
        # every other cut the doubles with the singles they share: sets that take the hub off the key
        pool = (linked_pool if t % 2 else random_pool)(rng, usable)
        missing = len(places - _value_places(float(value), pool))
        if best is not None and missing > best[0]:
            continue
        excess = pool_excess(text, pool, ways=wrong)
        if best is None or (missing, excess) < best[:2]:
            best = (missing, excess, pool)
    assert best is not None
    return best[2]


def _part_options(root: int, part: str, value: Any, text: str, wrong: list[Option], note: str) -> list[Option]:
    """A part's choices, drawn from its own generator (seeded by the scenario's root and the part).

    The options come shuffled: :func:`question_bank.generate.assemble` shuffles every part of one
    seed with the same permutation, which alone would put every part's key under the same letter.
    """
    index = PARTS.index(part)
    for attempt in range(CHOICE_DRAWS):
        rng = np.random.default_rng([root, index, attempt])
        try:
            options = numeric_options(rng, value, text, _choice_pool(rng, value, text, wrong), note, ways=wrong)
        except Redraw:
            continue
        return [options[int(k)] for k in rng.permutation(len(options))]
    raise GenerationError(f"part {part!r} found no {N_DISTRACTORS} clearly different distractors in "
                          f"{CHOICE_DRAWS} draws, though its scenario was checked to have them")


@register_family
class LogitsToGradient(Family):
    name = FAMILY
    version = 5  # v5: every other pool cut is the doubles with the singles they share (the probability's mistake hub 0.275 -> 0.269 expected, seed 12345); v4: the probability gets the base-10 softmax, the unnormalised shifted exponential and the mean for the sum (values above a key near 1), the loss every slip of its scores in bits, base 10 and summed, so neither the largest value nor the mistake hub finds the key, and a pool cut that keeps every value rank the mistakes allow; v3: two- and three-mistake logits and probabilities that share a mistake with a single (the mistake hub); v2: the probability, loss and gradient parts print their choices at one length
    title = "From logits to the gradient"
    summary = "A multi-part item: one LM-head scenario from a logit to softmax, loss and a dlogits entry."
    tags = ("lm-head", "softmax", "cross-entropy", "gradient", "multi-part")
    subquestion_key = "part"
    subquestion_values = PARTS
    parts = PARTS

    def build(self, rng: np.random.Generator) -> Draft:
        return self.build_part(rng, None)

    def build_part(self, rng: np.random.Generator, part: str | None) -> Draft:
        """One part of the scenario drawn from ``rng``: ``part``, or a part drawn at random when ``None``.

        ``rng`` draws the scenario, the part a seed asks by itself and a root for the parts; each
        part draws its choices from its own generator, seeded by that root and its index, so one
        part is built without the others and is the same part whichever part the seed asks. A
        scenario is kept only when every part has enough clearly different mistakes, so a
        :class:`Redraw` redraws the scenario for all parts alike.
        """
        scenario = self._scenario(rng)
        drawn = PARTS[int(rng.integers(len(PARTS)))]
        root = int(rng.integers(2**62))
        name = part or drawn
        return self._part(root, {"part": name, **scenario})

    def _scenario(self, rng: np.random.Generator) -> dict[str, Any]:
        """The scenario's tables, drawn from ``rng``; a :class:`Redraw` when any part could not be asked."""
        N = int(rng.integers(2, 4))
        V = int(rng.integers(3, 5))
        hidden = rng.integers(-2, 3, size=(N, 2))                      # (N, C) with C = 2
        W_head = rng.integers(-2, 3, size=(2, V))                      # (C, V)
        b_head = rng.integers(-1, 3, size=V)                           # (V,)
        targets = rng.integers(0, V, size=N)                           # (N,)
        i = int(rng.integers(N))
        if not b_head[targets[i]]:
            raise Redraw("a zero bias at the asked logit would make the bias mistakes moot")
        scenario = {"hidden": hidden.tolist(), "W_head": W_head.tolist(), "b_head": b_head.tolist(),
                    "targets": targets.tolist(), "position": i}
        if not self._usable(scenario):
            raise Redraw("a part has fewer than three clearly different mistakes to offer")
        return scenario

    def _keys(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """Every part's key, by the course's reference solutions."""
        i = parameters["position"]
        t = parameters["targets"][i]
        logits = lm_head(np.asarray(parameters["hidden"], dtype=np.float64)[None],
                         np.asarray(parameters["W_head"], dtype=np.float64),
                         np.asarray(parameters["b_head"], dtype=np.float64))          # (1, N, V)
        loss, dlogits = cross_entropy_loss(logits, np.asarray(parameters["targets"])[None])
        return {"logit": int(round(float(logits[0, i, t]))), "probability": float(softmax(logits[0, i])[t]),
                "loss": float(loss), "gradient": float(dlogits[0, i, t])}

    @staticmethod
    def _render(part: str) -> Callable[[Any], str]:
        return fmt.integer if part == "logit" else fmt.num_tex

    def _usable(self, parameters: dict[str, Any]) -> bool:
        """Whether every part has enough clearly different mistakes to draw its choices from."""
        facts, keys = self.facts(parameters), self._keys(parameters)
        for part in PARTS:
            render = self._render(part)
            wrong = wrong_options(MISTAKES, _NAMES[part], facts, render)
            if not can_pick_distractors(keys[part], render(keys[part]), wrong):
                return False
        return True

    def _part(self, root: int, parameters: dict[str, Any]) -> Draft:
        facts = self.facts(parameters)
        part, i, t, N = parameters["part"], facts["i"], facts["t"], facts["N"]
        keys = self._keys(parameters)
        value: Any = keys[part]
        render = self._render(part)
        wrong = wrong_options(MISTAKES, _NAMES[part], facts, render)
        text = render(value)
        if part in COMMON_WIDTH_PARTS:
            text, wrong = at_common_width(value, wrong) or (text, wrong)
        z_row = ", ".join(fmt.exact(z) for z in facts["z"][i])
        if part == "logit":
            answer = int_answer(value)
            ask = f"What is the logit $z_{{{i},{t}}}$ of position {i}'s target token {t}?"
            note = "Correct: h @ W_head + b_head at the target token."
            solution = (f"$z_{{{i},{t}}} = h_{i} \\cdot W_{{\\text{{head}}}}[:, {t}] + b_{{{t}}} = "
                        f"{fmt.exact(facts['z_no_bias'][i][t])} + {facts['b_t']} = {value}$.")
        elif part == "probability":
            answer = float_answer(value)
            ask = (f"What probability does the softmax of position {i}'s logits give its target token {t}? "
                   f"(Subtract the row's maximum before exponentiating.)")
            note = "Correct: softmax over the position's tokens, shifted by its maximum."
            top = max(facts["z"][i])
            solution = (f"Position {i}'s logits are $z_{i} = ({z_row})$, maximum {fmt.exact(top)}. "
                        f"$p = e^{{{fmt.exact(facts['z'][i][t] - top)}}} / \\sum_k e^{{z_{{{i},k}} - {fmt.exact(top)}}} "
                        f"= {fmt.num(value)}$.")
        elif part == "loss":
            # the worked solution prints each term rounded; their sum over N carries that rounding
            answer = float_answer(value, unit="nats",
                                  printed_steps=[-math.log(q) / N for q in facts["target_probabilities"]])
            ask = f"What is the loss, the mean cross-entropy over the N = {N} positions (natural log)?"
            note = "Correct: the mean of -ln p over the positions' targets."
            terms = " + ".join(fmt.num(-math.log(p)) for p in facts["target_probabilities"])
            solution = (f"Each position's target probability is its softmax at the target: "
                        f"{', '.join(fmt.num(p) for p in facts['target_probabilities'])}. "
                        f"$L = ({terms}) / {N} = {fmt.num(value)}$ nats.")
        else:
            answer = float_answer(value)
            ask = (f"What is $\\partial L / \\partial z_{{{i},{t}}}$, the entry of dlogits at position {i} "
                   f"and its target token {t}?")
            note = "Correct: softmax minus one-hot, divided by N."
            solution = (f"At the target the one-hot entry is 1, so $\\partial L/\\partial z_{{{i},{t}}} = "
                        f"(p - 1)/N = ({fmt.num(keys['probability'])} - 1)/{N} = {fmt.num(value)}$.")
        options = _part_options(root, part, answer.value, text, wrong, note)
        label = LABELS[part]
        stem = f"{self.scenario_text(parameters)}\n\n**Part ({label})** of {len(PARTS)}. {ask}"
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong, part=self._part_record(part, facts, answer.rtol, answer.atol))

    def scenario_text(self, parameters: dict[str, Any]) -> str:
        """The scenario every part prints: sizes, the tables of h, W_head, b_head and the targets."""
        hidden, W_head, b_head = parameters["hidden"], parameters["W_head"], parameters["b_head"]
        N, V = len(hidden), len(b_head)
        h_table = fmt.table(["position", "$h_{\\cdot,0}$", "$h_{\\cdot,1}$", "target"],
                            [[n, *row, parameters["targets"][n]] for n, row in enumerate(hidden)])
        w_table = fmt.table(["", *[f"token {v}" for v in range(V)]],
                            [[f"W_head row {r}", *W_head[r]] for r in range(2)] + [["b_head", *b_head]])
        return (f"An LM head maps the hidden states $h$ (width C = 2) of N = {N} positions to logits "
                f"`z = h @ W_head + b_head` over a vocabulary of V = {V} tokens; the loss is the mean "
                f"softmax cross-entropy of the positions' targets. The parts use this one scenario and "
                f"build on each other.\n\n{h_table}\n\n{w_table}")

    def _part_record(self, part: str, facts: dict[str, Any], rtol: float | None,
                     atol: float | None) -> dict[str, Any]:
        """Where the part sits in its item, and how its key follows from the earlier part it reads."""
        index = PARTS.index(part)
        record: dict[str, Any] = {"index": index, "count": len(PARTS), "label": LABELS[part], "name": part,
                                  "carry": None}
        i, t, N = facts["i"], facts["t"], facts["N"]
        if part == "probability":
            # the student's logit replaces z[i, t] in an otherwise right row
            record["carry"] = {"from": 0, "op": "softmax_with", "row": facts["z"][i], "index": t}
        elif part == "loss":
            # the student's p replaces position i's term; the other positions' terms are the key's
            rest = math.fsum(-math.log(p) for n, p in enumerate(facts["target_probabilities"]) if n != i)
            record["carry"] = {"from": 1, "op": "affine_log", "offset": rest / N, "scale": -1 / N}
        elif part == "gradient":
            record["carry"] = {"from": 1, "op": "affine", "offset": -1 / N, "scale": 1 / N}
        return record

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """Logits with and without the bias, the asked position and token, target probabilities and the loss."""
        hidden, W_head, b_head = parameters["hidden"], parameters["W_head"], parameters["b_head"]
        targets, i = parameters["targets"], parameters["position"]
        N, V = len(hidden), len(b_head)
        z_no_bias = [[int(sum(h * W_head[r][v] for r, h in enumerate(row))) for v in range(V)] for row in hidden]
        z = [[a + b for a, b in zip(row, b_head)] for row in z_no_bias]
        t = int(targets[i])
        target_probabilities = [_softmax(z[n], targets[n]) for n in range(N)]
        return {**parameters, "N": N, "V": V, "i": i, "t": t, "b_t": b_head[t], "z": z, "z_no_bias": z_no_bias,
                "neighbour": i - 1 if i > 0 else i + 1, "other": (t + 1) % V,
                "top": max(max(row) for row in z), "target_probabilities": target_probabilities,
                "p": target_probabilities[i], "loss": _mean([-math.log(p) for p in target_probabilities])}

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Plain Python from the printed tables: loops for the logits, fsum softmax, central differences
        of the loss for the gradient (no formula for it)."""
        p = variant["parameters"]
        hidden, W_head, b_head, targets, i = p["hidden"], p["W_head"], p["b_head"], p["targets"], p["position"]
        logits = [[b_head[v] + sum(row[r] * W_head[r][v] for r in range(len(row))) for v in range(len(b_head))]
                  for row in hidden]
        t = targets[i]
        stored = variant["answer"]["value"]
        if p["part"] == "logit":
            return check_equal(stored, logits[i][t])

        def loss(rows: list[list[float]]) -> float:
            terms = [math.log(math.fsum(math.exp(z - max(row)) for z in row)) + max(row) - row[targets[n]]
                     for n, row in enumerate(rows)]
            return math.fsum(terms) / len(terms)

        if p["part"] == "probability":
            return check_close(stored, math.exp(logits[i][t]) / math.fsum(math.exp(z) for z in logits[i]))
        if p["part"] == "loss":
            return check_close(stored, loss([[float(z) for z in row] for row in logits]))
        eps = 1e-6
        plus = [[float(z) + (eps if (n, v) == (i, t) else 0.0) for v, z in enumerate(row)] for n, row in enumerate(logits)]
        minus = [[float(z) - (eps if (n, v) == (i, t) else 0.0) for v, z in enumerate(row)] for n, row in enumerate(logits)]
        estimate = (loss(plus) - loss(minus)) / (2 * eps)
        return [] if abs(stored - estimate) <= 1e-6 else [f"answer is {stored!r}, central differences give {estimate!r}"]

"""Next-token cross-entropy of a small logits table, targets shifted by one."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import at_common_width
from question_bank.families._hub_pool import least_cued_options
from question_bank.cues import just_above
from question_bank.families._common import LN2, check_close, float_answer, plain_mean_cross_entropy
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import cross_entropy_loss, softmax


def _mean_ce(logits: np.ndarray, targets: np.ndarray) -> float:
    """Mean cross-entropy of (T, V) logits against (T,) targets, by the reference."""
    loss, _ = cross_entropy_loss(logits[None], targets[None])
    return loss


def _target_probs(logits: list[list[int]], tokens: list[int]) -> np.ndarray:
    """Probability each scored position gives its next token."""
    z, x = np.asarray(logits, dtype=np.float64), np.asarray(tokens)
    return softmax(z[:-1])[np.arange(len(x) - 1), x[1:]]


#: Every wrong value this family knows; ``z`` and ``x`` are the logits and tokens as arrays.
MISTAKES = register_mistakes("shifted-cross-entropy", [
    ("unshifted", "off-by-one-alignment", "mean CE of z[t] against x[t]",
     lambda f: _mean_ce(f["z"][:-1], f["x"][:-1]),
     "That scores the logits at position t against the token already at t; they predict the token at t+1."),
    ("shifted-back", "shift-wrong-direction", "mean CE of z[t] against x[t-1]",
     lambda f: _mean_ce(f["z"][1:], f["x"][:-1]),
     "That scores position t against the previous token; the target is the next one."),
    ("sum", "sum-vs-mean", "sum of the T-1 terms", lambda f: f["loss"] * (f["T"] - 1),
     "That is the sum over the {scored} scored positions; the loss is their mean."),
    ("bits", "wrong-log-base", "loss / ln 2", lambda f: f["loss"] / LN2,
     "That is the loss in bits; the question asks for nats."),
    ("mean-probability", "probability-not-loss", "mean p(x[t+1])",
     lambda f: float(np.mean(_target_probs(f["logits"], f["tokens"]))),
     "That is the mean probability of the targets; the loss is the mean negative log-probability."),
    ("log10", "wrong-log-base", "loss / ln 10", lambda f: f["loss"] / math.log(10),
     "That is the loss with base-10 logs; the question asks for nats."),
    ("mean-over-T", "last-token-scored", "sum / T", lambda f: f["loss"] * (f["T"] - 1) / f["T"],
     "That divides by all T = {T} tokens; only the {scored} positions with a next token are scored."),
])

#: Wrong values in bits or summed too: each is one slip from a wrong value as well as from the key,
#: so the key is not the one choice every other is one slip away from (the hub player), nor the
#: only half of a doubled value (a sum over two positions).
register_double_mistakes("shifted-cross-entropy", MISTAKES, [
    ("sum", "bits", "sum of the T-1 terms / ln 2", lambda f: f["loss"] * (f["T"] - 1) / LN2),
    ("sum", "log10", "sum of the T-1 terms / ln 10", lambda f: f["loss"] * (f["T"] - 1) / math.log(10)),
    ("unshifted", "bits", "mean CE of z[t] against x[t], / ln 2", lambda f: _mean_ce(f["z"][:-1], f["x"][:-1]) / LN2),
    ("unshifted", "sum", "sum of CE of z[t] against x[t]",
     lambda f: _mean_ce(f["z"][:-1], f["x"][:-1]) * (f["T"] - 1)),
    ("shifted-back", "bits", "mean CE of z[t] against x[t-1], / ln 2", lambda f: _mean_ce(f["z"][1:], f["x"][:-1]) / LN2),
    ("mean-over-T", "bits", "sum / (T ln 2)", lambda f: f["loss"] * (f["T"] - 1) / (f["T"] * LN2)),
    # two slips below the key as well, so the key is not the smallest choice more often than chance
    ("mean-over-T", "log10", "sum / (T ln 10)", lambda f: f["loss"] * (f["T"] - 1) / (f["T"] * math.log(10))),
])

#: The misaligned losses with the other slips too, so a misaligned value shares a slip with as many
#: choices as the key does (the mistake hub: 248 keys in 778 at seed 0, 1,000 variants, limit 30%).
register_double_mistakes("shifted-cross-entropy", MISTAKES, [
    ("unshifted", "log10", "mean CE of z[t] against x[t], / ln 10",
     lambda f: _mean_ce(f["z"][:-1], f["x"][:-1]) / math.log(10)),
    ("shifted-back", "log10", "mean CE of z[t] against x[t-1], / ln 10",
     lambda f: _mean_ce(f["z"][1:], f["x"][:-1]) / math.log(10)),
    ("shifted-back", "sum", "sum of CE of z[t] against x[t-1]",
     lambda f: _mean_ce(f["z"][1:], f["x"][:-1]) * (f["T"] - 1)),
    ("unshifted", "mean-over-T", "sum of CE of z[t] against x[t], / T",
     lambda f: _mean_ce(f["z"][:-1], f["x"][:-1]) * (f["T"] - 1) / f["T"]),
    ("shifted-back", "mean-over-T", "sum of CE of z[t] against x[t-1], / T",
     lambda f: _mean_ce(f["z"][1:], f["x"][:-1]) * (f["T"] - 1) / f["T"]),
])


@register_family
class ShiftedCrossEntropy(Family):
    name = "shifted-cross-entropy"
    version = 8  # v8: the misaligned losses with the other slips too, and the least cued of a few cuts of the mistakes shown; v7: every choice printed at one length, one more double mistake below the key; v6: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Cross-entropy with shifted targets"
    summary = "Mean next-token cross-entropy of a small logits table: position t is scored on token t+1."
    tags = ("cross-entropy", "alignment")

    def build(self, rng: np.random.Generator) -> Draft:
        T = int(rng.integers(3, 6))
        V = int(rng.integers(3, 6))
        logits = rng.integers(-2, 4, size=(T, V)).astype(np.float64)   # (T, V)
        tokens = rng.integers(0, V, size=T)                              # (T,)
        loss = _mean_ce(logits[:-1], tokens[1:])
        header = ["position $t$", "token $x_t$"] + [f"logit of token {v}" for v in range(V)]
        rows = [[t, int(tokens[t])] + [int(z) for z in logits[t]] for t in range(T)]
        stem = (f"A model reads a sequence of T = {T} token ids (vocabulary {{0, ..., {V - 1}}}) and outputs "
                f"one row of logits per position:\n\n{fmt.table(header, rows)}\n\nWhat is the mean next-token "
                "cross-entropy over the positions that have a next token, in nats?")
        answer = float_answer(loss, unit="nats")
        terms = " ".join(f"+ \\ell_{t}" for t in range(T - 1)).lstrip("+ ")
        solution = (f"Position t predicts token t+1, so positions 0..{T - 2} are scored against tokens "
                    f"{[int(x) for x in tokens[1:]]} (the last position has no target). Each term is "
                    "$\\ell_t = \\ln\\sum_v e^{z_{t,v}} - z_{t,x_{t+1}}$; the loss is "
                    f"$\\frac{{1}}{{{T - 1}}}({terms}) = {fmt.num(loss)}$ nats.")
        parameters = {"logits": logits.astype(int).tolist(), "tokens": tokens.tolist()}
        wrong = wrong_options(MISTAKES, list(MISTAKES), self.facts(parameters), fmt.num_tex)
        # Every choice prints at one length: at four figures a loss from 1 to 999 prints shorter than
        # the probabilities and losses below 1, so the shortest text was the key far above chance.
        key_text, printed = at_common_width(loss, wrong) or (fmt.num_tex(loss), wrong)
        # A wrong value a few percent under the key reads as the key with a part left out, and the
        # larger of such a pair is the key (the close-larger player): with T = 3 the sum over T in
        # bits is always 0.96 of the key. It stays a known mistake for typed answers, not a choice.
        shown = [option for option in printed if not just_above(loss, float(option.value))]
        # of a few cuts of the mistakes to the draw's pool size, the one its fit leaves least cued: a
        # random cut often dropped the singles a double shares (mistake hub 210 in 664 at seed 0)
        options = least_cued_options(rng, answer.value, key_text, shown,
                                     "Correct: logits at t are scored against the token at t+1.")
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=printed)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The logits and tokens as arrays, T, and the reference loss."""
        z, x = np.asarray(parameters["logits"], dtype=np.float64), np.asarray(parameters["tokens"])
        T = len(x)
        return {**parameters, "z": z, "x": x, "T": T, "scored": T - 1, "loss": _mean_ce(z[:-1], x[1:])}

    def check(self, variant: dict[str, Any]) -> list[str]:
        params = variant["parameters"]
        logits, tokens = params["logits"], params["tokens"]
        return check_close(variant["answer"]["value"], plain_mean_cross_entropy(logits[:-1], tokens[1:]))

"""Joint probability of a sequence by the chain rule, or its natural log."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import (
    check_close,
    exact_product,
    float_answer,
    log_fraction,
    probabilities,
    word_run,
)
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import sequence_log_prob

#: Below this joint probability the question asks for ln P instead of P.
TINY_PROBABILITY = 1e-3


@register_family
class ChainRuleJoint(Family):
    name = "chain-rule-joint"
    title = "Joint probability by the chain rule"
    summary = "Multiply next-token conditionals into a sequence probability, or sum their logs."
    tags = ("chain-rule", "likelihood")

    def build(self, rng: np.random.Generator) -> Draft:
        n = int(rng.integers(3, 8))
        words = word_run(rng, n)
        probs = probabilities(rng, n)
        log_p = sequence_log_prob(probs)
        joint = math.exp(log_p)
        ask_log = joint < TINY_PROBABILITY or bool(rng.random() < 0.5)
        factors = " \\times ".join(fmt.exact(p) for p in probs)
        context = "`<s> " + " ".join(words) + "`"
        rows = [["token"] + [f"`{w}`" for w in words],
                ["$p(w_i \\mid w_{<i})$"] + [fmt.exact(p) for p in probs]]
        table = fmt.table([""] + [f"$w_{i + 1}$" for i in range(n)], rows)
        if ask_log:
            question = ("What is $\\ln P(w_1, \\dots, w_n \\mid \\texttt{<s>})$, the natural log of the "
                        "probability of the whole sequence?")
            answer = float_answer(log_p, unit="nats", log_space=True)
            candidates = [
                ("wrong-log-base", log_p / math.log(10), "That is the base-10 log; use the natural log."),
                ("wrong-log-base", log_p / math.log(2), "That is the base-2 log (bits); use the natural log."),
                ("sum-vs-mean", log_p / n, "That is the mean log-probability per token; the sequence "
                 "log-probability is the sum."),
                ("log-sign", -log_p, "That is the negative log-likelihood; a log-probability is negative."),
                ("drops-first-factor", log_p - math.log(probs[0]), "The first token's conditional "
                 f"({fmt.exact(probs[0])}) belongs in the sum too."),
                ("sum-not-product", math.log(sum(probs)), "Adding the probabilities before taking the "
                 "log does not follow the chain rule; add their logs."),
            ]
        else:
            question = "What is the probability $P(w_1, \\dots, w_n \\mid \\texttt{<s>})$ of the whole sequence?"
            answer = float_answer(joint)
            candidates = [
                ("sum-not-product", sum(probs), "The chain rule multiplies the conditionals; it does not add them."),
                ("drops-first-factor", joint / probs[0], "The first token's conditional "
                 f"({fmt.exact(probs[0])}) is a factor too."),
                ("sum-vs-mean", joint ** (1 / n), "That is the geometric mean per token, not the "
                 "probability of the sequence."),
                ("sum-vs-mean", sum(probs) / n, "That is the average conditional, not the probability "
                 "of the sequence."),
            ]
        stem = (f"A language model reads {context} one token at a time. For each token it gives the "
                f"probability conditioned on everything before it:\n\n{table}\n\n{question}")
        solution = (f"By the chain rule the sequence probability is the product of the conditionals: "
                    f"$P = {factors} = {fmt.num(joint)}$. In log space the product becomes a sum, "
                    f"$\\ln P = \\sum_i \\ln p(w_i \\mid w_{{<i}}) = {fmt.num(log_p)}$ nats; summing logs "
                    "avoids the underflow of multiplying many small numbers.")
        render = fmt.num_tex
        options = numeric_options(rng, answer.value, render(answer.value), candidates, render,
                                  "Correct: the chain rule multiplies every conditional.")
        return Draft(parameters={"tokens": words, "probs": probs, "ask": "log" if ask_log else "probability"},
                     stem=stem, answer=answer, options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        params = variant["parameters"]
        exact = exact_product(params["probs"])
        expected = log_fraction(exact) if params["ask"] == "log" else float(exact)
        return check_close(variant["answer"]["value"], expected)

"""A bigram approximation against the full-history chain rule for one sentence."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.errors import Redraw
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

#: Log-ratios closer to zero than this make a poor question (the models barely differ).
MIN_LOG_RATIO = 0.05


@register_family
class BigramVsFull(Family):
    name = "bigram-vs-full"
    title = "Bigram approximation against the full history"
    summary = "Score a sentence with full-history and bigram conditionals; compare the two products."
    tags = ("chain-rule", "n-gram", "likelihood")

    def build(self, rng: np.random.Generator) -> Draft:
        n = int(rng.integers(3, 7))
        words = word_run(rng, n)
        full = probabilities(rng, n)
        # The first token is conditioned on the start symbol alone in both models.
        bigram = [full[0]] + probabilities(rng, n - 1)
        log_full = sequence_log_prob(full)
        log_bigram = sequence_log_prob(bigram)
        ask = "bigram_probability" if rng.random() < 0.5 else "log_ratio"
        rows = [[f"`{w}`", fmt.exact(f), fmt.exact(b)] for w, f, b in zip(words, full, bigram)]
        table = fmt.table(["token $w_i$", "$p(w_i \\mid w_{<i})$ (full history)",
                           "$p(w_i \\mid w_{i-1})$ (bigram)"], rows)
        stem = (f"Two models score the sentence `<s> {' '.join(words)}`. One conditions each token on the "
                f"whole history, the other (a bigram model) on the previous token only:\n\n{table}\n\n")
        p_bigram = math.exp(log_bigram)
        if ask == "bigram_probability":
            stem += "What probability does the **bigram** model give the sentence?"
            answer = float_answer(p_bigram)
            candidates = [
                ("bigram-is-exact", math.exp(log_full), "That is the full-history product; the bigram model "
                 "uses its own conditionals."),
                ("sum-not-product", sum(bigram), "The bigram factors are multiplied, not added."),
                ("drops-first-factor", p_bigram / bigram[0], "The first factor "
                 f"({fmt.exact(bigram[0])}) is part of the bigram product too."),
                ("sum-vs-mean", p_bigram ** (1 / n), "That is the per-token geometric mean, not the "
                 "probability of the sentence."),
            ]
        else:
            value = log_full - log_bigram
            if abs(value) < MIN_LOG_RATIO:
                raise Redraw("the two models give almost the same probability")
            stem += ("What is the difference of the log-probabilities, "
                     "$\\ln P_{\\text{full}} - \\ln P_{\\text{bigram}}$, in nats?")
            answer = float_answer(value, unit="nats")
            candidates = [
                ("ratio-inverted", -value, "That is $\\ln P_{\\text{bigram}} - \\ln P_{\\text{full}}$; "
                 "the question subtracts the bigram term."),
                ("wrong-log-base", value / math.log(10), "That difference uses base-10 logs; use natural logs."),
                ("wrong-log-base", value / math.log(2), "That difference is in bits; the question asks for nats."),
                ("sum-vs-mean", value / n, "That is the difference per token; the question asks for the "
                 "whole sentence."),
            ]
        solution = (f"Multiply each column (chain rule). Full history: $P = {fmt.num(math.exp(log_full))}$, "
                    f"$\\ln P = {fmt.num(log_full)}$. Bigram: $P = {fmt.num(p_bigram)}$, "
                    f"$\\ln P = {fmt.num(log_bigram)}$. The difference of logs is "
                    f"${fmt.num(log_full - log_bigram)}$ nats. The products differ because the conditionals "
                    "differ; a bigram model is an approximation, not the chain rule itself.")
        options = numeric_options(rng, answer.value, fmt.num_tex(answer.value), candidates, fmt.num_tex,
                                  "Correct: multiply the right column, then compare in log space.")
        return Draft(parameters={"tokens": words, "full": full, "bigram": bigram, "ask": ask},
                     stem=stem, answer=answer, options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        params = variant["parameters"]
        full, bigram = exact_product(params["full"]), exact_product(params["bigram"])
        if params["ask"] == "bigram_probability":
            expected = float(bigram)
        else:
            expected = log_fraction(full / bigram)
        return check_close(variant["answer"]["value"], expected)

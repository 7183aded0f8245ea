"""A bigram approximation against the full-history chain rule for one sentence."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import at_common_width, numeric_options
from question_bank.errors import Redraw
from question_bank.families._common import (
    check_close,
    exact_product,
    float_answer,
    log_fraction,
    probabilities,
    word_run,
)
from question_bank.mistakes import (
    register_double_mistakes,
    register_mistakes,
    register_sign_slips,
    wrong_options,
)
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import sequence_log_prob

#: Log-ratios closer to zero than this make a poor question (the models barely differ).
MIN_LOG_RATIO = 0.05

#: Every wrong value this family knows, by what is asked.
MISTAKES = register_mistakes("bigram-vs-full", [
    ("bigram_probability/full-column", "bigram-is-exact", "prod full", lambda f: math.exp(f["log_full"]),
     "That is the full-history product; the bigram model uses its own conditionals."),
    ("bigram_probability/sum", "sum-not-product", "sum bigram", lambda f: sum(f["bigram"]),
     "The bigram factors are multiplied, not added."),
    ("bigram_probability/first-dropped", "drops-first-factor", "P_bigram / p_1",
     lambda f: f["p_bigram"] / f["bigram"][0], "The first factor ({p1}) is part of the bigram product too."),
    ("bigram_probability/geometric-mean", "sum-vs-mean", "P_bigram^(1/n)",
     lambda f: f["p_bigram"] ** (1 / f["n"]),
     "That is the per-token geometric mean, not the probability of the sentence."),
    ("log_ratio/inverted", "ratio-inverted", "ln P_bigram - ln P_full", lambda f: -f["log_ratio"],
     "That is $\\ln P_{{\\text{{bigram}}}} - \\ln P_{{\\text{{full}}}}$; the question subtracts the bigram term."),
    ("log_ratio/log10", "wrong-log-base", "(ln P_full - ln P_bigram) / ln 10",
     lambda f: f["log_ratio"] / math.log(10), "That difference uses base-10 logs; use natural logs."),
    ("log_ratio/bits", "wrong-log-base", "(ln P_full - ln P_bigram) / ln 2",
     lambda f: f["log_ratio"] / math.log(2), "That difference is in bits; the question asks for nats."),
    ("log_ratio/per-token", "sum-vs-mean", "(ln P_full - ln P_bigram) / n", lambda f: f["log_ratio"] / f["n"],
     "That is the difference per token; the question asks for the whole sentence."),
    ("bigram_probability/first-twice", "factor-counted-twice", "P_bigram * p_1",
     lambda f: f["p_bigram"] * f["bigram"][0], "The first factor ({p1}) enters the bigram product once."),
    ("bigram_probability/last-twice", "factor-counted-twice", "P_bigram * p_n",
     lambda f: f["p_bigram"] * f["bigram"][-1], "The last factor enters the bigram product once."),
    ("bigram_probability/log", "log-for-probability", "ln P_bigram", lambda f: math.log(f["p_bigram"]),
     "That is the log of the bigram probability; the question asks for the probability itself."),
])
#: Each mistake with the sign slip on top, so x / -x pairs appear around wrong values too.
register_sign_slips("bigram-vs-full", MISTAKES, "log_ratio/inverted",
                    ["log_ratio/log10", "log_ratio/bits", "log_ratio/per-token"])

#: Both ends counted twice: a probability smaller than the key's by two factors, so the key (a
#: small product printed with many digits) is not the longest, smallest-looking choice.
#: The per-token difference in another base too: one slip from a wrong value as well as from the
#: key, so the key is not the one choice every other is one slip away from (the hub player).
register_double_mistakes("bigram-vs-full", MISTAKES, [
    ("log_ratio/per-token", "log_ratio/bits", "(ln P_full - ln P_bigram) / (n ln 2)",
     lambda f: f["log_ratio"] / (f["n"] * math.log(2))),
])
register_double_mistakes("bigram-vs-full", MISTAKES, [
    ("bigram_probability/first-twice", "bigram_probability/last-twice", "P_bigram * p_1 * p_n",
     lambda f: f["p_bigram"] * f["bigram"][0] * f["bigram"][-1]),
    # The log of a wrong product: one slip (exp) from a wrong value, so the key is not the one
    # choice linked to the others (its own log always is; the hub player found it 43 in 107).
    ("bigram_probability/log", "bigram_probability/full-column", "ln P_full", lambda f: f["log_full"]),
    ("bigram_probability/log", "bigram_probability/first-dropped", "ln P_bigram - ln p_1",
     lambda f: math.log(f["p_bigram"]) - math.log(f["bigram"][0])),
])


#: Two-mistake probabilities above the key too, each sharing a mistake with the singles: the
#: doubles were all below it (logs, both ends counted twice), so every set with the key smallest was
#: singles only and the key the one choice a mistake from all the others (the mistake-hub reader
#: found it 70 times in 156). Above the key: a mean or a sum of a wrong product; below: its log.
register_double_mistakes("bigram-vs-full", MISTAKES, [
    ("bigram_probability/geometric-mean", "bigram_probability/full-column", "P_full^(1/n)",
     lambda f: math.exp(f["log_full"] / f["n"])),
    ("bigram_probability/sum", "bigram_probability/full-column", "sum full", lambda f: sum(f["full"])),
    ("bigram_probability/geometric-mean", "bigram_probability/first-dropped", "(P_bigram / p_1)^(1/n)",
     lambda f: (f["p_bigram"] / f["bigram"][0]) ** (1 / f["n"])),
    ("bigram_probability/sum", "bigram_probability/first-dropped", "sum bigram - p_1",
     lambda f: sum(f["bigram"][1:])),
    ("bigram_probability/geometric-mean", "bigram_probability/first-twice", "(P_bigram * p_1)^(1/n)",
     lambda f: (f["p_bigram"] * f["bigram"][0]) ** (1 / f["n"])),
    ("bigram_probability/log", "bigram_probability/first-twice", "ln P_bigram + ln p_1",
     lambda f: math.log(f["p_bigram"]) + math.log(f["bigram"][0])),
    ("bigram_probability/log", "bigram_probability/geometric-mean", "ln P_bigram / n",
     lambda f: math.log(f["p_bigram"]) / f["n"]),
    ("bigram_probability/geometric-mean", "bigram_probability/last-twice", "(P_bigram * p_n)^(1/n)",
     lambda f: (f["p_bigram"] * f["bigram"][-1]) ** (1 / f["n"])),
])
#: Both ends counted twice with a third mistake: one mistake from that double and from the third
#: mistake's doubles with one end, so more sets link another choice to as many others as the key.
register_double_mistakes("bigram-vs-full", MISTAKES, [
    ("bigram_probability/first-twice+last-twice", "bigram_probability/geometric-mean",
     "(P_bigram * p_1 * p_n)^(1/n)", lambda f: (f["p_bigram"] * f["bigram"][0] * f["bigram"][-1]) ** (1 / f["n"])),
    ("bigram_probability/first-twice+last-twice", "bigram_probability/sum", "sum bigram + p_1 + p_n",
     lambda f: sum(f["bigram"]) + f["bigram"][0] + f["bigram"][-1]),
    ("bigram_probability/first-twice+last-twice", "bigram_probability/log", "ln P_bigram + ln p_1 + ln p_n",
     lambda f: math.log(f["p_bigram"]) + math.log(f["bigram"][0]) + math.log(f["bigram"][-1])),
])


@register_family
class BigramVsFull(Family):
    name = "bigram-vs-full"
    version = 9  # v9: two-mistake probabilities above the key too (the mistake hub found it 70 in 156)
    title = "Bigram approximation against the full history"
    summary = "Score a sentence with full-history and bigram conditionals; compare the two products."
    tags = ("chain-rule", "n-gram", "likelihood")
    subquestion_key = "ask"
    subquestion_values = ("bigram_probability", "log_ratio")

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
        else:
            value = log_full - log_bigram
            if abs(value) < MIN_LOG_RATIO:
                raise Redraw("the two models give almost the same probability")
            stem += ("What is the difference of the log-probabilities, "
                     "$\\ln P_{\\text{full}} - \\ln P_{\\text{bigram}}$, in nats?")
            answer = float_answer(value, unit="nats", printed_steps=(log_full, log_bigram))
        solution = (f"Multiply each column (chain rule). Full history: $P = {fmt.num(math.exp(log_full))}$, "
                    f"$\\ln P = {fmt.num(log_full)}$. Bigram: $P = {fmt.num(p_bigram)}$, "
                    f"$\\ln P = {fmt.num(log_bigram)}$. The difference of logs is "
                    f"${fmt.num(log_full - log_bigram)}$ nats. The products differ because the conditionals "
                    "differ; a bigram model is an approximation, not the chain rule itself.")
        parameters = {"tokens": words, "full": full, "bigram": bigram, "ask": ask}
        wrong = wrong_options(MISTAKES, [k for k in MISTAKES if k.startswith(ask + "/")],
                              self.facts(parameters), fmt.num_tex)
        # Every choice printed at one length where that stays short: the log-ratio key otherwise
        # printed shorter than its negative and small per-token mistakes (shortest 167 in 488).
        # (The answer key lists the mistakes not drawn in their ordinary printing.)
        key_text, shown = at_common_width(answer.value, wrong) or (fmt.num_tex(answer.value), wrong)
        options = numeric_options(rng, answer.value, key_text, shown,
                                  "Correct: multiply the right column, then compare in log space.")
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """Both log-probabilities, the bigram product, their log-ratio and the first factor as printed."""
        log_full, log_bigram = sequence_log_prob(parameters["full"]), sequence_log_prob(parameters["bigram"])
        return {**parameters, "log_full": log_full, "p_bigram": math.exp(log_bigram),
                "log_ratio": log_full - log_bigram, "n": len(parameters["full"]),
                "p1": fmt.exact(parameters["bigram"][0])}

    def check(self, variant: dict[str, Any]) -> list[str]:
        params = variant["parameters"]
        full, bigram = exact_product(params["full"]), exact_product(params["bigram"])
        if params["ask"] == "bigram_probability":
            expected = float(bigram)
        else:
            expected = log_fraction(full / bigram)
        return check_close(variant["answer"]["value"], expected)

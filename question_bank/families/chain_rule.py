"""Joint probability of a sequence by the chain rule, or its natural log."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import at_common_width, numeric_options
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

#: Below this joint probability the question asks for ln P instead of P.
TINY_PROBABILITY = 1e-3

#: Every wrong value this family knows, by what is asked ("log" or "probability").
MISTAKES = register_mistakes("chain-rule-joint", [
    ("log/log10", "wrong-log-base", "log10 P", lambda f: f["log_p"] / math.log(10),
     "That is the base-10 log; use the natural log."),
    ("log/log2", "wrong-log-base", "log2 P", lambda f: f["log_p"] / math.log(2),
     "That is the base-2 log (bits); use the natural log."),
    ("log/mean", "sum-vs-mean", "ln P / n", lambda f: f["log_p"] / f["n"],
     "That is the mean log-probability per token; the sequence log-probability is the sum."),
    ("log/negated", "log-sign", "-ln P", lambda f: -f["log_p"],
     "That is the negative log-likelihood; a log-probability is negative."),
    ("log/first-dropped", "drops-first-factor", "ln P - ln p_1", lambda f: f["log_p"] - math.log(f["probs"][0]),
     "The first token's conditional ({p1}) belongs in the sum too."),
    ("log/sum-of-probs", "sum-not-product", "ln(sum p_i)", lambda f: math.log(sum(f["probs"])),
     "Adding the probabilities before taking the log does not follow the chain rule; add their logs."),
    ("log/first-twice", "factor-counted-twice", "ln P + ln p_1", lambda f: f["log_p"] + math.log(f["probs"][0]),
     "The first factor ({p1}) enters the sum of logs once."),
    ("probability/sum", "sum-not-product", "sum p_i", lambda f: sum(f["probs"]),
     "The chain rule multiplies the conditionals; it does not add them."),
    ("probability/first-twice", "factor-counted-twice", "P * p_1", lambda f: f["joint"] * f["probs"][0],
     "The first factor ({p1}) enters the product once."),
    ("probability/log", "log-for-probability", "ln P", lambda f: f["log_p"],
     "That is the log of the joint probability; the question asks for the probability itself."),
    ("probability/first-dropped", "drops-first-factor", "P / p_1", lambda f: f["joint"] / f["probs"][0],
     "The first token's conditional ({p1}) is a factor too."),
    ("probability/geometric-mean", "sum-vs-mean", "P^(1/n)", lambda f: f["joint"] ** (1 / f["n"]),
     "That is the geometric mean per token, not the probability of the sequence."),
    ("probability/arithmetic-mean", "sum-vs-mean", "mean p_i", lambda f: sum(f["probs"]) / f["n"],
     "That is the average conditional, not the probability of the sequence."),
    ("log/last-twice", "factor-counted-twice", "ln P + ln p_n", lambda f: f["log_p"] + math.log(f["probs"][-1]),
     "The last factor enters the sum of logs once."),
    ("probability/last-twice", "factor-counted-twice", "P * p_n", lambda f: f["joint"] * f["probs"][-1],
     "The last factor enters the product once."),
    ("probability/log10", "log-for-probability", "log10 P", lambda f: f["log_p"] / math.log(10),
     "That is the base-10 log of the joint probability; the question asks for the probability itself."),
])
#: Each mistake with the sign slip on top, so x / -x pairs appear around wrong values too.
register_sign_slips("chain-rule-joint", MISTAKES, "log/negated",
                    ["log/log10", "log/log2", "log/mean", "log/first-dropped"])

#: Both ends counted twice: a probability smaller than the key's by two factors, so the key (a
#: small product printed with many digits) is not the longest, smallest-looking choice.
register_double_mistakes("chain-rule-joint", MISTAKES, [
    ("probability/first-twice", "probability/last-twice", "P * p_1 * p_n",
     lambda f: f["joint"] * f["probs"][0] * f["probs"][-1]),
])

#: Wrong values in another base too: each is one slip from a wrong value as well as from the key,
#: so the key is not the one choice every other choice is one slip away from (the hub player).
register_double_mistakes("chain-rule-joint", MISTAKES, [
    ("log/mean", "log/log2", "ln P / (n ln 2)", lambda f: f["log_p"] / (f["n"] * math.log(2))),
    ("log/mean", "log/log10", "ln P / (n ln 10)", lambda f: f["log_p"] / (f["n"] * math.log(10))),
    ("log/first-dropped", "log/log2", "(ln P - ln p_1) / ln 2",
     lambda f: (f["log_p"] - math.log(f["probs"][0])) / math.log(2)),
    ("log/first-twice", "log/log2", "(ln P + ln p_1) / ln 2",
     lambda f: (f["log_p"] + math.log(f["probs"][0])) / math.log(2)),
    ("log/first-twice", "log/log10", "(ln P + ln p_1) / ln 10",
     lambda f: (f["log_p"] + math.log(f["probs"][0])) / math.log(10)),
])

#: More wrong logs below the key (further from zero): the log question had five mistakes below
#: ln P and twelve above it, and the draw keeps at most ten of them, so the key could seldom be
#: the largest choice and was the smallest or 2nd smallest too often (182 and 176 in 563).
register_double_mistakes("chain-rule-joint", MISTAKES, [
    ("log/last-twice", "log/log2", "(ln P + ln p_n) / ln 2",
     lambda f: (f["log_p"] + math.log(f["probs"][-1])) / math.log(2)),
    ("log/first-twice", "log/last-twice", "ln P + ln p_1 + ln p_n",
     lambda f: f["log_p"] + math.log(f["probs"][0]) + math.log(f["probs"][-1])),
])
register_double_mistakes("chain-rule-joint", MISTAKES, [
    ("log/first-twice+last-twice", "log/log2", "(ln P + ln p_1 + ln p_n) / ln 2",
     lambda f: (f["log_p"] + math.log(f["probs"][0]) + math.log(f["probs"][-1])) / math.log(2)),
])


#: Two-mistake probabilities on both sides of the key, each sharing a mistake with the singles: with
#: first-twice+last-twice alone every set with the key smallest was singles only, so the key was the
#: choice one mistake from all the others (the mistake-hub reader found it 84 times in 104). Above
#: the key: a mean or a sum of the wrong factors; below it: the log of a wrong product.
register_double_mistakes("chain-rule-joint", MISTAKES, [
    ("probability/geometric-mean", "probability/first-dropped", "(P / p_1)^(1/n)",
     lambda f: (f["joint"] / f["probs"][0]) ** (1 / f["n"])),
    ("probability/geometric-mean", "probability/first-twice", "(P * p_1)^(1/n)",
     lambda f: (f["joint"] * f["probs"][0]) ** (1 / f["n"])),
    ("probability/sum", "probability/first-dropped", "sum p_i - p_1", lambda f: sum(f["probs"][1:])),
    ("probability/sum", "probability/first-twice", "sum p_i + p_1", lambda f: sum(f["probs"]) + f["probs"][0]),
    ("probability/sum", "probability/last-twice", "sum p_i + p_n", lambda f: sum(f["probs"]) + f["probs"][-1]),
    ("probability/log", "probability/first-twice", "ln P + ln p_1",
     lambda f: f["log_p"] + math.log(f["probs"][0])),
    ("probability/log", "probability/geometric-mean", "ln P / n", lambda f: f["log_p"] / f["n"]),
    ("probability/geometric-mean", "probability/last-twice", "(P * p_n)^(1/n)",
     lambda f: (f["joint"] * f["probs"][-1]) ** (1 / f["n"])),
    ("probability/log", "probability/last-twice", "ln P + ln p_n",
     lambda f: f["log_p"] + math.log(f["probs"][-1])),
    ("probability/log", "probability/first-dropped", "ln P - ln p_1",
     lambda f: f["log_p"] - math.log(f["probs"][0])),
])
#: Both ends counted twice with a third mistake: one mistake from that double and from the third
#: mistake's doubles with one end, so more sets link another choice to as many others as the key.
register_double_mistakes("chain-rule-joint", MISTAKES, [
    ("probability/first-twice+last-twice", "probability/geometric-mean", "(P * p_1 * p_n)^(1/n)",
     lambda f: (f["joint"] * f["probs"][0] * f["probs"][-1]) ** (1 / f["n"])),
    ("probability/first-twice+last-twice", "probability/sum", "sum p_i + p_1 + p_n",
     lambda f: sum(f["probs"]) + f["probs"][0] + f["probs"][-1]),
    ("probability/first-twice+last-twice", "probability/log", "ln P + ln p_1 + ln p_n",
     lambda f: f["log_p"] + math.log(f["probs"][0]) + math.log(f["probs"][-1])),
])


@register_family
class ChainRuleJoint(Family):
    name = "chain-rule-joint"
    version = 8  # v8: two-mistake probabilities on both sides of the key (the mistake hub found it 84 in 104)
    title = "Joint probability by the chain rule"
    summary = "Multiply next-token conditionals into a sequence probability, or sum their logs."
    tags = ("chain-rule", "likelihood")
    subquestion_key = "ask"
    subquestion_values = ("probability", "log")

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
        else:
            question = "What is the probability $P(w_1, \\dots, w_n \\mid \\texttt{<s>})$ of the whole sequence?"
            answer = float_answer(joint)
        stem = (f"A language model reads {context} one token at a time. For each token it gives the "
                f"probability conditioned on everything before it:\n\n{table}\n\n{question}")
        solution = (f"By the chain rule the sequence probability is the product of the conditionals: "
                    f"$P = {factors} = {fmt.num(joint)}$. In log space the product becomes a sum, "
                    f"$\\ln P = \\sum_i \\ln p(w_i \\mid w_{{<i}}) = {fmt.num(log_p)}$ nats; summing logs "
                    "avoids the underflow of multiplying many small numbers.")
        parameters = {"tokens": words, "probs": probs, "ask": "log" if ask_log else "probability"}
        wrong = wrong_options(MISTAKES, [k for k in MISTAKES if k.startswith(parameters["ask"] + "/")],
                              self.facts(parameters), fmt.num_tex)
        # Every choice printed at one length where that stays short: a small product otherwise
        # prints with leading zeros and was the longest choice too often (129 times in 397).
        # (The answer key lists the mistakes not drawn in their ordinary printing.)
        key_text, shown = at_common_width(answer.value, wrong) or (fmt.num_tex(answer.value), wrong)
        options = numeric_options(rng, answer.value, key_text, shown,
                                  "Correct: the chain rule multiplies every conditional.")
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The log and the product of the conditionals, their count and the first one as printed."""
        probs = parameters["probs"]
        log_p = sequence_log_prob(probs)
        return {**parameters, "log_p": log_p, "joint": math.exp(log_p), "n": len(probs),
                "p1": fmt.exact(probs[0])}

    def check(self, variant: dict[str, Any]) -> list[str]:
        params = variant["parameters"]
        exact = exact_product(params["probs"])
        expected = log_fraction(exact) if params["ask"] == "log" else float(exact)
        return check_close(variant["answer"]["value"], expected)

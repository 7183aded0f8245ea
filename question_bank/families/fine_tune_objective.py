"""GPT-1's fine-tuning objective L3 = L2 + lambda * L1 (log-likelihoods, not norms)."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import at_common_width
from question_bank.families._common import check_close, exact_product, float_answer, log_fraction, probabilities
from question_bank.families._hub_pool import least_cued_options
from question_bank.mistakes import register_double_mistakes, register_mistakes, register_sign_slips, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import sequence_log_prob

LAMBDAS = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7)

#: Every wrong value this family knows: (name, misconception, formula, compute, feedback).
#: ``sign`` is -1 when the question asks for the minimised loss -L3, else +1.
MISTAKES = register_mistakes("fine-tune-objective", [
    ("lambda-dropped", "lambda-dropped", "sign*(L2 + L1)",
     lambda f: f["sign"] * (f["L2"] + f["L1"]), "The LM term is scaled by lambda."),
    ("lambda-on-L2", "lambda-on-wrong-term", "sign*(lambda*L2 + L1)",
     lambda f: f["sign"] * (f["lambda"] * f["L2"] + f["L1"]), "Lambda weights the auxiliary LM term L1, not L2."),
    ("other-sign", "maximize-minimize-sign", "-sign*(L2 + lambda*L1)",
     lambda f: -f["sign"] * (f["L2"] + f["lambda"] * f["L1"]),
     "That is the other sign: the objective is maximised, the loss is its negation."),
    ("lm-term-subtracted", "lm-term-subtracted", "sign*(L2 - lambda*L1)",
     lambda f: f["sign"] * (f["L2"] - f["lambda"] * f["L1"]),
     "Both terms are log-likelihoods added with the same sign."),
    ("weight-norms", "l1-l2-are-norms", "||w||_2^2 + lambda*||w||_1",
     lambda f: f["l2_squared"] + f["lambda"] * f["l1_norm"],
     "L1 and L2 here are log-likelihoods; the weight norms play no part in GPT-1's objective."),
    ("means-not-sums", "sum-vs-mean", "sign*(mean ln p(label) + lambda*mean ln p(token))",
     lambda f: f["sign"] * (f["L2"] / f["n_labels"] + f["lambda"] * f["L1"] / f["n_tokens"]),
     "That averages each log-likelihood; in GPT-1, L1 and L2 are sums over the batch."),
    # Logs in another base: bits lie further from zero than the key, on its own side, where the
    # other mistakes (a lambda, a mean, a subtraction) mostly bring the value nearer zero, so the
    # key was rarely the value furthest out and the 2nd smallest player found it 309 times in 1000.
    ("bits", "wrong-log-base", "sign*(L2 + lambda*L1) / ln 2",
     lambda f: f["sign"] * (f["L2"] + f["lambda"] * f["L1"]) / math.log(2),
     "That is in bits (base-2 logs); the likelihoods here are natural logs, in nats."),
    ("log10", "wrong-log-base", "sign*(L2 + lambda*L1) / ln 10",
     lambda f: f["sign"] * (f["L2"] + f["lambda"] * f["L1"]) / math.log(10),
     "That uses base-10 logs; the likelihoods here are natural logs, in nats."),
])
#: Two mistakes at once: a wrong value in bits lies further out still, and is one slip from a
#: wrong value as well as from the key (so the key is not the hub of the choices).
register_double_mistakes("fine-tune-objective", MISTAKES, [
    ("lambda-dropped", "bits", "sign*(L2 + L1) / ln 2",
     lambda f: f["sign"] * (f["L2"] + f["L1"]) / math.log(2)),
    ("lambda-on-L2", "bits", "sign*(lambda*L2 + L1) / ln 2",
     lambda f: f["sign"] * (f["lambda"] * f["L2"] + f["L1"]) / math.log(2)),
])
#: The other slips of a term (the mean, the subtraction) in bits, and every slip of a term in base 10:
#: with only the two above, the key was still one slip from more choices than any other and the
#: reader of every one-slip relation (the mistake hub) found it 31% of the time (expected share,
#: seed 99, 300 variants). Each is the term's wrong value over the base's ln.
_TERMS = {
    "lambda-dropped": ("(L2 + L1)", lambda f: f["L2"] + f["L1"]),
    "lambda-on-L2": ("(lambda*L2 + L1)", lambda f: f["lambda"] * f["L2"] + f["L1"]),
    "lm-term-subtracted": ("(L2 - lambda*L1)", lambda f: f["L2"] - f["lambda"] * f["L1"]),
    "means-not-sums": ("(mean ln p(label) + lambda*mean ln p(token))",
                       lambda f: f["L2"] / f["n_labels"] + f["lambda"] * f["L1"] / f["n_tokens"]),
}
register_double_mistakes("fine-tune-objective", MISTAKES, [
    (term, base, f"sign*{text} / ln {radix}",
     (lambda compute, radix: lambda f: f["sign"] * compute(f) / math.log(radix))(compute, radix))
    for base, radix in (("bits", 2), ("log10", 10))
    for term, (text, compute) in _TERMS.items()
    if f"{term}+{base}" not in MISTAKES
])
#: Each mistake with the sign slip on top, so x / -x pairs appear around wrong values too.
register_sign_slips("fine-tune-objective", MISTAKES, "other-sign",
                    ["lambda-dropped", "lambda-on-L2", "lm-term-subtracted", "means-not-sums", "bits",
                     "lambda-dropped+bits"])


@register_family
class FineTuneObjective(Family):
    name = "fine-tune-objective"
    version = 8  # v8: every slip of a term in bits and in base 10, and a pool the draw can fit, so the key is not the mistake hub; v7: mistakes in bits and base 10, alone and with a second mistake, beyond the key on its side
    title = "GPT-1's combined fine-tuning objective"
    summary = "Evaluate L3 = L2 + lambda*L1 (or the loss -L3) from label and token log-likelihoods."
    tags = ("fine-tuning", "gpt-1", "likelihood")

    def build(self, rng: np.random.Generator) -> Draft:
        label_probs = probabilities(rng, int(rng.integers(2, 5)), low=30, high=99)
        token_probs = probabilities(rng, int(rng.integers(3, 7)), low=5, high=95)
        lam = float(LAMBDAS[int(rng.integers(len(LAMBDAS)))])
        weights = [int(w) / 10 for w in rng.integers(-20, 21, size=3)]
        minimise = bool(rng.random() < 0.5)
        parameters = {"label_probs": label_probs, "token_probs": token_probs, "lambda": lam,
                      "weights": weights, "minimise": minimise}
        facts = self.facts(parameters)
        L1, L2, sign = facts["L1"], facts["L2"], facts["sign"]
        L3 = L2 + lam * L1
        stem = (f"GPT-1 is fine-tuned with the combined objective $L_3 = L_2 + \\lambda L_1$, "
                f"$\\lambda = {fmt.exact(lam)}$. On one small batch, the classifier gives the correct labels "
                f"the probabilities {', '.join(fmt.exact(p) for p in label_probs)}, and the language-model "
                f"head gives the observed input tokens the probabilities "
                f"{', '.join(fmt.exact(p) for p in token_probs)}. The classifier's weight vector is "
                f"w = ({', '.join(fmt.exact(w) for w in weights)}). As in GPT-1, $L_2$ and $L_1$ are sums over "
                "the batch of the natural-log likelihoods: $L_2 = \\sum \\ln p(\\text{label})$ over the labels "
                "and $L_1 = \\sum \\ln p(\\text{token})$ over the tokens. ")
        stem += ("What is the value of the **loss that is minimised**, $-L_3$, in nats?" if minimise
                 else "What is the value of $L_3$ (the objective that is maximised), in nats?")
        value = sign * L3
        wrong = wrong_options(MISTAKES, list(MISTAKES), facts, fmt.num_tex)
        solution = (f"$L_2 = \\sum \\ln p(\\text{{label}}) = {fmt.num(L2)}$ and $L_1 = \\sum \\ln p(\\text{{token}}) "
                    f"= {fmt.num(L1)}$ are log-likelihoods (not weight norms). $L_3 = L_2 + \\lambda L_1 = "
                    f"{fmt.num(L2)} + {fmt.exact(lam)} \\times ({fmt.num(L1)}) = {fmt.num(L3)}$; training "
                    f"maximises it, i.e. minimises $-L_3 = {fmt.num(-L3)}$.")
        # Every choice printed at one length: the key, a sum of logs of a few terms, otherwise printed
        # shorter than the negative mistakes and the small means (the shortest player found it).
        # (The answer key lists the mistakes not drawn in their ordinary printing.)
        key_text, shown = at_common_width(value, wrong) or (fmt.num_tex(value), wrong)
        options = least_cued_options(rng, value, key_text, shown,
                                     "Correct: two log-likelihoods, the LM one weighted by lambda.", tries=2)
        return Draft(parameters=parameters, stem=stem, answer=float_answer(value, unit="nats"), options=options,
                     solution=solution, mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The two log-likelihood sums, their sizes, the sign asked for and the weight norms."""
        weights = parameters["weights"]
        return {**parameters,
                "L2": sequence_log_prob(parameters["label_probs"]),    # supervised log-likelihood
                "L1": sequence_log_prob(parameters["token_probs"]),    # auxiliary LM log-likelihood
                "n_labels": len(parameters["label_probs"]), "n_tokens": len(parameters["token_probs"]),
                "sign": -1.0 if parameters["minimise"] else 1.0,
                "l1_norm": sum(abs(w) for w in weights), "l2_squared": sum(w * w for w in weights)}

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        L2 = log_fraction(exact_product(p["label_probs"]))
        L1 = log_fraction(exact_product(p["token_probs"]))
        expected = (L2 + p["lambda"] * L1) * (-1 if p["minimise"] else 1)
        return check_close(variant["answer"]["value"], expected)

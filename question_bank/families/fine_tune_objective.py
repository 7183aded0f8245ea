"""GPT-1's fine-tuning objective L3 = L2 + lambda * L1 (log-likelihoods, not norms)."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import check_close, exact_product, float_answer, log_fraction, probabilities
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import sequence_log_prob

LAMBDAS = (0.1, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7)


@register_family
class FineTuneObjective(Family):
    name = "fine-tune-objective"
    title = "GPT-1's combined fine-tuning objective"
    summary = "Evaluate L3 = L2 + lambda*L1 (or the loss -L3) from label and token log-likelihoods."
    tags = ("fine-tuning", "gpt-1", "likelihood")

    def build(self, rng: np.random.Generator) -> Draft:
        label_probs = probabilities(rng, int(rng.integers(2, 5)), low=30, high=99)
        token_probs = probabilities(rng, int(rng.integers(3, 7)), low=5, high=95)
        lam = float(LAMBDAS[int(rng.integers(len(LAMBDAS)))])
        weights = [int(w) / 10 for w in rng.integers(-20, 21, size=3)]
        L2 = sequence_log_prob(label_probs)      # supervised log-likelihood
        L1 = sequence_log_prob(token_probs)      # auxiliary language-model log-likelihood
        L3 = L2 + lam * L1
        minimise = bool(rng.random() < 0.5)
        sign = -1.0 if minimise else 1.0
        l1_norm, l2_sq = sum(abs(w) for w in weights), sum(w * w for w in weights)
        stem = (f"GPT-1 is fine-tuned with the combined objective $L_3 = L_2 + \\lambda L_1$, "
                f"$\\lambda = {fmt.exact(lam)}$. On one small batch, the classifier gives the correct labels "
                f"the probabilities {', '.join(fmt.exact(p) for p in label_probs)}, and the language-model "
                f"head gives the observed input tokens the probabilities "
                f"{', '.join(fmt.exact(p) for p in token_probs)}. The classifier's weight vector is "
                f"w = ({', '.join(fmt.exact(w) for w in weights)}). ")
        stem += ("What is the value of the **loss that is minimised**, $-L_3$, in nats?" if minimise
                 else "What is the value of $L_3$ (the objective that is maximised), in nats?")
        value = sign * L3
        candidates = [
            ("lambda-dropped", sign * (L2 + L1), "The LM term is scaled by lambda."),
            ("lambda-on-wrong-term", sign * (lam * L2 + L1), "Lambda weights the auxiliary LM term L1, not L2."),
            ("maximize-minimize-sign", -value, "That is the other sign: the objective is maximised, the "
             "loss is its negation."),
            ("maximize-minimize-sign", sign * (L2 - lam * L1), "Both terms are log-likelihoods added with the "
             "same sign."),
            ("l1-l2-are-norms", l2_sq + lam * l1_norm, "L1 and L2 here are log-likelihoods; the weight norms "
             "play no part in GPT-1's objective."),
        ]
        solution = (f"$L_2 = \\sum \\ln p(\\text{{label}}) = {fmt.num(L2)}$ and $L_1 = \\sum \\ln p(\\text{{token}}) "
                    f"= {fmt.num(L1)}$ are log-likelihoods (not weight norms). $L_3 = L_2 + \\lambda L_1 = "
                    f"{fmt.num(L2)} + {fmt.exact(lam)} \\times ({fmt.num(L1)}) = {fmt.num(L3)}$; training "
                    f"maximises it, i.e. minimises $-L_3 = {fmt.num(-L3)}$.")
        options = numeric_options(rng, value, fmt.num_tex(value), candidates, fmt.num_tex,
                                  "Correct: two log-likelihoods, the LM one weighted by lambda.")
        return Draft(parameters={"label_probs": label_probs, "token_probs": token_probs, "lambda": lam,
                                 "weights": weights, "minimise": minimise},
                     stem=stem, answer=float_answer(value, unit="nats"), options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        L2 = log_fraction(exact_product(p["label_probs"]))
        L1 = log_fraction(exact_product(p["token_probs"]))
        expected = (L2 + p["lambda"] * L1) * (-1 if p["minimise"] else 1)
        return check_close(variant["answer"]["value"], expected)

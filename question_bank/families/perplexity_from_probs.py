"""Perplexity from the probabilities a model gave the observed tokens."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choice_balance import MAX_POOL
from question_bank.choices import at_common_width, known_mistakes, numeric_options
from question_bank.families._common import check_close, exact_product, float_answer, probabilities
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft, Option
from solutions import perplexity


def _mean_nll(probs: list[float]) -> float:
    return -sum(math.log(p) for p in probs) / len(probs)


#: Every wrong value this family knows. Each feedback names its slip, so that two of them read
#: together explain a value made with both (the doubles below).
MISTAKES = register_mistakes("perplexity-from-probs", [
    ("total-nll", "sum-vs-mean", "exp(sum of -ln p_i)", lambda f: math.exp(len(f["probs"]) * _mean_nll(f["probs"])),
     "That uses the total NLL, summed over the tokens; perplexity uses the mean NLL per token."),
    ("mean-nll", "perplexity-is-loss", "mean of -ln p_i", lambda f: _mean_nll(f["probs"]),
     "That stops at the NLL (a cross-entropy) without exponentiating it; perplexity is exp of the mean NLL."),
    ("reciprocal", "perplexity-reciprocal", "exp(-mean NLL)", lambda f: math.exp(-_mean_nll(f["probs"])),
     "That gives a probability (exp(-mean NLL) is the geometric-mean probability), not its reciprocal; "
     "perplexity is one over the geometric-mean probability."),
    ("mean-of-reciprocals", "arithmetic-mean-perplexity", "mean of 1/p_i",
     lambda f: sum(1 / p for p in f["probs"]) / len(f["probs"]),
     "That combines the 1/p_i arithmetically; perplexity is their geometric mean."),
    ("inverse-arithmetic-mean", "arithmetic-mean-perplexity", "n / sum p_i",
     lambda f: len(f["probs"]) / sum(f["probs"]),
     "That averages the probabilities arithmetically; perplexity is the reciprocal of their geometric mean."),
    ("base-2", "wrong-log-base", "2^(mean NLL)", lambda f: 2 ** _mean_nll(f["probs"]),
     "The NLL is in nats, so it is exponentiated with base e, not 2."),
    ("base-10", "wrong-log-base", "10^(mean NLL)", lambda f: 10 ** _mean_nll(f["probs"]),
     "Natural-log NLLs are exponentiated with base e, not 10."),
])
#: Two slips at once, each sharing a slip with a single mistake above. With single slips only, the key
#: was one slip from every wrong choice and each of them from the key alone, so the reader who spots
#: every one-slip relation (the mistake hub) found it in every variant (200 in 200 at seed 99). A double
#: beside its two singles makes a square, beside one of them a rival hub.
register_double_mistakes("perplexity-from-probs", MISTAKES, [
    # the total NLL itself: summed, not averaged, and not exponentiated
    ("mean-nll", "total-nll", "sum of -ln p_i", lambda f: len(f["probs"]) * _mean_nll(f["probs"])),
    # the arithmetic mean of the probabilities, not inverted
    ("inverse-arithmetic-mean", "reciprocal", "mean of p_i", lambda f: sum(f["probs"]) / len(f["probs"])),
    ("mean-of-reciprocals", "total-nll", "sum of 1/p_i", lambda f: sum(1 / p for p in f["probs"])),
    ("base-2", "total-nll", "2^(sum of -ln p_i)", lambda f: 2 ** (len(f["probs"]) * _mean_nll(f["probs"]))),
    ("base-2", "reciprocal", "2^(-mean NLL)", lambda f: 2 ** -_mean_nll(f["probs"])),
    ("base-10", "reciprocal", "10^(-mean NLL)", lambda f: 10 ** -_mean_nll(f["probs"])),
    # the reciprocal of the arithmetic mean of 1/p_i: the harmonic mean of the probabilities
    ("mean-of-reciprocals", "reciprocal", "1 / mean of 1/p_i", lambda f: len(f["probs"]) / sum(1 / p for p in f["probs"])),
])


#: Single mistakes offered to the draw per variant (of seven); the doubles that share a mistake with
#: them fill the draw's pool.
OFFERED_SINGLES = 5


def _offered(rng: np.random.Generator, wrong: list[Option]) -> list[Option]:
    """The wrong options the draw chooses among: :data:`OFFERED_SINGLES` single mistakes drawn at random
    and, in the order declared, the doubles that share a mistake with one of them, up to MAX_POOL.

    ``wrong`` holds the usable mistakes, one per printed value. Offered all fourteen, the draw cuts
    its pool to MAX_POOL at random, and a cut that drops a single leaves the doubles on it linked to
    nothing: the mistake hub then found the key in 29% of variants after the fit (chance 25%, 800
    variants), 28% with this pool.
    """
    singles = [o for o in wrong if "+" not in (o.formula or "")]
    doubles = [o for o in wrong if "+" in (o.formula or "")]
    chosen = [singles[i] for i in sorted(rng.permutation(len(singles))[:OFFERED_SINGLES].tolist())]
    names = {(o.formula or "").split("/", 1)[1] for o in chosen}
    linked = [o for o in doubles if names & set((o.formula or "").split("/", 1)[1].split("+"))]
    return chosen + linked[:MAX_POOL - len(chosen)]


@register_family
class PerplexityFromProbs(Family):
    name = "perplexity-from-probs"
    version = 8  # v8: wrong values with two slips at once (sum NLL, mean p, sum 1/p, 2^-NLL, ...), five singles and their doubles offered, so the key is not the mistake hub; v7: every choice printed at one length, the total NLL and the mean probability among the mistakes; v6: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Perplexity from token probabilities"
    summary = "Turn the probabilities given to N scored tokens into a perplexity, exp(mean NLL)."
    tags = ("perplexity",)

    def build(self, rng: np.random.Generator) -> Draft:
        n = int(rng.integers(3, 9))
        probs = probabilities(rng, n, low=5, high=99)
        ppl = perplexity(probs)
        mean_nll = -sum(math.log(p) for p in probs) / n
        listed = ", ".join(fmt.exact(p) for p in probs)
        stem = (f"On a held-out text of {n} scored tokens, a language model gave the observed tokens the "
                f"probabilities\n\n$$p = ({listed}).$$\n\nWhat is the model's perplexity on this text "
                "(natural logs)?")
        answer = float_answer(ppl)
        wrong = wrong_options(MISTAKES, list(MISTAKES), {"probs": probs}, fmt.num_tex)
        solution = (f"Mean negative log-likelihood: $\\bar\\ell = -\\frac{{1}}{{{n}}}\\sum_i \\ln p_i = "
                    f"{fmt.num(mean_nll)}$ nats. Perplexity $= e^{{\\bar\\ell}} = {fmt.num(ppl)}$, the "
                    "reciprocal of the geometric mean of the probabilities. A model that guessed uniformly "
                    "among k tokens would have perplexity k.")
        # Every choice prints at one length: at four figures the key (at least 1) prints as short as
        # every other value from 1 to 999 and shorter than the probabilities and losses below 1
        # (the reciprocal, a mean NLL under 1), so the shortest text was the key far above chance.
        key_text, shown = at_common_width(ppl, wrong) or (fmt.num_tex(ppl), wrong)
        options = numeric_options(rng, answer.value, key_text, _offered(rng, known_mistakes(answer.value, shown)), "Correct: exponentiate the mean NLL.")
        return Draft(parameters={"probs": probs}, stem=stem, answer=answer, options=options,
                     solution=solution, mistakes=shown)

    def check(self, variant: dict[str, Any]) -> list[str]:
        probs = variant["parameters"]["probs"]
        # Second formula: the reciprocal geometric mean from the exact product.
        expected = float(exact_product(probs)) ** (-1 / len(probs))
        return check_close(variant["answer"]["value"], expected)

"""One entry of dlogits = (softmax - onehot) / N."""
from __future__ import annotations

from typing import Any

import numpy as np

from autograder.runtime.tolerances import QUESTION_FD_ATOL, QUESTION_FD_EPS
from question_bank import formatting as fmt
from question_bank.choices import at_common_width, numeric_options
from question_bank.families._common import float_answer, plain_mean_cross_entropy
from question_bank.mistakes import register_double_mistakes, register_mistakes, register_sign_slips, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import cross_entropy_loss, softmax


#: Every wrong value this family knows; ``value`` is the reference entry, ``p`` the softmax
#: probability at that entry and ``onehot`` the one-hot entry.
MISTAKES = register_mistakes("dlogits-entry", [
    ("no-1-over-n", "missing-1-over-n", "(p - onehot)", lambda f: f["value"] * f["N"],
     "That leaves out the 1/N = 1/{N} of the mean."),
    ("no-onehot", "softmax-without-onehot", "p / N", lambda f: f["p"] / f["N"],
     "That forgets to subtract the one-hot at the target token."),
    ("negated", "gradient-sign", "(onehot - p) / N", lambda f: -f["value"],
     "That is onehot minus softmax, the negative of the gradient."),
    ("over-vocab", "divide-by-vocab", "(p - onehot) / V", lambda f: f["value"] * f["N"] / f["V"],
     "That divides by V = {V}; the mean runs over the N = {N} positions."),
    ("logit-for-probability", "logits-not-probabilities", "(z - onehot) / N",
     lambda f: (f["logits"][f["row"]][f["column"]] - f["onehot"]) / f["N"],
     "That uses the raw logit where the softmax probability belongs."),
    # Mistakes that move the entry away from zero on its own side: with only the missing 1/N
    # there, the key (negative at the target, positive elsewhere) was rarely the smallest or the
    # largest choice and the 2nd/3rd smallest players found it (322 in 1000, stress seed 99).
    ("log-probability", "log-for-probability", "(ln p - onehot) / N",
     lambda f: (float(np.log(f["p"])) - f["onehot"]) / f["N"],
     "That uses the log-probability ln p = {ln_p_text} where the probability p belongs."),
    ("unnormalised", "softmax-not-normalised", "(e^z - onehot) / N",
     lambda f: (float(np.exp(f["logits"][f["row"]][f["column"]])) - f["onehot"]) / f["N"],
     "That uses the exponential e^z without dividing by the row's sum of exponentials."),
    ("one-fewer-position", "one-fewer-target", "(p - onehot) / (N - 1)",
     lambda f: f["value"] * f["N"] / (f["N"] - 1),
     "Every one of the N = {N} positions has its own target, so the mean divides by N, not N - 1."),
])
#: Each mistake with the sign slip on top, so x / -x pairs appear around wrong values too.
register_sign_slips("dlogits-entry", MISTAKES, "negated",
                    ["no-1-over-n", "no-onehot", "over-vocab", "logit-for-probability",
                     "log-probability", "unnormalised", "one-fewer-position"])


def _logit(f: dict[str, Any]) -> float:
    return float(f["logits"][f["row"]][f["column"]])


#: The entry is a numerator over a divisor, and a mistake of each kind can be made at once.
#: Wrong numerators, by mistake: how it is written and computed.
_NUMERATORS = {
    "no-onehot": ("p", lambda f: f["p"]),
    "logit-for-probability": ("(z - onehot)", lambda f: _logit(f) - f["onehot"]),
    "log-probability": ("(ln p - onehot)", lambda f: float(np.log(f["p"])) - f["onehot"]),
    "unnormalised": ("(e^z - onehot)", lambda f: float(np.exp(_logit(f))) - f["onehot"]),
}
#: Wrong divisors, by mistake: how the division is written and the divisor.
_DIVISORS = {
    "no-1-over-n": ("", lambda f: 1),
    "over-vocab": (" / V", lambda f: f["V"]),
    "one-fewer-position": (" / (N - 1)", lambda f: f["N"] - 1),
}
#: Both slips at once: with the sign slip as the only second mistake, the key was one mistake from
#: every other single and the reader of every one-slip relation (the mistake hub) found it 34% of the
#: time (expected share, seed 99, 300 variants); a wrong numerator over a wrong divisor sits beside
#: both its singles (a square) or beside one of them (a rival hub).
register_double_mistakes("dlogits-entry", MISTAKES, [
    (numerator, divisor, top + bottom,
     (lambda num, div: lambda f: num(f) / div(f))(num, div))
    for numerator, (top, num) in _NUMERATORS.items()
    for divisor, (bottom, div) in _DIVISORS.items()
])


@register_family
class DlogitsEntry(Family):
    name = "dlogits-entry"
    version = 8  # v8: a wrong numerator over a wrong divisor (two slips at once), so the key is not the mistake hub; v7: the log-probability, unnormalised exponentials and N - 1 put mistakes beyond the key on its side; choices at one length
    title = "An entry of the loss gradient"
    summary = "Compute one entry of dlogits = (softmax(logits) - onehot(target)) / N."
    tags = ("gradient", "cross-entropy")

    def build(self, rng: np.random.Generator) -> Draft:
        N = int(rng.integers(2, 5))
        V = int(rng.integers(3, 6))
        logits = rng.integers(-2, 4, size=(N, V)).astype(np.float64)   # (N, V)
        targets = rng.integers(0, V, size=N)                            # (N,)
        i = int(rng.integers(N))
        at_target = bool(rng.random() < 0.5)
        j = int(targets[i]) if at_target else int(rng.choice([v for v in range(V) if v != targets[i]]))
        _, dlogits = cross_entropy_loss(logits[None], targets[None])
        value = float(dlogits[0, i, j])
        p = float(softmax(logits[i])[j])
        onehot = 1.0 if at_target else 0.0
        header = ["position", "target"] + [f"$z_{{\\cdot,{v}}}$" for v in range(V)]
        rows = [[n, int(targets[n])] + [int(z) for z in logits[n]] for n in range(N)]
        stem = (f"The loss is the mean softmax cross-entropy over N = {N} positions, with logits $z$ and "
                f"targets:\n\n{fmt.table(header, rows)}\n\nWhat is "
                f"$\\partial L / \\partial z_{{{i},{j}}}$, the entry of dlogits at position {i}, token {j}?")
        answer = float_answer(value)
        solution = (f"For position {i}, $p = \\operatorname{{softmax}}(z_{i})$ gives $p_{{{j}}} = {fmt.num(p)}$. "
                    f"The target is {int(targets[i])}, so the one-hot entry is {int(onehot)}. Hence "
                    f"$\\partial L/\\partial z_{{{i},{j}}} = (p_{{{j}}} - {int(onehot)})/N = "
                    f"({fmt.num(p)} - {int(onehot)})/{N} = {fmt.num(value)}$.")
        parameters = {"logits": logits.astype(int).tolist(), "targets": targets.tolist(), "row": i, "column": j}
        wrong = wrong_options(MISTAKES, list(MISTAKES), self.facts(parameters), fmt.num_tex)
        # One printed length for every choice: a negative entry (at the target) prints its sign, and
        # the mistakes beyond the key print more figures, so the longest text gave the key away
        # (302 in 959 at seed 12345 once those mistakes were added).
        key_text, shown = at_common_width(value, wrong) or (fmt.num_tex(value), wrong)
        options = numeric_options(rng, answer.value, key_text, shown,
                                  "Correct: softmax minus one-hot, divided by N.")
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """Sizes, the softmax probability and one-hot at the asked entry, and the reference entry."""
        logits = np.asarray(parameters["logits"], dtype=np.float64)          # (N, V)
        targets = np.asarray(parameters["targets"])                           # (N,)
        i, j = parameters["row"], parameters["column"]
        _, dlogits = cross_entropy_loss(logits[None], targets[None])
        N, V = logits.shape
        p = float(softmax(logits[i])[j])
        return {**parameters, "N": N, "V": V, "p": p, "ln_p_text": fmt.num(float(np.log(p))),
                "onehot": 1.0 if int(targets[i]) == j else 0.0, "value": float(dlogits[0, i, j])}

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Central differences of a plain-Python loss: brute force, no formula."""
        params = variant["parameters"]
        i, j = params["row"], params["column"]
        plus = [list(map(float, row)) for row in params["logits"]]
        minus = [list(map(float, row)) for row in params["logits"]]
        plus[i][j] += QUESTION_FD_EPS
        minus[i][j] -= QUESTION_FD_EPS
        targets = params["targets"]
        estimate = (plain_mean_cross_entropy(plus, targets) - plain_mean_cross_entropy(minus, targets)) / (2 * QUESTION_FD_EPS)
        stored = variant["answer"]["value"]
        if abs(stored - estimate) > QUESTION_FD_ATOL:
            return [f"answer is {stored!r}, central differences give {estimate!r}"]
        return []

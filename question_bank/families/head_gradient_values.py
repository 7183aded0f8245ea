"""The LM head's gradient beyond one entry: a full dlogits row, an entry of db_head, an entry of dW_head.

One small batch: N positions with hidden states h (N, C), the head
``z = h @ W_head + b_head`` and targets. Three tasks (``ask``):

* ``dlogits_row``: the whole row ``(softmax(z_n) - onehot(y_n)) / N`` of one position;
* ``db_head``: ``db_head[j] = sum_n dlogits[n, j]``;
* ``dW_head``: ``dW_head[c, j] = sum_n h[n, c] * dlogits[n, j]``.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from autograder.runtime.tolerances import QUESTION_FD_ATOL, QUESTION_FD_EPS
from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import float_answer, plain_mean_cross_entropy
from question_bank.mistakes import register_double_mistakes, register_mistakes, register_sign_slips, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft
from solutions import cross_entropy_loss, lm_head, lm_head_backward, softmax

ASKS = ("dlogits_row", "db_head", "dW_head")

#: Significant figures of each entry of a printed row.
ROW_FIGS = 3


def _row_text(row: Sequence[float]) -> str:
    return "$(" + ", ".join(fmt.num(x, ROW_FIGS) for x in row) + ")$"


#: Every wrong value this family knows: (name, misconception, formula, compute, feedback).
#: ``P`` is softmax(z) per position, ``Y`` the one-hot targets, ``G`` = (P - Y)/N the right dlogits.
MISTAKES = register_mistakes("head-gradient-values", [
    ("dlogits_row/no-onehot", "softmax-without-onehot", "p_n / N",
     lambda f: [p / f["N"] for p in f["P"][f["n"]]],
     "That forgets to subtract 1 at the target token {target}."),
    ("dlogits_row/no-1-over-n", "missing-1-over-n", "p_n - onehot",
     lambda f: [p - y for p, y in zip(f["P"][f["n"]], f["Y"][f["n"]])],
     "That leaves out the 1/N = 1/{N} of the mean."),
    ("dlogits_row/negated", "gradient-sign", "(onehot - p_n) / N",
     lambda f: [-g for g in f["G"][f["n"]]],
     "That is onehot minus softmax, the negative of the gradient."),
    ("dlogits_row/bias-dropped", "logit-bias-dropped", "(softmax(h_n @ W) - onehot) / N",
     lambda f: [(p - y) / f["N"] for p, y in zip(f["P_no_bias"][f["n"]], f["Y"][f["n"]])],
     "The logits include the bias: z = h @ W_head + b_head."),
    ("dlogits_row/logits", "logits-not-probabilities", "(z_n - onehot) / N",
     lambda f: [(z - y) / f["N"] for z, y in zip(f["Z"][f["n"]], f["Y"][f["n"]])],
     "That uses the raw logits where the softmax probabilities belong."),
    ("dlogits_row/over-vocab", "divide-by-vocab", "(p_n - onehot) / V",
     lambda f: [(p - y) / f["V"] for p, y in zip(f["P"][f["n"]], f["Y"][f["n"]])],
     "That divides by V = {V}; the mean runs over the N = {N} positions."),
    # A row prints as the product of its entries to a reader comparing sizes: the key's is negative
    # (one entry below zero, at the target) and only the missing 1/N made a row more negative, so
    # the key was the smallest choice 105 times in 315 (stress -n 1000, seed 99). These mistakes
    # give rows beyond it on its side.
    ("dlogits_row/log-probabilities", "log-for-probability", "(ln p_n - onehot) / N",
     lambda f: [(math.log(p) - y) / f["N"] for p, y in zip(f["P"][f["n"]], f["Y"][f["n"]])],
     "That uses the log-probabilities ln p where the probabilities p belong."),
    ("dlogits_row/unnormalised", "softmax-not-normalised", "(e^z_n - onehot) / N",
     lambda f: [(math.exp(z) - y) / f["N"] for z, y in zip(f["Z"][f["n"]], f["Y"][f["n"]])],
     "That uses the exponentials e^z without dividing by their sum."),
    ("dlogits_row/one-fewer-position", "one-fewer-target", "(p_n - onehot) / (N - 1)",
     lambda f: [(p - y) / (f["N"] - 1) for p, y in zip(f["P"][f["n"]], f["Y"][f["n"]])],
     "Every one of the N = {N} positions has its own target, so the mean divides by N, not N - 1."),
    ("db_head/no-1-over-n", "missing-1-over-n", "sum_n (p_nj - y_nj)",
     lambda f: f["N"] * f["db"],
     "That leaves out the 1/N = 1/{N} of the mean."),
    ("db_head/one-position", "bias-per-position", "dlogits[0, j]",
     lambda f: f["G"][0][f["j"]],
     "That is position 0's entry only; the bias is shared, so its gradient sums all {N} positions."),
    ("db_head/no-onehot", "softmax-without-onehot", "sum_n p_nj / N",
     lambda f: sum(p[f["j"]] for p in f["P"]) / f["N"],
     "That forgets to subtract the one-hot at the positions whose target is {j}."),
    ("db_head/negated", "gradient-sign", "-sum_n dlogits[n, j]",
     lambda f: -f["db"],
     "That is onehot minus softmax, the negative of the gradient."),
    ("db_head/over-vocab", "divide-by-vocab", "sum_n (p_nj - y_nj) / V",
     lambda f: f["N"] * f["db"] / f["V"],
     "That divides by V = {V}; the mean runs over the N = {N} positions."),
    ("db_head/bias-dropped", "logit-bias-dropped", "sum_n (softmax(h_n @ W) - onehot)_j / N",
     lambda f: math.fsum(p[f["j"]] - y[f["j"]] for p, y in zip(f["P_no_bias"], f["Y"])) / f["N"],
     "The logits include the bias: z = h @ W_head + b_head, and the softmax is taken of those."),
    ("dW_head/no-input", "weight-grad-without-input", "sum_n dlogits[n, j]",
     lambda f: f["db"],
     "That is db_head[{j}]; each position's term is multiplied by its input h[n, {c}]."),
    ("dW_head/no-1-over-n", "missing-1-over-n", "sum_n h_nc (p_nj - y_nj)",
     lambda f: f["N"] * f["dW"],
     "That leaves out the 1/N = 1/{N} of the mean."),
    ("dW_head/one-position", "weight-grad-per-position", "h[0, c] * dlogits[0, j]",
     lambda f: f["H"][0][f["c"]] * f["G"][0][f["j"]],
     "That is position 0's term only; the weight is shared, so its gradient sums all {N} positions."),
    ("dW_head/no-onehot", "softmax-without-onehot", "sum_n h_nc p_nj / N",
     lambda f: sum(h[f["c"]] * p[f["j"]] for h, p in zip(f["H"], f["P"])) / f["N"],
     "That forgets to subtract the one-hot at the positions whose target is {j}."),
    ("dW_head/negated", "gradient-sign", "-sum_n h_nc dlogits[n, j]",
     lambda f: -f["dW"],
     "That is onehot minus softmax, the negative of the gradient."),
    ("dW_head/bias-dropped", "logit-bias-dropped", "sum_n h_nc (softmax(h_n @ W) - onehot)_j / N",
     lambda f: math.fsum(h[f["c"]] * (p[f["j"]] - y[f["j"]]) for h, p, y in zip(f["H"], f["P_no_bias"], f["Y"])) / f["N"],
     "The logits include the bias: z = h @ W_head + b_head, and the softmax is taken of those."),
])
#: Each mistake with the sign slip on top, so x / -x pairs appear around wrong values too.
#: A row is a list, which register_sign_slips cannot negate: the row's sign slips are double mistakes.
register_double_mistakes("head-gradient-values", MISTAKES, [
    (name, "dlogits_row/negated", f"-({MISTAKES[name].formula})",
     (lambda compute: lambda f: [-g for g in compute(f)])(MISTAKES[name].compute))
    for name in ("dlogits_row/no-onehot", "dlogits_row/no-1-over-n", "dlogits_row/bias-dropped",
                 "dlogits_row/over-vocab", "dlogits_row/logits", "dlogits_row/log-probabilities",
                 "dlogits_row/unnormalised", "dlogits_row/one-fewer-position")])
#: Two mistakes at once that do not share the sign slip, so no choice (the key, or the sign slip) is one
#: mistake from all the others: with only the pairs above, a reader spotting every one-mistake relation
#: found the key 25 times in 59 dlogits rows (stress -n 200 --seed 99, limit 42%).
register_double_mistakes("head-gradient-values", MISTAKES, [
    ("dlogits_row/no-1-over-n", "dlogits_row/bias-dropped", "softmax(h_n @ W) - onehot",
     lambda f: [p - y for p, y in zip(f["P_no_bias"][f["n"]], f["Y"][f["n"]])]),
    ("dlogits_row/no-1-over-n", "dlogits_row/no-onehot", "p_n",
     lambda f: list(f["P"][f["n"]])),
    ("dlogits_row/no-1-over-n", "dlogits_row/logits", "z_n - onehot",
     lambda f: [z - y for z, y in zip(f["Z"][f["n"]], f["Y"][f["n"]])]),
    ("dlogits_row/no-onehot", "dlogits_row/bias-dropped", "softmax(h_n @ W) / N",
     lambda f: [p / f["N"] for p in f["P_no_bias"][f["n"]]]),
    ("dlogits_row/over-vocab", "dlogits_row/bias-dropped", "(softmax(h_n @ W) - onehot) / V",
     lambda f: [(p - y) / f["V"] for p, y in zip(f["P_no_bias"][f["n"]], f["Y"][f["n"]])]),
    ("dlogits_row/over-vocab", "dlogits_row/no-onehot", "p_n / V",
     lambda f: [p / f["V"] for p in f["P"][f["n"]]]),
    ("dlogits_row/one-fewer-position", "dlogits_row/no-onehot", "p_n / (N - 1)",
     lambda f: [p / (f["N"] - 1) for p in f["P"][f["n"]]]),
    ("dlogits_row/unnormalised", "dlogits_row/no-1-over-n", "e^z_n - onehot",
     lambda f: [math.exp(z) - y for z, y in zip(f["Z"][f["n"]], f["Y"][f["n"]])]),
    ("dlogits_row/log-probabilities", "dlogits_row/no-1-over-n", "ln p_n - onehot",
     lambda f: [math.log(p) - y for p, y in zip(f["P"][f["n"]], f["Y"][f["n"]])]),
    ("db_head/no-1-over-n", "db_head/bias-dropped", "sum_n (softmax(h_n @ W) - onehot)_j",
     lambda f: math.fsum(p[f["j"]] - y[f["j"]] for p, y in zip(f["P_no_bias"], f["Y"]))),
    ("db_head/no-1-over-n", "db_head/no-onehot", "sum_n p_nj",
     lambda f: math.fsum(p[f["j"]] for p in f["P"])),
    ("db_head/no-onehot", "db_head/bias-dropped", "sum_n softmax(h_n @ W)_j / N",
     lambda f: math.fsum(p[f["j"]] for p in f["P_no_bias"]) / f["N"]),
    ("db_head/one-position", "db_head/no-1-over-n", "p_0j - y_0j",
     lambda f: f["P"][0][f["j"]] - f["Y"][0][f["j"]]),
    ("db_head/one-position", "db_head/bias-dropped", "(softmax(h_0 @ W) - onehot)_j / N",
     lambda f: (f["P_no_bias"][0][f["j"]] - f["Y"][0][f["j"]]) / f["N"]),
    ("db_head/over-vocab", "db_head/no-onehot", "sum_n p_nj / V",
     lambda f: math.fsum(p[f["j"]] for p in f["P"]) / f["V"]),
    ("db_head/over-vocab", "db_head/bias-dropped", "sum_n (softmax(h_n @ W) - onehot)_j / V",
     lambda f: math.fsum(p[f["j"]] - y[f["j"]] for p, y in zip(f["P_no_bias"], f["Y"])) / f["V"]),
    ("dW_head/no-1-over-n", "dW_head/bias-dropped", "sum_n h_nc (softmax(h_n @ W) - onehot)_j",
     lambda f: math.fsum(h[f["c"]] * (p[f["j"]] - y[f["j"]]) for h, p, y in zip(f["H"], f["P_no_bias"], f["Y"]))),
    ("dW_head/no-1-over-n", "dW_head/no-onehot", "sum_n h_nc p_nj",
     lambda f: math.fsum(h[f["c"]] * p[f["j"]] for h, p in zip(f["H"], f["P"]))),
    ("dW_head/no-onehot", "dW_head/bias-dropped", "sum_n h_nc softmax(h_n @ W)_j / N",
     lambda f: math.fsum(h[f["c"]] * p[f["j"]] for h, p in zip(f["H"], f["P_no_bias"])) / f["N"]),
    ("dW_head/one-position", "dW_head/no-1-over-n", "h[0, c] * (p_0j - y_0j)",
     lambda f: f["H"][0][f["c"]] * (f["P"][0][f["j"]] - f["Y"][0][f["j"]])),
    ("dW_head/one-position", "dW_head/bias-dropped", "h[0, c] * (softmax(h_0 @ W) - onehot)_j / N",
     lambda f: f["H"][0][f["c"]] * (f["P_no_bias"][0][f["j"]] - f["Y"][0][f["j"]]) / f["N"]),
])
register_sign_slips("head-gradient-values", MISTAKES, "db_head/negated",
                    ["db_head/no-1-over-n", "db_head/one-position", "db_head/no-onehot"])
register_sign_slips("head-gradient-values", MISTAKES, "dW_head/negated",
                    ["dW_head/no-input", "dW_head/no-1-over-n", "dW_head/one-position"])


@register_family
class HeadGradientValues(Family):
    name = "head-gradient-values"
    version = 4  # v4: two mistakes at once without the sign slip, so the key is not the mistake hub; v3: dlogits rows from log-probabilities, unnormalised exponentials and N - 1 (rows beyond the key); v2: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "The head's gradient: a dlogits row, db_head and dW_head"
    summary = "A full row of dlogits, an entry of db_head (summed over positions) or of dW_head (h^T @ dlogits)."
    tags = ("gradient", "lm-head", "cross-entropy")
    subquestion_key = "ask"
    subquestion_values = ASKS

    def build(self, rng: np.random.Generator) -> Draft:
        ask = ASKS[int(rng.integers(len(ASKS)))]
        N, C, V = int(rng.integers(2, 4)), 2, 3
        hidden = rng.integers(-2, 3, size=(N, C)).astype(np.float64)     # (N, C)
        W_head = rng.integers(-1, 3, size=(C, V)).astype(np.float64)     # (C, V)
        b_head = rng.integers(-1, 2, size=V).astype(np.float64)          # (V,)
        targets = rng.integers(0, V, size=N)                             # (N,)
        parameters: dict[str, Any] = {"ask": ask, "hidden": hidden.astype(int).tolist(),
                                      "W_head": W_head.astype(int).tolist(), "b_head": b_head.astype(int).tolist(),
                                      "targets": targets.tolist(),
                                      "n": int(rng.integers(N)), "j": int(rng.integers(V)), "c": int(rng.integers(C))}
        logits = lm_head(hidden[None], W_head, b_head)                   # (1, N, V)
        _, dlogits = cross_entropy_loss(logits, targets[None])           # (1, N, V)
        dW, db, _ = lm_head_backward(hidden[None], W_head, dlogits)      # (C, V), (V,)
        facts = self.facts(parameters)
        n, j, c = parameters["n"], parameters["j"], parameters["c"]
        table = fmt.table(["position", "h", "target"],
                          [[k, "(" + ", ".join(str(int(x)) for x in hidden[k]) + ")", int(targets[k])] for k in range(N)])
        w_table = fmt.table(["W_head"] + [f"token {v}" for v in range(V)],
                            [[f"row {r}"] + [int(w) for w in W_head[r]] for r in range(C)])
        setup = (f"An LM head computes `z = h @ W_head + b_head` for N = {N} positions, and the loss is the "
                 f"mean softmax cross-entropy over them. The hidden states and targets are\n\n{table}\n\n"
                 f"with b_head = ({', '.join(str(int(b)) for b in b_head)}) and\n\n{w_table}\n\n")
        probs = softmax(logits[0])                                        # (N, V)
        shown = "; ".join(f"$p_{{{k}}} = (" + ", ".join(fmt.num(p, ROW_FIGS) for p in probs[k]) + ")$"
                          for k in range(N))
        common = (f"The logits give the softmax rows {shown}. Each dlogits row is "
                  f"$(p_n - \\text{{onehot}}(y_n)) / N$. ")
        if ask == "dlogits_row":
            row = [float(g) for g in dlogits[0, n]]
            stem = setup + f"What is the full row of dlogits at position {n}, $\\partial L / \\partial z_{{{n},:}}$?"
            solution = (common + f"At position {n} the target is {int(targets[n])}, so the row is "
                        f"{_row_text(row)}; its entries sum to 0.")
            wrong = wrong_options(MISTAKES, [k for k in MISTAKES if k.startswith(ask + "/")], facts, _row_text)
            options = numeric_options(rng, row, _row_text(row), wrong,
                                      "Correct: softmax minus one-hot, divided by N, for every token.")
            answer = Answer(kind="single_choice", value=None, display=_row_text(row))
            return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                         mistakes=wrong)
        if ask == "db_head":
            value = float(db[j])
            stem = setup + f"What is db_head[{j}], the gradient of the loss with respect to the bias of token {j}?"
            solution = (common + f"The bias is added at every position, so db_head sums the dlogits rows: "
                        f"db_head[{j}] $= \\sum_n$ dlogits$[n, {j}] = {fmt.num(value)}$.")
            correct = "Correct: the shared bias's gradient sums dlogits over the positions."
        else:
            value = float(dW[c, j])
            stem = setup + (f"What is dW_head[{c}, {j}], the gradient of the loss with respect to the weight "
                            f"from hidden unit {c} to token {j}?")
            solution = (common + f"dW_head = $h^\\top$ dlogits, so dW_head[{c}, {j}] $= \\sum_n h[n, {c}]\\,$"
                        f"dlogits$[n, {j}] = {fmt.num(value)}$.")
            correct = "Correct: each position's dlogits entry times its input, summed over positions."
        wrong = wrong_options(MISTAKES, [k for k in MISTAKES if k.startswith(ask + "/")], facts, fmt.num_tex)
        options = numeric_options(rng, value, fmt.num_tex(value), wrong, correct)
        return Draft(parameters=parameters, stem=stem, answer=float_answer(value), options=options,
                     solution=solution, mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """Logits with and without the bias, their softmax rows, the one-hot targets, dlogits, db and dW entries."""
        H = [[float(x) for x in row] for row in parameters["hidden"]]
        W, b = parameters["W_head"], parameters["b_head"]
        N, V = len(H), len(b)
        no_bias = [[sum(h[r] * W[r][v] for r in range(len(h))) for v in range(V)] for h in H]
        Z = [[z + bv for z, bv in zip(row, b)] for row in no_bias]
        P = [_softmax(row) for row in Z]
        Y = [[1.0 if v == t else 0.0 for v in range(V)] for t in parameters["targets"]]
        G = [[(p - y) / N for p, y in zip(pr, yr)] for pr, yr in zip(P, Y)]
        j, c = parameters["j"], parameters["c"]
        return {**parameters, "H": H, "N": N, "V": V, "Z": Z, "P": P, "P_no_bias": [_softmax(r) for r in no_bias],
                "Y": Y, "G": G, "target": parameters["targets"][parameters["n"]],
                "db": math.fsum(g[j] for g in G), "dW": math.fsum(h[c] * g[j] for h, g in zip(H, G))}

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Central differences of a plain-Python loss in the logits, the bias or the weight: no formula."""
        p = variant["parameters"]

        def loss(W: list[list[float]], b: list[float], shift: tuple[int, int, float] | None = None) -> float:
            logits = [[sum(h[r] * W[r][v] for r in range(len(h))) + b[v] for v in range(len(b))] for h in p["hidden"]]
            if shift is not None:
                logits[shift[0]][shift[1]] += shift[2]
            return plain_mean_cross_entropy(logits, p["targets"])

        W = [list(map(float, row)) for row in p["W_head"]]
        b = list(map(float, p["b_head"]))
        eps = QUESTION_FD_EPS
        if p["ask"] == "dlogits_row":
            expected = [(loss(W, b, (p["n"], v, eps)) - loss(W, b, (p["n"], v, -eps))) / (2 * eps)
                        for v in range(len(b))]
            stored = next(ch["value"] for ch in variant["choices"] if ch["correct"])
            if any(abs(s - e) > QUESTION_FD_ATOL for s, e in zip(stored, expected)) or len(stored) != len(expected):
                return [f"correct row is {stored!r}, central differences give {expected!r}"]
            return []
        if p["ask"] == "db_head":
            plus, minus = list(b), list(b)
            plus[p["j"]] += eps
            minus[p["j"]] -= eps
            estimate = (loss(W, plus) - loss(W, minus)) / (2 * eps)
        else:
            plus, minus = [list(r) for r in W], [list(r) for r in W]
            plus[p["c"]][p["j"]] += eps
            minus[p["c"]][p["j"]] -= eps
            estimate = (loss(plus, b) - loss(minus, b)) / (2 * eps)
        stored = variant["answer"]["value"]
        if abs(stored - estimate) > QUESTION_FD_ATOL:
            return [f"answer is {stored!r}, central differences give {estimate!r}"]
        return []


def _softmax(row: Sequence[float]) -> list[float]:
    top = max(row)
    e = [math.exp(z - top) for z in row]
    total = math.fsum(e)
    return [x / total for x in e]

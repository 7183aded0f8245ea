"""Blocked and allowed query-key pairs of a causal mask."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.errors import Redraw
from question_bank.families._common import check_equal, int_answer
from question_bank.families._hub_pool import least_cued_options
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft, Option
from solutions import causal_mask

ASKS = ("blocked_count", "allowed_count", "blocked_pairs")
#: Heads of the layer in a count question: the mask is one head's, and each head has its own. At
#: least 8, so every head's count prints longer than one head's.
HEADS = (8, 12, 16)
PAIRS_SHOWN = 5

#: Every wrong count this family knows, by what is asked.
MISTAKES = register_mistakes("causal-mask", [
    ("blocked_count/diagonal-blocked", "mask-counts-diagonal", "T(T+1)/2", lambda f: f["T"] * (f["T"] + 1) // 2,
     "A position may attend to itself; the diagonal is allowed."),
    ("blocked_count/both-triangles", "mask-both-triangles", "T^2 - T", lambda f: f["T"] ** 2 - f["T"],
     "Only keys after the query are blocked, one triangle."),
    ("blocked_count/every-pair", "no-mask", "T^2", lambda f: f["T"] ** 2,
     "That is every pair; the mask blocks only the future."),
    ("blocked_count/allowed", "allowed-vs-blocked", "T(T+1)/2 allowed", lambda f: f["T"] * (f["T"] + 1) // 2,
     "That counts the allowed pairs (diagonal and past)."),
    ("blocked_count/fence-post", "positions-off-by-one", "(T-1)(T-2)/2",
     lambda f: (f["T"] - 1) * (f["T"] - 2) // 2, "There are T = {T} positions, so T(T-1)/2 pairs lie above the diagonal."),
    ("blocked_count/first-query", "one-query-only", "T-1", lambda f: f["T"] - 1,
     "That is the first query's blocked keys; query j has T-1-j of them, summed over every query."),
    # A count below the key printed as long as it: the counts below it were T-1 and T-2 (short) and
    # (T-1)(T-2)/2 alone, so the key was the longest text in 86 of 261 (stress -n 1000, seed 12345).
    # Below T = 4 it is no count (0 or negative): the key's own value, never shown.
    ("blocked_count/diagonal-removed-twice", "mask-diagonal-removed-twice", "T(T-3)/2",
     lambda f: f["T"] * (f["T"] - 3) // 2 if f["T"] > 3 else f["T"] * (f["T"] - 1) // 2,
     "T(T-1)/2 already leaves the diagonal out; subtracting its T = {T} pairs again removes them twice."),
    # The pairs of every head's mask: a count several times the key, printed longer than it. Every
    # other count is within a factor of about 2 of T^2/2 or near T, so the key was among the longest
    # texts whenever the length showed (longest text 98 in 284 and 91 in 262, stress -n 1000, seed 12345).
    ("blocked_count/every-head", "mask-counted-per-head", "h T(T-1)/2",
     lambda f: f["heads"] * f["T"] * (f["T"] - 1) // 2,
     "That counts the masks of all {heads} heads; the question asks for one head's mask."),
    ("allowed_count/blocked", "allowed-vs-blocked", "T(T-1)/2", lambda f: f["T"] * (f["T"] - 1) // 2,
     "That counts the blocked (future) pairs."),
    ("allowed_count/every-pair", "no-mask", "T^2", lambda f: f["T"] ** 2,
     "That ignores the mask: future keys are blocked."),
    ("allowed_count/diagonal-only", "attends-only-to-itself", "T", lambda f: f["T"],
     "Each query also sees every earlier key."),
    ("allowed_count/diagonal-blocked", "mask-counts-diagonal", "T(T-1)/2 allowed",
     lambda f: f["T"] * (f["T"] - 1) // 2, "A position may attend to itself; add the diagonal."),
    ("allowed_count/fence-post", "positions-off-by-one", "(T+1)(T+2)/2",
     lambda f: (f["T"] + 1) * (f["T"] + 2) // 2, "There are T = {T} positions, so T(T+1)/2 pairs lie on or below "
     "the diagonal."),
    ("allowed_count/ordered-twice", "mask-both-triangles", "T(T+1)",
     lambda f: f["T"] * (f["T"] + 1), "The allowed pairs are one triangle with its diagonal: halve T(T+1)."),
    ("allowed_count/fence-post-diagonal", "positions-off-by-one", "(T-1)(T-2)/2",
     lambda f: (f["T"] - 1) * (f["T"] - 2) // 2,
     "That uses T-1 positions and leaves the diagonal out; T = {T} positions give T(T+1)/2 allowed pairs."),
    # A fourth count below the key, whose single mistakes below it were only three (T, T(T-1)/2,
    # (T-1)(T-2)/2): the key was the 3rd smallest 107 times in 331 (stress -n 1000, seed 12345).
    ("allowed_count/last-query-earlier-keys", "one-query-only", "T-1", lambda f: f["T"] - 1,
     "That is the keys before the last query only; query j sees j+1 keys (itself included), summed over "
     "every query."),
    # One position too few: the same count as the blocked pairs, so a choice T(T-1)/2 is one mistake
    # from every choice one position short too (T-1 alone, (T-1)(T-2)/2).
    ("allowed_count/fewer-positions", "positions-off-by-one", "(T-1)T/2", lambda f: (f["T"] - 1) * f["T"] // 2,
     "That counts T-1 positions; T = {T} positions give T(T+1)/2 allowed pairs."),
    ("allowed_count/every-head", "mask-counted-per-head", "h T(T+1)/2",
     lambda f: f["heads"] * f["T"] * (f["T"] + 1) // 2,
     "That counts the masks of all {heads} heads; the question asks for one head's mask."),
])


#: Wrong counts doubled too (both triangles, or ordered pairs): the key is then not the only
#: value whose double is a choice (the half-of-double player), nor the one every other count is
#: one slip away from (the hub player).
register_double_mistakes("causal-mask", MISTAKES, [
    ("blocked_count/fence-post", "blocked_count/both-triangles", "(T-1)(T-2)",
     lambda f: (f["T"] - 1) * (f["T"] - 2)),
    ("blocked_count/allowed", "blocked_count/both-triangles", "T(T+1)", lambda f: f["T"] * (f["T"] + 1)),
    # one more count below the key, which has only two single mistakes below it (the 3rd-smallest player)
    ("blocked_count/first-query", "blocked_count/fence-post", "T-2", lambda f: f["T"] - 2),
    # a count above the key and at least as long (the longest player: most shorter counts lie below it)
    ("blocked_count/every-pair", "blocked_count/fence-post", "(T-1)^2", lambda f: (f["T"] - 1) ** 2),
    # both triangles with the diagonal taken out twice, or for the first query alone (its row and
    # its column): counts one mistake from a single, not from the key (the mistake hub)
    ("blocked_count/diagonal-removed-twice", "blocked_count/both-triangles", "T(T-3)",
     lambda f: f["T"] * (f["T"] - 3) if f["T"] > 3 else f["T"] * (f["T"] - 1)),
    ("blocked_count/first-query", "blocked_count/both-triangles", "2(T-1)", lambda f: 2 * (f["T"] - 1)),
    ("allowed_count/blocked", "allowed_count/ordered-twice", "T(T-1)", lambda f: f["T"] * (f["T"] - 1)),
    ("allowed_count/fence-post", "allowed_count/ordered-twice", "(T+1)(T+2)",
     lambda f: (f["T"] + 1) * (f["T"] + 2)),
    ("allowed_count/fence-post-diagonal", "allowed_count/ordered-twice", "(T-1)(T-2)",
     lambda f: (f["T"] - 1) * (f["T"] - 2)),
    # counts a single mistake away from a single, not from the key (the mistake hub found the
    # allowed count 38 times in 75, stress -n 200 --seed 99): T+1 positions with only the diagonal
    # or with every pair
    ("allowed_count/fence-post", "allowed_count/diagonal-only", "T+1", lambda f: f["T"] + 1),
    ("allowed_count/fence-post", "allowed_count/every-pair", "(T+1)^2", lambda f: (f["T"] + 1) ** 2),
    # every head's mask with another slip: long counts one mistake from a single, not from the key
    ("blocked_count/every-head", "blocked_count/both-triangles", "h T(T-1)",
     lambda f: f["heads"] * f["T"] * (f["T"] - 1)),
    ("blocked_count/every-head", "blocked_count/diagonal-blocked", "h T(T+1)/2",
     lambda f: f["heads"] * f["T"] * (f["T"] + 1) // 2),
    ("blocked_count/every-head", "blocked_count/every-pair", "h T^2", lambda f: f["heads"] * f["T"] ** 2),
    # counts below the key reached both as a single and as two mistakes (T-1 positions with only the
    # diagonal, or with the blocked triangle): the key had few counts below it linked to anything but
    # itself, and was the 2nd smallest too often (0.32 of the fitted draw, 1,000 variants, seed 12345)
    ("allowed_count/diagonal-only", "allowed_count/fewer-positions", "T-1", lambda f: f["T"] - 1),
    ("allowed_count/blocked", "allowed_count/fewer-positions", "(T-1)(T-2)/2",
     lambda f: (f["T"] - 1) * (f["T"] - 2) // 2),
    ("allowed_count/every-head", "allowed_count/blocked", "h T(T-1)/2",
     lambda f: f["heads"] * f["T"] * (f["T"] - 1) // 2),
])

@register_family
class CausalMask(Family):
    name = "causal-mask"
    version = 9  # v9: the stem names the layer's heads and asks for one head's mask; counting every head's mask is a mistake (a count printed longer than the key, which was among the longest texts whenever the length showed); v8: two-mistake counts one slip from a single (T+1, (T+1)^2, T(T-3), 2(T-1)) and a pool of its known mistakes chosen for the draw (the mistake hub); v7: a fourth allowed count below the key (T-1), a blocked count above it ((T-1)^2); v6: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Allowed and blocked pairs of a causal mask"
    summary = "Count blocked or allowed query-key pairs for T positions, or pick the blocked pairs."
    tags = ("attention", "causal-mask")
    subquestion_key = "ask"
    subquestion_values = ASKS

    def build(self, rng: np.random.Generator) -> Draft:
        ask = ASKS[int(rng.integers(len(ASKS)))]
        if ask == "blocked_pairs":
            return self._pairs(rng)
        T = int(rng.integers(2, 201))
        heads = int(HEADS[int(rng.integers(len(HEADS)))])
        mask = causal_mask(T)                     # (T, T), True where blocked
        blocked = int(mask.sum())
        allowed = int((~mask).sum())
        stem = (f"A causal self-attention layer with {heads} heads processes T = {T} positions. Counting "
                "every (query, key) pair of one head's mask, including a position with itself, ")
        if ask == "blocked_count":
            stem += "how many pairs does the causal mask **block**?"
            value = blocked
        else:
            stem += "how many pairs remain **allowed**?"
            value = allowed
        solution = (f"Query j may see keys k <= j, so the mask blocks the strict upper triangle: "
                    f"T(T-1)/2 = {fmt.integer(blocked)} pairs blocked, and T(T+1)/2 = {fmt.integer(allowed)} "
                    f"allowed (diagonal included), out of T^2 = {fmt.integer(T * T)}. Each of the {heads} heads "
                    "applies this same mask to its own scores; the count is per head.")
        parameters = {"ask": ask, "T": T, "heads": heads}
        wrong = wrong_options(MISTAKES, [k for k in MISTAKES if k.startswith(ask + "/")], parameters, fmt.integer)
        options = least_cued_options(rng, value, fmt.integer(value), wrong,
                                     "Correct: only keys after the query are blocked.")
        return Draft(parameters=parameters, stem=stem, answer=int_answer(value, unit="pairs"),
                     options=options, solution=solution, mistakes=wrong)

    def _pairs(self, rng: np.random.Generator) -> Draft:
        T = int(rng.integers(3, 9))
        mask = causal_mask(T)
        flat = rng.choice(T * T, size=PAIRS_SHOWN, replace=False)
        pairs = [(int(x) // T, int(x) % T) for x in flat]          # (query j, key k)
        flags = [bool(mask[j, k]) for j, k in pairs]
        if all(flags) or not any(flags):
            raise Redraw("the shown pairs are all of one kind")
        options = []
        for (j, k), blocked in zip(pairs, flags):
            text = f"query {j}, key {k}"
            if blocked:
                options.append(Option(value=[j, k], text=text, correct=True,
                                      feedback=f"Correct: key {k} comes after query {j}."))
            elif j == k:
                options.append(Option(value=[j, k], text=text, correct=False, misconception="mask-counts-diagonal",
                                      feedback="A position may attend to itself."))
            else:
                options.append(Option(value=[j, k], text=text, correct=False, misconception="mask-blocks-past",
                                      feedback=f"Key {k} comes before query {j}, so it is visible."))
        stem = (f"A causal mask is applied to T = {T} positions numbered 0 to {T - 1}. Which of these "
                "(query, key) pairs does it **block**? Select all that apply.")
        solution = ("The mask blocks key k for query j exactly when k > j (a future position); the diagonal "
                    "and earlier keys stay visible. Blocked here: "
                    + ", ".join(f"({j}, {k})" for (j, k), b in zip(pairs, flags) if b) + ".")
        answer = Answer(kind="multiple_choice", value=None, display="the pairs with key > query")
        return Draft(parameters={"ask": "blocked_pairs", "T": T, "pairs": [list(p) for p in pairs]},
                     stem=stem, answer=answer, options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        T = p["T"]
        # Brute force over every (query, key) pair.
        blocked = sum(1 for j in range(T) for k in range(T) if k > j)
        if p["ask"] == "blocked_count":
            return check_equal(variant["answer"]["value"], blocked)
        if p["ask"] == "allowed_count":
            return check_equal(variant["answer"]["value"], T * T - blocked)
        return [f"choice {c['value']} marked correct={c['correct']}" for c in variant["choices"]
                if c["correct"] != (c["value"][1] > c["value"][0])]

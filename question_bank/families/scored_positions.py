"""How many positions a padded batch scores (the denominator of the mean loss)."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.errors import Redraw
from question_bank.families._common import WORDS, check_equal, int_answer
from question_bank.families._hub_pool import hub_fair_pool
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import masked_cross_entropy, next_token_batch

PAD = 0

#: The vocabulary of the batch: the corpus words and the padding token.
VOCAB = len(WORDS) + 1


def scored_by_reference(lengths: list[int], padded: int, vocab: int) -> int:
    """Scored positions according to the reference: rows whose loss gradient is non-zero.

    Rows are right-padded to ``padded`` tokens and laid end to end; inputs and
    targets come from ``next_token_batch`` (targets = inputs shifted by one),
    positions whose target is padding are masked out, and the masked loss
    gives a non-zero gradient row exactly where a position is scored.
    """
    rows = [[1 + (b + t) % (vocab - 1) for t in range(n)] + [PAD] * (padded - n) for b, n in enumerate(lengths)]
    data = np.array([tok for row in rows for tok in row], dtype=np.int64)
    offsets = np.arange(len(lengths)) * padded
    xb, yb = next_token_batch(data, offsets, padded - 1)       # (B, P-1) each
    mask = yb != PAD
    _, dlogits = masked_cross_entropy(np.zeros((*yb.shape, vocab)), yb, mask)
    return int(np.count_nonzero(np.abs(dlogits).sum(axis=-1)))


#: Every wrong count this family knows.
MISTAKES = register_mistakes("scored-positions", [
    ("every-input-position", "padding-scored", "B*(P-1)", lambda f: len(f["lengths"]) * (f["padded_length"] - 1),
     "That counts every input position, padding targets included."),
    ("every-real-token", "last-token-scored", "sum L", lambda f: sum(f["lengths"]),
     "A sequence of L tokens has only L-1 next-token targets."),
    ("every-slot", "counts-all-slots", "B*P", lambda f: len(f["lengths"]) * f["padded_length"],
     "That counts every slot of the padded batch."),
    ("two-short-per-row", "one-fewer-target", "sum (L - 2)", lambda f: sum(f["lengths"]) - 2 * len(f["lengths"]),
     "A sequence of L tokens has L-1 next-token targets, not L-2."),
    ("shortest-row", "truncated-to-shortest", "B*(min L - 1)",
     lambda f: len(f["lengths"]) * (min(f["lengths"]) - 1), "Each row scores its own L-1 positions."),
    ("first-row-only", "one-row-only", "L_0 - 1", lambda f: f["lengths"][0] - 1,
     "That is the first sequence's scored positions; add every row's L-1."),
    # More counts near the key and on both sides of it. With six mistakes the printed length of a
    # count follows its value, so the key was the longest choice (or tied for it) too often: the
    # longest player found it 187 times in 605 (stress -n 1000 --seed 0).
    ("one-sequence", "last-token-scored", "sum L - 1", lambda f: sum(f["lengths"]) - 1,
     "The rows are separate sequences: each one's last real token predicts nothing, not only the batch's last."),
    ("longest-row", "padding-scored", "B*(max L - 1)",
     lambda f: len(f["lengths"]) * (max(f["lengths"]) - 1),
     "That scores every row as if it were as long as the longest; the shorter rows' padding targets are left out."),
    ("last-row-only", "one-row-only", "L_last - 1", lambda f: f["lengths"][-1] - 1,
     "That is the last sequence's scored positions; add every row's L-1."),
    ("padding-only", "padding-scored", "B*(P-1) - sum (L - 1)",
     lambda f: len(f["lengths"]) * (f["padded_length"] - 1) - sum(n - 1 for n in f["lengths"]),
     "That counts the positions whose target is padding, the ones the mask leaves out; N counts the others."),
    # The mean taken over every logit: a count with more digits than the key, so the key is not
    # always the longest printed count when it is the largest.
    ("every-logit", "divide-by-vocab", "sum (L - 1) * V", lambda f: sum(n - 1 for n in f["lengths"]) * f["V"],
     "That divides by every logit of the scored positions; the mean runs over the N positions, not over "
     "the V = {V} vocabulary entries of each."),
])
#: Two mistakes at once, each sharing a mistake with a single: with single mistakes only (and one
#: double) the key was one mistake from nearly every other choice and they from it alone, so the
#: reader who spots the one-slip relations found it 156 times in 200 (stress -n 200 --seed 99).
#: Each is the count a student gets by making both (one row, L targets, the mean over every logit).
register_double_mistakes("scored-positions", MISTAKES, [
    ("every-input-position", "every-logit", "B*(P-1)*V",
     lambda f: len(f["lengths"]) * (f["padded_length"] - 1) * f["V"]),
    ("every-real-token", "every-logit", "sum L * V", lambda f: sum(f["lengths"]) * f["V"]),
    ("first-row-only", "every-logit", "(L_0 - 1) * V", lambda f: (f["lengths"][0] - 1) * f["V"]),
    ("first-row-only", "every-real-token", "L_0", lambda f: f["lengths"][0]),
    ("last-row-only", "every-real-token", "L_last", lambda f: f["lengths"][-1]),
    ("shortest-row", "every-real-token", "B*min L", lambda f: len(f["lengths"]) * min(f["lengths"])),
    ("longest-row", "every-real-token", "B*max L", lambda f: len(f["lengths"]) * max(f["lengths"])),
    ("two-short-per-row", "every-logit", "sum (L - 2) * V",
     lambda f: (sum(f["lengths"]) - 2 * len(f["lengths"])) * f["V"]),
    ("first-row-only", "two-short-per-row", "L_0 - 2", lambda f: f["lengths"][0] - 2),
    ("last-row-only", "two-short-per-row", "L_last - 2", lambda f: f["lengths"][-1] - 2),
    ("shortest-row", "two-short-per-row", "B*(min L - 2)", lambda f: len(f["lengths"]) * (min(f["lengths"]) - 2)),
    ("longest-row", "two-short-per-row", "B*(max L - 2)", lambda f: len(f["lengths"]) * (max(f["lengths"]) - 2)),
])


@register_family
class ScoredPositions(Family):
    name = "scored-positions"
    version = 8  # v8: twelve two-mistake counts, and a pool the draw can keep off the mistake hub; v7: more counts near the key and on both sides of it (one sequence, longest row, padding only)
    title = "Scored positions with padding"
    summary = "Count the positions a padded batch scores: each sequence of L tokens gives L-1 predictions."
    tags = ("targets", "padding", "cross-entropy")

    def build(self, rng: np.random.Generator) -> Draft:
        B = int(rng.integers(2, 7))
        P = int(rng.integers(4, 17))
        lengths = [int(n) for n in rng.integers(2, P + 1, size=B)]
        if min(lengths) == P:
            raise Redraw("no padding in the batch")
        value = scored_by_reference(lengths, P, vocab=VOCAB)
        rows = []
        for b, n in enumerate(lengths):
            words = [WORDS[int(k)] for k in rng.integers(len(WORDS), size=n)]
            rows.append([b, n, "`" + " ".join(words + ["<pad>"] * (P - n)) + "`"])
        stem = (f"A batch holds B = {B} sequences, right-padded with `<pad>` to {P} tokens:\n\n"
                f"{fmt.table(['row', 'real tokens', 'padded sequence'], rows)}\n\n"
                f"Training uses inputs `row[:-1]` and targets `row[1:]` ({P - 1} positions per row), the model "
                f"gives logits of shape (B, {P - 1}, V) over a vocabulary of V = {VOCAB} tokens, and the loss "
                "excludes every position whose target is `<pad>`. How many positions enter the mean of the "
                "loss, i.e. what is its denominator N?")
        solution = ("A sequence of L real tokens gives L-1 predictions with a real target. "
                    "N = " + " + ".join(f"({n}-1)" for n in lengths) + f" = {value}. Padding is left out "
                    "of both the sum and the denominator, and its gradient is zero.")
        parameters = {"lengths": lengths, "padded_length": P}
        wrong = wrong_options(MISTAKES, list(MISTAKES), self.facts(parameters), fmt.integer)
        options = numeric_options(rng, value, fmt.integer(value), hub_fair_pool(rng, value, fmt.integer(value), wrong),
                                  "Correct: each sequence contributes its length minus one.", ways=wrong)
        return Draft(parameters=parameters, stem=stem, answer=int_answer(value, unit="positions"),
                     options=options, solution=solution, mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The parameters and the vocabulary size the stem states."""
        return {**parameters, "V": VOCAB}

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        P = p["padded_length"]
        # Brute force: walk each padded row and count positions with a real next token.
        total = 0
        for n in p["lengths"]:
            row = [1] * n + [PAD] * (P - n)
            total += sum(1 for t in range(P - 1) if row[t + 1] != PAD)
        return check_equal(variant["answer"]["value"], total)

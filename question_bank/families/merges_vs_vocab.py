"""BPE merges against vocabulary size (and what the vocabulary costs in parameters)."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import check_equal, int_answer
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import build_vocab, gpt_param_count

ASKS = ("vocab_size", "merges_needed", "embedding_params")


def draw_alphabet(rng: np.random.Generator) -> tuple[int, str]:
    """Base alphabet size and its description: bytes, the course's characters, or a generic set."""
    pick = rng.random()
    if pick < 0.4:
        return 256, "all 256 byte values"
    if pick < 0.6:
        return len(build_vocab()[0]), "the characters of the course corpus"
    size = int(rng.integers(30, 301))
    return size, f"{size} base characters"


@register_family
class MergesVsVocab(Family):
    name = "merges-vs-vocab"
    title = "BPE merges and vocabulary size"
    summary = "Relate BPE merges, base alphabet and special tokens to vocabulary size and embedding parameters."
    tags = ("tokenization", "parameters")

    def build(self, rng: np.random.Generator) -> Draft:
        base, alphabet = draw_alphabet(rng)
        merges = int(rng.integers(100, 60001))
        specials = int(rng.integers(1, 5))
        vocab = base + merges + specials          # each merge adds exactly one new symbol
        ask = ASKS[int(rng.integers(len(ASKS)))]
        setup = (f"A BPE tokenizer starts from {alphabet} (base alphabet of {base} symbols) and reserves "
                 f"{specials} special token{'s' if specials > 1 else ''} (start, delimiter, end, ...).")
        params: dict[str, Any] = {"ask": ask, "base": base, "specials": specials}
        if ask == "vocab_size":
            params["merges"] = merges
            stem = f"{setup} Training performs {fmt.integer(merges)} merges. How large is the final vocabulary?"
            value = vocab
            candidates = [
                ("merges-equal-vocab", merges, "The merges add to the base alphabet; they are not the vocabulary."),
                ("forgot-special-tokens", base + merges, "The special tokens need rows too."),
                ("forgot-base-alphabet", merges + specials, "The base symbols stay in the vocabulary."),
            ]
        elif ask == "merges_needed":
            params["vocab_size"] = vocab
            stem = f"{setup} How many merges give a final vocabulary of exactly {fmt.integer(vocab)} tokens?"
            value = merges
            candidates = [
                ("merges-equal-vocab", vocab, "The vocabulary also holds the base alphabet and special tokens."),
                ("forgot-special-tokens", vocab - base, "The special tokens take vocabulary entries as well."),
                ("forgot-base-alphabet", vocab - specials, "The base alphabet is already in the vocabulary."),
            ]
        else:
            d = 64 * int(rng.integers(2, 17))
            params.update(merges=merges, n_embd=d)
            stem = (f"{setup} Training performs {fmt.integer(merges)} merges, and the model has width d = {d}. "
                    "How many parameters does the token embedding table have?")
            # block_size 0 and no layers leave only the token table in the count.
            value = gpt_param_count(vocab, 0, d, 0, 0)["embeddings"]
            candidates = [
                ("merges-equal-vocab", merges * d, "The table has one row per vocabulary entry, not per merge."),
                ("forgot-special-tokens", (base + merges) * d, "Special tokens have embedding rows too."),
                ("tied-counted-twice", 2 * vocab * d, "The question asks for the token table alone."),
            ]
        solution = (f"Each merge creates one new symbol, so vocabulary = base + merges + specials = "
                    f"{base} + {fmt.integer(merges)} + {specials} = {fmt.integer(vocab)}."
                    + (f" The token table has V x d = {fmt.integer(vocab)} x {params['n_embd']} = "
                       f"{fmt.integer(value)} parameters." if ask == "embedding_params" else "")
                    + " GPT-1, for example, used 40,000 merges but a 40,478-entry vocabulary.")
        options = numeric_options(rng, value, fmt.integer(value), candidates, fmt.integer,
                                  "Correct: the vocabulary is base alphabet + merges + special tokens.")
        return Draft(parameters=params, stem=stem, answer=int_answer(value), options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        # The answers are sums and products of the parameters: recompute them
        # from the definition (base + merges + specials), without the reference.
        p = variant["parameters"]
        if p["ask"] == "merges_needed":
            return check_equal(variant["answer"]["value"], p["vocab_size"] - p["base"] - p["specials"])
        vocab = p["base"] + p["merges"] + p["specials"]
        expected = vocab if p["ask"] == "vocab_size" else vocab * p["n_embd"]
        return check_equal(variant["answer"]["value"], expected)

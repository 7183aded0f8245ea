"""BPE merges against vocabulary size (and what the vocabulary costs in parameters)."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.families._common import check_equal, int_answer
from question_bank.families._hub_pool import FEW_POOL_TRIES, least_cued_options
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import build_vocab, gpt_param_count

ASKS = ("vocab_size", "merges_needed", "embedding_params")

#: Every wrong value this family knows, by what is asked; ``vocab`` = base + merges + specials.
MISTAKES = register_mistakes("merges-vs-vocab", [
    ("vocab_size/merges", "merges-equal-vocab", "merges", lambda f: f["merges"],
     "The merges add to the base alphabet; they are not the vocabulary."),
    ("vocab_size/no-specials", "forgot-special-tokens", "base + merges", lambda f: f["base"] + f["merges"],
     "The special tokens need rows too."),
    ("vocab_size/no-base", "forgot-base-alphabet", "merges + specials", lambda f: f["merges"] + f["specials"],
     "The base symbols stay in the vocabulary."),
    ("vocab_size/merge-adds-two", "merge-adds-two-tokens", "base + 2*merges + specials",
     lambda f: f["base"] + 2 * f["merges"] + f["specials"], "Each merge adds one token, not two."),
    ("vocab_size/byte-base", "assumed-byte-alphabet", "256 + merges + specials",
     lambda f: 256 + f["merges"] + f["specials"], "The base alphabet here has {base} symbols, not 256."),
    ("merges_needed/vocab", "merges-equal-vocab", "vocab", lambda f: f["vocab"],
     "The vocabulary also holds the base alphabet and special tokens."),
    ("merges_needed/no-specials", "forgot-special-tokens", "vocab - base", lambda f: f["vocab"] - f["base"],
     "The special tokens take vocabulary entries as well."),
    ("merges_needed/no-base", "forgot-base-alphabet", "vocab - specials", lambda f: f["vocab"] - f["specials"],
     "The base alphabet is already in the vocabulary."),
    ("merges_needed/merge-adds-two", "merge-adds-two-tokens", "(vocab - base - specials) // 2",
     lambda f: (f["vocab"] - f["base"] - f["specials"]) // 2, "Each merge adds one token, so no halving."),
    ("merges_needed/byte-base", "assumed-byte-alphabet", "vocab - 256 - specials",
     lambda f: f["vocab"] - 256 - f["specials"], "The base alphabet here has {base} symbols, not 256."),
    ("embedding_params/rows-per-merge", "merges-equal-vocab", "merges*d", lambda f: f["merges"] * f["n_embd"],
     "The table has one row per vocabulary entry, not per merge."),
    ("embedding_params/no-specials", "forgot-special-tokens", "(base + merges)*d",
     lambda f: (f["base"] + f["merges"]) * f["n_embd"], "Special tokens have embedding rows too."),
    ("embedding_params/two-tables", "tied-counted-twice", "2*vocab*d", lambda f: 2 * f["vocab"] * f["n_embd"],
     "The question asks for the token table alone."),
    ("embedding_params/merge-adds-two", "merge-adds-two-tokens", "(base + 2*merges + specials)*d",
     lambda f: (f["base"] + 2 * f["merges"] + f["specials"]) * f["n_embd"], "Each merge adds one row, not two."),
    ("embedding_params/byte-base", "assumed-byte-alphabet", "(256 + merges + specials)*d",
     lambda f: (256 + f["merges"] + f["specials"]) * f["n_embd"], "The base alphabet here has {base} symbols, not 256."),
    ("vocab_size/base-twice", "base-counted-twice", "2*base + merges + specials",
     lambda f: 2 * f["base"] + f["merges"] + f["specials"], "The {base} base symbols are counted once."),
    ("merges_needed/base-twice", "base-counted-twice", "vocab - 2*base - specials",
     lambda f: f["vocab"] - 2 * f["base"] - f["specials"], "The {base} base symbols are subtracted once."),
    ("embedding_params/base-twice", "base-counted-twice", "(2*base + merges + specials)*d",
     lambda f: (2 * f["base"] + f["merges"] + f["specials"]) * f["n_embd"], "The {base} base symbols have one row each."),
    ("embedding_params/rows-only", "rows-not-parameters", "vocab",
     lambda f: f["vocab"], "Each of the {vocab} rows holds d = {n_embd} parameters."),
    # Mistakes on the side of the key that had fewest (below the vocabulary and its table, above the
    # merges): there the only sets were single mistakes around the key, so the key was the mistake hub
    # or the smallest (vocabulary size) far above chance; the doubles below share them.
    ("vocab_size/specials-sign", "sign-slip-parts", "base + merges - specials",
     lambda f: f["base"] + f["merges"] - f["specials"], "The {specials} special tokens are added, not subtracted."),
    ("vocab_size/base-sign", "sign-slip-parts", "merges - base + specials",
     lambda f: f["merges"] - f["base"] + f["specials"], "The {base} base symbols are added, not subtracted."),
    ("embedding_params/specials-sign", "sign-slip-parts", "(base + merges - specials)*d",
     lambda f: (f["base"] + f["merges"] - f["specials"]) * f["n_embd"],
     "The {specials} special tokens add rows; they are not subtracted."),
    ("embedding_params/base-sign", "sign-slip-parts", "(merges - base + specials)*d",
     lambda f: (f["merges"] - f["base"] + f["specials"]) * f["n_embd"],
     "The {base} base symbols add rows; they are not subtracted."),
    # and above the table: its count in float32 bytes, so the key is not rarely the longest number
    ("embedding_params/float32-bytes", "bytes-not-parameters", "4*vocab*d",
     lambda f: 4 * f["vocab"] * f["n_embd"], "That is the table's size in float32 bytes; each parameter is one number."),
    ("merges_needed/specials-sign", "sign-slip-parts", "vocab - base + specials",
     lambda f: f["vocab"] - f["base"] + f["specials"], "The {specials} special tokens are subtracted, not added."),
    ("merges_needed/base-sign", "sign-slip-parts", "vocab + base - specials",
     lambda f: f["vocab"] + f["base"] - f["specials"], "The {base} base symbols are subtracted, not added."),
])


def draw_alphabet(rng: np.random.Generator) -> tuple[int, str]:
    """Base alphabet size and its description: bytes, the course's characters, or a generic set."""
    pick = rng.random()
    if pick < 0.4:
        return 256, "all 256 byte values"
    if pick < 0.6:
        return len(build_vocab()[0]), "the characters of the course corpus"
    size = int(rng.integers(30, 301))
    return size, f"{size} base characters"

#: Two mistakes at once, on the side of the key that has too few single mistakes (below the
#: merges needed, above the vocabulary size), so the key is not rarely the smallest or largest.
register_double_mistakes("merges-vs-vocab", MISTAKES, [
    ("merges_needed/merge-adds-two", "merges_needed/no-specials", "(vocab - base) // 2",
     lambda f: (f["vocab"] - f["base"]) // 2),
    ("vocab_size/merge-adds-two", "vocab_size/base-twice", "2*base + 2*merges + specials",
     lambda f: 2 * f["base"] + 2 * f["merges"] + f["specials"]),
])

#: Wrong tables counted twice too: the key is then not the only count whose double is a choice
#: (the half-of-double player, who reads the double as the tied table counted twice); and one
#: more count of merges below the key, whose single mistakes mostly lie above it (the smallest player).
register_double_mistakes("merges-vs-vocab", MISTAKES, [
    ("merges_needed/base-twice", "merges_needed/no-specials", "vocab - 2*base",
     lambda f: f["vocab"] - 2 * f["base"]),
    ("embedding_params/two-tables", "embedding_params/no-specials", "2*(base + merges)*d",
     lambda f: 2 * (f["base"] + f["merges"]) * f["n_embd"]),
])

#: Two mistakes at once that share a mistake with a single one, several on the same one (each merge
#: counted as two tokens, the special tokens left out, the table counted twice or as rows only). With
#: single mistakes only, the key is the one choice a mistake away from every other, and a reader who
#: spots the one-mistake relations finds it (the vocabulary size 51 times in 60 at seed 99); a set
#: such as {m1, m1+m2, m1+m3} makes m1 that choice, {m1, m1+m2, m3} ties it with the key.
register_double_mistakes("merges-vs-vocab", MISTAKES, [
    ("vocab_size/merge-adds-two", "vocab_size/no-specials", "base + 2*merges",
     lambda f: f["base"] + 2 * f["merges"]),
    ("vocab_size/merge-adds-two", "vocab_size/no-base", "2*merges + specials",
     lambda f: 2 * f["merges"] + f["specials"]),
    ("vocab_size/merge-adds-two", "vocab_size/byte-base", "256 + 2*merges + specials",
     lambda f: 256 + 2 * f["merges"] + f["specials"]),
    ("vocab_size/base-twice", "vocab_size/no-specials", "2*base + merges",
     lambda f: 2 * f["base"] + f["merges"]),
    ("vocab_size/byte-base", "vocab_size/no-specials", "256 + merges",
     lambda f: 256 + f["merges"]),
    ("merges_needed/merge-adds-two", "merges_needed/no-base", "(vocab - specials) // 2",
     lambda f: (f["vocab"] - f["specials"]) // 2),
    ("merges_needed/merge-adds-two", "merges_needed/byte-base", "(vocab - 256 - specials) // 2",
     lambda f: (f["vocab"] - 256 - f["specials"]) // 2),
    ("merges_needed/merge-adds-two", "merges_needed/base-twice", "(vocab - 2*base - specials) // 2",
     lambda f: (f["vocab"] - 2 * f["base"] - f["specials"]) // 2),
    ("merges_needed/byte-base", "merges_needed/no-specials", "vocab - 256",
     lambda f: f["vocab"] - 256),
    ("embedding_params/two-tables", "embedding_params/merge-adds-two", "2*(base + 2*merges + specials)*d",
     lambda f: 2 * (f["base"] + 2 * f["merges"] + f["specials"]) * f["n_embd"]),
    ("embedding_params/two-tables", "embedding_params/base-twice", "2*(2*base + merges + specials)*d",
     lambda f: 2 * (2 * f["base"] + f["merges"] + f["specials"]) * f["n_embd"]),
    ("embedding_params/two-tables", "embedding_params/byte-base", "2*(256 + merges + specials)*d",
     lambda f: 2 * (256 + f["merges"] + f["specials"]) * f["n_embd"]),
    ("embedding_params/rows-only", "embedding_params/no-specials", "base + merges",
     lambda f: f["base"] + f["merges"]),
    ("embedding_params/rows-only", "embedding_params/merge-adds-two", "base + 2*merges + specials",
     lambda f: f["base"] + 2 * f["merges"] + f["specials"]),
    ("embedding_params/merge-adds-two", "embedding_params/no-specials", "(base + 2*merges)*d",
     lambda f: (f["base"] + 2 * f["merges"]) * f["n_embd"]),
    ("embedding_params/base-twice", "embedding_params/no-specials", "(2*base + merges)*d",
     lambda f: (2 * f["base"] + f["merges"]) * f["n_embd"]),
])

#: Two mistakes sharing one of the mistakes above, so a set of them there need not make the key the hub.
register_double_mistakes("merges-vs-vocab", MISTAKES, [
    ("vocab_size/specials-sign", "vocab_size/no-base", "merges - specials", lambda f: f["merges"] - f["specials"]),
    ("vocab_size/base-sign", "vocab_size/no-specials", "merges - base", lambda f: f["merges"] - f["base"]),
    ("vocab_size/base-sign", "vocab_size/specials-sign", "merges - base - specials",
     lambda f: f["merges"] - f["base"] - f["specials"]),
    ("embedding_params/specials-sign", "embedding_params/rows-only", "base + merges - specials",
     lambda f: f["base"] + f["merges"] - f["specials"]),
    ("embedding_params/base-sign", "embedding_params/no-specials", "(merges - base)*d",
     lambda f: (f["merges"] - f["base"]) * f["n_embd"]),
    ("embedding_params/base-sign", "embedding_params/two-tables", "2*(merges - base + specials)*d",
     lambda f: 2 * (f["merges"] - f["base"] + f["specials"]) * f["n_embd"]),
    ("embedding_params/float32-bytes", "embedding_params/two-tables", "8*vocab*d",
     lambda f: 8 * f["vocab"] * f["n_embd"]),
    ("embedding_params/float32-bytes", "embedding_params/no-specials", "4*(base + merges)*d",
     lambda f: 4 * (f["base"] + f["merges"]) * f["n_embd"]),
    ("embedding_params/float32-bytes", "embedding_params/merge-adds-two", "4*(base + 2*merges + specials)*d",
     lambda f: 4 * (f["base"] + 2 * f["merges"] + f["specials"]) * f["n_embd"]),
    ("merges_needed/base-sign", "merges_needed/no-specials", "vocab + base", lambda f: f["vocab"] + f["base"]),
    ("merges_needed/specials-sign", "merges_needed/no-base", "vocab + specials",
     lambda f: f["vocab"] + f["specials"]),
    ("merges_needed/base-sign", "merges_needed/specials-sign", "vocab + base + specials",
     lambda f: f["vocab"] + f["base"] + f["specials"]),
    ("merges_needed/specials-sign", "merges_needed/merge-adds-two", "(vocab - base + specials) // 2",
     lambda f: (f["vocab"] - f["base"] + f["specials"]) // 2),
])

#: The merges counted as the vocabulary (or the vocabulary as the merges) is also both the base alphabet
#: and the special tokens left out: one value, reached by one mistake or by those two. Declared after
#: the single mistake, so the single names the value; the variant records the second way beside it,
#: and a reader sees it one mistake from each of the two singles.
register_double_mistakes("merges-vs-vocab", MISTAKES, [
    ("vocab_size/no-base", "vocab_size/no-specials", "merges", lambda f: f["merges"]),
    ("merges_needed/no-base", "merges_needed/no-specials", "vocab", lambda f: f["vocab"]),
])

@register_family
class MergesVsVocab(Family):
    name = "merges-vs-vocab"
    version = 9  # v9: sign slips on the parts and the table in float32 bytes, with doubles sharing them, on the sides of the key that had few mistakes, and a pool chosen of a few so no player passes chance; v8: the merges as the vocabulary (and back) is also reached by leaving out both the base and the specials; v7: two-mistake counts sharing a mistake with the single ones, so the key is not the mistake hub
    title = "BPE merges and vocabulary size"
    summary = "Relate BPE merges, base alphabet and special tokens to vocabulary size and embedding parameters."
    tags = ("tokenization", "parameters")
    subquestion_key = "ask"
    subquestion_values = ASKS

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
        elif ask == "merges_needed":
            params["vocab_size"] = vocab
            stem = f"{setup} How many merges give a final vocabulary of exactly {fmt.integer(vocab)} tokens?"
            value = merges
        else:
            d = 64 * int(rng.integers(2, 17))
            params.update(merges=merges, n_embd=d)
            stem = (f"{setup} Training performs {fmt.integer(merges)} merges, and the model has width d = {fmt.integer(d)}. "
                    "How many parameters does the token embedding table have?")
            # block_size 0 and no layers leave only the token table in the count.
            value = gpt_param_count(vocab, 0, d, 0, 0)["embeddings"]
        solution = (f"Each merge creates one new symbol, so vocabulary = base + merges + specials = "
                    f"{base} + {fmt.integer(merges)} + {specials} = {fmt.integer(vocab)}."
                    + (f" The token table has V x d = {fmt.integer(vocab)} x {params['n_embd']} = "
                       f"{fmt.integer(value)} parameters." if ask == "embedding_params" else "")
                    + " GPT-1, for example, used 40,000 merges but a 40,478-entry vocabulary.")
        # a sign slip on a small count of merges can go negative: no count of tokens is
        wrong = [o for o in wrong_options(MISTAKES, [k for k in MISTAKES if k.startswith(ask + "/")],
                                          self.facts(params), fmt.integer) if o.value > 0]
        options = least_cued_options(rng, value, fmt.integer(value), wrong,
                                     "Correct: the vocabulary is base alphabet + merges + special tokens.",
                                     tries=FEW_POOL_TRIES, linked=True)
        return Draft(parameters=params, stem=stem, answer=int_answer(value), options=options, solution=solution,
                     mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """Merges and vocabulary size, whichever of them the stem gives."""
        base, specials = parameters["base"], parameters["specials"]
        if "merges" in parameters:
            return {**parameters, "vocab": base + parameters["merges"] + specials}
        return {**parameters, "vocab": parameters["vocab_size"]}

    def check(self, variant: dict[str, Any]) -> list[str]:
        # The answers are sums and products of the parameters: recompute them
        # from the definition (base + merges + specials), without the reference.
        p = variant["parameters"]
        if p["ask"] == "merges_needed":
            return check_equal(variant["answer"]["value"], p["vocab_size"] - p["base"] - p["specials"])
        vocab = p["base"] + p["merges"] + p["specials"]
        expected = vocab if p["ask"] == "vocab_size" else vocab * p["n_embd"]
        return check_equal(variant["answer"]["value"], expected)

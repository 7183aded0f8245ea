"""Next-token targets of a character-level batch row: the input shifted by one."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import BASE_TEXT, check_equal, correct_choices
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft
from solutions import build_vocab, decode, encode, next_token_batch

#: Characters shown around the window, so that every distractor can be read off the passage.
MARGIN = 3


#: Every wrong target string this family knows (``i`` the offset, ``T`` the block size).
MISTAKES = register_mistakes("next-token-targets", [
    ("inputs", "targets-equal-inputs", "data[i : i+T]", lambda f: f["passage"][f["offset"]:f["offset"] + f["block_size"]],
     "That is the input itself; targets are the next characters."),
    ("shifted-back", "shift-wrong-direction", "data[i-1 : i-1+T]",
     lambda f: f["passage"][f["offset"] - 1:f["offset"] - 1 + f["block_size"]],
     "That shifts towards the previous character; targets come from offset i+1."),
    ("one-short", "one-fewer-target", "data[i+1 : i+T]",
     lambda f: f["passage"][f["offset"] + 1:f["offset"] + f["block_size"]],
     "That has only {fewer} targets; each of the {block_size} input positions has one."),
    ("one-extra", "positions-off-by-one", "data[i+1 : i+T+2]",
     lambda f: f["passage"][f["offset"] + 1:f["offset"] + f["block_size"] + 2],
     "That has {more} targets; each of the {block_size} input positions has exactly one."),
])


#: The wrong windows cut short or run long too: the key is then not the only window whose one-short
#: copy is a choice (the completed-text player picks the full form of a truncated text), nor the
#: only window of full length (the longest player).
register_double_mistakes("next-token-targets", MISTAKES, [
    ("inputs", "one-short", "data[i : i+T-1]",
     lambda f: f["passage"][f["offset"]:f["offset"] + f["block_size"] - 1]),
    ("shifted-back", "one-short", "data[i-1 : i+T-2]",
     lambda f: f["passage"][f["offset"] - 1:f["offset"] + f["block_size"] - 2]),
    # the input and its target window read as one chunk: the key is then not the only long text
    ("inputs", "one-extra", "data[i : i+T+1]",
     lambda f: f["passage"][f["offset"]:f["offset"] + f["block_size"] + 1]),
])

@register_family
class NextTokenTargets(Family):
    name = "next-token-targets"
    version = 5  # v5: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Next-token targets"
    summary = "Given a passage, an offset and block_size, pick the target string y of a character batch row."
    tags = ("targets", "alignment", "data")
    distinct_target = 200

    def build(self, rng: np.random.Generator) -> Draft:
        T = int(rng.integers(4, 11))
        length = T + 2 * MARGIN
        start = int(rng.integers(0, len(BASE_TEXT) - length + 1))
        passage = BASE_TEXT[start:start + length]
        i = int(rng.integers(1, length - T - 1))       # room for one step back and one forward
        stoi, itos = build_vocab()
        data = encode(passage, stoi)
        xb, yb = next_token_batch(data, np.array([i]), T)
        x, y = decode(xb[0], itos), decode(yb[0], itos)
        parameters = {"passage": passage, "offset": i, "block_size": T}
        wrong = wrong_options(MISTAKES, list(MISTAKES), self.facts(parameters), fmt.quoted)
        options = numeric_options(rng, y, fmt.quoted(y), wrong, "Correct: y = data[i+1 : i+T+1].")
        stem = (f"A character-level model trains on the passage {fmt.quoted(passage)} (one token per character, "
                f"positions counted from 0). A batch row starts at offset i = {i} with block_size T = {T}, so its "
                f"input is x = {fmt.quoted(x)}. Which string is its target y?")
        solution = (f"The target at each position is the character that follows it: y = data[i+1 : i+T+1] = "
                    f"data[{i + 1}:{i + T + 1}] = {fmt.quoted(y)}, the input moved one step to the left. "
                    "The text supervises itself; no labels are needed.")
        answer = Answer(kind="single_choice", value=None, display=fmt.quoted(y))
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        return {**parameters, "fewer": parameters["block_size"] - 1, "more": parameters["block_size"] + 1}

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        i, T = p["offset"], p["block_size"]
        expected = p["passage"][i + 1:i + 1 + T]
        (correct,) = correct_choices(variant)
        return check_equal(correct["value"], expected, "correct choice")

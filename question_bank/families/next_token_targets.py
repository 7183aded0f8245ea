"""Next-token targets of a character-level batch row: the input shifted by one."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import BASE_TEXT, check_equal, correct_choices
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft
from solutions import build_vocab, decode, encode, next_token_batch

#: Characters shown around the window, so that every distractor can be read off the passage.
MARGIN = 3


@register_family
class NextTokenTargets(Family):
    name = "next-token-targets"
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
        candidates = [
            ("targets-equal-inputs", x, "That is the input itself; targets are the next characters."),
            ("shift-wrong-direction", passage[i - 1:i - 1 + T], "That shifts towards the previous character; "
             "targets come from offset i+1."),
            ("one-fewer-target", passage[i + 1:i + T], f"That has only {T - 1} targets; each of the "
             f"{T} input positions has one."),
        ]
        options = numeric_options(rng, y, fmt.quoted(y), candidates, fmt.quoted,
                                  "Correct: y = data[i+1 : i+T+1].")
        stem = (f"A character-level model trains on the passage {fmt.quoted(passage)} (one token per character, "
                f"positions counted from 0). A batch row starts at offset i = {i} with block_size T = {T}, so its "
                f"input is x = {fmt.quoted(x)}. Which string is its target y?")
        solution = (f"The target at each position is the character that follows it: y = data[i+1 : i+T+1] = "
                    f"data[{i + 1}:{i + T + 1}] = {fmt.quoted(y)}, the input moved one step to the left. "
                    "The text supervises itself; no labels are needed.")
        answer = Answer(kind="single_choice", value=None, display=fmt.quoted(y))
        return Draft(parameters={"passage": passage, "offset": i, "block_size": T}, stem=stem, answer=answer,
                     options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        i, T = p["offset"], p["block_size"]
        expected = p["passage"][i + 1:i + 1 + T]
        (correct,) = correct_choices(variant)
        return check_equal(correct["value"], expected, "correct choice")

"""Next-token targets of a character-level batch row: the input shifted by one."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.errors import Redraw
from question_bank.families._common import BASE_TEXT, check_equal, correct_choices
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft
from solutions import build_vocab, decode, encode, next_token_batch

#: Characters shown around the window, so that every distractor can be read off the passage.
MARGIN = 3


def _window(ds: int, de: int) -> Callable[[dict[str, Any]], str]:
    """The key's window data[i+1 : i+T+1] with its start moved ``ds`` and its end ``de`` characters."""
    return lambda f: f["passage"][f["offset"] + 1 + ds:f["offset"] + f["block_size"] + 1 + de]


#: Every wrong target string this family knows (``i`` the offset, ``T`` the block size).
MISTAKES = register_mistakes("next-token-targets", [
    ("inputs", "targets-equal-inputs", "data[i : i+T]", _window(-1, -1),
     "That is the input itself; targets are the next characters."),
    ("shifted-back", "shift-wrong-direction", "data[i-1 : i-1+T]", _window(-2, -2),
     "That shifts towards the previous character; targets come from offset i+1."),
    ("one-short", "one-fewer-target", "data[i+1 : i+T]", _window(0, -1),
     "That has only {fewer} targets; each of the {block_size} input positions has one."),
    ("one-extra", "positions-off-by-one", "data[i+1 : i+T+2]", _window(0, 1),
     "That has {more} targets; each of the {block_size} input positions has exactly one."),
    # the off-by-one on the other side of the key: the shift applied twice
    ("shifted-twice", "shift-too-far", "data[i+2 : i+T+2]", _window(1, 1),
     "That starts two characters after the input; each target is the very next character, from offset i+1."),
])


#: The wrong windows cut short or run long too: the key is then not the only window whose one-short
#: copy is a choice (the completed-text player picks the full form of a truncated text), nor the
#: only window of full length (the longest player).
register_double_mistakes("next-token-targets", MISTAKES, [
    ("inputs", "one-short", "data[i : i+T-1]", _window(-1, -2)),
    ("shifted-back", "one-short", "data[i-1 : i+T-2]", _window(-2, -3)),
    # the input and its target window read as one chunk: the key is then not the only long text
    ("inputs", "one-extra", "data[i : i+T+1]", _window(-1, 0)),
    ("shifted-twice", "one-short", "data[i+2 : i+T+1]", _window(1, 0)),
    ("shifted-twice", "one-extra", "data[i+2 : i+T+3]", _window(1, 2)),
])

#: Where each shown window starts and ends, relative to the key's start and end.
OFFSETS: dict[tuple[int, int], str] = {
    (-1, -1): "inputs", (-2, -2): "shifted-back", (0, -1): "one-short", (0, 1): "one-extra",
    (1, 1): "shifted-twice", (-1, -2): "inputs+one-short", (-2, -3): "shifted-back+one-short",
    (-1, 0): "inputs+one-extra", (1, 0): "shifted-twice+one-short", (1, 2): "shifted-twice+one-extra",
}

#: The shape the four shown windows make in (start, end): two triangles of one-step links (a character
#: more at the end, the whole window one step on) sharing a side. A reader who lines the windows up
#: sees this shape every time; the key is drawn at each of its four corners alike (its two ends and
#: its two centres), so no place in it (the centre of the others, the window furthest on, the
#: longest) is the key's more than one time in four.
SHAPE: tuple[tuple[int, int], ...] = ((0, 0), (0, 1), (1, 1), (1, 2))


def shown_mistakes(corner: int) -> list[str]:
    """The mistakes shown with the key at ``SHAPE[corner]``: the other corners, as moves from the key."""
    ks, ke = SHAPE[corner]
    return [OFFSETS[(s - ks, e - ke)] for j, (s, e) in enumerate(SHAPE) if j != corner]


@register_family
class NextTokenTargets(Family):
    name = "next-token-targets"
    version = 6  # v6: the key is a random corner of one shape of windows, no longer the centre the others surround
    title = "Next-token targets"
    summary = "Given a passage, an offset and block_size, pick the target string y of a character batch row."
    tags = ("targets", "alignment", "data")
    distinct_target = 200

    def build(self, rng: np.random.Generator) -> Draft:
        T = int(rng.integers(4, 11))
        length = T + 2 * MARGIN
        start = int(rng.integers(0, len(BASE_TEXT) - length + 1))
        passage = BASE_TEXT[start:start + length]
        i = int(rng.integers(1, length - T - 2))       # room for one step back and two forward
        stoi, itos = build_vocab()
        data = encode(passage, stoi)
        xb, yb = next_token_batch(data, np.array([i]), T)
        x, y = decode(xb[0], itos), decode(yb[0], itos)
        parameters = {"passage": passage, "offset": i, "block_size": T}
        wrong = wrong_options(MISTAKES, list(MISTAKES), self.facts(parameters), fmt.quoted)
        shown = set(shown_mistakes(int(rng.integers(len(SHAPE)))))
        drawn = [option for option in wrong if option.formula.split("/", 1)[1] in shown]
        if len({y, *(option.value for option in drawn)}) < len(SHAPE):
            raise Redraw("two windows of the passage read the same")
        options = numeric_options(rng, y, fmt.quoted(y), drawn, "Correct: y = data[i+1 : i+T+1].")
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

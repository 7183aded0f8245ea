"""Matching: each tensor or gradient of the LM head to its shape, for random B, T, C, V.

Four items are drawn from four different shape classes (hidden states, the
weight, the bias, the logits, the targets; a gradient shares its tensor's
class), and six shapes are offered: the four keys and two wrong shapes from
the ``lm-head-shapes`` mistakes (or another tensor's shape), drawn so that no
key is the only option with its number of axes, so the last pair is not free
and no pair is found by counting axes. The keys come from running the
reference head on shape probes; each wrong pair's note names whose shape the
picked option is and states the item's shape rule, and names a misconception
only where one of that item's catalogued mistakes gives that shape.
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.cues import PLAYERS, excess_over_chance, least_cued
from question_bank.errors import Redraw
from question_bank.families.lm_head_shapes import MISTAKES as SHAPE_MISTAKES
from question_bank.families.lm_head_shapes import draw_sizes, reference_shapes
from question_bank.misconceptions import misconception_ref
from question_bank.registry import Family, register_family
from question_bank.variant import CHOICE_IDS, Answer, Draft, Option

#: Items whose shapes are the same (a tensor and its gradient) share a class; an item set takes one per class.
CLASSES: tuple[tuple[str, ...], ...] = (
    ("hidden", "dhidden"), ("W_head", "dW_head"), ("b_head", "db_head"), ("logits", "dlogits"), ("targets",))

#: How often each class is drawn, relatively. The bias (one axis) forces a one-axis wrong shape,
#: and those ((T,), (B,), (C,)) are nearly always the smallest option, which made the bias the
#: 2nd-smallest option and a key too often; asking it less often keeps that rank near chance.
CLASS_WEIGHTS = (1.0, 1.0, 0.45, 1.0, 1.0)

ITEMS_PER_VARIANT = 4
#: Wrong-shape pairs weighed for cues per variant (a random subset: weighing all is slow).
PAIRS_WEIGHED = 12
OPTIONS_PER_VARIANT = 6

_NAMES = {
    "hidden": "`hidden` (the hidden states entering the head)",
    "dhidden": "`dhidden` (the gradient passed back to the stack)",
    "W_head": "`W_head` (the head's weight)",
    "dW_head": "`dW_head` (the gradient of the head's weight)",
    "b_head": "`b_head` (the head's bias)",
    "db_head": "`db_head` (the gradient of the head's bias)",
    "logits": "`logits` (the head's output)",
    "dlogits": "`dlogits` (the gradient of the loss with respect to the logits)",
    "targets": "`targets` (the next-token ids the loss compares with)",
}

#: The rule each item's shape follows, said once per item (a wrong pair's note ends with it).
_RULES = {
    "hidden": "the stack returns one C-wide state per position of each sequence: (B, T, C)",
    "dhidden": "a gradient has its tensor's shape, and hidden is (B, T, C)",
    "W_head": "the weight maps the width C to the vocabulary V and is shared by every position: (C, V)",
    "dW_head": "a gradient has its tensor's shape, and W_head is (C, V)",
    "b_head": "the bias adds one number per vocabulary entry, shared by every position: (V,)",
    "db_head": "a gradient has its tensor's shape, and b_head is (V,)",
    "logits": "hidden @ W_head contracts the width C, leaving one score per vocabulary entry per position: (B, T, V)",
    "dlogits": "a gradient has its tensor's shape, and the logits are (B, T, V)",
    "targets": "one token id per position of each sequence: (B, T)",
}


def item_shapes(B: int, T: int, C: int, V: int) -> dict[str, list[int]]:
    """Every item's shape: the head's tensors from the reference run on probes, the targets one id per logit row."""
    shapes = reference_shapes(B, T, C, V)
    shapes["targets"] = shapes["logits"][:-1]
    return shapes


#: Wrong shapes beyond ``lm-head-shapes``: a bias kept per position of the flattened batch, one
#: axis like the key but often longer than V (the shorter (T,) alone made the bias the 2nd-smallest option).
EXTRA_MISTAKES = (
    ("b_head/per-flat-position", lambda f: [f["B"] * f["T"]], "bias-per-position"),
    ("db_head/per-flat-position", lambda f: [f["B"] * f["T"]], "bias-per-position"),
)


def _mistakes(facts: dict[str, Any]) -> list[tuple[str, list[int], str]]:
    """``(item/name, wrong shape, misconception)`` of every known wrong shape, at these sizes."""
    # single slips only: a shape with two or three slips lies far from every key, and two such beside the
    # keys made the keys the central sizes (748 in 1,000 at seed 0, limit 72%)
    known = [(name, formula.compute(facts), formula.misconception) for name, formula in SHAPE_MISTAKES.items()
             if "+" not in name]
    return known + [(name, compute(facts), misconception) for name, compute, misconception in EXTRA_MISTAKES]


def _sentence(text: str) -> str:
    """``text`` as a sentence: its first letter upper-case (the rest kept: code names keep their case)."""
    return text[:1].upper() + text[1:] + "."


def _axes(shape: list[int]) -> int:
    return len(shape)


@register_family
class HeadShapeMatching(Family):
    name = "head-shape-matching"
    version = 2  # v2: wrong shapes from lm-head-shapes' single slips only (it gained shapes with several slips)
    title = "Match tensors to shapes"
    summary = "Match four LM-head tensors or gradients to their shapes among six, for random B, T, C, V (matching)."
    tags = ("matching", "shapes", "lm-head", "gradient")

    def build(self, rng: np.random.Generator) -> Draft:
        B, T, C, V = draw_sizes(rng)
        shapes = item_shapes(B, T, C, V)
        weights = np.array(CLASS_WEIGHTS) / sum(CLASS_WEIGHTS)
        classes = [CLASSES[int(i)] for i in sorted(rng.choice(len(CLASSES), ITEMS_PER_VARIANT, replace=False,
                                                              p=weights))]
        items = [group[int(rng.integers(len(group)))] for group in classes]
        items = [items[int(i)] for i in rng.permutation(len(items))]
        keys = [shapes[item] for item in items]
        parameters = {"B": B, "T": T, "C": C, "V": V, "items": items}
        wrong = self._wrong_shapes(rng, items, keys, parameters)
        options = [(shape, None) for shape in keys] + wrong
        options = [options[int(i)] for i in rng.permutation(len(options))]
        ids = {tuple(shape): cid for (shape, _), cid in zip(options, CHOICE_IDS)}
        choices = [Option(value=shape, text=fmt.shape(shape), correct=misconception is None,
                          misconception=misconception,
                          feedback="" if misconception is None else _sentence(self._owner_note(shape, shapes)))
                   for shape, misconception in options]
        slots = tuple({"text": _NAMES[item], "value": item,
                       "wrong": {ids[tuple(shape)]: self._pair_note(item, shape, shapes, parameters)
                                 for shape, _ in options if shape != shapes[item]}}
                      for item in items)
        value = [ids[tuple(shape)] for shape in keys]
        answer = Answer(kind="matching", value=value, display=", ".join(value), slots=slots)
        stem = (f"A GPT processes a batch of B = {fmt.integer(B)} sequences of T = {fmt.integer(T)} tokens with "
                f"model width C = {fmt.integer(C)} and vocabulary size V = {fmt.integer(V)}. Its head computes "
                "`logits = hidden @ W_head + b_head`; every tensor is batch-first and none is reshaped. "
                f"Match each of the {len(items)} tensors to its shape; {len(options) - len(items)} of the "
                "shapes belong to none of them.")
        solution = " ".join(f"`{item}` is {fmt.shape(shapes[item])}: {_RULES[item]}."
                            for item in items)
        return Draft(parameters=parameters, stem=stem, answer=answer, options=choices, solution=solution)

    @staticmethod
    def _wrong_shapes(rng: np.random.Generator, items: list[str], keys: list[list[int]],
                      facts: dict[str, Any]) -> list[tuple[list[int], str]]:
        """Two ``lm-head-shapes`` mistakes of the items, ``(shape, misconception)``, drawn so that every
        key's number of axes is shared by another option, and among those a pair on which the content-blind
        players of :mod:`question_bank.cues` find the keys least beyond chance."""
        candidates: list[tuple[list[int], str]] = []
        sizes = {math.prod(key) for key in keys}
        for name, shape, misconception in _mistakes(facts):
            # a size of its own: equal sizes would let a player comparing sizes abstain, not be fair
            if name.split("/")[0] in items and math.prod(shape) not in sizes \
                    and math.prod(shape) not in {math.prod(c[0]) for c in candidates}:
                candidates.append((shape, misconception))
        candidates = [candidates[int(i)] for i in rng.permutation(len(candidates))]
        pairs = [[first, second] for i, first in enumerate(candidates) for second in candidates[i + 1:]
                 if all(Counter(_axes(s) for s in keys + [first[0], second[0]])[_axes(key)] >= 2 for key in keys)]
        if not pairs:
            raise Redraw("no two wrong shapes hide every key's number of axes")
        pairs = pairs[:PAIRS_WEIGHED]
        # of those, a pair where the printed orders (size, length, likeness) point at the keys least
        texts = [fmt.shape(k) for k in keys]
        weights = list(rng.exponential(size=len(PLAYERS)))
        return least_cued(rng, pairs, lambda pair: excess_over_chance(
            texts + [fmt.shape(s) for s, _ in pair], [True] * len(keys) + [False] * 2, weights))

    @staticmethod
    def _owner_note(shape: list[int], shapes: dict[str, list[int]]) -> str:
        owners = [f"`{item}`" for item, s in shapes.items() if s == shape]
        return (f"{fmt.shape(shape)} is the shape of {' and '.join(owners)}" if owners
                else f"{fmt.shape(shape)} is the shape of no tensor of the head")

    @classmethod
    def _pair_note(cls, item: str, shape: list[int], shapes: dict[str, list[int]],
                   facts: dict[str, Any]) -> dict[str, Any]:
        """Why ``shape`` is wrong for ``item``: whose shape it is, and the item's shape rule; the misconception
        when one of the item's ``lm-head-shapes`` mistakes gives that shape (else none is claimed)."""
        found = next((misconception for name, wrong, misconception in _mistakes(facts)
                      if name.split("/")[0] == item and wrong == shape), None)
        return {"misconception": None if found is None else misconception_ref(found),
                "feedback": f"{cls._owner_note(shape, shapes)}; {_RULES[item]} = {fmt.shape(shapes[item])}."}

    def check(self, variant: dict[str, Any]) -> list[str]:
        problems = []
        if not self.arrangement_holds(variant, variant["answer"]["value"]):
            problems.append("the key does not give every item its shape")
        shapes = [c["value"] for c in variant["choices"]]
        axes = Counter(len(s) for s in shapes)
        for slot, cid in zip(variant["answer"]["slots"], variant["answer"]["value"]):
            key = next(c["value"] for c in variant["choices"] if c["id"] == cid)
            if axes[len(key)] < 2:
                problems.append(f"{slot['value']}'s shape is the only option with {len(key)} axes")
        return problems

    def arrangement_holds(self, variant: dict[str, Any], response: list[str]) -> bool:
        """Whether each item gets its shape, by a table of shapes written out from B, T, C, V."""
        p = variant["parameters"]
        B, T, C, V = p["B"], p["T"], p["C"], p["V"]
        expected = {"hidden": [B, T, C], "dhidden": [B, T, C], "W_head": [C, V], "dW_head": [C, V],
                    "b_head": [V], "db_head": [V], "logits": [B, T, V], "dlogits": [B, T, V], "targets": [B, T]}
        values = {c["id"]: c["value"] for c in variant["choices"]}
        return len(response) == len(p["items"]) and all(
            values.get(cid) == expected[item] for item, cid in zip(p["items"], response))

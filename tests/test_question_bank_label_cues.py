"""Can a reader find find-the-bug's key from which titles a sheet shows, without reading the code?

Every choice is a catalogue title, and the same few titles come back item after item. When the key
was drawn first and its distractors after, a title that is rarely a distractor (the two softmax axis
mistakes, never shown beside each other) was the key more often when shown; and the draw that
balanced lengths and likeness tended to leave the key the only title of its kind in an item. Each
reader here is a rule a student can apply to a printed sheet, written out; each must find the key
no more often than chance within the limit the cue players use (:mod:`question_bank.cues`).
"""
from __future__ import annotations

import math
from collections import Counter
from typing import Any

import pytest

from question_bank.code_reading import LISTINGS
from question_bank.cues import CUE_MARGIN, CUE_Z
from question_bank.generate import generate_variant

FAMILY = "find-the-bug"
#: Variants in one run, read as one long sheet (the longer the sheet, the better its counts).
VARIANTS = 600
CHANCE = 0.25


def _limit(applied: int) -> float:
    """The highest hit rate the cue players allow over ``applied`` items at chance 1/4."""
    return CHANCE + max(CUE_Z * math.sqrt(CHANCE * (1 - CHANCE) / applied), CUE_MARGIN)


def _share_on_key(choices: list[dict[str, Any]], picked: list[bool]) -> float:
    """A reader picking uniformly among ``picked``: its expected hit."""
    return sum(c["correct"] for c, p in zip(choices, picked) if p) / sum(picked)


def least_shown_title(variants: list[dict[str, Any]]) -> tuple[float, int]:
    """Pick the title the sheet shows least often among items of the same function (the titles name it).

    Returns (expected hits, items read)."""
    shown = Counter((v["parameters"]["function"], c["text"]) for v in variants for c in v["choices"])
    hits = 0.0
    for variant in variants:
        counts = [shown[(variant["parameters"]["function"], c["text"])] for c in variant["choices"]]
        hits += _share_on_key(variant["choices"], [n == min(counts) for n in counts])
    return hits, len(variants)


def only_one_of_its_kind(variants: list[dict[str, Any]]) -> tuple[float, int]:
    """Pick the title alone of its kind in its item (kind: the lines of the function its mistake is
    in: the max shift, the normalisation, the loss line, the gradient line, ...); abstain where no
    title is alone. Returns (expected hits, items where the reader picks)."""
    hits, applied = 0.0, 0
    for variant in variants:
        edits = LISTINGS[variant["parameters"]["function"]].edits
        kinds = [frozenset(edits[c["value"]]) for c in variant["choices"]]
        alone = [kinds.count(k) == 1 for k in kinds]
        if any(alone):
            hits += _share_on_key(variant["choices"], alone)
            applied += 1
    return hits, applied


@pytest.fixture(scope="module")
def sheet() -> list[dict[str, Any]]:
    return [generate_variant(FAMILY, seed) for seed in range(VARIANTS)]


@pytest.mark.parametrize("reader", [least_shown_title, only_one_of_its_kind])
def test_a_reader_of_the_titles_alone_finds_the_key_at_chance(sheet, reader):
    hits, applied = reader(sheet)
    assert applied >= VARIANTS // 2, f"{reader.__name__} picked in {applied} of {VARIANTS} items only"
    assert hits / applied <= _limit(applied), (
        f"{reader.__name__}: {hits:.0f} keys in {applied} items ({hits / applied:.3f}; "
        f"chance {CHANCE}, limit {_limit(applied):.3f})")

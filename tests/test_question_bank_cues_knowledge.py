"""Readers who know GPT-1's input transformations but never read the stem (task-transformations).

The content-blind players of :mod:`question_bank.cues` read the printed choices as texts. A reader
who knows GPT-1 reads them as transformations, and two rules found the key on a printed sheet:

- the flaw rule: reject every choice with a feature no GPT-1 task has (reading the first position,
  averaging the states, the LM head's softmax, a label in the input, two texts in one sequence with
  no delimiter) and pick among the rest;
- the placeholder rule: the placeholders name the stem's inputs, so pick among the choices that are
  GPT-1's transformation of *some* stem with those inputs.

A third, the majority rule, needs no knowledge: every mistake changes one or two features of the key,
so the key holds the most common value of most features (readout, number of sequences, delimiter,
combination, label, first text). Each rule is written here as a small function; the flaw and majority rules must find the key no
more often than chance plus a margin, the placeholder rule about one time in two (at most 60%) where the
placeholders are shared.
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Callable

import pytest

from question_bank.generate import generate_variant
from question_bank.seeding import variant_seed

FAMILY = "task-transformations"
N = 400
MARGIN = 0.05
SPECIAL = {"<s>", "$", "<e>"}


def _variants(n: int = N, tag: str = "knowledge") -> list[dict[str, Any]]:
    return [generate_variant(FAMILY, variant_seed(5151, tag, i)) for i in range(n)]


def _tokens(value: dict[str, Any]) -> set[str]:
    return {t for seq in value["inputs"] for t in seq if t not in SPECIAL}


def _flawed(value: dict[str, Any]) -> bool:
    """A feature no GPT-1 task's transformation has."""
    if value["readout"] != "end" or value["combine"] in ("lm-head", "softmax-vocab"):
        return True
    if any(t.startswith("label") for t in _tokens(value)):
        return True
    return any(len([t for t in seq if t not in SPECIAL]) >= 2 and "$" not in seq for seq in value["inputs"])


def _features(value: dict[str, Any]) -> tuple[Any, ...]:
    content = [t for t in value["inputs"][0] if t not in SPECIAL]
    return (value["readout"], len(value["inputs"]), "$" in value["inputs"][0], value["combine"],
            any(t.startswith("label") for t in _tokens(value)), content[0] if content else "")


Reader = Callable[[dict[str, Any]], list[float]]


def _uniform_over(choices: list[dict[str, Any]], preferred: list[bool]) -> list[float]:
    if not any(preferred):
        preferred = [True] * len(choices)
    share = 1.0 / sum(preferred)
    return [share if p else 0.0 for p in preferred]


def flaw_reader(variant: dict[str, Any]) -> list[float]:
    choices = variant["choices"]
    return _uniform_over(choices, [not _flawed(c["value"]) for c in choices])


def majority_reader(variant: dict[str, Any]) -> list[float]:
    choices = variant["choices"]
    features = [_features(c["value"]) for c in choices]
    scores = []
    for own in features:
        score = 0
        for f, value in enumerate(own):
            counts = Counter(other[f] for other in features)
            score += counts[value] == max(counts.values())
        scores.append(score)
    return _uniform_over(choices, [s == max(scores) for s in scores])


def placeholder_reader(keys: dict[frozenset[str], set[str]]) -> Reader:
    """Knows every stem's key, by the inputs it names; picks the choices that are the key of a stem
    whose inputs all appear among the choices."""
    def read(variant: dict[str, Any]) -> list[float]:
        choices = variant["choices"]
        shown = set().union(*(_tokens(c["value"]) for c in choices))
        known = set().union(*(texts for names, texts in keys.items() if names <= shown))
        return _uniform_over(choices, [c["text"] in known for c in choices])
    return read


def rates(reader: Reader, variants: list[dict[str, Any]]) -> dict[str, tuple[float, float, int]]:
    """Per task: the reader's hit rate, the chance rate, the number of variants."""
    hit: Counter[str] = Counter()
    chance: Counter[str] = Counter()
    count: Counter[str] = Counter()
    for variant in variants:
        task = variant["parameters"]["task"]
        pick = reader(variant)
        hit[task] += sum(w for w, c in zip(pick, variant["choices"]) if c["correct"])
        chance[task] += 1.0 / len(variant["choices"])
        count[task] += 1
    return {t: (hit[t] / count[t], chance[t] / count[t], count[t]) for t in count}


#: The tasks whose stems name the same inputs (sentences A and B): only there can a reader who knows GPT-1
#: be kept from the key; one text, or a context, question and candidates, name their task.
SHARED = ("entailment", "similarity")


@pytest.fixture(scope="module")
def variants() -> list[dict[str, Any]]:
    return _variants()


def test_the_majority_of_features_finds_the_key_by_chance_only(variants):
    over = {t: r for t, r in rates(majority_reader, variants).items() if r[0] > r[1] + MARGIN}
    assert not over, f"majority rule finds the key above chance: {over}"


def test_rejecting_choices_no_task_uses_finds_the_key_by_chance_only(variants):
    over = {t: r for t, r in rates(flaw_reader, variants).items() if t in SHARED and r[0] > r[1] + MARGIN}
    assert not over, f"flaw rule finds the key above chance: {over}"


def test_the_placeholders_leave_at_least_two_transformations_right_for_some_stem(variants):
    """A and B allow three keys (A first, B first, both orders), so a reader who knows every stem's key
    is held to about one choice in two (the draw trades it against the text players), not to chance."""
    keys: dict[frozenset[str], set[str]] = {}
    for variant in variants:
        key = next(c for c in variant["choices"] if c["correct"])
        keys.setdefault(frozenset(_tokens(key["value"])), set()).add(key["text"])
    got = {t: r for t, r in rates(placeholder_reader(keys), variants).items() if t in SHARED}
    assert got and all(r[0] <= 0.6 for r in got.values()), got

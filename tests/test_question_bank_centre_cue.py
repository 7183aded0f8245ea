"""The key as the centre of its distractors: readers who map each choice to the mistakes that made it.

A reader who never works the question can still line the choices up: text windows by where they
start and end in the passage, (input, target) pairs by which words they put where. When every
distractor is the key with one or two mistakes applied, spread round it, the key is the point the
others surround. Each rule below is such a reader, written out; over many variants none may find
the key more often than chance (one in four) plus :data:`MARGIN`.

A file of its own: the test processes each take whole files, so these runs go beside the cue tests.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import pytest

from question_bank.generate import generate_variant

#: Variants read per family and sub-question; about 150 or more per rule.
VARIANTS = 300
#: Allowed excess over chance: about two standard deviations of a 1-in-4 rate over 150 variants.
MARGIN = 0.07
CHANCE = 0.25

Rule = Callable[[dict[str, Any]], list[float]]


def _uniform_over_best(scores: Sequence[float]) -> list[float]:
    """The reader's pick: uniform over the best-scoring choices."""
    best = max(scores)
    tied = [s == best for s in scores]
    return [1.0 / sum(tied) if t else 0.0 for t in tied]


def _windows(variant: dict[str, Any]) -> list[tuple[int, int]]:
    """(start, end) in the passage of every choice, the occurrence nearest the stem's window."""
    passage, start = variant["parameters"]["passage"], variant["parameters"]["offset"] + 1
    spans = []
    for choice in variant["choices"]:
        text = choice["value"]
        found = [s for s in range(len(passage) - len(text) + 1) if passage[s:s + len(text)] == text]
        s = min(found, key=lambda s: abs(s - start))
        spans.append((s, s + len(text)))
    return spans


def window_medoid(variant: dict[str, Any]) -> list[float]:
    """The window whose start and end offsets are nearest to all the others' (the centre)."""
    spans = _windows(variant)
    return _uniform_over_best([-sum(abs(a[0] - b[0]) + abs(a[1] - b[1]) for b in spans) for a in spans])


#: One step in (start, end): a character more or less at one end, or the whole window shifted by one.
_STEPS = {(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, -1)}


def window_hub(variant: dict[str, Any]) -> list[float]:
    """The window linked to the most others by one character at an end or a one-step shift."""
    spans = _windows(variant)
    return _uniform_over_best([sum((b[0] - a[0], b[1] - a[1]) in _STEPS for b in spans) for a in spans])


def window_furthest_on(variant: dict[str, Any]) -> list[float]:
    """The window starting furthest on in the passage: the one the others were shifted back from."""
    return _uniform_over_best([float(s) for s, _ in _windows(variant)])


def _pairs(variant: dict[str, Any]) -> list[tuple[str, str]]:
    return [tuple(choice["value"]) for choice in variant["choices"]]


def pair_cross(variant: dict[str, Any]) -> list[float]:
    """The pair sharing its input with another choice and its target with another: the others surround it."""
    pairs = _pairs(variant)

    def score(i: int) -> float:
        inputs = sum(1 for j, q in enumerate(pairs) if j != i and q[0] == pairs[i][0])
        targets = sum(1 for j, q in enumerate(pairs) if j != i and q[1] == pairs[i][1])
        return float(min(inputs, 1) + min(targets, 1)) + 0.1 * (inputs + targets)
    return _uniform_over_best([score(i) for i in range(len(pairs))])


def pair_bigram(variant: dict[str, Any]) -> list[float]:
    """The pair that reads as two words in their order in the sentence (the reader knows English)."""
    words = ["<s>", *variant["parameters"]["tokens"]]
    bigrams = set(zip(words, words[1:]))
    return _uniform_over_best([float(p in bigrams) for p in _pairs(variant)])


def pair_chain_middle(variant: dict[str, Any]) -> list[float]:
    """The pair whose input is another pair's target and whose target is another's input: linked both ways."""
    pairs = _pairs(variant)
    return _uniform_over_best([float(any(q[1] == p[0] for q in pairs if q != p) + any(q[0] == p[1] for q in pairs if q != p))
                               for p in pairs])


def _sequences(variant: dict[str, Any]) -> list[tuple[str, ...]]:
    return [tuple(choice["value"]) for choice in variant["choices"]]


def _one_edit(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    if a == b:
        return False
    if abs(len(a) - len(b)) == 1:
        return a[:len(b)] == b or b[:len(a)] == a
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def sequence_hub(variant: dict[str, Any]) -> list[float]:
    """The sequence one edit (a token appended, dropped or swapped) from the most others."""
    seqs = _sequences(variant)
    return _uniform_over_best([float(sum(_one_edit(a, b) for b in seqs)) for a in seqs])


def sequence_length_and_content(variant: dict[str, Any]) -> list[float]:
    """The sequence sharing its length with one choice and its content (a prefix) with another."""
    seqs = _sequences(variant)

    def score(a: tuple[str, ...]) -> float:
        same_length = sum(1 for b in seqs if b != a and len(b) == len(a))
        nested = sum(1 for b in seqs if b != a and (a[:len(b)] == b or b[:len(a)] == a))
        return min(same_length, 1) + min(nested, 1) + 0.1 * (same_length + nested)
    return _uniform_over_best([score(a) for a in seqs])


def _hit_rate(family: str, mode: str | None, rule: Rule) -> tuple[float, int]:
    shares = []
    seed = 0
    while len(shares) < VARIANTS:
        variant = generate_variant(family, seed)
        seed += 1
        if mode is not None and variant["parameters"].get("mode") != mode:
            continue
        pick = rule(variant)
        shares.append(sum(w for w, c in zip(pick, variant["choices"]) if c["correct"]))
    return sum(shares) / len(shares), len(shares)


@pytest.mark.parametrize("family, mode, rule", [
    pytest.param("next-token-targets", None, window_medoid, id="next-token-targets-medoid"),
    pytest.param("next-token-targets", None, window_hub, id="next-token-targets-hub"),
    pytest.param("next-token-targets", None, window_furthest_on, id="next-token-targets-furthest-on"),
    pytest.param("teacher-forcing", "training", pair_cross, id="teacher-forcing-cross"),
    pytest.param("teacher-forcing", "training", pair_bigram, id="teacher-forcing-bigram"),
    pytest.param("teacher-forcing", "training", pair_chain_middle, id="teacher-forcing-chain-middle"),
    pytest.param("teacher-forcing", "generation", sequence_hub, id="teacher-forcing-sequence-hub"),
    pytest.param("teacher-forcing", "generation", sequence_length_and_content,
                 id="teacher-forcing-length-and-content"),
])
def test_the_key_is_not_the_centre_of_its_distractors(family, mode, rule):
    rate, n = _hit_rate(family, mode, rule)
    assert rate <= CHANCE + MARGIN, f"{family}: {rule.__name__} finds the key at {rate:.3f} over {n} variants"

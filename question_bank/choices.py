"""Building the choice list of a draft: the correct option plus distractors.

Families compute one candidate value per misconception; :func:`pick_distractors`
keeps those that are well separated from the answer and from each other, so
no distractor can be mistaken for the answer (see
``QUESTION_DISTRACTOR_GAP``).
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from autograder.runtime.tolerances import QUESTION_ATOL, QUESTION_DISTRACTOR_GAP
from question_bank.answers import is_number
from question_bank.errors import Redraw
from question_bank.variant import Option

#: Distractors per numeric question: four choices in all.
N_DISTRACTORS = 3


def separated(a: Any, b: Any, gap: float = QUESTION_DISTRACTOR_GAP) -> bool:
    """Whether two choice values are clearly different.

    Floats must differ by more than ``gap`` relative to the larger magnitude
    (and by more than the absolute guard), because they are printed rounded.
    Integers are printed exactly, so any two different integers are clearly
    different; so are unequal values of other types.
    """
    if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)):
        return int(a) != int(b)
    if is_number(a) and is_number(b):
        a, b = float(a), float(b)
        return abs(a - b) > max(QUESTION_ATOL, gap * max(abs(a), abs(b)))
    return a != b


def pick_distractors(
    rng: np.random.Generator,
    answer_value: Any,
    candidates: Sequence[Option],
    k: int = N_DISTRACTORS,
) -> list[Option]:
    """Choose ``k`` wrong options, varied by ``rng``, all clearly distinct.

    For a numeric answer the key's rank among the choices is drawn first,
    uniformly over the ranks the candidates allow, and the distractors are
    then taken below and above the key to match: a key that is always the
    smallest (or largest, or third) choice is found without working the
    question. Other answers visit the candidates in a random order. A
    candidate is kept when its value is finite and separated from the answer
    and from every option already kept.

    Raises:
        Redraw: when fewer than ``k`` candidates survive, so the family draws
            new parameters.
    """
    pool = [candidates[int(i)] for i in rng.permutation(len(candidates))]
    pool = [option for option in pool if usable(option, answer_value)]
    if _scalar(answer_value) and all(_scalar(option.value) for option in pool):
        below = _separated_run([o for o in pool if float(o.value) < float(answer_value)], k)
        above = _separated_run([o for o in pool if float(o.value) > float(answer_value)], k)
        ranks = [r for r in range(k + 1) if r <= len(below) and k - r <= len(above)]
        if ranks:
            r = ranks[int(rng.integers(len(ranks)))]
            kept = below[:r] + above[:k - r]
            if len(_separated_run(kept, k)) == k:
                return kept
    kept = _separated_run(pool, k)
    if len(kept) == k:
        return kept
    raise Redraw(f"only {len(kept)} distinct distractors for answer {answer_value!r}")


def _scalar(value: Any) -> bool:
    return is_number(value) and not isinstance(value, bool)


def _separated_run(options: Sequence[Option], k: int) -> list[Option]:
    """The first up to ``k`` options, in order, each clearly apart from those kept before it."""
    kept: list[Option] = []
    for option in options:
        if all(separated(option.value, other.value) and option.text != other.text for other in kept):
            kept.append(option)
        if len(kept) == k:
            break
    return kept


def usable(option: Option, answer_value: Any) -> bool:
    """Whether a wrong option can stand as a mistake: a finite value clearly apart from the answer."""
    if is_number(option.value) and not math.isfinite(float(option.value)):
        return False
    return separated(option.value, answer_value)


def known_mistakes(answer_value: Any, candidates: Sequence[Option]) -> list[Option]:
    """Every usable candidate, in declaration order, the first of any inseparable values kept.

    This is what judges compare a typed answer with, so a mistake is named
    whether or not it was drawn as a choice.
    """
    kept: list[Option] = []
    for option in candidates:
        # Values closer than the printing gap are one mistake to a reader and to a judge
        # (a sign slip on top of a mistake can land on another mistake's value).
        if usable(option, answer_value) and all(separated(option.value, other.value) for other in kept):
            kept.append(option)
    return kept


def numeric_options(
    rng: np.random.Generator,
    answer_value: Any,
    answer_text: str,
    candidates: Sequence[Option],
    correct_feedback: str,
) -> list[Option]:
    """The correct option followed by ``N_DISTRACTORS`` distractors drawn from ``candidates``.

    Args:
        rng: the variant's generator.
        answer_value: the correct value.
        answer_text: how the correct value is printed.
        candidates: wrong options, usually from :func:`question_bank.mistakes.wrong_options`.
        correct_feedback: shown when the correct option is picked.
    """
    correct = Option(value=answer_value, text=answer_text, correct=True, feedback=correct_feedback)
    return [correct, *pick_distractors(rng, answer_value, known_mistakes(answer_value, candidates))]

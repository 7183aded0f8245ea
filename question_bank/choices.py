"""Building the choice list of a draft: the correct option plus distractors.

Families compute one candidate value per misconception; :func:`pick_distractors`
keeps those that are well separated from the answer and from each other, so
no distractor can be mistaken for the answer (see
``QUESTION_DISTRACTOR_GAP``).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Any, Sequence

import numpy as np

from autograder.runtime.tolerances import QUESTION_ATOL, QUESTION_DISTRACTOR_GAP
from question_bank import formatting as fmt
from question_bank.answers import is_number
from question_bank.choice_balance import MAX_POOL, balanced_subset, candidate_sets
from question_bank.cues import Paths, mistake_parts
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
    answer_text: str | None = None,
    structure: bool = True,
    ways: Sequence[Option] | None = None,
) -> list[Option]:
    """Choose ``k`` wrong options, varied by ``rng``, all clearly distinct, that do not point at the key.

    Every set of ``k`` candidates that are finite, separated from the answer
    and from each other (and printed differently) is a possible choice list;
    :func:`question_bank.choice_balance.balanced_subset` keeps the one whose
    key sits nearest to places drawn uniformly in every order a reader can
    see (value, closeness to the other values, length, likeness of the text),
    so no rank, length or likeness finds the key more often than chance
    wherever the family's mistakes make that possible. With ``structure``, the
    mistakes each option carries (its formula) are fitted too, so the key is
    not the choice one mistake from the most others (the mistake hub); pass
    False where options name mistakes rather than apply them. ``ways`` (default
    ``candidates``) are every mistake the family computed, so a value two
    formulas give is reached both ways. The pool is shuffled
    (and cut to :data:`~question_bank.choice_balance.MAX_POOL`) first, so ties
    are broken at random.

    Raises:
        Redraw: when fewer than ``k`` candidates survive, so the family draws
            new parameters.
    """
    key_text = answer_text if answer_text is not None else str(answer_value)
    pool = [candidates[int(i)] for i in rng.permutation(len(candidates))]
    # a value apart from the key can still print like it (a row of rounded entries): not a choice
    pool = [option for option in pool if usable(option, answer_value) and option.text != key_text][:MAX_POOL]
    sets = candidate_sets(len(pool), k, lambda a, b: apart(pool[a], pool[b]))
    if not sets:
        kept = _separated_run(pool, k)
        raise Redraw(f"only {len(kept)} distinct distractors for answer {answer_value!r}")
    parts = reaching_paths(pool, ways if ways is not None else candidates) if structure else None
    chosen = balanced_subset(rng, key_text, [option.text for option in pool], sets, parts)
    return [pool[i] for i in chosen]


def reaching_paths(pool: Sequence[Option], candidates: Sequence[Option]) -> list[Paths | None]:
    """Per pool option, the mistakes of every candidate printed as it is (one way of reaching it each);
    None where one of them has no formula."""
    reached: dict[str, list[frozenset[str] | None]] = {}
    for option in candidates:
        reached.setdefault(option.text, []).append(mistake_parts(option.formula))
    paths: list[Paths | None] = []
    for option in pool:
        ways = reached.get(option.text, [mistake_parts(option.formula)])
        paths.append(None if any(w is None for w in ways) else tuple(w for w in ways if w is not None))
    return paths


def apart(a: Option, b: Option) -> bool:
    """Whether two options can be shown together: clearly different values, printed differently."""
    return separated(a.value, b.value) and a.text != b.text


def _separated_run(options: Sequence[Option], k: int) -> list[Option]:
    """The first up to ``k`` options, in order, each clearly apart from those kept before it."""
    kept: list[Option] = []
    for option in options:
        if all(apart(option, other) for other in kept):
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


def can_pick_distractors(answer_value: Any, answer_text: str, candidates: Sequence[Option],
                         k: int = N_DISTRACTORS) -> bool:
    """Whether ``candidates`` hold ``k`` distractors :func:`numeric_options` could show, whatever its draw.

    A family whose parts draw their choices apart (one generator each) asks this of every part
    before it keeps a scenario, so a scenario one part cannot use is redrawn for all parts alike.
    Greedy, so it may refuse a pool a cleverer search would accept: that only redraws more often.
    """
    pool = [option for option in known_mistakes(answer_value, candidates) if option.text != answer_text]
    return len(_separated_run(pool, k)) == k


#: Widest text :func:`at_common_width` prints every choice at; a set that needs more (a mistake
#: below 1e-8, say) keeps its ordinary printing rather than a row of a dozen zeros per choice.
MAX_COMMON_WIDTH = 12


def at_common_width(answer_value: float, candidates: Sequence[Option]) -> tuple[str, list[Option]] | None:
    """The key's text and ``candidates`` reprinted all at one length, in fixed point with at least
    four significant figures each; ``None`` when that length would pass :data:`MAX_COMMON_WIDTH`.

    Where the key's printed length follows from its value (a small negative gradient entry
    prints its sign and leading zeros: ``-0.05228`` is longer than every positive mistake and
    every larger one), the draw cannot keep the longest text at chance without giving up the
    value order; printed at one length, the texts tie and the length players have nothing to
    pick. The length is the widest the key or a usable mistake needs; the extra figures are the
    values' own. Where some value is negative every nonzero value carries its sign (``+0.2499``
    beside ``-0.2499``), so x and -x print the same figures and the sign takes no room of its own.
    """
    values = [float(answer_value), *(float(o.value) for o in known_mistakes(answer_value, candidates))]
    signed = any(v < 0 for v in values)
    width = max(fmt.fixed_width(abs(v)) for v in values) + signed
    if width > MAX_COMMON_WIDTH:
        return None

    def text(v: float) -> str:
        if not signed or v == 0:
            return f"${fmt.fixed_to_width(v, width)}$"
        return f"${'-' if v < 0 else '+'}{fmt.fixed_to_width(abs(v), width - 1)}$"

    return text(float(answer_value)), [dataclasses.replace(o, text=text(float(o.value))) for o in candidates]


def numeric_options(
    rng: np.random.Generator,
    answer_value: Any,
    answer_text: str,
    candidates: Sequence[Option],
    correct_feedback: str,
    structure: bool = True,
    ways: Sequence[Option] | None = None,
) -> list[Option]:
    """The correct option followed by ``N_DISTRACTORS`` distractors drawn from ``candidates``.

    Args:
        rng: the variant's generator.
        answer_value: the correct value.
        answer_text: how the correct value is printed.
        candidates: wrong options, usually from :func:`question_bank.mistakes.wrong_options`.
        correct_feedback: shown when the correct option is picked.
        structure: see :func:`pick_distractors`.
        ways: every mistake the family computed (default ``candidates``): a family that hands over
            only some of them (a chosen pool) passes all, so a value two formulas give is read as
            reached both ways, as the variant records it.
    """
    correct = Option(value=answer_value, text=answer_text, correct=True, feedback=correct_feedback)
    return signs_only_where_negative([correct, *pick_distractors(rng, answer_value, known_mistakes(
        answer_value, candidates), answer_text=answer_text, structure=structure, ways=candidates if ways is None else ways)])


def signs_only_where_negative(options: Sequence[Option]) -> list[Option]:
    """``options`` without the ``+`` signs of :func:`at_common_width` where no shown choice is negative.

    That printing signs every nonzero value when some usable mistake is negative, before the draw
    picks which are shown; a set of positive choices would then read ``+18.16``, a sign that says
    only that some mistake not shown was negative. Each loses its sign, which keeps the texts at
    one length (a zero, printed without a sign, is printed one place shorter to match).
    """
    texts = [option.text for option in options]
    if any(t.startswith("$-") for t in texts) or not any(t.startswith("$+") for t in texts):
        return list(options)
    unsigned = [t.replace("$+", "$", 1) if t.startswith("$+") else t for t in texts]
    width = len(next(u for t, u in zip(texts, unsigned) if t != u).strip("$").replace(",", ""))
    return [dataclasses.replace(option, text=f"${fmt.fixed_to_width(0.0, width)}$")
            if is_number(option.value) and float(option.value) == 0 and text == option.text
            else dataclasses.replace(option, text=text)
            for option, text in zip(options, unsigned)]

"""The label-to-formula registry: every wrong value a family offers, and the mistake it stands for.

A :class:`MistakeFormula` ties one way of computing a wrong value to one
catalogued misconception. Families declare their formulas once, at import
time, with :func:`register_mistakes`; inside ``build`` they ask for the
formulas that apply by key and get :class:`~question_bank.variant.Option`
objects back. The label of a distractor therefore comes from the formula
that computed its value, never from the call site, and a test evaluates each
stored formula again on the variant's parameters to confirm label and value.

A formula reads a *facts* mapping: the variant's parameters plus quantities
derived from them by the family's :meth:`~question_bank.registry.Family.facts`.
Its feedback is a ``str.format`` template over the same facts, so the
numbers in the feedback are the question's own.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from question_bank.misconceptions import MISCONCEPTIONS
from question_bank.variant import Option

Facts = Mapping[str, Any]


@dataclass(frozen=True)
class MistakeFormula:
    """One wrong way to compute the answer.

    Attributes:
        key: ``<family>/<name>``, unique; stored in variants as ``formula``.
        misconception: catalogue id, the label every value of this formula carries.
        formula: how the wrong value is computed, in words or symbols (for
            authors and the registry test's messages).
        compute: facts -> the wrong value.
        feedback: ``str.format`` template over the facts, shown to the student.
    """

    key: str
    misconception: str
    formula: str
    compute: Callable[[Facts], Any]
    feedback: str

    def option(self, facts: Facts, render: Callable[[Any], str]) -> Option:
        """This formula's wrong option for one question."""
        value = self.compute(facts)
        return Option(value=value, text=render(value), correct=False, misconception=self.misconception,
                      feedback=self.feedback.format(**facts), formula=self.key)


_FORMULAS: dict[str, MistakeFormula] = {}


def register_mistakes(family: str, entries: Iterable[tuple[str, str, str, Callable[[Facts], Any], str]]
                      ) -> dict[str, MistakeFormula]:
    """Register ``(name, misconception, formula, compute, feedback)`` entries under ``family/``.

    Returns the family's formulas by their short name.

    Raises:
        ValueError: on a duplicate key or an unknown misconception, both
            authoring slips caught at import time.
    """
    table = {}
    for name, misconception, formula, compute, feedback in entries:
        key = f"{family}/{name}"
        if key in _FORMULAS:
            raise ValueError(f"mistake formula {key!r} is registered twice")
        if misconception not in MISCONCEPTIONS:
            raise ValueError(f"mistake formula {key!r} names the unknown misconception {misconception!r}")
        entry = MistakeFormula(key, misconception, formula, compute, feedback)
        _FORMULAS[key] = table[name] = entry
    return table


def register_sign_slips(family: str, table: dict[str, MistakeFormula], sign: str,
                        names: Iterable[str]) -> dict[str, MistakeFormula]:
    """Register, for each formula ``names``, the same mistake made with the sign slip ``sign`` too.

    A family whose key has a sign-flipped mistake (``-x``) otherwise shows the
    pair x / -x only around the key, and "pick one of the pair" finds it.
    The double mistake ``-m`` is what a student makes who slips on both; it
    keeps the first mistake's label (the one a feedback reader must fix
    first) and both feedbacks. Adds the new formulas to ``table`` as
    ``<name>+<sign>`` and returns ``table``.
    """
    flip = table[sign]
    for name in list(names):
        first = table[name]
        key = f"{family}/{name}+{sign.rsplit('/', 1)[-1]}"
        if key in _FORMULAS:
            raise ValueError(f"mistake formula {key!r} is registered twice")
        entry = MistakeFormula(key, first.misconception, f"-({first.formula})",
                               (lambda compute: lambda f: -compute(f))(first.compute),
                               first.feedback + " The sign is flipped as well: " + flip.feedback)
        _FORMULAS[key] = table[key.split("/", 1)[1]] = entry
    return table


def register_double_mistakes(family: str, table: dict[str, MistakeFormula],
                             entries: Iterable[tuple[str, str, str, Callable[[Facts], Any]]]
                             ) -> dict[str, MistakeFormula]:
    """Register ``(first, second, formula, compute)``: the answer with two of the family's mistakes made at once.

    When every distractor is the key with one mistake applied, the key is the
    choice most alike to all the others (it shares a part with each); a
    choice carrying two mistakes is as alike to the rest as the key is. The
    double mistake keeps the first mistake's label (a catalogued
    misconception the answer does carry) and explains both. Adds each
    formula to ``table`` as ``<first>+<second short name>`` and returns ``table``.
    """
    for first_name, second_name, formula, compute in entries:
        first, second = table[first_name], table[second_name]
        name = f"{first_name}+{second_name.rsplit('/', 1)[-1]}"
        key = f"{family}/{name}"
        if key in _FORMULAS:
            raise ValueError(f"mistake formula {key!r} is registered twice")
        entry = MistakeFormula(key, first.misconception, formula, compute,
                               first.feedback + " Also: " + second.feedback)
        _FORMULAS[key] = table[name] = entry
    return table


def mistake_formula(key: str) -> MistakeFormula:
    """The registered formula ``key`` (raises ``KeyError`` for an unknown key)."""
    return _FORMULAS[key]


def mistake_formulas() -> dict[str, MistakeFormula]:
    """Every registered formula by key (import the families first)."""
    return dict(_FORMULAS)


def wrong_options(table: Mapping[str, MistakeFormula], names: Sequence[str], facts: Facts,
                  render: Callable[[Any], str]) -> list[Option]:
    """The wrong options of the formulas ``names`` of ``table``, evaluated on ``facts``."""
    return [table[name].option(facts, render) for name in names]

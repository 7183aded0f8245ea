"""The family registry: a dict of families filled by a class decorator.

A family is a class with a ``build(rng) -> Draft`` generator and an
independent ``check(variant) -> list[str]``, registered with
:func:`register_family`. Modules in :mod:`question_bank.families` are
imported on first use of the registry, so adding a module adds a family.
"""
from __future__ import annotations

import abc
import re
from typing import Any, ClassVar, TypeVar

import numpy as np

from question_bank._submodules import import_submodules
from question_bank.errors import UnknownFamilyError
from question_bank.variant import Draft

_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


class Family(abc.ABC):
    """Base class of a question family.

    Class attributes:
        name: kebab-case id, used on the command line and stored in variants.
        version: bump whenever the same seed would give a different variant.
        title: heading shown above the question.
        summary: one line for ``grader questions list``.
        tags: topics, for LMS categories and filtering.
        distinct_target: distinct variants the stress test expects from
            1000 seeds (numeric families 200; conceptual families their pool).
        distinct_items: how many different stems the family can ever print,
            for families drawing from a small pool; ``None`` when the count
            is practically unbounded. A set never asks for more than this.
        subquestion_key: the parameter naming which task of the family a
            variant asks (``"ask"``, ``"component"``, ...); ``None`` when the
            family asks one task. Exam slots pin it, and the stress test
            measures answer cues per sub-question.
        subquestion_values: every value that parameter takes.
        parts: multi-part families only: the parts of one item, in the order they build on
            each other (also their sub-questions). Such a family implements
            :meth:`build_part`; one seed gives one scenario, and each part is a variant of
            its own (see :func:`question_bank.generate.generate_item`).
        mistake_structure: whether each wrong choice is the answer with its mistakes made, so that
            choices one mistake apart are related (:func:`question_bank.cues.structure_links`);
            false where the choices name mistakes instead (find-the-bug's labels: the key is a
            mistake too, and no label derives from another).
    """

    name: ClassVar[str]
    version: ClassVar[int] = 1
    title: ClassVar[str]
    summary: ClassVar[str]
    tags: ClassVar[tuple[str, ...]] = ()
    distinct_target: ClassVar[int] = 200
    distinct_items: ClassVar[int | None] = None
    subquestion_key: ClassVar[str | None] = None
    subquestion_values: ClassVar[tuple[str, ...]] = ("",)
    parts: ClassVar[tuple[str, ...]] = ()
    mistake_structure: ClassVar[bool] = True

    @abc.abstractmethod
    def build(self, rng: np.random.Generator) -> Draft:
        """Draw parameters with ``rng`` and return the question as a draft.

        The correct answer must come from ``solutions/``. Raise
        :class:`question_bank.errors.Redraw` to reject an unusable draw.
        """

    def build_part(self, rng: np.random.Generator, part: str | None) -> Draft:
        """Multi-part families: the part ``part`` of the scenario drawn from ``rng`` (a drawn part when
        ``None``); the same ``rng`` state must give the same scenario whichever part is asked."""
        raise NotImplementedError(f"family {self.name!r} has no parts")

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """What the family's mistake formulas read: the parameters and quantities derived from them.

        Derived only from ``parameters``, so the registry test can evaluate
        every stored mistake again from the variant alone. Families with
        derived quantities (log-likelihoods, parameter counts) override it.
        """
        return dict(parameters)

    def subquestion(self, parameters: dict[str, Any]) -> str:
        """The sub-question a variant with these parameters asks; ``""`` for a one-task family."""
        if self.subquestion_key is None:
            return ""
        return str(parameters[self.subquestion_key])

    def subquestions(self) -> tuple[str, ...]:
        """Every sub-question the family can ask (``("",)`` for a one-task family)."""
        return self.subquestion_values

    @abc.abstractmethod
    def check(self, variant: dict[str, Any]) -> list[str]:
        """Recompute the answer from ``variant["parameters"]`` without ``solutions/``.

        Use exact fractions, brute-force enumeration or a second formula.
        Returns a list of problems; empty when the stored answer is right.
        """


_FAMILIES: dict[str, Family] = {}
_loaded = False

F = TypeVar("F", bound=type[Family])


def register_family(cls: F) -> F:
    """Class decorator: instantiate ``cls`` and add it to the registry.

    Raises:
        ValueError: on a malformed or duplicate name, or a multi-line summary;
            these are authoring mistakes caught at import time.
    """
    name = getattr(cls, "name", "")
    if not _NAME.match(name):
        raise ValueError(f"family name {name!r} must be kebab-case (a-z, 0-9, '-')")
    if name in _FAMILIES:
        raise ValueError(f"family {name!r} is registered twice")
    summary = getattr(cls, "summary", "")
    if not summary or "\n" in summary:
        raise ValueError(f"family {name!r} needs a one-line summary")
    _FAMILIES[name] = cls()
    return cls


def _load_families() -> None:
    """Import every module of :mod:`question_bank.families` once, in name order."""
    global _loaded
    if _loaded:
        return
    import_submodules("question_bank.families")
    _loaded = True


def families() -> dict[str, Family]:
    """All registered families, keyed and sorted by name."""
    _load_families()
    return dict(sorted(_FAMILIES.items()))


def family_names() -> list[str]:
    """Names of all registered families, sorted."""
    return list(families())


def get_family(name: str) -> Family:
    """The family called ``name``.

    Raises:
        UnknownFamilyError: naming the known families.
    """
    registry = families()
    if name not in registry:
        known = ", ".join(registry)
        raise UnknownFamilyError(
            f"unknown question family {name!r}; known families: {known}. "
            "Run `grader questions list` to see them with descriptions."
        )
    return registry[name]


def resolve_families(names: list[str] | tuple[str, ...]) -> list[str]:
    """Validate ``names`` (all families when empty), keeping their order, no repeats."""
    if not names:
        return family_names()
    seen: list[str] = []
    for name in names:
        get_family(name)
        if name not in seen:
            seen.append(name)
    return seen


def family_summaries() -> list[tuple[str, str]]:
    """``(name, one-line summary)`` of every family, sorted by name."""
    return [(name, fam.summary) for name, fam in families().items()]

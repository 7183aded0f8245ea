"""Errors the question bank reports to a user; the CLI turns each into one line."""
from __future__ import annotations

from autograder.runtime.errors import GraderError


class QuestionBankError(GraderError):
    """Base class of every question-bank error."""


class UnknownFamilyError(QuestionBankError):
    """A family name that is not in the registry."""


class UnknownFormatError(QuestionBankError):
    """An export format that no exporter is registered for."""


class RosterError(QuestionBankError):
    """A student roster that cannot be read or holds unusable ids."""


class GenerationError(QuestionBankError):
    """A family could not produce a valid variant (a bug in the family)."""


def require_at_least_one(n: int) -> None:
    """Raise :class:`QuestionBankError` unless the ``-n`` count ``n`` is at least 1."""
    if n < 1:
        raise QuestionBankError(f"-n must be at least 1, got {n}.")


class Redraw(Exception):
    """Raised inside a family's ``build`` when the drawn parameters are unusable.

    The generator catches it and calls ``build`` again with the same
    ``numpy.random.Generator``, whose stream has moved on, so the retry is
    deterministic for a given seed. Not a user-facing error.
    """

"""Catalogue of known student mistakes in the LM-head unit.

Each mistake is a complete, deliberately wrong implementation of one
student-API function, with the exact signature of that function, plus a
short explanation written for the student. The grader's diagnosis
(``autograder.diagnosis``) runs these on the inputs of a failed hidden test;
when one reproduces the student's output, the feedback can name the mistake.

Register a mistake with the :func:`mistake` decorator; its slug is the
function's name in kebab case unless ``name=`` is given::

    @mistake(function="perplexity", title="...", explanation="...")
    def perplexity_exp_of_sum(token_probs): ...
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

#: The student-API functions a mistake may replace (names from the DESIGN).
STUDENT_FUNCTIONS: tuple[str, ...] = (
    # assignment lm-head
    "next_token_batch", "lm_head", "softmax", "cross_entropy_loss",
    "lm_head_backward", "numerical_gradient", "max_rel_err",
    # assignment perplexity-and-parameters
    "sequence_log_prob", "perplexity", "perplexity_from_loss",
    "masked_cross_entropy", "tied_lm_head", "greedy_next_token",
    "causal_mask", "gpt_param_count",
)

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Mistake:
    """One known mistake.

    Attributes:
        name: kebab-case slug, unique across the catalogue.
        function: the student-API function this implementation replaces.
        title: a few words naming the mistake (used as a feedback heading).
        explanation: 1-3 sentences for the student: what went wrong and why,
            without giving the corrected code.
        implementation: the wrong implementation, same signature as ``function``.
    """

    name: str
    function: str
    title: str
    explanation: str
    implementation: Callable


#: Every registered mistake by slug, in registration (catalogue) order.
MISTAKES: dict[str, Mistake] = {}


def _slug_of(python_name: str) -> str:
    return python_name.strip("_").replace("_", "-")


def mistake(
    *, function: str, title: str, explanation: str, name: str | None = None
) -> Callable[[Callable], Callable]:
    """Decorator registering an implementation as a known mistake.

    Args:
        function: the student-API function replaced (one of ``STUDENT_FUNCTIONS``).
        title: a few words.
        explanation: 1-3 sentences; whitespace is normalized so it may be
            written as an indented multi-line string.
        name: slug; defaults to the decorated function's name in kebab case.

    Returns the implementation unchanged, so mistakes stay plain functions.

    Raises:
        ValueError: unknown ``function``, malformed or duplicate slug, or an
            empty title or explanation (caught at import, not at grading time).
    """
    if function not in STUDENT_FUNCTIONS:
        raise ValueError(f"unknown student function {function!r}; expected one of {STUDENT_FUNCTIONS}")
    title = " ".join(title.split())
    explanation = " ".join(explanation.split())
    if not title or not explanation:
        raise ValueError(f"mistake for {function!r} needs a title and an explanation")

    def register(implementation: Callable) -> Callable:
        slug = name or _slug_of(implementation.__name__)
        if not _SLUG.match(slug):
            raise ValueError(f"mistake slug {slug!r} is not kebab case (a-z, 0-9, single hyphens)")
        if slug in MISTAKES:
            raise ValueError(f"mistake slug {slug!r} is registered twice; give one of them name=...")
        MISTAKES[slug] = Mistake(slug, function, title, explanation, implementation)
        return implementation

    return register


def mistakes_for(function: str) -> list[Mistake]:
    """The catalogue's mistakes for one student function, in catalogue order.

    Raises:
        ValueError: ``function`` is not a student-API function (a typo would
            otherwise silently disable the diagnosis).
    """
    if function not in STUDENT_FUNCTIONS:
        raise ValueError(f"unknown student function {function!r}; expected one of {STUDENT_FUNCTIONS}")
    return [m for m in MISTAKES.values() if m.function == function]


# Importing the catalogue modules registers their mistakes. They import
# ``mistake`` from this package, so these imports come last.
from autograder.mistakes import lm_head as _lm_head  # noqa: E402,F401
from autograder.mistakes import perplexity_and_parameters as _ppl  # noqa: E402,F401

__all__ = ["MISTAKES", "STUDENT_FUNCTIONS", "Mistake", "mistake", "mistakes_for"]

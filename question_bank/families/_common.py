"""Helpers shared by the family modules: course text, draws, answers and checks.

The leading underscore keeps this module out of the family registry.
"""
from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from autograder.runtime.tolerances import (
    QUESTION_ATOL,
    QUESTION_CHECK_ATOL,
    QUESTION_CHECK_RTOL,
    QUESTION_RTOL,
)
from question_bank import formatting as fmt
from question_bank.variant import Answer
from solutions.corpus import CORPUS

#: One copy of the course corpus (it is the same ten sentences repeated 20 times).
BASE_TEXT: str = CORPUS[: len(CORPUS) // 20]

#: The corpus sentences without their final period, as word lists.
SENTENCES: list[list[str]] = [s.split() for s in BASE_TEXT.split(".") if s.strip()]

#: Distinct corpus words, sorted.
WORDS: list[str] = sorted({w for sentence in SENTENCES for w in sentence})

#: Natural log of 2: one bit is this many nats.
LN2 = math.log(2.0)


def word_run(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` consecutive words of a random corpus sentence that has at least ``n`` words."""
    long_enough = [s for s in SENTENCES if len(s) >= n]
    sentence = long_enough[int(rng.integers(len(long_enough)))]
    start = int(rng.integers(len(sentence) - n + 1))
    return sentence[start:start + n]


def probabilities(rng: np.random.Generator, n: int, low: int = 5, high: int = 95) -> list[float]:
    """``n`` probabilities with two decimals, drawn uniformly from ``low/100 .. high/100``.

    Two decimals keep the stem readable and make exact checks with
    :class:`fractions.Fraction` possible.
    """
    return [int(k) / 100 for k in rng.integers(low, high + 1, size=n)]


def float_answer(value: float, unit: str = "", log_space: bool = False,
                 printed_steps: Sequence[float] = ()) -> Answer:
    """A float answer with the question-bank tolerances, printed to 4 significant figures.

    ``printed_steps`` are the intermediate numbers the worked solution prints
    and adds or subtracts to reach the answer. A student who works from those
    printed (rounded) numbers carries their rounding into the result, which a
    difference of close numbers magnifies (-5.123 - (-5.068) = -0.055 against
    -0.05525); the absolute tolerance grows by their summed rounding so that
    answer is accepted.
    """
    atol = max(QUESTION_ATOL, sum(fmt.printed_error(step) for step in printed_steps))
    return Answer(kind="float", value=float(value), display=fmt.num(value), rtol=QUESTION_RTOL,
                  atol=atol, unit=unit, log_space=log_space)


def int_answer(value: int, unit: str = "") -> Answer:
    """An exact integer answer."""
    return Answer(kind="integer", value=int(value), display=fmt.integer(value), unit=unit)


def shape_answer(value: Sequence[int]) -> Answer:
    """A shape answer, stored as a list of ints."""
    dims = [int(d) for d in value]
    return Answer(kind="shape", value=dims, display=fmt.shape(dims).strip("`"))


# --- independent checks -----------------------------------------------------

def exact_product(values: Sequence[float]) -> Fraction:
    """Exact product of short decimals (``0.4`` is read as 4/10, not its binary float)."""
    product = Fraction(1)
    for v in values:
        product *= Fraction(str(v))
    return product


def log_fraction(q: Fraction) -> float:
    """Natural log of a positive fraction, without rounding it to a float first."""
    return math.log(q.numerator) - math.log(q.denominator)


def check_close(stored: Any, expected: float, what: str = "answer") -> list[str]:
    """A problem if ``stored`` differs from an independently computed ``expected``."""
    if not isinstance(stored, (int, float)) or isinstance(stored, bool):
        return [f"{what} {stored!r} is not a number"]
    if abs(stored - expected) > QUESTION_CHECK_ATOL + QUESTION_CHECK_RTOL * abs(expected):
        return [f"{what} is {stored!r}, independent recomputation gives {expected!r}"]
    return []


def plain_mean_cross_entropy(logits: Sequence[Sequence[float]], targets: Sequence[int]) -> float:
    """Mean softmax cross-entropy of rows of logits against target ids, in plain Python.

    Each term is ``max + ln(fsum(exp(z - max))) - z[target]``; the mean is
    their ``fsum`` over the number of rows. Independent of ``solutions/``.
    """
    terms = []
    for row, target in zip(logits, targets):
        top = max(row)
        terms.append(top + math.log(math.fsum(math.exp(z - top) for z in row)) - row[target])
    return math.fsum(terms) / len(terms)


def check_equal(stored: Any, expected: Any, what: str = "answer") -> list[str]:
    """A problem if ``stored != expected``."""
    return [] if stored == expected else [f"{what} is {stored!r}, independent recomputation gives {expected!r}"]


def enumerate_param_counts(V: int, T: int, d: int, L: int, f: int, tied: bool) -> dict[str, int]:
    """Parameters of the course's GPT by component, by listing every tensor's shape and multiplying out.

    Keys: ``embeddings``, ``attention``, ``ffn``, ``layernorm``, ``lm_head`` and ``total``.
    """
    shapes: dict[str, list[tuple[int, ...]]] = {
        "embeddings": [(V, d), (T, d)],
        "attention": [(d, 3 * d), (3 * d,), (d, d), (d,)] * L,
        "ffn": [(d, f), (f,), (f, d), (d,)] * L,
        "layernorm": [(d,), (d,), (d,), (d,)] * L,
        "lm_head": [] if tied else [(d, V)],
    }
    counts = {name: sum(math.prod(s) for s in tensors) for name, tensors in shapes.items()}
    counts["total"] = sum(counts.values())
    return counts


def correct_choices(variant: dict[str, Any]) -> list[dict[str, Any]]:
    """The choices marked correct."""
    return [c for c in variant["choices"] if c["correct"]]

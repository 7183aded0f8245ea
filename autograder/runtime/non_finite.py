"""Where a student's nan or inf comes from, found by one more call rather than guessed.

A result that is not finite where the right one is gets a list of the usual
suspects (an exp that overflows, a log of 0, a division by 0). When the inputs
hold positions where every float array argument is 0 at once (a ratio of two
gradients at an entry where both are 0, a count of nothing), one more call
tells whether those positions are the cause: the same inputs with those entries
set to 1. If the student's result is then finite, the nan came from there (0/0,
or a log of 0), and that is said, with the positions; if it is not, nothing is.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from autograder.runtime.text import code


def not_finite(value: Any) -> bool:
    """Whether ``value`` (a number, an array, or a tuple of them) holds a nan or an inf."""
    if isinstance(value, (tuple, list)):
        return any(not_finite(v) for v in value)
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(array.size) and not bool(np.isfinite(array).all())


def zeros_together(args: tuple) -> tuple[list[int], np.ndarray] | None:
    """The float array arguments of one shape (two or more) and the positions where all of them are
    0; None when there are fewer than two such arrays or no such position."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size]
    if len(arrays) < 2 or len({args[i].shape for i in arrays}) != 1:
        return None
    both = np.logical_and.reduce([args[i] == 0 for i in arrays])
    return (arrays, both) if both.any() else None


def zeros_feedback(parameters: list[str], args: tuple, student_output: Any, right: Any,
                   call_student: Callable[..., Any] | None) -> str | None:
    """None, or a sentence: the student's result is not finite (the right one is) because of the
    positions where every float array argument is 0, shown by the result being finite once those
    entries are 1 (one more call of the student's function)."""
    if call_student is None or not not_finite(student_output) or not_finite(right):
        return None
    found = zeros_together(args)
    if found is None:
        return None
    arrays, both = found
    changed = [a.copy() if i in arrays else a for i, a in enumerate(args)]
    for i in arrays:
        changed[i][both] = 1.0
    try:
        with np.errstate(all="ignore"):
            again = call_student(*changed)
    except Exception:             # refusing the probe confirms nothing
        return None
    if not_finite(again):
        return None
    names = " and ".join(code(parameters[i]) if i < len(parameters) else f"argument {i + 1}" for i in arrays)
    count = int(both.sum())
    every = "both" if len(arrays) == 2 else "all"
    return (f"Your result is not finite because of the {count} position{'s' if count > 1 else ''} where "
            f"{names} are {every} 0: with those entries set to 1 it is finite. There a ratio is 0/0 or a log "
            "is of 0: guard that case as this function's definition in the notebook does.")

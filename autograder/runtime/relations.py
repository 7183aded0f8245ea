"""Say how a wrong result relates to the right one, when no catalogued mistake explains it.

A catalogue names the mistakes someone thought of; students make others. Many of
those leave a trace in how the result relates to the right one: every entry the
same multiple of the right value (a factor of N = B*T, a sign, a log base), the
same constant off, the right values with the axes in another order or shifted by
one position, every entry 0. Those relations are checked here on the test's own
inputs and turned into one sentence about the student's result. Sizes are
named by where they come from (the sizes of the axes of an argument), never by
a hidden value; no expected value is ever printed.
"""
from __future__ import annotations

import inspect
import itertools
import math
from typing import Any, Callable

import numpy as np

#: How close a relation must hold: the values a correct function returns are this close too.
_RTOL, _ATOL = 1e-6, 1e-9
#: Known constant factors between a right and a wrong result, and what they mean.
_LOG_FACTORS = ((1 / math.log(2), "a logarithm in base 2 where the natural logarithm is asked for"),
                (math.log(2), "a natural logarithm where base 2 is asked for"),
                (1 / math.log(10), "a logarithm in base 10 where the natural logarithm is asked for"))


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=_RTOL, atol=_ATOL))


def _sizes(parameters: list[str], args: tuple) -> list[tuple[int, str]]:
    """Sizes an argument's shape offers, each with a description: single axes and products of neighbours."""
    found: list[tuple[int, str]] = []
    for name, arg in zip(parameters, args):
        if not isinstance(arg, np.ndarray) or arg.ndim == 0:
            continue
        shape = arg.shape
        for start, stop in itertools.combinations(range(len(shape) + 1), 2):
            dims = shape[start:stop]
            size = math.prod(dims)
            if size <= 1:
                continue
            if len(dims) == 1:
                what = f"the size of axis {start} of `{name}`"
            else:
                axes = f"axes {start} and {start + 1}" if len(dims) == 2 else f"axes {start} to {stop - 1}"
                what = f"{' × '.join(map(str, dims))}, the sizes of {axes} of `{name}`"
            found.append((size, what))
    return found


def _factor_phrase(c: float, sizes: list[tuple[int, str]], one_value: bool = False) -> str | None:
    """``c`` as people say it: 'the opposite sign', 'N times too large' (with where N comes from), a log base.

    For ``one_value`` (a single number) any ratio holds, so only a ratio with a meaning is named:
    a sign, a log base, or a whole factor that is one of the inputs' sizes.
    """
    if abs(c + 1) < 1e-6:
        return "has the opposite sign of the right values"
    if abs(c) < 1e-12:
        return None
    for factor, meaning in _LOG_FACTORS:
        if abs(c - factor) < 1e-6 * factor:
            return f"is the right result times {factor:.4g}: {meaning}"
    for value, larger in ((c, "large"), (1 / c, "small")):
        k = round(abs(value))
        if k >= 2 and abs(abs(value) - k) < 1e-6 * k:
            sign = " and of the opposite sign" if value < 0 else ""
            where = next((what for size, what in sizes if size == k), None)
            if one_value and where is None:
                return None
            return (f"is exactly {k} times too {larger}{sign}"
                    + (f" ({k} = {where})" if where else ""))
    if one_value:
        return None
    return f"is the right result times one constant factor ({c:.4g}) at every entry"


def _array_relation(s: np.ndarray, r: np.ndarray, sizes: list[tuple[int, str]]) -> str | None:
    # A relation needs several entries to be evidence (one entry is a multiple of any other),
    # and scaling or offsetting whole numbers such as token ids means nothing.
    if s.dtype.kind not in "biuf" or r.dtype.kind not in "biuf" or s.size < 4:
        return None
    s64, r64 = s.astype(np.float64), r.astype(np.float64)
    if not (np.isfinite(s64).all() and np.isfinite(r64).all()):
        return None
    if s.shape != r.shape:
        for order in itertools.permutations(range(r.ndim)):
            if order != tuple(range(r.ndim)) and _close(s64, np.transpose(r64, order)):
                return (f"has the right values, with its axes in the order {order} of the right result's "
                        "(a transpose or a reshape where the axes had to be moved)")
        return None
    if _close(s64, r64):
        return None                      # the values are right: what failed is not about them
    if not np.any(s64) and np.any(r64):
        return "is 0 everywhere, where the right values are not"
    norm = float(np.vdot(r64, r64))
    if norm > 0 and r.dtype.kind == "f":
        c = float(np.vdot(s64, r64)) / norm
        if abs(c - 1) > 1e-6 and _close(s64, c * r64):
            return _factor_phrase(c, sizes)
    d = s64 - r64
    if r.dtype.kind == "f" and _close(d, np.full_like(d, d.flat[0])):
        return "differs from the right values by the same constant everywhere"
    if r.dtype.kind == "f" and r.ndim >= 2 and _close(d, np.broadcast_to(d[..., :1], d.shape)):
        return ("differs from the right values by a constant along the last axis, a different one at "
                "each position: something is added to (or left out of) each row as a whole")
    if r.ndim == 2 and r.shape[0] == r.shape[1] and _close(s64, r64.T):
        return "is the transpose of the right result"
    for axis in range(r.ndim):
        if r.shape[axis] < 3:
            continue
        head = [slice(None)] * r.ndim
        tail = [slice(None)] * r.ndim
        head[axis], tail[axis] = slice(1, None), slice(None, -1)
        if _close(s64[tuple(head)], r64[tuple(tail)]):
            return f"has the right values moved one place forward along axis {axis}"
        if _close(s64[tuple(tail)], r64[tuple(head)]):
            return f"has the right values moved one place back along axis {axis}"
    return None


def _number_relation(s: Any, r: Any, sizes: list[tuple[int, str]]) -> str | None:
    if isinstance(r, (int, np.integer)):          # a count or an id: no ratio means anything
        return None
    try:
        fs, fr = float(s), float(r)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(fs) and math.isfinite(fr)) or fr == 0 or math.isclose(fs, fr, rel_tol=_RTOL, abs_tol=_ATOL):
        return None
    return _factor_phrase(fs / fr, sizes, one_value=True)


def relation(student: Any, expected: Any, parameters: list[str], args: tuple) -> str | None:
    """One sentence on how ``student`` relates to ``expected`` (the reference's result on ``args``),
    or ``None`` when no simple relation holds. Tuples are compared part by part; the first
    part that differs and has a relation is described."""
    sizes = _sizes(parameters, args)
    if isinstance(expected, tuple) and isinstance(student, (tuple, list)) and len(student) == len(expected):
        for index, (s, r) in enumerate(zip(student, expected), start=1):
            found = relation(s, r, parameters, args)
            if found:
                return found.replace("Your result", f"Value {index} of the {len(expected)} you returned", 1)
        return None
    if isinstance(expected, np.ndarray) and isinstance(student, np.ndarray) and type(student) is np.ndarray:
        found = _array_relation(student, expected, sizes)
    elif isinstance(expected, (int, float, np.number)) and isinstance(student, (int, float, np.number)) \
            and not isinstance(student, bool):
        found = _number_relation(student, expected, sizes)
    else:
        found = None
    return f"Your result {found}." if found else None


def parameters_of(function: Callable) -> list[str]:
    """The parameter names of ``function``, to name the arguments sizes come from."""
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []

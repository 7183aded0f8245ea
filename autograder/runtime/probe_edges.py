"""Whether a probe's arguments bring a plausible computation to the edge of the float range.

Two students who make one mistake in two styles (``e / s`` or ``e * (1 / s)``, ``np.mean`` or a sum
over ``N``) return the same result up to round-off, which a probe digest ignores, except where an
intermediate sits at the edge of the range: there the order of the operations decides between a
finite value, ``inf`` and ``nan``. A sum of exponentials that is subnormal is such an intermediate:
``1 / s`` overflows below about 5.6e-309 (``e * (1 / s)`` is inf where ``e / s`` is finite), and
its few significant bits make two orders of summing differ by more than round-off. Exponentials are
what this unit computes (softmax, cross-entropy, log-sum-exp, perplexity), and the shift a mistake
takes before them decides where they land: the array's own maximum (softmax subtracting one
maximum for the whole array), no shift at all, a maximum along the wrong axis, or the maximum of one
row (the first row's, subtracted from every row). A sum either
comfortably normal or exactly zero (total underflow: ``0 / 0`` and ``0 * inf`` are both nan) is the
same in every style; only one in between is at the edge.

Class probes whose arguments put such a sum there are drawn again (``class_probes``), so what a
probe digest records is the mistake and not the student's order of operations. The check looks at
the arguments only, never at any student's output: it is the same for the whole class.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

#: Bits above the smallest normal number a sum must keep to count as clear of the edge: its
#: reciprocal and the quotients by it are then normal numbers with every bit, in any order (at most
#: the dtype's own mantissa bits, so a float16 array is not always at the edge).
EDGE_MARGIN_BITS = 24


def _shifts(values: np.ndarray, finite: np.ndarray) -> Iterator[np.ndarray | float]:
    """What a computation may subtract before exponentiating: nothing, the whole array's maximum,
    or its maximum along one axis (the right axis or a wrong one)."""
    yield 0.0
    yield float(values[finite].max())
    masked = np.where(finite, values, -np.inf)
    for axis in range(values.ndim):
        yield np.max(masked, axis=axis, keepdims=True)


def _one_row_shift_at_the_edge(values: np.ndarray, finite: np.ndarray, info: np.finfo, threshold: float) -> bool:
    """Whether, shifted by the maximum of any one row (a 1-d slice along any axis) or by nothing,
    some row's or the whole array's sum of exponentials is neither zero nor clear of the subnormal
    range. Worked in logarithms, one shift per row would be one exponential of the array per row:
    a sum is taken as possibly nonzero where its largest term is above the log of the smallest
    subnormal (less a margin), and as below the threshold where its log-sum-exp is; both err on the
    side of the edge."""
    lowest = float(np.log(info.smallest_subnormal)) - 1.0
    ceiling = float(np.log(threshold))
    masked = np.where(finite, values, -np.inf)
    shifts = [np.zeros(1)]
    rows: list[tuple[np.ndarray, np.ndarray]] = [(np.array([masked.max()]), np.array([np.logaddexp.reduce(masked, axis=None)]))]
    for axis in range(values.ndim):
        top = np.max(masked, axis=axis)
        shifts.append(top[np.isfinite(top)])
        kept = np.where(np.isfinite(top), top, 0.0)
        lse = np.log(np.sum(np.exp(masked - np.expand_dims(kept, axis)), axis=axis)) + kept
        rows.append((top.ravel(), lse.ravel()))
    candidates = np.unique(np.concatenate(shifts))
    for top, lse in rows:
        real = np.isfinite(top)
        # A shift c puts a row at the edge where lse - ceiling < c < top - lowest.
        low = np.searchsorted(candidates, lse[real] - ceiling, side="right")
        high = np.searchsorted(candidates, top[real] - lowest, side="left")
        if np.any(high > low):
            return True
    return False


def _array_at_the_edge(array: np.ndarray) -> bool:
    values = array.astype(np.float64)
    finite = np.isfinite(values)
    if not finite.any():
        return False
    info = np.finfo(array.dtype)          # a float32 or float16 array is judged in its own range
    threshold = info.tiny * 2.0 ** min(EDGE_MARGIN_BITS, info.nmant)
    low, high = float(values[finite].min()), float(values[finite].max())
    if min(low, low - high) > np.log(threshold):
        return False                      # every exponential under every shift is above the edge
    with np.errstate(all="ignore"):
        if _one_row_shift_at_the_edge(values, finite, info, threshold):
            return True
        for shift in _shifts(values, finite):
            exps = np.exp(np.where(finite, values - shift, -np.inf))
            for axis in (None, *range(values.ndim)):
                sums = np.sum(exps, axis=axis)
                if np.any((sums > 0) & (sums < threshold)):
                    return True
    return False


def at_the_edge(args: tuple[Any, ...]) -> bool:
    """Whether some floating-point array in ``args`` has, for some shift (``_shifts``, or the maximum
    of any one row) and along some axis or over the whole array, a sum of exponentials that is
    neither zero nor clear of the subnormal range: two orders of the same computation may give inf and a finite value there."""
    return any(_array_at_the_edge(a) for a in args
               if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size)

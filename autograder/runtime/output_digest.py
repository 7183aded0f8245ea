"""A digest of what a student function returned: a short text two outputs share when they are the
same result, up to round-off (``autograder.runtime.class_probes`` keeps it per function, and mistake
groups are made from it).

Arrays are reduced to their shape, dtype, size of values and a few random projections, each
rounded, so two students who compute the same thing in other styles (``np.mean`` or a sum over
``N``, float32 inside) get the same digest, while two different mistakes almost surely do not.
A number's kind enters where the hidden tests judge it (``number_kind``): a count returned as
``np.int64`` and one returned as a float are two results, ``float(x)`` and ``x * 1.0`` one.
"""
from __future__ import annotations

import functools
import hashlib
import math
from typing import Any

import numpy as np

#: Random projections of an array output that enter its digest.
PROJECTIONS = 3
#: Digits kept of a projection (relative to the array's size of values) and of that size.
PROJECTION_DECIMALS = 2
MAGNITUDE_DIGITS = 3
#: Below this size of values an output counts as zeros (round-off of a zero result).
ZERO_BELOW = 1e-12
#: Parts of a returned tuple, list or dict that enter its digest; the rest only as a count. A result
#: is a few values; a submission that returns tens of thousands of arrays on the probe calls would
#: otherwise make the grader digest each of them.
MAX_PARTS = 64


#: The place of an output the reference has nothing at (a key it does not return), or of a value
#: digested on its own (an argument changed in place): only what every test refuses is a kind there.
NO_PLACE = object()


def number_kind(value: Any, right: Any = NO_PLACE) -> str:
    """The kind of the number ``value`` where the hidden tests tell it from the reference's ``right``
    at its place, "" where they judge it by its value alone (as ``compare.number_structure`` and
    ``compare.check_plain`` do):

    - a NumPy float narrower than float64 is refused wherever a number is checked (too few digits);
    - a 0-d array is refused where the reference returns a number (it is not a plain number);
    - where the reference returns a Python int (a count, a token id: the docstring promises ints,
      and ``check_plain`` takes nothing else), a NumPy integer and a float are each another kind,
      whatever their value; a Python float and a NumPy float64 are one (both are floats);
    - where it returns anything else, every other real number is judged by its value.

    So ``float(x)`` and ``x * 1.0`` are one kind, and ``int(x)`` and ``x.item()`` another: one cause
    in two styles keeps one digest, while a count as ``np.int64`` and the same count as a float,
    which fail the same tests, are two results."""
    if isinstance(value, np.ndarray):
        placed = right is not NO_PLACE and not isinstance(right, np.ndarray)
        return f"0d-{value.dtype.name}" if value.ndim == 0 and placed else ""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return ""                          # not a number: the digest names it by itself
    if isinstance(value, np.floating) and value.dtype.itemsize < 8:
        return value.dtype.name
    if not isinstance(right, int) or isinstance(right, bool) or type(value) is int:
        return ""
    return "float" if isinstance(value, float) else np.dtype(type(value)).name


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()


def _rounded(value: float, digits: int) -> str:
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return "0" if abs(value) < ZERO_BELOW else f"{value:.{digits - 1}e}"


@functools.lru_cache(maxsize=16)
def _directions(size: int) -> np.ndarray:
    """The fixed random directions arrays of ``size`` entries are projected on (made once per size)."""
    directions = np.random.default_rng(size).standard_normal((PROJECTIONS, size)) / math.sqrt(size)
    directions.flags.writeable = False
    return directions


def _array_digest(array: np.ndarray) -> str:
    head = f"a{array.shape}{array.dtype.str}"
    if array.dtype.kind in "biu":          # whole numbers and masks: exact
        return head + _digest(np.ascontiguousarray(array).tobytes().hex())
    values = np.asarray(array, dtype=np.complex128 if array.dtype.kind == "c" else np.float64).ravel()
    if values.dtype.kind == "c":
        values = np.concatenate([values.real, values.imag])
    finite = np.isfinite(values)
    counts = f"n{int(np.isnan(values).sum())}p{int(np.isposinf(values).sum())}m{int(np.isneginf(values).sum())}"
    kept = np.where(finite, values, 0.0)
    size = float(np.sqrt(np.mean(kept ** 2))) if kept.size else 0.0
    if size < ZERO_BELOW:
        return f"{head}{counts}zero"
    projected = _directions(kept.size) @ (kept / size)
    return f"{head}{counts}s{_rounded(size, MAGNITUDE_DIGITS)}p" + ",".join(
        f"{p:.{PROJECTION_DECIMALS}f}" for p in projected)


def output_digest(value: Any, right: Any = NO_PLACE) -> str:
    """A text naming ``value`` up to round-off: what two outputs share when they are the same result.
    ``right`` is the reference's output it stands in place of: a number's kind enters where the
    tests tell it from the reference's (``number_kind``).

    Whatever the sandbox returned is only read here, never shown: strings and dict keys enter
    as digests of their text.
    """
    if isinstance(value, (tuple, list)):
        places = right if isinstance(right, (tuple, list)) else ()
        rest = f"+{len(value) - MAX_PARTS}" if len(value) > MAX_PARTS else ""
        return "(" + ",".join(output_digest(v, places[i] if i < len(places) else NO_PLACE)
                              for i, v in enumerate(value[:MAX_PARTS])) + rest + ")"
    if isinstance(value, dict):
        places = right if isinstance(right, dict) else {}
        keys = sorted(value, key=str)
        rest = f"+{len(keys) - MAX_PARTS}" if len(keys) > MAX_PARTS else ""
        return "{" + ",".join(f"{_digest(str(k))}:{output_digest(value[k], places.get(k, NO_PLACE))}"
                              for k in keys[:MAX_PARTS]) + rest + "}"
    kind = number_kind(value, right)
    return (f"{kind}:" if kind else "") + _leaf_digest(value)


def _leaf_digest(value: Any) -> str:
    """``output_digest`` of a value that is not a tuple, list or dict, its kind left out."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (int, np.integer)):
        return f"i{int(value)}"
    if isinstance(value, (float, np.floating)):
        number = float(value)
        if number.is_integer() and abs(number) < 2 ** 53:
            return f"i{int(number)}"           # a count computed in floats is the same count
        return f"f{_rounded(number, MAGNITUDE_DIGITS + 1)}"
    if isinstance(value, (complex, np.complexfloating)):
        return f"c{_rounded(value.real, 4)},{_rounded(value.imag, 4)}"
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biufc":
        return _leaf_digest(value[()])         # its value as a number's; ``number_kind`` tells it apart
    if isinstance(value, np.ndarray):
        return _array_digest(value)
    if isinstance(value, str):
        return "s" + _digest(value)
    return "t" + _digest(type(value).__name__)

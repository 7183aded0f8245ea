"""Judge one returned value against the expected one, the way a careful TA would.

Checks run in a fixed order: the value exists, it has an exact accepted type
(a plain ``numpy.ndarray`` or a plain Python/NumPy number: subclasses and
look-alikes are refused, since their comparisons can lie), then shape, dtype
kind and finiteness, and only then the values. The first failing check gives
the message; messages name the variable and never print the expected values.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder.runtime.tolerances import VALUE_ATOL, VALUE_RTOL

#: Stand-in for "the function returned nothing in this slot".
MISSING = object()

#: Plain number types a scalar answer may have: real ones only (a complex
#: number whose real part is right is not a right answer), and bool is
#: deliberately absent.
_NUMPY_NUMBER_TYPES = frozenset(
    t for t in set(np.sctypeDict.values()) if issubclass(t, (np.integer, np.floating))
)
PLAIN_NUMBER_TYPES = frozenset({int, float}) | _NUMPY_NUMBER_TYPES

#: Human names for dtype kinds (``numpy.dtype.kind``).
_KIND_NAMES = {"f": "floating-point", "i": "integer", "u": "integer", "b": "boolean", "c": "complex"}
_KIND_ACCEPTS = {"f": "f", "i": "iu", "u": "iu", "b": "b"}


@dataclass(frozen=True)
class Verdict:
    """Outcome of one comparison: ``ok`` and, when not ok, what to fix."""

    ok: bool
    message: str = ""


PASS = Verdict(True)


def _missing(name: str, value) -> Verdict | None:
    if value is MISSING:
        return Verdict(False, f"`{name}` was not returned: check that your function returns it.")
    if value is None:
        return Verdict(False, f"`{name}` is None: the function probably has no `return` "
                              "statement yet, or returns before computing it.")
    return None


def array_structure(name: str, value, expected: np.ndarray) -> Verdict:
    """Everything but the values: present, a plain ndarray, ``expected``'s shape, an accepted dtype kind, finite."""
    if (v := _missing(name, value)) is not None:
        return v
    if type(value) is not np.ndarray:
        return Verdict(False, f"`{name}` should be a numpy.ndarray but is a {type(value).__module__}."
                              f"{type(value).__qualname__}: return a plain array (np.asarray(...)).")
    if value.shape != expected.shape:
        return Verdict(False, f"`{name}` has shape {value.shape} but should have shape "
                              f"{expected.shape}: check which axes you reduce, reshape or transpose.")
    want_kind = expected.dtype.kind
    if value.dtype.kind not in _KIND_ACCEPTS.get(want_kind, want_kind):
        return Verdict(False, f"`{name}` has dtype {value.dtype} but should be "
                              f"{_KIND_NAMES.get(want_kind, want_kind)}.")
    if want_kind == "f" and value.dtype.kind == "f" and value.dtype != expected.dtype:
        why = ("float32 keeps about 7 digits, too few for the gradient checks: compute in float64"
               if expected.dtype == np.float64 else "keep the float dtype of the input")
        return Verdict(False, f"`{name}` has dtype {value.dtype} but should be {expected.dtype}: {why}.")
    if value.dtype.kind in "fc" and not np.all(np.isfinite(value)):
        bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
        return Verdict(False, f"`{name}` has {bad} non-finite entr{'y' if bad == 1 else 'ies'} "
                              "(nan or inf): look for an exp that overflows, a product that underflows to 0, "
                              "or a log of 0 or a division by 0.")
    return PASS


def count_not_close(value: np.ndarray, expected: np.ndarray, rtol: float, atol: float) -> int:
    """How many entries of ``value`` differ from ``expected`` (same shape) by more than
    ``atol + rtol * |expected|``: ``numpy.isclose``'s rule, where a non-finite expected entry
    must be met exactly, without its per-call overhead (grading compares a few hundred small
    arrays per submission, and ``isclose`` cost several times the arithmetic)."""
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.abs(value - expected) <= atol + rtol * np.abs(expected)
    close &= np.isfinite(expected)
    close |= value == expected
    return close.size - int(np.count_nonzero(close))


def numbers_close(value: float, expected: float, rtol: float, atol: float) -> bool:
    """``numpy.isclose``'s rule for two floats (see ``count_not_close``)."""
    return value == expected or (math.isfinite(expected) and abs(value - expected) <= atol + rtol * abs(expected))


def check_array(
    name: str,
    value,
    expected: np.ndarray,
    *,
    rtol: float = VALUE_RTOL,
    atol: float = VALUE_ATOL,
    exact: bool = False,
) -> Verdict:
    """Compare ``value`` with the ``expected`` ndarray.

    ``exact`` compares with ``array_equal`` (integer and boolean results);
    otherwise ``allclose`` with ``rtol``/``atol``. The expected dtype kind
    decides which kinds are accepted: any float for float, any integer for
    integer, bool for bool.
    """
    structure = array_structure(name, value, expected)
    if not structure.ok:
        return structure
    if exact:
        wrong = int(np.count_nonzero(value != expected))
    else:
        wrong = count_not_close(np.asarray(value, dtype=np.float64), np.asarray(expected, dtype=np.float64),
                                rtol, atol)
    if wrong:
        return Verdict(False, f"`{name}` has the right shape and type, but {wrong} of {value.size} "
                              "entries have wrong values.")
    return PASS


def number_structure(name: str, value, *, integer: bool = False) -> Verdict:
    """Everything but the value: present, a plain real number (whole for ``integer``), finite."""
    if (v := _missing(name, value)) is not None:
        return v
    if isinstance(value, (complex, np.complexfloating)):
        return Verdict(False, f"`{name}` is a complex number; it should be a real one (take care not to "
                              "compute it through complex arithmetic).")
    if type(value) not in PLAIN_NUMBER_TYPES:
        return Verdict(False, f"`{name}` should be a plain number but is a {type(value).__module__}."
                              f"{type(value).__qualname__}: return float(...) or int(...).")
    if isinstance(value, np.floating) and np.dtype(type(value)).itemsize < 8:
        return Verdict(False, f"`{name}` is a numpy.{type(value).__name__}, which keeps too few digits: "
                              "compute in float64 and return float(...).")
    if not isinstance(value, (int, np.integer)) and not np.isfinite(float(value)):
        return Verdict(False, f"`{name}` is not finite (nan or inf): look for an exp that overflows, "
                              "a product that underflows to 0, or a log of 0 or a division by 0.")
    if integer and not (isinstance(value, (int, np.integer)) or float(value).is_integer()):
        return Verdict(False, f"`{name}` should be a whole number.")
    return PASS


def check_number(
    name: str,
    value,
    expected: float | int,
    *,
    rtol: float = VALUE_RTOL,
    atol: float = VALUE_ATOL,
    integer: bool = False,
) -> Verdict:
    """Compare a scalar answer: exact for ``integer``, else within ``rtol``/``atol``."""
    structure = number_structure(name, value, integer=integer)
    if not structure.ok:
        return structure
    if integer:
        ok = int(value) == int(expected)
    else:
        ok = numbers_close(float(value), float(expected), rtol, atol)
    if not ok:
        return Verdict(False, f"`{name}` has the right type but the wrong value.")
    return PASS


def check_dtype(name: str, value, dtype, why: str) -> Verdict:
    """The array dtype the function's docstring promises (``why`` quotes the promise)."""
    if (v := _missing(name, value)) is not None:
        return v
    if type(value) is not np.ndarray:
        return Verdict(False, f"`{name}` should be a numpy.ndarray but is a {type(value).__module__}."
                              f"{type(value).__qualname__}: return a plain array (np.asarray(...)).")
    if value.dtype != np.dtype(dtype):
        return Verdict(False, f"`{name}` has dtype {value.dtype}; it should be {np.dtype(dtype)} ({why}).")
    return PASS


def check_plain(name: str, value, kind: type, why: str) -> Verdict:
    """A plain Python ``int`` or ``float`` as the docstring promises (a NumPy float64 counts as a
    float, being one; a NumPy integer is not an ``int``, and float32 is not a float)."""
    if (v := _missing(name, value)) is not None:
        return v
    ok = isinstance(value, float) if kind is float else type(value) is kind
    if not ok:
        return Verdict(False, f"`{name}` is a {type(value).__module__}.{type(value).__qualname__}; it should be "
                              f"a Python {kind.__name__} ({why}): return {kind.__name__}(...).")
    return PASS


def explained(verdict: Verdict, why: str, shows: Callable[[], bool] | None = None) -> Verdict:
    """``verdict``, with ``why`` (what the test's inputs probe, and what that needs) added when it failed.

    ``shows``: when given, ``why`` is added only if it returns True, that is when the student's
    result shows what ``why`` is about (a non-finite loss for an underflow, a deviation of the
    size an epsilon makes): a hint about a cause the result does not show would send the student
    after code they never wrote. Called only on failure, so it costs nothing on a pass."""
    if verdict.ok or not why:
        return verdict
    try:
        applies = shows is None or bool(shows())
    except Exception:             # a student's odd result: no hint rather than a crash
        applies = False
    return Verdict(False, f"{verdict.message} {why}") if applies else verdict

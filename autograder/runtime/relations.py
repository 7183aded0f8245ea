"""Say how a wrong result relates to the right one, when no catalogued mistake explains it.

A catalogue names the mistakes someone thought of; students make others. Many of
those leave a trace in how the result relates to the right one: every entry the
same multiple of the right value (a factor of N = B*T, a sign, a log base), the
same constant off, the right values with the axes in another order or shifted by
one position, every entry 0. Those relations are checked here on the test's own
inputs and turned into one sentence about the student's result. Sizes are
named by where they come from (the sizes of the axes of an argument), never by
a hidden value; no expected value is ever printed.

Why one module of this size: the fixed-input public checks ship this file's source into the
student's kernel and execute it there, so every relation the grader knows lives in one file that
imports nothing but numpy and the standard library.
"""
from __future__ import annotations

import inspect
import itertools
import math
import re
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


def is_whole_number(x: Any) -> bool:
    """A Python or NumPy integer that is not a bool: a count, a size, a setting."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def _zero_one(arg: Any) -> bool:
    """An integer array of 0s and 1s: a mask given as integers, keeping the positions a boolean one would."""
    return isinstance(arg, np.ndarray) and arg.dtype.kind in "iu" and arg.size > 0 and bool(np.isin(arg, (0, 1)).all())


#: A size the inputs offer: its value, how to say where it comes from, and what it is made of
#: (each axis size or mask count it multiplies), so two descriptions of the same quantity are
#: known to be one explanation, and two different ones a coincidence.
Size = tuple[int, str, tuple[str, ...]]


def _sizes(parameters: list[str], args: tuple) -> list[Size]:
    """Sizes an argument's shape offers, each with a description: single axes and products of neighbours."""
    found: list[Size] = []
    for name, arg in zip(parameters, args):
        if not isinstance(arg, np.ndarray) or arg.ndim == 0:
            continue
        if arg.dtype.kind == "b" and arg.any():
            found.append((int(arg.sum()), f"the number of True entries of `{name}`, the positions it keeps",
                          (f"{name}:kept",)))
        elif _zero_one(arg) and arg.any():
            # A 0/1 integer mask keeps positions as a boolean one does: its count is a quantity too.
            found.append((int(arg.sum()), f"the number of 1 entries of `{name}`, the positions it keeps",
                          (f"{name}:kept",)))
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
            # Axes of one size count as one quantity (targets' (B, T) are logits' first two axes);
            # a mask's count of kept positions is another quantity, whatever its value.
            found.append((size, what, tuple(f"axis of {dim}" for dim in dims)))
    return found


def _ways(c: float, sizes: list[Size]) -> list[tuple[tuple[int, int], str, tuple]]:
    """Each way ``c`` is one size or a ratio of two, as ((numerator, denominator), where each comes
    from, the axes it reduces to): ``60/18`` over axes (1, 2) and (0, 1) of one array reduces to
    axis 2 over axis 0, the same quantity as ``10/3`` over those two axes."""
    found = []
    for size, what, atoms in sizes:
        if size >= 2 and abs(c - size) < 1e-6 * size:
            found.append(((size, 1), f"{size} = {what}", (tuple(sorted(atoms)), ())))
    for (a, what_a, atoms_a), (b, what_b, atoms_b) in itertools.permutations(sizes, 2):
        if a != b and b >= 2 and abs(c - a / b) < 1e-6 * abs(c):
            top, bottom = list(atoms_a), list(atoms_b)
            for atom in atoms_b:
                if atom in top:
                    top.remove(atom)
                    bottom.remove(atom)
            found.append(((a, b), f"{a} = {what_a}; {b} = {what_b}", (tuple(sorted(top)), tuple(sorted(bottom)))))
    return found


def _one_way(c: float, sizes: list[Size], notebook: int) -> tuple[tuple[int, int], str] | None:
    """Where ``c`` comes from, when it comes from one quantity only: a size the student's own
    notebook-level numbers give (the first ``notebook`` entries of ``sizes``) first, else the one
    reduced reading of the inputs' sizes, said as simply as it can be; None when two different
    readings fit (a coincidence of this input's sizes is no evidence of either)."""
    mine = _ways(c, sizes[:notebook])
    if mine:
        return mine[0][:2]
    ways = _ways(c, sizes[notebook:])
    if len({key for _, _, key in ways}) != 1:
        return None
    ratio, said, _ = min(ways, key=lambda way: way[0][1] != 1)     # one size before a ratio of two
    return ratio, said


def _factor_phrase(c: float, sizes: list[Size], one_value: bool = False, notebook: int = 0) -> str | None:
    """``c`` as people say it: 'the opposite sign', 'N times too large' (with where N comes from), a log base.

    For ``one_value`` (a single number) any ratio holds, so only a ratio with a meaning is named:
    a sign, a log base, or a factor that one quantity of the inputs gives.
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
            where = _one_way(float(k), sizes, notebook)
            if one_value and where is None:
                return None
            return f"is exactly {k} times too {larger}{sign}" + (f" ({where[1]})" if where else "")
    where = _one_way(abs(c), sizes, notebook)
    if where is not None and where[0][1] != 1:
        (a, b), said = where
        return f"is the right result times {a}/{b} ({said}): divided by {b} where {a} was due, or the reverse"
    if one_value:
        return None
    return f"is the right result times one constant factor ({c:.4g}) at every entry"


def _array_relation(s: np.ndarray, r: np.ndarray, sizes: list[Size],
                    named: list[tuple[str, Any]] = (), notebook: int = 0) -> str | None:
    # A relation needs several entries to be evidence (one entry is a multiple of any other).
    # Whole numbers such as token ids are only ever moved: scaling or offsetting them means nothing.
    if s.dtype.kind not in "biuf" or r.dtype.kind not in "biuf" or s.size < 4:
        return None
    s64, r64 = s.astype(np.float64), r.astype(np.float64)
    if not np.isfinite(r64).all():
        return None
    if not np.isfinite(s64).all():
        return _non_finite_cause(named)
    if r.dtype.kind in "iu" and s.dtype.kind == "f":
        return _value_not_position(s64, r, named)
    if s.shape != r.shape:
        for order in itertools.permutations(range(r.ndim)):
            if order != tuple(range(r.ndim)) and _close(s64, np.transpose(r64, order)):
                return (f"has the right values, with its axes in the order {order} of the right result's "
                        "(a transpose or a reshape where the axes had to be moved)")
        return _axis_of_one(s64, r64) or _reduced_short(s64, r64) or _one_slice(s64, r64) or _one_axis_off(s64, r64)
    if _close(s64, r64):
        return None                      # the values are right: what failed is not about them
    floats = r.dtype.kind == "f"
    if not np.any(s64) and np.any(r64):
        return "is 0 everywhere, where the right values are not"
    norm = float(np.vdot(r64, r64))
    if floats and norm > 0:
        c = float(np.vdot(s64, r64)) / norm
        if abs(c - 1) > 1e-6 and _close(s64, c * r64):
            return _factor_phrase(c, sizes, notebook=notebook)
    d = s64 - r64
    if floats and _close(d, np.full_like(d, d.flat[0])):
        return "differs from the right values by the same constant everywhere"
    if floats and r.ndim >= 2 and _close(d, np.broadcast_to(d[..., :1], d.shape)):
        return ("differs from the right values by a constant along the last axis, a different one at "
                "each position: something is added to (or left out of) each row as a whole")
    if r.ndim == 2 and r.shape[0] == r.shape[1] and _close(s64, r64.T):
        return "is the transpose of the right result"
    return (_shift(s64, r64) or _rows_moved(s64, r64) or (_normalised_elsewhere(s64, r64) if floats else None)
            or _masked_region(s64, r64, named) or _every_other(s64, r64)
            or (_rounding_sized(s64, r64) if floats else None) or _axis_region(s64, r64))


def _every_other(s: np.ndarray, r: np.ndarray) -> str | None:
    """Right at every second entry (in memory order) and 0 at the others: half the entries skipped."""
    flat_s, flat_r = s.reshape(-1), r.reshape(-1)
    if flat_r.size < 6:
        return None
    for start in (0, 1):
        kept = np.zeros(flat_r.size, dtype=bool)
        kept[start::2] = True
        if _close(flat_s[kept], flat_r[kept]) and not np.any(flat_s[~kept]) and np.any(flat_r[~kept]):
            return (f"is right at every second entry (in row-major order, from entry {start}) and 0 at the "
                    "others: every second entry was skipped, as a loop or a slice that advances two entries "
                    "at a time does")
    return None


#: Formulas a student may apply to a single number where another is asked (``sqrt`` for ``exp``).
_SCALAR_FORMULAS: tuple[tuple[str, Callable[[float], float]], ...] = (
    ("np.exp({})", math.exp), ("np.sqrt({})", math.sqrt), ("np.log({})", math.log), ("2 ** {}", lambda x: 2.0 ** x),
    ("10 ** {}", lambda x: 10.0 ** x), ("np.exp(-{})", lambda x: math.exp(-x)), ("{} ** 2", lambda x: x * x),
    ("1 / {}", lambda x: 1 / x), ("-{}", lambda x: -x), ("{}", lambda x: x), ("np.log2({})", math.log2),
    ("np.log10({})", math.log10), ("np.exp({} / 2)", lambda x: math.exp(x / 2)))


def _scalar_formula(s: Any, named: list[tuple[str, Any]],
                    observations: list[tuple[Any, Any, tuple]]) -> str | None:
    """The student's number as a simple formula of the function's single number argument, on this
    input and on every probe (one value fits many formulas; several values fit one)."""
    numbers = [(name, a) for name, a in named if isinstance(a, (float, np.floating))]
    if len(named) != 1 or len(numbers) != 1 or not observations:
        return None
    name, x = numbers[0]

    def fits(formula: Callable[[float], float], value: float, out: Any) -> bool:
        try:
            want, got = formula(float(value)), float(out)
        except (ValueError, OverflowError, ZeroDivisionError, TypeError):
            return False
        return math.isfinite(want) and math.isclose(got, want, rel_tol=_RTOL, abs_tol=_ATOL)
    found = [text for text, formula in _SCALAR_FORMULAS
             if fits(formula, x, s) and all(fits(formula, a[0], so) for so, _, a in observations)]
    if len(found) != 1:
        return None
    return (f"is `{found[0].format(name)}`, here and on {len(observations)} other value"
            f"{'s' if len(observations) > 1 else ''} of `{name}` tried: another formula than the one asked for")


def _rounding_sized(s: np.ndarray, r: np.ndarray) -> str | None:
    """Errors no larger than float32's rounding (a few parts in 10 million of the values' size): said
    as their size, with the slips that give such errors as possibilities (a float32 step, a small
    constant added, a slightly different step or formula), none of which the size alone confirms."""
    scale = float(np.max(np.abs(r)))
    worst = float(np.max(np.abs(s - r)))
    if scale > 0 and worst <= 3e-6 * scale:
        return (f"differs from the right values only a little (at most {worst / scale:.0e} of the values' size), "
                "more than the test allows: some step differs slightly from the definition, such as part of the "
                "computation in float32, a small constant added, or another step size or formula")
    return None


def _varied(r: np.ndarray) -> bool:
    """Entries that are not all one value: only then can values in another arrangement be told apart
    (a result of zeros equals any slice, sum or reshape of zeros)."""
    return r.size >= 2 and float(np.ptp(r)) > _ATOL + _RTOL * float(np.max(np.abs(r)))


def _axis_of_one(s: np.ndarray, r: np.ndarray) -> str | None:
    """The right values in the right order, with axes of size 1 added or left out: a reduction with
    ``keepdims=True`` where the axis goes (or without it where it stays), or an index that drops a
    position axis of size 1."""
    if s.size != r.size or not _varied(r) or [d for d in s.shape if d != 1] != [d for d in r.shape if d != 1] \
            or not _close(s.reshape(r.shape), r):
        return None
    extra = s.ndim - r.ndim
    if extra > 0:
        return (f"has the right values, with {extra} ax{'is' if extra == 1 else 'es'} of size 1 more than the right "
                f"result (shape {s.shape} where {r.shape} is due): an axis of size 1 is kept or added where the result "
                "has none (by a reduction with `keepdims=True`, an index `[None]`, a reshape, or a product with an "
                "operand that still has that axis). Remove it")
    if extra < 0:
        return (f"has the right values, without {-extra} ax{'is' if extra == -1 else 'es'} of size 1 the right "
                f"result has (shape {s.shape} where {r.shape} is due): an axis of size 1 is dropped where it must stay "
                "(by a reduction without `keepdims=True`, an integer index such as `[:, -1]`, a `squeeze`, or a reshape "
                "that leaves it out)")
    return None


def _reduced_short(s: np.ndarray, r: np.ndarray) -> str | None:
    """One axis more than the right result, whose sum (or mean) over that axis is the right result:
    a reduction over some of the axes where all of them are due."""
    if s.ndim != r.ndim + 1 or not _varied(r):
        return None
    for axis in range(s.ndim):
        if s.shape[axis] < 2 or s.shape[:axis] + s.shape[axis + 1:] != r.shape:
            continue
        for how, reduce in (("summed", np.sum), ("averaged", np.mean)):
            if _close(reduce(s, axis=axis), r):
                return (f"has an axis the right result does not have (axis {axis}, of size {s.shape[axis]}), and "
                        f"{how} over that axis it gives the right values: the reduction leaves that axis out. "
                        "Reduce over every axis the result does not keep (for example `axis=(0, 1)`, or reshape "
                        "to two axes first)")
    return None


def _one_slice(s: np.ndarray, r: np.ndarray) -> str | None:
    """One slice of the right result along one axis, at one index only: the right computation applied
    to one position (``hidden[:, -1]``, ``hidden[-1]``) where every position is due. Said only when
    no other slice of any axis has the same values (equal slices would make the index a guess)."""
    if s.ndim != r.ndim - 1 or not _varied(s):
        return None
    found = []
    for axis in range(r.ndim):
        if r.shape[axis] < 2 or r.shape[:axis] + r.shape[axis + 1:] != s.shape:
            continue
        found += [(axis, i) for i in range(r.shape[axis]) if _close(s, np.take(r, i, axis=axis))]
    if len(found) != 1:
        return None
    axis, index = found[0]
    n = r.shape[axis]
    where = "the last index" if index == n - 1 else "the first index" if index == 0 else f"index {index}"
    return (f"is the right result at {where} of axis {axis} only (of {n}), with that axis left out: the "
            f"computation is applied to one position (an index such as `[:, -1]` or `[-1]`) where all {n} are due")


def _wrapped_part(student: tuple | list, expected: tuple) -> str | None:
    """A returned array that is another returned array moved one place back along an axis, its last
    entries being the other's first ones (``np.roll(x, -1, axis)``), where the right one holds other
    values there: the next entries wrapped around to the row's start instead of read past its end.
    Said only when the right result differs from the student's at those entries alone."""
    arrays = [(i, a) for i, a in enumerate(student) if isinstance(a, np.ndarray) and a.ndim >= 1 and a.size >= 4]
    for k, s in arrays:
        r = expected[k]
        if not isinstance(r, np.ndarray) or r.shape != s.shape or _close(s.astype(np.float64), r.astype(np.float64)):
            continue
        for j, other in arrays:
            if j == k or other.shape != s.shape:
                continue
            for axis in range(s.ndim):
                if s.shape[axis] < 3 or not np.array_equal(s, np.roll(other, -1, axis=axis)):
                    continue
                before = [slice(None)] * s.ndim
                before[axis] = slice(None, -1)
                if np.array_equal(s[tuple(before)], r[tuple(before)]):
                    return (f"Value {k + 1} of the {len(expected)} you returned is value {j + 1} moved one place back "
                            f"along axis {axis}, with value {j + 1}'s first entries at the end (as `np.roll(..., -1)` "
                            f"does): it is right except at the last index of axis {axis}, where the next entries of "
                            "the data are due, not the first ones of the row wrapped around")
    return None


def _one_axis_off(s: np.ndarray, r: np.ndarray) -> str | None:
    """Shapes that differ by one or two entries along a single axis. Said with a cause only when the
    values show it: the right values of the first positions (a slice or range that stops too early,
    or, with more entries, runs too far), or of the last ones only."""
    got, due = s.shape, r.shape
    if len(got) != len(due):
        return None
    off = [axis for axis, (a, b) in enumerate(zip(got, due)) if a != b]
    if len(off) != 1 or abs(got[off[0]] - due[off[0]]) > 2:
        return None
    axis = off[0]
    fewer = got[axis] < due[axis]
    said = (f"has {got[axis]} entr{'y' if got[axis] == 1 else 'ies'} along axis {axis} where {due[axis]} "
            f"{'is' if due[axis] == 1 else 'are'} due")
    shorter, longer = (s, r) if fewer else (r, s)
    n = shorter.shape[axis]
    first = np.take(longer, np.arange(n), axis=axis)
    last = np.take(longer, np.arange(longer.shape[axis] - n, longer.shape[axis]), axis=axis)
    if _close(shorter, first):
        return (f"{said}, with the right values at the {'first ' + str(n) if fewer else str(n)} positions: a slice "
                f"or a range {'stops too early' if fewer else 'runs too far'} (check each bound, such as "
                "`i + T` against `i + T + 1`)")
    if fewer and _close(shorter, last):
        return (f"{said}, with the right values of the last {'position' if n == 1 else f'{n} positions'} only: "
                "the earlier ones are left out")
    return said


def _non_finite_cause(named: list[tuple[str, Any]]) -> str | None:
    """Why a result can be nan or inf where the right one is finite, read from the inputs: a mask
    that keeps nothing (an average over no positions is 0/0), or values large enough for an exp to
    overflow (or, negated, to underflow to 0 before a log)."""
    for name, arg in named:
        if isinstance(arg, np.ndarray) and arg.dtype.kind == "b" and arg.size and not arg.any():
            return (f"is not finite, and here `{name}` keeps no position at all: an average over no "
                    "positions is 0/0. The notebook says what to return in that case; check for it "
                    "before dividing")
    for name, arg in named:
        if isinstance(arg, np.ndarray) and arg.dtype == np.float64 and arg.size \
                and 0 < float(np.min(np.abs(arg[arg != 0]), initial=np.inf)) < 1e-38:
            return (f"is not finite, and here `{name}` holds values too small for float32 (below 1e-38): "
                    "converted to float32 they become 0, and a log of 0 is -inf. Compute in float64")
    for name, arg in named:
        if isinstance(arg, np.ndarray) and arg.dtype.kind == "f" and arg.size \
                and float(np.nanmax(np.abs(arg))) > 700:
            return (f"is not finite, and here `{name}` holds entries larger than 700 in size: `np.exp` of "
                    "such a value overflows to inf (or, for a large negative one, gives 0 and then a log "
                    "of 0). Subtract each row's maximum before the exp, and take logs of probabilities "
                    "as `x - max - log(sum(exp(x - max)))`")
    return None


def _value_not_position(s: np.ndarray, r: np.ndarray, named: list[tuple[str, Any]]) -> str | None:
    """Floats where positions are due: the largest (or summed) values instead of where they are."""
    for name, arg in named:
        if not (isinstance(arg, np.ndarray) and arg.dtype.kind == "f" and arg.ndim == r.ndim + 1
                and arg.shape[:-1] == r.shape):
            continue
        if _close(s, arg.max(axis=-1)):
            return (f"holds the largest value along the last axis of `{name}`, where the position of that "
                    "value is asked for (`argmax`, not `max`)")
    return None


def _shift(s: np.ndarray, r: np.ndarray) -> str | None:
    """The right values moved one or two places along one axis."""
    for step, places in ((1, "one place"), (2, "two places")):
        for axis in range(r.ndim):
            if r.shape[axis] < step + 2:
                continue
            head = [slice(None)] * r.ndim
            tail = [slice(None)] * r.ndim
            head[axis], tail[axis] = slice(step, None), slice(None, -step)
            if _close(s[tuple(head)], r[tuple(tail)]):
                return f"has the right values moved {places} forward along axis {axis}"
            if _close(s[tuple(tail)], r[tuple(head)]):
                return f"has the right values moved {places} back along axis {axis}"
    return None


def _rows_moved(s: np.ndarray, r: np.ndarray) -> str | None:
    """The right rows (along the last axis), each intact, at other positions."""
    if r.ndim < 2 or r.shape[-1] < 2 or math.prod(r.shape[:-1]) < 2:
        return None
    rows_s, rows_r = s.reshape(-1, r.shape[-1]), r.reshape(-1, r.shape[-1])

    def ordered(rows: np.ndarray) -> np.ndarray:
        return rows[np.lexsort(np.round(rows, 9).T[::-1])]
    if _close(ordered(rows_s), ordered(rows_r)):
        return ("has the right rows along the last axis, but at other positions: the leading axes were "
                "put back in another order than they were flattened in (a reshape where a transpose "
                "was needed, or the reverse)")
    return None


def _normalised_elsewhere(s: np.ndarray, r: np.ndarray) -> str | None:
    """Probabilities that sum to 1 over the wrong axis, or over the whole array."""
    for axis in range(r.ndim):
        if r.shape[axis] < 2 or not np.allclose(r.sum(axis=axis), 1.0, rtol=_RTOL, atol=1e-9):
            continue
        if r.ndim > 1 and np.isclose(s.sum(), 1.0, rtol=_RTOL, atol=1e-9):
            return f"sums to 1 over the whole array, where each slice along axis {axis} should sum to 1"
        for other in range(r.ndim):
            if other != axis and s.shape[other] > 1 and np.allclose(s.sum(axis=other), 1.0, rtol=_RTOL, atol=1e-9):
                return f"sums to 1 along axis {other}, where it should sum to 1 along axis {axis}"
    return None


def _wrong_entries(s: np.ndarray, r: np.ndarray) -> np.ndarray:
    return ~np.isclose(s, r, rtol=_RTOL, atol=_ATOL)


def _masked_region(s: np.ndarray, r: np.ndarray, named: list[tuple[str, Any]]) -> str | None:
    """Right wherever a mask argument keeps a position (True, or 1 in a 0/1 integer mask), wrong
    only where it leaves one out."""
    wrong = _wrong_entries(s, r)
    for name, arg in named:
        kept, left = "True", "False"
        if _zero_one(arg):
            arg, kept, left = arg.astype(bool), "1", "0"
        if not (isinstance(arg, np.ndarray) and arg.dtype.kind == "b" and 0 < arg.ndim <= r.ndim
                and r.shape[:arg.ndim] == arg.shape and arg.any() and not arg.all()):
            continue
        bad = wrong.reshape(arg.shape + (-1,)).any(axis=-1)
        if bad.any() and not bad[arg].any():
            left_out = r.reshape(arg.shape + (-1,))[~arg]
            if not np.any(left_out):
                return (f"is right where `{name}` is {kept}, but not 0 where `{name}` is {left}: the "
                        f"positions `{name}` leaves out must get exactly 0")
            return f"is right where `{name}` is {kept}, and wrong only where `{name}` is {left}"
    return None


def _axis_region(s: np.ndarray, r: np.ndarray) -> str | None:
    """Wrong (or right) at one or two indices of one axis only."""
    wrong = _wrong_entries(s, r)
    best = None
    for axis in range(r.ndim):
        n = r.shape[axis]
        if n < 3:
            continue
        bad = np.flatnonzero(np.moveaxis(wrong, axis, 0).reshape(n, -1).any(axis=1))
        if 0 < len(bad) <= 2:
            where = " and ".join(str(i) for i in bad)
            said = f"is wrong only at index {where} of axis {axis} (of size {n}{', the last index' if bad[-1] == n - 1 else ''})"
        elif 0 < n - len(bad) <= 2 and len(bad) < n:
            good = sorted(set(range(n)) - set(bad.tolist()))
            said = (f"has wrong entries at every index of axis {axis} (of size {n}) but "
                    f"{' and '.join(map(str, good))}")
        else:
            continue
        if best is None or len(bad) < best[0]:
            best = (len(bad), said)
    return best[1] if best else None


def _same_number(a: Any, b: Any) -> bool:
    try:
        return math.isclose(float(a), float(b), rel_tol=_RTOL, abs_tol=_ATOL)
    except (TypeError, ValueError, OverflowError):
        return False


def _non_finite_number(x: Any) -> bool:
    try:
        return not math.isfinite(float(x))
    except (TypeError, ValueError, OverflowError):
        return False


#: How many copies of one term, and of each of two terms, a count relation may name.
_MOST_COPIES, _MOST_COPIES_OF_TWO = 9, 4


def _whole_numbers(named: list[tuple[str, Any]]) -> list[tuple[str, int]]:
    return [(name, int(v)) for name, v in named if is_whole_number(v) and int(v) >= 1]


def _monomials(names: list[str]) -> list[tuple[str, ...]]:
    """Products of one to three of the settings (``n_layer × n_embd × n_embd``), simplest first."""
    return [combo for degree in (1, 2, 3) for combo in itertools.combinations_with_replacement(names, degree)]


#: A reading of a wrong count: its tier, and what it says. Tier 0 is ("fewer" or "more", a setting):
#: a count for one where all of them are due, or one multiplied once too often. Tiers 1 and 2 are
#: terms (copies, product of settings) whose sum is the student's count minus the right one.
_Reading = tuple[int, tuple]


def _count_readings(names: list[str]) -> list[_Reading]:
    """Every explanation of a wrong count this module can state: tier 0 a count for one where all
    are due (or the reverse), tier 1 copies of one product of settings, tier 2 a sum of two. The
    simplest tier that explains the count comes first."""
    readings: list[_Reading] = [(0, (way, name)) for name in names for way in ("fewer", "more")]
    terms = _monomials(names)
    readings += [(1, ((k, term),)) for term in terms for k in range(-_MOST_COPIES, _MOST_COPIES + 1) if k]
    low = [t for t in terms if len(t) <= 2]
    copies = [k for k in range(-_MOST_COPIES_OF_TWO, _MOST_COPIES_OF_TWO + 1) if k]
    readings += [(2, ((a, first), (b, second))) for i, first in enumerate(low) for second in low[i + 1:]
                 for a in copies for b in copies]
    return readings


def _holds(reading: _Reading, values: dict[str, int], s: int, r: int) -> bool:
    tier, what = reading
    if tier == 0:
        way, name = what
        return r != 0 and (s * values[name] == r if way == "fewer" else r * values[name] == s)
    return s - r == sum(k * math.prod(values[n] for n in term) for k, term in what)


def _say_reading(reading: _Reading, diff: int, probes: int) -> str:
    tier, what = reading
    if tier == 0:
        way, name = what
        return (f"is exactly `{name}` times too small: a count for one where all `{name}` of them are due"
                if way == "fewer" else
                f"is exactly `{name}` times too large: a count multiplied by `{name}` once too often")
    # Said as a sum that is positive here, its positive terms first.
    sign = 1 if diff > 0 else -1
    parts: list[str] = []
    for k, term in sorted(((sign * k, term) for k, term in what), key=lambda kt: kt[0] < 0):
        product = ("" if abs(k) == 1 else f"{abs(k)} × ") + " × ".join(f"`{n}`" for n in term)
        parts.append((product if k > 0 else f"−{product}") if not parts else f"{'+' if k > 0 else '−'} {product}")
    return (f"is {' '.join(parts)} {'too large' if diff > 0 else 'too small'} ({abs(diff)} here, and the "
            f"same terms on {probes} other setting{'s' if probes > 1 else ''} tried): a term of that size is "
            f"{'counted that should not be' if diff > 0 else 'left out'}. Check which weights, biases or "
            "LayerNorm parameters of that size the convention counts")


def count_difference(s: Any, r: Any, named: list[tuple[str, Any]],
                     observations: list[tuple[Any, Any, list[tuple[str, Any]]]] = ()) -> str | None:
    """A wrong count explained in the count's own terms: a count for one block where every block's
    is due, or copies of a product of the whole-number arguments left out or counted twice
    (``4 × n_layer × n_embd``: four vectors of size n_embd per layer).

    At one setting of the arguments products coincide (4·n_embd·n_layer = 2·block_size·n_layer
    when block_size = 2·n_embd), so a reading is stated only when it also explains the student's
    count on ``observations``: the student's and the right count on other settings, (student,
    right, named arguments), chosen so that products of different settings differ. Of the readings
    that survive, the simplest kind is taken; if two of that kind remain, nothing is said.
    """
    if not (is_whole_number(s) and is_whole_number(r)) or int(s) == int(r):
        return None
    sizes = _whole_numbers(named)
    seen = [(dict(sizes), int(s), int(r))]
    for s2, r2, named2 in observations:
        if not (is_whole_number(s2) and is_whole_number(r2)) \
                or [n for n, _ in _whole_numbers(named2)] != [n for n, _ in sizes]:
            return None                  # a probe the student's count did not answer says nothing
        seen.append((dict(_whole_numbers(named2)), int(s2), int(r2)))
    if not sizes or len(seen) < 2:
        return None                      # one setting cannot tell coincidences from causes
    survivors = [reading for reading in _count_readings([n for n, _ in sizes])
                 if all(_holds(reading, v, s_, r_) for v, s_, r_ in seen)]
    if not survivors:
        return None
    simplest = min(tier for tier, _ in survivors)
    found = [reading for reading in survivors if reading[0] == simplest]
    if len(found) > 1:
        return None                      # two readings fit equally: say nothing rather than guess
    return _say_reading(found[0], int(s) - int(r), len(seen) - 1)


def _number_relation(s: Any, r: Any, sizes: list[Size], notebook: int = 0) -> str | None:
    if isinstance(r, (int, np.integer)):          # a count or an id: no ratio means anything
        return None
    try:
        fs, fr = float(s), float(r)
    except (TypeError, ValueError):
        return None
    if not (math.isfinite(fs) and math.isfinite(fr)) or fr == 0 or math.isclose(fs, fr, rel_tol=_RTOL, abs_tol=_ATOL):
        return None
    found = _factor_phrase(fs / fr, sizes, one_value=True, notebook=notebook)
    if found is None and fs > 0 and fr > 0 and abs(math.log(fr)) > 1e-6:
        power = math.log(fs) / math.log(fr)
        for factor, meaning in _LOG_FACTORS:
            if abs(power - factor) < 1e-6 * factor:
                return f"is the right value raised to the power {factor:.4g}: {meaning}"
    return found


def _number_relation_on_probes(s: Any, r: Any, sizes: list[Size], parameters: list[str], extra_sizes: list[Size],
                               observations: list[tuple[Any, Any, tuple]]) -> str | None:
    """:func:`_number_relation` on the test's input (``sizes`` are its), stated only if every probe
    input shows the same relation, its numbers aside. One number is a multiple of many quantities:
    a loss divided by its own sum of exponentials is exactly V times too small where every row of
    the logits is equal, and on no other input; the probes are what tell the two apart."""
    found = _number_relation(s, r, sizes, len(extra_sizes))
    if found is None:
        return None
    words = _without_numbers(found)
    for so, ro, a in observations:
        again = _number_relation(so, ro, list(extra_sizes) + _sizes(parameters, a), len(extra_sizes))
        if again is None or _without_numbers(again) != words:
            return None
    return found


def _without_numbers(sentence: str) -> str:
    """``sentence`` with its numbers blanked: the same relation on inputs of other sizes reads alike."""
    return re.sub(r"\d+(\.\d+)?(e-?\d+)?", "#", sentence)


def notebook_sizes(numbers: dict[str, int]) -> list[Size]:
    """Sizes the notebook-level numbers a function reads offer: each, and each product of two."""
    found: list[Size] = [(value, f"your notebook-level `{name}`", (f"notebook:{name}",))
                         for name, value in sorted(numbers.items())]
    for (a, va), (b, vb) in itertools.combinations(sorted(numbers.items()), 2):
        found.append((va * vb, f"{va} × {vb}, your notebook-level `{a}` × `{b}`", (f"notebook:{a}", f"notebook:{b}")))
    return found


def _part_of(observations: list[tuple[Any, Any, tuple]], key: Any) -> list[tuple[Any, Any, tuple]]:
    """The observations narrowed to one part (a tuple index or a dict key) of each result."""
    found = []
    for s, r, a in observations:
        try:
            found.append((s[key], r[key], a))
        except (KeyError, IndexError, TypeError):
            return []                    # a probe whose result lacks the part confirms nothing
    return found


def relation(student: Any, expected: Any, parameters: list[str], args: tuple,
             extra_sizes: list[Size] = (),
             observations: list[tuple[Any, Any, tuple]] = (), focus: str | None = None) -> str | None:
    """One sentence on how ``student`` relates to ``expected`` (the reference's result on ``args``),
    or ``None`` when no simple relation holds. Tuples are compared part by part; the first
    part that differs and has a relation is described. ``extra_sizes`` (the notebook-level
    numbers the function reads) explain a factor before the arguments' sizes do.
    ``observations``: (student's result, right result, arguments) on probe inputs, which a
    relation that could hold by coincidence on ``args`` must also fit to be stated. ``focus``: the
    key of a dict result to describe first (the one the verdict names)."""
    sizes = list(extra_sizes) + _sizes(parameters, args)
    named = list(zip(parameters, args))
    if isinstance(expected, tuple) and isinstance(student, (tuple, list)) and len(student) == len(expected):
        wrapped = _wrapped_part(student, expected)
        if wrapped:
            return f"{wrapped}."
        for index, (s, r) in enumerate(zip(student, expected), start=1):
            found = relation(s, r, parameters, args, extra_sizes, _part_of(observations, index - 1))
            if found:
                return found.replace("Your result", f"Value {index} of the {len(expected)} you returned", 1)
        return None
    if isinstance(expected, dict) and isinstance(student, dict):
        keys = sorted(expected, key=lambda k: k != focus)      # the grader's own keys, never the student's
        for key in keys:
            r = expected[key]
            found = (relation(student.get(key), r, parameters, args, extra_sizes, _part_of(observations, key))
                     if key in student else None)
            if found:
                return found.replace("Your result", f"Your `{key}`", 1)
        return None
    if isinstance(expected, np.ndarray) and isinstance(student, np.ndarray) and type(student) is np.ndarray:
        found = _array_relation(student, expected, sizes, named, len(extra_sizes))
    elif isinstance(expected, (int, float, np.number)) and isinstance(student, (int, float, np.number)) \
            and not isinstance(student, bool):
        found = _number_relation_on_probes(student, expected, sizes, parameters, extra_sizes, observations) \
            or count_difference(
            student, expected, named, [(so, ro, list(zip(parameters, a))) for so, ro, a in observations]) \
            or (_scalar_formula(student, named, observations) if not _same_number(student, expected) else None)
        if found is None and _non_finite_number(student) and not _non_finite_number(expected):
            found = _non_finite_cause(named)
    else:
        found = None
    return f"Your result {found}." if found else None


def parameters_of(function: Callable) -> list[str]:
    """The parameter names of ``function``, to name the arguments sizes come from."""
    try:
        return list(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return []


def _same_result(a: Any, b: Any) -> bool:
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(map(_same_result, a, b))
    try:
        a64, b64 = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return bool(np.isfinite(a64).all()) and _close(a64, b64)


def operand_variants(parameters: list[str], args: tuple) -> list[tuple[int, Any, str]]:
    """Each matrix argument as students mistake it: transposed (its last two axes swapped) and
    reshaped where a transpose was meant; (index, changed argument, what was done to it)."""
    found = []
    for index, (name, arg) in enumerate(zip(parameters, args)):
        if not isinstance(arg, np.ndarray) or arg.ndim < 2 or arg.dtype.kind != "f":
            continue
        rows, cols = arg.shape[-2], arg.shape[-1]
        swapped = np.swapaxes(arg, -1, -2)
        found.append((index, swapped, f"`{name}` transposed (its last two axes swapped)"))
        if rows != cols or arg.ndim > 2:
            flat = arg.reshape(-1, cols)
            reordered = flat.reshape(cols, -1).T.reshape(arg.shape)
            shape = f"({cols}, {flat.shape[0]})"
            found.append((index, reordered, f"`{name}` reshaped to {shape} and transposed back, which "
                                            "reorders its entries: a reshape where a transpose was meant "
                                            "(a reshape keeps the order of the entries, a transpose moves them)"))
    return found


#: Scalings of a float argument that stand for another exponential base: ``2 ** x == e ** (x ln 2)``.
_SCALINGS = ((math.log(2), "`2 ** x` (base 2) where `np.exp(x)` (base e) is asked for"),
             (math.log(10), "`10 ** x` (base 10) where `np.exp(x)` (base e) is asked for"))


def scaled_variants(parameters: list[str], args: tuple) -> list[tuple[int, Any, str]]:
    """The first float array argument times ln 2 and ln 10: the right computation on it is what an
    exponential in base 2 or 10 gives; (index, changed argument, what was done)."""
    for index, (name, arg) in enumerate(zip(parameters, args)):
        if isinstance(arg, np.ndarray) and arg.dtype.kind == "f" and arg.size >= 4:
            return [(index, arg * factor, f"exponentials {what}") for factor, what in _SCALINGS]
    return []


def _first_part_same(student: Any, out: Any) -> bool:
    """The whole result, or its first part (a loss next to its gradient), is ``out``'s."""
    if _same_result(student, out):
        return True
    return (isinstance(student, (tuple, list)) and isinstance(out, tuple) and len(student) == len(out) > 1
            and _same_result(student[0], out[0]))


def operand_relation(student: Any, reference: Callable, right: Any, parameters: list[str],
                     args: tuple) -> str | None:
    """Whether the student's result is the right computation on one argument transposed, or
    reshaped where a transpose was meant: the sign of a transpose missing or one too many; or
    on its first float argument scaled, an exponential in another base. ``right`` is the
    reference's result on ``args``. Only float arrays of several entries are evidence: an id or
    a count matches by chance."""
    parts = student if isinstance(student, (tuple, list)) else (student,)
    if not any(isinstance(p, np.ndarray) and p.dtype.kind == "f" and p.size >= 4 for p in parts):
        return None
    for index, changed, what in operand_variants(parameters, args):
        if changed.shape != args[index].shape:
            continue                     # the right computation cannot even take it
        out = _reference_on(reference, args, index, changed)
        # A variant that changes nothing the result depends on is no evidence of anything.
        if out is not None and not _first_part_same(right, out) and _same_result(student, out):
            return (f"Your result is what the right computation gives with {what}: look at how your "
                    f"code uses `{parameters[index]}`.")
    for index, changed, what in scaled_variants(parameters, args):
        out = _reference_on(reference, args, index, changed)
        if out is not None and not _first_part_same(right, out) and _first_part_same(student, out):
            return f"Your result is what the right computation gives with {what}."
    return None


def _reference_on(reference: Callable, args: tuple, index: int, changed: Any) -> Any:
    """The reference's result with argument ``index`` replaced, or None if it refuses it."""
    variant = list(args)
    variant[index] = changed
    try:
        with np.errstate(all="ignore"):
            return reference(*variant)
    except Exception:                    # the reference refusing the variant says nothing
        return None

"""Read a student's exception for its likely cause.

"ValueError: operands could not be broadcast together with shapes (4,8,50) (4,8)"
says what NumPy could not do, not what the student did. Most such errors in this
unit come from a handful of slips: a reduction that dropped its axis, einsum
letters for another number of axes, padded targets used as indices, a V x V
array, floats used as indices or counts. Each rule here recognises one of them
from the exception's type and message (NumPy's wording) and the call's
arguments, and says the cause in one sentence.

Only numbers and shapes parsed from the message and the argument names (Python
identifiers: the session drops any other name a worker reports) enter the
sentence, never the message's own text, so a student who raises an exception with
crafted text cannot put words into the feedback.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np


#: A shape as NumPy prints it in a message; NumPy 2 writes a -1 of a reshape as ``newaxis``.
_SHAPE = r"\(((?:[\d ]|newaxis|,)*)\)"


def _shape(text: str) -> tuple[int, ...]:
    return tuple(-1 if part == "newaxis" else int(part) for part in text.replace(" ", "").split(",") if part)


def _dropped_axis(longer: tuple[int, ...], shorter: tuple[int, ...]) -> int | None:
    """The axis of ``longer`` whose removal gives ``shorter``, if one does."""
    if len(longer) != len(shorter) + 1:
        return None
    for axis in range(len(longer) - 1, -1, -1):
        if longer[:axis] + longer[axis + 1:] == shorter:
            return axis
    return None


def _broadcast(message: str, _: list[tuple[str, Any]]) -> str | None:
    found = re.search(rf"could not be broadcast together with shapes {_SHAPE} {_SHAPE}", message)
    if not found:
        return None
    a, b = _shape(found.group(1)), _shape(found.group(2))
    longer, shorter = (a, b) if len(a) >= len(b) else (b, a)
    axis = _dropped_axis(longer, shorter)
    if axis is not None:
        return (f"an array of shape {shorter} meets one of shape {longer}: the first is the second without "
                f"its axis {axis}, as a sum, max or mean over axis {axis} without `keepdims=True` makes it, so "
                "it no longer lines up with the array it came from. Keep the axis with `keepdims=True` (or "
                "add it back with `[..., None]`).")
    if len(a) == len(b) == 1:
        return (f"two vectors of different lengths ({a[0]} and {b[0]}) meet in one operation: one of them "
                "was made or sliced with another size than the other.")
    return None


def _assign(message: str, _: list[tuple[str, Any]]) -> str | None:
    found = re.search(rf"could not broadcast input array from shape {_SHAPE} into shape {_SHAPE}", message)
    if not found:
        return None
    return (f"values of shape {_shape(found.group(1))} are written into a place of shape "
            f"{_shape(found.group(2))}: the array written into was made with another size than the "
            "values (check the shape you allocate, e.g. in `np.zeros(...)` or `np.zeros_like(...)`).")


def _where_size(size: int, named: list[tuple[str, Any]]) -> str:
    """' (= ...)' naming the one axis, or run of neighbouring axes, of an argument whose size is
    ``size``; '' when none has it or several do (a coincidence of sizes is no evidence)."""
    found = []
    for name, arg in named:
        shape = getattr(arg, "shape", None)
        if not isinstance(arg, np.ndarray) or not shape:
            continue
        for start in range(len(shape)):
            for stop in range(start + 1, len(shape) + 1):
                dims = shape[start:stop]
                if int(np.prod(dims)) != size:
                    continue
                if len(dims) == 1:
                    found.append(f"the size of axis {start} of `{name}`")
                else:
                    axes = f"{start} and {start + 1}" if len(dims) == 2 else f"{start} to {stop - 1}"
                    found.append(f"{' × '.join(map(str, dims))}, axes {axes} of `{name}` together")
    return f" ({size} = {found[0]})" if len(found) == 1 else ""


def _matmul(message: str, named: list[tuple[str, Any]]) -> str | None:
    found = (re.search(r"mismatch in its core dimension \d+.*\(size (\d+) is different from (\d+)\)", message)
             or re.search(r"shapes \S+ and \S+ not aligned: (\d+) \(dim \d+\) != (\d+)", message))
    if not found:
        return None
    # Several slips give these sizes (an operand transposed or not, merged axes from a reshape, the
    # operands swapped): the shapes say which sizes met, not which slip made them.
    a, b = int(found.group(1)), int(found.group(2))
    return (f"a matrix product met inner sizes that differ: {a}{_where_size(a, named)} and "
            f"{b}{_where_size(b, named)}. Print both operands' shapes just before the product: the last "
            "axis of the left one must have the size of the second-to-last axis of the right one.")


def _einsum(message: str, _: list[tuple[str, Any]]) -> str | None:
    if "subscripts" not in message or "einstein sum" not in message:
        return None
    return ("the `np.einsum` subscripts name another number of axes than an operand has: write one "
            "letter per axis of each operand (a 3-D array needs three, e.g. `'btd,vd->btv'`).")


def _index(message: str, named: list[tuple[str, Any]]) -> str | None:
    found = re.search(r"index (-?\d+) is out of bounds for axis (\d+) with size (\d+)", message)
    if not found:
        return None
    index, size = int(found.group(1)), int(found.group(3))
    ids = [name for name, arg in named if isinstance(arg, np.ndarray) and arg.dtype.kind in "iu"
           and arg.size and (index in arg)]
    masked = any(isinstance(arg, np.ndarray) and arg.shape and name != ids[0] and arg.dtype.kind in "biu"
                 and set(np.unique(arg).tolist()) <= {0, 1} for name, arg in named) if ids else False
    if ids and not masked:
        return (f"`{ids[0]}` holds {index}, which indexes an axis of size {size}: the ids are used along "
                "another axis than the one they number (the vocabulary is the last axis; pick rows with "
                f"`np.arange(N)` and columns with `{ids[0]}`).")
    if ids:
        return (f"`{ids[0]}` holds {index}, which is not a valid index for an axis of size {size}: "
                f"entries that are padding (the ones a mask leaves out) must not be used as indices. "
                "Pick the kept positions first, or replace the padded ids with a valid one before indexing "
                "and leave those positions out afterwards.")
    return (f"the index {index} is used on an axis of size {size}: a loop bound or an index is off, or "
            "comes from a size other than the array's own.")


def _too_many_indices(message: str, _: list[tuple[str, Any]]) -> str | None:
    found = (re.search(r"array is (\d+)-dimensional, but (\d+) were indexed", message)
             or re.search(r"axis (\d+) is out of bounds for array of dimension (\d+)", message))
    if not found:
        return None
    return ("the code assumes its input has another number of axes than it has: take the axes from the "
            "input (e.g. `axis=-1` for the last one) rather than counting them for one case.")


def _reshape(message: str, named: list[tuple[str, Any]]) -> str | None:
    found = re.search(rf"cannot reshape array of size (\d+) into shape {_SHAPE}", message)
    if not found:
        return None
    size, shape = int(found.group(1)), _shape(found.group(2))
    known = {int(d) for _, arg in named if isinstance(arg, np.ndarray) for d in arg.shape}
    if shape and all(d in known or d == -1 for d in shape):
        # Every size is one the inputs have: what is wrong is which sizes, not where they come from.
        wanted = int(np.prod([d for d in shape if d != -1]))
        if -1 not in shape and wanted and size % wanted == 0:
            return (f"{size} values cannot be reshaped into {shape}, which holds {wanted}: the new shape "
                    f"leaves out axes whose sizes multiply to {size // wanted}{_where_size(size // wanted, named)}.")
        return f"{size} values cannot be reshaped into {shape}: check which of the input's axes the new shape keeps."
    return (f"{size} values cannot be reshaped into {shape}: the new shape is not taken from the input (a size "
            "from a notebook variable or an example, rather than `x.shape`).")


def _allocation(message: str, named: list[tuple[str, Any]]) -> str | None:
    found = re.search(rf"Unable to allocate .* with shape {_SHAPE}", message)
    if not found:
        return None
    shape = _shape(found.group(1))
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        return (f"the code builds a {shape[-2]} × {shape[-1]} array, which does not fit in memory for a "
                "large vocabulary (for example `np.eye(V)[targets]` for a one-hot): pick the entries you "
                "need by indexing instead.")
    return f"the code builds an array of shape {shape}, too large to fit in memory: work without it."


def _float_index(message: str, _: list[tuple[str, Any]]) -> str | None:
    if "arrays used as indices must be of integer (or boolean) type" in message \
            or "only integers, slices" in message:
        return ("an array of floats (or another non-integer type) is used as an index: targets must be "
                "integers and masks booleans (`.astype(int)` or `.astype(bool)`).")
    if "cannot be interpreted as an integer" in message:
        return ("a float is used where a whole number is needed (a size, a `range(...)` bound or an "
                "index): use `//` or `int(...)`.")
    return None


def _ambiguous(message: str, _: list[tuple[str, Any]]) -> str | None:
    if "truth value of an array with more than one element is ambiguous" not in message:
        return None
    return ("an array is used where one True or False is needed: `if`, `and`, `or`, `while` or the "
            "built-in `max`/`min`/`abs` on an array. Use `np.maximum`, `np.where`, `np.abs`, `.any()` "
            "or `.all()` for element-wise work.")


def _cast(message: str, _: list[tuple[str, Any]]) -> str | None:
    found = re.search(r"Cannot cast ufunc '\w+' output from dtype\('(\w+)'\) to dtype\('(\w+)'\)", message)
    if not found or not all(_is_dtype(found.group(i)) for i in (1, 2)):
        return None
    return (f"{found.group(1)} values are added into an array of dtype {found.group(2)} in place: the "
            "array was made with the wrong dtype (for example `np.zeros_like` of integer targets); make "
            "it with a float dtype.")


def _is_dtype(name: str) -> bool:
    try:
        np.dtype(name)
    except TypeError:
        return False
    return True


def _division(message: str, named: list[tuple[str, Any]]) -> str | None:
    if "division by zero" not in message:
        return None
    empty = [name for name, arg in named if isinstance(arg, np.ndarray) and arg.dtype.kind == "b"
             and arg.size and not arg.any()]
    if empty:
        return (f"a division by 0: here `{empty[0]}` keeps no position, so a count of kept positions is 0. "
                "Handle that case as the notebook says before dividing.")
    return "a division by a count or a size that is 0 here."


def _choose_limit(message: str, named: list[tuple[str, Any]]) -> str | None:
    if "at most 64 array objects" not in message:
        return None
    return ("`np.choose` takes at most 64 choices (a limit of NumPy's) and was given more here: with one "
            "choice per vocabulary entry it fails on any vocabulary over 64. Pick one entry per row by "
            "indexing instead: `p[np.arange(N), targets]`.")


#: How Python names a function object in "unsupported operand type(s)" (NumPy's own functions included).
_FUNCTION_TYPES = ("function", "builtin_function_or_method", "method", "numpy.ufunc",
                   "numpy._ArrayFunctionDispatcher", "_ArrayFunctionDispatcher")


def _function_operand(message: str, _: list[tuple[str, Any]]) -> str | None:
    found = re.search(r"unsupported operand type\(s\) for (\S+): '([\w.]+)' and '([\w.]+)'", message)
    if not found or not (found.group(2) in _FUNCTION_TYPES or found.group(3) in _FUNCTION_TYPES):
        return None
    operator = found.group(1) if re.fullmatch(r"[-+*/@%<>=!&|^~]{1,3}", found.group(1)) else "an operator"
    return (f"an operand of `{operator}` is a function, not a number or an array: a name that still means a "
            "function where its result was meant. Check that each call has its parentheses and that the "
            "result of each call is assigned to the name used afterwards.")


def _to_scalar(message: str, named: list[tuple[str, Any]]) -> str | None:
    if "arrays can be converted to Python scalars" not in message:
        return None
    axes = [f"`{name}` has {arg.ndim} axes" for name, arg in named
            if isinstance(arg, np.ndarray) and arg.ndim >= 2]
    return ("an array of several entries was turned into one Python number (`float(...)`, `int(...)` or a "
            "`math` function, or stored into one entry of an array): an index with fewer positions than "
            "the array has axes picks a row, not an entry" + (f" ({axes[0]} here)." if axes else "."))


def _math_domain(message: str, _: list[tuple[str, Any]]) -> str | None:
    if "math domain error" not in message:
        return None
    return ("a function of Python's `math` module (`math.log`, `math.sqrt`) was given a number outside its "
            "domain, such as `math.log(0.0)`. A product of many probabilities is exactly 0 in float64 once "
            "it falls below about 1e-308, so take the log of each probability and add the logs.")


_RULES: tuple[Callable[[str, list[tuple[str, Any]]], str | None], ...] = (
    _broadcast, _assign, _matmul, _einsum, _index, _too_many_indices, _reshape, _allocation,
    _float_index, _ambiguous, _cast, _division, _math_domain, _choose_limit, _function_operand, _to_scalar)


def cause_of(message: str, parameters: list[str], args: tuple) -> str:
    """One sentence on the likely cause of an exception whose text is ``message`` (NumPy's wording),
    raised by a call on ``args``; '' when no rule recognises it."""
    named = list(zip(parameters, args))
    for rule in _RULES:
        try:
            found = rule(message, named)
        except Exception:           # a message shaped unlike NumPy's says nothing
            found = None
        if found:
            # A matrix product's sizes fit several slips: what they show is said, not a cause.
            return ("What the shapes show: " if rule is _matmul else "Likely cause: ") + found
    return ""

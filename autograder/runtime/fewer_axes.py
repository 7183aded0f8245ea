"""After a student's function raised: does it take the same values with one axis fewer?

A function written for the notebook's 2-D example often raises on the tests' 3-D
input (a ``reshape(-1, 1)``, an ``assert x.ndim == 2``, a loop over rows that
indexes one axis, an index ``x[i]`` meant as one entry). The exception names
the operation that failed, not the assumption behind it. One more call tells
the two apart: the same values with the first two axes merged into one (every
array argument that has those two leading axes, so the arguments still belong
together). If that call returns, the function handles one axis fewer and not
this many, which is a fact about the student's code whatever the slip, and is
said as such. If it raises too, nothing is said.

The same call explains a wrong value: a function that returns the right result on
the merged values (brought back to the test's shape) but a wrong one on the
test's own is right for one axis fewer, and is told so.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from autograder.runtime.text import code


def merged_leading_axes(args: tuple) -> tuple[tuple, tuple[int, ...], tuple[int, ...]] | None:
    """``args`` with the first two axes merged in every array that has the first array's two
    leading sizes; (new arguments, old shape, new shape of that first array), or None when no
    argument can be merged unambiguously (no array of 2 axes or more, a callable among the
    arguments, whose input would no longer fit, or another array whose first axis has one of
    those sizes without having both: it may belong with them or not)."""
    if any(callable(a) for a in args):
        return None
    first = next((a for a in args if isinstance(a, np.ndarray) and a.ndim >= 2 and a.size), None)
    if first is None:
        return None
    lead = first.shape[:2]
    merged = []
    for arg in args:
        if isinstance(arg, np.ndarray) and arg.ndim >= 2 and arg.shape[:2] == lead:
            merged.append(arg.reshape((lead[0] * lead[1],) + arg.shape[2:]))
        elif isinstance(arg, np.ndarray) and arg.ndim >= 1 and arg.shape[0] in lead:
            return None
        else:
            merged.append(arg)
    new = next(m for m, a in zip(merged, args) if a is first)
    return tuple(merged), first.shape, new.shape


def _named(parameters: list[str], args: tuple, shape: tuple[int, ...]) -> str:
    """The first argument of ``shape`` as the sentences name it (its parameter's name as code)."""
    index = next(i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.shape == shape)
    return code(parameters[index]) if index < len(parameters) else f"argument {index + 1}"


def _axes(count: int) -> str:
    return f"{count} ax{'is' if count == 1 else 'es'}"


def fewer_axes_feedback(name: str, parameters: list[str], args: tuple,
                        call_student: Callable[..., Any]) -> str:
    """'' or a paragraph: ``name`` raised on ``args`` but returns on the same values with their
    first two axes merged (one call ``call_student(*arguments)`` of the student's function,
    sandboxed where the test's was)."""
    found = merged_leading_axes(args)
    if found is None:
        return flattened_with_a_callable_feedback(name, parameters, args, call_student)
    merged, before, after = found
    try:
        call_student(*merged)
    except Exception:        # raising there too: the number of axes is not what breaks it
        return ""
    return (f"`{name}` raises on this {_named(parameters, args, before)} of shape {before} ({_axes(len(before))}), "
            f"but returns on the same values with the first two axes merged into one, shape {after} "
            f"({_axes(len(after))}): somewhere it counts on its input having {_axes(len(after))} (a fixed "
            "reshape, one index per row, a check of `ndim`). Take axes from the input instead, such as "
            "`axis=-1` with `keepdims=True`, and index with `...`.")


def _unmerged(value: Any, lead: tuple[int, int]) -> Any:
    """A result computed on merged inputs, with a first axis of ``lead[0] * lead[1]`` split back."""
    if isinstance(value, (tuple, list)):
        return tuple(_unmerged(v, lead) for v in value)
    if isinstance(value, np.ndarray) and value.ndim >= 1 and value.shape[0] == lead[0] * lead[1]:
        return value.reshape(lead + value.shape[1:])
    return value


def right_with_fewer_axes(name: str, parameters: list[str], args: tuple, student_output: Any, right: Any,
                          call_student: Callable[..., Any] | None,
                          same: Callable[[Any, Any], bool]) -> str | None:
    """A sentence when ``name``'s result on ``args`` is wrong but its result on the same values with
    the first two axes merged, split back, is ``right`` (``same`` compares results); else None. One
    more call of the student's function (``call_student(*arguments)``)."""
    found = merged_leading_axes(args)
    if call_student is None or found is None or same(student_output, right):
        return None
    merged, before, after = found
    try:
        with np.errstate(all="ignore"):
            out = call_student(*merged)
    except Exception:        # raising there says nothing about the wrong value here
        return None
    if not same(_unmerged(out, before[:2]), right):
        return None
    which, axes = _named(parameters, args, before), _axes(len(after))
    return (f"`{name}` gives the right result on the same values with the first two axes of {which} merged "
            f"into one (shape {after} instead of {before}), but not on these: it is right for inputs of "
            f"{axes}, not {len(before)}. Look for what counts on {axes} (a fixed `axis=`, a reshape, a check "
            "of `ndim`): take the axis from the input instead, such as `axis=-1` with `keepdims=True`.")


def flattened_with_a_callable(args: tuple) -> tuple[tuple, int, tuple[int, ...]] | None:
    """``args`` with their one float array of two axes or more flattened to one axis, and each callable
    argument given back its input in the old shape (``f`` of a numerical gradient still sees what it
    was written for); (new arguments, index of the array, its old shape), or None when there is no
    callable, or not exactly one such array."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim >= 2 and a.size]
    if len(arrays) != 1 or not any(callable(a) for a in args):
        return None
    index = arrays[0]
    shape = args[index].shape

    def reshaped(f: Callable[..., Any]) -> Callable[..., Any]:
        def in_old_shape(v: Any, *rest: Any) -> Any:
            if isinstance(v, np.ndarray) and v.shape == (int(np.prod(shape)),):
                v = v.reshape(shape)         # a view: the function's nudges to v still reach f
            return f(v, *rest)
        return in_old_shape
    changed = tuple(_flat_named(a, shape) if _is_named(a) else reshaped(a) if callable(a)
                    else a.reshape(-1).copy() if i == index else a for i, a in enumerate(args))
    return changed, index, shape


def _is_named(f: Any) -> bool:
    """A function the sandbox knows by name (``channel.Named``): the only kind that can cross into it."""
    return callable(f) and isinstance(getattr(f, "name", None), str) and isinstance(getattr(f, "params", None), dict)


def _flat_named(f: Any, shape: tuple[int, ...]) -> Any:
    """A named function of the same name with its array parameters of ``shape`` flattened too. The named
    functions are sums over entries of elementwise terms, so this is the same function of the flattened
    values; a closure (as for a plain callable) could not cross into the sandbox."""
    params = {k: v.reshape(-1) if isinstance(v, np.ndarray) and v.shape == shape else v for k, v in f.params.items()}
    return type(f)(f.name, **params)


def flattened_with_a_callable_feedback(name: str, parameters: list[str], args: tuple,
                                       call_student: Callable[..., Any]) -> str:
    """'' or a paragraph: ``name`` raised on ``args`` but returns on the same values flattened to one
    axis (the callable argument given them back in their shape): it counts on one axis."""
    found = flattened_with_a_callable(args)
    if found is None:
        return ""
    changed, index, shape = found
    try:
        with np.errstate(all="ignore"):
            call_student(*changed)
    except Exception:        # raising there too: the number of axes is not what breaks it
        return ""
    which = code(parameters[index]) if index < len(parameters) else f"argument {index + 1}"
    return (f"`{name}` raises on this {which} of shape {shape} ({_axes(len(shape))}), but returns on the same "
            f"values flattened to shape ({int(np.prod(shape))},) (1 axis): it indexes {which} as if it had one "
            f"axis (for example `{parameters[index] if index < len(parameters) else 'x'}[i]` with `i` up to the "
            "number of entries: one index picks a whole row of an array of several axes, and runs past its "
            "first axis). Visit every entry with `np.ndindex(x.shape)` (or `np.nditer` with `multi_index`), or index "
            "`x.flat[i]`.")

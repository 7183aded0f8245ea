"""The part of a fixed-input public check that runs in the student's kernel.

The build ships this module's source inside each such check (``public_diagnosis``) and the
check executes it, so it may import nothing but numpy and the standard library, and it holds
values only: no reference, no catalogue code. The build imports it too, to compare results
exactly the way the kernel will.

Encoded values (what ``public_diagnosis._encode`` writes) are plain literals; arrays are
``("__ndarray__", dtype, shape, entries, fortran_order)``.
"""
from __future__ import annotations

import copy
import dis
import warnings

import numpy as np

#: How close a result must be to count as the right one (or as a known mistake's).
RTOL, ATOL = 1e-6, 1e-9


def decode(value):
    """The Python value an encoded literal stands for."""
    if isinstance(value, tuple) and value and isinstance(value[0], str) and value[0].startswith("__"):
        tag = value[0]
        if tag == "__ndarray__":
            _, dtype, shape, flat, fortran = value
            entries = [float(x[1]) if isinstance(x, tuple) else x for x in flat]
            array = np.array(entries, dtype=np.dtype(dtype)).reshape(shape, order="F" if fortran else "C")
            return np.asfortranarray(array) if fortran else array
        if tag == "__scalar__":
            entry = value[2]
            return np.dtype(value[1]).type(float(entry[1]) if isinstance(entry, tuple) else entry)
        if tag == "__tuple__":
            return tuple(decode(v) for v in value[1])
        if tag == "__callable__":
            return eval(value[1], {"np": np})   # a lambda the assignment wrote into its public probes
        if tag == "__float__":
            return float(value[1])
        if tag == "__raises__":
            return value
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        return {k: decode(v) for k, v in value.items()}
    return value


def raised(value):
    """Whether ``value`` stands for an exception: ``("__raises__", name[, exception])``."""
    return isinstance(value, tuple) and len(value) > 1 and isinstance(value[0], str) and value[0] == "__raises__"


def same(got, want):
    """Whether ``got`` is ``want``: same structure, same shapes, entries within RTOL/ATOL (NaN equal to NaN)."""
    if raised(want):
        return raised(got) and got[1] == want[1]
    if raised(got):
        return False
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(same(got[k], want[k]) for k in want)
    if isinstance(want, (tuple, list)):
        return isinstance(got, (tuple, list)) and len(got) == len(want) and all(map(same, got, want))
    if isinstance(got, (dict, str)) or got is None:
        return False
    try:
        g = np.asarray(got, dtype=np.float64)
        w = np.asarray(want, dtype=np.float64)
    except (TypeError, ValueError):
        return False
    return g.shape == w.shape and bool(np.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True))


def changed(before, after):
    """Whether an argument was changed in place (``before`` is a deep copy taken before the call)."""
    if isinstance(before, np.ndarray):
        return not (isinstance(after, np.ndarray) and before.shape == after.shape
                    and np.array_equal(before, after, equal_nan=before.dtype.kind in "fc"))
    if isinstance(before, (tuple, list)):
        return len(before) != len(after) or any(changed(b, a) for b, a in zip(before, after))
    if isinstance(before, dict):
        return before.keys() != after.keys() or any(changed(before[k], after[k]) for k in before)
    return False


def call(function, args, kwargs):
    """(result or ``("__raises__", name, exception)``, whether an argument changed)."""
    args, kwargs = decode(args), decode(kwargs)
    args = tuple(args) if isinstance(args, (list, tuple)) else (args,)
    before = copy.deepcopy((args, kwargs))
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            out = function(*args, **kwargs)
    except Exception as exc:      # the student's code raising is a result to report, not a crash
        return ("__raises__", type(exc).__name__, exc), changed(before, (args, kwargs)), (args, kwargs)
    return out, changed(before, (args, kwargs)), (args, kwargs)


def own_functions(function):
    """``{code object: name}`` of the functions defined where ``function`` was (the student's own
    cells: same namespace, same module), so a traceback or a call can be read in their names."""
    namespace = getattr(function, "__globals__", None) or {}
    module = getattr(function, "__module__", None)
    found = {}
    for name, value in list(namespace.items()):
        code = getattr(value, "__code__", None)
        if isinstance(name, str) and hasattr(code, "co_code") and getattr(value, "__module__", None) == module:
            found.setdefault(code, name)
    return found


def raised_inside(exc, function):
    """The student's own functions ``exc`` passed through, outermost first (``function`` itself
    included when its frame is there): the last one is where the error was raised."""
    own, names, tb = own_functions(function), [], getattr(exc, "__traceback__", None)
    while tb is not None:
        name = own.get(tb.tb_frame.f_code)
        if name is not None and (not names or names[-1] != name):
            names.append(name)
        tb = tb.tb_next
    return names


def blame_sentence(name, chain):
    """'' or the sentence that moves the blame for an exception to the student's function that
    raised it, when that is not ``name``: ``chain`` is ``raised_inside``'s list."""
    if not chain or chain[-1] == name:
        return ""
    inner = chain[-1]
    between = [c for c in chain[chain.index(name) + 1 if name in chain else 0:-1] if c != name]
    through = f" (through {', '.join(f'`{c}`' for c in between)})" if between else ""
    # Where the error is raised is known; whether `inner` is wrong or was handed inputs it cannot
    # take is not, so the sentence says both.
    return (f"The error is raised inside your `{inner}`, which `{name}` calls{through}: the fault is in "
            f"`{inner}` or in what `{name}` passes to it. If `{inner}`'s own tests pass, look at the call.")


def calls_of(function):
    """The student's own functions ``function`` calls by name, directly or through each other."""
    own = own_functions(function)
    by_name = {n: c for c, n in own.items()}
    start = getattr(function, "__code__", None)
    seen, found, stack = set(), [], [start] if start is not None else []
    while stack:
        current = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        stack.extend(c for c in current.co_consts if hasattr(c, "co_code"))
        for op in dis.get_instructions(current):
            target = by_name.get(op.argval) if op.opname in ("LOAD_GLOBAL", "LOAD_NAME") else None
            if target is not None and target is not start and op.argval not in found:
                found.append(op.argval)
                stack.append(target)
    return found


def _shapes(parameters, args, kwargs):
    parts = []
    for name, value in [*zip(parameters, args), *kwargs.items()]:
        if isinstance(value, np.ndarray):
            parts.append(f"{name} of shape {value.shape} ({value.dtype})")
        elif callable(value):
            parts.append(f"{name} a function")
        else:
            parts.append(f"{name} = {value!r}")
    return ", ".join(parts)


def _short(value, limit=300):
    text = np.array2string(value, precision=6, threshold=20) if isinstance(value, np.ndarray) else repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + " ..."


def numbers_read(function):
    """The notebook-level ints (2 or more) ``function``'s code loads as globals: ``{"B": 4}``."""
    found, stack = {}, [getattr(function, "__code__", None)]
    namespace = getattr(function, "__globals__", {})
    while stack and stack[-1] is not None:
        current = stack.pop()
        stack.extend(c for c in current.co_consts if hasattr(c, "co_code"))
        for op in dis.get_instructions(current):
            value = namespace.get(op.argval) if op.opname == "LOAD_GLOBAL" else None
            if type(value) is int and value >= 2:
                found[op.argval] = value
    return found


def wrong_helpers(function, name, helpers):
    """Of the student's functions ``function`` calls, those with probes in ``helpers``
    (``{name: (parameters, probes, right)}``) that are wrong on their own fixed inputs, with the
    first such input: ``[(helper, input number, what it gives)]``. Calling the helper alone on its
    own inputs is what separates a fault of the helper from one of the caller."""
    namespace, found = getattr(function, "__globals__", None) or {}, []
    for helper in calls_of(function):
        if helper == name or helper not in helpers or not callable(namespace.get(helper)):
            continue
        _, probes, right = helpers[helper]
        for i, ((args, kwargs), want) in enumerate(zip(probes, right)):
            out, was_changed, _ = call(namespace[helper], args, kwargs)
            if was_changed or not same(out, decode(want)):
                what = ("changes one of its arguments" if was_changed else
                        f"raises {out[1]}" if raised(out) else "gives a wrong result")
                found.append((helper, i + 1, what))
                break
    return found


def diagnose(function, name, parameters, probes, right, slips, tools, helpers=None):
    """``None`` when ``function`` is right on every probe, else one message saying what is wrong.

    ``probes`` are encoded (args, kwargs) pairs, ``right`` the encoded right results, ``slips``
    the catalogued mistakes the probes tell apart: titles, explanations, encoded results and
    whether each changed an argument. ``tools`` holds the grader's relational probes
    (``relation``, ``notebook_sizes``) and its reading of exceptions (``cause_of``).
    """
    numbers = numbers_read(function)
    message = _problem(function, name, parameters, probes, right, slips, tools, numbers)
    if message is None:
        return None
    faulty = wrong_helpers(function, name, helpers or {}) if not message.startswith("The error") else []
    if faulty:
        lines = [f"`{name}` calls your `{h}`, which {what} on its own fixed input {i} (its own check runs "
                 f"it alone and says more): fix `{h}` first, then run this check again." for h, i, what in faulty]
        # What the caller gives is not read for slips of its own here: with a wrong helper inside,
        # its result says nothing about its own code.
        message = "\n".join(lines) + (f"\n`{name}` itself may be right: once the functions it calls pass "
                                       "their own checks, run this check again.")
    if numbers:
        listing = ", ".join(f"`{k}` (= {v})" for k, v in sorted(numbers.items()))
        message += (f"\n`{name}` reads the notebook-level number(s) {listing}: if that is a size, take "
                    "it from the arguments instead (for example `logits.shape`).")
    return message


def _problem(function, name, parameters, probes, right, slips, tools, numbers):
    runs = [call(function, a, k) for a, k in probes]
    right = [decode(r) for r in right]
    wrong = [i for i, (out, _, _) in enumerate(runs) if not same(out, right[i])]
    moved = [i for i, (_, was_changed, _) in enumerate(runs) if was_changed]
    if not wrong and not moved:
        return None
    # An error raised inside another of the student's functions is that function's, whatever
    # slip of this one it resembles: say so before any slip is matched.
    elsewhere = [i for i in wrong if raised(runs[i][0]) and blame_sentence(name, raised_inside(runs[i][0][2], function))]
    if elsewhere:
        wrong = elsewhere
        slips = []
    for slip in slips:
        if all(same(out, decode(r)) and was_changed == c
               for (out, was_changed, _), r, c in zip(runs, slip["results"], slip["changed"])):
            named = [f"{t}. {e}" for t, e in zip(slip["titles"], slip["explanations"])]
            lead = (f"`{name}` gives exactly what a known slip gives on these fixed inputs:"
                    if len(named) == 1 else
                    f"`{name}` gives exactly what each of these known slips gives on these fixed inputs:")
            return lead + "\n" + "\n".join(f"- {n}" for n in named)
    if moved and not elsewhere:
        i = moved[0]
        return (f"`{name}` changed one of its arguments in place (fixed input {i + 1}: "
                f"{_shapes(parameters, *runs[i][2])}). Work on a copy: the caller still needs its arrays.")
    i = wrong[0]
    out, _, (args, kwargs) = runs[i]
    where = f"fixed input {i + 1} of {len(runs)} ({_shapes(parameters, args, kwargs)})"
    if raised(out):
        blame = blame_sentence(name, raised_inside(out[2], function))
        if blame:
            # The cause is read in the helper's terms: the caller's argument names are not its own.
            cause = tools["cause_of"](f"{out[1]}: {out[2]}", [], ())
            return (f"{blame}\n`{name}` raised {out[1]} on {where}: {out[2]}"
                    + (f"\n{cause}" if cause else ""))
        cause = tools["cause_of"](f"{out[1]}: {out[2]}", list(parameters), tuple(args))
        return f"`{name}` raised {out[1]} on {where}: {out[2]}" + (f"\n{cause}" if cause else "")
    sizes = tools["notebook_sizes"](numbers)
    found = tools["relation"](out, right[i], list(parameters), tuple(args), sizes)
    if found:
        return f"`{name}` is wrong on {where}. {found}"
    return (f"`{name}` is wrong on {where}.\n  right result: {_short(right[i])}\n"
            f"  your result:  {_short(out)}")

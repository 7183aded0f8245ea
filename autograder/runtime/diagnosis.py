"""Name the known mistake behind a failed hidden test.

When a hidden test fails, :func:`diagnose` runs every catalogued mistake for
that function (``autograder.runtime.catalogue``) on fresh copies of the same inputs and
keeps those whose output reproduces the student's. :func:`feedback_for` turns
the matches into Markdown built only from the catalogue's titles and
explanations, so no message can reveal a hidden input or an expected value.

A mistake is only reported where it is distinguishable from the reference on
the test's inputs: a softmax without max subtraction is right for small
logits, and blaming it there would be wrong.

Why one module of this size: every way the grader explains a wrong result from the outside (the catalogue's mistakes, the relations on the test's own inputs, the probes that call the student's function again) shares one catalogue, one cache of runs and one set of tolerances; split, each part would need them passed around or held twice.
"""
from __future__ import annotations

import copy
import math
import warnings
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator

import numpy as np

from autograder.runtime.fewer_axes import right_with_fewer_axes
from autograder.runtime.formula_family import difference_feedback, formula_feedback, gradient_feedback
from autograder.runtime.non_finite import not_finite, zeros_feedback
from autograder.runtime.relations import (_same_result, is_whole_number, notebook_sizes, operand_relation,
                                          operand_variants, parameters_of, relation)
from autograder.runtime.fingerprint import ResultCache, fingerprint
from autograder.runtime.catalogue import Catalogue, Mistake
from autograder.runtime.compare import count_not_close
from autograder.runtime.tolerances import VALUE_ATOL, VALUE_RTOL

#: Tolerance for "were the arguments changed?". Much tighter than the value
#: tolerance because the changes to catch can be as small as a finite-difference
#: step (1e-6 on entries of size 1), while an entry perturbed and put back with
#: ``+=``/``-=`` differs from the original only by round-off (~1e-16 relative).
ARGS_RTOL = 1e-12
ARGS_ATOL = 1e-15

__all__ = ["diagnose", "feedback_for", "using_catalogue", "values_match"]

#: The catalogue of the assignment whose hidden suite is running (set by the suite).
_active_catalogue: ContextVar[Catalogue | None] = ContextVar("active_catalogue", default=None)


@contextmanager
def using_catalogue(catalogue: Catalogue | None) -> Iterator[None]:
    """Diagnose with ``catalogue`` inside the block (``None``: name no catalogued mistake)."""
    token = _active_catalogue.set(catalogue)
    try:
        yield
    finally:
        _active_catalogue.reset(token)


#: Mistakes some test showed the student did not make: distinguishable from the right answer
#: on its inputs, and not what the student returned. Set while a suite runs (``recording_ruled_out``).
_ruled_out: ContextVar[set[str] | None] = ContextVar("ruled_out", default=None)
#: The inputs of the checks each function passed, by function: a mistake that gives another
#: result than the reference on them is one the student did not make.
_passed: ContextVar[dict[str, list[tuple[Callable[[], tuple], Any]]] | None] = ContextVar("passed", default=None)


@contextmanager
def recording_ruled_out() -> Iterator[set[str]]:
    """Collect, inside the block, the slugs of the mistakes any diagnosis ruled out."""
    token = _ruled_out.set(set())
    passed_token = _passed.set({})
    try:
        yield _ruled_out.get()
    finally:
        _ruled_out.reset(token)
        _passed.reset(passed_token)


def note_passed(function: str, make_args: Callable[[], tuple], output: Any) -> None:
    """Remember the inputs of a check ``function`` passed, and what the student returned there."""
    passed = _passed.get()
    if passed is not None:
        passed.setdefault(function, []).append((make_args, output))


def ruled_out_by_passed_checks(named: list[tuple[str, str]]) -> set[str]:
    """Of the ``(function, slug)`` mistakes named, those a passed check of the same function rules
    out: on its inputs the mistake's result differs from the right one and from the student's
    (a check may look at part of a result only: the whole result is compared here).
    Run only for the few mistakes named, at the end of a suite."""
    catalogue, passed = _active_catalogue.get(), _passed.get()
    if catalogue is None or not passed:
        return set()
    ruled = set()
    for function, slug in named:
        m = catalogue.mistakes.get(slug)
        if m is None:
            continue
        reference = catalogue.reference(function)
        for make_args, output in passed.get(function, ()):
            key = fingerprint(tuple(make_args()))
            right, run = _run(reference, make_args, key), _run(m.implementation, make_args, key)
            if right is None or run is None or values_match(run[0], right[0]):
                continue
            if not values_match(run[0], output):
                ruled.add(slug)
                break
    return ruled


def _rule_out(m: Mistake) -> None:
    ruled = _ruled_out.get()
    if ruled is not None:
        ruled.add(m.name)


# --------------------------------------------------------------------------
# structural comparison
# --------------------------------------------------------------------------

def _is_number(x: Any) -> bool:
    """Plain or NumPy scalar, or a 0-d array (a loss returned as ``np.mean(...)``)."""
    if isinstance(x, np.ndarray):
        return x.ndim == 0 and x.dtype.kind in "biuf"
    return isinstance(x, (bool, int, float, np.number, np.bool_))


def _numbers_match(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Integers exactly; floats with tolerance; any two non-finite values match.

    Overflow shows up as nan or as ±inf depending on the order of operations,
    so all non-finite results count as the same symptom.
    """
    a, b = (x.item() if isinstance(x, (np.ndarray, np.generic)) else x for x in (a, b))
    if isinstance(a, (bool, int)) and isinstance(b, (bool, int)):
        return int(a) == int(b)
    fa, fb = float(a), float(b)
    if not (math.isfinite(fa) and math.isfinite(fb)):
        return not math.isfinite(fa) and not math.isfinite(fb)
    return math.isclose(fa, fb, rel_tol=rtol, abs_tol=atol)


def nothing_finite(value: Any) -> bool:
    """Whether every number in ``value`` (a number, an array, or a tuple of them) is nan or inf."""
    try:
        if isinstance(value, (tuple, list)):
            return bool(value) and all(nothing_finite(v) for v in value)
        if _is_number(value) or isinstance(value, np.ndarray):
            data = np.asarray(value, dtype=np.float64)
            return data.size > 0 and not np.isfinite(data).any()
    except (TypeError, ValueError):
        pass
    return False


def _arrays_match(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Same shape, both boolean or both numeric, then values.

    Integer arrays compare exactly; otherwise float64 ``allclose`` where both
    are finite, and the non-finite entries must sit at the same places.
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if (a.dtype.kind == "b") != (b.dtype.kind == "b"):
        return False                      # a 0/1 float mask is not a boolean mask
    if a.dtype.kind not in "biuf" or b.dtype.kind not in "biuf":
        return False
    if a.dtype.kind in "biu" and b.dtype.kind in "biu":
        return bool(np.array_equal(a, b))
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    finite_a, finite_b = np.isfinite(a64), np.isfinite(b64)
    if not np.array_equal(finite_a, finite_b):
        return False
    return count_not_close(a64[finite_a], b64[finite_b], rtol, atol) == 0


def values_match(a: Any, b: Any, *, rtol: float = VALUE_RTOL, atol: float = VALUE_ATOL) -> bool:
    """Structural comparison of two results (or two argument tuples).

    Tuples and lists elementwise (either kind), dicts by key, ndarrays by
    shape then values, numbers by ``isclose``; NaN and inf match any
    non-finite value. Two callables always match: they are arguments such as
    the ``f`` of ``numerical_gradient``, which cannot be compared. Anything
    that cannot be compared counts as a mismatch rather than raising.
    """
    try:
        if callable(a) and callable(b):
            return True
        if isinstance(a, dict) or isinstance(b, dict):
            return (isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys()
                    and all(values_match(a[k], b[k], rtol=rtol, atol=atol) for k in a))
        if _is_number(a) and _is_number(b):
            return _numbers_match(a, b, rtol, atol)
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return _arrays_match(a, b, rtol, atol)
        if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
            return len(a) == len(b) and all(values_match(x, y, rtol=rtol, atol=atol) for x, y in zip(a, b))
        return type(a) is type(b) and bool(a == b)
    except Exception:                     # exotic student objects: no match, never a crash
        return False


def _args_match(a: tuple, b: tuple) -> bool:
    return values_match(a, b, rtol=ARGS_RTOL, atol=ARGS_ATOL)


# --------------------------------------------------------------------------
# running implementations
# --------------------------------------------------------------------------

@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the overflow and divide warnings that several mistakes produce."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        yield


#: Results of catalogue (and reference) runs by input content: the same inputs
#: recur within one submission's tests (and a regrade meets them again).
_results = ResultCache()


def _run(implementation: Callable, make_args: Callable[[], tuple], key: str | None = None
         ) -> tuple[Any, tuple] | None:
    """Call ``implementation`` on fresh arguments: (output, arguments after), or None if it raised.

    The arguments are deep-copied as well, so a ``make_args`` that hands back
    the same arrays every time still cannot let one mistake's in-place
    change leak into the next run. ``key`` (the inputs' fingerprint) lets
    the result be reused; callers only read what is returned.
    """
    def compute() -> tuple[Any, tuple] | None:
        args = copy.deepcopy(tuple(make_args()))
        try:
            with _quiet():
                return implementation(*args), args
        except Exception:                 # a mistake that crashes on these inputs does not match
            return None
    return _results.get_or_compute(implementation, key, compute)


def diagnose(
    function: str,
    make_args: Callable[[], tuple],
    student_output: Any,
    *,
    student_args_after: tuple | None = None,
) -> list[Mistake]:
    """Catalogued mistakes that reproduce the student's result on one test's inputs.

    Args:
        function: the student-API function that failed, e.g. ``"cross_entropy_loss"``.
        make_args: returns the test's arguments as a tuple; it is called once
            per implementation run and its result is deep-copied, so a mistake
            that changes its inputs cannot affect the next.
        student_output: what the student's function returned on those arguments.
        student_args_after: the student's arguments after the call, if the test
            kept them; this is what recognizes mistakes that change their inputs.

    Returns:
        The matching mistakes in catalogue order (usually none or one). Empty
        when the student's result equals the reference's: the test failed for
        another reason (a type or dtype, say) that no catalogued mistake explains.

    Raises:
        ValueError: ``function`` is not a student-API function.

    A mistake is skipped when it gives the reference's result on these inputs.
    A mistake that changes its own arguments matches only if the student's
    arguments were changed too (in whatever way: the cause is the same).
    """
    catalogue = _active_catalogue.get()
    if catalogue is None:
        return []
    candidates = catalogue.for_function(function)    # also rejects a misspelled function name
    reference = catalogue.reference(function)
    key = fingerprint(tuple(make_args()))
    ref_run = _run(reference, make_args, key)
    if ref_run is None:
        return []
    ref_output, pristine_args = ref_run   # the reference never changes its arguments
    know_args = student_args_after is not None
    student_mutated = know_args and not _args_match(tuple(student_args_after), pristine_args)

    student_right = values_match(student_output, ref_output)
    if student_right and not student_mutated:
        return []

    # A result with no finite value says only "something overflowed": it can confirm a
    # mistake that is an overflow, never one that merely happens to overflow here too.
    if nothing_finite(student_output):
        candidates = [m for m in candidates if m.non_finite]
    found = []
    for m in candidates:
        run = _run(m.implementation, make_args, key)
        if run is None:
            continue
        output, args_after = run
        mutates = not _args_match(args_after, pristine_args)
        if mutates and know_args:
            if student_mutated and values_match(output, student_output):
                found.append(m)
            elif not student_mutated:
                _rule_out(m)
            continue
        if values_match(output, ref_output):
            # Indistinguishable from a correct answer here, so not named here; but where the
            # student's values are wrong, they are not this mistake's either.
            if not student_right:
                _rule_out(m)
            continue
        if values_match(output, student_output):
            found.append(m)
        else:
            _rule_out(m)
    return found


#: Distinct primes each whole-number argument is scaled by on the probes: products of different
#: arguments then differ on a probe even where they coincide on the test's own settings.
_PROBE_SCALES = ((2, 3, 5, 7, 11, 13, 17), (19, 23, 29, 31, 37, 41, 43))


#: How each probe moves a single float argument: to values unrelated to the test's own.
_FLOAT_MOVES = ((0.61, 0.3), (1.3, 0.05))


def whole_number_probes(args: tuple) -> list[tuple]:
    """``args`` with every whole-number argument scaled by its own prime, once per row of
    ``_PROBE_SCALES`` (and a lone float argument moved by ``_FLOAT_MOVES``); [] when no argument
    is a number: inputs on which a coincidence of the test's values no longer holds."""
    whole = [i for i, a in enumerate(args) if is_whole_number(a) and int(a) >= 1]
    lone_float = len(args) == 1 and isinstance(args[0], (float, np.floating))
    if len(whole) > len(_PROBE_SCALES[0]) or not (whole or lone_float):
        return []
    probes = []
    for scales, (times, plus) in zip(_PROBE_SCALES, _FLOAT_MOVES):
        changed = list(args)
        for i, scale in zip(whole, scales):
            changed[i] = int(args[i]) * scale
        if not whole:
            changed[0] = float(args[0]) * times + plus
        probes.append(tuple(changed))
    return probes


def _both_on(reference: Callable, call_student: Callable[..., Any], probe: tuple) -> tuple[Any, Any] | None:
    """(the student's result, the right result) on ``probe``, or None when either refuses it: a probe
    without an answer is no evidence of anything."""
    try:
        with _quiet():
            right = reference(*copy.deepcopy(probe))
            return call_student(*probe), right
    except Exception:
        return None


def _observed(reference: Callable, call_student: Callable[..., Any] | None, args: tuple) -> list[tuple[Any, Any, tuple]]:
    """The student's and the right result on each whole-number probe of ``args``; [] when the
    student's function cannot be called again or refuses a probe (then nothing is confirmed)."""
    if call_student is None:
        return []
    seen = []
    for probe in whole_number_probes(args):
        both = _both_on(reference, call_student, probe)
        if both is None:
            return []
        seen.append((*both, probe))
    return seen


def relation_feedback(function: str, make_args: Callable[[], tuple], student_output: Any,
                      numbers_read: dict[str, int] | None = None,
                      call_student: Callable[..., Any] | None = None, focus: str | None = None) -> str:
    """When no catalogued mistake matches: how the student's result relates to the right one
    on these inputs (a factor, a sign, a constant, moved axes), or '' when nothing simple holds.
    ``numbers_read``: the notebook-level numbers the student's function reads, which may be
    the factor. ``call_student`` calls the student's function again (sandboxed) on probe inputs
    that tell a cause from a coincidence of the test's sizes. ``focus``: the entry of a dict result
    the verdict is about, described first."""
    catalogue = _active_catalogue.get()
    if catalogue is None:
        return ""
    reference = catalogue.reference(function)
    run = _run(reference, make_args, fingerprint(tuple(make_args())))
    if run is None:
        return ""
    parameters, args = parameters_of(reference), tuple(make_args())
    observations = _observed(reference, call_student, args) if _is_count(run[0]) or _is_number(run[0]) else []
    found = gradient_feedback(parameters, args, student_output, run[0]) \
        or difference_feedback(parameters, args, student_output, run[0]) \
        or relation(student_output, run[0], parameters, args, notebook_sizes(numbers_read or {}),
                    observations, focus) or operand_relation(student_output, reference, run[0], parameters, args) \
        or _ignored_argument(reference, call_student, parameters, args, student_output, run[0]) \
        or formula_feedback(reference, call_student, parameters, args, student_output, run[0]) \
        or _not_entry_by_entry(reference, call_student, parameters, args, student_output, run[0]) \
        or right_with_fewer_axes(function, parameters, args, student_output, run[0], call_student, _same_result)
    return found or ""


def zero_positions_feedback(function: str, make_args: Callable[[], tuple], student_output: Any,
                            call_student: Callable[..., Any] | None) -> str:
    """'' or where a non-finite result comes from (``non_finite.zeros_feedback``): said beside a named
    mistake too, since a mistake named on one test may be dropped when another test rules it out."""
    catalogue = _active_catalogue.get()
    if catalogue is None or call_student is None or not not_finite(student_output):
        return ""
    reference, args = catalogue.reference(function), tuple(make_args())
    run = _run(reference, make_args, fingerprint(args))
    if run is None:
        return ""
    return zeros_feedback(parameters_of(reference), args, student_output, run[0], call_student) or ""


#: How much one entry of the paired arrays is scaled by in the entry-by-entry probe, and the size
#: every entry must have for the probe to mean anything (far above any guard a ratio adds).
_ONE_ENTRY_SCALE = 1000.0
_ORDINARY_SIZE = 1e-4


def _not_entry_by_entry(reference: Callable, call_student: Callable[..., Any] | None, parameters: list[str],
                        args: tuple, student_output: Any, right: Any) -> str | None:
    """Whether the student's number changes when one entry of every same-shaped float array argument is
    scaled (both gradients' entry j times 1000), where the right number does not: a result made of
    whole-array norms, sums or maxima rather than of each entry's own ratio. Probed by one more call."""
    if call_student is None or not _is_number(right) or not _is_number(student_output):
        return None
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size >= 4]
    if len(arrays) < 2 or len({args[i].shape for i in arrays}) != 1:
        return None
    # Only where every entry is of ordinary size: near a guard or a floor (1e-8, 1e-12) an entry-wise
    # ratio changes with scale too, so tiny entries cannot tell the two apart.
    if min(float(np.min(np.abs(args[i]))) for i in arrays) < _ORDINARY_SIZE:
        return None
    changed = [a.copy() if i in arrays else a for i, a in enumerate(args)]
    for i in arrays:
        changed[i].flat[0] *= _ONE_ENTRY_SCALE
    both = _both_on(reference, call_student, tuple(changed))
    if both is None:
        return None
    theirs, moved = both
    if not (values_match(moved, right) and _is_number(theirs)) or values_match(theirs, student_output):
        return None
    names = " and ".join(f"`{parameters[i]}`" for i in arrays if i < len(parameters))
    return (f"Scaling one entry of {names} together by {_ONE_ENTRY_SCALE:g} leaves the right result as it is "
            "but changes yours: your result is not made entry by entry (one ratio of whole-array norms, sums "
            "or maxima behaves like this), where the largest of each entry's own ratio is asked for.")


def _ignored_argument(reference: Callable, call_student: Callable[..., Any] | None, parameters: list[str],
                      args: tuple, student_output: Any, right: Any) -> str | None:
    """Whether the student's result stays the same when a number argument the right result depends on
    changes (a step size hard-coded where ``eps`` is given): probed by calling the student's function
    again with that argument ten times larger."""
    if call_student is None:
        return None
    for index, value in enumerate(args):
        if index == 0 or not isinstance(value, (float, np.floating)) or value == 0:
            continue
        changed = list(args)
        changed[index] = float(value) * 10
        both = _both_on(reference, call_student, tuple(changed))
        if both is None:
            continue
        theirs, moved = both
        if not values_match(moved, right) and values_match(theirs, student_output) \
                and _same_exactly(theirs, student_output):
            name = parameters[index] if index < len(parameters) else f"argument {index + 1}"
            return (f"Your result stays exactly the same when `{name}` is ten times larger, where the right "
                    f"result changes: your function does not use the `{name}` it is given.")
    return None


def _same_exactly(a: Any, b: Any) -> bool:
    """Bit-for-bit the same values: a function that uses the argument at all moves them at least a little."""
    try:
        return bool(np.array_equal(np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)))
    except (TypeError, ValueError):
        return False


def _is_count(result: Any) -> bool:
    """Whether ``result`` is a whole number, or a tuple or dict of them: what a count relation reads."""
    parts = result.values() if isinstance(result, dict) else result if isinstance(result, tuple) else (result,)
    return any(is_whole_number(p) for p in parts)


def out_of_range_ids_feedback(function: str, call_student: Callable[[tuple], Any], args: tuple) -> str:
    """After the student's function raised: whether it returns once the entries of an integer array
    argument that are not valid ids (negative, or past the last axis of the float array they index,
    such as the padded targets -1 or -100) are replaced by 0, or ''. Then those entries are what it
    used as indices."""
    catalogue = _active_catalogue.get()
    if catalogue is None:
        return ""
    parameters = parameters_of(catalogue.reference(function))
    floats = [a for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim >= 1]
    if not floats:
        return ""
    size = floats[0].shape[-1]
    for index, arg in enumerate(args):
        if not (isinstance(arg, np.ndarray) and arg.dtype.kind in "iu" and arg.size):
            continue
        bad = (arg < 0) | (arg >= size)
        if not bad.any() or bad.all():
            continue
        variant = list(args)
        variant[index] = np.where(bad, 0, arg).astype(arg.dtype)
        try:
            with _quiet():
                call_student(tuple(variant))
        except Exception:                # still an error: not this
            continue
        name = parameters[index] if index < len(parameters) else f"argument {index + 1}"
        return (f"`{function}` runs once the entries of `{name}` that are not ids from 0 to {size - 1} (here "
                f"{', '.join(str(v) for v in np.unique(arg[bad])[:3])}) are replaced by 0: those entries are used "
                "as indices. Where they are padding (positions a mask leaves out), pick the kept positions "
                "before indexing, or replace their ids with a valid one first.")
    return ""


def transposed_argument_feedback(function: str, call_student: Callable[[tuple], Any], args: tuple) -> str:
    """After the student's function raised: whether it gives the right result when one matrix
    argument is passed transposed (it uses that argument the other way round), or ''."""
    catalogue = _active_catalogue.get()
    if catalogue is None:
        return ""
    reference = catalogue.reference(function)
    parameters = parameters_of(reference)
    right = _run(reference, lambda: args)
    if right is None:
        return ""
    for index, changed, what in operand_variants(parameters, args):
        if changed.shape == args[index].shape:
            continue                     # only a change of shape can turn an error into a result
        variant = list(args)
        variant[index] = changed
        try:
            with _quiet():
                out = call_student(tuple(variant))
        except Exception:                # still an error: not this
            continue
        if values_match(out, right[0]):
            return (f"`{function}` gives the right result when it is given {what}: it uses "
                    f"`{parameters[index]}` the other way round. Look at the shape `{parameters[index]}` "
                    f"has and the one your code assumes.")
    return ""


def feedback_for(mistakes: list[Mistake]) -> str:
    """Markdown naming each matched mistake with its explanation ('' for none).

    Built from catalogue text only: never from inputs, outputs or expected values.
    """
    if not mistakes:
        return ""
    if len(mistakes) == 1:
        header = "Your result matches a known mistake:"
    else:
        header = ("Your result matches several known mistakes, which give the same "
                  "result on this test:")
    items = [f"- **{m.title}.** {m.explanation}" for m in mistakes]
    return "\n".join([header, "", *items])

"""Probe inputs shared by a whole class, and a digest of what one submission returns on them.

Hidden inputs differ per submission (drawn from the build's secret and the submission's code), so
two students' outputs on them cannot be compared. Grouping a class's wrong results by behaviour
(``autograder.groups``) needs inputs that are the same for everyone: these. They are the arguments
the hidden tests' own code builds for the first call of each function, drawn from a public seed
named after the assignment, never from the secret, so they show nothing of any submission's hidden
inputs. Each submission's functions are called on them in its sandbox, like every other call of
student code, after the hidden suite has judged it: its verdicts are already made. Nothing of the
probes reaches the student; ``outcome.json`` keeps, per function, ``"="`` where every probe output
matches the reference, or a short digest of the outputs.

A digest ignores round-off (``autograder.runtime.output_digest``): arrays are reduced to their
shape, dtype, size of values and a few random projections, each rounded, so two students who
compute the same thing in other styles (``np.mean`` or a sum over ``N``, float32 inside) get the
same digest, while two different mistakes almost surely do not; a number's kind enters where the
hidden tests judge it (a count as ``np.int64`` and one as a float are two results). Round-off is
all it can ignore: where an intermediate sits at the edge of the float range, two orders of one
computation differ by inf against a finite value, so a test's arguments that put one there are
drawn again for the probes (``probe_edges``).
"""
from __future__ import annotations

import copy
import hashlib
import io
import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

import numpy as np

# MAX_PARTS and _digest are read through this module too (the grouping tests).
from autograder.runtime.output_digest import MAX_PARTS, _digest, number_kind, output_digest  # noqa: F401
from autograder.runtime.probe_edges import at_the_edge

#: Probes per function: one argument set from each of its question's tests (the largest under
#: ``PROBE_ELEMENTS``), larger tests first, then the next largest sets. A test exists because its
#: inputs reach something the others do not (a layout, entries near a guard, a large step): two
#: probes from one test's parameters left a mistake such a test trips the same as "right".
PROBES_PER_FUNCTION = 4
#: Tests of one function that each give the probes an argument set, however many that is beyond
#: ``PROBES_PER_FUNCTION`` (a question of five tests kept its four largest and left out its
#: rows-far-apart test, the one a shift by the wrong maximum fails): a bound, not a choice.
MAX_TESTS_PROBED = 8
#: Most array elements one probe's arguments may hold: a probe call must cost the submission
#: about as little as a small hidden test's call.
PROBE_ELEMENTS = 4096
#: Digest of a function whose outputs on every probe match the reference's.
RIGHT = "="
#: Each probe argument set is also probed with its rows in reverse order (``_reversed``) and, where it
#: holds a non-contiguous view, with that view laid out with steps (``_stepped``): up to this many
#: calls per argument set.
VARIANTS_PER_PROBE = 3
#: Draws of a test's arguments tried, beyond its first, for a probe clear of the edge of the float
#: range (``probe_edges``); of the lm-head rows-far-apart tests' draws, 5 and 11 in 16 are.
PROBE_REDRAWS = 16


def probe_seed(assignment: str) -> int:
    """The class-level seed of ``assignment``'s probes: public and fixed, so the probes (and the
    group ids made from their outputs) are the same on every rerun and for every build."""
    digest = hashlib.blake2b(f"lmhead-class-probes:{assignment}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


class _Captured(BaseException):
    """Stops a hidden test at its first call of a student function (a BaseException: the judge's
    ``except Exception`` must not turn it into feedback)."""

    def __init__(self, name: str, args: tuple):
        super().__init__(name)
        self.name, self.args_seen = name, args


class _CapturingStudent:
    """A student namespace whose every function records its arguments and stops the test."""

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)

        def captured(*args: Any, **kwargs: Any) -> Any:
            raise _Captured(name, copy.deepcopy(args) if not kwargs else ())
        captured.__name__ = name
        return captured


#: What one probe call gives back: whether it returned, the value (or the error's name), and each
#: array argument it changed in place (its position -> its content afterwards).
ProbeResult = tuple[bool, Any, Mapping[int, Any]]


def _elements(args: tuple) -> int:
    return sum(int(a.size) for a in args if isinstance(a, np.ndarray))


@dataclass(frozen=True)
class ClassProbes:
    """Per student function, the probe argument sets and the reference's outputs on them."""

    assignment: str
    inputs: Mapping[str, tuple[tuple, ...]]
    reference: Mapping[str, tuple[Any, ...]]

    def behaviour(self, call: Callable[[str, tuple], ProbeResult], functions: Iterable[str]) -> dict[str, str]:
        """The digest on the probes of each of ``functions`` (those of the questions that lost points:
        a right one is in no group, and is not called again); ``call(name, args)`` runs the student's
        function in the sandbox and returns ``(ok, value, changed)``: ``value`` names the error where
        not ok, ``changed`` maps the position of each array argument it changed in place to that
        argument's content afterwards.

        A function that changed an argument is not right, whatever it returned (every hidden call
        fails it), and how it changed it enters the digest (``_change``): restoring a nudged entry by
        arithmetic returns the right gradient and leaves ``x`` off by round-off, never restoring it
        returns the same gradient and leaves ``x`` a step off."""
        from autograder.runtime.diagnosis import values_match

        found: dict[str, str] = {}
        for function in functions:
            inputs = self.inputs.get(function)
            if not inputs:
                continue
            results = [call(function, args) for args in inputs]
            references = self.reference[function]
            if all(ok and not changed and values_match(value, right) and _same_kinds(value, right)
                   for (ok, value, changed), right in zip(results, references)):
                found[function] = RIGHT
            else:
                found[function] = _digest("|".join(
                    (output_digest(v, right) if ok else f"error:{v}")
                    + "".join(f"~{i}:{_change(args[i], changed[i])}" for i in sorted(changed) if 0 <= i < len(args))
                    for (ok, v, changed), args, right in zip(results, inputs, references)))
        return found


def capture_class_probes(assignment: str, cases: Iterable[Any], functions: Mapping[str, tuple[str, ...]],
                         reference_of: Callable[[str], Callable]) -> ClassProbes:
    """Run each hidden test up to its first call of a student function, with the rng of the class
    seed, and keep for every function of the test's question up to ``PROBES_PER_FUNCTION`` of the
    argument sets built for it (the largest under ``PROBE_ELEMENTS``), drawn again where they bring
    a plausible computation to the edge of the float range (``_first_call``). Only trusted code runs
    here.

    ``cases`` are the hidden suite's ``Case`` objects; ``functions`` maps a question to its student
    functions; ``reference_of`` gives a function's reference, whose outputs are computed once.
    """
    seed = probe_seed(assignment)
    seen: dict[str, list[tuple[str, tuple]]] = {}       # function -> (test, arguments), in suite order
    for case in cases:
        wanted = functions.get(case.question, ())
        if not wanted:
            continue
        captured = _first_call(case, seed)
        if captured is not None and captured[0] in wanted and _elements(captured[1]) <= PROBE_ELEMENTS:
            seen.setdefault(captured[0], []).append((case.name.split("[")[0], captured[1]))
    inputs: dict[str, tuple[tuple, ...]] = {}
    reference: dict[str, tuple[Any, ...]] = {}
    for function, found in seen.items():
        chosen = [variant for args in _chosen(found) for variant in probe_variants(args)]
        right = reference_of(function)
        try:
            outputs = tuple(right(*copy.deepcopy(args)) for args in chosen)
        except Exception:                 # noqa: BLE001 - a probe the reference refuses is no probe
            continue
        inputs[function], reference[function] = tuple(chosen), outputs
    return ClassProbes(assignment, inputs, reference)


def _capture(case: Any, rng: np.random.Generator) -> tuple[str, tuple] | None:
    """The function a hidden test calls first and the arguments it builds for it with ``rng``, or
    None where the test calls none, or cannot run without a student."""
    values = {"student": _CapturingStudent(), "rng": rng}
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            case.function(**{f: values[f] for f in case.fixtures}, **case.params)
    except _Captured as stop:
        return (stop.name, stop.args_seen) if stop.args_seen else None
    except Exception:                     # noqa: BLE001 - a test that cannot run gives no probe
        return None
    return None


def _first_call(case: Any, seed: int) -> tuple[str, tuple] | None:
    """The test's first call with the rng of the class seed; where its arguments bring a plausible
    computation to the edge of the float range (``probe_edges``), the first of up to
    ``PROBE_REDRAWS`` draws from seeds named after the test that does not (the test's own code
    builds every draw), else the first draw. A test whose arguments are clear of the edge keeps
    its first draw, and so its probe, as before."""
    from autograder.runtime.hidden_suite import rng_for_test

    first = _capture(case, rng_for_test(seed, case.name))
    if first is None or _elements(first[1]) > PROBE_ELEMENTS or not at_the_edge(first[1]):
        return first                      # too large to be a probe, or clear of the edge
    for draw in range(1, PROBE_REDRAWS + 1):
        again = _capture(case, rng_for_test(seed, f"{case.name}#redraw{draw}"))
        if again is not None and again[0] == first[0] and not at_the_edge(again[1]):
            return again
    return first


def _chosen(found: list[tuple[str, tuple]]) -> list[tuple]:
    """Each test's largest argument set (up to ``MAX_TESTS_PROBED`` tests), then the other sets
    until there are ``PROBES_PER_FUNCTION``, the largest first in both (small cases, B = T = 1,
    cannot tell a mean from a sum)."""
    by_size = sorted(found, key=lambda pair: _elements(pair[1]), reverse=True)
    firsts: dict[str, tuple] = {}
    for test, args in by_size:
        firsts.setdefault(test, args)
    rest = [args for _, args in by_size if not any(args is kept for kept in firsts.values())]
    kept = list(firsts.values())[:MAX_TESTS_PROBED]
    return [*kept, *rest][:max(PROBES_PER_FUNCTION, len(kept))]


def probe_variants(args: tuple) -> list[tuple]:
    """``args`` and the variants it is also probed on, each left out where it is ``args`` again:

    - the rows in reverse order (``_reversed``): a test that puts its largest row first cannot tell
      "the first row's maximum" from "the array's maximum", nor a computation that reads any one
      fixed row from one that reads them all;
    - a non-contiguous array argument laid out with steps (``_stepped``): a test passes a transposed
      view, which arrives Fortran-ordered, where ``x.ravel()`` is a copy as it is for any other
      view; a view neither C- nor Fortran-ordered is where "copy ``x`` keeping its order" and
      "nudge ``x.ravel()``" part (the copy comes out C-ordered).

    The values are the test's own, so a variant is as plausible an input as the test's, and it is
    at the edge of the float range exactly where the test's arguments are (``probe_edges`` looks at
    every row's maximum and every axis)."""
    found = [args]
    for made in (_reversed(args), _stepped(args)):
        if made is not None:
            found.append(made)
    return found


def _leading(args: tuple) -> int:
    """The length of the first array argument's first axis (0 where there is none)."""
    first = next((a for a in args if isinstance(a, np.ndarray) and a.ndim), None)
    return int(first.shape[0]) if first is not None else 0


def _reversed(args: tuple) -> tuple | None:
    """``args`` with every array whose first axis is as long as the first array's reversed along it
    (so a batch and its targets, or two gradients compared, stay paired), each keeping its memory
    order; None where that changes nothing (one row, or no array)."""
    rows = _leading(args)
    if rows < 2:
        return None

    def flipped(a: Any) -> Any:
        if not (isinstance(a, np.ndarray) and a.ndim and a.shape[0] == rows):
            return a
        turned = np.flip(a, 0)
        return np.asfortranarray(turned) if a.ndim > 1 and not a.flags.c_contiguous and a.flags.f_contiguous \
            else np.ascontiguousarray(turned)
    made = tuple(flipped(a) for a in args)
    if all(not isinstance(a, np.ndarray) or np.array_equal(a, b, equal_nan=True) for a, b in zip(args, made)):
        return None
    return made


def _stepped(args: tuple) -> tuple | None:
    """``args`` with every non-contiguous array (a view the test passes on purpose) given as a view
    of every other column of a larger array: the same values, neither C- nor Fortran-ordered; None
    where no argument is a non-contiguous view."""
    def spread(a: Any) -> Any:
        if not (isinstance(a, np.ndarray) and a.ndim and a.size > 1 and not a.flags.c_contiguous):
            return a
        wide = np.zeros((*a.shape[:-1], 2 * a.shape[-1]), dtype=a.dtype)
        view = wide[..., ::2]
        view[...] = a
        return view
    made = tuple(spread(a) for a in args)
    return None if all(a is b for a, b in zip(args, made)) else made


def _change(before: Any, after: Any) -> str:
    """How a probe argument was changed in place, up to what does not tell causes apart: "rounding"
    where only round-off is left (the test the hidden calls' feedback uses), else the digest of the
    difference (a step left in every entry is the same step in any style), or of what replaced it."""
    from autograder.runtime.judge import _only_rounding

    if isinstance(before, np.ndarray) and _only_rounding(before, after):
        return "rounding"
    if (isinstance(before, np.ndarray) and isinstance(after, np.ndarray) and after.shape == before.shape
            and before.dtype.kind in "biuf" and after.dtype.kind in "biuf"):
        return "d" + output_digest(after.astype(np.float64) - before.astype(np.float64))
    return "r" + output_digest(after)


def _same_kinds(value: Any, right: Any) -> bool:
    """Whether every array in ``value`` has the dtype of its place in ``right``, and every number a
    kind the tests accept there (``number_kind``): a float32 result within float64's tolerance, or
    a count of the right value as ``np.int64``, is still another result (the hidden tests check
    dtypes and number types)."""
    if isinstance(right, np.ndarray):
        return isinstance(value, np.ndarray) and value.dtype == right.dtype
    if isinstance(right, (tuple, list)) and isinstance(value, (tuple, list)) and len(value) == len(right):
        return all(_same_kinds(v, r) for v, r in zip(value, right))
    if isinstance(right, dict) and isinstance(value, dict):
        return all(_same_kinds(value.get(k), r) for k, r in right.items())
    return not number_kind(value, right)

"""Name the formula behind a wrong number computed from arrays, among the usual ways of writing it.

A number made from arrays (a perplexity, a log-probability, a relative error, a loss) is written
by students in a handful of ways: the entries transformed one way or another (``p``, ``1 / p``,
``-log p``), reduced one way or another (a sum, a mean, a sum over N + 1, a product, a maximum),
then transformed again (``exp``, ``sqrt``, ``2 **``). Each way is a candidate formula here,
evaluated on the test's own arguments. One number fits many formulas, so a candidate is said only
when it also gives the student's result on two more inputs (the student's function called again,
sandboxed): a shorter input, where sums over N and over N + 1 part, and one with other values,
where a transform applied before or after a mean parts. And the family must hold the right
formula too, on the same three inputs: then the student's formula and the right one are two
members of one vocabulary, and the sentence shows both, which is what to compare.

Nothing is said when the right value is the student's, when no candidate or more than one
non-equivalent candidate fits, or when the student's function refuses a probe.

Why one module of this size: the candidate formulas, the probe inputs that separate them and the rule for naming one are one reading; split, a family of candidates could be used without the separation that makes a named formula true.
"""
from __future__ import annotations

import math
import functools
from typing import Any, Callable, Iterator, TypeVar

import numpy as np

from autograder.runtime.text import code

#: How close a candidate must come to a result: far tighter than any two formulas of the family
#: differ on the probes, loose enough for a guard (``+ 1e-12``) or a float32 step on ordinary values.
_RTOL, _ATOL = 1e-6, 1e-12
#: The most array entries a test's input may hold for the probes to be made: a class's failing
#: submissions call the function twice more per failed test, and small inputs tell formulas apart
#: as well as large ones.
_MOST_ENTRIES = 4096
#: A candidate: its text (in the function's own argument names) and its value.
Candidate = tuple[str, float]
#: A candidate with how plain it is (0: the plainest) and the parts it is made of: of two
#: candidates that fit, the one closer to the right formula (fewer parts differ) is said.
Found = tuple[int, Candidate, tuple[str, ...]]
#: The ways each part of a formula of one array is written, simplest first: (text, function).
_ENTRIES = (("{x}", lambda x: x), ("1 / {x}", lambda x: 1 / x), ("np.log({x})", np.log),
            ("-np.log({x})", lambda x: -np.log(x)))
_REDUCTIONS = (("np.sum({t})", lambda t: np.sum(t)), ("np.mean({t})", lambda t: np.mean(t)),
               ("np.sum({t}) / (N + 1)", lambda t: np.sum(t) / (t.size + 1)),
               ("np.sum({t}) / (N - 1)", lambda t: np.sum(t) / (t.size - 1)),
               ("np.prod({t})", lambda t: np.prod(t)), ("np.prod({t}) / N", lambda t: np.prod(t) / t.size),
               ("np.max({t})", lambda t: np.max(t)), ("np.min({t})", lambda t: np.min(t)))
_OUTSIDE = (("{r}", lambda r: r), ("np.exp({r})", np.exp), ("np.exp(-{r})", lambda r: np.exp(-r)),
            ("np.log({r})", np.log), ("-{r}", lambda r: -r), ("1 / {r}", lambda r: 1 / r),
            ("np.sqrt({r})", np.sqrt), ("2 ** {r}", lambda r: 2.0 ** r))


def _of_one_array(name: str, x: np.ndarray) -> Iterator[Found]:
    """Every ``outside(reduction(entries(x)))``, and every ``reduction(outside(entries(x)))`` (the
    outer step taken of each entry before the reduction, where it belongs after it)."""
    x = x.astype(np.float64).reshape(-1)
    for i, (e_text, entries) in enumerate(_ENTRIES):
        t = entries(x)
        for j, (r_text, reduce) in enumerate(_REDUCTIONS):
            r = np.float64(reduce(t))
            for k, (o_text, outside) in enumerate(_OUTSIDE):
                text = o_text.format(r=r_text.format(t=e_text.format(x=name)))
                yield (i > 0) + (j > 1) + (k > 0), (text, float(outside(r))), (e_text, r_text, o_text, "after")
                if k > 0:
                    text = r_text.format(t=o_text.format(r=e_text.format(x=name)))
                    yield 3, (text, float(reduce(outside(t)))), (e_text, r_text, o_text, "before")


def _of_two_arrays(a_name: str, a: np.ndarray, n_name: str, n: np.ndarray) -> Iterator[Found]:
    """Relative errors between two arrays: each entry's own ratio over several denominators, reduced
    by a maximum, a mean or a sum; or one ratio of whole-array norms or sums."""
    a, n = a.astype(np.float64).reshape(-1), n.astype(np.float64).reshape(-1)
    A, N, guard = f"np.abs({a_name})", f"np.abs({n_name})", 1e-12
    gap = np.abs(a - n)
    below = ((f"np.maximum({A}, {N})", np.maximum(np.abs(a), np.abs(n))), (f"{A} + {N}", np.abs(a) + np.abs(n)),
             (A, np.abs(a)), (N, np.abs(n)), (f"({A} + {N}) / 2", (np.abs(a) + np.abs(n)) / 2),
             (f"np.abs({a_name} + {n_name})", np.abs(a + n)))
    for j, (r_text, reduce) in enumerate((("np.max", np.max), ("np.mean", np.mean), ("np.sum", np.sum))):
        for i, (d_text, d) in enumerate(below):
            yield (i > 0) + (j > 0), (f"{r_text}(np.abs({a_name} - {n_name}) / ({d_text}))",
                                      float(reduce(gap / (d + guard)))), ("entry by entry", r_text, d_text)
    norm = np.linalg.norm
    whole = ((f"np.linalg.norm({a_name} - {n_name}) / (np.linalg.norm({a_name}) + np.linalg.norm({n_name}))",
              norm(a - n) / (norm(a) + norm(n) + guard)),
             (f"np.linalg.norm({a_name} - {n_name}) / max(np.linalg.norm({a_name}), np.linalg.norm({n_name}))",
              norm(a - n) / (max(norm(a), norm(n)) + guard)),
             (f"np.linalg.norm({a_name} - {n_name}) / np.linalg.norm({a_name})", norm(a - n) / (norm(a) + guard)),
             (f"np.linalg.norm({a_name} - {n_name}) / np.linalg.norm({a_name} + {n_name})", norm(a - n) / (norm(a + n) + guard)),
             (f"np.max(np.abs({a_name} - {n_name})) / max(np.max({A}), np.max({N}))",
              float(np.max(gap)) / (max(float(np.max(np.abs(a))), float(np.max(np.abs(n)))) + guard)),
             (f"np.sum(np.abs({a_name} - {n_name})) / np.sum({A} + {N})",
              float(np.sum(gap)) / (float(np.sum(np.abs(a) + np.abs(n))) + guard)))
    for text, value in whole:
        yield 2, (text, float(value)), ("whole arrays", text)


#: Epsilons students put inside a log, largest first: only those that move a loss beyond the tests'
#: tolerance can be told from the right formula at all.
_EPSILONS = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def _of_scores_and_ids(z_name: str, z: np.ndarray, t_name: str, t: np.ndarray, m_name: str | None,
                       mask: np.ndarray | None) -> Iterator[Found]:
    """Losses from scores (..., V) and target ids (...): one entry per row or a column gather (an N x N
    block), over the kept positions or all of them, divided by the kept count or by N; and an epsilon
    inside the log-sum-exp or the log of the probabilities."""
    V = z.shape[-1]
    rows = z.astype(np.float64).reshape(-1, V)
    ids = t.reshape(-1).astype(np.int64)
    keep = np.ones(ids.size, dtype=bool) if mask is None else np.asarray(mask).astype(bool).reshape(-1)
    if ids.size != rows.shape[0] or not keep.any():
        return
    valid = (ids >= -V) & (ids < V)                       # negative ids index from the end, as NumPy does
    shifted = rows - rows.max(axis=1, keepdims=True)
    sums = np.exp(shifted).sum(axis=1)
    logp = shifted - np.log(sums)[:, None]
    N, M = ids.size, int(keep.sum())
    safe = np.where(valid, ids, 0)
    nll = -logp[np.arange(N), safe]
    lp = f"`logp = log_softmax({z_name}, axis=-1)`"
    picked = f"`-logp[i, {t_name}[i]]`"
    kept_mean = float(nll[keep].sum() / M)
    if not valid[keep].all():
        return
    if mask is None:
        yield 0, (f"the mean over the N rows of {picked}, with {lp}", float(nll.mean()))
    else:
        yield 0, (f"the sum over the positions `{m_name}` keeps of {picked}, divided by their count M, with {lp}",
                  kept_mean)
        # Padded positions counted too: their ids as given (a negative id indexes from the end, as NumPy
        # does), or replaced by 0 first; each summed over M or averaged over all N positions.
        zeroed = -logp[np.arange(N), np.where(keep, safe, 0)]
        readings = [("their ids as given", nll)] if valid.all() else []
        readings.append(("their ids replaced by 0", zeroed))
        for how, values in readings:
            yield 1, (f"the sum over all N positions of {picked} (padded ones too, {how}), divided by the count M "
                      f"of kept positions, with {lp}", float(values.sum() / M))
            yield 1, (f"the mean over all N positions of {picked} (padded ones too, {how}), with {lp}",
                      float(values.mean()))
        yield 1, (f"the sum over the positions `{m_name}` keeps of {picked}, divided by all N positions, with {lp}",
                  float(nll[keep].sum() / N))
    if mask is None and valid.all():
        # The block -logp[:, ids] averaged, without building it: its column j's mean is -mean(logp[:, ids[j]]).
        column_means = -logp.mean(axis=0)
        yield 1, (f"the mean of the N × N block `-logp[:, {t_name}]` (every row's entry at every target), with {lp}",
                  float(column_means[ids].mean()))
        yield 1, (f"the sum of the N × N block `-logp[:, {t_name}]` divided by N, with {lp}",
                  float(column_means[ids].sum()))
    over = "per row" if mask is None else f"over the positions `{m_name}` keeps"
    for eps in _EPSILONS:
        inside = (np.log(sums + eps) - shifted[np.arange(N), safe])[keep]
        yield 1, (f"the mean {over} of `log(np.sum(np.exp(z - z.max())) + {eps:g}) - (z - z.max())[{t_name}]`: "
                  f"an epsilon of {eps:g} inside the log-sum-exp, with z a row of `{z_name}`", float(inside.sum() / M))
        with np.errstate(divide="ignore"):
            plus = -np.log(np.exp(-nll) + eps)[keep]
        yield 1, (f"the mean {over} of `-np.log(p[{t_name}] + {eps:g})`: an epsilon of {eps:g} added to the "
                  "probabilities inside the log", float(plus.sum() / M))


_F = TypeVar("_F", bound=Callable[..., Any])


def _never_raises(reader: _F) -> _F:
    """A reading of the student's result that fails says nothing: it must never turn a verdict into an
    error of the grader's (the student's result and probes are untrusted, and may be of any kind)."""
    @functools.wraps(reader)
    def safe(*args: Any, **kwargs: Any) -> Any:
        try:
            return reader(*args, **kwargs)
        except Exception:
            return None
    return safe  # type: ignore[return-value]


def _with_parts(found: tuple) -> Found:
    """A candidate given without parts is one part: its text."""
    return found if len(found) == 3 else (found[0], found[1], (found[1][0],))


def _family(parameters: list[str], args: tuple) -> Callable[[tuple], list[Found]] | None:
    """The family that fits the arguments' kinds, as a function of any arguments of those kinds: one
    float array; two float arrays of one shape; scores (..., V) with ids (...) and perhaps a mask."""
    names = list(parameters) + [f"argument {i + 1}" for i in range(len(parameters), len(args))]
    floats = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size]
    others = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and i not in floats]
    if len(floats) == 1 and not others and args[floats[0]].size >= 2:
        i = floats[0]
        return lambda given: list(map(_with_parts, _of_one_array(names[i], given[i])))
    if len(floats) == 2 and not others and args[floats[0]].shape == args[floats[1]].shape \
            and args[floats[0]].size >= 2:
        i, j = floats
        return lambda given: list(map(_with_parts, _of_two_arrays(names[i], given[i], names[j], given[j])))
    if len(floats) == 1 and 1 <= len(others) <= 2 and args[floats[0]].ndim >= 2:
        z = floats[0]
        lead = args[z].shape[:-1]
        ids = [i for i in others if args[i].dtype.kind in "iu" and args[i].shape == lead]
        masks = [i for i in others if i not in ids[:1] and args[i].shape == lead
                 and (args[i].dtype.kind == "b" or bool(np.isin(args[i], (0, 1)).all()))]
        if not ids or 1 + len(masks) != len(others):
            return None
        t, m = ids[0], (masks[0] if masks else None)
        return lambda given: list(map(_with_parts, _of_scores_and_ids(
            names[z], given[z], names[t], given[t], None if m is None else names[m], None if m is None else given[m])))
    return None


def _moved(a: np.ndarray, k: int) -> np.ndarray:
    """``a`` with other values of the same kind: probabilities raised to the power 1.5 (still in (0, 1]),
    other floats moved by a fixed wave (its phase ``k`` differs between arguments); ids and masks kept."""
    if a.dtype.kind != "f":
        return a
    if np.all((a > 0) & (a <= 1)):
        return (a ** 1.5).astype(a.dtype)
    wave = np.cos(np.arange(a.size) * 1.3 + 0.7 * k).reshape(a.shape)
    return (a + 0.4 * (float(np.mean(np.abs(a))) + 1e-3) * wave).astype(a.dtype)


def probe_inputs(args: tuple) -> list[tuple]:
    """One or two more inputs of the same kinds: about the first half along the leading axis (where
    every array shares it, and of the other parity: sums over N and over N + 1 part, and so do a
    product's signs), and the float arrays with other values (a transform taken before and after a
    mean part)."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim >= 1]
    probes = []
    lead = {args[i].shape[0] for i in arrays}
    if len(lead) == 1 and (n := lead.pop()) >= 2:
        half = (n + 1) // 2
        half -= half % 2 == n % 2 and half > 1
        probes.append(tuple(a[:half].copy() if i in arrays else a for i, a in enumerate(args)))
    probes.append(tuple(_moved(a, k) if isinstance(a, np.ndarray) else a for k, a in enumerate(args)))
    return probes


def separating_input(args: tuple) -> tuple:
    """An input no call is made on, where candidates that fitted every probe are compared with each
    other: every array about twice as long along its leading axis (and of the other parity), with
    other values. Two candidates that still agree there are one formula written two ways; two that
    part were not told apart by the probes, and then neither is said."""
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.ndim >= 1]
    if len({args[i].shape[0] for i in arrays}) != 1:
        return tuple(_moved(_moved(a, k), k + 1) if isinstance(a, np.ndarray) else a for k, a in enumerate(args))
    n = args[arrays[0]].shape[0]
    size = 2 * n + (1 if n % 2 == 0 else 2)
    longer = [np.resize(a, (size,) + a.shape[1:]) if i in arrays else a for i, a in enumerate(args)]
    return tuple(_moved(a, k + 2) if isinstance(a, np.ndarray) else a for k, a in enumerate(longer))


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _fits(value: float, wanted: float) -> bool:
    return math.isfinite(value) and math.isclose(value, wanted, rel_tol=_RTOL, abs_tol=_ATOL)


def _survivors(candidates_on: list[list[Found]], wanted: list[float]) -> list[Found]:
    """The candidates that give ``wanted[k]`` on input k, for every k (as found on the first input)."""
    kept = None
    for candidates, want in zip(candidates_on, wanted):
        here = {text for _, (text, value), _ in candidates if _fits(value, want)}
        kept = here if kept is None else kept & here
    return [c for c in candidates_on[0] if c[1][0] in (kept or ())]


def _values_on(candidates: list[Found]) -> dict[str, float]:
    return {text: value for _, (text, value), _ in candidates}


def _first_number(value: Any, part: int | None) -> float | None:
    if part == 0:
        value = value[0] if isinstance(value, (tuple, list)) and value else None
    return _number(value)


def _results(reference: Callable, call_student: Callable[..., Any], inputs: list[tuple], part: int | None
             ) -> tuple[list[float], list[float]] | None:
    """The student's and the right numbers on each input; None when either refuses one or gives no
    finite number (a probe without an answer confirms nothing)."""
    students, rights = [], []
    for given in inputs:
        try:
            with np.errstate(all="ignore"):
                theirs, due = _first_number(call_student(*given), part), _first_number(reference(*given), part)
        except Exception:
            return None
        if theirs is None or due is None:
            return None
        students.append(theirs)
        rights.append(due)
    return students, rights


def _distance(candidate: Found, definition: Found) -> int:
    """How many parts of ``candidate`` differ from the right formula's."""
    mine, right = candidate[2], definition[2]
    return sum(a != b for a, b in zip(mine, right)) + abs(len(mine) - len(right))


@_never_raises
def formula_feedback(reference: Callable, call_student: Callable[..., Any] | None, parameters: list[str],
                     args: tuple, student_output: Any, right: Any) -> str | None:
    """A sentence naming the student's formula and the right one, both members of the family that fits
    the arguments, both confirmed on the test's input and on the probes, and the student's told apart
    from every other candidate; else None. At most two more calls of the student's function, made
    only for a failed test of a number (or of a tuple whose first value is one, a loss)."""
    if call_student is None:
        return None
    part = 0 if isinstance(right, tuple) and right and _number(right[0]) is not None else None
    if isinstance(right, tuple) and part is None:
        return None
    s, r = _first_number(student_output, part), _first_number(right, part)
    # A result of exactly 0 is what an underflow gives, whatever the formula: no evidence of one.
    if s is None or r is None or s == 0 or _fits(s, r):
        return None
    if sum(a.size for a in args if isinstance(a, np.ndarray)) > _MOST_ENTRIES:
        return None                      # two more calls on large inputs cost more than their evidence adds
    family = _family(parameters, args)
    if family is None:
        return None
    probes = probe_inputs(args)
    found = _results(reference, call_student, probes, part)
    apart_input = separating_input(args)
    try:
        with np.errstate(all="ignore"):
            due_apart = _first_number(reference(*apart_input), part)
            candidates_on = [family(given) for given in [args] + probes]
            apart = _values_on(family(apart_input))
    except Exception:                    # inputs the family cannot read: say nothing
        return None
    if found is None or due_apart is None:
        return None
    students, rights = [s] + found[0], [r] + found[1]
    right_ones = [c for c in _survivors(candidates_on, rights) if _fits(apart.get(c[1][0], math.nan), due_apart)]
    said_right = {c[1][0] for c in right_ones}
    theirs = [c for c in _survivors(candidates_on, students) if c[1][0] not in said_right]
    if not right_ones or not theirs:
        return None
    there = [apart.get(c[1][0], math.nan) for c in theirs]
    if not all(_fits(v, there[0]) for v in there):
        return None                      # fitted alike on every probe, yet two formulas: say neither
    definition = right_ones[0]
    formula = min(theirs, key=lambda c: (_distance(c, definition), c[0]))
    what = "Your result" if part is None else "Your loss (value 1 of those you returned)"
    tried = f"{len(probes)} other input{'s' if len(probes) > 1 else ''}"
    return (f"{what} is {_said(formula[1][0])}, here and on {tried} tried, where the definition is "
            f"{_said(definition[1][0])}: compare the two.")


def _said(formula: str) -> str:
    """A formula as code, or a description that holds code already, as it stands."""
    return formula if formula.startswith("the ") else code(formula)


def _gradients_of_scores_and_ids(z: np.ndarray, t: np.ndarray, mask: np.ndarray | None,
                                 m_name: str | None) -> list[tuple[str, str, np.ndarray]]:
    """Gradients of a cross-entropy with respect to the scores as students write them, the right one
    first: the one-hot subtracted or not, 1 subtracted at every entry, padded positions kept or not."""
    V = z.shape[-1]
    ids = np.asarray(t).astype(np.int64)
    keep = np.ones(ids.shape, dtype=bool) if mask is None else np.asarray(mask).astype(bool)
    if not ((ids[keep] >= 0) & (ids[keep] < V)).all():
        return []
    shifted = z.astype(np.float64) - z.max(axis=-1, keepdims=True)
    p = np.exp(shifted)
    p /= p.sum(axis=-1, keepdims=True)
    onehot = np.zeros_like(p)
    np.put_along_axis(onehot, np.where(keep, ids, 0)[..., None], 1.0, axis=-1)
    N, M = keep.size, max(int(keep.sum()), 1)
    k = keep[..., None]
    if mask is None:
        return [("(p - onehot) / N", "", (p - onehot) / N),
                ("p / N", "the softmax alone, without the one-hot of the targets subtracted", p / N),
                ("(p - 1) / N", "1 subtracted at every entry, where only the target's entry gets the -1", (p - 1) / N)]
    return [(f"(p - onehot) * {m_name} / M", "", (p - onehot) * k / M),
            (f"p * {m_name} / M", "the softmax alone, without the one-hot of the targets subtracted", p * k / M),
            (f"(p - 1) * {m_name} / M", "1 subtracted at every entry, where only the target's entry gets the -1",
             (p - 1) * k / M),
            (f"(p - onehot * {m_name}) / M", f"the positions `{m_name}` leaves out are not set to 0", (p - onehot * k) / M),
            (f"(p - onehot) * {m_name} / N", "divided by all N positions, where the count M of kept ones is due",
             (p - onehot) * k / N)]


@_never_raises
def gradient_feedback(parameters: list[str], args: tuple, student_output: Any, right: Any) -> str | None:
    """A sentence naming the gradient formula a returned (loss, gradient) pair's gradient follows, when
    it is one of the usual ways of writing a cross-entropy's gradient and not the right one; else None.
    Read on the test's own input only: a whole array of entries that all fit one formula (and not the
    right one) is the evidence, and the family's first formula must give the right gradient there."""
    if not (isinstance(right, tuple) and len(right) == 2 and isinstance(right[1], np.ndarray)
            and isinstance(student_output, (tuple, list)) and len(student_output) == 2):
        return None
    got = student_output[1]
    if not isinstance(got, np.ndarray) or got.shape != right[1].shape or got.dtype.kind != "f" or got.size < 4:
        return None
    names = list(parameters) + [f"argument {i + 1}" for i in range(len(parameters), len(args))]
    floats = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    if len(floats) != 1 or args[floats[0]].shape != right[1].shape or args[floats[0]].ndim < 2:
        return None
    z = floats[0]
    lead = args[z].shape[:-1]
    rest = [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and i != z]
    ids = [i for i in rest if args[i].dtype.kind in "iu" and args[i].shape == lead]
    masks = [i for i in rest if i not in ids[:1] and args[i].shape == lead]
    if not ids or len(rest) != 1 + len(masks) or len(masks) > 1:
        return None
    m = masks[0] if masks else None
    with np.errstate(all="ignore"):
        candidates = _gradients_of_scores_and_ids(args[z], args[ids[0]], None if m is None else args[m],
                                                  None if m is None else names[m])
    close = lambda a, b: bool(np.allclose(a, b, rtol=_RTOL, atol=_ATOL))
    if not candidates or not close(candidates[0][2], right[1]) or close(got, right[1]):
        return None
    fits = [(formula, meaning) for formula, meaning, value in candidates[1:]
            if close(got, value) and not close(value, right[1])]
    if len(fits) != 1:
        return None                      # none, or two formulas that give the same array here
    (formula, meaning), definition = fits[0], candidates[0][0]
    return (f"Your gradient (value 2 of those you returned) is {code(formula)} at every entry: {meaning}. The "
            f"definition is {code(definition)}, with `p = softmax({names[z]}, axis=-1)` and onehot the one-hot "
            "of the targets.")


def _difference_quotients(f: Callable[[np.ndarray], Any], x: np.ndarray, eps: float
                          ) -> list[tuple[str, str, np.ndarray]]:
    """Numerical gradients of ``f`` at ``x`` as students write them, the right (central) one first:
    (formula, what it means, values). ``f`` is the test's own function, called here on copies."""
    base = x.astype(np.float64)
    at = float(f(base.copy()))
    plus, minus = np.zeros(base.shape), np.zeros(base.shape)
    for index in np.ndindex(base.shape):
        moved = base.copy()
        moved[index] += eps
        plus[index] = float(f(moved))
        moved[index] = base[index] - eps
        minus[index] = float(f(moved))
    return [("(f(x + eps) - f(x - eps)) / (2 * eps)", "", (plus - minus) / (2 * eps)),
            ("(f(x + eps) - f(x)) / (2 * eps)", "the minus point is x itself, not x - eps (a step back by eps "
             "from the plus point returns to x), so each entry is about half the gradient", (plus - at) / (2 * eps)),
            ("(f(x + eps) - f(x)) / eps", "a one-sided (forward) difference where the central one is asked for",
             (plus - at) / eps),
            ("(f(x) - f(x - eps)) / eps", "a one-sided (backward) difference where the central one is asked for",
             (at - minus) / eps),
            # The right quotient halved or doubled: what a factor relation says. Here only as alternatives,
            # so that a quotient is not named where these fit as well (at a small step, or a linear f).
            ("", "", (plus - minus) / (4 * eps)), ("", "", (plus - minus) / eps)]


@_never_raises
def difference_feedback(parameters: list[str], args: tuple, student_output: Any, right: Any) -> str | None:
    """A sentence naming the difference quotient a numerical gradient's result follows (a forward
    difference, a minus point that is x itself), when it is one of the usual ones and not the right
    one; else None. Arguments: a function, a float array and a float step, as a numerical gradient's.
    Said only when the student's values fit that quotient and every other one is at least ten times
    farther from them (at small steps the quotients differ by little)."""
    if not (isinstance(right, np.ndarray) and isinstance(student_output, np.ndarray)
            and student_output.shape == right.shape and student_output.dtype.kind == "f" and right.size >= 2):
        return None
    functions = [a for a in args if callable(a)]
    arrays = [a for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.shape == right.shape]
    steps = [a for a in args if isinstance(a, (float, np.floating))]
    if len(functions) != 1 or len(arrays) != 1 or len(steps) != 1 or arrays[0].size > 400:
        return None                       # the quotients cost two calls of f per entry: small inputs only
    with np.errstate(all="ignore"):
        candidates = _difference_quotients(functions[0], arrays[0], float(steps[0]))
    got = student_output.astype(np.float64)
    scale = float(np.max(np.abs(right))) or 1.0
    off = [float(np.max(np.abs(got - value))) / scale for _, _, value in candidates]
    if not np.allclose(candidates[0][2], right, rtol=1e-6, atol=1e-9) or off[0] <= 1e-6:
        return None
    best = int(np.argmin(off))
    others = [o for i, o in enumerate(off) if i != best]
    if best == 0 or off[best] > 1e-6 or min(others) < 10 * max(off[best], 1e-12):
        return None
    formula, meaning, _ = candidates[best]
    if not formula:
        return None
    return (f"Your result is {code(formula)} at every entry: {meaning}. The definition is "
            f"{code(candidates[0][0])}.")

"""What hidden tests use to call a student's function and judge its output.

Every failure is raised as ``Feedback``, whose message is written for the
student: it names the function and the variable, says what is wrong and,
where the output matches a known mistake, names that mistake. Messages never
contain hidden inputs or expected values.

Why one module of this size: calling a student's function, unpacking what it returns and judging it share one test's evidence count and diagnosis memo; split, that state would have to travel between modules the hidden tests import one by one.
"""
from __future__ import annotations

import copy
import inspect
import re
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from autograder.runtime.blame import blame_sentence, raised_inside
from autograder.runtime.helper_blame import changed_inside, helper_changing_its_input
from autograder.runtime.compare import Verdict, array_structure, check_array, check_number, number_structure
from autograder.runtime.text import code
from autograder.runtime.tolerances import GRADIENT_CHECK_EPS, SCALAR_ATOL, SCALAR_RTOL


class Feedback(AssertionError):
    """A hidden test failed; the message is meant for the student.

    ``diagnoses`` are the named mistakes the output matched (each with a
    slug, function, title and explanation), for gradebooks and class reports.
    """

    def __init__(self, message: str, diagnoses: tuple = (), fallback: str = ""):
        from autograder.runtime.diagnosis import feedback_for
        self.base = message
        self.diagnoses = tuple(diagnoses)
        #: What the relations say about the result, kept for when every named mistake is ruled out
        #: by another test of the function (then the verdict would otherwise say nothing of the cause).
        self.fallback = fallback
        super().__init__(message + ("\n\n" + feedback_for(list(diagnoses)) if diagnoses else ""))

    @property
    def mistakes(self) -> tuple[str, ...]:
        """The slugs of the matched mistakes."""
        return tuple(d.name for d in self.diagnoses)


#: Checks that passed in the running hidden test. A test earns points only
#: if at least one check gave positive evidence (see ``record_evidence``).
_evidence: ContextVar[list[int] | None] = ContextVar("evidence", default=None)


def record_evidence() -> None:
    """Count one passed check in the running hidden test."""
    counter = _evidence.get()
    if counter is not None:
        counter[0] += 1


@contextmanager
def counting_evidence() -> Iterator[list[int]]:
    """Count the passed checks of the hidden test run inside the block (``[n]``)."""
    counter = [0]
    token = _evidence.set(counter)
    try:
        yield counter
    finally:
        _evidence.reset(token)


class StudentCallFailed(Exception):
    """Raised by a sandboxed student function that did not return a value.

    Its message is complete feedback (the student's exception, a timeout, a
    return value that cannot be sent back), so ``call`` reports it as is.
    ``raised_in``: the student's functions an exception passed through, outermost first.
    """

    def __init__(self, message: str, raised_in: tuple[str, ...] = ()):
        super().__init__(message)
        self.raised_in = tuple(raised_in)


def _function(student: Any, name: str) -> Callable:
    fn = getattr(student, name, None)
    if fn is None:
        raise Feedback(f"`{name}` is not defined: run the cell that defines it, and keep its name.")
    if not callable(fn):
        raise Feedback(f"`{name}` should be a function but is a {type(fn).__name__}.")
    return fn


def _param_names(fn: Callable, count: int) -> list[str]:
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    return (names + [f"argument {i + 1}" for i in range(len(names), count)])[:count]


def call(student: Any, name: str, *args: Any) -> Any:
    """Call the student's ``name`` on copies of ``args`` and return its output.

    Raises ``Feedback`` when the function is missing, raises, or changes an
    array argument in place (the caller's arrays are never touched).
    """
    fn = _function(student, name)
    isolated = getattr(fn, "isolated_call", None)
    _numbers_read[name] = dict(getattr(fn, "numbers_read", None) or {})
    _probes[name] = _again(fn, isolated)
    try:
        if isolated is not None:
            # The arguments cross into the sandbox as copies, and it reports
            # which arrays the function changed: only those are copied here.
            # (Copying every argument of every call cost much of the
            # grader's time on large inputs.) Unchanged ones stand for
            # themselves, which the check below reads as unchanged.
            output, changed = isolated(*args)
            given = apply_changes(args, changed, into_copies=True)
        else:
            given = copy.deepcopy(args)
            output = fn(*given)
    except StudentCallFailed as exc:
        raise Feedback(_blamed(name, exc.raised_in, str(exc), fn, isolated, args)) from None
    except Exception as exc:  # the student's error, reported as feedback
        said = f"`{name}` raised {code(f'{type(exc).__name__}: {exc}')}"
        raise Feedback(_blamed(name, raised_inside(exc, fn), said, fn, isolated, args)) from None
    for index, (before, after) in enumerate(zip(args, given)):
        if isinstance(before, np.ndarray) and after is not before and not (
            isinstance(after, np.ndarray) and after.shape == before.shape
            and np.array_equal(after, before, equal_nan=before.dtype.kind == "f")
        ):
            param = _param_names(fn, len(args))[index]     # read only when it is needed: it is slow
            helper = helper_changing_its_input(student, name, fn)
            if helper is not None:
                raise Feedback(changed_inside(name, param, helper))
            message = (_rounding_left(name, param) if _only_rounding(before, after) else
                       f"`{name}` changed its input {code(param)} in place and did not put it back as it was. "
                       "Work on a copy (`x = x - ...` rather than `x -= ...`), or, where the function must "
                       "change it for a while (a numerical gradient's nudges), restore every entry before "
                       "returning.")
            from autograder.runtime.diagnosis import diagnose
            mistakes = diagnose(name, lambda: args, output, student_args_after=given)
            raise Feedback(message, tuple(mistakes))
    return output


def _only_rounding(before: np.ndarray, after: Any) -> bool:
    """Whether ``after`` differs from the float array ``before`` by rounding only (a step added and
    taken away again), not by a real change."""
    if not (isinstance(after, np.ndarray) and after.shape == before.shape and before.dtype.kind == "f"
            and before.size and np.isfinite(before).all() and np.isfinite(after).all()):
        return False
    scale = 1.0 + float(np.max(np.abs(before)))
    return float(np.max(np.abs(after.astype(np.float64) - before))) <= 1e-9 * scale


def _rounding_left(name: str, param: str) -> str:
    return (f"`{name}` puts its input {code(param)} back only approximately: some entries differ from "
            "before by rounding. Adding a step and subtracting it again does not always give the same "
            "float back; keep the old value and restore it (`old = x[i]`, ..., `x[i] = old`), or nudge a "
            "copy.")


def _blamed(name: str, chain: Sequence[str], said: str, fn: Callable, isolated: Callable | None,
            args: tuple) -> str:
    """The feedback for an exception ``name``'s call raised: led by whose it is when another of the
    student's functions raised it (``chain``, outermost first), then read for its cause in that
    function's terms (the caller's argument names and a retry of the caller say nothing of it)."""
    blame = blame_sentence(name, chain)
    if not blame:
        return said + _error_hints(fn, isolated, name, args, said)
    from autograder.runtime.error_causes import cause_of
    cause = cause_of(said, [], ())
    return f"{blame}\n\n{said}" + (f"\n\n{cause}" if cause else "")


def _again(fn: Callable, isolated: Callable | None) -> Callable[..., Any]:
    """The student's function called once more on other inputs, where the test's call ran: in the
    sandbox when it has one (its result only), else in process on copies of the inputs."""
    if isolated is not None:
        return lambda *args: isolated(*args)[0]
    return lambda *args: fn(*copy.deepcopy(args))


def _error_hints(fn: Callable, isolated: Callable | None, name: str, args: tuple, said: str) -> str:
    """After the student's function raised on ``args``: '' or paragraphs on why. The exception read
    for its cause (``error_causes``); the function retried with one matrix argument transposed (a
    missing or extra transpose that broke a matrix product); notebook-level numbers it reads."""
    from autograder.runtime.diagnosis import out_of_range_ids_feedback, transposed_argument_feedback
    from autograder.runtime.error_causes import cause_of
    from autograder.runtime.fewer_axes import fewer_axes_feedback

    again = _again(fn, isolated)

    def call_student(variant: tuple) -> Any:
        return again(*variant)
    ids = out_of_range_ids_feedback(name, call_student, args)
    parameters = _param_names(fn, len(args))
    # A cause read from the message is replaced where a probe found the cause for certain.
    found = [fewer_axes_feedback(name, parameters, args, again),
             ids or cause_of(said, parameters, args),
             transposed_argument_feedback(name, call_student, args), numbers_note(name)]
    return "".join("\n\n" + part for part in found if part)


def apply_changes(args: Sequence[Any], changed: dict[int, Any], *, into_copies: bool = False) -> tuple:
    """``args`` with the in-place changes a sandboxed call reported applied.

    ``changed`` maps an argument's index to its content after the call; a
    change is applied where that argument is an array of the same shape:
    into the array itself, or with ``into_copies`` into a copy of it, leaving
    ``args`` untouched (the other arguments are returned as they are).
    """
    result = list(args)
    for index, after in changed.items():
        target = args[index] if 0 <= index < len(args) else None
        if isinstance(target, np.ndarray) and isinstance(after, np.ndarray) and after.shape == target.shape:
            if into_copies:
                target = result[index] = target.copy()
            np.copyto(target, after, casting="unsafe")
    return tuple(result)


def unpack(output: Any, function: str, names: tuple[str, ...]) -> tuple:
    """Check that ``output`` is a tuple of ``len(names)`` and return it."""
    if not isinstance(output, (tuple, list)) or len(output) != len(names):
        got = f"a {type(output).__name__}" if not isinstance(output, (tuple, list)) else \
            f"{len(output)} values"
        raise Feedback(f"`{function}` should return {len(names)} values ({', '.join(names)}), got {got}.")
    return tuple(output)


#: Diagnosis already done in this student's run, by function. Inputs larger
#: than ``_MEMO_ABOVE`` elements reuse it instead of running every
#: catalogued mistake again on, say, a 50,000-token vocabulary.
_diagnosis_memo: dict[str, list] = {}
_MEMO_ABOVE = 50_000


#: The notebook-level numbers each student function read, as its sandbox reported them.
_numbers_read: dict[str, dict[str, int]] = {}


#: Each student function as the last test called it (sandboxed where the test's call was), so a
#: relation that could hold by coincidence can be tried on probe inputs before it is stated.
_probes: dict[str, Callable[..., Any]] = {}


def reset_diagnosis_memo() -> None:
    """Forget earlier diagnoses: called before each student's hidden suite."""
    _diagnosis_memo.clear()
    _numbers_read.clear()
    _probes.clear()


def numbers_note(function: str) -> str:
    """'' or a sentence saying that ``function`` reads whole numbers set at notebook level (``B = 4``):
    a size taken from there rather than from the arguments is right only for the notebook's example."""
    read = _numbers_read.get(function)
    if not read:
        return ""
    listing = ", ".join(f"{code(name)} (= {value})" for name, value in sorted(read.items()))
    return (f"`{function}` reads the notebook-level number{'s' if len(read) > 1 else ''} {listing}. If "
            "that is a size, take it from the arguments instead (for example `logits.shape`): the tests "
            "call your function with other sizes than the notebook's examples.")


def _input_size(args: tuple) -> int:
    return sum(a.size for a in args if isinstance(a, np.ndarray))


def expect(verdict: Verdict, *, function: str | None = None,
           make_args: Callable[[], tuple] | None = None, output: Any = None) -> None:
    """Raise ``Feedback`` if ``verdict`` failed, naming a matching known mistake if any.

    ``make_args`` rebuilds the call's inputs so the catalogue of mistakes can
    be run on exactly the same data as the student's function.
    """
    if verdict.ok:
        record_evidence()
        if function is not None and make_args is not None:
            from autograder.runtime.diagnosis import note_passed
            note_passed(function, make_args, output)
        return
    message = verdict.message
    mistakes, fallback = [], ""
    if function is not None and make_args is not None:
        from autograder.runtime.diagnosis import diagnose
        if function in _diagnosis_memo and _input_size(make_args()) > _MEMO_ABOVE:
            mistakes = _diagnosis_memo[function]
        else:
            mistakes = diagnose(function, make_args, output)
            _diagnosis_memo[function] = mistakes
        from autograder.runtime.diagnosis import relation_feedback
        # A verdict on one entry of a dict (`ffn`) is explained by that entry's relation first.
        focus = re.match(r"`(\w+)`", message)
        # Beside a named mistake the relations are a fallback; their probes call the student's function
        # again only on small inputs (``formula_family._MOST_ENTRIES``), so a class of named mistakes
        # costs few more calls than before.
        related = relation_feedback(function, make_args, output, _numbers_read.get(function), _probes.get(function),
                                    focus.group(1) if focus else None)
        if related and not mistakes:
            message += "\n\n" + related
        elif related:
            fallback = related
        from autograder.runtime.diagnosis import zero_positions_feedback
        if zeros := zero_positions_feedback(function, make_args, output, _probes.get(function)):
            message += "\n\n" + zeros
    if not mistakes and function is not None and (note := numbers_note(function)):
        message += "\n\n" + note
    raise Feedback(message, tuple(mistakes), fallback)


#: How far from the test's input the loss is checked once more: far outside
#: any neighbourhood a function could have memorised around an input it saw.
FAR_POINT_SCALE = 0.5


def _real_number(value: Any, what: str) -> float:
    """``value`` as a float if it is a plain real number (never a complex one), else ``Feedback``."""
    verdict = number_structure(what, value)
    if not verdict.ok:
        raise Feedback(verdict.message)
    return float(value)


def check_gradient_of_own_loss(
    loss_of: Callable[[np.ndarray], Any],
    reference_loss: Callable[[np.ndarray], float],
    x: np.ndarray,
    loss: Any,
    grad: Any,
    reference_grad: np.ndarray,
    *,
    grad_name: str,
    x_name: str,
    rng: np.random.Generator,
) -> None:
    """Raise ``Feedback`` unless the loss and its gradient are right and agree with each other.

    Points need positive evidence on every count: ``grad`` matches the
    reference gradient at ``x`` (so zeros never pass where the true gradient
    is not zero), the student's ``loss`` is right at ``x`` and at a far point
    the function has never seen (so a loss that is right only where it was
    first called, or constant nearby, does not pass), and central differences
    of the student's own loss along random directions agree with ``grad``.
    Whatever fails, the message says which of the two to fix.

    Args:
        loss_of: the student's loss at another input (a sandboxed call).
        reference_loss: the reference loss at any input.
        x: the test's input; ``loss`` and ``grad`` are the student's there.
    """
    from autograder.runtime.gradcheck import projection_check, random_unit_like

    structure = array_structure(grad_name, grad, reference_grad)
    if not structure.ok:
        raise Feedback(structure.message + f" (This test compares `{grad_name}` with your own loss.)")
    grad_right = check_array(grad_name, grad, reference_grad).ok
    here = _real_number(loss, "loss")
    loss_right = check_number("loss", here, reference_loss(x), rtol=SCALAR_RTOL, atol=SCALAR_ATOL).ok
    if loss_right:
        far = x + FAR_POINT_SCALE * rng.standard_normal(x.shape)
        loss_right = check_number("loss", _real_number(loss_of(far), "loss"), reference_loss(far),
                                  rtol=SCALAR_RTOL, atol=SCALAR_ATOL).ok
    # One random direction already exposes a wrong gradient with probability
    # 1; more only pay off where evaluations are cheap. Each direction leans on
    # the right gradient's, so the loss really changes along it: along a purely
    # random one in 200,000 dimensions the change is so small that the rounding
    # of a correct but differently summed loss (one over 50,000 logits) swamps it.
    consistent = True
    norm = float(np.linalg.norm(reference_grad))
    for _ in range(1 if x.size > _MEMO_ABOVE else 3):
        u = random_unit_like(x, rng)
        if norm > 0:
            u = u + np.asarray(reference_grad, dtype=np.float64) / norm
            u /= np.linalg.norm(u)
        result = projection_check(lambda z: _real_number(loss_of(z), "loss"), x, rng, grad=grad,
                                  direction=u, eps=GRADIENT_CHECK_EPS)
        if not np.isfinite(result.numerical):
            raise Feedback(f"your loss is not finite near these `{x_name}`, so `{grad_name}` cannot "
                           "be checked against it: make the loss numerically stable first.")
        if not result.passed:
            consistent = False
            break
    if grad_right and loss_right and consistent:
        record_evidence()
        return
    # Each returned value is judged against its right value first: a right gradient beside a wrong
    # loss is disagreeing with that loss because the loss is wrong, and is said to be right.
    if not loss_right and grad_right:
        raise Feedback(f"`{grad_name}` is right, but the loss value is wrong: fix the loss (`{grad_name}` "
                       "needs no change).")
    if not loss_right and consistent:
        raise Feedback(f"`{grad_name}` is the gradient of your loss, but the loss itself is wrong: "
                       f"fix the loss and check `{grad_name}` again.")
    if not loss_right:
        raise Feedback(f"The loss value is wrong, and `{grad_name}` is wrong too: it is not the gradient of "
                       f"the right loss, nor of the loss your code returns (a finite-difference check of that "
                       f"loss disagrees with `{grad_name}`).")
    if not consistent:
        raise Feedback(f"Your loss is right, but `{grad_name}` is not its gradient: nudging "
                       f"`{x_name}` along a random direction changes your loss by a different "
                       f"amount than `{grad_name}` predicts. Fix the gradient.")
    raise Feedback(f"`{grad_name}` agrees with your loss near this input but is not the loss's "
                   "gradient: check it on other inputs of the same shape.")

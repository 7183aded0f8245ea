"""What hidden tests use to call a student's function and judge its output.

Every failure is raised as ``Feedback``, whose message is written for the
student: it names the function and the variable, says what is wrong and,
where the output matches a known mistake, names that mistake. Messages never
contain hidden inputs or expected values.
"""
from __future__ import annotations

import copy
import inspect
from typing import Any, Callable, Sequence

import numpy as np

from autograder.runtime.compare import Verdict


class Feedback(AssertionError):
    """A hidden test failed; the message is meant for the student.

    ``diagnoses`` are the named mistakes the output matched (each with a
    slug, function, title and explanation), for gradebooks and class reports.
    """

    def __init__(self, message: str, diagnoses: tuple = ()):
        super().__init__(message)
        self.diagnoses = tuple(diagnoses)

    @property
    def mistakes(self) -> tuple[str, ...]:
        """The slugs of the matched mistakes."""
        return tuple(d.name for d in self.diagnoses)


class StudentCallFailed(Exception):
    """Raised by a sandboxed student function that did not return a value.

    Its message is complete feedback (the student's exception, a timeout, a
    return value that cannot be sent back), so ``call`` reports it as is.
    """


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
        raise Feedback(str(exc)) from None
    except Exception as exc:  # the student's error, reported as feedback
        raise Feedback(f"`{name}` raised {type(exc).__name__}: {exc}") from None
    for param, before, after in zip(_param_names(fn, len(args)), args, given):
        if isinstance(before, np.ndarray) and after is not before and not (
            isinstance(after, np.ndarray) and after.shape == before.shape
            and np.array_equal(after, before, equal_nan=before.dtype.kind == "f")
        ):
            message = (f"`{name}` changed its input `{param}` in place. Work on a copy "
                       "(for example `x = x - x.max(...)` rather than `x -= ...`).")
            from autograder.runtime.diagnosis import diagnose, feedback_for
            mistakes = diagnose(name, lambda: args, output, student_args_after=given)
            raise Feedback(message + ("\n\n" + feedback_for(mistakes) if mistakes else ""), tuple(mistakes))
    return output


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


def reset_diagnosis_memo() -> None:
    """Forget earlier diagnoses: called before each student's hidden suite."""
    _diagnosis_memo.clear()


def _input_size(args: tuple) -> int:
    return sum(a.size for a in args if isinstance(a, np.ndarray))


def expect(verdict: Verdict, *, function: str | None = None,
           make_args: Callable[[], tuple] | None = None, output: Any = None) -> None:
    """Raise ``Feedback`` if ``verdict`` failed, naming a matching known mistake if any.

    ``make_args`` rebuilds the call's inputs so the catalogue of mistakes can
    be run on exactly the same data as the student's function.
    """
    if verdict.ok:
        return
    message = verdict.message
    mistakes = []
    if function is not None and make_args is not None:
        from autograder.runtime.diagnosis import diagnose, feedback_for
        if function in _diagnosis_memo and _input_size(make_args()) > _MEMO_ABOVE:
            mistakes = _diagnosis_memo[function]
        else:
            mistakes = diagnose(function, make_args, output)
            _diagnosis_memo[function] = mistakes
        if mistakes:
            message += "\n\n" + feedback_for(mistakes)
    raise Feedback(message, tuple(mistakes))


def check_gradient_consistency(
    loss_of: Callable[[np.ndarray], Any],
    x: np.ndarray,
    grad: Any,
    *,
    grad_name: str,
    x_name: str,
    loss_is_right: bool,
    rng: np.random.Generator,
) -> None:
    """Raise ``Feedback`` unless ``grad`` is the gradient of the student's own loss.

    Compares ``<grad, u>`` with central differences of ``loss_of`` along a few
    random unit directions ``u`` (two loss evaluations each, whatever the size
    of ``x``). Together with the reference comparison this tells the student
    which of the two is wrong: the loss, the gradient, or both.
    """
    from autograder.runtime.gradcheck import projection_check

    if type(grad) is not np.ndarray or grad.shape != x.shape:
        return   # shape and type problems are reported by the reference comparison
    # One random direction already exposes a wrong gradient with
    # probability 1; more only pay off where evaluations are cheap.
    directions = 1 if x.size > _MEMO_ABOVE else 3

    def scalar_loss(z: np.ndarray) -> float:
        value = loss_of(z)
        if not isinstance(value, (int, float, np.floating, np.integer)):
            raise Feedback(f"the loss should be a number, got a {type(value).__name__}.")
        return float(value)

    consistent = True
    for _ in range(directions):
        result = projection_check(scalar_loss, x, rng, grad=grad)
        if not np.isfinite(result.numerical):
            raise Feedback(f"your loss is not finite near these `{x_name}`, so `{grad_name}` cannot "
                           "be checked against it: make the loss numerically stable first.")
        if not result.passed:
            consistent = False
            break
    # Credit needs both: a gradient that agrees with a wrong loss (constant
    # zeros agree with a constant loss) earns nothing, but the message still
    # says which of the two to fix.
    if consistent and loss_is_right:
        return
    if consistent:
        raise Feedback(f"`{grad_name}` is the gradient of your loss, but the loss itself is wrong: "
                       f"fix the loss and check `{grad_name}` again.")
    if loss_is_right:
        raise Feedback(f"Your loss is right, but `{grad_name}` is not its gradient: nudging "
                       f"`{x_name}` along a random direction changes your loss by a different "
                       f"amount than `{grad_name}` predicts. Fix the gradient.")
    raise Feedback(f"Both need work: the loss is wrong, and `{grad_name}` is not the gradient "
                   "of your own loss either (a finite-difference check of your loss disagrees "
                   f"with `{grad_name}`).")

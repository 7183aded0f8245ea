"""Whether a wrong result is the fault of another of the student's functions it called.

A student's loss that reuses the student's own softmax gives a wrong loss when the softmax is
wrong, however right the loss's own code is; the hidden test's verdict on the loss (and any
mistake of the loss it seems to match) then sends the student searching the wrong function.

The sandbox worker records the calls the function under test makes to the submission's other
graded functions (inputs and output, bounded in size; ``sandbox.results.HelperCall``). That
record comes from the student's process, so it is judged, never believed: the helper is blamed
only when the reference helper, run here on the very inputs recorded, gives another result than
the one recorded. A helper that is right on its inputs leaves the blame with the caller.

The sentence names no input value: recorded inputs are hidden ones.
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from autograder.runtime.sandbox.results import HelperCall

#: A helper's recorded output is called wrong only this far from the reference's on the same
#: inputs: looser than the tests' own tolerances, so float32 rounding in a right helper never
#: moves the blame away from its caller.
HELPER_RTOL = 1e-4
HELPER_ATOL = 1e-7
#: Reference runs on recorded inputs per student, at most: the check costs milliseconds.
MAX_CHECKS = 24
#: Recorded helper calls kept per hidden test (the rest by name only).
KEPT_PER_TEST = 8


@dataclass(frozen=True)
class Called:
    """``call`` was made while the hidden test called the student's ``function``."""

    function: str
    call: HelperCall

    @property
    def names(self) -> tuple[str, str, str]:
        """(helper, function under test, the function that made the call): all the sentence needs."""
        return self.call.helper, self.function, self.call.caller


_calls: ContextVar[list[Called] | None] = ContextVar("helper_calls", default=None)


@contextmanager
def recording() -> Iterator[list[Called]]:
    """Collect the helper calls reported while the block runs (one hidden test)."""
    found: list[Called] = []
    token = _calls.set(found)
    try:
        yield found
    finally:
        _calls.reset(token)


def note(function: str, calls: Iterable[HelperCall]) -> None:
    """Keep the helper calls a call of the student's ``function`` made (outside ``recording``, none).
    Past ``KEPT_PER_TEST`` recorded ones, only their names are kept: a test that calls the loss a
    hundred times needs no hundred copies of its softmax's inputs."""
    found = _calls.get()
    if found is None:
        return
    for call in calls:
        if call.recorded and sum(c.call.recorded for c in found) >= KEPT_PER_TEST:
            call = HelperCall(call.helper, call.caller)
        found.append(Called(function, call))


def _same(value: Any, right: Any) -> bool:
    """Whether a helper's ``value`` is the reference's ``right`` within the helper tolerances."""
    if isinstance(right, (tuple, list)):
        return isinstance(value, (tuple, list)) and len(value) == len(right) and all(
            _same(v, r) for v, r in zip(value, right))
    if isinstance(right, dict):
        return isinstance(value, dict) and set(value) == set(right) and all(_same(value[k], right[k]) for k in right)
    try:
        got = np.asarray(value)
        want = np.asarray(right)
        if got.shape != want.shape or got.dtype.kind not in "biuf" or want.dtype.kind not in "biuf":
            return False
        return bool(np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=HELPER_RTOL,
                                atol=HELPER_ATOL, equal_nan=True))
    except (TypeError, ValueError):
        return False


def wrong_on_own_inputs(call: HelperCall, reference: Callable) -> bool:
    """Whether the helper's recorded output differs from ``reference`` on the recorded inputs.
    No record, or inputs the reference cannot take, is no evidence: ``False``."""
    if not call.recorded:
        return False
    try:
        with np.errstate(all="ignore"):
            right = reference(*call.args, **call.kwargs)
    except Exception:   # inputs outside the helper's contract: nothing can be said of it
        return False
    return not _same(call.value, right)


class HelperJudge:
    """One student's helpers, judged on the inputs recorded in failed tests (``MAX_CHECKS`` runs
    of a reference at most)."""

    def __init__(self, reference_of: Callable[[str], Callable | None]) -> None:
        self._reference_of = reference_of
        self._runs = 0

    def examine(self, calls: Sequence[Called]) -> tuple[tuple[str, str, str], ...]:
        """Of a failed test's ``calls``, the (helper, function under test, direct caller) whose
        helper gave a wrong output on its own recorded inputs, each pair judged until found wrong."""
        wrong_here, found = [], set()
        for called in calls:
            pair = called.names[:2]
            if pair in found or not called.call.recorded or self._runs >= MAX_CHECKS:
                continue
            reference = self._reference_of(called.call.helper)
            if reference is None:
                continue
            self._runs += 1
            if wrong_on_own_inputs(called.call, reference):
                found.add(pair)
                wrong_here.append(called.names)
        return tuple(wrong_here)

    def lay(self, message: str, calls: Sequence[Called]) -> str:
        """``message`` of a failed test, led by the blame of the helpers at fault in it when there
        are any (then only its first paragraph, the verdict, is kept: what follows reads the
        caller's result for slips of its own, which a wrong helper inside makes meaningless); else
        ``message``. A helper found wrong only in another test is not named: its inputs here were
        not judged, and the caller's fault here may be its own."""
        said = sentence(self.examine(calls))
        if not said:
            return message
        return said + "\n\n" + message.split("\n\n", 1)[0]


def sentence(in_test: Sequence[tuple[str, str, str]]) -> str:
    """'' or the sentence laying a failed test on the helpers (helper, function under test, direct
    caller) found wrong on their own inputs in this test."""
    lines, named = [], []
    for helper, function, via in in_test:
        if (helper, function) in named:
            continue
        named.append((helper, function))
        through = f" (through `{via}`)" if via and via not in (function, helper) else ""
        lines.append(f"Your `{helper}` returned wrong values when `{function}` called it{through} in this "
                     f"test: fix `{helper}` first.")
    if not lines:
        return ""
    callers = list(dict.fromkeys(f for _, f in named))
    return " ".join(lines) + " " + " ".join(
        f"`{f}` itself may be right: its result depends on what it calls." for f in callers)

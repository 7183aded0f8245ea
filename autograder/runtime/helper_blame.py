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

import inspect
import os
import resource
import select
import signal
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Sequence

import numpy as np

from autograder.runtime.sandbox.results import HelperCall
from autograder.runtime.text import code

#: A helper's recorded output is called wrong only this far from the reference's on the same
#: inputs: looser than the tests' own tolerances, so float32 rounding in a right helper never
#: moves the blame away from its caller.
HELPER_RTOL = 1e-4
HELPER_ATOL = 1e-7
#: Reference runs on recorded inputs per student, at most: the check costs milliseconds.
MAX_CHECKS = 24
#: Seconds of reference runs on recorded inputs per student, at most (each run is bounded too).
CHECK_BUDGET_SECONDS = 10.0
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


#: What one reference run on recorded inputs may cost: the inputs are the student's choice (a
#: ``causal_mask(40_000)`` is one small integer in, ten gigabytes out), so the run happens in a
#: forked child with its own address-space and CPU limits, and is abandoned past its wall time.
CHECK_MEMORY_BYTES = 1 << 30
CHECK_SECONDS = 5


def wrong_on_own_inputs(call: HelperCall, reference: Callable) -> bool:
    """Whether the helper's recorded output differs from ``reference`` on the recorded inputs.
    No record, inputs the reference cannot take, or a run past its bounds is no evidence: ``False``."""
    if not call.recorded:
        return False

    def differs() -> bool:
        with np.errstate(all="ignore"):
            right = reference(*call.args, **call.kwargs)
        return not _same(call.value, right)
    return bounded(differs) is True


def _address_space() -> int:
    """This process's virtual size in bytes (0 if unknown)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def bounded(check: Callable[[], bool]) -> bool | None:
    """``check()`` run in a forked child limited to ``CHECK_MEMORY_BYTES`` more address space and
    ``CHECK_SECONDS`` of CPU and wall time: its answer, or ``None`` if it raised or ran past them
    (the grader's own process never holds what a student's inputs make the reference build)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                         # the child: answer one byte, then leave without cleanup
        answer = b""
        try:
            os.close(read)
            limit = _address_space() + CHECK_MEMORY_BYTES
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CPU, (CHECK_SECONDS, CHECK_SECONDS))
            answer = b"1" if check() else b"0"
        except BaseException:            # out of memory, a refusal, anything: no answer
            pass
        finally:
            try:
                os.write(write, answer)
            finally:
                os._exit(0)
    os.close(write)
    try:
        ready, _, _ = select.select([read], [], [], CHECK_SECONDS + 1)
        answer = os.read(read, 1) if ready else b""
    finally:
        os.close(read)
        if not answer:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
    return {b"1": True, b"0": False}.get(answer)


class HelperJudge:
    """One student's helpers, judged on the inputs recorded in failed tests (``MAX_CHECKS`` runs
    of a reference at most)."""

    def __init__(self, reference_of: Callable[[str], Callable | None]) -> None:
        self._reference_of = reference_of
        self._runs = 0
        self._seconds = 0.0
        #: Helpers found wrong on their own inputs in some test of this student's run.
        self._found_wrong: set[str] = set()

    def examine(self, calls: Sequence[Called]) -> tuple[tuple[str, str, str], ...]:
        """Of a failed test's ``calls``, the (helper, function under test, direct caller) whose
        helper gave a wrong output on its own recorded inputs, each pair judged until found wrong."""
        wrong_here, found = [], set()
        for called in calls:
            pair = called.names[:2]
            if pair in found or not called.call.recorded or self._runs >= MAX_CHECKS \
                    or self._seconds >= CHECK_BUDGET_SECONDS:
                continue
            reference = self._reference_of(called.call.helper)
            if reference is None:
                continue
            self._runs += 1
            started = time.monotonic()
            wrong = wrong_on_own_inputs(called.call, reference)
            self._seconds += time.monotonic() - started
            if wrong:
                found.add(pair)
                wrong_here.append(called.names)
                self._found_wrong.add(called.call.helper)
        return tuple(wrong_here)

    def suspected(self, calls: Sequence[Called]) -> tuple[tuple[str, str, str], ...]:
        """Of a failed test's ``calls``, those not recorded (inputs too large to copy) to a helper
        already found wrong on its own inputs in another test of this run."""
        seen: dict[tuple[str, str], tuple[str, str, str]] = {}
        for called in calls:
            if not called.call.recorded and called.call.helper in self._found_wrong:
                seen.setdefault(called.names[:2], called.names)
        return tuple(seen.values())

    def lay(self, message: str, calls: Sequence[Called]) -> str:
        """``message`` of a failed test, led by the blame of the helpers at fault in it when there
        are any (then only its first paragraph, the verdict, is kept: what follows reads the
        caller's result for slips of its own, which a wrong helper inside makes meaningless); else
        ``message``. A helper found wrong only in another test is not blamed for this one: its inputs
        here were not judged. Only where they were too large to record is it named, as a suspicion."""
        said = sentence(self.examine(calls)) or suspicion(self.suspected(calls))
        if not said:
            return message
        return said + "\n\n" + message.split("\n\n", 1)[0]


def suspicion(in_test: Sequence[tuple[str, str, str]]) -> str:
    """'' or the sentence for helpers found wrong in another test and called in this one on inputs
    too large to check again: what is known, said as no more than that."""
    lines = [f"`{function}` calls your `{helper}` in this test, on inputs too large to check again, and "
             f"`{helper}` returned wrong values in another test: fix `{helper}` first, then see whether "
             "this test still fails." for helper, function, _ in in_test]
    return " ".join(lines)


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


# ---------------------------------------------------------------- an input changed inside a helper
# A right loss whose own softmax does ``x -= ...`` on the loss's array changes the loss's input: the
# in-place change is the helper's, shown by calling the helper again in the sandbox.

#: The attribute of a submission's proxy (one per submission) holding the helpers seen to change
#: their input in place, for the calls too large to record.
_CHANGES_IN_PLACE = "_helpers_changing_their_input"


def helper_changing_its_input(student: Any, name: str, fn: Callable) -> tuple[str, str, bool] | None:
    """(helper, its caller, confirmed here) of the first of the student's other functions that
    ``name``'s last call handed an array and that changes it in place: confirmed by calling that
    function again, in the sandbox, on a copy of what it was given (the worker's record of the call
    is not believed). A call too large to record names a helper confirmed so in an earlier test
    (``confirmed here`` False)."""
    seen: set[str] = student.__dict__.setdefault(_CHANGES_IN_PLACE, set()) if hasattr(student, "__dict__") else set()
    for made in getattr(fn, "last_helper_calls", ()):
        if made.helper == name:
            continue
        if not made.recorded:
            if made.helper in seen:
                return made.helper, made.caller or name, False
            continue
        helper = getattr(student, made.helper, None)
        isolated = getattr(helper, "isolated_call", None)
        try:
            # The sandbox takes arguments by position: keywords are put in their places.
            given = inspect.signature(helper).bind(*made.args, **made.kwargs).args
        except (TypeError, ValueError):
            continue
        if isolated is None or not any(isinstance(a, np.ndarray) for a in given):
            continue
        try:
            _, changed = isolated(*given)
        except Exception:          # the helper failed (the sandbox's report): no evidence
            continue
        if changed:
            seen.add(made.helper)
            return made.helper, made.caller or name, True
    return None


def changed_inside(name: str, param: str, helper: tuple[str, str, bool]) -> str:
    """The in-place change of ``name``'s input laid on the helper that makes it (or, where this call
    was too large to record, on the helper seen to make such changes in another test)."""
    inner, caller, here = helper
    through = f" (through `{caller}`)" if caller not in (name, inner) else ""
    if not here:
        return (f"`{name}` changed its input {code(param)} in place. It calls your `{inner}`{through}, which "
                f"changed its own input in place in another test: fix `{inner}` first (work on a copy there, "
                f"`x = x - ...` rather than `x -= ...`), then check `{name}` again.")
    return (f"`{name}` changed its input {code(param)} in place, and the change is made inside your `{inner}`, "
            f"which `{name}` calls{through}: called again on a copy of what it was given, `{inner}` changes "
            f"its own input in place. Fix `{inner}` first: work on a copy there (`x = x - ...` rather than "
            "`x -= ...`).")

"""Grade one submission: run its code in the sandbox, judge it from outside.

The trusted process holds the hidden tests and the references; the hidden
pytest suite runs here, against a proxy whose functions forward each call
to the sandboxed worker as plain data. The outcome is assembled only after
the worker has been shut down.
"""
from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any

import numpy as np

from autograder.runtime.class_probes import ClassProbes
from autograder.runtime.grading.demo_cells import without_demo_cells
from autograder.runtime.grading.extract import Program, attempted, defining_cell, extract_program
from autograder.runtime.grading.intake import IntakeLimits, Rejected, read_submission
from autograder.runtime.grading.outcome import GradeOutcome, ItemOutcome
from autograder.runtime.grading.support import LoadedAutograder
from autograder.runtime.helper_blame import note as note_helper_calls
from autograder.runtime.judge import StudentCallFailed, apply_changes
from autograder.runtime.sandbox import Limits, SandboxSession
from autograder.runtime.sandbox.policy import Clearance
from autograder.runtime.text import code


class SandboxStudent:
    """Looks like the student's namespace; every call runs in the sandbox."""

    def __init__(self, session: SandboxSession):
        self._session = session
        self._made: dict[str, Any] = {}        # each proxy is made once: tests look functions up per call

    def __getattr__(self, name: str) -> Any:
        made = self._made.get(name)
        if made is not None:
            return made
        params = self._session.functions.get(name)
        if name.startswith("_") or params is None:
            raise AttributeError(name)

        def isolated_call(*args: Any) -> tuple[Any, dict[int, np.ndarray]]:
            """The value, and the array arguments the function changed in the sandbox.

            ``args`` cross as copies, so they are never touched here: the
            judge needs no copies of its own (see ``judge.call``).
            """
            result = self._session.call(name, *args)
            # What this call of the function handed the submission's other functions: where an input
            # was changed in place, the judge calls each of them again to see whose change it is.
            call.last_helper_calls = result.helper_calls
            if result.helper_calls:
                note_helper_calls(name, result.helper_calls)
            if not result.ok:
                raise StudentCallFailed(str(result.error), result.error.raised_in)
            return result.value, result.args_after

        def call(*args: Any) -> Any:
            value, changed = isolated_call(*args)
            apply_changes(args, changed)       # show the caller the mutation
            return value

        call.isolated_call = isolated_call
        call.numbers_read = dict(self._session.numbers_read.get(name, {}))
        call.__name__ = name
        call.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params])
        self._made[name] = call
        return call


def _hang_notes(program: Program, hung: dict[str, float]) -> list[str]:
    """One note per function that hung, naming it and the cell that defines it."""
    notes = []
    for function, seconds in hung.items():
        cell = defining_cell(program, function)
        where = f", defined in {program.label(cell)}," if cell is not None else ""
        notes.append(f"{code(function)}{where} did not return within {seconds:g} s and was stopped; its later "
                     "tests failed at once without calling it again, and your other functions kept their time. "
                     "Look for a loop that never ends or a very slow computation in it.")
    return notes


def _not_run(ag: LoadedAutograder, message: str) -> tuple[ItemOutcome, ...]:
    return tuple(ItemOutcome(q, test, points, False, message) for q in ag.questions for test, points in ag.items[q])


def _probe_call(session: SandboxSession) -> Any:
    """A call of the student's function on a class probe, as ``ClassProbes.behaviour`` wants it."""
    def probe(function: str, args: tuple) -> tuple[bool, Any, dict[int, Any]]:
        result = session.call(function, *args)
        changed = {i: after for i, after in result.args_after.items() if 0 <= i < len(args)}
        if result.ok:
            return True, result.value, changed
        kind = result.error.type_name   # the student's text: only its digest is kept
        return False, f"{result.error.kind}:{getattr(kind, 'raw', kind)}", changed
    return probe


def grade_program(program: Program, ag: LoadedAutograder, student: str, clearance: Clearance, *,
                  limits: Limits = Limits(), submission: str = "", warm: Any = None,
                  probes: ClassProbes | None = None) -> GradeOutcome:
    """Run ``program`` in a sandbox and judge it with the hidden suite.

    ``clearance`` is the isolation level ``policy.clear`` accepted for this
    grading run. The hidden inputs are drawn from the build's secret and the
    program's digest. ``warm`` is a ``WarmStart`` or ``ForkServer`` the
    sandbox takes its workers from (see ``SandboxSession``). With ``probes``,
    the functions are called on the class's shared probes after the hidden
    suite, and the outcome's ``behaviour`` says what they returned (for
    mistake groups); nothing else in the outcome depends on them.
    """
    start = time.perf_counter()
    notes = list(program.notes)
    suite = ag.suite
    program = without_demo_cells(program, ag.demo_cells)
    with SandboxSession(list(program.cells), limits, isolation=clearance.level, warm=warm,
                        numbers_for=ag.student_functions, record_calls_of=ag.student_functions) as session:
        loaded = session.start()
        level = clearance.label
        if loaded.timed_out:
            where = f" in {program.label(loaded.hung_cell)}" if loaded.hung_cell >= 0 else ""
            notes.append(f"Your notebook took too long to run and was stopped{where}; functions defined "
                         "after that point could not be graded.")
        elif loaded.error and not loaded.cell_errors:
            notes.append(f"Your notebook could not be run: {loaded.error}")
        for error in loaded.cell_errors:
            # ``str(error)`` quotes the exception as a code span; the cell index is the worker's word.
            where = program.label(error.cell) if error.cell >= 0 else "a cell"
            notes.append(f"{where[0].upper()}{where[1:]} raised {error}.")
        if loaded.loaded:
            run = suite.run(SandboxStudent(session), ag.seed_for(program.digest))
            items, diagnoses = run.items, run.diagnoses
        else:
            items, diagnoses = _not_run(ag, "Not run: your notebook did not finish loading."), ()
        notes += _hang_notes(program, session.hung)
        printed_in_calls = session.call_output_bytes
        # After the verdicts and the notes on them: a probe changes neither.
        lost = {i.question for i in items if not i.passed}
        wrong = [f for q in ag.questions if q in lost for f in ag.functions.get(q, ())]
        found = probes.behaviour(_probe_call(session), wrong) if probes is not None and loaded.loaded else {}
        behaviour = tuple((q, f, found[f]) for q in ag.questions for f in ag.functions.get(q, ()) if f in found)
        stdout = session.load_stdout
        if session.load_stdout_dropped:
            kept = len(stdout.encode("utf-8"))
            notes.append(f"Output truncated: your notebook printed about {kept + session.load_stdout_dropped:,} "
                         f"bytes while it ran; the grader kept the first {kept:,} and dropped the rest.")
        if printed_in_calls:
            notes.append(f"Your functions wrote about {printed_in_calls:,} bytes of output (prints, or "
                         "warnings such as NumPy's overflow warnings) while the hidden tests called them; that "
                         "output is not shown, since it would show the hidden inputs.")
    # The worker is gone; only now is the outcome assembled.
    status = "timeout" if loaded.timed_out else "graded"
    flags = tuple(flag for flag, present in (("not-attempted", not attempted(program, ag.student_functions)),
                                               ("load-error", bool(loaded.cell_errors))) if present)
    return GradeOutcome(student, ag.assignment, status, level, items, ag.possible, tuple(notes),
                        stdout, time.perf_counter() - start, submission, diagnoses, flags,
                        clearance.student_note, behaviour)


def rejected_outcome(ag: LoadedAutograder, student: str, reason: str, submission: str) -> GradeOutcome:
    """A zero-score outcome for a submission that could not be read."""
    items = _not_run(ag, f"Not graded: {reason}")
    return GradeOutcome(student, ag.assignment, "rejected", "none (not run)", items, ag.possible,
                        (reason,), "", 0.0, submission)


def refused_outcome(ag: LoadedAutograder, student: str, reason: str, submission: str) -> GradeOutcome:
    """A zero-score outcome for a submission not run because the sandbox policy refused this machine."""
    items = _not_run(ag, "Not graded: the grader could not isolate student code here.")
    return GradeOutcome(student, ag.assignment, "error", "none (refused)", items, ag.possible,
                        (f"Grading refused: {reason}",), "", 0.0, submission)


def failed_outcome(ag: LoadedAutograder, student: str, reason: str, submission: str) -> GradeOutcome:
    """A zero-score error outcome for a submission whose feedback the grader itself failed to write:
    no points on a result nobody could read, and the student is still accounted for."""
    items = _not_run(ag, "Not graded: the grader failed on this submission; your instructor has been told.")
    return GradeOutcome(student, ag.assignment, "error", "none (grader failed)", items, ag.possible,
                        (f"The grader failed while writing this feedback ({reason}); ask your instructor to "
                         "regrade.",), "", 0.0, submission)


def grade_submission(path: str | Path, ag: LoadedAutograder, student: str, clearance: Clearance, *,
                     limits: Limits = Limits(), intake_limits: IntakeLimits = IntakeLimits(),
                     warm: Any = None, probes: ClassProbes | None = None) -> GradeOutcome:
    """Grade the file at ``path``; a submission that cannot be read scores 0 with the reason."""
    path = Path(path)
    try:
        submission = read_submission(path, ag.assignment, intake_limits)
    except Rejected as exc:
        return rejected_outcome(ag, student, str(exc), path.name)
    return grade_program(extract_program(submission), ag, student, clearance, limits=limits,
                         submission=submission.source, warm=warm, probes=probes)

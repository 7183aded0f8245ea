"""What a sandboxed submission's loading and calls come back as: plain data.

Every failure of the student's code (an exception, a hang, a crash, an
unsendable return value) is reported in these types, never raised in the
grader. Whatever the worker said is held as ``WorkerText`` (the student's
text, never Markdown); ``str()`` of an error is a Markdown sentence for the
student in which the grader quotes that text.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograder.runtime.text import WorkerText, code


def _detail(type_name: WorkerText | str, message: WorkerText | str) -> str:
    """``Type: message`` as the worker reported them (raw: quote it before writing it)."""
    kind = type_name.raw if isinstance(type_name, WorkerText) else type_name
    said = message.raw if isinstance(message, WorkerText) else message
    return f"{kind}: {said}" if said else kind


@dataclass(frozen=True)
class CellError:
    """An exception raised while a cell of the submission ran.

    ``cell`` is the index of the cell among those sent, or -1 when the worker named none of them.
    """

    cell: int
    type_name: WorkerText
    message: WorkerText
    traceback: WorkerText = WorkerText()

    def __str__(self) -> str:
        """The exception, ``Type: message``, as an inline code span."""
        return code(_detail(self.type_name, self.message))


@dataclass(frozen=True)
class ImportResult:
    """Outcome of loading the submission's code.

    Attributes:
        ok: every cell ran without an exception.
        loaded: the worker finished all cells and serves calls (a cell may
            have raised: later cells still ran, as in a notebook).
        error: what went wrong, for the student; ``None`` when ok.
        timed_out: loading exceeded its wall-clock limit.
        cell_errors: the exception of each failing cell.
        seconds: wall-clock time, worker start included.
        stdout: output printed while loading (within the session's budget).
        hung_cell: see below.
    """

    ok: bool
    loaded: bool
    error: str | None = None
    timed_out: bool = False
    cell_errors: tuple[CellError, ...] = ()
    seconds: float = 0.0
    stdout: str = ""
    #: For a load that timed out: the index of the cell running when it was stopped, as far as
    #: the worker said (-1: not known).
    hung_cell: int = -1


@dataclass(frozen=True)
class CallError:
    """Why a call did not return a value.

    ``kind`` is one of: ``raised`` (the function raised, ``SystemExit`` and
    ``KeyboardInterrupt`` included), ``missing``, ``not_callable``,
    ``unencodable`` (its return value cannot cross the channel),
    ``unsendable`` (the arguments cannot), ``timeout``, ``hung`` (not
    called: the function timed out on an earlier call), ``crashed`` (the
    worker process died), ``protocol`` (the worker sent malformed data),
    ``budget`` (the session's total time is used up), ``not_loaded`` (the
    code never finished loading).

    ``function`` is the name the grader asked for. When the worker reported
    the failure, ``type_name``, ``message`` and ``traceback`` are what it
    said (``WorkerText``), and ``str()`` is the grader's own sentence for
    ``kind`` quoting them. When the grader found it (a timeout, a crash,
    malformed data), ``message`` is that sentence, already written with
    whatever it quotes from the worker in code spans.
    """

    kind: str
    function: str
    type_name: WorkerText | str
    message: WorkerText | str
    traceback: WorkerText | str = ""
    #: For ``raised``: the submission's functions the exception passed through, outermost first
    #: (names the submission defined, checked by the session).
    raised_in: tuple[str, ...] = ()

    def __str__(self) -> str:
        if not isinstance(self.message, WorkerText):
            return self.message
        name = code(self.function)
        if self.kind == "raised":
            return f"{name} raised {code(_detail(self.type_name, self.message))}"
        if self.kind == "missing":
            return f"{name} is not defined: run the cell that defines it, and keep its name."
        if self.kind == "not_callable":
            return f"{name} should be a function but is a {self.message}."
        if self.kind == "unencodable":
            return f"{name} returned a value that cannot be sent back for grading: {self.message}"
        if self.kind == "not_loaded":
            return f"{name} cannot be called: the submission's code was not loaded."
        return (f"the sandbox worker failed while calling {name} ({code(self.kind)}): "
                f"{code(_detail(self.type_name, self.message))}")


@dataclass(frozen=True)
class HelperCall:
    """A call the function under test made to another of the submission's graded functions, as the
    worker recorded it: data from the student's process, to be judged, never believed.

    ``caller`` is the submission's function that made the call ("" when the worker named none the
    submission defined); ``recorded`` says whether ``args``, ``kwargs`` and ``value`` were kept
    (a call too large to copy is reported by name only).
    """

    helper: str
    caller: str
    recorded: bool = False
    args: tuple = ()
    kwargs: dict[str, Any] = field(default_factory=dict)
    value: Any = None


@dataclass(frozen=True)
class CallResult:
    """Outcome of one call: the returned value, or why there is none.

    ``args_after`` maps the index of each array argument the function
    changed in place to its content afterwards (empty when none changed).
    """

    ok: bool
    value: Any = None
    error: CallError | None = None
    args_after: dict[int, Any] = field(default_factory=dict)
    timed_out: bool = False
    stdout: str = ""
    seconds: float = 0.0
    #: The calls it made to the submission's other graded functions (see ``HelperCall``).
    helper_calls: tuple[HelperCall, ...] = ()

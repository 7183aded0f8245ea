"""What a sandboxed submission's loading and calls come back as: plain data.

Every failure of the student's code (an exception, a hang, a crash, an
unsendable return value) is reported in these types, never raised in the
grader.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from autograder.runtime.text import code

@dataclass(frozen=True)
class CellError:
    """An exception raised while a cell of the submission ran."""

    cell: int
    type_name: str
    message: str
    traceback: str = ""

    def __str__(self) -> str:
        return f"{self.type_name}: {self.message}" if self.message else self.type_name


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
    """

    ok: bool
    loaded: bool
    error: str | None = None
    timed_out: bool = False
    cell_errors: tuple[CellError, ...] = ()
    seconds: float = 0.0
    stdout: str = ""


@dataclass(frozen=True)
class CallError:
    """Why a call did not return a value.

    ``kind`` is one of: ``raised`` (the function raised, ``SystemExit`` and
    ``KeyboardInterrupt`` included), ``missing``, ``not_callable``,
    ``unencodable`` (its return value cannot cross the channel),
    ``unsendable`` (the arguments cannot), ``timeout``, ``crashed`` (the
    worker process died), ``protocol`` (the worker sent malformed data),
    ``budget`` (the session's total time is used up), ``not_loaded`` (the
    code never finished loading).
    """

    kind: str
    function: str
    type_name: str
    message: str
    traceback: str = ""

    def __str__(self) -> str:
        if self.kind == "raised":
            detail = f"{self.type_name}: {self.message}" if self.message else self.type_name
            return f"`{self.function}` raised {code(detail)}"
        return self.message


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

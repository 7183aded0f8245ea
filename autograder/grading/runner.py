"""Grade one submission: run its code in the sandbox, judge it from outside.

The trusted process holds the hidden tests and the references; the hidden
pytest suite runs here, against a proxy whose functions forward each call
to the sandboxed worker as plain data. The outcome is assembled only after
the worker has been shut down.
"""
from __future__ import annotations

import hashlib
import inspect
import io
import json
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from autograder.errors import GraderError
from autograder.grading.extract import Program, extract_program
from autograder.grading.intake import IntakeLimits, Rejected, read_submission
from autograder.grading.results import GradeOutcome, ItemOutcome
from autograder.hidden_plugin import CollectedSuite, HiddenSuitePlugin, hidden_test_path, run_hidden_suite
from autograder.judge import StudentCallFailed, apply_changes
from autograder.sandbox import Limits, SandboxSession

#: Where the build puts the hidden suite inside the autograder zip.
SUPPORT_PREFIX = "files/lmhead_support/"


class AutograderError(GraderError):
    """The autograder zip is missing, unreadable or not one built by ``grader build``."""


@dataclass(frozen=True)
class LoadedAutograder:
    """The hidden suite of one built assignment, unpacked for the trusted grader."""

    assignment: str
    hidden_dir: Path
    hidden_seed: int
    sizes: dict
    questions: tuple[str, ...]
    items: dict[str, tuple[tuple[str, float], ...]]
    digest: str

    @property
    def possible(self) -> float:
        return round(sum(p for items in self.items.values() for _, p in items), 6)

    @property
    def hidden_paths(self) -> list[Path]:
        """The hidden test module of each question, in question order."""
        return [hidden_test_path(self.hidden_dir.parent, q) for q in self.questions]


def load_autograder(zip_path: str | Path, dest: str | Path) -> LoadedAutograder:
    """Unpack the hidden suite of ``zip_path`` into ``dest`` and read its config."""
    zip_path, dest = Path(zip_path), Path(dest)
    try:
        data = zip_path.read_bytes()
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (OSError, zipfile.BadZipFile) as exc:
        raise AutograderError(f"{zip_path} is not a readable autograder zip ({exc}); "
                              "pass the autograder.zip written by `grader build`.") from None
    with zf:
        names = [n for n in zf.namelist() if n.startswith(SUPPORT_PREFIX + "hidden/")
                 or n == SUPPORT_PREFIX + "hidden_config.json"]
        if SUPPORT_PREFIX + "hidden_config.json" not in names:
            raise AutograderError(f"{zip_path} holds no {SUPPORT_PREFIX}hidden_config.json: it was not "
                                  "built by `grader build`. Rebuild it with `grader build`.")
        for name in names:
            relative = PurePosixPath(name[len(SUPPORT_PREFIX):])
            if ".." in relative.parts or name.endswith("/"):
                continue
            target = dest.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(name))
    return load_support_dir(dest, hashlib.sha256(data).hexdigest())


def load_support_dir(support: str | Path, digest: str = "") -> LoadedAutograder:
    """Read an unpacked support folder (``hidden_config.json`` and ``hidden/``)."""
    support = Path(support)
    try:
        config = json.loads((support / "hidden_config.json").read_text(encoding="utf-8"))
        items = {q: tuple((test, float(points)) for test, points in config["items"][q])
                 for q in config["questions"]}
        return LoadedAutograder(config["assignment"], support / "hidden", int(config["hidden_seed"]),
                                dict(config["sizes"]), tuple(config["questions"]), items, digest)
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise AutograderError(f"{support / 'hidden_config.json'} is missing or malformed ({exc}); "
                              "rebuild the autograder with `grader build`.") from None


class SandboxStudent:
    """Looks like the student's namespace; every call runs in the sandbox."""

    def __init__(self, session: SandboxSession):
        self._session = session

    def __getattr__(self, name: str) -> Any:
        params = self._session.functions.get(name)
        if name.startswith("_") or params is None:
            raise AttributeError(name)

        def isolated_call(*args: Any) -> tuple[Any, dict[int, np.ndarray]]:
            """The value, and the array arguments the function changed in the sandbox.

            ``args`` cross as copies, so they are never touched here: the
            judge needs no copies of its own (see ``judge.call``).
            """
            result = self._session.call(name, *args)
            if not result.ok:
                raise StudentCallFailed(str(result.error))
            return result.value, result.args_after

        def call(*args: Any) -> Any:
            value, changed = isolated_call(*args)
            apply_changes(args, changed)       # show the caller the mutation
            return value

        call.isolated_call = isolated_call
        call.__name__ = name
        call.__signature__ = inspect.Signature(
            [inspect.Parameter(p, inspect.Parameter.POSITIONAL_OR_KEYWORD) for p in params])
        return call


def _item_outcomes(ag: LoadedAutograder, results: dict, default_message: str) -> tuple[ItemOutcome, ...]:
    outcomes = []
    for question in ag.questions:
        for test, points in ag.items[question]:
            r = results.get(question, {}).get(test)
            if r is None:
                outcomes.append(ItemOutcome(question, test, points, False, default_message))
            else:
                outcomes.append(ItemOutcome(question, test, points, r.passed, r.message, tuple(r.mistakes)))
    return tuple(outcomes)


def grade_program(program: Program, ag: LoadedAutograder, student: str, *,
                  limits: Limits = Limits(), isolation: str = "auto", submission: str = "",
                  suite: CollectedSuite | None = None, warm: Any = None) -> GradeOutcome:
    """Run ``program`` in a sandbox and judge it with the hidden suite.

    ``suite``, when given, is the hidden suite already collected (bulk
    grading collects once per batch); otherwise pytest runs the modules.
    ``warm`` is a ``WarmStart`` or ``ForkServer`` the sandbox takes its
    workers from (see ``SandboxSession``).
    """
    start = time.perf_counter()
    notes = list(program.notes)
    with SandboxSession(list(program.cells), limits, isolation=isolation, warm=warm) as session:
        loaded = session.start()
        level = session.isolation
        if loaded.timed_out:
            notes.append("Your notebook took too long to run and was stopped; functions defined "
                         "after that point could not be graded.")
        elif loaded.error and not loaded.cell_errors:
            notes.append(f"Your notebook could not be run: {loaded.error}")
        for error in loaded.cell_errors:
            notes.append(f"Code cell {error.cell + 1} raised {error}.")   # cells count from 1 for people
        student_proxy = SandboxStudent(session)
        if not loaded.loaded:
            results = {}
        elif suite is not None:
            results = suite.run(student_proxy, ag.hidden_seed, ag.sizes)
        else:
            plugin = HiddenSuitePlugin(student=student_proxy, hidden_seed=ag.hidden_seed, sizes=ag.sizes)
            results = run_hidden_suite(ag.hidden_paths, plugin)
        stdout = session.stdout
    # The worker is gone; only now is the outcome assembled.
    status = "timeout" if loaded.timed_out else "graded"
    items = _item_outcomes(ag, results, "Not run: your notebook did not finish loading.")
    return GradeOutcome(student, ag.assignment, status, level, items, ag.possible, tuple(notes),
                        stdout, time.perf_counter() - start, submission)


def rejected_outcome(ag: LoadedAutograder, student: str, reason: str, submission: str) -> GradeOutcome:
    """A zero-score outcome for a submission that could not be read."""
    items = _item_outcomes(ag, {}, f"Not graded: {reason}")
    return GradeOutcome(student, ag.assignment, "rejected", "none (not run)", items, ag.possible,
                        (reason,), "", 0.0, submission)


def grade_submission(path: str | Path, ag: LoadedAutograder, student: str, *,
                     limits: Limits = Limits(), isolation: str = "auto",
                     intake_limits: IntakeLimits = IntakeLimits(),
                     suite: CollectedSuite | None = None, warm: Any = None) -> GradeOutcome:
    """Grade the file at ``path``; a submission that cannot be read scores 0 with the reason."""
    path = Path(path)
    try:
        submission = read_submission(path, ag.assignment, intake_limits)
    except Rejected as exc:
        return rejected_outcome(ag, student, str(exc), path.name)
    return grade_program(extract_program(submission), ag, student, limits=limits,
                         isolation=isolation, submission=submission.source, suite=suite, warm=warm)

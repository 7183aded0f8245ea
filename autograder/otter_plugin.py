"""Trusted grading under ``otter run`` and on Gradescope.

otter imports this plugin in its own (parent) process. Before otter starts
its kernel, ``before_execution`` grades the submission with the sandboxed
runner, removes every file the submission brought into otter's working
folder, and hands otter an empty notebook: nothing of the student's runs in
otter's kernel. ``after_grading`` then makes otter write the trusted
results, in Gradescope's format, as its results.json.
"""
from __future__ import annotations

import os
import shutil
import traceback
from pathlib import Path
from typing import Any

import nbformat

from autograder.grading.extract import extract_program
from autograder.grading.intake import Rejected, Submission, parse_notebook
from autograder.grading.results import GradeOutcome, results_json
from autograder.grading.runner import grade_program, load_support_dir, rejected_outcome

try:
    from otter.plugins import AbstractOtterPlugin
except ImportError:  # pragma: no cover - otter is a dependency of the package
    AbstractOtterPlugin = object

SUPPORT_DIR = "lmhead_support"

#: What otter itself puts in the submission folder and may stay there.
_OTTER_OWNED = {"tests", SUPPORT_DIR, "__init__.py"}


class TrustedGrading(AbstractOtterPlugin):
    """Grade in the sandbox; give otter nothing of the student's to run."""

    outcome: GradeOutcome | None = None
    error: str = ""

    def _support(self) -> Path:
        # otter's layout: <ag_dir>/source (the zip), <ag_dir>/submission (cwd), <ag_dir>/results
        ag_dir = Path(self.submission_path).resolve().parent.parent
        return ag_dir / "source" / "files" / SUPPORT_DIR

    def _submission(self, nb: Any) -> Submission:
        path = Path(self.submission_path)
        if path.suffix == ".py":
            return Submission(path.name, "py", None, path.read_text(encoding="utf-8", errors="replace"))
        if isinstance(nb, nbformat.NotebookNode):
            return Submission(path.name, "ipynb", nb, None)
        return Submission(path.name, "ipynb", parse_notebook(path.read_bytes(), path.name), None)

    def _clear_submission_folder(self) -> None:
        """Delete what the submission brought (conftest.py, numpy.py, .pth, ...) from otter's cwd."""
        folder = Path(self.submission_path).resolve().parent
        for entry in folder.iterdir():
            if entry.name in _OTTER_OWNED:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)

    def before_execution(self, submission: Any) -> Any:
        support = self._support()
        student = str((self.submission_metadata or {}).get("id", Path(self.submission_path).stem))
        try:
            os.chmod(support.parent.parent.parent, 0o700)   # keep a fallback sandbox user out
            ag = load_support_dir(support)
            try:
                program = extract_program(self._submission(submission))
                self.outcome = grade_program(program, ag, student, submission=Path(self.submission_path).name)
            except Rejected as exc:
                self.outcome = rejected_outcome(ag, student, str(exc), Path(self.submission_path).name)
        except Exception:   # never let otter fall back to running the student's code
            self.error = traceback.format_exc()
        self._clear_submission_folder()
        empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
        empty.metadata = dict(getattr(submission, "metadata", {}) or {})
        if isinstance(submission, str):
            return "pass\n"
        return empty

    def after_grading(self, results: Any) -> None:
        if self.outcome is not None:
            trusted = results_json(self.outcome)
        else:
            trusted = {"score": 0, "output": "The grader failed on this submission; please tell your "
                       "instructor.", "tests": [{"name": "Grader error", "score": 0, "max_score": 0,
                                                 "status": "failed", "visibility": "hidden",
                                                 "output": self.error[-4000:]}]}
        # otter writes results.json from this method; the instance attribute replaces it.
        results.to_gradescope_dict = lambda ag_config=None: trusted

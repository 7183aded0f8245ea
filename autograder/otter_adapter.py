"""Bridge from otter's exception-format test cases to the hidden pytest suite.

Each otter test case of a question calls ``run_hidden_item``; the first call
for a question runs the question's whole hidden module once against the
notebook's namespace and caches the verdicts, so every later case of that
question is a dictionary lookup.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autograder.hidden_plugin import HiddenSuitePlugin, ItemResult, run_hidden_module
from autograder.judge import Feedback

#: The support folder shipped in the autograder zip: autograder/, solutions/, hidden/.
SUPPORT = Path(__file__).resolve().parent.parent

_results: dict[tuple[int, str], dict[str, ItemResult]] = {}


class NotebookNamespace:
    """Attribute access to the student's notebook globals (``student.softmax``)."""

    def __init__(self, env: dict[str, Any]):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        try:
            return self._env[name]
        except KeyError:
            raise AttributeError(name) from None


def run_hidden_item(env: dict[str, Any], question: str, test_name: str) -> None:
    """Raise ``AssertionError`` with the student's feedback unless ``test_name`` passed."""
    key = (id(env), question)
    if key not in _results:
        config = json.loads((SUPPORT / "hidden_config.json").read_text(encoding="utf-8"))
        plugin = HiddenSuitePlugin(student=NotebookNamespace(env), hidden_seed=config["hidden_seed"],
                                   sizes=config["sizes"])
        _results[key] = run_hidden_module(str(SUPPORT / "hidden" / f"test_{question}.py"), plugin)
    result = _results[key].get(test_name)
    if result is None:
        raise Feedback(f"hidden test {test_name} did not run; please tell your instructor.")
    if not result.passed:
        raise Feedback(result.message)

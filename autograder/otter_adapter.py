"""Bridge from otter's exception-format test cases to the hidden pytest suite.

Each otter test case calls ``run_hidden_item``; the first call runs every
hidden module of the assignment in one pytest session against the notebook's
namespace and caches the verdicts, so every later case is a dictionary lookup.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from autograder.hidden_plugin import HiddenSuitePlugin, ItemResult, hidden_test_path, run_hidden_suite
from autograder.judge import Feedback

#: The support folder shipped in the autograder zip: autograder/, solutions/, hidden/.
SUPPORT = Path(__file__).resolve().parent.parent

_results: dict[tuple, dict[str, dict[str, ItemResult]]] = {}


def _fingerprint(env: dict[str, Any]) -> tuple:
    """Which functions the namespace holds now.

    otter runs a question's tests when its check cell executes, before later
    questions are defined, and again at the end; a cache keyed on the
    namespace alone would replay the early, incomplete verdicts.
    """
    return (id(env), tuple(sorted((k, id(v)) for k, v in env.items()
                                  if callable(v) and not k.startswith("_"))))


class NotebookNamespace:
    """Attribute access to the student's notebook globals (``student.softmax``)."""

    def __init__(self, env: dict[str, Any]):
        self._env = env

    def __getattr__(self, name: str) -> Any:
        try:
            return self._env[name]
        except KeyError:
            raise AttributeError(name) from None


def run_hidden_item(env: dict[str, Any], question: str, test_name: str, support: str | None = None) -> None:
    """Raise ``AssertionError`` with the student's feedback unless ``test_name`` passed.

    ``support`` is the folder holding ``hidden_config.json`` and ``hidden/``;
    the test cell passes it, since this module may have been imported from an
    installed copy of the package rather than from that folder.
    """
    folder = Path(support) if support else SUPPORT
    key = _fingerprint(env)
    if key not in _results:
        config = json.loads((folder / "hidden_config.json").read_text(encoding="utf-8"))
        plugin = HiddenSuitePlugin(student=NotebookNamespace(env), hidden_seed=config["hidden_seed"],
                                   sizes=config["sizes"])
        paths = [hidden_test_path(folder, q) for q in config["questions"]]
        _results[key] = run_hidden_suite(paths, plugin)
    result = _results[key].get(question, {}).get(test_name)
    if result is None:
        raise Feedback(f"hidden test {test_name} did not run; please tell your instructor.")
    if not result.passed:
        raise Feedback(result.message)

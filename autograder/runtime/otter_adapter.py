"""Bridge from otter's exception-format test cases to the hidden suite, in otter's kernel.

Each otter test case calls ``run_hidden_item``; the first call runs the
whole hidden suite against the notebook's namespace and caches the
verdicts, so every later case is a dictionary lookup. This path runs the
student's code in the same kernel as the tests: it is what otter does
without the grading plugin, kept so the two can be compared. The plugin
(``otter_plugin.py``) hands otter an empty notebook, so with it these cases
never see student code.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from autograder.runtime.grading.outcome import ItemOutcome
from autograder.runtime.grading.support import load_support_dir
from autograder.runtime.judge import Feedback

_results: dict[tuple, dict[tuple[str, str], ItemOutcome]] = {}

#: The digest in-kernel grading draws its inputs from: the notebook's code is not at hand here.
_KERNEL_DIGEST = "in-kernel"


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


def run_hidden_item(env: dict[str, Any], question: str, test_name: str, support: str) -> None:
    """Raise ``AssertionError`` with the student's feedback unless ``test_name`` passed.

    ``support`` is the folder holding ``hidden_config.json`` and ``hidden/``.
    """
    key = _fingerprint(env)
    if key not in _results:
        ag = load_support_dir(Path(support))
        run = ag.suite.run(NotebookNamespace(env), ag.seed_for(_KERNEL_DIGEST))
        _results[key] = {(o.question, o.test): o for o in run.items}
    result = _results[key].get((question, test_name))
    if result is None:
        raise Feedback(f"hidden test {test_name} did not run; please tell your instructor.")
    if not result.passed:
        raise Feedback(result.message)

"""What an autograder zip ships, defined once.

Two parts, by who may read them:

- the **grading runtime**: ``autograder/__init__.py`` and the
  ``autograder.runtime`` package, exactly; it holds no answer and no hidden
  input and is installed from a wheel (``wheel.py``) where otter grades;
- the **support folder** (``files/lmhead_support/`` in the zip): the hidden
  tests, the reference solutions, the assignment's catalogue of mistakes and
  the hidden config with the build's secret. Only the trusted grader reads it;
  the otter plugin locks its folder before any student code runs.

Nothing of the tooling (build, report, question bank, command line) ships.
"""
from __future__ import annotations

from pathlib import Path

import autograder
import solutions
from autograder.runtime.catalogue import CATALOGUE_FILE
from autograder.runtime.hidden_suite import hidden_test_path

#: The runtime package, relative to the folder that holds ``autograder/``.
RUNTIME_PACKAGE = "autograder/runtime"


def _package_files(package_dir: Path, prefix: str) -> list[tuple[str, bytes]]:
    """``(archive name, bytes)`` of a package's source files, sorted, without caches."""
    out = []
    for path in sorted(package_dir.rglob("*")):
        relative = path.relative_to(package_dir)
        if path.is_dir() or "__pycache__" in relative.parts or path.suffix in (".pyc", ".pyo"):
            continue
        out.append((f"{prefix}/{relative.as_posix()}", path.read_bytes()))
    return out


def runtime_files() -> list[tuple[str, bytes]]:
    """The grading runtime's files, named as they are installed (``autograder/...``)."""
    root = Path(autograder.__file__).parent
    return [("autograder/__init__.py", (root / "__init__.py").read_bytes()),
            *_package_files(root / "runtime", RUNTIME_PACKAGE)]


def support_files(assignment_folder: Path, questions: list[str], hidden_config: str) -> list[tuple[str, bytes]]:
    """The support folder's files, named relative to it."""
    files = [("hidden_config.json", hidden_config.encode("utf-8"))]
    for question in questions:
        path = hidden_test_path(assignment_folder, question)
        files.append((path.relative_to(assignment_folder).as_posix(), path.read_bytes()))
    catalogue = assignment_folder / CATALOGUE_FILE
    if catalogue.is_file():
        files.append((CATALOGUE_FILE, catalogue.read_bytes()))
    files += _package_files(Path(solutions.__file__).parent, "solutions")
    return files

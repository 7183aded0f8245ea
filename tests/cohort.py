"""Synthetic submissions for grading tests and benchmarks.

A submission is the built solution notebook with cells changed: one
catalogued mistake swapped in, functions left as stubs, a syntax error, an
endless loop... Mistakes are taken from the catalogue's own source, so a
synthetic student makes exactly the catalogued mistake.
"""
from __future__ import annotations

import copy
import importlib
import inspect
import re
import zipfile
from pathlib import Path

import nbformat

import solutions
from autograder.runtime.catalogue import Mistake

_IMPORT_ALIAS = re.compile(r"^from solutions(?:\.\w+)? import (\w+) as (\w+)$", re.M)
_IMPORT_PLAIN = re.compile(r"^from solutions(?:\.\w+)? import [\w, ]+$", re.M)


def mistake_source(m: Mistake) -> str:
    """The catalogue module holding ``m`` as notebook code, then ``m`` bound to the student's name.

    The catalogue's imports of the reference become aliases of the
    notebook's own functions, and its registration decorator a no-op.
    """
    module = importlib.import_module(m.implementation.__module__)
    text = inspect.getsource(module)
    # The reference functions the catalogue builds on, defined here too: a
    # perplexity notebook has no cross_entropy_loss of its own.
    imported = sorted({name for name, _ in _IMPORT_ALIAS.findall(text)})
    prelude = "\n\n".join(inspect.getsource(getattr(solutions, name)) for name in imported)
    text = prelude + "\n\n" + text.replace("from __future__ import annotations\n", "")
    text = text.replace("from autograder.runtime.catalogue import mistake",
                        "def mistake(**_):\n    return lambda f: f")
    text = _IMPORT_ALIAS.sub(r"\2 = \1", text)
    text = _IMPORT_PLAIN.sub("", text)
    return f"{text}\n\n{m.function} = {m.implementation.__name__}\n"


def _function_cells(nb: nbformat.NotebookNode) -> dict[str, int]:
    return {c.source.split("(")[0][4:]: i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.source.startswith("def ")}


def with_mistake(solution: nbformat.NotebookNode, m: Mistake) -> nbformat.NotebookNode:
    """The solution with the cell of ``m``'s function replaced by ``m``.

    Replaced in place, not redefined later: otter scores a question by its
    check cell, run where it stands in the notebook.
    """
    nb = copy.deepcopy(solution)
    nb.cells[_function_cells(nb)[m.function]].source = mistake_source(m)
    return nb


def with_stubs(solution: nbformat.NotebookNode, functions: list[str]) -> nbformat.NotebookNode:
    """The solution with ``functions`` reduced to stubs returning None."""
    nb = copy.deepcopy(solution)
    cells = _function_cells(nb)
    for name in functions:
        header = nb.cells[cells[name]].source.split(":\n")[0]
        nb.cells[cells[name]].source = header + ":\n    ...\n"
    return nb


def with_extra_cell(solution: nbformat.NotebookNode, source: str, position: int | None = None) -> nbformat.NotebookNode:
    """The solution with one more code cell (at the end by default)."""
    nb = copy.deepcopy(solution)
    cell = nbformat.v4.new_code_cell(source)
    nb.cells.insert(len(nb.cells) if position is None else position, cell)
    return nb


def write_export_zip(nb: nbformat.NotebookNode, path: Path, name: str) -> Path:
    """A zip as the notebook's export cell makes it: the notebook plus its log."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(f"{name}.ipynb", nbformat.writes(nb))
        zf.writestr(".OTTER_LOG", b"")
    return path

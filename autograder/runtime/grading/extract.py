"""Turn a submission into the code cells the sandbox runs.

IPython syntax has no meaning in plain Python: line magics, shell escapes
and help queries are dropped, cell magics keep their body only where it is
Python. otter's own cells (the init cell, ``grader.check`` and the export
cell) are neutralized, since grading happens outside the notebook. Every
change is recorded as a note for the student's feedback.
"""
from __future__ import annotations

import ast
import hashlib
from functools import lru_cache
import re
from dataclasses import dataclass

from autograder.runtime.grading.intake import Submission
from autograder.runtime.text import code

#: Cell magics whose body is ordinary Python.
_PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}

_OTTER_LINE = re.compile(
    r"^\s*(import\s+otter\b.*|from\s+otter\b.*|grader\s*=\s*otter\.Notebook\(.*\)\s*"
    r"|grader\.(check|check_all|export|to_pdf|run_plugin)\(.*\)\s*)$")
_MAGIC_LINE = re.compile(r"^\s*(%|!)")
#: (No ``\s*`` before the class that already holds ``\s``: the two overlapping made a long line
#: of spaces take quadratic time.)
_ASSIGN_SHELL = re.compile(r"^[\w.,\s]+=\s*[!%]")
_HELP_LINE = re.compile(r"^\s*[\w.]+\?\??\s*$|^\s*\?\??[\w.]+\s*$")
#: What any line the patterns above match contains: a cell without it is kept line for line
#: without trying each pattern on each line (a long cell took milliseconds). Its spaces never
#: cross a line break (``[^\S\n]``): with ``\s`` a run of blank lines took quadratic time.
_MAYBE_SPECIAL = re.compile(r"otter|grader|\?|^[^\S\n]*[%!]|=[^\S\n]*[!%]", re.MULTILINE)
#: Lines of IPython syntax named one by one in a cell's notes; the rest are counted (a
#: million of them made a million notes, in every test's feedback).
_NOTES_PER_CELL = 5


@dataclass(frozen=True)
class Program:
    """The code cells to run, in order, and what was changed on the way."""

    cells: tuple[str, ...]
    notes: tuple[str, ...]
    #: How a student finds each cell, in the notebook's own terms (one per cell).
    labels: tuple[str, ...] = ()

    def label(self, index: int) -> str:
        """Where cell ``index`` (of ``cells``) is, as the student sees it."""
        return self.labels[index] if index < len(self.labels) else f"code cell {index + 1}"

    @property
    def digest(self) -> str:
        """A hash of the code that runs: the same code gives the same digest on every path."""
        h = hashlib.sha256()
        for cell in self.cells:
            data = cell.encode("utf-8", "surrogatepass")
            h.update(len(data).to_bytes(8, "big") + data)
        return h.hexdigest()


def _clean_cell(source: str, number: int, notes: list[str]) -> str | None:
    lines = source.splitlines()
    first = lines[0].strip() if lines else ""
    if first.startswith("%%"):
        magic = first[2:].split()[0] if len(first) > 2 else ""
        if magic in _PYTHON_CELL_MAGICS:
            notes.append(f"cell {number}: the {code('%%' + magic)} line was removed; its code runs as usual.")
            lines = lines[1:]
        else:
            notes.append(f"cell {number}: a {code('%%' + magic)} cell is not Python and was skipped.")
            return None
    joined = "\n".join(lines)     # searched as joined: its line starts are those of ``lines``
    if not _MAYBE_SPECIAL.search(joined):
        return joined
    kept, skipped = [], 0
    for line in lines:
        indent = line[: len(line) - len(line.lstrip())]   # keeps blocks well-formed
        if _OTTER_LINE.match(line):
            kept.append(f"{indent}pass  # otter command, not needed for grading")
            continue
        if _MAGIC_LINE.match(line) or _ASSIGN_SHELL.match(line) or _HELP_LINE.match(line):
            skipped += 1
            if skipped <= _NOTES_PER_CELL:
                notes.append(f"cell {number}: {code(line.strip()[:60])} is IPython syntax and was skipped.")
            kept.append(f"{indent}pass  # IPython syntax removed for grading")
            continue
        kept.append(line)
    if skipped > _NOTES_PER_CELL:
        notes.append(f"cell {number}: {skipped - _NOTES_PER_CELL:,} more lines of IPython syntax were skipped.")
    return "\n".join(kept)


def extract_program(submission: Submission) -> Program:
    """The code cells of ``submission`` ready for plain Python, with notes."""
    notes: list[str] = list(submission.notes)
    if submission.kind == "py":
        return Program((submission.script or "",), tuple(notes), ("your script",))
    cells, labels = [], []
    code_cells = [c for c in submission.notebook.cells if c.cell_type == "code"]
    for number, cell in enumerate(code_cells, start=1):
        cleaned = _clean_cell(cell.source, number, notes)
        if cleaned is not None and cleaned.strip():
            cells.append(cleaned)
            labels.append(cell_label(cell.source, number))
    return Program(tuple(cells), tuple(notes), tuple(labels))


def cell_label(source: str, number: int) -> str:
    """A cell as a student finds it: its first line, and its place among the code cells
    (Jupyter numbers cells only once they have run, so the count is of code cells from the top)."""
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return f"the code cell that starts {code(first, 60)} (code cell {number} from the top)"


#: Cells longer than this are not parsed: not when looking for stubs (they count as work done),
#: nor for the demo-cell analysis (the program then runs as written).
#: Python's parser holds a whole cell's tree in the grader's memory, about 3.5 GB for 10 MB
#: of nested calls; a student's cell is a few kilobytes.
PARSE_LIMIT = 256 << 10


def _is_stub(node: ast.FunctionDef) -> bool:
    """A body that is only a docstring and ``...``, ``pass``, ``return``/``return None`` or ``raise NotImplementedError``."""
    body = list(node.body)
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    for statement in body:
        if isinstance(statement, ast.Pass):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
                and statement.value.value is Ellipsis:
            continue
        if isinstance(statement, ast.Return) and (statement.value is None or (
                isinstance(statement.value, ast.Constant) and statement.value.value is None)):
            continue
        if isinstance(statement, ast.Raise) and statement.exc is not None and "NotImplementedError" in ast.dump(statement.exc):
            continue
        return False
    return True


@lru_cache(maxsize=4096)
def _top_level_names(cell: str) -> tuple[tuple[str, bool], ...] | None:
    """Each top-level definition or rebinding in ``cell``, in order, with whether it is a stub;
    ``None`` for a cell that cannot be parsed. Cached: most cells (setup, checks, demos) are
    the same in every submission of a class."""
    try:
        tree = ast.parse(cell)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: list[tuple[str, bool]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.append((node.name, _is_stub(node)))
        elif isinstance(node, ast.Assign):
            found += [(t.id, False) for t in node.targets if isinstance(t, ast.Name)]   # e.g. softmax = mine
    return tuple(found)


def attempted(program: Program, functions: tuple[str, ...]) -> bool:
    """Whether the program defines at least one of ``functions`` with more than a stub's body.

    The last top-level definition of each name counts, as when the notebook
    runs top to bottom. A cell that cannot be parsed is skipped (its
    functions do not exist either).
    """
    last: dict[str, bool] = {}
    for cell in program.cells:
        if not any(name in cell for name in functions):
            continue            # it cannot define or rebind one of them: no need to parse it
        if len(cell) > PARSE_LIMIT:
            return True
        for name, stub in _top_level_names(cell) or ():
            if name in functions:
                last[name] = stub
    return any(not stub for stub in last.values())


def defining_cell(program: Program, function: str) -> int | None:
    """The index of the cell whose top-level definition of ``function`` is the last one (the one
    a notebook run top to bottom keeps), or ``None`` if no cell that can be parsed defines it."""
    found = None
    for index, cell in enumerate(program.cells):
        if function in cell and len(cell) <= PARSE_LIMIT and any(
                name == function for name, _ in _top_level_names(cell) or ()):
            found = index
    return found

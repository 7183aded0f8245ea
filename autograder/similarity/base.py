"""The starter code a notebook shipped with ("base code" in MOSS's terms).

Code every student received is no evidence of copying: the setup cell, the
cells between questions, each function's signature and docstring. For a
built-in assignment it is rendered here as the build renders the student
notebook (the master notebook's code cells, tests left out, every solution
block replaced by ``...``); an instructor whose notebook differs (a course
config changing sizes or text) passes the student notebook itself.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from autograder.runtime.grading.extract import extract_program
from autograder.runtime.grading.intake import read_submission

_SOLUTION_BLOCK = re.compile(r"^([ \t]*)# BEGIN SOLUTION\n.*?^[ \t]*# END SOLUTION[ \t]*$", re.M | re.S)


def student_version(source: str) -> str:
    """A master-notebook code cell as the student notebook has it: each solution block becomes ``...``."""
    return _SOLUTION_BLOCK.sub(lambda m: f"{m.group(1)}...", source)


@lru_cache(maxsize=None)
def starter_cells(assignment: str) -> tuple[str, ...]:
    """The code cells of a built-in assignment's student notebook, rendered with the default settings.

    Raises ``ConfigError`` for an assignment the grader does not know.
    """
    # The build package is imported only here: similarity on a folder with --base never needs it.
    from autograder.build.config import resolve_settings
    from autograder.build.master import render_master

    notebook, _ = render_master(resolve_settings([assignment], None)[0])
    cells: list[str] = []
    in_tests = False
    for cell in notebook.cells:
        if cell.cell_type == "raw":
            marker = cell.source.strip()
            in_tests = {"# BEGIN TESTS": True, "# END TESTS": False}.get(marker, in_tests)
        elif cell.cell_type == "code" and not in_tests:
            cells.append(student_version(cell.source))
    return tuple(cells)


def base_from_file(path: str | Path, assignment: str) -> tuple[str, ...]:
    """The code cells of a starter notebook or script the instructor passes (``--base``).

    Raises ``Rejected`` when the file is not a readable notebook or script.
    """
    return extract_program(read_submission(path, assignment)).cells

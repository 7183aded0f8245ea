"""One function's code, cut out of a submission for the instructor to read beside another's.

The submission is read again the way grading read it (``intake`` and ``extract``, with their limits),
and the last top-level ``def`` of the function is taken (the one in force when the notebook ran).
What comes back is the student's text: every view escapes it.
"""
from __future__ import annotations

import ast
from pathlib import Path

from autograder.runtime.grading.extract import extract_program
from autograder.runtime.grading.intake import Rejected, read_submission

#: Longest excerpt shown: a function longer than this is cut, and says so.
CODE_CHARS = 4000


def function_code(path: Path, assignment: str, function: str) -> str:
    """The source of ``function`` in the submission at ``path``, or a sentence saying why there is none."""
    try:
        program = extract_program(read_submission(path, assignment))
    except (Rejected, OSError, ValueError) as exc:
        return f"(the submission cannot be read again: {exc})"
    found = ""
    for cell in program.cells:
        try:
            tree = ast.parse(cell)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
                found = ast.get_source_segment(cell, node) or found
    if not found:
        return f"(no top-level def {function} in the submission)"
    return found if len(found) <= CODE_CHARS else found[:CODE_CHARS] + "\n# ... (cut)"

"""Turn a reference function into the code of an otter master-notebook cell.

The solution code in every notebook comes from ``solutions/`` through here,
never from a copy: the signature and docstring stay visible to students, the
body is wrapped in otter's solution markers so the student copy gets ``...``.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import textwrap


def solution_cell_source(module_name: str, function: str) -> str:
    """Source of ``module_name.function`` with its body between solution markers."""
    module = importlib.import_module(module_name)
    source = textwrap.dedent(inspect.getsource(getattr(module, function)))
    tree = ast.parse(source)
    node = tree.body[0]
    if not isinstance(node, ast.FunctionDef):
        raise TypeError(f"{module_name}.{function} is not a plain function")
    body = node.body
    has_docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                     and isinstance(body[0].value.value, str))
    first = body[1] if has_docstring else body[0]
    lines = source.splitlines()
    head = lines[: first.lineno - 1]
    rest = lines[first.lineno - 1:]
    indent = " " * first.col_offset
    return "\n".join(head + [f"{indent}# BEGIN SOLUTION"] + rest + [f"{indent}# END SOLUTION"]) + "\n"

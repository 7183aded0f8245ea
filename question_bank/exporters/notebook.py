"""Notebook export: a Jupyter practice notebook with an answer cell and a check per question.

The first code cell defines ``check(number, answer)``. It is the source of
:mod:`question_bank.answers` and :mod:`question_bank.exporters._payload`
pasted in, so the notebook runs anywhere Python runs, without the grader
installed, and reads answers exactly as ``grader practice`` and the
self-check page do. The answer keys are stored obfuscated, so the notebook
file does not show them at a glance. Built with nbformat from cell text;
cell ids are fixed so the same seed gives the same bytes.
"""
from __future__ import annotations

import ast
import inspect
from types import ModuleType
from typing import Any

from question_bank import answers
from question_bank.exporters import Files, _payload, points_note, register_exporter, sheet_file_names, sheet_rtol
from question_bank.exporters._payload import encode_payload

_ANSWER_HINT = {
    "float": "a number, e.g. 0.0012 or 1.2e-3",
    "integer": "a whole number, e.g. 116534784",
    "shape": "a shape, e.g. (4, 8, 24)",
    "single_choice": 'one letter, e.g. "b"',
    "multiple_choice": 'every letter that applies, e.g. "a, c"',
    "true_false": "True or False",
    "ordering": 'the letters of the lines that belong, in order, e.g. "c, a, d, b"',
    "matching": 'one letter per item, in the items\' order, e.g. "c, a, f, d"',
}

_INTRO = """\
# Practice questions

1. Run the first code cell once: it loads the answer checker (nothing is sent anywhere).
2. For each question, replace the `...` in the answer cell with your answer and run it.
3. Run the `check(...)` cell below it: it says whether you are right, names the mistake
   if your answer matches a common one, and shows the worked solution.

Numbers may be written as `0.0012`, `1.2e-3` or `"1.2 x 10^-3"` and are accepted within {rtol:.1%};
shapes as `(4, 8, 24)` or `"4x8x24"`; letters as `"b"`; true/false as `True` or `False`; an order or a
matching as its letters in order, `"c, a, d, b"`."""

_CHECK_FUNCTION = '''

def _as_text(response):
    """Any answer as the text a student would type: lists of letters or sizes joined by commas."""
    if isinstance(response, (list, tuple)):
        return ", ".join(str(part) for part in response)
    return str(response)


def _show(markdown):
    try:
        from IPython.display import Markdown, display
        display(Markdown(markdown))
    except ImportError:
        print(markdown)


def check(number, response):
    """Check your answer to question `number`; show feedback and the worked solution."""
    key = decode_payload(_KEYS[number], f"q{number}")
    if response is ...:
        print(f"Replace the ... in the answer cell of question {number} with your answer, run it, "
              "then run this cell again.")
        return
    try:
        value = parse_response(_as_text(response), key)
    except ResponseError as exc:
        print(exc)
        return
    verdict = judge(key, value)
    if verdict.correct:
        head = "**Right.**"
    else:
        head = "**Not right" + (f": {verdict.misconception}" if verdict.misconception else "") + ".**"
    _show(f"{head} {verdict.feedback}\\n\\n**Worked solution.** {key['solution']}")
'''


@register_exporter("notebook", ".ipynb",
                   "Jupyter practice notebook with an answer cell and a check per question")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> one practice notebook per sheet (per student with a roster)."""
    names = sheet_file_names(bundle, ".ipynb")
    return {name: render_notebook(sheet) for name, sheet in zip(names, bundle["sheets"])}


def render_notebook(sheet: dict[str, Any]) -> str:
    """The notebook of one sheet as nbformat-4 JSON text."""
    import nbformat  # imported here: listing the formats should not load it

    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                   "language_info": {"name": "python"}}
    intro = _INTRO.format(rtol=sheet_rtol(sheet))
    intro = intro if sheet["student_id"] is None else intro + f"\n\nStudent: `{sheet['student_id']}`"
    cells = [_cell(nbformat.v4.new_markdown_cell(intro), "intro"),
             _cell(nbformat.v4.new_code_cell(checker_source(sheet["variants"])), "checker",
                   {"jupyter": {"source_hidden": True}, "tags": ["checker"]})]
    for number, variant in enumerate(sheet["variants"], start=1):
        cells += question_cells(number, variant)
    nb.cells = cells
    nbformat.validate(nb)
    return nbformat.writes(nb)


def question_cells(number: int, variant: dict[str, Any]) -> list[Any]:
    """The question text, its answer cell and its check cell."""
    import nbformat

    answer = variant["answer"]
    lines = [f"## {number}. {variant['title']}{points_note(variant)}", "", variant["stem"].strip(), ""]
    if answer["kind"] not in ("float", "integer", "shape"):
        lines += [f"- **({c['id']})** {c['text']}" for c in variant["choices"]] + [""]
    if answer["kind"] in ("ordering", "matching"):
        lines += [f"{k}. {slot['text']}" for k, slot in enumerate(answer["slots"], start=1)] + [""]
    hint = _ANSWER_HINT[answer["kind"]]
    if answer["unit"]:
        hint += f", in {answer['unit']}"
    if answer["log_space"]:
        hint += " (a natural log)"
    return [
        _cell(nbformat.v4.new_markdown_cell("\n".join(lines).rstrip()), f"q{number}-question"),
        _cell(nbformat.v4.new_code_cell(f"answer_{number} = ...  # {hint}"), f"q{number}-answer"),
        _cell(nbformat.v4.new_code_cell(f"check({number}, answer_{number})"), f"q{number}-check"),
    ]


def checker_source(variants: list[dict[str, Any]]) -> str:
    """The first code cell: the answer reader, the payload decoder, the keys and ``check``."""
    keys = {number: encode_payload(answers.answer_key(v), f"q{number}")
            for number, v in enumerate(variants, start=1)}
    key_lines = "\n".join(f"    {number}: {text!r}," for number, text in keys.items())
    return "\n".join([
        "# The answer checker of this notebook: run this cell once. It reads answers the way",
        "# `grader practice` does and never sends anything anywhere.",
        _module_body(answers),
        "",
        _module_body(_payload),
        "",
        "_KEYS = {",
        key_lines,
        "}",
        _CHECK_FUNCTION.rstrip(),
    ])


def _module_body(module: ModuleType) -> str:
    """A module's source without its docstring and ``from __future__`` line.

    Both may only stand at the top of a cell, and the notebook pastes two
    modules into one cell; Python >= 3.10 needs neither.
    """
    source = inspect.getsource(module)
    tree = ast.parse(source)
    skip = set()
    for node in tree.body:
        is_docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        if is_docstring or (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            skip.update(range(node.lineno, node.end_lineno + 1))
        else:
            break
    lines = source.splitlines()
    return "\n".join(line for number, line in enumerate(lines, start=1) if number not in skip).strip()


def _cell(cell: Any, cell_id: str, metadata: dict[str, Any] | None = None) -> Any:
    """Give a cell a fixed id (nbformat would draw a random one) and metadata."""
    cell["id"] = cell_id
    cell["metadata"] = metadata or {}
    return cell

"""Render an assignment into an otter-assign master notebook.

Cell text comes from jinja2 templates (``StrictUndefined``, so a missing
variable is a build error, not an empty string); the notebook is assembled
with nbformat, never by templating raw ``.ipynb`` JSON.
"""
from __future__ import annotations

import ast
import importlib.util
import json
from pathlib import Path
from typing import Any

import jinja2
import nbformat

from autograder.build.config import AssignmentSettings
from autograder.build.contracts import check_statements
from autograder.build.pins import pinned_requirements, python_version
from autograder.build.hidden_items import HiddenItem, collect_hidden_items
from autograder.build.public_diagnosis import fixed_input_checks, probes_of
from autograder.build.source import solution_cell_source
from autograder.build.wheel import runtime_wheel_name
from autograder.runtime.errors import BuildError
from autograder.runtime.otter_plugin import KERNELSPEC, SUPPORT_DIR
from autograder.resources import templates_dir
from solutions import corpus

#: Folder (inside the autograder zip's files/) holding the hidden suite and its runtime.



def _environment(folder: Path) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(folder), str(templates_dir())]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=False,
        autoescape=False,
    )


def _public_values_module(settings: AssignmentSettings) -> Any:
    """The assignment's ``public_values.py``, loaded, or ``None``."""
    path = settings.spec.folder / "public_values.py"
    if not path.is_file():
        return None
    spec = importlib.util.spec_from_file_location(f"_public_values_{settings.name.replace('-', '_')}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _question_checks(settings: AssignmentSettings, env: jinja2.Environment, context: dict,
                     public_values: Any) -> dict[str, list[str]]:
    """Each question's public checks: its template's, then one fixed-input check per probed function."""
    built = {f for q in settings.questions for f in q.functions}
    # A question the course left out ships nothing, not even as another check's helper probes.
    probes = {f: p for f, p in probes_of(public_values, settings.sizes, settings.public_seed).items() if f in built}
    catalogue = settings.spec.catalogue()
    checks = {}
    for q in settings.questions:
        where = f"{settings.spec.name} {q.name}"
        own = {**context, "question_title": q.title, "points": _format_points(q.points)}
        checks[q.name] = (split_test_functions(_render(env, f"public/{q.name}.py.j2", own, where), where)
                          + fixed_input_checks(q.name, probes, catalogue, q.functions))
    return checks


def split_test_functions(source: str, where: str) -> list[str]:
    """Split rendered public-test text into one source string per top-level function."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise BuildError(f"{where} does not render to valid Python: {exc}") from None
    lines = source.splitlines()
    chunks = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            raise BuildError(f"{where}: public tests may only contain test functions "
                             f"(line {node.lineno} is a {type(node).__name__})")
        chunks.append("\n".join(lines[node.lineno - 1: node.end_lineno]))
    return chunks


def _render(env: jinja2.Environment, name: str, context: dict, where: str) -> str:
    try:
        return env.get_template(name).render(**context).strip("\n")
    except jinja2.TemplateNotFound:
        raise BuildError(f"template {name} not found for {where}") from None
    except jinja2.UndefinedError as exc:
        raise BuildError(f"{where}: template {name} uses an undefined value ({exc.message})") from None


def _base_context(settings: AssignmentSettings, public_values: Any) -> dict:
    """What every template may use; ``v`` are the expected values ``public_values.py`` computes."""
    spec = settings.spec
    return {
        "name": spec.name,
        "course_title": settings.course_title,
        "assignment_title": spec.title,
        "due_date": settings.due_date,
        "sizes": settings.sizes,
        "public_seed": settings.public_seed,
        "support_dir": SUPPORT_DIR,
        "runtime_wheel": runtime_wheel_name(),
        "pinned_requirements": pinned_requirements(),
        "python_version": python_version(),
        "corpus_sentences": list(corpus.SENTENCES),
        "corpus_repeats": corpus.REPEATS,
        "v": {} if public_values is None else public_values.values(dict(settings.sizes), settings.public_seed),
    }


def public_sources(settings: AssignmentSettings) -> tuple[str, dict[str, list[str]]]:
    """The notebook's setup cell and each question's public checks, as the student gets them."""
    spec = settings.spec
    env = _environment(spec.folder)
    public_values = _public_values_module(settings)
    base = _base_context(settings, public_values)
    return _render(env, "cells/setup.py.j2", base, spec.name), _question_checks(settings, env, base, public_values)


def render_master(settings: AssignmentSettings) -> tuple[nbformat.NotebookNode, list[HiddenItem]]:
    """The master notebook for ``settings`` and the hidden items it runs, in order."""
    spec = settings.spec
    env = _environment(spec.folder)
    public_values = _public_values_module(settings)
    base = _base_context(settings, public_values)
    raw, md, code = nbformat.v4.new_raw_cell, nbformat.v4.new_markdown_cell, nbformat.v4.new_code_cell
    cells = [
        raw(_render(env, "notebook/assignment_config.yaml.j2", base, spec.name)),
        md(_render(env, spec.intro, base, spec.name)),
        code(_render(env, "cells/setup.py.j2", base, spec.name)),
    ]
    all_items: list[HiddenItem] = []
    hidden = collect_hidden_items(spec.folder, [(q.name, q.points) for q in settings.questions])
    all_public = _question_checks(settings, env, base, public_values)
    for q in settings.questions:
        where = f"{spec.name} {q.name}"
        context = {**base, "question_title": q.title, "points": _format_points(q.points),
                   "contract": dict(q.contracts)}
        public = all_public[q.name]
        items = hidden[q.name]
        text = _render(env, f"questions/{q.name}.md.j2", context, where)
        check_statements(q, text, items, where)
        all_items += items
        points = [0] * len(public) + [item.points for item in items]
        cells.append(raw(_render(env, "notebook/question_config.yaml.j2",
                                 {"name": q.name, "points": points}, where)))
        cells.append(md(text))
        cells.append(raw("# BEGIN SOLUTION"))
        for function in q.functions:
            cells.append(code(solution_cell_source(spec.solutions_module, function)))
        cells.append(raw("# END SOLUTION"))
        cells.append(raw("# BEGIN TESTS"))
        cells += [code(test) for test in public]
        for index, item in enumerate(items, start=1):
            cells.append(code(_render(env, "notebook/hidden_test_cell.py.j2", {
                "index": index, "question": q.name, "test_name": item.test_name,
                "support_dir": SUPPORT_DIR}, where)))
        cells.append(raw("# END TESTS"))
        cells.append(raw("# END QUESTION"))
        after = spec.folder / "cells" / f"after_{q.name}.py.j2"
        if after.is_file():
            demo = code(_render(env, f"cells/after_{q.name}.py.j2", context, where))
            demo.metadata["lmhead"] = {"demo": True}
            cells.append(demo)
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = dict(KERNELSPEC)
    notebook.metadata["language_info"] = {"name": "python"}
    return notebook, all_items


def _format_points(points: float) -> str:
    return f"{points:g}"


def demo_cells(master: nbformat.NotebookNode) -> list[str]:
    """The sources of the lesson-workflow cells the build added after questions (``cells/after_*``)."""
    return [c.source for c in master.cells
            if c.cell_type == "code" and c.metadata.get("lmhead", {}).get("demo")]


def hidden_config(settings: AssignmentSettings, items: list[HiddenItem], secret: str,
                  demos: list[str] = ()) -> str:
    """The JSON the graders read: the secret, questions, functions and each hidden item's points.

    ``secret`` (made by the build with ``secrets``) is mixed with each
    submission to draw its hidden inputs; it lives only in the autograder zip.
    ``demos`` are the lesson-workflow cells, recorded by hash so grading can leave them out
    where nothing depends on them (``grading.demo_cells``).
    """
    from autograder.runtime.grading.demo_cells import demo_digest
    return json.dumps({
        "demo_cells": sorted({demo_digest(source) for source in demos}),
        "assignment": settings.name,
        "secret": secret,
        "solutions_module": settings.spec.solutions_module,
        "questions": [q.name for q in settings.questions],
        "functions": {q.name: list(q.functions) for q in settings.questions},
        # Functions of questions the course config switched off: their catalogued mistakes
        # are left out, while a mistake naming any other function is still an error.
        "left_out_functions": sorted(set(settings.spec.functions)
                                     - {f for q in settings.questions for f in q.functions}),
        "items": {q.name: [[i.test_name, i.points] for i in items if i.question == q.name]
                  for q in settings.questions},
    }, indent=2, sort_keys=True) + "\n"

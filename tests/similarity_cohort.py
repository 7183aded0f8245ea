"""A class of independent submissions and disguised copies, for measuring ``autograder.similarity``.

Independent work comes from code written separately:

- every catalogued mistake (``assignments/*/mistakes.py``) and every
  alternative correct implementation (``tests/alternatives.py``) is one
  student's own version of the functions it implements, and so is each
  hand-written submission of the honest corpus (``tests/test_honest.py``);
- each student gets one to three of those, for different functions, and
  writes every other function the obvious way: the reference solution (most
  students, so the one-liners like ``hidden @ W_head + b_head`` are shared
  by most of the class), the lesson's own code where the lesson prints one
  (a few students), or leaves it as the starter stub;
- a few students write only the obvious code;
- any ``.py`` file in a folder listed in ``$SIMILARITY_EXTRA_COHORT``
  (``os.pathsep``-separated, one folder per assignment name inside it, e.g.
  ``blind/lm-head/*.py``) is one more independent student's code.

No piece of a student's own work is given to two students: of the catalogued
mistakes built on one catalogue helper, one is used, and of catalogue entries
whose code is a near-copy of another's (most of their fingerprints shared), the
first. Two students may still
share code: the obvious code (the references, also where a catalogued mistake
reuses a reference for a step it gets right) and the lesson's code.

Copies are made from independent students with their own work in at least two
functions, enough of it that some remains whichever function is rewritten (a
copy of what is all the obvious code is no evidence of anything, see
``copyable``), disguised the way students disguise copies, all at once: local
names, parameters and helpers renamed; functions reordered; comments and
blank lines changed; list-building loops written as comprehensions and
comprehensions as loops; dead code inserted; and one of the copied student's
own functions rewritten the obvious way.
"""
from __future__ import annotations

import ast
import inspect
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable

import numpy as np

import solutions
from autograder.build.spec import load_spec
from autograder.similarity.base import starter_cells
from autograder.similarity.compare import document
from tests.alternatives import ALTERNATIVES, _seed_softmax, cross_entropy_seed_style
from tests.test_honest import HELPERS, STDLIB

ASSIGNMENTS = ("lm-head", "perplexity-and-parameters")
#: The seed of every random choice the cohort makes.
COHORT_SEED = 20261219
#: Independent students who write only the obvious code, per assignment.
OBVIOUS_ONLY = 6
#: Disguised copies planted per assignment.
COPIES = 8
#: Lesson code students copy from the course text (legitimately shared), by function.
LESSON = {"softmax": _seed_softmax, "cross_entropy_loss": cross_entropy_seed_style}
#: Own code a copied student keeps after one function is rewritten (see ``copyable``).
MIN_KEPT_TOKENS = 40
#: Environment variable naming extra folders of independent ``.py`` submissions.
EXTRA_ENV = "SIMILARITY_EXTRA_COHORT"


# ---------------------------------------------------------------- sources

def _defined_source(fn: Callable, name: str) -> str:
    """``fn``'s own source (decorators left out) defining ``name``."""
    source = textwrap.dedent(inspect.getsource(fn))
    node = ast.parse(source).body[0]
    lines = source.splitlines()[node.lineno - 1:]
    text = "\n".join(lines) + "\n"
    return text.replace(f"def {fn.__name__}(", f"def {name}(", 1)


def _used_names(fn: Callable) -> list[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    return sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)})


def with_helpers(fn: Callable, name: str, references: bool = True) -> str:
    """``fn`` defining ``name``, after every module-level function it uses, under the names it uses them by.

    A helper from the catalogue or the alternatives comes with its source; a
    reference function a catalogue imports under another name
    (``_reference_loss``) comes as the reference's code under that name, as a
    student who wrote the correct step first would have it (left out with
    ``references=False``: what remains is the student's own code).
    """
    module = inspect.getmodule(fn)
    parts: list[str] = []
    seen: set[str] = {fn.__name__}

    def visit(f: Callable, home: ModuleType | None) -> None:
        for used in _used_names(f):
            target = getattr(home, used, None)
            if used in seen or not inspect.isfunction(target) or target.__module__ in ("builtins",):
                continue
            from_reference = target.__module__.startswith("solutions")
            if not (target.__module__ == getattr(home, "__name__", None) or (references and from_reference)):
                continue
            seen.add(used)
            visit(target, inspect.getmodule(target))
            parts.append(_defined_source(target, used))

    visit(fn, module)
    parts.append(_defined_source(fn, name))
    return "\n\n".join(parts)


def reference_source(function: str) -> str:
    return with_helpers(getattr(solutions, function), function)


@dataclass(frozen=True)
class Work:
    """One student's code for one or more functions, the part of it that is their own
    (without the reference steps it reuses), and the catalogue helpers it is built on."""

    label: str
    functions: dict[str, str]
    helpers: frozenset[str] = frozenset()
    own: dict[str, str] | None = None


def _catalogue_helpers(fn: Callable) -> frozenset[str]:
    """The catalogue's own module-level helpers ``fn`` uses (not the references it imports)."""
    module = inspect.getmodule(fn)
    return frozenset(n for n in _used_names(fn) if inspect.isfunction(getattr(module, n, None))
                     and getattr(module, n).__module__ == module.__name__ and n != fn.__name__)


def own_work(assignment: str) -> list[Work]:
    """Every independent piece of own work available for ``assignment``, labelled by where it comes from."""
    functions = set(load_spec(assignment).functions)
    works: list[Work] = []
    for label, group in ALTERNATIVES.items():
        if label == "seed-style-loss":        # the lesson's code: shared, see LESSON
            continue
        mine = {f: with_helpers(impl, f) for f, impl in group.items() if f in functions}
        if mine:
            works.append(Work(f"alternative-{label}", mine))
    for slug, m in sorted(load_spec(assignment).catalogue().mistakes.items()):
        works.append(Work(f"mistake-{slug}", {m.function: with_helpers(m.implementation, m.function)},
                          _catalogue_helpers(m.implementation),
                          {m.function: with_helpers(m.implementation, m.function, references=False)}))
    if assignment == "lm-head":
        works.append(Work("honest-extra-helpers", {"cross_entropy_loss": HELPERS}))
        works.append(Work("honest-extra-stdlib-imports", dict(STDLIB)))
        works.append(Work("honest-prints-while-called", {"softmax": reference_source("softmax").replace(
            "    shifted = x", "    print('softmax called on', x.shape)\n    shifted = x")}))
        works.append(Work("honest-syntax-error-in-softmax", {"softmax": (
            "def softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True\n")}))
    return works


# ---------------------------------------------------------------- students

@dataclass
class Student:
    """One submission of the cohort: its code cells, and which functions are its own work."""

    name: str
    cells: list[str]
    own: dict[str, str] = field(default_factory=dict)        # function -> its code
    own_part: dict[str, str] = field(default_factory=dict)   # function -> what of it is the student's own
    copy_of: str | None = None


def _function_cell(cells: tuple[str, ...], function: str) -> int:
    return next(i for i, c in enumerate(cells) if c.startswith(f"def {function}("))


def notebook_cells(assignment: str, code: dict[str, str]) -> list[str]:
    """The starter notebook's code cells with each function's stub replaced by ``code[function]``."""
    cells = list(starter_cells(assignment))
    for function, source in code.items():
        cells[_function_cell(starter_cells(assignment), function)] = source
    return cells


def independent_students(assignment: str, rng: np.random.Generator) -> list[Student]:
    """The independent students of ``assignment`` (see the module docstring)."""
    functions = load_spec(assignment).functions
    works = own_work(assignment)
    order = rng.permutation(len(works))
    remaining = [works[i] for i in order]
    # A catalogue helper several mistakes are built on is one author's code: it
    # goes to one student, and the other mistakes built on it are left out.
    given: set[str] = set()
    for work in list(remaining):
        if work.helpers & given:
            remaining.remove(work)
        given |= work.helpers
    # Two catalogue entries one author wrote for neighbouring mistakes can be near-copies of
    # each other (a line apart): that is one author's code too, so only the first stays.
    kept: list[tuple[Work, set[int]]] = []
    for work in list(remaining):
        prints = {f.hash for f in document(work.label, list((work.own or work.functions).values())).fingerprints}
        if prints and any(len(prints & other) >= 0.8 * min(len(prints), len(other)) for _, other in kept):
            remaining.remove(work)
        else:
            kept.append((work, prints))
    students: list[Student] = []
    while remaining:
        wanted = int(rng.integers(1, 4))
        taken: list[Work] = []
        for work in list(remaining):
            if len(taken) == wanted:
                break
            if not any(set(work.functions) & set(t.functions) for t in taken):
                taken.append(work)
                remaining.remove(work)
        own = {f: s for w in taken for f, s in w.functions.items()}
        own_part = {f: s for w in taken for f, s in (w.own or w.functions).items()}
        students.append(Student("+".join(w.label for w in taken), [], own, own_part))
    students += [Student(f"obvious-only-{i + 1}", []) for i in range(OBVIOUS_ONLY)]
    for student in students:
        code = dict(student.own)
        for function in functions:
            if function in code:
                continue
            draw = rng.random()
            if function in LESSON and draw < 0.2:
                code[function] = with_helpers(LESSON[function], function)
            elif draw < 0.9 or student.name.startswith("obvious-only"):
                code[function] = reference_source(function)
            # else: left as the starter stub
        student.cells = notebook_cells(assignment, code)
    return students + extra_students(assignment)


def extra_students(assignment: str) -> list[Student]:
    """Independent ``.py`` submissions from the folders in ``$SIMILARITY_EXTRA_COHORT``."""
    found = []
    for root in filter(None, os.environ.get(EXTRA_ENV, "").split(os.pathsep)):
        for path in sorted((Path(root) / assignment).glob("*.py")):
            found.append(Student(f"extra-{Path(root).name}-{path.stem}", [path.read_text(encoding="utf-8")]))
    return found


# ---------------------------------------------------------------- disguises

_COMMENTS = ["# compute the result", "# TODO tidy up", "# works now", "# step by step",
             "# from my notes", "# check shapes here", "# helper"]
_DEAD = ["_unused = None", "if False:\n    print('debug')", "checked = len([]) == 0",
         "for _ in range(0):\n    pass", "debug_mode = False"]


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]):
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node


def _loop_of(target: ast.expr, comp: ast.ListComp) -> list[ast.stmt]:
    """``target = [e for v in it]`` as ``target = []`` and a loop appending ``e``."""
    (gen,) = comp.generators
    append = ast.Expr(ast.Call(ast.Attribute(ast.Name(target.id, ast.Load()), "append", ast.Load()), [comp.elt], []))
    body: list[ast.stmt] = [append]
    for cond in reversed(gen.ifs):
        body = [ast.If(cond, body, [])]
    return [ast.Assign([target], ast.List([], ast.Load())), ast.For(gen.target, gen.iter, body, [])]


def _swap_loops(body: list[ast.stmt]) -> list[ast.stmt]:
    """List-building loops as comprehensions, and list comprehensions as loops, in ``body`` and below."""
    out: list[ast.stmt] = []
    i = 0
    while i < len(body):
        stmt = body[i]
        nxt = body[i + 1] if i + 1 < len(body) else None
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.List) and not stmt.value.elts and isinstance(nxt, ast.For)
                and len(nxt.body) == 1 and isinstance(nxt.body[0], ast.Expr) and isinstance(nxt.body[0].value, ast.Call)
                and isinstance(nxt.body[0].value.func, ast.Attribute) and nxt.body[0].value.func.attr == "append"
                and isinstance(nxt.body[0].value.func.value, ast.Name)
                and nxt.body[0].value.func.value.id == stmt.targets[0].id and not nxt.orelse):
            comp = ast.ListComp(nxt.body[0].value.args[0], [ast.comprehension(nxt.target, nxt.iter, [], 0)])
            out.append(ast.Assign(stmt.targets, comp))
            i += 2
            continue
        if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and isinstance(stmt.value, ast.ListComp) and len(stmt.value.generators) == 1):
            out += _loop_of(stmt.targets[0], stmt.value)
            i += 1
            continue
        for attr in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, attr, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(stmt, attr, _swap_loops(inner))
        out.append(stmt)
        i += 1
    return out


def _insert_dead_code(tree: ast.Module, rng: np.random.Generator) -> None:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            dead = ast.parse(_DEAD[int(rng.integers(len(_DEAD)))]).body
            at = int(rng.integers(1, len(node.body) + 1)) if len(node.body) > 1 else 0
            node.body[at:at] = dead


def _recomment(source: str, rng: np.random.Generator) -> str:
    """New comments and blank lines, at random places between statements."""
    lines = []
    for line in source.splitlines():
        stripped = line.lstrip()
        indent = line[: len(line) - len(stripped)]
        if stripped and not stripped.startswith(("elif", "else", "except", "finally", ")", "]")) and rng.random() < 0.25:
            lines.append(indent + _COMMENTS[int(rng.integers(len(_COMMENTS)))])
        lines.append(line)
        if rng.random() < 0.15:
            lines.append("")
    return "\n".join(lines) + "\n"


def disguise(source: Student, assignment: str, rng: np.random.Generator, name: str) -> Student:
    """A copy of ``source`` with every disguise of the module docstring applied."""
    functions = load_spec(assignment).functions
    code = {f: source.cells[_function_cell(starter_cells(assignment), f)] for f in functions}
    rewritten = sorted(source.own)[int(rng.integers(len(source.own)))]
    code[rewritten] = reference_source(rewritten)
    # Names the student chose: every name the code binds but the assignment's own
    # names (the required functions and what the starter cells define).
    from autograder.similarity.normalize import bound_names
    fixed = set(functions) | set(bound_names(list(starter_cells(assignment))))
    chosen = sorted(bound_names(list(code.values())) - fixed)
    renames = {n: f"{n.strip('_')}_{['v', 'val', 'tmp', 'my', 'x'][int(rng.integers(5))]}{i}"
               for i, n in enumerate(chosen)}
    disguised: dict[str, str] = {}
    for function, text in code.items():
        try:
            tree = ast.parse(text)
        except SyntaxError:
            disguised[function] = text       # it cannot be rewritten; copied as it is
            continue
        tree = _Rename(renames).visit(tree)
        tree.body = _swap_loops(tree.body)
        _insert_dead_code(tree, rng)
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        others = [n for n in tree.body if not isinstance(n, ast.FunctionDef)]
        tree.body = others + [defs[i] for i in rng.permutation(len(defs))]
        disguised[function] = _recomment(ast.unparse(ast.fix_missing_locations(tree)), rng)
    cells = list(starter_cells(assignment))
    slots = sorted(_function_cell(starter_cells(assignment), f) for f in functions)
    order = [functions[i] for i in rng.permutation(len(functions))]      # functions reordered
    for slot, function in zip(slots, order):
        cells[slot] = disguised[function]
    return Student(name, cells, {}, copy_of=source.name)


@dataclass(frozen=True)
class Cohort:
    """One assignment's class: independent students, then the planted copies."""

    assignment: str
    independent: list[Student]
    copies: list[Student]

    @property
    def students(self) -> list[Student]:
        return self.independent + self.copies

    @property
    def planted(self) -> set[frozenset[str]]:
        return {frozenset((c.name, c.copy_of)) for c in self.copies}


def lesson_cells() -> list[str]:
    """The lesson's printed code, which students were shown: base code, as an instructor passes it."""
    return [with_helpers(fn, name) for name, fn in LESSON.items()]


def course_code(assignment: str) -> list[str]:
    """Code the course gave students besides the starter notebook, passed as base code as an
    instructor would: the lesson's printed code and the released solutions of the other assignment."""
    mine = set(load_spec(assignment).functions)
    released = [reference_source(f) for a in ASSIGNMENTS for f in load_spec(a).functions if f not in mine]
    return lesson_cells() + released


def _own_tokens(code: str) -> int:
    from autograder.similarity.normalize import program_tokens
    return len(program_tokens([code]))


def copyable(student: Student) -> bool:
    """Whether a copy of ``student`` can be told from independent work at all.

    A copy is only recognisable by the unusual code it keeps. Whichever of the
    student's own functions the copy rewrites, at least ``MIN_KEPT_TOKENS``
    normalised tokens of their own code must remain (about three lines).
    """
    sizes = sorted(_own_tokens(code) for code in student.own_part.values())
    return len(sizes) >= 2 and sum(sizes[:-1]) >= MIN_KEPT_TOKENS


def cohort(assignment: str, seed: int = COHORT_SEED, copies: int = COPIES) -> Cohort:
    """The cohort of ``assignment``: independent students and ``copies`` disguised copies."""
    rng = np.random.default_rng([seed, ASSIGNMENTS.index(assignment)])
    independent = independent_students(assignment, rng)
    eligible = [s for s in independent if copyable(s)]
    chosen = [eligible[i] for i in sorted(rng.choice(len(eligible), size=min(copies, len(eligible)), replace=False))]
    planted = [disguise(s, assignment, rng, f"copy-{i + 1}-of-{s.name}") for i, s in enumerate(chosen)]
    return Cohort(assignment, independent, planted)

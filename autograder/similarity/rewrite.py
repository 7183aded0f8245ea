"""Rewrites of a statement list that change what code looks like but not what it does.

Copies are disguised by adding code that does nothing and by writing one
construct as another. Before a cell is printed and tokenized, every block of
statements (a module, a function body, a loop body...) is rewritten so that
such variants print the same:

- **code that cannot run or has no effect is dropped**: statements after a
  ``return``, ``raise``, ``break`` or ``continue`` in the same block; an
  ``if`` whose test is a constant (the branch taken stays); a ``while`` on a
  false constant and a ``for`` over an empty literal or ``range(0)`` (their
  ``else`` stays); bare constants used as statements (``...`` excepted: it is
  the starter stub); ``pass`` beside other statements;
- **assignments to a name the program never reads are dropped** (a variable
  never used is dead code); when the assigned value calls anything but a
  built-in, the call stays as a statement, since it may do something;
- **a list or dict built by a loop becomes a comprehension**:
  ``out = []`` followed by ``for v in it: [if c:] out.append(e)`` (any
  nesting of ``for`` and ``if``) is written ``out = [e for v in it if c]``,
  and ``d = {}`` with ``for k in it: d[k] = v`` becomes
  ``d = {k: v for k in it}``. The comprehension is the canonical form, so a
  loop and the comprehension it became match.
"""
from __future__ import annotations

import ast
import builtins

_BUILTINS = frozenset(dir(builtins))
_JUMPS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def read_names(trees: list[ast.AST]) -> frozenset[str]:
    """Every name the code reads (``Load``) anywhere, or declares ``global``/``nonlocal``."""
    names: set[str] = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                names.add(node.id)
            elif isinstance(node, (ast.Global, ast.Nonlocal)):
                names.update(node.names)
    return frozenset(names)


def _constant_truth(test: ast.expr) -> bool | None:
    if isinstance(test, ast.Constant):
        try:
            return bool(test.value)
        except Exception:       # a constant always has a truth value; be safe all the same
            return None
    return None


def _empty_iterable(node: ast.expr) -> bool:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and not node.elts:
        return True
    if isinstance(node, ast.Dict) and not node.keys:
        return True
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
            and not node.keywords and node.args and all(isinstance(a, ast.Constant) for a in node.args)):
        try:
            return len(range(*[a.value for a in node.args])) == 0
        except (TypeError, ValueError):
            return False
    return False


class Rewriter:
    """Rewrites statement lists (see the module docstring) for a program reading ``read`` and binding ``bound``."""

    def __init__(self, read: frozenset[str], bound: frozenset[str]):
        self.read = read
        self.bound = bound

    # ------------------------------------------------------------ effects

    def _pure(self, value: ast.expr) -> bool:
        """Whether evaluating ``value`` can do nothing but compute: no call but to built-ins, no yield."""
        for node in ast.walk(value):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr)):
                return False
            if isinstance(node, ast.Call) and not (isinstance(node.func, ast.Name) and node.func.id in _BUILTINS
                                                   and node.func.id not in self.bound
                                                   and node.func.id not in ("print", "exec", "eval", "open",
                                                                            "input", "setattr", "delattr")):
                return False
        return True

    def _dead_store(self, stmt: ast.stmt) -> list[ast.stmt] | None:
        """What stays of an assignment to names never read (``None``: it is not one)."""
        if isinstance(stmt, ast.Assign):
            targets, value = stmt.targets, stmt.value
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign)) and stmt.value is not None:
            targets, value = [stmt.target], stmt.value
        else:
            return None
        if not all(isinstance(t, ast.Name) and t.id not in self.read for t in targets):
            return None
        if self._pure(value):
            return []
        return [ast.copy_location(ast.Expr(value), stmt)]

    # ------------------------------------------------------------ loops

    @staticmethod
    def _built_by_loop(first: ast.stmt, loop: ast.stmt) -> ast.stmt | None:
        """``first`` and ``loop`` as one comprehension assignment, or ``None``."""
        if not (isinstance(first, ast.Assign) and len(first.targets) == 1 and isinstance(first.targets[0], ast.Name)):
            return None
        name = first.targets[0].id
        value = first.value
        empty_call = (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and not value.args
                      and not value.keywords)
        if isinstance(value, ast.List) and not value.elts or empty_call and value.func.id == "list":
            kind = "list"
        elif isinstance(value, ast.Dict) and not value.keys or empty_call and value.func.id == "dict":
            kind = "dict"
        else:
            return None
        if not isinstance(loop, ast.For):
            return None
        generators: list[ast.comprehension] = []
        node: ast.stmt = loop
        while True:
            if isinstance(node, ast.For) and not node.orelse:
                generators.append(ast.comprehension(node.target, node.iter, [], 0))
            elif isinstance(node, ast.If) and not node.orelse and generators:
                generators[-1].ifs.append(node.test)
            else:
                break
            if len(node.body) != 1:
                return None
            node = node.body[0]
        built: ast.expr | None = None
        if (kind == "list" and isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
                and isinstance(node.value.func, ast.Attribute) and node.value.func.attr == "append"
                and isinstance(node.value.func.value, ast.Name) and node.value.func.value.id == name
                and len(node.value.args) == 1 and not node.value.keywords
                and not isinstance(node.value.args[0], ast.Starred)):
            built = ast.ListComp(node.value.args[0], generators)
        elif (kind == "dict" and isinstance(node, ast.Assign) and len(node.targets) == 1
              and isinstance(node.targets[0], ast.Subscript) and isinstance(node.targets[0].value, ast.Name)
              and node.targets[0].value.id == name and not isinstance(node.targets[0].slice, ast.Slice)):
            built = ast.DictComp(node.targets[0].slice, node.value, generators)
        if built is None:
            return None
        # The collection being built must not be read while it is built (``out.append(out[-1] + x)``).
        parts = [built.elt] if isinstance(built, ast.ListComp) else [built.key, built.value]
        parts += [g.iter for g in generators] + [c for g in generators for c in g.ifs]
        if any(isinstance(sub, ast.Name) and sub.id == name for part in parts for sub in ast.walk(part)):
            return None
        return ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], built), first)

    # ------------------------------------------------------------ blocks

    def body(self, statements: list[ast.stmt]) -> list[ast.stmt]:
        """``statements`` rewritten (never empty: an empty block is ``pass``)."""
        queue = list(statements)
        out: list[ast.stmt] = []
        while queue:
            stmt = queue.pop(0)
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and stmt.value.value is not Ellipsis:
                continue                                    # docstrings and other bare constants
            if isinstance(stmt, ast.Pass):
                continue                                    # put back below if nothing else is left
            if isinstance(stmt, (ast.If, ast.While)) and _constant_truth(stmt.test) is not None:
                taken = _constant_truth(stmt.test)
                if isinstance(stmt, ast.If):
                    queue[:0] = stmt.body if taken else stmt.orelse
                    continue
                if not taken:
                    queue[:0] = stmt.orelse
                    continue
            if isinstance(stmt, ast.For) and _empty_iterable(stmt.iter):
                queue[:0] = stmt.orelse
                continue
            dead = self._dead_store(stmt)
            if dead is not None:
                out += dead
                continue
            merged = self._built_by_loop(out[-1], stmt) if out else None
            if merged is not None:
                out[-1] = merged
                continue
            out.append(stmt)
            if isinstance(stmt, _JUMPS):
                break                                       # the rest of the block never runs
        return out or [ast.Pass()]


#: The fields that hold statements, or the handlers and cases that hold them: statements nest only there (an
#: expression, nine nodes in ten, never holds one), so only these are walked.
_NESTING = ("body", "orelse", "finalbody", "handlers", "cases")


def _blocks(node: ast.AST, rewriter: Rewriter) -> None:
    """Rewrite every block under ``node``, innermost first (a loop body is simplified before the loop is)."""
    for attr in _NESTING:
        children = getattr(node, attr, None)
        if type(children) is list:
            for child in children:
                if isinstance(child, ast.AST):
                    _blocks(child, rewriter)
    for attr in ("body", "orelse", "finalbody"):
        value = getattr(node, attr, None)
        if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
            setattr(node, attr, rewriter.body(value))


def rewritten(tree: ast.Module, read: frozenset[str], bound: frozenset[str]) -> ast.Module:
    """``tree`` with every block rewritten (see the module docstring), in place."""
    _blocks(tree, Rewriter(read, bound))
    return tree

"""A submission's code as a stream of normalised tokens, each knowing where it came from.

Copying is hidden by changing what a program looks like, not what it says:
names, comments, docstrings, blank lines, line breaks, parentheses, type
annotations, trailing commas. A cell that parses is first printed back from
its syntax tree (``ast.unparse``), which settles every question of layout the
same way for everyone, and then read with Python's own tokenizer; a cell that
does not parse is tokenized as it stands. Either way

- comments, line continuations and blank lines are dropped;
- every bare string statement (docstrings included) is dropped;
- type annotations (with their ``:`` or ``->``) are dropped;
- a trailing comma before a closing bracket is dropped;
- every name the submission itself binds (variables, parameters, its own
  functions and classes, loop and comprehension variables) becomes ``ID``;
  names it does not bind (``np``, ``range``, ``float``), attribute names
  (``.sum``) and keyword names in calls (``axis=``) are kept, since they
  say what the code does and renaming them is not how copies are hidden;
- string and number literals are written in one canonical form.

A cell that parses is also rewritten before it is printed (``rewrite``):
code that cannot run or has no effect (statements after a ``return``,
``if False:`` blocks, assignments to names the program never reads) is
dropped, and a loop that builds a list or dict becomes the comprehension
that builds it.

Each token keeps its cell and line, so a match can be shown in the code the
student wrote.
"""
from __future__ import annotations

import ast
import io
import re
import sys
from collections import deque
import tokenize
from functools import lru_cache
from typing import NamedTuple

from autograder.similarity.printed import literal as _literal, printed_parts, read_printed, statements_in_text_order
from autograder.similarity.rewrite import read_names, rewritten

#: What every student-bound name becomes.
RENAMED = "ID"
_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}
_CLOSING = {")", "]", "}"}
_STRUCTURE = {tokenize.NEWLINE: "NEWLINE", tokenize.INDENT: "INDENT", tokenize.DEDENT: "DEDENT"}
_STRUCTURE_TEXTS = frozenset(_STRUCTURE.values())
_Span = tuple[tuple[int, int], tuple[int, int]]


class Token(NamedTuple):
    """One normalised token and where it stands: the cell (0-based) and line (1-based) of its start,
    and the top-level statement (0-based, within the cell) it belongs to.

    A named tuple, not a dataclass: a class of 1,000 submissions makes a million and a half of them,
    and a frozen dataclass takes four times as long to build."""

    text: str
    cell: int
    line: int
    unit: int = 0     # which top-level statement of the cell (0 for every token of a cell that does not parse)


def bound_names(cells: tuple[str, ...] | list[str]) -> frozenset[str]:
    """Names the code binds itself, over every cell that parses (imports excepted: they name libraries)."""
    names: set[str] = set()
    for source in cells:
        tree = _parse(source)
        if tree is not None:
            names |= _bound_in(tree)
    return frozenset(names)


def _bound_in(tree: ast.AST) -> set[str]:
    """Names one parsed cell binds (see :func:`bound_names`)."""
    return _names_in(tree)[0]


def _names_in(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Names one parsed cell binds, and names it reads (as ``rewrite.read_names``), in one walk of the tree."""
    bound: set[str] = set()
    read: set[str] = set()
    for node in ast.walk(tree):
        kind = type(node)
        if kind is ast.Name:
            (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif kind is ast.arg:
            bound.add(node.arg)
        elif kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            bound.add(node.name)
        elif kind is ast.ExceptHandler and node.name:
            bound.add(node.name)
        elif kind in (ast.Global, ast.Nonlocal):
            bound.update(node.names)
            read.update(node.names)
    return bound, read


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _spans(tree: ast.Module | None) -> tuple[list[_Span], list[_Span], set[tuple[int, int]]]:
    """Bare strings and annotations to drop, and the positions of keyword names in calls."""
    strings: list[_Span] = []
    annotations: list[_Span] = []
    keywords: set[tuple[int, int]] = set()
    if tree is None:
        return strings, annotations, keywords

    def span(node: ast.AST | None, into: list[_Span]) -> None:
        if node is not None and getattr(node, "end_lineno", None) is not None:
            into.append(((node.lineno, node.col_offset), (node.end_lineno, node.end_col_offset)))

    for node in ast.walk(tree):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            span(node, strings)
        elif isinstance(node, ast.arg):
            span(node.annotation, annotations)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            span(node.returns, annotations)
        elif isinstance(node, ast.AnnAssign):
            span(node.annotation, annotations)
        elif isinstance(node, ast.keyword) and node.arg is not None:
            keywords.add((node.lineno, node.col_offset))
    return strings, annotations, keywords


def _inside(position: tuple[int, int], spans: list[_Span]) -> bool:
    return any(start <= position < end for start, end in spans)


def _raw_tokens(source: str) -> list[tokenize.TokenInfo]:
    """Tokens of ``source``; code that stops tokenizing keeps what came before the error."""
    found: list[tokenize.TokenInfo] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            found.append(tok)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return found


def cell_tokens(source: str, cell: int, bound: frozenset[str], tree: ast.Module | None = None) -> list[Token]:
    """Normalised tokens of one cell (see the module docstring); ``tree`` is ``source`` parsed, if at hand."""
    return [Token(text, cell, line) for text, line in _token_parts(source, bound, tree)]


def _token_parts(source: str, bound: frozenset[str], tree: ast.Module | None = None,
                 printed: bool = False) -> list[tuple[str, int]]:
    """(text, line) of each normalised token of ``source`` (see :func:`cell_tokens`).

    ``printed`` says ``source`` was printed by :func:`canonical_tokens`, which
    dropped every bare string and annotation before printing, and renames
    nothing (``bound`` empty): there is nothing in its tree to look for, and
    the walk that looks costs as much as tokenizing."""
    strings, annotations, keywords = ([], [], set()) if printed else _spans(tree if tree is not None else _parse(source))
    raw = [t for t in _raw_tokens(source) if t.type not in _DROPPED]
    if strings or annotations:
        kept: list[tokenize.TokenInfo] = []
        for index, tok in enumerate(raw):
            if _inside(tok.start, strings) or _inside(tok.start, annotations):
                continue
            following = raw[index + 1] if index + 1 < len(raw) else None
            if tok.string in (":", "->") and following is not None and _inside(following.start, annotations):
                continue    # the annotation's own ``:`` or ``->``
            kept.append(tok)
    else:
        kept = raw
    out: list[tuple[str, int]] = []
    structure = False           # the last token kept is a NEWLINE, INDENT or DEDENT (or none is kept yet)
    intern = sys.intern         # one string per distinct text in a class's million tokens
    for index, tok in enumerate(kept):
        text = tok.string
        kind = tok.type
        if kind == tokenize.OP:
            if text == "," and index + 1 < len(kept) and kept[index + 1].string in _CLOSING:
                continue
        elif kind == tokenize.NAME:
            if text in bound and (not index or kept[index - 1].string != ".") and tok.start not in keywords:
                text = RENAMED
        elif kind == tokenize.STRING or kind == tokenize.NUMBER:
            text = _literal(text)
        elif kind in _STRUCTURE:
            text = _STRUCTURE[kind]
            if text == "NEWLINE" and (not out or structure):
                continue    # the end of a statement that was dropped (a docstring)
            out.append((text, tok.start[0]))
            structure = True
            continue
        out.append((intern(text), tok.start[0]))
        structure = text in _STRUCTURE_TEXTS      # a name spelt NEWLINE counts as one, as it always has
    return out


class _Canonical(ast.NodeTransformer):
    """Drops annotations, and renames every bound name to ``RENAMED``."""

    def __init__(self, bound: frozenset[str]):
        self.bound = bound

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.bound:
            node.id = RENAMED
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        if node.arg in self.bound:
            node.arg = RENAMED
        return self.generic_visit(node)

    def _named(self, node):
        if hasattr(node, "returns"):
            node.returns = None
        if node.name in self.bound:
            node.name = RENAMED
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _named

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        self.generic_visit(node)
        if node.value is None:
            return ast.Expr(node.target)
        return ast.Assign([node.target], node.value, lineno=node.lineno)

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.ExceptHandler:
        if node.name in self.bound:
            node.name = RENAMED
        return self.generic_visit(node)


def _statement_lines(tree: ast.AST) -> list[int]:
    """The first line of every statement of ``tree``, outer before inner; a statement the rewriting made
    without a line (a ``pass`` standing for an emptied block) takes its parent's, as
    ``ast.fix_missing_locations`` would give it. Only statement lists are walked: the expressions, nine
    nodes in ten, hold no statement."""
    lines: list[int] = []
    queue = deque([(tree, 1)])
    while queue:
        node, inherited = queue.popleft()
        for name in _STATEMENT_FIELDS:
            children = getattr(node, name, None)
            if type(children) is not list:
                continue
            for child in children:
                line = getattr(child, "lineno", None)
                line = inherited if line is None else line
                if isinstance(child, ast.stmt):
                    lines.append(line)
                    queue.append((child, line))
                elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    queue.append((child, line))
    return lines


#: The fields of a node that hold statements, or the handlers and cases that do.
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")
#: A cell's tree parsed for its names and not yet rewritten, kept while :func:`program_tokens` runs so that
#: :func:`canonical_tokens` does not parse the cell a second time (parsing is a tenth of the cost).
_UNREWRITTEN: dict[str, ast.Module | None] = {}
_ABSENT = object()


def canonical_tokens(source: str, cell: int, bound: frozenset[str],
                     read: frozenset[str] | None = None) -> list[Token] | None:
    """Tokens of a cell printed back from its syntax tree, or ``None`` if it does not parse.

    The tree is first rewritten (``rewrite``: dead code dropped, loops that
    build a list or dict as comprehensions); ``read`` is every name the
    program reads (by default, the names this cell reads).

    Each token takes the original line of the statement it belongs to (the
    printed tree and the original have the same statements in the same order).
    """
    tree = _UNREWRITTEN.pop(source, _ABSENT)
    if tree is _ABSENT:
        tree = _parse(source)
    if tree is None:
        return None
    try:
        # Transformed nodes keep their original line numbers; new statements take their parent's
        # (``_statement_lines``); printing needs no location.
        canonical = _Canonical(bound).visit(rewritten(tree, read if read is not None else read_names([tree]), bound))
        printed = ast.unparse(canonical)
        # Printed code is read in one pass (``printed``); what that does not read is parsed again and tokenized.
        once = read_printed(printed)
        statements = statements_in_text_order(canonical) if once is not None else []
        if once is not None and len(statements) == len(once.statements):
            units = once.units
            parts = printed_parts(once.tokens)
            pairs = zip(statements, once.statements)
        else:
            reparsed = ast.parse(printed)
            units = [(s.lineno, s.end_lineno or s.lineno) for s in reparsed.body]
            parts = _token_parts(printed, frozenset(), reparsed, printed=True)
            pairs = zip(_statement_lines(canonical), _statement_lines(reparsed))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    # Each printed line starts at most one statement, so either order of pairing pairs each with itself.
    line_of: dict[int, int] = {}
    for before, after in pairs:
        line_of.setdefault(after, before)
    unit_of = {line: unit for unit, (first, last) in enumerate(units) for line in range(first, last + 1)}
    out = []
    last, unit = 1, 0
    for text, line in parts:
        last = line_of.get(line, last)
        if text != "DEDENT":            # a dedent closes the statement before the line it stands on
            unit = unit_of.get(line, unit)
        out.append(Token(text, cell, last, unit))
    return out


_IDENTIFIER = re.compile(r"[^\W\d]\w*")


#: Cells remembered by the caches below. A cell many submissions share (a starter cell) is met again with every
#: notebook and stays; a class's thousand cells of its own are not kept (each remembered its names, a set of
#: every word in it, 40 MB for 1,000 submissions).
_CELLS_CACHED = 256


_Functions = tuple[tuple[str, int, int], ...]


@lru_cache(maxsize=_CELLS_CACHED)
def _cell_names(source: str) -> tuple[frozenset[str], frozenset[str], frozenset[str], _Functions]:
    """The names one cell binds, the names it reads, every identifier-like word in it, and its top-level
    functions (see :func:`defined_functions`), read from the one parse of the cell.

    A cell that does not parse binds nothing, reads every name token it has and defines no function.
    """
    mentioned = frozenset(_IDENTIFIER.findall(source))
    tree = _parse(source)
    _UNREWRITTEN[source] = tree
    if tree is None:
        read = frozenset(t.string for t in _raw_tokens(source) if t.type == tokenize.NAME)
        return frozenset(), read, mentioned, ()
    bound, read = _names_in(tree)
    functions = tuple((node.name, min([node.lineno] + [d.lineno for d in node.decorator_list]),
                       node.end_lineno or node.lineno)
                      for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)))
    return frozenset(bound), frozenset(read), mentioned, functions


def defined_functions(source: str) -> _Functions:
    """(name, first line, last line) of each top-level function of a cell, its decorators included (none if
    it does not parse). A cell just normalised is not parsed again: its functions were read with its names."""
    functions = _cell_names(source)[3]
    _UNREWRITTEN.pop(source, None)      # outside :func:`program_tokens` no printing will want the tree
    return functions


@lru_cache(maxsize=_CELLS_CACHED)
def _normalised_cell(source: str, bound: frozenset[str], read: frozenset[str]) -> tuple[Token, ...]:
    """One cell's tokens (numbered as cell 0), given the program's bound and read names that occur in it.

    The same cell in many submissions (the starter cells, code much of the class
    wrote) is normalised once.
    """
    canonical = canonical_tokens(source, 0, bound, read)
    return tuple(canonical if canonical is not None else cell_tokens(source, 0, bound))


def program_tokens(cells: tuple[str, ...] | list[str]) -> list[Token]:
    """Normalised tokens of every cell, in order, names bound anywhere in the program renamed everywhere."""
    try:
        names = [_cell_names(source) for source in cells]
        bound = frozenset().union(*(b for b, _, _, _ in names))
        read = frozenset().union(*(r for _, r, _, _ in names))
        tokens: list[Token] = []
        for number, (source, (_, _, mentioned, _)) in enumerate(zip(cells, names)):
            tokens += _numbered_cell(source, bound & mentioned, read & mentioned, number)
        return tokens
    finally:
        _UNREWRITTEN.clear()


@lru_cache(maxsize=_CELLS_CACHED)
def _numbered_cell(source: str, bound: frozenset[str], read: frozenset[str], number: int) -> tuple[Token, ...]:
    """:func:`_normalised_cell` as cell ``number``: notebooks of one assignment keep a cell in one place,
    so the tokens of a cell many submissions share are built once, not once per submission."""
    cached = _normalised_cell(source, bound, read)
    return cached if number == 0 else tuple(Token(text, number, line, unit) for text, _, line, unit in cached)

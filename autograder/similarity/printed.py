"""Tokens, statement lines and top-level statements of code that ``ast.unparse`` printed, read in one pass.

Normalising prints each cell back from its syntax tree, then needs the
printed code's tokens, the line each statement starts on and the lines each
top-level statement spans. Python's ``tokenize`` and a second ``ast.parse``
of the printed code give them, and were a third of the normalising time of a
class of 1,000 (tokenize alone is a Python loop doing far more than this
needs). Printed code is a small, regular part of Python: four spaces per
level, one statement per line, no comments, no line continuations, no tabs,
a newline only between lines or inside a triple-quoted string. So one
regular expression reads it, with Python's own patterns for numbers and
string prefixes, and the statements are found from the lines' first words.

Anything outside that part (a character the expression does not read, an
indentation it does not expect, a line starting with the soft keyword
``case``, a count of statements unlike the tree's) makes :func:`read_printed`
return ``None``, and the caller takes the old path (``tokenize`` and a
second parse): the result is then the same by construction, and
``tests/test_similarity_printed.py`` checks that it is the same whenever this
path is taken.
"""
from __future__ import annotations

import ast
import re
import sys
import tokenize
from functools import lru_cache
from typing import NamedTuple

#: Python's operators and brackets, longest first so that ``**=`` is read before ``**``.
_OPERATORS = "|".join(re.escape(op) for op in sorted(tokenize.EXACT_TOKEN_TYPES, key=len, reverse=True))
_PREFIX = "(?:" + "|".join(sorted((re.escape(p) for p in tokenize._all_string_prefixes()), key=len, reverse=True)) + ")"
_STRING = (_PREFIX + r"(?:'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
           + r'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
           + r"|'[^\n'\\]*(?:\\.[^\n'\\]*)*'"
           + r'|"[^\n"\\]*(?:\\.[^\n"\\]*)*")')
#: One token (or a newline, or spaces) at a time, in tokenize's order of preference.
_TOKEN = re.compile(f"(?P<nl>\\n)|(?P<ws> +)|(?P<str>{_STRING})|(?P<num>{tokenize.Number})|(?P<name>\\w+)"
                    f"|(?P<op>{_OPERATORS})", re.S)
_OPENING = frozenset("([{")
_CLOSING = frozenset(")]}")
#: First words of a line that continue a statement rather than start one (a decorator line precedes one).
_CLAUSES = frozenset(("else", "except", "finally"))
_STRUCTURE = frozenset(("NEWLINE", "INDENT", "DEDENT"))


class Printed(NamedTuple):
    """Printed code read: ``(kind, text, line)`` per token (``kind`` one of ``str num name op NEWLINE INDENT
    DEDENT``), the line each statement starts on in order of the text, and ``(first, last)`` line of each
    top-level statement."""

    tokens: list[tuple[str, str, int]]
    statements: list[int]
    units: list[tuple[int, int]]


def read_printed(printed: str) -> Printed | None:
    """The tokens of ``printed`` as ``tokenize`` gives them (comments, NL and ENDMARKER aside), its statements'
    lines and its top-level statements' lines; ``None`` where ``printed`` is outside what this reads."""
    tokens: list[tuple[str, str, int]] = []
    statements: list[int] = []
    units: list[tuple[int, int]] = []
    indents = [0]
    line, depth, end = 1, 0, 0
    at_start, indent = True, 0
    unit_open = False           # the last top-level line belongs to a statement still being read
    last_line = 0               # the line the last token ends on
    for match in _TOKEN.finditer(printed):
        if match.start() != end:
            return None         # a character the expression does not read
        end = match.end()
        kind = match.lastgroup
        text = match.group()
        if kind == "nl":
            if depth:
                return None
            if not at_start:
                tokens.append(("NEWLINE", "\n", line))
            line += 1
            at_start, indent = True, 0
            continue
        if kind == "ws":
            if at_start:
                indent = len(text)
            continue
        if at_start:
            if indent > indents[-1]:
                indents.append(indent)
                tokens.append(("INDENT", " " * indent, line))
            while indent < indents[-1]:
                indents.pop()
                tokens.append(("DEDENT", "", line))
            if indent != indents[-1]:
                return None
            at_start = False
            if text == "case":
                return None     # a soft keyword: a ``case`` clause or a name, which the words alone cannot tell
            if text != "@" and text not in _CLAUSES:
                statements.append(line)
            if len(indents) == 1:
                if text == "@":
                    unit_open = False
                elif text not in _CLAUSES and text != "elif":
                    units.append((line, line))
                    unit_open = True
        if kind == "op":
            if text in _OPENING:
                depth += 1
            elif text in _CLOSING:
                depth -= 1
        tokens.append((kind, text, line))
        last_line = line + (text.count("\n") if kind == "str" else 0)
        line = last_line
        if unit_open:
            units[-1] = (units[-1][0], last_line)
    if end != len(printed) or depth:
        return None
    if not at_start:
        tokens.append(("NEWLINE", "", line))
        line += 1
    tokens.extend(("DEDENT", "", line) for _ in indents[1:])
    return Printed(tokens, statements, units)


def printed_parts(tokens: list[tuple[str, str, int]]) -> list[tuple[str, int]]:
    """(text, line) of each normalised token of printed code, as ``normalize._token_parts`` makes them with
    ``printed`` true (nothing renamed, no string or annotation left to drop)."""
    out: list[tuple[str, int]] = []
    structure = False
    intern = sys.intern
    count = len(tokens)
    for index, (kind, text, line) in enumerate(tokens):
        if kind == "op":
            if text == "," and index + 1 < count and tokens[index + 1][1] in _CLOSING:
                continue
        elif kind == "str" or kind == "num":
            text = literal(text)
        elif kind in _STRUCTURE:
            if kind == "NEWLINE" and (not out or structure):
                continue
            out.append((kind, line))
            structure = True
            continue
        out.append((intern(text), line))
        structure = text in _STRUCTURE
    return out


def statements_in_text_order(tree: ast.AST) -> list[int]:
    """The first line of every statement of ``tree`` in order of the text (handlers before ``else`` and
    ``finally``), lines missing taken from the parent as in ``normalize._statement_lines``."""
    lines: list[int] = []
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, inherited = stack.pop()
        inner: list[tuple[ast.AST, int]] = []
        for name in _TEXT_ORDER_FIELDS:
            children = getattr(node, name, None)
            if type(children) is not list:
                continue
            for child in children:
                line = getattr(child, "lineno", None)
                inner.append((child, inherited if line is None else line))
        for child, line in reversed(inner):     # the first child on top of the stack
            if isinstance(child, (ast.stmt, ast.ExceptHandler, ast.match_case)):
                stack.append((child, line))
        if isinstance(node, ast.stmt):
            lines.append(inherited)
    return lines


#: ``normalize._STATEMENT_FIELDS`` in the order a statement's parts are printed.
_TEXT_ORDER_FIELDS = ("body", "handlers", "orelse", "finalbody", "cases")


@lru_cache(maxsize=16384)
def literal(text: str) -> str:
    """A string or number literal in one canonical form (its value's ``repr``), or as written if it has none."""
    try:
        return repr(ast.literal_eval(text))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text

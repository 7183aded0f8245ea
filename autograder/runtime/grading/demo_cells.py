"""Leave the course's demo cells out of grading when nothing graded depends on them.

The notebook runs the lesson's workflow after some questions (a random model's
loss, a full finite-difference gradient check). Those cells are the build's own
text, they define nothing the hidden tests call, and the gradient check alone
costs more than the rest of a submission's loading. A cell is left out only
when it is exactly the build's text (its hash is in the autograder's config) and
no other cell reads a name it sets or a non-function name it uses (the ``rng``
it draws from, the arrays it computes), judged by Python's own scoping rules
(``symtable``), so a student function that reads such a global still sees it.
"""
from __future__ import annotations

import builtins
import hashlib
import symtable
from functools import lru_cache
from typing import Iterable

from autograder.runtime.grading.extract import PARSE_LIMIT, Program

#: At most this many (name, nested scope) pairs per scope are looked at: ``symtable`` matches
#: every name of a scope against every scope nested in it, so a cell of 20,000 one-line
#: functions took 10 s, and the 20 MB a submission may hold, hours.
_SCOPE_WORK = 1_000_000


def demo_digest(source: str) -> str:
    """The hash the build records for a demo cell, and grading compares with."""
    return hashlib.sha256(source.strip().encode("utf-8")).hexdigest()


def _tables(table: symtable.SymbolTable) -> Iterable[symtable.SymbolTable]:
    yield table
    for child in table.get_children():
        yield from _tables(child)


class _Cell:
    """What one cell does with the module namespace, by Python's scoping rules."""

    def __init__(self, source: str) -> None:
        if len(source) > PARSE_LIMIT:
            raise ValueError("a cell this long is not analysed")
        top = symtable.symtable(source, "cell", "exec")
        if any(len(t.get_identifiers()) * len(t.get_children()) > _SCOPE_WORK for t in _tables(top)):
            raise ValueError("a cell with this many names and scopes is not analysed")
        symbols = top.get_symbols()
        self.assigned = {s.get_name() for s in symbols if s.is_assigned() or s.is_imported()}
        self.callables = {s.get_name() for s in symbols if s.is_imported() or s.is_namespace()}
        #: Read when the cell runs (top level), and read whenever its functions are called.
        self.read_now = {s.get_name() for s in symbols if s.is_referenced()}
        self.read_later = {s.get_name() for table in _tables(top) if table is not top
                           for s in table.get_symbols()
                           if s.is_referenced() and (s.is_global() or (s.is_free() and not s.is_local()))}


@lru_cache(maxsize=4096)
def _cell(source: str) -> _Cell | None:
    """Cached: most cells (setup, checks, demos) are the same in every submission of a class.
    ``None`` for a cell that cannot be parsed, or is too large to analyse: the program then runs
    as written, demo cells included."""
    try:
        return _Cell(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _cells(sources: tuple[str, ...]) -> list[_Cell] | None:
    cells = [_cell(source) for source in sources]
    return None if any(c is None for c in cells) else cells   # unparsable: run everything as written


def without_demo_cells(program: Program, demos: frozenset[str]) -> Program:
    """``program`` without the demo cells no other cell depends on (see the module's docstring)."""
    if not demos:
        return program
    candidates = [i for i, cell in enumerate(program.cells) if demo_digest(cell) in demos]
    if not candidates:
        return program
    cells = _cells(program.cells)
    if cells is None:
        return program
    functions = set().union(*(c.callables for c in cells)) | set(dir(builtins))
    dropped: set[int] = set()
    for i in candidates:
        # What another cell could notice: the names this cell sets, and the data it uses (an
        # array, a generator it draws from); functions and builtins are left as they were. A later
        # cell could read them as it runs, and any cell's function whenever the tests call it.
        touched = cells[i].assigned | (cells[i].read_now - functions)
        readers = set()
        for j, other in enumerate(cells):
            if j != i and j not in candidates:
                readers |= other.read_later | (other.read_now if j > i else set())
        if not touched & readers:
            dropped.add(i)
    if not dropped:
        return program
    keep = [i for i in range(len(program.cells)) if i not in dropped]
    labels = tuple(program.labels[i] for i in keep) if len(program.labels) == len(program.cells) else program.labels
    return Program(tuple(program.cells[i] for i in keep), program.notes, labels)

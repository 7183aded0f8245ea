"""Normalise and fingerprint a class's submissions on every core the process may use.

Normalising is Python's own parse, rewrite, print and tokenize of each
distinct cell: on a class of 1,000 submissions that each wrote their own,
most of the comparison's time, and each submission's document depends on
its own cells only. So the work is shared: the process forks helpers (one
per further core), and it and its helpers take the next few submissions in
turn from a shared counter until none is left, so a busy core takes fewer.
Each helper sends its documents back packed (each token's text as a number
in the helper's list of texts, its cell, line and statement in one integer
array): pickling a million named tuples costs as much as half the
normalising it saves.

A document is the same whichever process made it (normalising reads nothing
but the cells), and the documents are returned in the order asked, so the
result is the serial one. Where fork is not available, or the class is
small, or a helper fails, the work (or the failed helper's share) is done
in this process.
"""
from __future__ import annotations

import multiprocessing
import os
import pickle
import sys
from collections.abc import Callable, Sequence

import numpy as np

from autograder.similarity.compare import Document, Settings, document
from autograder.similarity.normalize import Token
from autograder.similarity.shared_work import claimed, cores, fork_helpers, stop_helpers

#: Below this many distinct submissions, one process: forking and packing cost more than they save.
PARALLEL_FROM = 64
#: Submissions a process takes from the counter at a time: few enough that the cores finish together.
_TAKEN_AT_ONCE = 4


def documents(named: Sequence[tuple[str, tuple[str, ...]]], settings: Settings = Settings(),
              workers: int | None = None, meanwhile: Callable[[], object] | None = None) -> list[Document]:
    """``document(name, cells, settings)`` of each of ``named``, in order, shared among ``workers`` processes
    (default: every core available, when the class is large enough to gain from it).

    ``meanwhile`` is called in this process once the helpers have started, before it takes its own share
    (the starter notebook is rendered while the helpers normalise); an error it raises stops the helpers."""
    if workers is None:
        workers = cores() if len(named) >= PARALLEL_FROM else 1
    if workers <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        if meanwhile is not None:
            meanwhile()
        return [document(name, cells, settings) for name, cells in named]
    context = multiprocessing.get_context("fork")
    counter = context.Value("l", 0)
    helpers: list = []
    made: dict[int, Document] = {}
    try:
        helpers = fork_helpers(context, workers - 1, lambda sending: (named, settings, counter, sending), _helper)
        if meanwhile is not None:
            meanwhile()
        for index in claimed(counter, len(named), _TAKEN_AT_ONCE):
            made[index] = document(*named[index], settings)
        for process, receiving in helpers:
            try:
                made.update(_unpacked(named, pickle.loads(receiving.recv_bytes())))
            except (EOFError, OSError, pickle.UnpicklingError):
                pass                  # the helper died: what it took is made below
    finally:
        stop_helpers(helpers)         # one still working after an error here (one whose documents were read is leaving)
    # A failed helper's share (and anything left if every helper failed) is made here.
    return [made[i] if i in made else document(*named[i], settings) for i in range(len(named))]


def _helper(named, settings: Settings, counter, sending) -> None:
    """A forked helper: make the documents it takes, send them back packed, and leave."""
    try:
        packer = _Packer()
        packed = {index: packer.document(document(*named[index], settings)) for index in claimed(counter, len(named), _TAKEN_AT_ONCE)}
        sending.send_bytes(pickle.dumps(packer.message(packed), protocol=pickle.HIGHEST_PROTOCOL))
    finally:
        sending.close()
        os._exit(0)                   # no exit handlers, no flushing the parent's buffers twice


class _Packer:
    """Documents as numbers. A cell many submissions share (a starter cell) has one tuple of tokens, shared by
    every document that holds it (``normalize`` builds it once): it is sent once and rebuilt once, so the
    documents share it here too (a class of 1,000 holds 40 MB less)."""

    def __init__(self) -> None:
        self.texts: dict[str, int] = {}
        self.cells: dict[tuple[Token, ...], int] = {}    # a cell's tokens -> its number here
        self.numbers: list[int] = []                      # each token's text, every cell's tokens one after another
        self.places: list[tuple[int, int, int]] = []      # each token's (cell, line, unit), likewise
        self.bounds: list[int] = [0]                      # where each cell's tokens start, and the end

    def document(self, doc: Document) -> tuple[list[int], np.ndarray, np.ndarray, tuple[tuple[str, int, int], ...]]:
        """The cell numbers of ``doc``'s tokens, its fingerprints and its functions."""
        tokens = doc.tokens
        parts = []
        start = 0
        while start < len(tokens):
            cell = tokens[start].cell
            end = start + 1
            while end < len(tokens) and tokens[end].cell == cell:
                end += 1
            # Known by its tokens, not by where they are: a helper drops each document once packed, and a cell
            # made later may take a dead one's place in memory.
            key = tokens[start:end]
            number = self.cells.get(key)
            if number is None:
                number = self.cells[key] = len(self.cells)
                texts = self.texts
                self.numbers += [texts.setdefault(t.text, len(texts)) for t in tokens[start:end]]
                self.places += [t[1:] for t in tokens[start:end]]
                self.bounds.append(len(self.numbers))
            parts.append(number)
            start = end
        return parts, doc.hashes, doc.positions, doc.functions

    def message(self, packed: dict) -> tuple:
        places = np.array(self.places, dtype=np.int32).reshape(len(self.places), 3)
        return list(self.texts), np.array(self.numbers, dtype=np.int32), places, self.bounds, packed


def _unpacked(named: Sequence[tuple[str, tuple[str, ...]]], message) -> dict[int, Document]:
    texts, numbers, places, bounds, packed = message
    texts = [sys.intern(t) for t in texts]
    words = [texts[n] for n in numbers.tolist()]
    cells, lines, units = places.T.tolist() if len(places) else ([], [], [])
    made = [tuple(map(Token, words[a:b], cells[a:b], lines[a:b], units[a:b])) for a, b in zip(bounds, bounds[1:])]
    out: dict[int, Document] = {}
    for index, (parts, hashes, positions, functions) in packed.items():
        tokens = made[parts[0]] if len(parts) == 1 else tuple(t for part in parts for t in made[part])
        name, source = named[index]
        out[index] = Document(name, tuple(source), tokens, hashes, positions, functions)
    return out

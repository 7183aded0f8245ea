"""Are a class's documents the same whether one process or several made them?

Normalising is shared among forked helpers (autograder/similarity/parallel.py);
the comparison must not be able to tell.
"""
from __future__ import annotations

import multiprocessing

import numpy as np
import pytest

from autograder.similarity import parallel, shared_work
from autograder.similarity.compare import document
from tests.similarity_cohort import cohort

needs_fork = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork here")


def _named() -> list[tuple[str, tuple[str, ...]]]:
    return [(s.name, tuple(s.cells)) for s in cohort("lm-head", seed=0).students]


def _same(made, expected) -> None:
    assert len(made) == len(expected)
    for got, want in zip(made, expected):
        assert (got.name, got.cells, got.tokens, got.functions) == (want.name, want.cells, want.tokens, want.functions)
        assert np.array_equal(got.hashes, want.hashes) and got.hashes.dtype == want.hashes.dtype
        assert np.array_equal(got.positions, want.positions) and got.positions.dtype == want.positions.dtype


@needs_fork
def test_documents_made_by_helpers_are_the_serial_ones_in_order():
    named = _named()
    serial = [document(name, cells) for name, cells in named]
    _same(parallel.documents(named, workers=3), serial)


def test_a_document_packed_by_a_helper_reads_back_the_same():
    """What crosses from a helper is numbers and one list of texts; what is read back is the document."""
    named = _named()[:5]
    packer = parallel._Packer()
    packed = {i: packer.document(document(*named[i])) for i in range(len(named))}
    back = parallel._unpacked(named, packer.message(packed))
    _same([back[i] for i in range(len(named))], [document(*n) for n in named])
    # The starter's cells, one tuple of tokens in every document made here, are one tuple there too.
    first_cell = [tuple(t for t in back[i].tokens if t.cell == 0) for i in range(len(named))]
    assert all(cell == first_cell[0] for cell in first_cell)
    assert len({id(back[i].tokens[0]) for i in range(len(named))}) == 1


@needs_fork
def test_a_helper_that_dies_leaves_its_share_to_this_process(monkeypatch):
    named = _named()
    # A helper that takes its first submissions and exits (as one killed would) sends nothing; the documents
    # are all made all the same.
    def dies(named, settings, counter, sending) -> None:
        next(shared_work.claimed(counter, len(named), parallel._TAKEN_AT_ONCE))
        parallel.os._exit(1)

    monkeypatch.setattr(parallel, "_helper", dies)
    _same(parallel.documents(named, workers=2), [document(name, cells) for name, cells in named])


def test_a_small_class_is_normalised_in_this_process(monkeypatch):
    monkeypatch.setattr(parallel.multiprocessing, "get_context", lambda *a: pytest.fail("forked for a small class"))
    named = _named()[:3]
    _same(parallel.documents(named), [document(name, cells) for name, cells in named])


def test_cells_made_again_after_their_tokens_died_are_not_taken_for_them():
    """A helper drops each document once packed: a cell's tokens made anew may sit where a dead one's were."""
    from autograder.similarity import normalize

    named = _named()
    packer = parallel._Packer()
    packed = {}
    for i, (name, cells) in enumerate(named):
        normalize._numbered_cell.cache_clear()         # every cell's tokens made anew, the old ones freed
        normalize._normalised_cell.cache_clear()
        packed[i] = packer.document(document(name, cells))
    back = parallel._unpacked(named, packer.message(packed))
    _same([back[i] for i in range(len(named))], [document(*n) for n in named])



@needs_fork
def test_a_class_is_normalised_here_when_no_helper_can_start(monkeypatch):
    def refused(self) -> None:
        raise OSError("Resource temporarily unavailable")

    monkeypatch.setattr(multiprocessing.get_context("fork").Process, "start", refused)
    named = _named()
    _same(parallel.documents(named, workers=2), [document(name, cells) for name, cells in named])

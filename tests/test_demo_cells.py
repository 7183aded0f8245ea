"""The lesson-workflow cells are left out of grading only where nothing graded can notice."""
from __future__ import annotations

from autograder.runtime.grading.demo_cells import demo_digest, without_demo_cells
from autograder.runtime.grading.extract import Program

SETUP = "import numpy as np\nrng = np.random.default_rng(0)\nB, T = 4, 8\n"
FUNCTION = "def loss(x):\n    return float(np.mean(x))\n"
DEMO = "x = rng.standard_normal((B, T))\nprint('loss:', loss(x))\n"


def program(*cells: str) -> Program:
    return Program(cells, (), tuple(f"cell {i + 1}" for i in range(len(cells))))


def test_an_unchanged_demo_cell_nothing_reads_is_left_out():
    kept = without_demo_cells(program(SETUP, FUNCTION, DEMO), frozenset({demo_digest(DEMO)}))
    assert kept.cells == (SETUP, FUNCTION) and kept.labels == ("cell 1", "cell 2")


def test_an_edited_demo_cell_runs():
    edited = DEMO + "y = 1\n"
    assert without_demo_cells(program(SETUP, FUNCTION, edited), frozenset({demo_digest(DEMO)})).cells[-1] == edited


def test_a_demo_cell_runs_when_a_function_reads_what_it_sets_or_uses():
    reads_x = "def loss_of_x():\n    return float(x.sum())\n"            # x is set by the demo
    draws = "def draw():\n    return rng.random()\n"                     # the demo draws from rng
    for other in (reads_x, draws):
        assert DEMO in without_demo_cells(program(SETUP, other, DEMO), frozenset({demo_digest(DEMO)})).cells
    # a local of the same name is not a read of the global
    local = "def f(x):\n    B = x.shape[0]\n    return B\n"
    assert DEMO not in without_demo_cells(program(SETUP, local, DEMO), frozenset({demo_digest(DEMO)})).cells


def test_a_demo_cell_runs_when_a_later_cell_reads_its_data_and_not_for_an_earlier_one():
    later = "print(rng.random())\n"
    assert DEMO in without_demo_cells(program(SETUP, FUNCTION, DEMO, later), frozenset({demo_digest(DEMO)})).cells
    assert DEMO not in without_demo_cells(program(SETUP, later, FUNCTION, DEMO),
                                          frozenset({demo_digest(DEMO)})).cells


def test_a_cell_python_cannot_parse_keeps_everything():
    broken = "def f(:\n"
    cells = (SETUP, broken, DEMO)
    assert without_demo_cells(program(*cells), frozenset({demo_digest(DEMO)})).cells == cells


def test_a_cell_too_large_to_analyse_keeps_everything():
    """Python's symbol tables match every name of a scope against every scope in it: a cell of
    20,000 one-line functions took 10 s in the grader, and a long cell holds its whole tree in
    memory. Such cells are not analysed; the program runs as written, demo cells included."""
    many = "".join(f"def f{i}(a):\n    return a\n" for i in range(20_000))
    long = FUNCTION + "#" * (300 << 10) + "\n"
    for cell in (many, long):
        cells = (SETUP, cell, DEMO)
        assert without_demo_cells(program(*cells), frozenset({demo_digest(DEMO)})).cells == cells

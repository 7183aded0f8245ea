"""Does reading printed code in one pass give the tokens, lines and statements that tokenize and a second
parse gave?

``canonical_tokens`` is run twice on each source: as it runs, and with the one-pass reader switched off (the
path through ``tokenize`` and ``ast.parse`` of the printed code, as before the reader existed)."""
from __future__ import annotations

import ast

import pytest

from autograder.similarity import normalize
from autograder.similarity.printed import read_printed
from tests.similarity_cohort import ASSIGNMENTS, cohort, lesson_cells

TRICKY = [
    # decorators, a class, async, a walrus, a lambda, keyword arguments
    "import functools\n\n@functools.lru_cache(maxsize=None)\n@staticmethod\ndef f(x, *a, k=1, **kw):\n"
    "    if (n := len(a)) > 2:\n        return lambda y: y + n\n    return [i for i in range(x) if i % 2]\n\n"
    "class C(object):\n    '''doc'''\n    z: int = 3\n\n    async def g(self):\n        async with self as s:\n"
    "            await s\n        return {**{}, 'a': 1}\n",
    # if / elif / else chains, try / except / else / finally, for / else, while / else, nested blocks
    "def h(x):\n    try:\n        y = 1 / x\n    except (ZeroDivisionError, ValueError) as e:\n        y = 0\n"
    "    except Exception:\n        raise\n    else:\n        y += 1\n    finally:\n        pass\n"
    "    if y > 1:\n        return 1\n    elif y < 0:\n        return -1\n    elif y == 0:\n        return 0\n"
    "    else:\n        for i in range(3):\n            y += i\n        else:\n            y -= 1\n"
    "    while y:\n        y -= 1\n    else:\n        y = 5\n    return y\n\nx = h(3)\nprint(x)\n",
    # strings of every kind: triple-quoted over lines, f-strings with nested quotes, bytes, raw, escapes
    'a = """first\nsecond\n"""\nb = f"{a!r:>10} and {\'q\'}"\nc = rb\'\\x00\' + b"\\n"\nd = \'it\\\'s\'\n'
    "e = f'''x\ny {a}'''\nprint(a, b, c, d, e, 1_000, 0x1F, 1e-06, 2j, .5, ...)\n",
    # top-level control flow, a global, a match statement, a one-tuple, slices, a conditional expression
    "import numpy as np\nN = 3\nif N > 2:\n    M = (N,)\nelse:\n    M = ()\nfor i in range(N):\n    global G\n"
    "    G = np.zeros((i, 2))[::2, -1:]\nmatch N:\n    case 1 | 2:\n        print('small')\n    case _:\n"
    "        print('big' if N else 'none')\nwith open('f') as f, open('g') as g:\n    print(f.read(), g)\n",
    # a cell that is one expression, a cell that is empty, deep nesting
    "x",
    "",
    "def deep(a):\n" + "".join("    " * (i + 1) + f"if a > {i}:\n" for i in range(20)) + "    " * 21 + "return a\n",
]


def _both(source: str, monkeypatch: pytest.MonkeyPatch) -> tuple[list, list]:
    bound, read, _, _ = normalize._cell_names(source)
    normalize._UNREWRITTEN.clear()
    fast = normalize.canonical_tokens(source, 0, bound, read)
    with monkeypatch.context() as m:
        m.setattr(normalize, "read_printed", lambda printed: None)
        slow = normalize.canonical_tokens(source, 0, bound, read)
    return fast, slow


@pytest.mark.parametrize("source", TRICKY)
def test_one_pass_gives_the_tokens_of_tokenize_and_a_second_parse(source, monkeypatch):
    fast, slow = _both(source, monkeypatch)
    assert fast == slow


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_one_pass_gives_the_same_tokens_on_every_cell_of_a_cohort(assignment, monkeypatch):
    group = cohort(assignment)
    cells = {c for s in group.independent + group.copies for c in s.cells} | set(lesson_cells())
    for source in sorted(cells):
        fast, slow = _both(source, monkeypatch)
        assert fast == slow, source


def test_printed_code_of_the_tricky_sources_is_read_in_one_pass_except_a_match():
    """The reader takes every printed source but the one with a ``case`` clause (left to the old path)."""
    missed = [s for s in TRICKY if read_printed(ast.unparse(ast.parse(s))) is None]
    assert missed == [s for s in TRICKY if "case " in s]


def test_code_outside_what_printing_makes_is_left_to_tokenize():
    assert read_printed("x = 1 \\\n    + 2") is None        # a line continuation
    assert read_printed("if x:\n\ty = 1") is None             # a tab
    assert read_printed("x = (1,\n2)") is None                # a newline inside brackets
    assert read_printed("if x:\n        y = 1\n    z = 2") is None     # a dedent to no open level

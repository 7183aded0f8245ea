"""Does work shared among forked helpers give the results one process gives, in order, even when a helper dies?"""
from __future__ import annotations

import os

import numpy as np

from autograder.similarity import shared_work
from autograder.similarity.compare import compare_class, document
from autograder.similarity.shared_work import shared_map


def test_shared_map_gives_every_result_in_order():
    made = shared_map(lambda i: (i, os.getpid(), np.arange(i)), 200, workers=3)
    assert [m[0] for m in made] == list(range(200))
    assert all(m[2].tolist() == list(range(i)) for i, m in enumerate(made))


def test_a_helper_that_dies_leaves_its_share_to_this_process():
    parent = os.getpid()

    def make(i: int) -> int:
        if os.getpid() != parent and i % 5 == 0:
            os._exit(1)       # a helper killed in the middle of its share
        return i * i
    assert shared_map(make, 100, workers=2) == [i * i for i in range(100)]


def test_pairs_ranked_on_several_cores_are_the_pairs_of_one(monkeypatch):
    rng = np.random.default_rng(3)
    docs = [document(f"s{i:02d}", [f"import numpy as np\ndef f(x):\n    y = x * {int(a)} + np.exp(x) * {int(b)}\n"
                                   f"    return np.tanh(y) - {int(c)}\n"]) for i, (a, b, c) in
            enumerate(rng.integers(2, 6, size=(40, 3)))]
    several = compare_class(docs).pairs
    monkeypatch.setattr(shared_work, "cores", lambda: 1)
    assert several == compare_class(docs).pairs and len(several) > 20

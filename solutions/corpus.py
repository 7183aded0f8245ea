"""The course's canonical character-level corpus and its tokenizer.

The lamp-keeper text repeated 20 times gives a 24-character vocabulary and
10,020 tokens; every worked example in the lesson is computed on it.
"""
from __future__ import annotations

import numpy as np

SENTENCES = (
    "the lamp keeper walks the shore at dusk. ",
    "the lamp keeper lights the lantern when the fog rolls in. ",
    "the boats come home when the lantern glows. ",
    "the boats wait outside the bay when the fog is thick. ",
    "a small boat drifts near the rocks at dawn. ",
    "the keeper rings the bell when a boat drifts near the rocks. ",
    "the tide rises at dusk and falls at dawn. ",
    "the gulls call over the bay when the tide is low. ",
    "the keeper counts the boats and writes the count in a book. ",
    "the lantern burns all night and rests at dawn. ",
)
#: How many times the sentences repeat in the corpus.
REPEATS = 20
CORPUS: str = "".join(SENTENCES) * REPEATS


def build_vocab(text: str = CORPUS) -> tuple[dict[str, int], dict[int, str]]:
    """Character vocabulary in sorted order: (stoi, itos)."""
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    itos = {i: c for c, i in stoi.items()}
    return stoi, itos


def encode(text: str, stoi: dict[str, int] | None = None) -> np.ndarray:
    """Token ids of ``text`` as an int64 array of shape (len(text),)."""
    stoi = stoi if stoi is not None else build_vocab()[0]
    return np.array([stoi[c] for c in text], dtype=np.int64)


def decode(ids, itos: dict[int, str] | None = None) -> str:
    """Text of a 1-D sequence of token ids."""
    itos = itos if itos is not None else build_vocab()[1]
    return "".join(itos[int(i)] for i in ids)

"""A wrong parameter count is explained only by the term really left out (or counted twice).

At one setting products of the settings coincide (4·n_embd·n_layer = 2·block_size·n_layer =
n_layer·ffn_dim when block_size = 2·n_embd and ffn_dim = 4·n_embd), so a reading of a wrong count
may be stated only when probes on other settings confirm it. These tests leave out every
combination of the convention's terms, and run every catalogued count slip, and read the sentence
back: each product of settings it names must be the difference on every setting tried, and
settings where products coincide must not mislead it.
"""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest

import solutions
from autograder.runtime.diagnosis import whole_number_probes
from autograder.runtime.relations import relation
from tests.suites import MISTAKES

PARAMS = ["vocab_size", "block_size", "n_embd", "n_layer", "ffn_dim", "tied"]
right_count = solutions.perplexity_and_parameters.gpt_param_count

#: Each term of the convention a counter may leave out: (key it belongs to, its size from the settings).
TERMS = {
    "query/key/value biases": ("attention", lambda V, T, d, L, f: 3 * L * d),
    "attention output bias": ("attention", lambda V, T, d, L, f: L * d),
    "first FFN bias": ("ffn", lambda V, T, d, L, f: L * f),
    "second FFN bias": ("ffn", lambda V, T, d, L, f: L * d),
    "first LayerNorm of each block": ("layernorm", lambda V, T, d, L, f: 2 * L * d),
    "second LayerNorm of each block": ("layernorm", lambda V, T, d, L, f: 2 * L * d),
    "token table": ("embeddings", lambda V, T, d, L, f: V * d),
    "position table": ("embeddings", lambda V, T, d, L, f: T * d),
}

#: Settings where products coincide (block_size = 2·n_embd, ffn_dim = 4·n_embd, n_layer = 2 or 1):
#: the readings a single setting cannot tell apart.
COINCIDING = [(1000, 256, 128, 4, 512, True), (5000, 128, 64, 2, 256, False), (300, 512, 256, 1, 1024, True)]


def _leaving_out(left_out: tuple[str, ...]):
    def count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
        out = dict(right_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied))
        for term in left_out:
            key, size = TERMS[term]
            gone = size(vocab_size, block_size, n_embd, n_layer, ffn_dim)
            out[key] -= gone
            out["total"] -= gone
        return out
    return count


def _said(count, args) -> str | None:
    observations = [(count(*probe), right_count(*probe), probe) for probe in whole_number_probes(args)]
    return relation(count(*args), right_count(*args), PARAMS, args, (), observations)


_TERM = re.compile(r"(?:(\d+) × )?((?:`\w+`(?: × )?)+)")


def _named_difference(said: str) -> tuple[str, int, dict[tuple[str, ...], int]] | None:
    """(key, sign, {product of settings: copies}) of a sentence naming terms, or None if it names none."""
    found = re.match(r"Your `(\w+)` is (.+?) too (large|small) \(", said)
    if not found:
        return None
    key, expression, way = found.groups()
    terms: dict[tuple[str, ...], int] = {}
    for sign, body in re.findall(r"(^|[+−] |−)([^+−]+)", expression):
        copies, product = _TERM.fullmatch(body.strip()).groups()
        names = tuple(sorted(re.findall(r"`(\w+)`", product)))
        terms[names] = (-1 if "−" in sign else 1) * int(copies or 1)
    return key, (1 if way == "large" else -1), terms


def _value(terms: dict[tuple[str, ...], int], args) -> int:
    values = dict(zip(PARAMS, args))
    return sum(k * int(np.prod([values[n] for n in names])) for names, k in terms.items())


def _assert_true_on_many_settings(count, said: str, tied: bool) -> None:
    """The sentence's terms are the count's difference from the right one on settings it never saw
    (with the head tied as in the test the sentence was written for)."""
    reading = _named_difference(said)
    if reading is None:
        assert re.search(r"is exactly `\w+` times too (small|large)", said), said
        return
    key, sign, terms = reading
    rng = np.random.default_rng(7)
    for _ in range(12):
        d = int(rng.integers(2, 300))
        args = (int(rng.integers(2, 9000)), int(rng.integers(2, 2000)), d, int(rng.integers(1, 40)),
                int(rng.integers(2, 2000)), tied)
        diff = count(*args)[key] - right_count(*args)[key]
        assert diff == sign * _value(terms, args), f"{said!r} is false at {args}: the difference is {diff}"


@pytest.mark.parametrize("size", [1, 2, 3])
def test_every_combination_of_terms_left_out_is_read_only_as_what_was_left_out(size):
    stated = 0
    for left_out in itertools.combinations(TERMS, size):
        count = _leaving_out(left_out)
        for args in COINCIDING:
            said = _said(count, args)
            if said:
                stated += 1
                _assert_true_on_many_settings(count, said, args[-1])
    # Many combinations are one or two products of settings: most must be stated, not only none false.
    assert stated >= len(list(itertools.combinations(TERMS, size))) * len(COINCIDING) // 3


def test_a_coincidence_of_this_setting_is_not_stated_without_probes():
    count = _leaving_out(("query/key/value biases", "attention output bias"))
    args = COINCIDING[0]        # 4·n_embd·n_layer = 2·block_size·n_layer = n_layer·ffn_dim here
    assert relation(count(*args), right_count(*args), PARAMS, args) is None
    said = _said(count, args)
    assert said.startswith("Your `attention` is 4 × `n_embd` × `n_layer` too small"), said


def test_a_probe_the_students_count_does_not_answer_confirms_nothing():
    count = _leaving_out(("position table",))
    args = COINCIDING[1]
    observations = [({"embeddings": "many"}, right_count(*probe), probe) for probe in whole_number_probes(args)]
    assert relation(count(*args), right_count(*args), PARAMS, args, (), observations) is None


COUNT_SLIPS = [m for m in dict(MISTAKES).values() if m.function == "gpt_param_count"]


@pytest.mark.parametrize("slip", COUNT_SLIPS, ids=lambda m: m.name)
def test_every_catalogued_count_slip_is_read_only_as_what_it_does(slip):
    for args in COINCIDING:
        try:
            said = _said(slip.implementation, args)
        except Exception:       # a slip that refuses these settings has nothing to be read from
            continue
        if said:
            _assert_true_on_many_settings(slip.implementation, said, args[-1])


def test_the_entry_the_verdict_names_is_explained_first():
    count = _leaving_out(("attention output bias", "second FFN bias"))
    args = (1000, 128, 64, 3, 192, False)
    observations = [(count(*probe), right_count(*probe), probe) for probe in whole_number_probes(args)]
    said = relation(count(*args), right_count(*args), PARAMS, args, (), observations, "ffn")
    assert said.startswith("Your `ffn` is `n_embd` × `n_layer` too small"), said
    said = relation(count(*args), right_count(*args), PARAMS, args, (), observations)
    assert said.startswith("Your `attention`"), said

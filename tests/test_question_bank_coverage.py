"""Issue 32 point 5: softmax values and properties, logits with a bias, the gradient beyond one
entry and the mask on attention scores are asked, with keys that hold by their own arithmetic."""
from __future__ import annotations

import math

import numpy as np
import pytest

from question_bank import generate_variant, get_family
from question_bank.seeding import variant_seed


def _by_ask(family: str, n: int = 90) -> dict[str, list[dict]]:
    asks: dict[str, list[dict]] = {}
    for i in range(n):
        variant = generate_variant(family, variant_seed(32, family, i))
        asks.setdefault(variant["parameters"]["ask"], []).append(variant)
    return asks


def _softmax(z):
    e = np.exp(np.asarray(z, dtype=float) - max(z))
    return e / e.sum()


def test_softmax_tasks_cover_bias_shift_and_mask():
    asks = _by_ask("softmax-values")
    assert set(asks) == {"probability", "shifted", "masked"}
    for variant in asks["probability"] + asks["shifted"]:
        p = variant["parameters"]
        z = np.asarray(p["hidden"]) @ np.asarray(p["W_head"]) + np.asarray(p["b_head"])
        assert variant["answer"]["value"] == pytest.approx(_softmax(z)[p["j"]], rel=1e-9)
        wrong = [c for c in variant["choices"] if not c["correct"]]
        assert all(0.0 <= c["value"] <= 1.0 for c in wrong), variant["id"]   # no probability of 3.5
    # a shift by c leaves the probability where it was: the key is the unshifted softmax, for c = 1000 too
    assert any(v["parameters"]["c"] == 1000 and "overflows" in v["stem"] for v in asks["shifted"])
    for variant in asks["masked"]:
        p = variant["parameters"]
        allowed = p["scores"][:p["query"] + 1]
        assert variant["answer"]["value"] == pytest.approx(_softmax(allowed)[p["key"]], rel=1e-9)
        assert "before the softmax" in variant["stem"] and "-\\infty" in variant["solution"]
    named = {c["misconception"]["id"] for v in asks["masked"] for c in v["choices"] if not c["correct"]}
    assert {"no-mask", "mask-with-zero"} <= named


def test_gradient_tasks_cover_a_full_row_db_head_and_dW_head():
    asks = _by_ask("head-gradient-values")
    assert set(asks) == {"dlogits_row", "db_head", "dW_head"}
    for variant in [v for vs in asks.values() for v in vs]:
        p = variant["parameters"]
        h, W, b = np.asarray(p["hidden"], float), np.asarray(p["W_head"], float), np.asarray(p["b_head"], float)
        P = np.stack([_softmax(row) for row in h @ W + b])
        Y = np.eye(len(b))[p["targets"]]
        G = (P - Y) / len(h)
        if p["ask"] == "dlogits_row":
            row = next(c["value"] for c in variant["choices"] if c["correct"])
            assert row == pytest.approx(G[p["n"]].tolist(), abs=1e-9)
            assert math.isclose(sum(row), 0.0, abs_tol=1e-9)
        elif p["ask"] == "db_head":
            assert variant["answer"]["value"] == pytest.approx(G[:, p["j"]].sum(), abs=1e-9)
        else:
            assert variant["answer"]["value"] == pytest.approx((h.T @ G)[p["c"], p["j"]], abs=1e-9)


def test_the_new_tasks_are_sub_questions_an_exam_slot_can_pin():
    assert get_family("softmax-values").subquestions() == ("probability", "shifted", "masked")
    assert get_family("head-gradient-values").subquestions() == ("dlogits_row", "db_head", "dW_head")

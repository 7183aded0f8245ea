"""Multi-part items: one scenario from a logit to a gradient entry, each part judged on its own,
a carried error said only when computed, and the item kept whole in sets, exams and exports."""
from __future__ import annotations

import io
import math

import numpy as np
import pytest

from question_bank import generate_item, generate_variant
from question_bank.answers import CARRIED_ERROR, answer_key, carried_value, judge_part
from question_bank.exam import build_exam_bundle, parse_exam_spec
from question_bank.exporters import get_exporter
from question_bank.generate import distinct_variants
from question_bank.practice import run_quiz
from question_bank.stress import item_problems

FAMILY = "logits-to-gradient"
SEEDS = range(12)


def _scenario(seed: int):
    """The item's scenario recomputed with numpy from part (a)'s printed parameters (float64)."""
    p = generate_variant(FAMILY, seed, "logit")["parameters"]
    h, W, b = (np.asarray(p[k], dtype=np.float64) for k in ("hidden", "W_head", "b_head"))
    z = h @ W + b                                               # (N, V)
    shifted = np.exp(z - z.max(axis=-1, keepdims=True))
    probs = shifted / shifted.sum(axis=-1, keepdims=True)
    targets, i = np.asarray(p["targets"]), p["position"]
    N = len(targets)
    loss = -np.log(probs[np.arange(N), targets]).mean()
    dlogits = (probs - np.eye(z.shape[1])[targets]) / N
    t = targets[i]
    return [z[i, t], probs[i, t], loss, dlogits[i, t]]


@pytest.mark.parametrize("seed", SEEDS)
def test_the_parts_share_one_scenario_and_each_key_is_numpys(seed):
    item = generate_item(FAMILY, seed)
    assert [v["part"]["label"] for v in item] == ["a", "b", "c", "d"]
    assert len({v["id"] for v in item}) == 4 and all(v["id"].endswith("-" + v["part"]["label"]) for v in item)
    scenarios = [{k: x for k, x in v["parameters"].items() if k != "part"} for v in item]
    assert all(s == scenarios[0] for s in scenarios)
    for variant, expected in zip(item, _scenario(seed)):
        assert math.isclose(variant["answer"]["value"], float(expected), rel_tol=1e-9, abs_tol=1e-12)
    assert item_problems(FAMILY, seed, generate_variant(FAMILY, seed)) == []


def test_a_seed_asks_the_same_part_as_its_item_and_every_part_is_drawn():
    drawn = set()
    for seed in range(40):
        variant = generate_variant(FAMILY, seed)
        assert generate_item(FAMILY, seed)[variant["part"]["index"]] == variant
        drawn.add(variant["parameters"]["part"])
    assert drawn == {"logit", "probability", "loss", "gradient"}


def test_one_part_draws_only_its_own_choices(monkeypatch):
    """A variant costs one part: the choice draw (the costly step) runs once, not once per part."""
    from question_bank.families import logits_to_gradient

    calls = []
    real = logits_to_gradient.numeric_options
    monkeypatch.setattr(logits_to_gradient, "numeric_options", lambda *a, **k: calls.append(1) or real(*a, **k))
    for seed in range(5):
        calls.clear()
        generate_variant(FAMILY, seed, "loss")
        assert len(calls) == 1


def test_the_parts_of_one_item_do_not_share_the_key_letter():
    """Each part's key letter is drawn apart: shared, one part's letter would give away the rest."""
    letters = [[next(c["id"] for c in v["choices"] if c["correct"]) for v in generate_item(FAMILY, seed)]
               for seed in range(30)]
    same = sum(len(set(row)) == 1 for row in letters)
    assert same <= 4, f"{same} of 30 items put every part's key under one letter (chance about 1 in 64)"


def _keys(seed: int):
    return [answer_key(v) for v in generate_item(FAMILY, seed)]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_part_right_given_a_wrong_earlier_part_is_a_carried_error(seed):
    a, b, c, d = _keys(seed)
    wrong_logit = a["value"] + 1
    carried_p = carried_value(b["part"]["carry"], wrong_logit)
    row = list(b["part"]["carry"]["row"])
    row[b["part"]["carry"]["index"]] = wrong_logit
    assert math.isclose(carried_p, float(np.exp(row[b["part"]["carry"]["index"]]) / np.exp(row).sum()), rel_tol=1e-9)
    verdict = judge_part(b, carried_p, a, wrong_logit)
    others = [m["value"] for m in b["mistakes"]] + [ch["value"] for ch in b["choices"]]
    if not any(abs(carried_p - o) <= b["atol"] + b["rtol"] * abs(o) for o in others):
        assert not verdict.correct and verdict.misconception == CARRIED_ERROR and "part (a)" in verdict.feedback
    # the same wrong probability after a right logit is no carried error
    assert judge_part(b, carried_p, a, a["value"]).misconception != CARRIED_ERROR
    # loss and gradient from a wrong probability
    p = 0.5 if abs(b["value"] - 0.5) > 0.05 else 0.25
    for later in (c, d):
        value = carried_value(later["part"]["carry"], p)
        verdict = judge_part(later, value, b, p)
        assert verdict.correct is False
        clash = any(abs(value - o) <= later["atol"] + later["rtol"] * abs(o)
                    for o in [m["value"] for m in later["mistakes"]] + [ch["value"] for ch in later["choices"]])
        assert (verdict.misconception == CARRIED_ERROR) is (not clash)
        # a right later answer stays right whatever the earlier one was
        assert judge_part(later, later["value"], b, p).correct


def test_a_carried_value_that_is_also_a_named_mistake_names_neither():
    a, b, c, d = _keys(3)
    mistake = d["mistakes"][0]["value"]
    # the probability whose carried gradient lands on that mistake
    p = mistake * d["part"]["carry"]["scale"] ** -1 - d["part"]["carry"]["offset"] / d["part"]["carry"]["scale"]
    assert math.isclose(carried_value(d["part"]["carry"], p), mistake, rel_tol=1e-9, abs_tol=1e-12)
    verdict = judge_part(d, mistake, b, p)
    assert verdict.misconception != CARRIED_ERROR


def test_typed_mistakes_are_named_per_part():
    names = {"probability": "Softmax over the wrong axis", "loss": "Forgetting the 1/N of the mean",
             "gradient": "Gradient sign flipped"}
    for seed in SEEDS:
        for variant in generate_item(FAMILY, seed)[1:]:
            key = answer_key(variant)
            wanted = names[variant["parameters"]["part"]]
            for mistake in key["mistakes"]:
                if mistake["misconception"] == wanted:
                    assert judge_part(key, mistake["value"]).misconception == wanted


def test_the_terminal_quiz_says_carried_error():
    item = generate_item(FAMILY, 5)
    a, b = answer_key(item[0]), answer_key(item[1])
    wrong = a["value"] + 2
    carried = carried_value(b["part"]["carry"], wrong)
    out = io.StringIO()
    run_quiz(item, io.StringIO(f"{wrong}\n{carried!r}\nq\n"), out)
    assert "Carried error" in out.getvalue()


def test_a_set_holds_whole_items():
    variants = distinct_variants(FAMILY, 2, 0)
    assert [v["part"]["label"] for v in variants] == list("abcd") * 2
    assert len({v["part"]["item"] for v in variants}) == 2


SPEC = {"title": "Midterm", "total": 6, "slots": [{"family": FAMILY, "points": 4},
                                                  {"family": "perplexity-from-probs", "points": 2}]}


@pytest.fixture(scope="module")
def exam_bundle():
    return build_exam_bundle(parse_exam_spec(SPEC), seed=1, students=["s1", "s2"], salt="x")


def test_an_exam_slot_holds_the_whole_item_with_its_points_split(exam_bundle):
    for sheet in exam_bundle["sheets"]:
        slot1 = [v for v in sheet["variants"] if v["slot"] == 1]
        assert [v["part"]["label"] for v in slot1] == list("abcd")
        assert sum(v["points"] for v in slot1) == 4 and len({v["part"]["item"] for v in slot1}) == 1
    single = parse_exam_spec({"slots": [{"family": FAMILY, "subquestion": "loss", "points": 1}]})
    variants = build_exam_bundle(single, seed=1)["sheets"][0]["variants"]
    assert [v["parameters"]["part"] for v in variants] == ["loss"]


def test_paper_grid_and_selfcheck_show_the_parts(exam_bundle):
    paper = get_exporter("paper").transform(exam_bundle)
    page = paper["s1.html"]
    assert all(f'id="q1{label}"' in page for label in "abcd") and 'id="q2"' in page
    grid = paper["marking-grid.html"]
    assert "(a) " in grid and "(d) " in grid
    selfcheck = get_exporter("selfcheck").transform(exam_bundle)["s1.html"]
    assert 'id="q2" data-carry-from="q1"' in selfcheck and 'id="q4" data-carry-from="q2"' in selfcheck
    assert "judgePart" in selfcheck


def test_lms_exports_keep_each_part_a_question_of_its_own():
    bundle = build_exam_bundle(parse_exam_spec(SPEC), seed=1)
    xml = get_exporter("moodle").transform(bundle)["questions.xml"]
    for label in "abcd":
        assert f"part ({label})" in xml
    assert xml.count('<question type="category">') == 5

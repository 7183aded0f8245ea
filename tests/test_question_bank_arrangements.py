"""Ordering and matching items: keys computed from the data flow and the shapes, judged with feedback that
names what is wrong, checked by stress, and printed in every export an exam slot reaches."""
from __future__ import annotations

import copy
import io
import itertools
import re

import pytest

from question_bank import generate_variant, get_family
from question_bank.answers import ResponseError, answer_key, judge, parse_response
from question_bank.exam import build_exam_bundle, parse_exam_spec
from question_bank.exporters import get_exporter
from question_bank.families import head_pass_order
from question_bank.practice import run_quiz
from question_bank.stress import arrangement_problems
from question_bank.variant import validate_variant

SEEDS = range(40)


@pytest.fixture(scope="module")
def orderings() -> list[dict]:
    return [generate_variant("head-pass-order", seed) for seed in SEEDS]


@pytest.fixture(scope="module")
def matchings() -> list[dict]:
    return [generate_variant("head-shape-matching", seed) for seed in SEEDS]


def _texts(variant: dict) -> dict[str, str]:
    return {c["id"]: c["text"] for c in variant["choices"]}


# --- ordering --------------------------------------------------------------------------------

def test_the_key_is_the_only_order_of_the_shown_lines_that_runs(orderings):
    """Every other order of the lines that belong reads a name before it exists (run, not looked up)."""
    fam = get_family("head-pass-order")
    for variant in orderings:
        key = variant["answer"]["value"]
        assert fam.arrangement_holds(variant, key), variant["id"]
        for order in itertools.permutations(key):
            if list(order) != key:
                assert not fam.arrangement_holds(variant, list(order)), (variant["id"], order)
                assert not judge(answer_key(variant), list(order)).correct


def test_the_order_follows_from_what_each_line_reads(monkeypatch):
    """The key is computed from the lines' syntax: a line that reads another name moves in the order."""
    assert head_pass_order.key_order(["loss", "logits", "pick", "exp"]) == ["logits", "exp", "pick", "loss"]
    head_pass_order.data_flow.cache_clear()
    head_pass_order.writer_of.cache_clear()
    head_pass_order.dependency_path.cache_clear()
    # exp now reads the logits directly, and shift reads e: shift must now come after exp
    monkeypatch.setitem(head_pass_order.STEPS, "exp", "e = np.exp(logits)")
    monkeypatch.setitem(head_pass_order.STEPS, "shift", "shifted = e - e.max(axis=1, keepdims=True)")
    monkeypatch.setitem(head_pass_order.STEPS, "normalise", "probs = shifted / shifted.sum(axis=1, keepdims=True)")
    try:
        assert head_pass_order.key_order(["shift", "exp", "logits"]) == ["logits", "exp", "shift"]
    finally:
        monkeypatch.undo()
        head_pass_order.data_flow.cache_clear()
        head_pass_order.writer_of.cache_clear()
        head_pass_order.dependency_path.cache_clear()


def test_the_printed_order_is_never_the_key_and_one_line_does_not_belong(orderings):
    for variant in orderings:
        key = variant["answer"]["value"]
        printed = [c["id"] for c in variant["choices"] if c["correct"]]
        assert printed not in (key, key[::-1])
        assert len(variant["choices"]) == len(key) + 1
        (wrong,) = [c for c in variant["choices"] if not c["correct"]]
        assert wrong["misconception"] and wrong["feedback"]


def test_a_swapped_pair_is_named_with_the_name_the_later_line_reads(orderings):
    variant = orderings[0]
    key = answer_key(variant)
    swapped = [key["value"][1], key["value"][0]] + key["value"][2:]
    verdict = judge(key, swapped)
    texts = _texts(variant)
    assert not verdict.correct and verdict.misconception == "A step placed before the step it uses"
    assert verdict.feedback.startswith(f"({swapped[0]}) {texts[swapped[0]]} is placed before "
                                       f"({swapped[1]}) {texts[swapped[1]]}, but it must come after it: it reads")


def test_the_wrong_line_is_named_for_its_mistake_and_a_left_out_line_is_named(orderings):
    for variant in orderings[:10]:
        key = answer_key(variant)
        (wrong,) = [c for c in variant["choices"] if not c["correct"]]
        response = [wrong["id"]] + key["value"][1:]
        verdict = judge(key, response)
        assert verdict.misconception == wrong["misconception"]["name"]
        assert f"({wrong['id']}) {wrong['text']} does not belong: {wrong['feedback']}" in verdict.feedback
        assert f"You left out ({key['value'][0]})" in verdict.feedback


def test_the_check_runs_the_lines_and_rejects_a_wrong_line_in_its_step(orderings):
    fam = get_family("head-pass-order")
    for variant in orderings[:10]:
        assert fam.check(variant) == []
        bad = copy.deepcopy(variant)
        (wrong,) = [c for c in bad["choices"] if not c["correct"]]
        step = head_pass_order.WRONG_LINES[wrong["value"]].step
        right = next(c for c in bad["choices"] if c["value"] == step)
        right["value"], wrong["value"] = wrong["value"], right["value"]   # the wrong line taken as the key's
        assert fam.check(bad) != [], variant["id"]


@pytest.mark.parametrize("text, expected", [("e a c d", ["e", "a", "c", "d"]), ("e,a,c,d", ["e", "a", "c", "d"]),
                                            ("EACD", ["e", "a", "c", "d"]), ("e-a-c-d", ["e", "a", "c", "d"])])
def test_letters_are_read_in_the_usual_forms(orderings, text, expected):
    variant = next(v for v in orderings if len(v["answer"]["value"]) == 4 and len(v["choices"]) == 5)
    assert parse_response(text, answer_key(variant)) == expected


@pytest.mark.parametrize("text, message", [("e a c", "as 4 letters"), ("e e c d", "is given twice"),
                                           ("e a c z", "from a, b, c, d, e")])
def test_unreadable_orders_say_what_to_type(orderings, text, message):
    variant = next(v for v in orderings if len(v["answer"]["value"]) == 4 and len(v["choices"]) == 5)
    with pytest.raises(ResponseError, match=message):
        parse_response(text, answer_key(variant))


# --- matching --------------------------------------------------------------------------------

def test_no_key_is_the_only_option_with_its_number_of_axes(matchings):
    for variant in matchings:
        axes = [len(c["value"]) for c in variant["choices"]]
        for cid in variant["answer"]["value"]:
            shape = next(c["value"] for c in variant["choices"] if c["id"] == cid)
            assert axes.count(len(shape)) >= 2, variant["id"]
        assert len(variant["choices"]) > len(variant["answer"]["slots"])


def test_the_matching_key_is_each_items_shape_at_the_drawn_sizes(matchings):
    for variant in matchings:
        p = variant["parameters"]
        B, T, C, V = p["B"], p["T"], p["C"], p["V"]
        table = {"hidden": [B, T, C], "dhidden": [B, T, C], "W_head": [C, V], "dW_head": [C, V], "b_head": [V],
                 "db_head": [V], "logits": [B, T, V], "dlogits": [B, T, V], "targets": [B, T]}
        values = {c["id"]: c["value"] for c in variant["choices"]}
        assert [values[cid] for cid in variant["answer"]["value"]] == [table[item] for item in p["items"]]


def test_each_wrong_pair_names_whose_shape_it_is_and_the_items_rule(matchings):
    variant = matchings[0]
    key = answer_key(variant)
    response = key["value"][1:] + key["value"][:1]          # every item given another item's shape
    verdict = judge(key, response)
    assert not verdict.correct
    slot = variant["answer"]["slots"][0]
    picked = _texts(variant)[response[0]]
    assert verdict.feedback.startswith(f"{slot['text']} is not ({response[0]}) {picked}: {picked} is the shape of `")
    assert "a gradient has its tensor's shape" in verdict.feedback or ": (" in verdict.feedback


def test_validation_refuses_a_matching_with_no_option_left_over(matchings):
    bad = copy.deepcopy(matchings[0])
    left_over = [c["id"] for c in bad["choices"] if not c["correct"]]
    bad["choices"] = [c for c in bad["choices"] if c["correct"]]
    for slot in bad["answer"]["slots"]:
        for cid in left_over:
            slot["wrong"].pop(cid, None)
    assert any("the last pair would be free" in p for p in validate_variant(bad))


# --- stress ----------------------------------------------------------------------------------

def test_stress_finds_a_judge_that_accepts_a_wrong_arrangement(orderings, monkeypatch):
    fam = get_family("head-pass-order")
    assert arrangement_problems(fam, orderings[0], thorough=True) == []
    monkeypatch.setattr("question_bank.stress.judge", lambda key, response: type("V", (), {"correct": True})())
    assert any("the judge accepts" in p for p in arrangement_problems(fam, orderings[0]))


def test_stress_finds_steps_printed_in_the_keys_order(orderings):
    variant = copy.deepcopy(orderings[0])
    by_id = {c["id"]: c for c in variant["choices"]}
    (wrong,) = [c for c in variant["choices"] if not c["correct"]]
    order = variant["answer"]["value"] + [wrong["id"]]
    variant["choices"] = [by_id[cid] for cid in order]   # printed in the key's order (ids kept)
    assert "the steps are printed in the key's order (or its reverse)" in \
        arrangement_problems(get_family("head-pass-order"), variant)


def test_stress_finds_a_key_alone_with_its_number_of_axes(matchings):
    variant = copy.deepcopy(matchings[0])
    keys = set(variant["answer"]["value"])
    for choice in variant["choices"]:
        if choice["id"] not in keys:
            choice["text"] = "`(" + ", ".join(["7"] * 5) + ")`"   # left-over options all five-axis
    assert any("the only ones with their number of axes" in p
               for p in arrangement_problems(get_family("head-shape-matching"), variant))


# --- exams and exports -----------------------------------------------------------------------

SPEC = {"title": "Quiz", "total": 5, "slots": [
    {"family": "head-pass-order", "subquestion": "loss", "points": 3},
    {"family": "head-shape-matching", "points": 2}]}


@pytest.fixture(scope="module")
def exam_bundle() -> dict:
    return build_exam_bundle(parse_exam_spec(SPEC), seed=5, students=["ada", "bo"], salt="pepper")


def test_an_exam_slot_asks_the_same_ordering_task_of_everyone(exam_bundle):
    for sheet in exam_bundle["sheets"]:
        order, matching = sheet["variants"]
        assert order["answer"]["kind"] == "ordering" and order["parameters"]["target"] == "loss"
        assert matching["answer"]["kind"] == "matching"


def test_the_paper_exam_has_a_letter_box_per_slot_and_the_grid_the_letters(exam_bundle):
    files = get_exporter("paper").transform(exam_bundle)
    exam = files["ada.html"]
    order, matching = exam_bundle["sheets"][0]["variants"]
    boxes = len(order["answer"]["slots"]) + len(matching["answer"]["slots"])
    assert exam.count('<span class="letter-box"></span>') == boxes
    assert "one line is left out" in exam and "some shapes are left over" in exam
    grid = files["marking-grid.html"]
    assert f'<td class="key">{",".join(order["answer"]["value"])}</td>' in grid
    assert f'<td class="key">{",".join(matching["answer"]["value"])}</td>' in grid


def test_the_worksheet_key_and_student_json_show_slots_without_the_key(exam_bundle):
    order = exam_bundle["sheets"][0]["variants"][0]
    md = get_exporter("md").transform(exam_bundle)
    assert "Step 1: ____" in md["ada.md"]
    letters = "; ".join(f"Step {k}: ({cid})" for k, cid in enumerate(order["answer"]["value"], start=1))
    assert f"**Answer:** {letters}." in md["answer-key.md"]
    student = get_exporter("json").transform(exam_bundle)["ada.json"]
    assert '"Step 1"' in student and '"rules"' not in student and '"wrong"' not in student


def test_the_terminal_quiz_takes_letters_and_names_a_swap(exam_bundle):
    order = exam_bundle["sheets"][0]["variants"][0]
    key = order["answer"]["value"]
    answers = io.StringIO(" ".join([key[1], key[0]] + key[2:]) + "\n" + " ".join(key) + "\n")
    out = io.StringIO()
    result = run_quiz([order, order], answers, out)
    assert result.right == 1
    shown = " ".join(out.getvalue().split())        # the quiz wraps its text
    assert "Not right: A step placed before the step it uses." in shown
    assert "is placed before" in shown and "but it must come after it: it reads" in shown


def test_lms_exports_hold_a_matching_per_arrangement(exam_bundle):
    pool = build_exam_bundle(parse_exam_spec(SPEC), seed=5, pool=2)
    moodle = get_exporter("moodle").transform(pool)["questions.xml"]
    assert moodle.count('<question type="matching">') == 4
    assert re.search(r"<subquestion format=\"html\">\s*<text><!\[CDATA\[\]\]></text>", moodle)  # a left-over option
    import zipfile
    with zipfile.ZipFile(io.BytesIO(get_exporter("qti").transform(pool)["questions.zip"])) as archive:
        xml = "".join(archive.read(n).decode() for n in archive.namelist())
    assert xml.count("<fieldentry>matching_question</fieldentry>") == 4

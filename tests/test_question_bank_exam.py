"""Does an exam spec give every student the same task in each slot, in every export?"""
from __future__ import annotations

import io
import json
import re
import xml.etree.ElementTree as ET
import zipfile

import pytest
from click.testing import CliRunner

from autograder.cli import main
from question_bank.errors import QuestionBankError
from question_bank.exam import build_exam_bundle, parse_exam_spec
from question_bank.exporters import get_exporter
from question_bank.exporters._lms import stable_id
from question_bank.practice import draw_exam_quiz, run_quiz
from question_bank.registry import get_family

SPEC = {
    "title": "Midterm B",
    "total": 10,
    "slots": [
        {"family": "param-count", "subquestion": "total", "points": 4},
        {"family": "lm-head-shapes", "subquestion": "logits", "points": 2},
        {"family": "causal-mask", "subquestion": "blocked_count", "points": 1.5},
        {"family": "perplexity-from-probs", "points": 2.5},
    ],
}
STUDENTS = ["ada", "bo", "cy", "di"]
TASKS = [(s["family"], s.get("subquestion", "")) for s in SPEC["slots"]]
POINTS = [s["points"] for s in SPEC["slots"]]
TITLES = [get_family(f).title for f, _ in TASKS]


def _task(variant):
    return variant["family"], get_family(variant["family"]).subquestion(variant["parameters"])


@pytest.fixture(scope="module")
def spec():
    return parse_exam_spec(SPEC)


@pytest.fixture(scope="module")
def class_bundle(spec):
    return build_exam_bundle(spec, seed=5, students=STUDENTS, salt="s3cret")


@pytest.fixture(scope="module")
def pool_bundle(spec):
    return build_exam_bundle(spec, seed=5, pool=3)


def test_slot_k_is_the_same_task_for_every_student(class_bundle):
    stems = set()
    for sheet in class_bundle["sheets"]:
        assert [_task(v) for v in sheet["variants"]] == TASKS
        assert [v["points"] for v in sheet["variants"]] == POINTS
        assert [v["slot"] for v in sheet["variants"]] == [1, 2, 3, 4]
        stems.add(sheet["variants"][0]["stem"])
    assert len(stems) == len(STUDENTS)     # same task, different numbers


def test_a_slot_pool_holds_one_task_with_different_stems(pool_bundle):
    variants = pool_bundle["sheets"][0]["variants"]
    for k, task in enumerate(TASKS, start=1):
        members = [v for v in variants if v["slot"] == k]
        assert len(members) == 3 and {_task(v) for v in members} == {task}
        assert len({v["stem"] for v in members}) == 3


def _headings(text: str, pattern: str) -> list[str]:
    return re.findall(pattern, text)


@pytest.mark.parametrize("fmt, suffix, pattern", [
    ("md", ".md", r"^## \d+\. (.+)$"),
    ("html", ".html", r"<h2>\d+\. (.+?)</h2>"),
    ("selfcheck", ".html", r"<h2>\d+\. (.+?)</h2>"),
])
def test_printable_and_selfcheck_sheets_follow_the_slots(class_bundle, fmt, suffix, pattern):
    files = get_exporter(fmt).transform(class_bundle)
    expected = [f"{t} ({p:g} point{'' if p == 1 else 's'})" for t, p in zip(TITLES, POINTS)]
    for student in STUDENTS:
        assert _headings(files[student + suffix], re.compile(pattern, re.M)) == expected, (fmt, student)


def test_notebook_cells_follow_the_slots(class_bundle):
    files = get_exporter("notebook").transform(class_bundle)
    for student in STUDENTS:
        cells = json.loads(files[student + ".ipynb"])["cells"]
        headings = [line for c in cells if c["cell_type"] == "markdown"
                    for line in "".join(c["source"]).splitlines() if re.match(r"## \d+\. ", line)]
        assert [h.split(". ", 1)[1] for h in headings] == [
            f"{t} ({p:g} point{'' if p == 1 else 's'})" for t, p in zip(TITLES, POINTS)]


def test_student_json_carries_slot_and_points(class_bundle):
    files = get_exporter("json").transform(class_bundle)
    for student in STUDENTS:
        questions = json.loads(files[student + ".json"])["questions"]
        assert [(q["family"], q["slot"], q["points"]) for q in questions] == [
            (f, k, p) for k, ((f, _), p) in enumerate(zip(TASKS, POINTS), start=1)]
    key = json.loads(files["answer-key.json"])
    assert key["exam"]["total"] == 10 and [s["subquestion"] for s in key["exam"]["slots"]][:3] == [
        "total", "logits", "blocked_count"]


def test_terminal_quiz_asks_the_slots_in_order(tmp_path):
    path = tmp_path / "exam.yaml"
    path.write_text(json.dumps(SPEC), encoding="utf-8")    # JSON is YAML
    variants = draw_exam_quiz(path, (), seed=3)
    assert [_task(v) for v in variants] == TASKS
    out = io.StringIO()
    run_quiz(variants, io.StringIO("skip\n" * len(TASKS)), out)
    asked = re.findall(r"Question \d of 4: (.+)", out.getvalue())
    assert asked == [f"{t} ({p:g} point{'' if p == 1 else 's'})" for t, p in zip(TITLES, POINTS)]


def test_canvas_groups_are_slots_with_their_points(pool_bundle):
    archive = zipfile.ZipFile(io.BytesIO(get_exporter("qti").transform(pool_bundle)["questions.zip"]))
    name = next(n for n in archive.namelist() if n != "imsmanifest.xml")
    ns = {"q": "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"}
    root = ET.fromstring(archive.read(name))
    groups = root.findall(".//q:section[@ident='root_section']/q:section", ns)
    assert len(groups) == len(TASKS)
    variants = pool_bundle["sheets"][0]["variants"]
    for k, (group, points) in enumerate(zip(groups, POINTS), start=1):
        assert group.find(".//q:selection_number", ns).text == "1"
        assert float(group.find(".//q:points_per_item", ns).text) == points
        idents = [item.get("ident") for item in group.findall("q:item", ns)]
        assert idents == [stable_id("i", v["id"]) for v in variants if v["slot"] == k]
        possible = [f.find("q:fieldentry", ns).text for f in group.iter("{%s}qtimetadatafield" % ns["q"])
                    if f.find("q:fieldlabel", ns).text == "points_possible"]
        assert [float(p) for p in possible] == [points] * 3


def test_moodle_categories_are_slots_with_their_points(pool_bundle):
    quiz = ET.fromstring(get_exporter("moodle").transform(pool_bundle)["questions.xml"])
    categories: list[list[ET.Element]] = []
    for question in quiz:
        if question.get("type") == "category":
            categories.append([])
        else:
            categories[-1].append(question)
    assert len(categories) == len(TASKS)
    variants = pool_bundle["sheets"][0]["variants"]
    for k, (members, points) in enumerate(zip(categories, POINTS), start=1):
        assert [float(q.find("defaultgrade").text) for q in members] == [points] * 3
        stems = [v["stem"] for v in variants if v["slot"] == k]
        assert len(members) == len(stems) == 3


@pytest.mark.parametrize("change, message", [
    ({"slots": [{"family": "param-count", "points": 1}], "total": 1}, "add `subquestion:`"),
    ({"slots": [{"family": "param-count", "subquestion": "heads", "points": 1}], "total": 1}, "allowed: embeddings"),
    ({"slots": [{"family": "perplexity-from-probs", "points": 1}], "total": 2}, "add up to 1"),
    ({"slots": [{"family": "perplexity-from-probs", "points": -1}]}, "positive number"),
    ({"slots": [{"family": "perplexity-from-probs", "subquestion": "log"}]}, "one task"),
])
def test_spec_mistakes_are_named(change, message):
    with pytest.raises(QuestionBankError, match=re.escape(message)):
        parse_exam_spec({**SPEC, **change})


def test_generate_command_builds_one_exam_per_student(tmp_path):
    spec = tmp_path / "exam.yaml"
    spec.write_text("title: Quiz\ntotal: 3\nslots:\n  - {family: causal-mask, subquestion: allowed_count, points: 3}\n",
                    encoding="utf-8")
    roster = tmp_path / "roster.csv"
    roster.write_text("student_id\nada\nbo\n", encoding="utf-8")
    out = tmp_path / "exams"
    result = CliRunner().invoke(main, ["questions", "generate", "--exam", str(spec), "--students", str(roster),
                                       "--salt", "x", "--format", "md", "-o", str(out)])
    assert result.exit_code == 0, result.output
    for student in ("ada", "bo"):
        text = (out / f"{student}.md").read_text(encoding="utf-8")
        assert "## 1. Allowed and blocked pairs of a causal mask (3 points)" in text and "remain **allowed**" in text


# --- tolerance: the worked solution's rounded steps, and an exam's own -------------------------

from question_bank import formatting as fmt  # noqa: E402
from question_bank.generate import generate_variant  # noqa: E402
from question_bank.seeding import variant_seed  # noqa: E402
from question_bank.variant import answer_matches  # noqa: E402
from solutions import sequence_log_prob  # noqa: E402


def _printed(x: float) -> float:
    return float(fmt.num(x).replace(",", ""))


def test_a_log_ratio_worked_from_the_printed_logs_is_accepted():
    """ln P_full and ln P_bigram are printed to 4 figures; their difference may lose most of them."""
    checked = 0
    for index in range(600):
        variant = generate_variant("bigram-vs-full", variant_seed(11, "bigram-vs-full", index))
        if variant["parameters"]["ask"] != "log_ratio":
            continue
        p = variant["parameters"]
        by_hand = _printed(sequence_log_prob(p["full"])) - _printed(sequence_log_prob(p["bigram"]))
        assert answer_matches(variant["answer"], by_hand), (variant["id"], variant["answer"], by_hand)
        assert not any(answer_matches(variant["answer"], m["value"]) for m in variant["mistakes"])
        checked += 1
    assert checked > 200


def test_printed_error_is_half_a_unit_in_the_last_printed_digit():
    assert fmt.printed_error(-5.123) == pytest.approx(5e-4)
    assert fmt.printed_error(0.05525) == pytest.approx(5e-6)
    assert fmt.printed_error(1234.5) == pytest.approx(0.5)


TOLERANT = {"title": "Quiz", "total": 2, "tolerance": {"sig_figs": 3},
            "slots": [{"family": "perplexity-from-probs", "points": 1},
                      {"family": "uniform-baseline", "subquestion": "loss_nats", "points": 1}]}


def test_an_exam_tolerance_reaches_every_number_answer_and_export():
    bundle = build_exam_bundle(parse_exam_spec(TOLERANT), seed=2, pool=2)
    variants = bundle["sheets"][0]["variants"]
    assert {v["answer"]["rtol"] for v in variants} == {0.005}
    for v in variants:
        value = v["answer"]["value"]
        assert answer_matches(v["answer"], value * 1.004) and not answer_matches(v["answer"], value * 1.006)
    moodle = ET.fromstring(get_exporter("moodle").transform(bundle)["questions.xml"])
    right = [a for a in moodle.iter("answer") if a.get("fraction") == "100" and a.find("tolerance") is not None]
    assert len(right) == len(variants)
    for answer in right:
        value = float(answer.find("text").text)
        assert float(answer.find("tolerance").text) == pytest.approx(0.005 * abs(value), rel=1e-3)
    page = get_exporter("selfcheck").transform(bundle)["questions.html"]
    assert "accepted within 0.5%" in page


def test_an_exam_tolerance_never_accepts_a_known_mistake():
    wide = {**TOLERANT, "tolerance": {"rtol": 0.2}}     # without the skip, two draws would accept a mistake
    bundle = build_exam_bundle(parse_exam_spec(wide), seed=2, pool=3)
    for v in bundle["sheets"][0]["variants"]:
        assert v["answer"]["rtol"] == 0.2
        assert not any(answer_matches(v["answer"], m["value"]) for m in v["mistakes"]), v["id"]


@pytest.mark.parametrize("tolerance, message", [
    ({"sig_figs": 2.5}, "whole number"), ({"rtol": -1}, "positive number"), ({"digits": 3}, "rtol, atol"),
])
def test_tolerance_mistakes_are_named(tolerance, message):
    with pytest.raises(QuestionBankError, match=re.escape(message)):
        parse_exam_spec({**TOLERANT, "tolerance": tolerance})

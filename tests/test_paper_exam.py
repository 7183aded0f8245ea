"""Does `--format paper` print one exam per roster row, with its header, points, answer boxes and
a marking grid whose keys are the keys every other export carries?"""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli_questions import questions
from question_bank.exam import build_exam_bundle, parse_exam_spec
from question_bank.exporters import get_exporter

SPEC = """\
title: Midterm <B>
course: LM 101 & friends
date: 2025-03-14 10:00
duration: 90 minutes
total: 10
slots:
  - {family: param-count, subquestion: total, points: 3}
  - {family: lm-head-shapes, subquestion: logits, points: 2}
  - {family: causal-mask, subquestion: blocked_pairs, points: 1.5}
  - {family: perplexity-from-probs, points: 1.5}
  - {family: misconceptions-true-false, points: 1}
  - {family: greedy-next-token, points: 1}
"""
POINTS = [3, 2, 1.5, 1.5, 1, 1]
#: A name with markup, an id with markup, and a row without a name.
ROSTER = 'student_id,name\nada,Ada Lovelace\nbo,"<script>alert(1)</script> Bo"\n<i>cy</i>,\n'
ROWS = [("ada", "Ada Lovelace"), ("bo", "<script>alert(1)</script> Bo"), ("<i>cy</i>", "")]
FILES = {"ada": "ada.html", "bo": "bo.html", "<i>cy</i>": "_i_cy__i_.html"}


def generate(tmp_path: Path, fmt: str, out: str, *extra: str):
    (tmp_path / "exam.yaml").write_text(SPEC, encoding="utf-8")
    (tmp_path / "roster.csv").write_text(ROSTER, encoding="utf-8")
    return CliRunner().invoke(questions, ["generate", "--exam", str(tmp_path / "exam.yaml"), "--format", fmt,
                                          "--seed", "3", "-o", str(tmp_path / out), *extra])


@pytest.fixture(scope="module")
def class_dir(tmp_path_factory) -> Path:
    """The paper exams of the roster and, beside them, the JSON export of the same seed and roster."""
    tmp_path = tmp_path_factory.mktemp("paper")
    for fmt in ("paper", "json"):
        result = generate(tmp_path, fmt, fmt, "--students", str(tmp_path / "roster.csv"), "--salt", "pepper")
        assert result.exit_code == 0, result.output
    return tmp_path


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def exams_in(page: str) -> list[str]:
    return re.findall(r'<article class="exam">.*?</article>', page, flags=re.S)


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup)).strip()


# --- one exam per roster row, each with its header ------------------------------------------------

def test_one_exam_per_roster_row_in_roster_order(class_dir):
    out = class_dir / "paper"
    assert sorted(p.name for p in out.iterdir()) == sorted([*FILES.values(), "all-exams.html", "marking-grid.html"])
    combined = exams_in(read(out / "all-exams.html"))
    assert len(combined) == len(ROWS)
    for exam, (student, _) in zip(combined, ROWS):
        own = exams_in(read(out / FILES[student]))
        assert own == [exam]
        assert f"<code>{html.escape(student)}</code>" in exam


def test_the_header_prints_course_title_student_date_time_and_total(class_dir):
    exam = exams_in(read(class_dir / "paper" / "ada.html"))[0]
    header = text_of(exam.split("</header>")[0])
    for part in ("LM 101 & friends", "Midterm <B>", "Ada Lovelace", "ada", "2025-03-14 10:00", "90 minutes",
                 "Total: 10 points in 6 questions"):
        assert part in header


def test_roster_names_and_ids_with_markup_are_printed_as_text(class_dir):
    out = class_dir / "paper"
    for name in ("all-exams.html", "marking-grid.html", "bo.html", FILES["<i>cy</i>"]):
        page = read(out / name)
        assert "<script>" not in page and "<i>cy" not in page
    for name in ("all-exams.html", "marking-grid.html"):
        page = read(out / name)
        assert "&lt;script&gt;alert(1)&lt;/script&gt; Bo" in page and "&lt;i&gt;cy&lt;/i&gt;" in page


def test_every_slot_shows_its_points_on_every_exam(class_dir):
    for exam in exams_in(read(class_dir / "paper" / "all-exams.html")):
        headings = re.findall(r'<h2><span>(\d+)\..*?</span><span class="mark">___ / (.+?)</span></h2>', exam)
        assert headings == [(str(k), f"{p:g} point{'' if p == 1 else 's'}") for k, p in enumerate(POINTS, 1)]
        score_row = re.search(r"<tr><th>Points</th>(.*?)</tr>", exam).group(1)
        assert re.findall(r"<td>/ ([\d.]+)</td>", score_row) == [f"{p:g}" for p in POINTS] + ["10"]


def test_written_answers_get_a_box_by_kind_and_choices_get_tick_boxes(class_dir):
    """Numbers and shapes are written (no lettered choices to read the key from); a box's size
    depends on the answer kind only, so every student's exam has the same boxes."""
    exams = exams_in(read(class_dir / "paper" / "all-exams.html"))
    boxes = [re.findall(r'<span class="answer-box (answer-\w+)"></span>', exam) for exam in exams]
    assert boxes == [["answer-integer", "answer-shape", "answer-float"]] * len(ROWS)
    for exam in exams:
        sections = re.findall(r'<section class="item".*?</section>', exam, flags=re.S)
        ticks = [s.count('class="tick"') for s in sections]
        assert ticks[:2] == [0, 0] and ticks[3] == 0           # written answers: no choices at all
        assert ticks[2] >= 4 and ticks[4] == 2 and ticks[5] >= 3
        assert [re.search(r'class="work work-(\w+)"', s).group(1) for s in sections] == [
            "integer", "shape", "multiple_choice", "float", "true_false", "single_choice"]


# --- the marking grid -------------------------------------------------------------------------

def grid_rows(page: str) -> list[list[str]]:
    """Each student's cells (name, id, then each slot's key), joined across the grid's tables."""
    tables = [[[text_of(c) for c in re.findall(r"<td(?: class=\"key\")?>(.*?)</td>", row, flags=re.S)]
               for row in re.findall(r"<tr>(.*?)</tr>", body, flags=re.S)]
              for body in re.findall(r'<table class="grid">.*?<tbody>(.*?)</tbody>', page, flags=re.S)]
    return [first + [key for table in tables[1:] for key in table[k][2:]] for k, first in enumerate(tables[0])]


def expected_key(variant: dict) -> str:
    answer = variant["answer"]
    if answer["kind"] in ("single_choice", "multiple_choice"):
        return ",".join(c["id"] for c in variant["choices"] if c["correct"])
    if answer["kind"] == "shape":
        return answer["display"].replace(" ", "")
    return answer["display"] + (f" {answer['unit']}" if answer["unit"] else "")


def test_the_grid_holds_every_students_keys_as_the_json_key_of_the_same_seed(class_dir):
    key = json.loads(read(class_dir / "json" / "answer-key.json"))
    rows = grid_rows(read(class_dir / "paper" / "marking-grid.html"))
    assert [row[:2] for row in rows] == [[name, student] for student, name in ROWS]
    assert [row[2:] for row in rows] == [[expected_key(v) for v in sheet["variants"]] for sheet in key["sheets"]]
    assert len({tuple(row[2:]) for row in rows}) == len(ROWS)    # the keys are each student's own


def test_each_students_compact_key_names_the_variants_of_their_exam(class_dir):
    key = json.loads(read(class_dir / "json" / "answer-key.json"))
    page = read(class_dir / "paper" / "marking-grid.html")
    blocks = re.findall(r'<div class="student-key">.*?</div>', page, flags=re.S)
    assert len(blocks) == len(ROWS)
    for block, sheet in zip(blocks, key["sheets"]):
        assert html.escape(sheet["student_id"]) in block
        assert re.findall(r"<code>([\w-]+-v\d+-\d+)</code>", block) == [v["id"] for v in sheet["variants"]]
        assert "accepted within" in block                         # the float slot's tolerance


# --- without a roster, and what is refused ----------------------------------------------------

def test_without_a_roster_one_exam_has_blank_name_and_id_fields(tmp_path):
    result = generate(tmp_path, "paper", "midterm.html")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.glob("midterm*")) == ["midterm-marking-grid.html", "midterm.html"]
    exam = exams_in(read(tmp_path / "midterm.html"))
    assert len(exam) == 1
    assert "<tr><th>Name</th><td></td><th>Student ID</th><td></td></tr>" in exam[0]


@pytest.mark.parametrize("args, message", [
    (["-f", "tied-weights"], "--format paper prints an exam: pass --exam SPEC.yaml"),
    (["--exam", "EXAM", "-n", "3"], "one question per slot, but -n 3 asks for a pool per slot"),
])
def test_paper_refuses_what_it_cannot_print(tmp_path, args, message):
    (tmp_path / "exam.yaml").write_text(SPEC, encoding="utf-8")
    args = [str(tmp_path / "exam.yaml") if a == "EXAM" else a for a in args]
    result = CliRunner().invoke(questions, ["generate", "--format", "paper", "-o", str(tmp_path / "x.html"), *args])
    assert result.exit_code == 1 and message in result.output


def test_a_student_id_cannot_overwrite_the_marking_grid():
    spec = parse_exam_spec({"slots": [{"family": "perplexity-from-probs"}]})
    bundle = build_exam_bundle(spec, students=["marking-grid"], salt="x")
    with pytest.raises(Exception, match="rename that id"):
        get_exporter("paper").transform(bundle)


# --- the roster's names ---------------------------------------------------------------------------

@pytest.mark.parametrize("content, expected", [
    ("student_id,name\na1,Ada  Lovelace\n", [("a1", "Ada Lovelace")]),
    ('Student,ID\n"Lovelace, Ada",7\n', [("7", "Lovelace, Ada")]),          # a Canvas gradebook export
    ("First name,Surname,email\nAda,Lovelace,ada@x.org\n", [("ada@x.org", "Ada Lovelace")]),
    ("sid\nz1\n", [("z1", "")]),
])
def test_roster_names_come_from_the_usual_columns(tmp_path, content, expected):
    from question_bank.roster import read_roster_entries

    path = tmp_path / "roster.csv"
    path.write_text(content, encoding="utf-8")
    assert [(e.student_id, e.name) for e in read_roster_entries(path)] == expected


def test_a_long_exams_grid_is_split_into_tables_of_six_slots_holding_every_key():
    slots = [{"family": "param-count", "subquestion": "total"}, {"family": "lm-head-shapes", "subquestion": "logits"},
             {"family": "causal-mask", "subquestion": "blocked_pairs"}] * 3
    bundle = build_exam_bundle(parse_exam_spec({"slots": slots}), seed=2, students=["ada", "bo"], salt="x")
    page = get_exporter("paper").transform(bundle)["marking-grid.html"]
    heads = re.findall(r'<table class="grid"><thead><tr><th>Student</th><th>ID</th>(.*?)</tr>', page)
    assert [re.findall(r"<th>(\d+) ", head) for head in heads] == [["1", "2", "3", "4", "5", "6"], ["7", "8", "9"]]
    assert [row[2:] for row in grid_rows(page)] == [[expected_key(v) for v in s["variants"]] for s in bundle["sheets"]]

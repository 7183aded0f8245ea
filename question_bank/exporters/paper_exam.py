"""Paper exam export: one printable exam per student, and the class's marking grid.

``--format paper`` needs an exam spec (``--exam``): the header prints its
course, title, date, time allowed and total, each question its slot's points.
Number, integer and shape answers are written into a box, with no lettered
choices, so a printed exam carries none of the choice-layout cues that
``stress`` measures; choice and true/false questions keep their choices, with a
tick box each. Boxes and working space are sized by the answer's kind only,
never by the answer itself, so a box's width does not tell how long the answer
is.

Files, with a roster (``-o DIR``): ``<id>.html`` per student,
``all-exams.html`` with every exam in roster order (each starting on a new
page, to print the class in one job) and ``marking-grid.html``. Without a
roster: one exam with blank name and id fields at ``-o FILE.html`` and
``FILE-marking-grid.html`` beside it.

Everything taken from the roster (ids, names) is untrusted text and is
escaped; so is the spec's text.
"""
from __future__ import annotations

import html
from typing import Any

from question_bank.errors import QuestionBankError, RosterError
from question_bank.exporters import Files, register_exporter, sheet_file_names
from question_bank.exporters._markup import inline, mathml, to_html
from question_bank.exporters._page import BASE_CSS, document
from question_bank.exporters.marking_grid import GRID_STEM, render_marking_grid

#: The file holding every student's exam, one after the other.
ALL_EXAMS_STEM = "all-exams"

#: Kinds answered by ticking lettered choices; every other kind is written into a box.
TICKED_KINDS = ("single_choice", "multiple_choice", "true_false")

_WRITE_INSTRUCTION = {
    "float": "Write a number to 4 significant figures.",
    "integer": "Write the exact whole number.",
    "shape": "Write the shape, e.g. (2, 3).",
    "single_choice": "Tick one box.",
    "multiple_choice": "Tick every box that applies.",
    "true_false": "Tick True or False.",
    "ordering": "Write the letter of the line that runs at each step; one line is left out.",
    "matching": "Write the letter of each item's shape; some shapes are left over.",
}

#: Kinds answered with one letter per slot, each written into a small box.
SLOTTED_KINDS = ("ordering", "matching")

#: Margins that fit both A4 (210 x 297 mm) and US Letter (216 x 279 mm): the page size is left
#: to the printer, so the same file prints on either; content is at most 180 mm wide.
PAPER_CSS = BASE_CSS + """\
@page { margin: 15mm; }
body { font-size: 11pt; }
.exam + .exam { break-before: page; }
.exam-head h1 { margin: 0.2rem 0 0.6rem; }
.course { margin: 0; font-weight: 600; color: #55555b; }
table.fields, table.scores { width: 100%; table-layout: fixed; }
table.fields th { width: 22%; } table.fields td { height: 8mm; }
table.scores th, table.scores td { text-align: center; padding: 0.1rem; font-size: 9pt; }
table.scores td { height: 8mm; }
.instructions { font-size: 10pt; }
.exam .item h2 { display: flex; justify-content: space-between; gap: 1rem; }
.mark { font-weight: normal; white-space: nowrap; }
.answer-line { margin: 0.5rem 0; }
.answer-box { display: inline-block; width: 75mm; height: 11mm; border: 1.5px solid #1d1d1f;
              vertical-align: middle; margin: 0 0.4rem; }
.tick { display: inline-block; width: 4mm; height: 4mm; border: 1.2px solid #1d1d1f;
        vertical-align: -0.6mm; margin-right: 0.5rem; }
.ticked li { margin: 0.35rem 0; }
.work { border: 1px dashed #9a9aa0; border-radius: 3px; margin: 0.4rem 0 0; }
.work::before { content: "Working"; font-size: 8pt; color: #8a8a90; padding: 0.1rem 0.3rem; }
.work-float { height: 50mm; } .work-integer { height: 40mm; } .work-shape { height: 30mm; }
.work-single_choice, .work-multiple_choice { height: 20mm; } .work-true_false { height: 12mm; }
.work-ordering, .work-matching { height: 20mm; }
.letters { list-style: none; padding-left: 0.5rem; }
.letters li { margin: 0.35rem 0; }
.letter-box { display: inline-block; width: 9mm; height: 9mm; border: 1.5px solid #1d1d1f;
              vertical-align: middle; margin-left: 0.5rem; }
@media print { body { padding: 0; font-size: 11pt; } .display-math { overflow: visible; } }
"""


@register_exporter("paper", ".html", "Printable paper exam per student (header, points, answer boxes) "
                   "and a marking grid; needs --exam")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> each student's exam, all exams in one file (with a roster) and the marking grid.

    Raises:
        QuestionBankError: without an exam spec, or with more than one question per slot.
        RosterError: when a student's file would overwrite the combined files.
    """
    exam = _exam_record(bundle)
    names = sheet_file_names(bundle, ".html")
    reserved = {ALL_EXAMS_STEM + ".html", GRID_STEM + ".html"} & set(names)
    if reserved:
        raise RosterError(f"a student id {sorted(reserved)[0].removesuffix('.html')!r} would overwrite the file of "
                          "the same name that --format paper writes; rename that id in the roster.")
    exams = [exam_html(exam, sheet) for sheet in bundle["sheets"]]
    title = exam["title"]
    files: Files = {name: document(title, body, PAPER_CSS) for name, body in zip(names, exams)}
    if bundle["personalised"]:
        files[ALL_EXAMS_STEM + ".html"] = document(title, "\n".join(exams), PAPER_CSS)
    files[GRID_STEM + ".html"] = render_marking_grid(exam, bundle["sheets"])
    return files


def _exam_record(bundle: dict[str, Any]) -> dict[str, Any]:
    """The bundle's exam spec, checked to give one question per slot on each sheet."""
    exam = bundle.get("exam")
    if exam is None:
        raise QuestionBankError("--format paper prints an exam: pass --exam SPEC.yaml (slots with points and a "
                                "total); for a practice sheet use --format html.")
    # a multi-part item is one question of its slot, printed as its parts; any other variant is one
    # question by its own id (keying it by a missing item would count a pool of -n 3 as one question)
    questions = {(v["slot"], v["part"]["item"] if "part" in v else v["id"]) for v in bundle["sheets"][0]["variants"]}
    if len(questions) != len(exam["slots"]):
        raise QuestionBankError(f"--format paper prints one question per slot, but -n {bundle['n_per_family']} "
                                "asks for a pool per slot; drop -n (it sizes LMS groups).")
    return exam


def exam_html(exam: dict[str, Any], sheet: dict[str, Any]) -> str:
    """One student's exam: header, then each slot's question with its answer box and working space."""
    questions = [question_html(v) for v in sheet["variants"]]
    return "\n".join(['<article class="exam">', header_html(exam, sheet), *questions, "</article>"])


def header_html(exam: dict[str, Any], sheet: dict[str, Any]) -> str:
    """Course, title, the student's name and id, date, time allowed, total, and the marker's score row."""
    student = sheet["student_id"]
    fields = [
        ("Name", html.escape(sheet.get("student_name", ""))),
        ("Student ID", f"<code>{html.escape(student)}</code>" if student is not None else ""),
        ("Date", html.escape(exam["date"])),
        ("Time allowed", html.escape(exam["duration"])),
    ]
    rows = "".join(f"<tr><th>{a}</th><td>{va}</td><th>{b}</th><td>{vb}</td></tr>"
                   for (a, va), (b, vb) in zip(fields[::2], fields[1::2]))
    slots = exam["slots"]
    score_head = "".join(f"<th>{s['slot']}</th>" for s in slots) + "<th>Total</th>"
    score_max = "".join(f"<td>/ {s['points']:g}</td>" for s in slots) + f"<td>/ {exam['total']:g}</td>"
    course = f'<p class="course">{html.escape(exam["course"])}</p>' if exam["course"] else ""
    return "\n".join([
        '<header class="exam-head">',
        course,
        f"<h1>{html.escape(exam['title'])}</h1>",
        f'<table class="fields"><tbody>{rows}</tbody></table>',
        f"<p><strong>Total: {_points(exam['total'])}</strong> in {len(slots)} question"
        f"{'' if len(slots) == 1 else 's'}.</p>",
        f'<table class="scores"><thead><tr><th>Question</th>{score_head}</tr></thead>'
        f"<tbody><tr><th>Points</th>{score_max}</tr>"
        f'<tr><th>Score</th>{"<td></td>" * (len(slots) + 1)}</tr></tbody></table>',
        '<p class="instructions">Write each answer in its box, or tick the boxes where a question has '
        "choices. Use the space below each question for your working.</p>",
        "</header>",
    ])


def question_html(variant: dict[str, Any]) -> str:
    """One question: heading with points, stem, the answer area and the working space."""
    kind = variant["answer"]["kind"]
    label = variant["part"]["label"] if "part" in variant else ""
    number = f"{variant['slot']}({label})" if label else f"{variant['slot']}."
    return "\n".join([
        f'<section class="item" id="q{variant["slot"]}{label}">',
        f"<h2><span>{number} {html.escape(variant['title'])}</span>"
        f'<span class="mark">___ / {_points(variant["points"])}</span></h2>',
        to_html(variant["stem"], mathml),
        answer_area_html(variant),
        f'<div class="work work-{kind}"></div>',
        "</section>",
    ])


def answer_area_html(variant: dict[str, Any]) -> str:
    """Tick boxes for a choice question; a written-answer box (sized by kind only) for any other."""
    answer = variant["answer"]
    instruction = f'<p class="how">{_WRITE_INSTRUCTION[answer["kind"]]}{_answer_notes(answer)}</p>'
    if answer["kind"] in SLOTTED_KINDS:
        # letters, not tick boxes: every step or shape is listed once, and each slot gets a box of one size
        choices = "".join(f'<li><strong>({c["id"]})</strong> {inline(c["text"], mathml)}</li>'
                          for c in variant["choices"])
        boxes = "".join(f'<li>{inline(slot["text"], mathml)}<span class="letter-box"></span></li>'
                        for slot in answer["slots"])
        return f'<ul class="choices">{choices}</ul>{instruction}<ul class="letters">{boxes}</ul>'
    if answer["kind"] in TICKED_KINDS:
        choices = "".join(f'<li><span class="tick"></span><strong>({c["id"]})</strong> '
                          f"{inline(c['text'], mathml)}</li>" for c in variant["choices"])
        return f'{instruction}<ul class="choices ticked">{choices}</ul>'
    unit = f" {html.escape(answer['unit'])}" if answer["unit"] else ""
    return (f'{instruction}<p class="answer-line"><strong>Answer:</strong>'
            f'<span class="answer-box answer-{answer["kind"]}"></span>{unit}</p>')


def _answer_notes(answer: dict[str, Any]) -> str:
    notes = " The answer is a natural logarithm." if answer["log_space"] else ""
    return notes + (f" Unit: {html.escape(answer['unit'])}." if answer["unit"] else "")


def _points(points: float) -> str:
    return f"{points:g} point{'' if points == 1 else 's'}"

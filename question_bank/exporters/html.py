"""HTML export: a printable worksheet and a separate answer key, math as MathML.

The pages need no network and no script: math is rendered to MathML when
the file is made, which browsers draw natively.
"""
from __future__ import annotations

import html
from typing import Any

from question_bank.exporters import ANSWER_KEY_STEM, Files, points_note, register_exporter, sheet_file_names
from question_bank.exporters._markup import inline, mathml, to_html
from question_bank.exporters._page import document
from question_bank.exporters.markdown import ARRANGEMENT_KINDS, answer_text, how_to_answer, key_letters, undrawn_mistakes


@register_exporter("html", ".html", "Printable HTML worksheet and a separate answer key (offline math)")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> HTML files: worksheet(s) and one answer key.

    One anonymous sheet gives ``questions.html`` and ``answer-key.html``; a
    roster gives each student a worksheet and one combined key.
    """
    names = sheet_file_names(bundle, ".html")
    files: Files = {name: render_sheet(sheet) for name, sheet in zip(names, bundle["sheets"])}
    files[ANSWER_KEY_STEM + ".html"] = render_key(bundle["sheets"])
    return files


def render_sheet(sheet: dict[str, Any]) -> str:
    """The questions of one sheet, without answers, as a complete page."""
    body = ["<h1>Practice questions</h1>"]
    if sheet["student_id"] is not None:
        body.append(f'<p class="meta">Student: <code>{html.escape(sheet["student_id"])}</code></p>')
    for number, variant in enumerate(sheet["variants"], start=1):
        body.append(question_html(number, variant))
    return document("Practice questions", "\n".join(body))


def question_html(number: int, variant: dict[str, Any]) -> str:
    """One question: heading, stem, lettered choices and how to answer."""
    choices = "".join(f"<li><strong>({c['id']})</strong> {inline(c['text'], mathml)}</li>"
                      for c in variant["choices"])
    return "\n".join([
        f'<section class="item" id="q{number}">',
        f"<h2>{number}. {html.escape(variant['title'])}{points_note(variant)}</h2>",
        to_html(variant["stem"], mathml),
        f'<ul class="choices">{choices}</ul>' + slots_html(variant),
        f'<p class="how">{inline(how_to_answer(variant["answer"]), mathml)}</p>',
        "</section>",
    ])


def slots_html(variant: dict[str, Any]) -> str:
    """An ordering's positions or a matching's items, each with a blank for a letter; empty for other kinds."""
    if variant["answer"]["kind"] not in ARRANGEMENT_KINDS:
        return ""
    rows = "".join(f"<li>{inline(slot['text'], mathml)}: ____</li>" for slot in variant["answer"]["slots"])
    return f'<ul class="slots">{rows}</ul>'


def render_key(sheets: list[dict[str, Any]]) -> str:
    """Answers, worked solutions and why each distractor is wrong, for every sheet."""
    body = ["<h1>Answer key</h1>"]
    for sheet in sheets:
        if sheet["student_id"] is not None:
            body.append(f'<h2>Student <code>{html.escape(sheet["student_id"])}</code></h2>')
        for number, variant in enumerate(sheet["variants"], start=1):
            body.append(key_entry_html(number, variant))
    return document("Answer key", "\n".join(body))


def key_entry_html(number: int, variant: dict[str, Any]) -> str:
    """The key of one question."""
    correct = inline(key_letters(variant), mathml)
    wrong = "".join(
        f"<li>({c['id']}) <em>{html.escape(c['misconception']['name'])}</em>: "
        f"{inline(c['feedback'], mathml)}</li>"
        for c in variant["choices"] if not c["correct"])
    return "\n".join([
        f'<section class="item" id="key{number}">',
        f"<h3>{number}. {html.escape(variant['title'])}{points_note(variant)} <code>{html.escape(variant['id'])}</code></h3>",
        f"<p><strong>Answer:</strong> {correct} {inline(answer_text(variant['answer']), mathml)}</p>",
        "<p><strong>Worked solution.</strong></p>",
        to_html(variant["solution"], mathml),
        "<p><strong>Why the other choices are wrong:</strong></p>",
        f"<ul>{wrong}</ul>",
        *_other_mistakes_html(variant),
        "</section>",
    ])


def _other_mistakes_html(variant: dict[str, Any]) -> list[str]:
    """The known mistakes that are not among the choices, if any."""
    others = undrawn_mistakes(variant)
    if not others:
        return []
    items = "".join(f"<li>{inline(m['text'], mathml)} <em>{html.escape(m['misconception']['name'])}</em>: "
                    f"{inline(m['feedback'], mathml)}</li>" for m in others)
    return ["<p><strong>Other mistakes a typed answer is checked against:</strong></p>", f"<ul>{items}</ul>"]

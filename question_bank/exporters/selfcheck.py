"""Self-check export: one HTML file that checks answers in the browser.

The page needs no server and no network (a Content-Security-Policy forbids
every fetch); math is MathML rendered when the file is made. Numeric
questions take a typed answer, read in the forms people type and accepted
within the variant's tolerance; a typed value that equals a distractor gets
that misconception's feedback. Choice questions use radio buttons or
checkboxes. Each question's answer key (answer, choice feedback, worked
solution) is stored obfuscated (see :mod:`._payload`), so the answers are not
readable in the page source; this is practice material, not an exam.
"""
from __future__ import annotations

import html
from typing import Any

from question_bank.answers import answer_key
from question_bank.exporters import Files, points_note, register_exporter, sheet_file_names, sheet_rtol
from question_bank.exporters._markup import inline, mathml, to_html
from question_bank.exporters._page import BASE_CSS, document
from question_bank.exporters._payload import encode_payload
from question_bank.exporters._static import static_text

_PLACEHOLDER = {
    "float": "e.g. 0.0012 or 1.2e-3",
    "integer": "e.g. 116534784 or 116,534,784",
    "shape": "e.g. (4, 8, 24) or 4x8x24",
}

_INSTRUCTIONS = (
    "Type your answer and press <em>Check</em> (or Enter). Numbers may be typed as 0.0012, 1.2e-3 or "
    "1.2 x 10^-3 and are accepted within {rtol:.1%}; shapes as (4, 8, 24) or 4x8x24. "
    "A wrong answer that matches a common mistake names it; after each check the worked solution "
    "opens below the question. Everything runs in this page: nothing is sent anywhere."
)


@register_exporter("selfcheck", ".html", "Self-checking HTML practice page (offline, answers obfuscated)")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> one self-check page per sheet (per student with a roster)."""
    names = sheet_file_names(bundle, ".html")
    return {name: render_page(sheet) for name, sheet in zip(names, bundle["sheets"])}


def render_page(sheet: dict[str, Any]) -> str:
    """The complete page for one sheet."""
    body = ["<h1>Practice questions</h1>",
            f"<p>{_INSTRUCTIONS.format(rtol=sheet_rtol(sheet))}</p>",
            '<noscript><p class="feedback malformed">This page checks answers with JavaScript; '
            "turn it on to use the Check buttons.</p></noscript>",
            '<p class="score" id="score" aria-live="polite"></p>']
    if sheet["student_id"] is not None:
        body.insert(1, f'<p class="meta">Student: <code>{html.escape(sheet["student_id"])}</code></p>')
    variants = sheet["variants"]
    body += [item_html(number, variant, carry_from(variants, number))
             for number, variant in enumerate(variants, start=1)]
    return document("Practice questions", "\n".join(body), BASE_CSS + static_text("selfcheck.css"),
                    static_text("selfcheck.js"))


def item_key(number: int) -> str:
    """The element id of question ``number``, which also keys its payload."""
    return f"q{number}"


def carry_from(variants: list[dict[str, Any]], number: int) -> int | None:
    """The question number of the earlier part question ``number`` reads, when the page shows it."""
    part = variants[number - 1].get("part")
    if not part or part["carry"] is None:
        return None
    earlier = number - (part["index"] - part["carry"]["from"])
    if earlier < 1:
        return None
    other = variants[earlier - 1].get("part")
    same = other is not None and other["item"] == part["item"] and other["index"] == part["carry"]["from"]
    return earlier if same else None


def item_html(number: int, variant: dict[str, Any], earlier: int | None = None) -> str:
    """One question with its answer control, feedback box and (hidden) solution.

    ``earlier``: the number of the earlier part this part's key is computed from; its check reads
    that part's answer to say when a wrong answer here is right given it (a carried error).
    """
    ident = item_key(number)
    key = answer_key(variant, inline=lambda md: inline(md, mathml), block=lambda md: to_html(md, mathml))
    carry = "" if earlier is None else f' data-carry-from="{item_key(earlier)}"'
    return "\n".join([
        f'<section class="item" id="{ident}"{carry} data-key="{encode_payload(key, ident)}">',
        f"<h2>{number}. {html.escape(variant['title'])}{points_note(variant)}</h2>",
        to_html(variant["stem"], mathml),
        f'<form class="answer-form" autocomplete="off">{_control(ident, variant)}</form>',
        '<div class="feedback" role="status" aria-live="polite"></div>',
        '<details class="solution" open hidden><summary>Worked solution</summary>'
        '<div class="solution-body"></div></details>',
        "</section>",
    ])


def _control(ident: str, variant: dict[str, Any]) -> str:
    """Text input for numeric answers; radio buttons or checkboxes for choices."""
    answer = variant["answer"]
    kind = answer["kind"]
    button = '<button type="submit">Check</button>'
    if kind in _PLACEHOLDER:
        unit = f'<span class="unit">{html.escape(answer["unit"])}</span>' if answer["unit"] else ""
        note = " (natural log)" if answer["log_space"] else ""
        return (f'<div class="answer"><label for="{ident}-input">Your answer{note}:</label>'
                f'<input type="text" id="{ident}-input" name="{ident}" placeholder="{_PLACEHOLDER[kind]}" '
                f'spellcheck="false">{unit}{button}</div>')
    if kind in ("ordering", "matching"):
        return _slot_selects(ident, variant) + f'<div class="answer">{button}</div>'
    input_type = "checkbox" if kind == "multiple_choice" else "radio"
    hint = '<p class="how">Tick every choice that applies.</p>' if kind == "multiple_choice" else ""
    options = "".join(
        f'<li><label><input type="{input_type}" name="{ident}" value="{c["id"]}"> '
        f'<strong>({c["id"]})</strong> {inline(c["text"], mathml)}</label></li>'
        for c in variant["choices"])
    return f'{hint}<ul class="choices">{options}</ul><div class="answer">{button}</div>'


def _slot_selects(ident: str, variant: dict[str, Any]) -> str:
    """The choices, then one letter menu per position (ordering) or item (matching)."""
    choices = "".join(f'<li><strong>({c["id"]})</strong> {inline(c["text"], mathml)}</li>'
                      for c in variant["choices"])
    letters = "".join(f'<option value="{c["id"]}">{c["id"]}</option>' for c in variant["choices"])
    rows = "".join(
        f'<li><label>{inline(slot["text"], mathml)}: <select name="{ident}-slot{k}" class="slot">'
        f'<option value="">choose</option>{letters}</select></label></li>'
        for k, slot in enumerate(variant["answer"]["slots"], start=1))
    how = ("Pick the letter of the line that runs at each step; one line is left out."
           if variant["answer"]["kind"] == "ordering" else
           "Pick the letter of each item's shape; some shapes are left over.")
    return f'<ul class="choices">{choices}</ul><p class="how">{how}</p><ol class="slots">{rows}</ol>'

"""The marking grid of a paper exam: every student's keys in one table, then a compact key each.

The grid is what a marker keeps beside a pile of scripts: one row per student
(name, id), one column per slot holding that student's key (letters for a
choice question, the value for a written answer). Below it, each student's
compact key adds what a marker needs to judge a written answer (the accepted
tolerance, the choice's text) and the variant id that traces the question back
to its seed. Worked solutions stay in the ``html`` format's answer key.

Roster ids and names are untrusted text and are escaped.
"""
from __future__ import annotations

import html
from typing import Any

from question_bank.exporters._markup import inline, mathml
from question_bank.exporters._page import BASE_CSS, document
from question_bank.exporters.markdown import answer_text

GRID_STEM = "marking-grid"

#: Slot columns per grid table: six of the widest keys (a three-axis shape, a nine-digit count) with
#: the student's name and id stay within A4's printable width; a longer exam gets one table per six
#: slots, one under the other.
SLOTS_PER_TABLE = 6

#: Small type, tight cells and keys kept on one line, so every row is one line high and a class of
#: 40 fits one printed page.
GRID_CSS = BASE_CSS + """\
@page { margin: 12mm; }
body { font-size: 10pt; }
table.grid { width: 100%; font-size: 8.5pt; }
table.grid th, table.grid td { padding: 0.05rem 0.3rem; line-height: 1.25; }
table.grid td.key { white-space: nowrap; }
table.grid thead { display: table-header-group; }
table.grid tr { break-inside: avoid; }
.keys { break-before: page; }
.student-key { break-inside: avoid; margin-bottom: 0.8rem; }
.student-key h2 { font-size: 1rem; margin: 0.6rem 0 0.2rem; }
.student-key table { width: 100%; font-size: 9pt; }
.student-key td:last-child { color: #55555b; }
@media print { body { padding: 0; } }
"""


def render_marking_grid(exam: dict[str, Any], sheets: list[dict[str, Any]]) -> str:
    """The grid of every sheet's keys, then each sheet's compact key, as one page."""
    slots = exam["slots"]
    tables = [grid_table(slots[start:start + SLOTS_PER_TABLE], sheets)
              for start in range(0, len(slots), SLOTS_PER_TABLE)]
    meta = " · ".join(html.escape(x) for x in (exam["course"], exam["date"]) if x)
    body = [
        '<section class="grid-page">',
        f"<h1>Marking grid: {html.escape(exam['title'])}</h1>",
        f'<p class="meta">{meta + " · " if meta else ""}{len(sheets)} exam{"" if len(sheets) == 1 else "s"}, '
        f"{exam['total']:g} points in {len(slots)} questions (points in brackets)</p>",
        *tables,
        "</section>",
        '<section class="keys">',
        *(student_key_html(sheet) for sheet in sheets),
        "</section>",
    ]
    return document(f"Marking grid: {exam['title']}", "\n".join(body), GRID_CSS)


def grid_table(slots: list[dict[str, Any]], sheets: list[dict[str, Any]]) -> str:
    """One table of the grid: a row per sheet, a column per slot of ``slots``."""
    head = "".join(f"<th>{s['slot']} <small>({s['points']:g})</small></th>" for s in slots)
    rows = "".join(f"<tr>{_student_cells(sheet)}"
                   + "".join(f'<td class="key">{slot_key(sheet, s["slot"])}</td>' for s in slots) + "</tr>"
                   for sheet in sheets)
    return (f'<table class="grid"><thead><tr><th>Student</th><th>ID</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>")


def _student_cells(sheet: dict[str, Any]) -> str:
    student = sheet["student_id"]
    ident = f"<code>{html.escape(student)}</code>" if student is not None else ""
    return f"<td>{html.escape(sheet.get('student_name', ''))}</td><td>{ident}</td>"


def slot_key(sheet: dict[str, Any], slot: int) -> str:
    """The grid cell of one slot: its key, or each part's key after its letter for a multi-part item."""
    members = [v for v in sheet["variants"] if v["slot"] == slot]
    if len(members) == 1 and "part" not in members[0]:
        return grid_key(members[0])
    return " ".join(f"({v['part']['label']}) {grid_key(v)}" if "part" in v else grid_key(v) for v in members)


def grid_key(variant: dict[str, Any]) -> str:
    """The key as the grid prints it: the correct letters of a choice question (``a,c``), an ordering's or
    matching's letters in slot order (``e,a,c,d``), else the value and unit (a shape without spaces,
    ``(4,8,24)``, to keep the column narrow)."""
    answer = variant["answer"]
    if answer["kind"] in ("single_choice", "multiple_choice"):
        return ",".join(c["id"] for c in variant["choices"] if c["correct"])
    if answer["kind"] in ("ordering", "matching"):
        return ",".join(answer["value"])   # one letter per slot, in slot order
    if answer["kind"] == "shape":
        return html.escape(answer["display"].replace(" ", ""))
    unit = f" {answer['unit']}" if answer["unit"] else ""
    return inline(answer["display"] + unit, mathml)


def student_key_html(sheet: dict[str, Any]) -> str:
    """One student's compact key: per slot the points, the key in full and the variant id."""
    student = sheet["student_id"]
    who = " ".join(x for x in (html.escape(sheet.get("student_name", "")),
                               f"<code>{html.escape(student)}</code>" if student is not None else "") if x)
    rows = "".join(
        f"<tr><td>{v['slot']}</td><td>{v['points']:g}</td><td>{_full_key(v)}</td>"
        f"<td><code>{html.escape(v['id'])}</code></td></tr>"
        for v in sheet["variants"])
    return "\n".join([
        '<div class="student-key">',
        f"<h2>Key: {who or 'exam without a name'}</h2>",
        f"<table><thead><tr><th>Q</th><th>Points</th><th>Key</th><th>Variant</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>",
        "</div>",
    ])


def _full_key(variant: dict[str, Any]) -> str:
    """The correct letters with their choice texts, or the value with its accepted tolerance."""
    answer = variant["answer"]
    if answer["kind"] in ("single_choice", "multiple_choice"):
        return "; ".join(f"<strong>({c['id']})</strong> {inline(c['text'], mathml)}"
                         for c in variant["choices"] if c["correct"])
    if answer["kind"] in ("ordering", "matching"):
        texts = {c["id"]: c["text"] for c in variant["choices"]}
        return "; ".join(f"{inline(slot['text'], mathml)}: <strong>({cid})</strong> {inline(texts[cid], mathml)}"
                         for slot, cid in zip(answer["slots"], answer["value"]))
    return inline(answer_text(answer), mathml)

"""The report's "Mistake groups" section: per function, each group with its size, its share of the
points lost, its failed tests, what the grader could say, the instructor's note, and a
representative's code beside a second member's. Every string from a submission is escaped by the
template engine; the note is the instructor's Markdown, rendered as the students will read it
(``note_html``: raw HTML in it stays text)."""
from __future__ import annotations

from itertools import groupby

from autograder.groups.class_groups import ClassGroups
from autograder.groups.groups_csv import unit_code
from autograder.groups.note_html import note_html

SECTION_TEMPLATE = "report/groups.html.j2"
#: Groups shown per function on the page (all are in groups.csv).
GROUPS_SHOWN = 12


def section_context(found: ClassGroups) -> dict:
    """What ``SECTION_TEMPLATE`` renders (with the report's environment and its filters)."""
    by_unit = []
    for unit, groups in groupby(found.groups, key=lambda g: g.unit):
        groups = list(groups)
        by_unit.append({"unit": unit, "count": len(groups), "groups": [{
            "group": g, "share": found.share(g),
            "note": next((note_html(t) for gid, t in g.members[0].outcome.group_notes if gid == g.id), ""),
            "first": g.members[0].entry.student, "first_code": unit_code(g.members[0], g.unit),
            "second": g.members[1].entry.student if g.size > 1 else "",
            "second_code": unit_code(g.members[1], g.unit) if g.size > 1 else "",
        } for g in groups[:GROUPS_SHOWN]]})
    return {"units": by_unit, "found": found}

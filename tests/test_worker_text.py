"""Whatever crosses from the sandboxed worker is text in every writer, whatever field it came in.

The worker runs the student's code, which can rewrite it: every field of every reply is the
student's to choose. Each case below grades a notebook whose code rewrites the worker's replies so
that one field (or a few that go together) carries hostile text: live HTML, links, a forged
"Regrade notice" heading and "Passed" line, fence breakers, terminal escapes. The notebook goes
through the real grading (intake, sandbox, the reply decoding, the hidden suite) and the outcome
through the real writers: feedback.md, results.json (its summary and every test's output),
gradebook.csv and the HTML class report. None of them may render any of it as markup: nothing
live, no link, no heading or line of the student's own, only code spans and fenced blocks.
"""
from __future__ import annotations

import copy
import json
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from markdown_it import MarkdownIt

from autograder.build import build
from autograder.runtime.grading.bulk import write_outcome
from autograder.runtime.grading.gradebook import write_gradebook
from autograder.runtime.grading.outcome import Entry, GradeRecord
from autograder.runtime.grading.runner import grade_submission
from autograder.runtime.grading.support import load_autograder
from autograder.runtime.sandbox import Limits
from autograder.runtime.sandbox.forkserver import ForkServer
from autograder.runtime.sandbox.policy import clear
from tests.test_adversarial import formula_cells, live_markup

pytestmark = pytest.mark.slow

#: Words of the payload that must never be outside a code span or block once rendered.
WORDS = ("Regrade", "onerror", "e.vil", "PWNED", "Passed: 20")
PAYLOAD = ("</code>```\n<img src=x onerror=\"document.title='PWNED'\">"
           "[grade](http://e.vil/x) <http://e.vil/y> <script>document.title='PWNED'</script>\n\n"
           "# Regrade notice\n\nPassed: 20 / 20\n\n- Passed: 20 / 20\n``` `` \x1b]52;c;UFdORUQ=\x07"
           "\x1b[2J \u202eright-to-left\r\n")
_KINDS = ("raised", "missing", "not_callable", "unencodable", "not_loaded", "bad_request", "worker", PAYLOAD)
_BLOB = [8]
_ARRAY = {"nd": [0, "<f8", [1]]}

#: Fields merged into the worker's replies, per case: ``(reply, fields, raw values, blob sizes)``.
#: ``reply`` is ``"load"`` or ``"call"``; raw values are JSON trees the channel decodes (sent as
#: written, so they can be malformed), with as many blobs of zero bytes as ``blob sizes`` says.
CASES: dict[str, tuple[str, dict, dict | None, list[int]]] = {
    "load-message": ("load", {"ok": False, "message": PAYLOAD}, None, []),
    "load-ok": ("load", {"ok": PAYLOAD, "message": PAYLOAD}, None, []),
    "load-seq": ("load", {"seq": PAYLOAD}, None, []),
    "load-errors-not-a-list": ("load", {"errors": PAYLOAD}, None, []),
    "load-cell-error": ("load", {"errors": [{"cell": 0, "type": PAYLOAD, "message": PAYLOAD,
                                             "traceback": PAYLOAD}]}, None, []),
    "load-cell-index": ("load", {"errors": [{"cell": PAYLOAD, "type": "E", "message": "m"},
                                            {"cell": -7, "type": "E", "message": "m"},
                                            {"cell": 10**9, "type": "E", "message": "m"}, PAYLOAD]}, None, []),
    "load-functions": ("load", {"functions": {PAYLOAD: [PAYLOAD], "softmax": ["x", PAYLOAD, "x"],
                                              "lm_head": [PAYLOAD], "cross_entropy_loss": ["class", "1a"]},
                                "numbers_read": {"softmax": {PAYLOAD: 3, "B": PAYLOAD}, PAYLOAD: {"T": 4}}},
                       None, []),
    "load-dropped": ("load", {"dropped": PAYLOAD}, None, []),
    "load-dtype": ("load", {}, {"x": {"nd": [0, PAYLOAD, [1]]}}, _BLOB),
    "load-tag": ("load", {}, {"x": {PAYLOAD: 1}}, []),
    **{f"call-kind-{kind if kind != PAYLOAD else 'forged'}": (
        "call", {"ok": False, "kind": kind, "type": PAYLOAD, "message": PAYLOAD, "traceback": PAYLOAD}, {}, [])
       for kind in _KINDS},
    "call-ok": ("call", {"ok": PAYLOAD, "kind": PAYLOAD}, {}, []),
    "call-seq": ("call", {"seq": PAYLOAD}, None, []),
    "call-dropped": ("call", {"dropped": PAYLOAD}, None, []),
    "call-value-text": ("call", {"ok": True}, {"value": PAYLOAD}, []),
    "call-value-keys": ("call", {"ok": True}, {"value": {"dict": [[PAYLOAD, PAYLOAD]]},
                                                "args_after": {"dict": [[PAYLOAD, _ARRAY]]}}, _BLOB),
    "call-args-after": ("call", {"ok": False, "kind": "raised", "type": "ValueError", "message": "m"},
                        {"args_after": {"dict": [["0", _ARRAY], ["\u0661", PAYLOAD], ["9" * 5000, PAYLOAD]]}},
                        _BLOB),
    "call-dtype": ("call", {"ok": True}, {"value": {"nd": [0, PAYLOAD, [1]]}}, _BLOB),
    "call-shape": ("call", {"ok": True}, {"value": {"nd": [0, "<f8", PAYLOAD]}}, _BLOB),
    "call-tag": ("call", {"ok": True}, {"value": {PAYLOAD: [1]}}, []),
    "call-named": ("call", {"ok": True}, {"value": {"named": PAYLOAD, "params": {"dict": []}}}, []),
}

#: A notebook cell that makes the worker's replies carry the case's fields (see ``CASES``), and
#: prints the payload as output. The worker's own ``pack`` is replaced: replies then go out as the
#: student wrote them, exactly as a submission that rewrites the worker would send them.
FORGER = r'''
import json as _fz_json, struct as _fz_struct, sys as _fz_sys
print(_FZ_PAYLOAD)
_FZ_WORKER = _fz_sys.modules["sandbox_worker"].Worker
_FZ_REAL = _FZ_WORKER.pack

def _fz_pack(self, fields, values=None):
    reply = "load" if "functions" in fields else "call"
    if reply != _FZ_REPLY:
        return _FZ_REAL(self, fields, values)
    fields = {**fields, "dropped": self.budget.dropped, "seq": self.seq, **_FZ_FIELDS}
    if _FZ_VALUES is None:
        return self.channel.pack(fields, values, max_bytes=self.max_bytes)
    header = _fz_json.dumps({"fields": fields, "values": _FZ_VALUES, "blobs": _FZ_BLOBS,
                             "shared": False}).encode()
    body = _fz_struct.pack(">I", len(header)) + header + bytes(sum(_FZ_BLOBS))
    return _fz_struct.pack(">Q", len(body)) + body

_FZ_WORKER.pack = _fz_pack
'''


@pytest.fixture(scope="module")
def grading(tmp_path_factory):
    """The built lm-head autograder, loaded; its student notebook; the level; a fork server."""
    root = tmp_path_factory.mktemp("worker-text")
    (result,) = build(["lm-head"], root / "dist", None, verify=False)
    ag = load_autograder(result.autograder_zip, root / "ag")
    limits = Limits(wall_seconds_total=8.0)
    clearance = clear("auto", [root, result.autograder_zip])
    server = ForkServer(limits, clearance.level)
    warm = server if server.usable else None
    yield ag, nbformat.read(result.student, as_version=4), clearance, limits, warm, root
    if warm is not None:
        warm.close()


def forged_notebook(stub: nbformat.NotebookNode, case: str) -> nbformat.NotebookNode:
    reply, fields, values, blobs = CASES[case]
    setup = (f"_FZ_PAYLOAD = {PAYLOAD!r}\n_FZ_REPLY = {reply!r}\n_FZ_FIELDS = {fields!r}\n"
             f"_FZ_VALUES = {values!r}\n_FZ_BLOBS = {blobs!r}\n")
    nb = copy.deepcopy(stub)
    where = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "import numpy" in c.source)
    nb.cells.insert(where + 1, nbformat.v4.new_code_cell(setup + FORGER))
    return nb


class _Outside(HTMLParser):
    """Rendered HTML: the text outside ``<code>``/``<pre>``, and every tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0
        self.text: list[str] = []
        self.tags: list[tuple[str, list]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self.depth += tag in ("code", "pre")

    def handle_endtag(self, tag):
        self.depth -= tag in ("code", "pre") and self.depth > 0

    def handle_data(self, data):
        if not self.depth:
            self.text.append(data)


def markdown_problems(markdown: str) -> list[str]:
    """What in ``markdown`` the payload made live: markup, links, or its words outside code."""
    from markdown_it import MarkdownIt
    scan = _Outside()
    scan.feed(MarkdownIt("commonmark", {"html": True}).render(markdown))
    outside = "".join(scan.text)
    found = live_markup(markdown)
    found += [f"<a {attrs}>" for tag, attrs in scan.tags if tag == "a"]
    found += [f"{word!r} outside code" for word in WORDS if word in outside]
    found += [repr(c) for c in ("\x07", "\x9b", "\r") if c in markdown]
    return found


def report_problems(html: str) -> list[str]:
    """What in the HTML class report the payload made live (the report's own charts are images)."""
    scan = _Outside()
    scan.feed(html)
    found = []
    for tag, attrs in scan.tags:
        for name, value in attrs:
            if name.startswith("on") or "e.vil" in (value or "") or "javascript:" in (value or "").lower():
                found.append(f"<{tag} {name}={value!r}>")
        if tag in ("iframe", "object", "embed") or (
                tag == "img" and not dict(attrs).get("src", "").startswith("data:image/png;base64,")):
            found.append(f"<{tag}>")
    found += [piece for piece in ("<script>document.title", "<img src=x") if piece in html]
    return found + [repr(c) for c in ("\x1b", "\u202e", "\x07") if c in html]


def open_in_chromium(pages: list[str], tmp_path: Path) -> tuple[str, list[int]]:
    """The title and the counts of script, img, iframe, svg and a elements once ``pages`` (HTML
    fragments) load in headless Chromium; the page is titled ``clean`` until a script renames it."""
    from tests.test_inert_text import CHROMIUM
    from playwright.sync_api import sync_playwright
    page_path = tmp_path / "rendered.html"
    page_path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>clean</title></head><body>"
                         + "<hr>".join(pages) + "</body></html>", encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page()
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_timeout(300)
            title = page.title()
            counts = page.evaluate("['script','img','iframe','svg','a'].map(t => document.getElementsByTagName(t).length)")
        finally:
            browser.close()
    return title, counts


def test_every_field_of_every_reply_stays_text_in_every_writer(grading, tmp_path):
    ag, stub, clearance, limits, warm, _root = grading
    out = tmp_path / "out"
    records, seen, rendered = [], {}, []
    for case in CASES:
        path = tmp_path / "subs" / case / "lm-head.ipynb"
        path.parent.mkdir(parents=True)
        nbformat.write(forged_notebook(stub, case), path)
        outcome = grade_submission(path, ag, case, clearance, limits=limits, warm=warm)
        record = GradeRecord(Entry(case, path), outcome)
        write_outcome(out, record)
        records.append(record)
        seen[case] = json.dumps(outcome.to_dict())
        folder = out / "students" / case
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        pieces = {"feedback.md": (folder / "feedback.md").read_text(encoding="utf-8"),
                  "results.json output": results["output"],
                  **{f"results.json {t['name']}": t["output"] for t in results["tests"]}}
        for where, text in pieces.items():
            rendered.append(MarkdownIt("commonmark", {"html": True}).render(text))
            problems = markdown_problems(text)
            assert not problems, f"{case}: {where} renders the worker's text live: {problems[:5]}\n{text[:3000]}"
        assert results["score"] == 0, f"{case}: a forged reply earned {results['score']}"
    # The payload did get through somewhere in each case the grader reports (a case the grader
    # ignores quietly is fine: it shows nothing of the student's).
    reported = [case for case, text in seen.items() if "Regrade" in text or "onerror" in text]
    assert len(reported) >= len(CASES) // 2, f"too few cases reached the feedback: {reported}"
    write_gradebook(out, records, ag.questions)
    gradebook = (out / "gradebook.csv").read_text(encoding="utf-8")
    assert not formula_cells(gradebook) and "\x1b" not in gradebook and "\u202e" not in gradebook
    from autograder.report import build_report
    report = build_report(out)
    assert "Regrade" in report, "the report should show the notes (escaped)"
    problems = report_problems(report)
    assert not problems, f"the HTML report renders the worker's text live: {problems[:5]}"
    from tests.test_inert_text import CHROMIUM
    if CHROMIUM.is_file():
        assert open_in_chromium(rendered, tmp_path) == ("clean", [0, 0, 0, 0, 0])

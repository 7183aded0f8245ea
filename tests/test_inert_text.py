"""Student text stays text: results.json and feedback.md rendered as a Markdown page in Chromium.

Everything a submission controls (what it prints, its exception messages, its file and function
names, its notebook metadata) is put into an outcome; the feedback is rendered by a CommonMark
renderer with raw HTML allowed (the most a results page could do) and opened in headless
Chromium: no script runs and no element the student wrote appears.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.runtime.grading.feedback import feedback_markdown, results_json
from autograder.runtime.grading.outcome import GradeOutcome, ItemOutcome
from autograder.runtime.text import code

CHROMIUM = Path("/usr/bin/chromium")
HOSTILE = [
    "```\n</pre><script>document.title='PWNED'</script>",
    "<img src=x onerror=\"document.title='PWNED'\">",
    "[grade](javascript:document.title='PWNED')",
    "<iframe srcdoc='<script>parent.document.title=1</script>'></iframe>",
    "\n# Grade corrected to 20/20\n",
    "\x1b[31mred\x1b[0m \u202eevil",
    "`` ` `` `````",
    "<svg onload=\"document.title='PWNED'\"></svg>",
]


def hostile_outcome() -> GradeOutcome:
    text = "\n".join(HOSTILE)
    items = (ItemOutcome("q1", "test_a", 1.0, False, f"`softmax` raised {code('ValueError: ' + text)}"),
             ItemOutcome("q1", "test_b", 1.0, True))
    notes = (f"The zip also holds files grading does not use: {', '.join(code(h) for h in HOSTILE)}",
             f"The code cell that starts {code(HOSTILE[0], 60)} (code cell 2 from the top) raised {code(text)}.")
    return GradeOutcome("s", "lm-head", "graded", "bwrap", items, 2.0, notes, stdout=text, submission="<b>x</b>.zip")


def rendered_pages() -> list[str]:
    from markdown_it import MarkdownIt
    md = MarkdownIt("commonmark", {"html": True})
    outcome = hostile_outcome()
    results = results_json(outcome)
    parts = [feedback_markdown(outcome), results["output"], *(t["output"] for t in results["tests"])]
    return [md.render(p) for p in parts]


def test_every_hostile_piece_renders_as_text():
    from html.parser import HTMLParser
    tags: list[str] = []

    class Tags(HTMLParser):
        def handle_starttag(self, tag, attrs):
            tags.append(tag)
            assert not [a for a, v in attrs if a.startswith("on") or (v or "").lower().startswith("javascript")]

    for page in rendered_pages():
        Tags().feed(page)
        assert "\x1b" not in page and "\u202e" not in page
    assert set(tags) <= {"p", "pre", "code", "h1", "h2", "h3", "ul", "li", "strong", "em", "hr", "ol", "br", "blockquote"}
    assert not any("Grade corrected" in line and line.startswith("<h") for p in rendered_pages() for line in p.splitlines())


def test_no_script_runs_in_chromium(tmp_path):
    if not CHROMIUM.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"{CHROMIUM} is missing")
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright
    page_path = tmp_path / "feedback.html"
    page_path.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'><title>clean</title></head><body>"
                         + "<hr>".join(rendered_pages()) + "</body></html>", encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox"])
        try:
            page = browser.new_page()
            dialogs: list[str] = []
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_timeout(300)
            title = page.title()
            counts = page.evaluate("['script','img','iframe','svg','a'].map(t => document.getElementsByTagName(t).length)")
        finally:
            browser.close()
    assert title == "clean" and dialogs == []
    assert counts == [0, 0, 0, 0, 0], counts

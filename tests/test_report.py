"""Does ``grader report`` turn a grading output folder into a correct, self-contained page?

Each test builds a small class in ``tmp_path`` as ``grader grade`` writes it (each
student's ``outcome.json``, ``results.json`` and ``feedback.md``, by the same
writer), with expected numbers worked out by hand from the table below.
"""
from __future__ import annotations

import base64
import html
import os
import re
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder import report as report_module
from autograder.cli_report import report as report_command
from autograder.report import ReportError, build_report, write_report
from autograder.runtime.errors import GraderError
from autograder.runtime.grading.bulk import write_outcome
from autograder.runtime.grading.outcome import Diagnosis, Entry, GradeOutcome, GradeRecord, ItemOutcome
from tests.browser import (BROKEN_WORDS_SCRIPT, CHROMIUM, CHROMIUM_ARGS, LAPTOP_WIDTH, LAYOUT_SCRIPT,
                           PHONE_WIDTH, opened, require_chromium)
from tests.suites import MISTAKES


#: The assignment's hidden tests: (question, test, points). 20 points in all.
TESTS = [("q1", "test_shapes", 2.0), ("q1", "test_values", 3.0), ("q2", "test_stable", 5.0),
         ("q3", "test_grad", 4.0), ("q3", "test_grad_large", 6.0)]
POSSIBLE = sum(points for _, _, points in TESTS)

GRAD = "gradient-missing-one-over-n"
SHIFT = "targets-not-shifted"
BIAS = "head-bias-missing"
UNKNOWN = "mystery-mistake"  # no record explains it: must be shown by its slug

#: student -> (status, flags, {failed test: mistakes diagnosed on it}, note).
#: Students not graded fail every test; s13 is an untouched notebook, s14's third cell raised.
CLASS = {
    "s01": ("graded", (), {}, ""),
    "s02": ("graded", (), {"q3: test_grad": [GRAD]}, ""),
    "s03": ("graded", (), {"q3: test_grad": [GRAD], "q3: test_grad_large": [GRAD]}, ""),
    "s04": ("graded", (), {"q1: test_values": [SHIFT], "q3: test_grad": [GRAD]}, ""),
    "s05": ("graded", (), {"q1: test_shapes": [], "q1: test_values": [SHIFT]}, ""),
    "s06": ("graded", (), {"q2: test_stable": [BIAS]}, ""),
    "s07": ("graded", (), {"q2: test_stable": [UNKNOWN]}, ""),
    "s08": ("graded", (), {"q3: test_grad_large": []}, ""),
    "s09": ("timeout", (), {}, "wall-clock limit of 60 s exceeded"),
    "s10": ("rejected", (), {}, "not a notebook, script or export zip"),
    "s11": ("error", (), {}, "worker killed: memory limit of 1 GiB"),
    "s12": ("graded", (), {}, ""),
    "s13": ("graded", ("not-attempted",), {f"{q}: {t}": [] for q, t, _ in TESTS}, ""),
    "s14": ("graded", ("load-error",), {"q3: test_grad": [], "q3: test_grad_large": []},
            "Code cell 3 raised `SyntaxError: invalid syntax (line 4)`."),
}


# --------------------------------------------------------------------------- writing a class


def record_of(student: str, name: str | None = None, note: str | None = None) -> GradeRecord:
    """The record ``grader grade`` would write for ``student`` of :data:`CLASS`."""
    status, flags, failed, class_note = CLASS[student]
    items = tuple(ItemOutcome(q, t, points, status == "graded" and f"{q}: {t}" not in failed,
                              "" if f"{q}: {t}" not in failed else "Wrong values.",
                              tuple(failed.get(f"{q}: {t}", ()))) for q, t, points in TESTS)
    slugs = dict.fromkeys(slug for i in items for slug in i.mistakes)
    diagnoses = tuple(Diagnosis(s, MISTAKES[s].function, MISTAKES[s].title, MISTAKES[s].explanation)
                      for s in slugs if s in MISTAKES)
    note = class_note if note is None else note
    outcome = GradeOutcome(student, "lm-head", status, "none (not run)" if status == "rejected" else "bwrap",
                           items, POSSIBLE, (note,) if note else (), "", 0.1, f"{student}.zip", diagnoses, flags)
    entry = Entry(student, Path(f"submissions/{student}.zip"), name or f"Student {student[1:]}",
                  f"{student}@example.edu")
    return GradeRecord(entry, outcome, "digest", "sha")


def write_class(folder: Path, students=CLASS, **overrides) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for student in students:
        write_outcome(folder, overrides.get(student) or record_of(student))
    return folder


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A class of fourteen: ten graded and attempted (one whose cell raised), one untouched,
    one timeout, one rejected, one that failed to run."""
    return write_class(tmp_path / "out")


def _row(page: str, attribute: str, value: str) -> str:
    """The HTML of the table row carrying ``attribute="value"``."""
    match = re.search(rf'<tr {attribute}="{re.escape(html.escape(value))}"[^>]*>(.*?)</tr>', page, re.S)
    assert match, f"no row with {attribute}={value!r}"
    return match.group(1)


def _cell(row: str, css_class: str) -> str:
    match = re.search(rf'<td class="[^"]*\b{css_class}\b[^"]*"[^>]*>\s*(.*?)\s*</td>', row, re.S)
    assert match, f"no {css_class} cell in {row!r}"
    return match.group(1)


def _png_size(data_uri: str) -> tuple[int, int]:
    """Width and height from a PNG data URI's IHDR chunk (checks it really is a PNG)."""
    prefix = "data:image/png;base64,"
    assert data_uri.startswith(prefix)
    data = base64.b64decode(data_uri[len(prefix):], validate=True)
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


# --------------------------------------------------------------------------- contents


def test_summary_counts_each_standing(out):
    page = build_report(out)
    assert "<title>Class report: lm-head</title>" in page
    assert "14 submissions." in page
    expected = {"graded": 9, "not attempted": 1, "did not load": 1, "timed out": 1, "rejected": 1,
                "failed to run": 1}
    for name, count in expected.items():
        assert f'data-standing="{name}">{count} {name}</li>' in page
    # Attempted and graded totals: s01, s12 at 20; s05, s06, s07 at 15; s02 16, s03 10, s04 13,
    # s08 14, s14 10: 148 / 10. The untouched s13's zero is not among them.
    assert ("The 10 attempted and graded submissions scored 14.8 on average (median 15) out of 20."
            in " ".join(page.split()))
    assert "Sandbox: bwrap." in page and 'class="note"' in page


def test_weaker_isolation_is_shown_as_a_warning(tmp_path):
    weak = record_of("s01")
    weak = GradeRecord(weak.entry, GradeOutcome(**{**weak.outcome.__dict__, "isolation": "user"}), "d", "s")
    page = build_report(write_class(tmp_path / "out", ["s01", "s02"], s01=weak))
    assert re.search(r'<p id="isolation" class="warning">\s*Sandbox: bwrap, user\.', page)


def test_every_student_has_a_row_with_standing_total_mistakes_and_feedback_link(out):
    page = build_report(out)
    assert re.findall(r'<tr data-student="([^"]+)"', page) == list(CLASS)
    assert _row(page, "data-student", "s13").count("not attempted") == 1
    assert 'data-standing="did not load"' in page
    s14 = _row(page, "data-student", "s14")
    assert "<code>SyntaxError: invalid syntax (line 4)</code>" in _cell(s14, "note")
    assert _cell(s14, "total") == "10 / 20" and 'data-sort="10.0"' in s14
    s04 = _row(page, "data-student", "s04")
    assert html.escape(MISTAKES[SHIFT].title).replace("`", "") in re.sub("</?code>", "", _cell(s04, "mistakes"))
    assert '<a href="students/s04/feedback.md">feedback</a>' in s04
    assert "wall-clock limit" in _row(page, "data-student", "s09")


def test_plots_are_embedded_pngs_and_the_only_script_is_allowed_by_its_hash(out):
    page = build_report(out)
    sources = dict(re.findall(r'<img class="plot" id="([\w-]+)" src="([^"]+)"', page))
    assert set(sources) == {"score-histogram", "question-chart", "test-chart"}
    for uri in sources.values():
        width, height = _png_size(uri)
        assert width > 200 and height > 100
    assert not re.search(r"https?://", page)
    assert not re.search(r"<(link[^>]+stylesheet|iframe)", page)
    scripts = re.findall(r"<script>(.*?)</script>", page, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(__import__("hashlib").sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in page


def test_question_means_leave_out_ungraded_and_untouched_submissions(out):
    page = build_report(out)
    # Rated: s01-s08, s12, s14. q1 (8 x 5 + 2 + 0) / 10 of 5; q2 (8 x 5) / 10 of 5;
    # q3 (5 x 10 + 6 + 0 + 6 + 4 + 0) / 10 of 10.
    expected = {"q1": (42 / 10, 5), "q2": (40 / 10, 5), "q3": (66 / 10, 10)}
    for question, (mean_points, points) in expected.items():
        row = _row(page, "data-question", question)
        assert _cell(row, "percent") == f"{100 * mean_points / points:.0f}%"
        assert f">{points}<" in row and _cell(row, "graded") == "10"


def test_pass_rates_per_test_leave_out_ungraded_and_untouched_submissions(out):
    page = build_report(out)
    expected = {"q1: test_shapes": 9, "q1: test_values": 8, "q2: test_stable": 8,
                "q3: test_grad": 6, "q3: test_grad_large": 7}
    for label, passed in expected.items():
        row = _row(page, "data-test", label)
        assert (_cell(row, "passed"), _cell(row, "attempts")) == (str(passed), "10")
    assert re.findall(r'<tr data-test="([^"]+)"', page) == list(expected), "tests in assignment order"
    assert 'id="test-legend"' in page


def test_mistakes_ranked_with_counts_and_explanations(out):
    page = build_report(out)
    slugs = re.findall(r'<tr data-slug="([^"]+)"', page)
    assert slugs == [GRAD, SHIFT, BIAS, UNKNOWN]
    assert [_cell(_row(page, "data-slug", s), "count") for s in slugs] == ["3", "2", "1", "1"]
    shift = _row(page, "data-slug", SHIFT)
    assert "<code>next_token_batch</code>" in shift
    assert "<code>q1: test_values</code>" in shift
    # Backticked names in titles and explanations become code; no raw backtick is left.
    assert "<code>b_head</code>" in _row(page, "data-slug", BIAS)
    for slug in (GRAD, SHIFT, BIAS):
        row = _row(page, "data-slug", slug)
        assert "`" not in _cell(row, "explanation") and "`" not in _cell(row, "title")
    assert "6 of 14 submissions had at least one mistake" in page


def test_unknown_mistake_is_shown_by_its_slug(out):
    row = _row(build_report(out), "data-slug", UNKNOWN)
    assert f"<strong>{UNKNOWN}</strong>" in row
    assert "No record explains" in _cell(row, "explanation")


def test_mistakes_beyond_the_top_are_counted_not_explained(out, monkeypatch):
    monkeypatch.setattr(report_module, "TOP_MISTAKES", 2)
    page = build_report(out)
    assert re.findall(r'<tr data-slug="([^"]+)"', page) == [GRAD, SHIFT]
    other = re.search(r'<p id="other-mistakes">(.*?)</p>', page, re.S).group(1)
    bias_title = str(report_module._inline_code(MISTAKES[BIAS].title))
    assert " ".join(other.split()) == f"Also diagnosed: {bias_title} (1), {UNKNOWN} (1)."


def test_text_from_submissions_and_exports_is_escaped(tmp_path):
    hostile = record_of("s09", name="<script>alert(1)</script>", note='timed out & "killed" <img src=x onerror=alert(2)>')
    page = build_report(write_class(tmp_path / "out", ["s01", "s09"], s09=hostile))
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "timed out &amp; &#34;killed&#34; &lt;img" in page


def test_unreadable_records_are_listed_not_fatal(out):
    (out / "students" / "s12" / "outcome.json").write_text("{not json", encoding="utf-8")
    page = build_report(out)
    assert 'data-folder="s12"' in page[page.index('id="data-problems"'):]
    assert 'data-student="s12"' not in page
    assert _cell(_row(page, "data-test", "q1: test_shapes"), "attempts") == "9"


def test_a_class_with_no_readable_record_still_gets_a_page(tmp_path):
    (tmp_path / "students" / "s01").mkdir(parents=True)
    (tmp_path / "students" / "s01" / "outcome.json").write_text("[]", encoding="utf-8")
    page = build_report(tmp_path)
    assert "No grading record could be read." in page and 'data-folder="s01"' in page


def test_a_class_where_nobody_attempted_has_no_rates(tmp_path):
    page = build_report(write_class(tmp_path / "out", ["s13", "s10"]))
    assert "No attempted submission was graded." in page
    assert 'id="no-tests"' in page and 'id="question-chart"' not in page
    assert 'id="score-histogram"' in page


def test_same_folder_same_page(out):
    assert build_report(out) == build_report(out)


# --------------------------------------------------------------------------- errors


def test_a_folder_without_records_says_where_it_looked_and_what_to_run(tmp_path):
    (tmp_path / "gradebook.csv").write_text("student,total\n", encoding="utf-8")
    with pytest.raises(ReportError, match=r"no grading records in .*outcome\.json.*grader grade"):
        build_report(tmp_path)
    with pytest.raises(ReportError, match="is not a folder"):
        build_report(tmp_path / "nowhere")
    assert issubclass(ReportError, GraderError)


def test_unwritable_destination_is_a_clear_error_and_leaves_nothing_behind(out):
    with pytest.raises(ReportError, match="cannot write the report to"):
        write_report(out, out / "students" / "s01")  # a folder
    assert not [p for p in (out / "students").iterdir() if p.name.startswith(".")]


def test_write_report_defaults_to_the_output_folder(out, tmp_path):
    assert write_report(out) == out / "report.html"
    elsewhere = write_report(out, tmp_path / "reports" / "week3.html")
    assert elsewhere.read_text(encoding="utf-8") == (out / "report.html").read_text(encoding="utf-8")


# --------------------------------------------------------------------------- command line


def test_cli_writes_the_report_where_asked(out, tmp_path):
    runner = CliRunner()
    result = runner.invoke(report_command, [str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "report.html").is_file() and str(out / "report.html") in result.output

    dest = tmp_path / "class.html"
    result = runner.invoke(report_command, [str(out), "-o", str(dest)])
    assert result.exit_code == 0, result.output
    assert "Class report: lm-head" in dest.read_text(encoding="utf-8")


def test_cli_turns_a_folder_without_records_into_a_one_line_error(tmp_path):
    result = CliRunner().invoke(report_command, [str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no grading records in")
    assert "Traceback" not in result.output


def test_cli_help_shows_an_example():
    result = CliRunner().invoke(report_command, ["--help"])
    assert result.exit_code == 0
    assert "grader report out" in result.output and "--output" in result.output


# --------------------------------------------------------------------------- in a browser


def test_report_reads_at_1280_pixels_in_headless_chromium(out, tmp_path):
    """The desk at a laptop's width: no sideways scrolling, every table and chart there, sorting works.

    The screenshot is kept in ``$ARTIFACTS_DIR`` (or the test's temporary folder) for a person to look at.
    """
    require_chromium()
    from playwright.sync_api import sync_playwright

    page_path = write_report(out)
    shots = Path(os.environ.get("ARTIFACTS_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}")
                    if msg.type in ("error", "warning") else None)
            page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            page.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
            page.goto(page_path.as_uri(), wait_until="load")
            images = page.evaluate(
                "Array.from(document.images).map(i => [i.id, i.complete, i.naturalWidth, i.naturalHeight])")
            overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            wide = page.evaluate("""Array.from(document.querySelectorAll('table')).filter(
                t => t.getBoundingClientRect().right > document.documentElement.clientWidth).map(t => t.id)""")
            visible = {selector: page.locator(selector).is_visible()
                       for selector in ("#student-table", "#score-histogram", "#question-chart", "#test-chart",
                                        "#test-legend", "#question-table", "#test-table", "#mistake-table")}
            explanation_width = page.locator("#mistake-table td.explanation").first.bounding_box()["width"]
            page.screenshot(path=str(shots / "report-1280.png"), full_page=True)
            page.locator("#student-table thead th button").nth(2).click()     # total, ascending
            totals = page.evaluate("Array.from(document.querySelectorAll('#student-table td.total'))"
                                   ".map(c => parseFloat(c.dataset.sort))")
        finally:
            browser.close()

    assert errors == []
    assert [image[0] for image in images] == ["score-histogram", "question-chart", "test-chart"]
    for image_id, complete, width, height in images:
        assert complete and width > 0 and height > 0, f"{image_id} did not decode"
    assert overflow <= 0 and wide == [], (overflow, wide)
    assert all(visible.values()), visible
    assert explanation_width > 250, "the explanation column is squeezed"
    assert totals == sorted(totals) and len(totals) == len(CLASS)
    assert (shots / "report-1280.png").stat().st_size > 10_000


#: A note as long as the grader writes them when it had to choose, with a long file name in it:
#: the words must stay whole on a phone, only the file name may break.
LONG_NOTE = ("submitted late (Canvas); 3 submissions; graded the latest (`2026-11-30T23:58:12+00:00`, "
             "`Hausaufgabe_Mueller-Luedenscheidt_final_wirklich_final.ipynb`); not graded: an earlier "
             "notebook and a PDF, which the assignment does not accept")


@pytest.mark.parametrize("width", [PHONE_WIDTH, LAPTOP_WIDTH])
def test_report_fits_a_phone_and_a_laptop_with_tables_scrolling_in_their_own_box(tmp_path, width):
    """At 390 px the page itself never scrolls sideways: each table sits in a box that does, and the
    notes keep a readable column with whole words. At 1280 px nothing needs to scroll."""
    out = write_class(tmp_path / "out", s01=record_of("s01", name="Müller-Lüdenscheidt, Frank-Walter", note=LONG_NOTE))
    with opened(write_report(out), width) as (page, errors):
        layout = page.evaluate(LAYOUT_SCRIPT)
        broken = page.evaluate(BROKEN_WORDS_SCRIPT, '#student-table tr[data-student="s01"] td.note')
        note = page.locator('#student-table tr[data-student="s01"] td.note').bounding_box()
        box = page.locator("#student-table").locator("xpath=..")
        box.evaluate("b => { b.scrollLeft = b.scrollWidth; }")
        scrolled = box.evaluate("b => b.scrollLeft")
        page_scrolled = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")

    assert errors == []
    assert layout["width"] == width
    assert layout["page"] <= 0 and page_scrolled <= 0, f"the page is {layout['page']} px wider than the screen"
    assert set(layout["boxes"]) == {"student-table", "question-table", "test-table", "mistake-table"}
    for table, table_box in layout["boxes"].items():
        assert table_box is not None, f"#{table} is not in a .table-scroll box"
        assert table_box["scrolls"] and table_box["right"] <= width, (table, table_box)
    assert broken == [], f"words broken across lines in the note: {broken}"
    assert note["width"] >= 200 and note["height"] < 400, note
    if width == PHONE_WIDTH:
        assert layout["boxes"]["student-table"]["overflow"] > 0 and scrolled > 0, "the student table should scroll"
    else:
        assert all(b["overflow"] <= 0 for b in layout["boxes"].values()), layout["boxes"]

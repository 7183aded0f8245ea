"""Does ``grader report`` turn a grading output folder into a correct, self-contained page?

Each test builds a small class in ``tmp_path`` in the exact format ``grader grade``
writes (``gradebook.csv`` plus ``<student>/results.json``), with expected
numbers worked out by hand from the table below.
"""
from __future__ import annotations

import base64
import csv
import html
import json
import os
import re
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder import report as report_module
from autograder.cli_report import report as report_command
from autograder.runtime.errors import GraderError
from tests.suites import MISTAKES
from autograder.report import ReportError, build_report, write_report

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

#: The assignment's hidden tests: (question, test, points). 20 points in all.
TESTS = [("q1", "test_shapes", 2.0), ("q1", "test_values", 3.0), ("q2", "test_stable", 5.0),
         ("q3", "test_grad", 4.0), ("q3", "test_grad_large", 6.0)]
QUESTIONS = ["q1", "q2", "q3"]
POSSIBLE = sum(points for _, _, points in TESTS)

GRAD = "gradient-missing-one-over-n"
SHIFT = "targets-not-shifted"
BIAS = "head-bias-missing"
UNKNOWN = "mystery-mistake"  # not in the catalogue: must be shown by its slug

#: student -> (status, {failed test: mistakes diagnosed on it}, note).
#: Students not graded fail every test; s10 was rejected before grading and has no results.json.
CLASS = {
    "s01": ("graded", {}, ""),
    "s02": ("graded", {"q3: test_grad": [GRAD]}, ""),
    "s03": ("graded", {"q3: test_grad": [GRAD], "q3: test_grad_large": [GRAD]}, ""),
    "s04": ("graded", {"q1: test_values": [SHIFT], "q3: test_grad": [GRAD]}, ""),
    "s05": ("graded", {"q1: test_shapes": [], "q1: test_values": [SHIFT]}, ""),
    "s06": ("graded", {"q2: test_stable": [BIAS]}, ""),
    "s07": ("graded", {"q2: test_stable": [UNKNOWN]}, ""),
    "s08": ("graded", {"q3: test_grad_large": []}, ""),
    "s09": ("timeout", {}, "wall-clock limit of 60 s exceeded"),
    "s10": ("rejected", {}, "not a notebook, script or export zip"),
    "s11": ("error", {}, "worker killed: memory limit of 1 GiB"),
    "s12": ("graded", {}, ""),
}
GRADED = [s for s, (status, _, _) in CLASS.items() if status == "graded"]


# --------------------------------------------------------------------------- writing a class


def _verdicts(student: str) -> list[tuple[str, str, float, bool, list[str]]]:
    """(question, test, points, passed, mistakes) of every hidden test for one student."""
    status, failed, _ = CLASS[student]
    rows = []
    for question, test, points in TESTS:
        label = f"{question}: {test}"
        passed = status == "graded" and label not in failed
        rows.append((question, test, points, passed, failed.get(label, [])))
    return rows


def _mistakes(student: str) -> list[str]:
    return list(dict.fromkeys(slug for *_, slugs in _verdicts(student) for slug in slugs))


def write_results(out: Path, student: str) -> None:
    """``OUT/<student>/results.json`` in Gradescope's format, as ``grader grade`` writes it."""
    tests = [{
        "name": f"{question}: {test}", "score": points if passed else 0.0, "max_score": points,
        "status": "passed" if passed else "failed", "output": "" if passed else "Wrong values.",
        "output_format": "md", "visibility": "after_published", "tags": [question],
        "extra_data": {"question": question, "test": test, "mistakes": slugs},
    } for question, test, points, passed, slugs in _verdicts(student)]
    results = {
        "score": sum(t["score"] for t in tests), "output": "", "output_format": "md", "tests": tests,
        "extra_data": {"student": student, "status": CLASS[student][0], "isolation": "bubblewrap",
                       "assignment": "lm-head", "mistakes": _mistakes(student)},
    }
    (out / student).mkdir(parents=True, exist_ok=True)
    (out / student / "results.json").write_text(json.dumps(results, indent=1), encoding="utf-8")


def gradebook_row(student: str) -> list[str]:
    status, _, note = CLASS[student]
    per_question = {q: 0.0 for q in QUESTIONS}
    for question, _, points, passed, _ in _verdicts(student):
        per_question[question] += points if passed else 0.0
    scores = ["" if status == "rejected" else f"{per_question[q]:g}" for q in QUESTIONS]
    return [student, f"Student {student[1:]}", f"{student}@example.edu", f"{sum(per_question.values()):g}",
            f"{POSSIBLE:g}", *scores, status, ";".join(_mistakes(student)), f"submissions/{student}.zip", note]


def write_gradebook(out: Path, rows: list[list[str]], questions: list[str] = QUESTIONS) -> Path:
    path = out / "gradebook.csv"
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["student", "name", "email", "total", "possible", *questions,
                         "status", "mistakes", "submission", "note"])
        writer.writerows(rows)
    return path


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """A graded class of twelve: nine graded, one timeout, one rejected (no results.json), one error."""
    folder = tmp_path / "out"
    folder.mkdir()
    write_gradebook(folder, [gradebook_row(s) for s in CLASS])
    for student, (status, _, _) in CLASS.items():
        (folder / student).mkdir()
        (folder / student / "feedback.md").write_text("# Feedback\n", encoding="utf-8")
        if status != "rejected":
            write_results(folder, student)
    return folder


def _row(page: str, attribute: str, value: str) -> str:
    """The HTML of the table row carrying ``attribute="value"``."""
    match = re.search(rf'<tr {attribute}="{re.escape(html.escape(value))}"[^>]*>(.*?)</tr>', page, re.S)
    assert match, f"no row with {attribute}={value!r}"
    return match.group(1)


def _cell(row: str, css_class: str) -> str:
    match = re.search(rf'<td class="[^"]*\b{css_class}\b[^"]*">\s*(.*?)\s*</td>', row, re.S)
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


def test_summary_counts_each_status(out):
    page = build_report(out)
    assert "<title>Class report: lm-head</title>" in page
    assert "12 submissions in the gradebook" in page
    for status, count in {"graded": 9, "timeout": 1, "rejected": 1, "error": 1}.items():
        assert f'data-status="{status}">{count} {status}</li>' in page
    # Graded totals: s01, s12 at 20; s05, s06, s07 at 15; s02 16, s03 10, s04 13, s08 14 (138 / 9).
    assert "scored 15.33 on average (median 15)" in page
    assert "out of 20." in page


def test_plots_are_embedded_pngs_and_nothing_is_fetched(out):
    page = build_report(out)
    sources = dict(re.findall(r'<img class="plot" id="([\w-]+)" src="([^"]+)"', page))
    assert set(sources) == {"score-histogram", "question-chart", "test-chart"}
    for uri in sources.values():
        width, height = _png_size(uri)
        assert width > 200 and height > 100
    assert not re.search(r"https?://", page)
    assert not re.search(r'<(script|link[^>]+stylesheet|iframe)', page)


def test_question_means_count_graded_submissions_only(out):
    page = build_report(out)
    # Graded means: q1 (7 x 5 + 2 + 0) / 9 of 5; q2 (7 x 5) / 9 of 5; q3 (5 x 10 + 6 + 0 + 6 + 4) / 9 of 10.
    expected = {"q1": (37 / 9, 5), "q2": (35 / 9, 5), "q3": (66 / 9, 10)}
    for question, (mean_points, points) in expected.items():
        row = _row(page, "data-question", question)
        assert _cell(row, "percent") == f"{100 * mean_points / points:.0f}%"
        assert f">{points}<" in row and ">9<" in row


def test_pass_rates_per_test_leave_out_ungraded_submissions(out):
    page = build_report(out)
    expected = {"q1: test_shapes": 8, "q1: test_values": 7, "q2: test_stable": 7,
                "q3: test_grad": 6, "q3: test_grad_large": 7}
    for label, passed in expected.items():
        row = _row(page, "data-test", label)
        assert (_cell(row, "passed"), _cell(row, "attempts")) == (str(passed), "9")
    labels = re.findall(r'<tr data-test="([^"]+)"', page)
    assert labels == list(expected), "tests are listed in assignment order"
    assert "over the 9 graded submissions with a results file" in page


def test_mistakes_ranked_with_counts_and_catalogue_explanations(out):
    page = build_report(out)
    slugs = re.findall(r'<tr data-slug="([^"]+)"', page)
    assert slugs == [GRAD, SHIFT, BIAS, UNKNOWN]
    assert [_cell(_row(page, "data-slug", s), "count") for s in slugs] == ["3", "2", "1", "1"]
    shift = _row(page, "data-slug", SHIFT)
    assert html.escape(MISTAKES[SHIFT].title) in shift
    assert html.escape(MISTAKES[SHIFT].explanation) in shift
    assert "<code>next_token_batch</code>" in shift
    assert "<code>q1: test_values</code>" in shift
    # Backticked names in an explanation become code, the rest stays escaped text.
    assert "<code>b_head</code>" in _row(page, "data-slug", BIAS)
    assert "`" not in _cell(_row(page, "data-slug", BIAS), "explanation")
    # s02 to s07 had a diagnosed mistake; s08 failed a test with none recognized.
    assert "6 of 12 submissions had at least one mistake" in page


def test_unknown_mistake_is_shown_by_its_slug(out):
    row = _row(build_report(out), "data-slug", UNKNOWN)
    assert f"<strong>{UNKNOWN}</strong>" in row
    assert "Not in this grader" in _cell(row, "explanation")


def test_mistakes_beyond_the_top_are_counted_not_explained(out, monkeypatch):
    monkeypatch.setattr(report_module, "TOP_MISTAKES", 2)
    page = build_report(out)
    assert re.findall(r'<tr data-slug="([^"]+)"', page) == [GRAD, SHIFT]
    other = re.search(r'<p id="other-mistakes">(.*?)</p>', page, re.S).group(1)
    assert " ".join(other.split()) == f"Also diagnosed: {MISTAKES[BIAS].title} (1), {UNKNOWN} (1)."


def test_timed_out_rejected_and_failed_submissions_are_listed_with_notes(out):
    page = build_report(out)
    listed = re.findall(r'<tr data-student="([^"]+)" data-status="([^"]+)"', page)
    assert listed == [("s10", "rejected"), ("s09", "timeout"), ("s11", "error")]
    assert "wall-clock limit of 60 s exceeded" in _row(page, "data-student", "s09")
    assert "not a notebook, script or export zip" in _row(page, "data-student", "s10")
    assert "<code>submissions/s11.zip</code>" in _row(page, "data-student", "s11")


def test_text_from_the_gradebook_is_escaped(tmp_path):
    row = gradebook_row("s09")
    row[1] = "<script>alert(1)</script>"
    row[-1] = 'timed out & "killed"'
    write_gradebook(tmp_path, [gradebook_row("s01"), row])
    page = build_report(tmp_path)
    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "timed out &amp; &#34;killed&#34;" in page


def test_missing_and_unreadable_results_are_reported_not_fatal(out):
    (out / "s01" / "results.json").unlink()
    (out / "s12" / "results.json").write_text("{not json", encoding="utf-8")
    page = build_report(out)
    problems = page[page.index('id="data-problems"'):]
    assert "s01: graded, but has no <code>results.json</code>" in problems
    assert "s12: <code>s12/results.json</code> could not be read" in problems
    assert _cell(_row(page, "data-test", "q1: test_shapes"), "attempts") == "7"


def test_a_class_with_no_results_files_still_gets_a_page(out):
    for student in CLASS:
        (out / student / "results.json").unlink(missing_ok=True)
    page = build_report(out)
    assert 'id="no-tests"' in page and 'id="question-chart"' not in page
    assert ">unknown<" in _row(page, "data-question", "q1")
    assert 'id="score-histogram"' in page


def test_same_folder_same_page(out):
    assert build_report(out) == build_report(out)


# --------------------------------------------------------------------------- errors


def _gradebook_text(out: Path, text: str | bytes) -> None:
    path = out / "gradebook.csv"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))


HEADER = "student,name,email,total,possible,q1,status,mistakes,submission,note\n"
BROKEN_GRADEBOOKS = {
    "empty": ("", "is empty"),
    "blank lines only": ("\n\n", "is empty"),
    "header only": (HEADER, "has a header but no students"),
    "other header": ("id,score\n1,2\n", "does not look like a gradebook"),
    "short row": (HEADER + "s1,A,a@x,1,2,graded,,s1.zip\n", "line 2: expected 10 cells"),
    "bad number": (HEADER + "s1,A,a@x,1,2,1,graded,,,\ns2,B,b@x,lots,2,1,graded,,,\n",
                   "line 3: column 'total' should be a plain decimal number, found 'lots'"),
    "not a number": (HEADER + "s1,A,a@x,nan,2,1,graded,,,\n", "column 'total'"),
    "unknown status": (HEADER + "s1,A,a@x,1,2,1,finished,,,\n", "status 'finished' is not one of"),
    "twice": (HEADER + "s1,A,a@x,1,2,1,graded,,,\ns1,A,a@x,1,2,1,graded,,,\n", "'s1' appears twice"),
    "no student id": (HEADER + ",A,a@x,1,2,1,graded,,,\n", "the student column is empty"),
    "field too long": (HEADER + "s1,A,a@x,1,2,1,graded,," + "x" * 200_000 + ",\n", "line 2: not valid CSV"),
    "blank line before a bad header": ("\nid,score\n", "does not look like a gradebook"),
    "not utf-8": (HEADER.encode() + b"s1,\xff\xfe,a@x,1,2,1,graded,,,\n", "is not UTF-8"),
}


@pytest.mark.parametrize("case", BROKEN_GRADEBOOKS)
def test_corrupt_gradebook_names_the_file_and_the_fix(tmp_path, case):
    text, expected = BROKEN_GRADEBOOKS[case]
    _gradebook_text(tmp_path, text)
    with pytest.raises(ReportError) as info:
        build_report(tmp_path)
    message = str(info.value)
    assert expected in message
    assert str(tmp_path / "gradebook.csv") in message and "grader grade" in message


def test_missing_gradebook_says_where_it_looked_and_what_to_run(tmp_path):
    with pytest.raises(ReportError, match=r"no gradebook at .*gradebook\.csv.*grader grade"):
        build_report(tmp_path)
    with pytest.raises(ReportError, match="is not a folder"):
        build_report(tmp_path / "nowhere")
    assert issubclass(ReportError, GraderError)


def test_unwritable_destination_is_a_clear_error_and_leaves_nothing_behind(out):
    with pytest.raises(ReportError, match="cannot write the report to"):
        write_report(out, out / "s01")  # a folder
    assert not list(out.glob(".*.partial"))


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


def test_cli_turns_a_missing_gradebook_into_a_one_line_error(tmp_path):
    result = CliRunner().invoke(report_command, [str(tmp_path)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: no gradebook at")
    assert "Traceback" not in result.output


def test_cli_help_shows_an_example():
    result = CliRunner().invoke(report_command, ["--help"])
    assert result.exit_code == 0
    assert "grader report out" in result.output and "--output" in result.output


# --------------------------------------------------------------------------- in a browser


def _require_chromium() -> None:
    """In CI the browser test must run; elsewhere it is skipped only when Chromium is absent."""
    if not CHROMIUM.is_file():
        message = f"{CHROMIUM} is missing: apt-get install -y chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def test_report_renders_in_headless_chromium(out):
    _require_chromium()
    from playwright.sync_api import sync_playwright

    page_path = write_report(out)
    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}")
                    if msg.type in ("error", "warning") else None)
            page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            page.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
            page.goto(page_path.as_uri(), wait_until="load")
            images = page.evaluate(
                "Array.from(document.images).map(i => [i.id, i.complete, i.naturalWidth, i.naturalHeight])")
            visible = {selector: page.locator(selector).is_visible()
                       for selector in ("#score-histogram", "#question-chart", "#test-chart", "#question-table",
                                        "#test-table", "#mistake-table", "#problem-table")}
            histogram_box = page.locator("#score-histogram").bounding_box()
        finally:
            browser.close()

    assert errors == []
    assert [image[0] for image in images] == ["score-histogram", "question-chart", "test-chart"]
    for image_id, complete, width, height in images:
        assert complete and width > 0 and height > 0, f"{image_id} did not decode"
    assert all(visible.values()), visible
    assert histogram_box["width"] > 300 and histogram_box["height"] > 100

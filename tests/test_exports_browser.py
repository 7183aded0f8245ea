"""Does the self-check page work in a real browser, offline?

Loads a generated page from a file:// URL in headless Chromium (Debian's
``chromium`` package) and answers every question: the right answer is
marked right, a distractor's value shows that misconception's feedback, a
malformed entry is told so. The page's script is held to the same parsing
table as ``question_bank.answers``. Skipped only when Chromium is missing
outside CI; in CI (``CI`` set) a missing browser is a failure.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from question_bank import build_bundle
from question_bank.answers import answer_key
from question_bank.exporters import get_exporter
from test_practice import ERROR, PARSE_CASES, case_key

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

if not CHROMIUM.exists() and not os.environ.get("CI"):
    pytest.skip("Debian's chromium is not installed (apt-get install chromium); CI always runs these tests",
                allow_module_level=True)


@pytest.fixture(scope="module")
def bundle() -> dict:
    """One variant of every family; seed 2 covers every answer kind, ln-probabilities and multiple choice."""
    bundle = build_bundle(n=1, seed=2)
    kinds = {(v["answer"]["kind"], v["answer"]["log_space"]) for v in bundle["sheets"][0]["variants"]}
    assert {("multiple_choice", False), ("float", True), ("shape", False), ("true_false", False),
            ("ordering", False), ("matching", False)} <= kinds
    return bundle


@pytest.fixture(scope="module")
def browser_page(bundle, tmp_path_factory):
    """The self-check page open in headless Chromium, with console errors and requests recorded."""
    from playwright.sync_api import sync_playwright

    path = tmp_path_factory.mktemp("selfcheck") / "questions.html"
    path.write_text(get_exporter("selfcheck").transform(bundle)["questions.html"], encoding="utf-8")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        page = browser.new_page()
        errors: list[str] = []
        requests: list[str] = []
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("request", lambda request: requests.append(request.url))
        page.goto(path.as_uri())
        yield page, errors, requests
        browser.close()


def plain_words(markdown: str) -> str:
    """The leading words of a feedback text, before any math or code (which render differently)."""
    return re.split(r"[$`*]", markdown)[0].strip()


def check(page, ident: str) -> tuple[str, str]:
    """Press the question's Check button; return the feedback box's class and text."""
    page.click(f"#{ident} button[type=submit]")
    box = page.locator(f"#{ident} .feedback")
    return box.get_attribute("class"), box.inner_text()


def typed(value) -> str:
    if isinstance(value, list):
        return "x".join(map(str, value))
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def choose(page, ident: str, ids: list[str]) -> None:
    """Select exactly ``ids`` among the question's radio buttons or checkboxes."""
    for box in page.locator(f"#{ident} input[type=checkbox]").all():
        box.set_checked(box.get_attribute("value") in ids)
    for choice_id in ids:
        page.check(f"#{ident} input[value='{choice_id}']")


def pick_slots(page, ident: str, ids: list[str]) -> None:
    """Choose one letter per slot in an ordering's or matching's menus."""
    for menu, choice_id in zip(page.locator(f"#{ident} select.slot").all(), ids):
        menu.select_option(choice_id)


def check_arrangement(page, ident: str, variant: dict) -> None:
    """An ordering or matching: no letters picked, a left-over option in the first slot, then the key."""
    from question_bank.answers import judge

    cls, text = check(page, ident)
    assert cls == "feedback malformed" and "first." in text, (variant["id"], text)
    key = answer_key(variant)
    distractor = next(c for c in variant["choices"] if not c["correct"])
    wrong = [distractor["id"]] + key["value"][1:]
    pick_slots(page, ident, wrong)
    cls, text = check(page, ident)
    expected = judge(key, wrong)
    assert cls == "feedback wrong", (variant["id"], text)
    head = f"Not right: {expected.misconception}." if expected.misconception else "Not right."
    assert text.startswith(head), (variant["id"], text)
    assert plain_words(expected.feedback) in text
    pick_slots(page, ident, key["value"])
    cls, text = check(page, ident)
    assert cls == "feedback right" and text.startswith("Right."), (variant["id"], text)


def test_every_question_marks_right_wrong_and_malformed_answers(browser_page, bundle):
    page, errors, _ = browser_page
    variants = bundle["sheets"][0]["variants"]
    for number, variant in enumerate(variants, start=1):
        ident, kind = f"q{number}", variant["answer"]["kind"]
        if kind in ("ordering", "matching"):
            check_arrangement(page, ident, variant)
            continue
        distractor = next(c for c in variant["choices"] if not c["correct"])
        numeric = kind in ("float", "integer", "shape")
        # 1. malformed (or empty) entry
        if numeric:
            page.fill(f"#{ident}-input", "not an answer")
        cls, text = check(page, ident)
        assert cls == "feedback malformed", (variant["id"], text)
        assert ("Could not read 'not an answer'" if numeric else "first.") in text
        # 2. a distractor names its misconception
        if numeric:
            page.fill(f"#{ident}-input", typed(distractor["value"]))
        else:
            choose(page, ident, [distractor["id"]])
        cls, text = check(page, ident)
        assert cls == "feedback wrong", (variant["id"], text)
        assert f"Not right: {distractor['misconception']['name']}." in text
        assert plain_words(distractor["feedback"]) in text
        # 3. the right answer
        if numeric:
            page.fill(f"#{ident}-input", typed(variant["answer"]["value"]))
        else:
            choose(page, ident, [c["id"] for c in variant["choices"] if c["correct"]])
        cls, text = check(page, ident)
        assert cls == "feedback right", (variant["id"], text)
        assert text.startswith("Right.")
        assert page.locator(f"#{ident} details.solution").is_visible()
    assert page.inner_text("#score") == f"{len(variants)} of {len(variants)} right"
    assert errors == []


def test_page_loads_nothing_from_the_network(browser_page):
    _, errors, requests = browser_page
    assert requests and all(url.startswith("file://") for url in requests), requests
    assert errors == []


def test_math_is_rendered_as_mathml(browser_page):
    page, _, _ = browser_page
    sizes = page.evaluate("Array.from(document.querySelectorAll('section.item > * math'))"
                          ".map(m => m.getBoundingClientRect().width)")
    assert sizes and min(sizes) > 0


def test_page_script_reads_answers_like_the_python_core(browser_page):
    page, _, _ = browser_page
    cases = [{"key": case_key(kind, unit), "text": text} for kind, unit, text, _ in PARSE_CASES]
    results = page.evaluate("""cases => cases.map(c => {
        try { return {value: window.selfcheck.parseResponse(c.text, c.key)}; }
        catch (err) { return {error: err.message}; }
    })""", cases)
    for (kind, unit, text, expected), result in zip(PARSE_CASES, results):
        if expected == ERROR:
            assert "error" in result, (kind, text, result)
        elif kind == "float":
            assert result.get("value") == pytest.approx(expected, rel=1e-12), (kind, text, result)
        else:
            assert result.get("value") == expected, (kind, text, result)


def test_page_script_judges_like_the_python_core(browser_page, bundle):
    page, _, _ = browser_page
    from question_bank.answers import judge

    cases = []
    for variant in bundle["sheets"][0]["variants"]:
        key = answer_key(variant)
        if key["kind"] in ("ordering", "matching"):
            # the key, its reverse, and each choice put in each slot
            cases += [(key, key["value"]), (key, key["value"][::-1])]
            cases += [(key, key["value"][:k] + [c["id"]] + key["value"][k + 1:])
                      for k in range(len(key["value"])) for c in variant["choices"]]
            continue
        for choice in variant["choices"]:
            response = choice["id"] if key["kind"] == "single_choice" else choice["value"]
            if key["kind"] == "multiple_choice":
                response = [choice["id"]]
            cases.append((key, response))
    verdicts = page.evaluate("cases => cases.map(([key, response]) => window.selfcheck.judge(key, response))",
                             [list(c) for c in cases])
    for (key, response), verdict in zip(cases, verdicts):
        expected = judge(key, response)
        assert (verdict["correct"], verdict["feedback"], verdict["misconception"]) == \
            (expected.correct, expected.feedback, expected.misconception)


def test_page_script_reads_orderings_and_matchings_like_the_python_core(browser_page, bundle):
    page, _, _ = browser_page
    from question_bank.answers import ResponseError, parse_response

    keys = [answer_key(v) for v in bundle["sheets"][0]["variants"] if v["answer"]["kind"] in ("ordering", "matching")]
    assert {k["kind"] for k in keys} == {"ordering", "matching"}
    texts = ["a b c d", "a, b, c, d", "abcd", "(a)(b)(c)(d)", "a-b-c-d", "a b c", "a a b c", "a b c z", "", "A B C D E"]
    cases = [{"key": key, "text": text} for key in keys for text in texts]
    results = page.evaluate("""cases => cases.map(c => {
        try { return {value: window.selfcheck.parseResponse(c.text, c.key)}; }
        catch (err) { return {error: err.message}; }
    })""", cases)
    for case, result in zip(cases, results):
        try:
            expected = {"value": parse_response(case["text"], case["key"])}
        except ResponseError as exc:
            expected = {"error": str(exc)}
        assert result == expected, (case["key"]["kind"], case["text"], result, expected)

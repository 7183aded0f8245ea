"""Open a generated page in headless Chromium (Debian's ``chromium``) as a phone or a laptop shows it.

The phone is a 390 px wide viewport (an iPhone 12 to 15; most Android phones are 360 to 412) with
Chromium's mobile emulation on, so the page's viewport meta tag decides the
layout width, as it does on the phone (without it the page is laid out 980 px wide and shrunk).
In CI (``CI`` set) a missing browser is a failure; elsewhere the test is skipped.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

PHONE_WIDTH = 390
LAPTOP_WIDTH = 1280

#: Overflow of the page and of each table's box, in CSS pixels, as the tests below compare them.
#: ``page``: how much wider the document is than the viewport; ``boxes``: for each table (by id),
#: the box it sits in (``None`` when it is in none), whether that box may scroll sideways, its
#: right edge, and how much wider its content is than the box.
LAYOUT_SCRIPT = """() => {
  const html = document.documentElement;
  const box = t => t.closest('.table-scroll');
  return {
    page: html.scrollWidth - html.clientWidth,
    width: html.clientWidth,
    boxes: Object.fromEntries(Array.from(document.querySelectorAll('table')).map(t => [t.id, box(t) && {
      scrolls: ['auto', 'scroll'].includes(getComputedStyle(box(t)).overflowX),
      right: box(t).getBoundingClientRect().right,
      overflow: box(t).scrollWidth - box(t).clientWidth,
    }])),
  };
}"""

#: The words (runs of letters, up to 15) of the elements matching a selector that a line break cuts
#: in two: a word drawn on two lines has client rectangles at two heights. Text in ``code`` (file
#: names, times) is left out: a name longer than its column may be broken, prose may not.
BROKEN_WORDS_SCRIPT = """selector => {
  const broken = [];
  for (const element of document.querySelectorAll(selector)) {
    const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('code')) continue;
      for (const match of node.data.matchAll(/\\p{L}{2,15}/gu)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const tops = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
        if (tops.size > 1) broken.push(match[0]);
      }
    }
  }
  return broken;
}"""


def require_chromium() -> None:
    """In CI the browser tests must run; elsewhere they are skipped only when Chromium is absent."""
    if not CHROMIUM.is_file():
        message = f"{CHROMIUM} is missing: apt-get install -y chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


def device(width: int) -> dict:
    """Playwright page options for a phone (``PHONE_WIDTH``) or a desktop browser of ``width``."""
    if width <= PHONE_WIDTH:
        return {"viewport": {"width": width, "height": 844}, "is_mobile": True, "has_touch": True}
    return {"viewport": {"width": width, "height": 900}}


@contextmanager
def opened(path: Path, width: int) -> Iterator[tuple[object, list[str]]]:
    """``path`` loaded at ``width``; yields the page and the console errors, warnings and failed requests."""
    require_chromium()
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(**device(width))
            page.on("console", lambda msg: errors.append(f"console {msg.type}: {msg.text}")
                    if msg.type in ("error", "warning") else None)
            page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            page.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
            page.goto(path.as_uri(), wait_until="load")
            yield page, errors
        finally:
            browser.close()

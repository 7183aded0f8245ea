"""Does a paper exam print as promised in Chromium: nothing wider than an A4 page's printable width,
each student's exam starting on its own page, and a class's marking grid on one page (A4 and Letter)?

The PDFs are Chromium's own print output (``page.pdf``), read back with pypdf.
"""
from __future__ import annotations

import io
from pathlib import Path

import pytest
import yaml

from browser import opened
from question_bank.exam import build_exam_bundle, parse_exam_spec
from question_bank.exporters import get_exporter
from test_paper_exam import SPEC

#: A4's width less the exam's 15 mm margins, in CSS pixels (96 per inch): the printable width.
A4_PRINTABLE_PX = round((210 - 2 * 15) / 25.4 * 96)

#: Every element's right edge beyond the page's width, in print layout (``[]`` when all fit).
OVERFLOW_SCRIPT = """() => {
  const width = document.documentElement.clientWidth;
  const over = [];
  for (const el of document.body.querySelectorAll('*')) {
    const right = el.getBoundingClientRect().right;
    if (right > width + 0.5) over.push(`${el.tagName}.${el.className} ${Math.round(right - width)}px`);
  }
  return {page: document.documentElement.scrollWidth - width, over: over.slice(0, 10)};
}"""


def class_files(tmp_path: Path, students: list[str], spec: dict | None = None) -> dict[str, Path]:
    spec = parse_exam_spec(spec or yaml.safe_load(SPEC))
    bundle = build_exam_bundle(spec, seed=8, students=students, salt="pepper")
    paths = {}
    for name, content in get_exporter("paper").transform(bundle).items():
        paths[name] = tmp_path / name
        paths[name].write_text(content, encoding="utf-8")
    return paths


def pdf_pages(path: Path, paper: str) -> list[str]:
    """The text of each page Chromium prints ``path`` on, on ``paper`` (A4 or Letter)."""
    from pypdf import PdfReader

    with opened(path, 1280) as (page, errors):
        data = page.pdf(format=paper)
        assert errors == []
    return [p.extract_text() for p in PdfReader(io.BytesIO(data)).pages]


def test_every_exam_fits_the_printable_width_of_a4(tmp_path):
    files = class_files(tmp_path, ["ada", "bo", "cy"])
    with opened(files["all-exams.html"], A4_PRINTABLE_PX) as (page, errors):
        page.emulate_media(media="print")
        layout = page.evaluate(OVERFLOW_SCRIPT)
    assert layout == {"page": 0, "over": []} and errors == []


def test_a_twelve_slot_grid_of_the_widest_keys_fits_the_printable_width_of_a4(tmp_path):
    slots = [{"family": "param-count", "subquestion": "total"}, {"family": "lm-head-shapes", "subquestion": "logits"},
             {"family": "causal-mask", "subquestion": "blocked_pairs"}, {"family": "perplexity-from-probs"}] * 3
    files = class_files(tmp_path, [f"z{5_000_000 + k}" for k in range(10)], {"slots": slots})
    with opened(files["marking-grid.html"], round((210 - 2 * 12) / 25.4 * 96)) as (page, errors):
        page.emulate_media(media="print")
        layout = page.evaluate(OVERFLOW_SCRIPT)
    assert layout == {"page": 0, "over": []} and errors == []


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_each_exam_starts_on_its_own_page(tmp_path, paper):
    students = ["ada", "bo", "cy"]
    pages = pdf_pages(class_files(tmp_path, students)["all-exams.html"], paper)
    starts = [text for text in pages if "Student ID" in text]
    assert len(starts) == len(students)
    assert all(text.lstrip().startswith("LM 101 & friends") for text in starts)
    assert [next(s for s in students if f"Student ID {s}" in " ".join(text.split())) for text in starts] == students


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_a_class_of_forty_has_its_marking_grid_on_one_page(tmp_path, paper):
    students = [f"z{5_000_000 + k}" for k in range(40)]
    pages = pdf_pages(class_files(tmp_path, students)["marking-grid.html"], paper)
    assert all(s in pages[0] for s in students)
    assert "Key:" not in pages[0] and pages[1].lstrip().startswith("Key:")

"""Do find-the-bug items show a real catalogued mistake, name it, and reach every export?"""
from __future__ import annotations

import io
import re
import zipfile

import pytest

from question_bank.answers import answer_key, judge
from question_bank.code_reading import LISTINGS, catalogue_entries, reproducing_entries
from question_bank.exam import build_exam_bundle, parse_exam_spec
from question_bank.exporters import get_exporter
from question_bank.families.find_the_bug import MISCONCEPTION_OF
from question_bank.exporters._markup import mathml, to_html, to_text
from question_bank.generate import build_bundle, generate_variant
from question_bank.practice import run_quiz
from question_bank.registry import get_family

FAMILY = "find-the-bug"


@pytest.fixture(scope="module")
def bundle():
    return build_bundle([FAMILY], n=6, seed=5)


def test_each_listing_reproduces_its_own_catalogue_entry_and_no_other():
    for function, listing in LISTINGS.items():
        assert reproducing_entries(listing, listing.source()) == [], function
        for slug in listing.edits:
            assert reproducing_entries(listing, listing.source(slug)) == [slug], (function, slug)


def test_choices_and_feedback_are_the_catalogue_text():
    variant = generate_variant(FAMILY, 11)
    entries = catalogue_entries(variant["parameters"]["function"])
    for choice in variant["choices"]:
        entry = entries[choice["value"]]
        assert choice["text"] == entry.title
        assert entry.explanation in choice["feedback"]
    assert variant["answer"]["display"] == entries[variant["parameters"]["mistake"]].title


def test_no_distractor_shares_the_keys_misconception():
    """"`axis` argument ignored" and "Softmax over the wrong axis" both describe a hard-wired axis=-1."""
    for seed in range(60):
        variant = generate_variant(FAMILY, seed)
        key = next(c for c in variant["choices"] if c["correct"])
        own = MISCONCEPTION_OF[key["value"]]
        assert all(c["misconception"]["id"] != own for c in variant["choices"] if not c["correct"]), variant["id"]
        assert all(m["misconception"]["id"] != own for m in variant["mistakes"]), variant["id"]


def test_a_listing_with_a_second_mistake_is_told_apart():
    """Two mistakes at once reproduce neither entry: the key is computed from the code, not the edit table."""
    listing = LISTINGS["cross_entropy_loss"]
    both = listing.source("gradient-missing-one-over-n").replace("np.log(", "np.log2(")
    assert reproducing_entries(listing, both) == []


def test_the_check_rejects_a_key_moved_to_another_choice():
    variant = generate_variant(FAMILY, 3)
    fam = get_family(FAMILY)
    assert fam.check(variant) == []
    right = next(c for c in variant["choices"] if c["correct"])
    wrong = next(c for c in variant["choices"] if not c["correct"])
    right["correct"], wrong["correct"] = False, True
    assert fam.check(variant)


def test_code_blocks_keep_their_lines_in_html_and_terminal_text():
    markdown = "Read:\n\n```python\ndef f(x):\n    y = x * 2  # $5 *a*\n    return y\n```\n\nWhich *line*?"
    html_text = to_html(markdown, mathml)
    assert '<pre class="code"><code>def f(x):\n    y = x * 2  # $5 *a*\n    return y</code></pre>' in html_text
    assert "<em>line</em>" in html_text
    text = to_text(markdown)
    assert "        y = x * 2  # $5 *a*" in text and "Which line?" in text


def test_wrong_pick_names_the_misconception_in_self_check_and_terminal():
    variant = generate_variant(FAMILY, 7)
    key = answer_key(variant)
    wrong = next(c for c in variant["choices"] if not c["correct"])
    verdict = judge(key, wrong["id"])
    assert not verdict.correct and verdict.misconception == wrong["misconception"]["name"]
    out = io.StringIO()
    run_quiz([variant], io.StringIO(wrong["id"] + "\n"), out)
    assert f"Not right: {wrong['misconception']['name']}." in out.getvalue()
    assert "    def " in out.getvalue()           # the listing keeps its indentation in the terminal


@pytest.mark.parametrize("fmt", ["html", "selfcheck"])
def test_page_exports_print_the_listing_as_code(bundle, fmt):
    files = get_exporter(fmt).transform(bundle)
    page = next(v for k, v in files.items() if k.endswith(".html") and "answer-key" not in k)
    assert page.count('<pre class="code"><code>def ') == len(bundle["sheets"][0]["variants"])


def test_lms_exports_carry_the_listing_as_preformatted_code(bundle):
    moodle = get_exporter("moodle").transform(bundle)["questions.xml"]
    assert moodle.count('<pre class="code"><code>def ') == 6
    assert moodle.count('type="multichoice"') == 6
    qti = get_exporter("qti").transform(bundle)["questions.zip"]
    with zipfile.ZipFile(io.BytesIO(qti)) as archive:
        text = "".join(archive.read(n).decode() for n in archive.namelist())
    assert text.count("&lt;pre class=\"code\"&gt;&lt;code&gt;def ") == 6
    assert text.count("multiple_choice_question") == 6


def test_an_exam_slot_pins_the_function():
    spec = parse_exam_spec({"total": 2, "slots": [{"family": FAMILY, "subquestion": "softmax", "points": 2}]})
    sheets = build_exam_bundle(spec, seed=1, students=["a", "b", "c"], salt="s")["sheets"]
    for sheet in sheets:
        (variant,) = sheet["variants"]
        assert variant["parameters"]["function"] == "softmax"
        assert re.search(r"def softmax\(x, axis=-1\):", variant["stem"])


def test_the_paper_exam_prints_the_listing_as_code():
    spec = parse_exam_spec({"total": 3, "slots": [{"family": FAMILY, "subquestion": "cross_entropy_loss",
                                                    "points": 3}]})
    files = get_exporter("paper").transform(build_exam_bundle(spec, seed=2, students=["a", "b"], salt="s"))
    sheets = [v for k, v in files.items() if k.endswith(".html") and "grid" not in k and "key" not in k]
    assert sheets and all('<pre class="code"><code>def cross_entropy_loss(' in page for page in sheets)

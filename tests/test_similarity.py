"""Does similarity rank disguised copies above independent work, without flagging the obvious code?"""
from __future__ import annotations

import csv
import functools
import io
import json
import random

import nbformat
import pytest
from click.testing import CliRunner

from autograder.cli import main
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.outcome import RECORD_NAME, Entry, GradeOutcome, GradeRecord
from autograder.similarity.base import starter_cells
from autograder.similarity.compare import Settings, base_hashes, document, rank_pairs
from autograder.similarity.normalize import program_tokens
from autograder.similarity.section import (DEFAULT_THRESHOLD, csv_text, section_html, similarity_section,
                                          write_similarity)
from autograder.similarity.winnow import K, W, kgram_hashes, winnow
from tests.browser import LAPTOP_WIDTH, PHONE_WIDTH, opened
from tests.similarity_cohort import ASSIGNMENTS, cohort, course_code, reference_source


def _texts(source: str) -> list[str]:
    return [t.text for t in program_tokens([source])]


def test_names_comments_docstrings_annotations_and_layout_do_not_change_the_tokens():
    original = ('def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:\n    """Stable."""\n'
                '    shifted = x - x.max(axis=axis, keepdims=True)\n    e = np.exp(shifted)\n'
                '    return e / e.sum(axis=axis, keepdims=True)\n')
    disguised = ('def soft(z, ax=-1):\n    # my own version\n\n    s = (z -\n         z.max(axis=ax, keepdims=True,))\n'
                 "    ex = np.exp(s)  # exponentiate\n    return (ex / ex.sum(axis=ax, keepdims=True))\n")
    assert _texts(original) == _texts(disguised)
    assert "np" in _texts(original) and "max" in _texts(original) and "axis" in _texts(original)


def test_different_code_gives_different_tokens():
    assert _texts("def f(x):\n    return np.exp(x)\n") != _texts("def f(x):\n    return np.log(x)\n")


def test_a_cell_that_does_not_parse_is_still_tokenized():
    assert _texts("def broken(:\n    x = np.exp(1)\n")[:3] == ["def", "broken", "("]


def test_dead_code_and_a_list_built_by_a_loop_do_not_change_the_tokens():
    plain = "def f(xs):\n    res = [y * 2 for y in xs if y > 0]\n    return res\n"
    padded = ("def f(xs):\n    out = []\n    _unused = None\n    for x in xs:\n        if x > 0:\n"
              "            out.append(x * 2)\n    if False:\n        print('debug')\n    for _ in range(0):\n"
              "        pass\n    checked = len([]) == 0\n    return out\n    debug_mode = False\n")
    assert _texts(plain) == _texts(padded)
    assert _texts("d = {k: k + 1 for k in ks}\nprint(d)\n") == _texts("d = {}\nfor k in ks:\n    d[k] = k + 1\nprint(d)\n")


def test_code_that_may_do_something_is_kept():
    assert _texts("x = step(3)\n") == _texts("step(3)\n") != []          # the value is never read, the call stays
    recurrence = "acc = [0]\nfor v in xs:\n    acc.append(acc[-1] + v)\nprint(acc)\n"
    assert "for" in _texts(recurrence)                                  # not a comprehension: it reads itself
    assert "if" in _texts("def f(x):\n    if x:\n        return 1\n    return 2\n")


def test_functions_in_another_order_share_every_kgram():
    one = "def g(a):\n    return np.sqrt(np.abs(a)).sum(axis=0) * 3 - np.log1p(a).mean()\n"
    first, second = document("x", [one + "\n" + LONG]), document("y", [LONG + "\n" + one])
    assert {f.hash for f in first.fingerprints} == {f.hash for f in second.fingerprints}


def test_winnowing_finds_every_shared_run_of_k_plus_w_minus_one_tokens():
    rng = random.Random(7)
    for _ in range(200):
        shared = [f"t{rng.randrange(30)}" for _ in range(K + W - 1)]
        a = [f"a{rng.randrange(30)}" for _ in range(rng.randrange(40))] + shared + ["a"] * rng.randrange(5)
        b = [f"b{rng.randrange(30)}" for _ in range(rng.randrange(40))] + shared
        assert {f.hash for f in winnow(kgram_hashes(a))} & {f.hash for f in winnow(kgram_hashes(b))}


def _class(codes: dict[str, str]):
    return [document(name, [code]) for name, code in codes.items()]


def _class_cells(codes: dict[str, list[str]]):
    return [document(name, cells) for name, cells in codes.items()]


LONG = ("def f(values, weights):\n    total = 0.0\n    for v, w in zip(values, weights):\n"
        "        total += math.sqrt(abs(v)) * w ** 3\n    scale = max(len(values), 1)\n"
        "    return total / scale - min(weights, default=0.0)\n")


def test_a_long_block_many_students_hold_is_evidence_and_a_one_line_idiom_is_little():
    others = {f"s{i}": f"def g{i}(a):\n    return a * {i} + {i}\n" for i in range(20)}
    second = ("def h(rows):\n    seen = {}\n    for r in rows:\n        seen[r[0]] = seen.get(r[0], 0) + len(r) * 2\n"
              "    best = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))\n    return best[:3], len(seen) - 1\n")
    many = {f"m{i}": [LONG, second] for i in range(5)}   # 5 of 25 students: it was discounted above a tenth of the class
    pairs = rank_pairs(_class_cells({**{name: [code] for name, code in others.items()}, **many}))
    assert {(p.a, p.b) for p in pairs} == {(f"m{i}", f"m{j}") for i in range(5) for j in range(i + 1, 5)}
    assert all(p.score >= DEFAULT_THRESHOLD for p in pairs)
    idiom = "def norm(v):\n    return v / np.linalg.norm(v, axis=-1, keepdims=True)\n"
    own = {f"s{i}": [idiom, LONG.replace("total", f"t{i}").replace("** 3", f"** {i + 4}").replace("min(", f"{i} * min(")]
           for i in range(20)}                         # 20 of 20 write the idiom, each their own long function
    assert max((p.score for p in rank_pairs(_class_cells(own))), default=0.0) < DEFAULT_THRESHOLD
    two = {"m0": LONG, "m1": LONG}
    pairs = rank_pairs(_class({**others, **two}))
    assert [(p.a, p.b) for p in pairs] == [("m0", "m1")] and pairs[0].score > 0.5


def test_two_rare_variants_of_obvious_one_liners_are_found():
    """Each variant differs from what the class wrote by one token: every k-gram must be kept to see it."""
    obvious = ["def p(m):\n    return float(np.exp(m))\n", "def g(h, W):\n    return int(np.argmax(h @ W))\n"]
    variant = ["def p(m):\n    return float(np.exp(-m))\n", "def g(h, W):\n    return float(np.max(h @ W))\n"]
    others = {f"s{i}": [*obvious, f"def own{i}(a):\n    return np.{f}(a).{g}(axis={i % 3}) * {i}\n"]
              for i, (f, g) in enumerate((f, g) for f in ("sin", "cos", "tanh", "exp") for g in ("sum", "mean", "max"))}
    pairs = rank_pairs(_class_cells({**others, "copied": variant, "original": [*variant, LONG]}))
    # Two lines are found and rank first, but are too little shared code to be flagged (the evidence floor).
    assert (pairs[0].a, pairs[0].b) == ("copied", "original") and pairs[0].score > 0.3
    assert all(p.score < pairs[0].score / 2 for p in pairs[1:])


def test_a_copy_that_rewrote_one_function_the_obvious_way_still_scores_high():
    """What the copy kept is all in the original, though the original has more unusual code of its own."""
    own = "def h(x):\n    return np.sqrt(np.abs(x)).sum(axis=0) * 3 - np.log1p(x).mean()\n"
    others = {f"s{i}": [f"def g(a):\n    return a * {i} + {i}\n"] for i in range(20)}
    pairs = rank_pairs(_class_cells({**others, "original": [own, LONG], "copy": [own]}))
    assert [(p.a, p.b) for p in pairs] == [("original", "copy")] and pairs[0].score > 0.3
    # The same copy with a second function kept: enough shared code to be flagged.
    pairs = rank_pairs(_class_cells({**others, "original": [own, LONG], "copy": [own, LONG.replace("total", "acc")]}))
    assert [(p.a, p.b) for p in pairs] == [("original", "copy")] and pairs[0].score >= DEFAULT_THRESHOLD


def test_starter_code_is_no_evidence():
    others = {f"s{i}": f"def g{i}(a):\n    return a * {i} + {i}\n" for i in range(20)}
    docs = _class({**others, "m0": LONG, "m1": LONG})
    assert rank_pairs(docs, base_hashes([LONG])) == []


# ------------------------------------------------------------------ the cohort

@functools.lru_cache(maxsize=None)
def _measure(assignment: str):
    c = cohort(assignment)
    docs = [document(s.name, s.cells) for s in c.students]
    pairs = rank_pairs(docs, base_hashes(list(starter_cells(c.assignment)) + course_code(c.assignment)))
    independent = {s.name for s in c.independent}
    planted = [p for p in pairs if frozenset((p.a, p.b)) in c.planted]
    independent_pairs = [p for p in pairs if p.a in independent and p.b in independent]
    top = pairs[:len(c.planted)]
    figures = {"assignment": c.assignment, "independent": len(c.independent), "copies": len(c.copies),
               "precision_at_k": sum(frozenset((p.a, p.b)) in c.planted for p in top) / len(c.planted),
               "min_copy_score": min((p.score for p in planted), default=0.0) if len(planted) == len(c.planted) else 0.0,
               "max_independent_score": max((p.score for p in independent_pairs), default=0.0)}
    print(f"\nSIMILARITY {json.dumps(figures)}")
    return c, pairs, figures


@pytest.fixture(params=ASSIGNMENTS)
def measured(request):
    return _measure(request.param)


def test_the_cohort_is_large_and_shares_the_obvious_one_liners(measured):
    c, _, _ = measured
    assert len(c.independent) >= 15 and len(c.copies) >= 4
    one_liner = "tied_lm_head" if c.assignment != "lm-head" else "lm_head"
    obvious = reference_source(one_liner)
    sharing = [s for s in c.independent if obvious in s.cells]
    assert len(sharing) >= len(c.independent) // 2


def test_a_naive_comparison_would_flag_many_independent_pairs(measured):
    """Without the base code and the rarity weights, independent students look alike."""
    c, _, _ = measured
    docs = [document(s.name, s.cells) for s in c.independent]
    sets = [{f.hash for f in d.fingerprints} for d in docs]
    overlaps = [len(a & b) / len(a | b) for i, a in enumerate(sets) for b in sets[i + 1:]]
    assert sum(o >= 0.5 for o in overlaps) >= len(overlaps) // 4


def test_every_disguised_copy_ranks_above_every_independent_pair(measured):
    _, _, figures = measured
    assert figures["precision_at_k"] == 1.0, figures
    assert figures["min_copy_score"] > figures["max_independent_score"], figures


def test_no_independent_pair_is_flagged_at_the_default_threshold(measured):
    _, _, figures = measured
    assert figures["max_independent_score"] < DEFAULT_THRESHOLD, figures


# ------------------------------------------------------------------ the command

def _graded_folder(tmp_path, codes: dict[str, list[str]], assignment: str = "lm-head"):
    out = tmp_path / "graded"
    subs = tmp_path / "submissions"
    subs.mkdir()
    for student, cells in codes.items():
        path = subs / f"{len(list(subs.iterdir()))}.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
        record = GradeRecord(Entry(student, path), GradeOutcome(student, assignment, "graded", "bwrap"))
        write_atomic(out / "students" / student / RECORD_NAME, record.to_json())
    return out


def test_the_command_writes_escaped_html_and_a_neutralised_csv(tmp_path):
    c = cohort("lm-head")
    source = max(c.independent, key=lambda s: len(s.own))
    hostile = "    # </pre><script>alert(1)</script>\n"
    codes = {s.name[:20]: s.cells for s in c.independent if s is not source}
    codes["=HYPERLINK(\"x\")"] = [hostile.strip() + "\n" + cell for cell in source.cells]
    codes["<img src=x onerror=alert(1)>"] = list(codes["=HYPERLINK(\"x\")"])
    (tmp_path / "moved").mkdir()
    out = _graded_folder(tmp_path, codes)
    gone = GradeRecord(Entry("gone", tmp_path / "nowhere.ipynb"), GradeOutcome("gone", "lm-head", "graded", "bwrap"))
    write_atomic(out / "students" / "gone" / RECORD_NAME, gone.to_json())

    result = CliRunner().invoke(main, ["similarity", str(out)])
    assert result.exit_code == 0, result.output
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<script>" not in page and "&lt;script&gt;" in page and "<img src=x onerror=alert(1)>" not in page
    assert "<mark>" in page
    rows = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    top = rows[0]
    assert {top["student_a"], top["student_b"]} == {"'=HYPERLINK(\"x\")", "<img src=x onerror=alert(1)>"}
    assert top["flagged"] == "yes" and top["lines_a"].startswith("cell ")
    assert "not compared: gone" in result.output


def test_the_section_api_gives_pairs_and_a_fragment(tmp_path):
    codes = {"a": ["import numpy as np\n", LONG], "b": [LONG.replace("total", "acc")],
             **{f"s{i}": [f"def g(a):\n    return a * {i}\n"] for i in range(8)}}
    out = _graded_folder(tmp_path, codes)
    result = similarity_section(out)
    assert [(p.a, p.b) for p in result.flagged] == [("a", "b")]
    fragment = section_html(result)
    assert fragment.count('class="sim-pair"') == 1 and "<html" not in fragment
    assert "a,b," in csv_text(result).replace("\r\n", "\n").split("\n")[1].replace("1,", "", 1)


def test_the_command_explains_a_folder_that_was_not_graded(tmp_path):
    result = CliRunner().invoke(main, ["similarity", str(tmp_path)])
    assert result.exit_code == 1 and "outcome.json" in result.output


def test_the_class_report_carries_the_section_when_asked(tmp_path):
    from autograder.report import build_report
    codes = {"a": ["import numpy as np\n", LONG], "b": [LONG.replace("total", "acc")],
             **{f"s{i}": [f"def g(a):\n    return a * {i}\n"] for i in range(8)}}
    out = _graded_folder(tmp_path, codes)
    assert 'id="similarity"' not in build_report(out)
    page = build_report(out, similarity=True)
    section = page[page.index('<section id="similarity">'):]
    assert section.count('class="sim-pair"') == 1 and "<script" not in section.split("</section>")[0]


@pytest.mark.parametrize("width", [PHONE_WIDTH, LAPTOP_WIDTH])
@pytest.mark.parametrize("page_of", ["report", "similarity.html"])
def test_the_pair_pages_fit_a_phone_and_a_laptop(tmp_path, page_of, width):
    """At 390 px the two sides of a pair stand one above the other, each as wide as the screen, and a
    long code line scrolls inside its side, not the page; at 1280 px they stand side by side."""
    from autograder.report import write_report
    wide = "    " + " + ".join(f"weights[{i}] * values[{i}]" for i in range(12)) + "\n"
    codes = {"a": ["import numpy as np\n", LONG + wide], "b": [LONG.replace("total", "acc") + wide],
             **{f"s{i}": [f"def g(a):\n    return a * {i}\n"] for i in range(8)}}
    out = _graded_folder(tmp_path, codes)
    path = write_report(out, similarity=True) if page_of == "report" else write_similarity(out)[2]
    with opened(path, width) as (page, errors):
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        client = page.evaluate("document.documentElement.clientWidth")
        sides = page.evaluate("""Array.from(document.querySelectorAll('.sim-side')).map(s => {
            const r = s.getBoundingClientRect();
            return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, overflow: s.scrollWidth - s.clientWidth,
                    scrolls: getComputedStyle(s).overflowX === 'auto'};
        })""")
    assert errors == []
    assert client == width, f"laid out {client} px wide on a {width} px screen (no viewport meta tag?)"
    assert overflow <= 0, f"the page is {overflow} px wider than the screen"
    first, second = sides
    assert all(s["scrolls"] and s["left"] >= 0 and s["right"] <= width for s in sides), sides
    if width == PHONE_WIDTH:
        assert second["top"] >= first["bottom"], "the sides should stand one above the other"
        assert min(s["right"] - s["left"] for s in sides) >= 300, sides
        assert max(s["overflow"] for s in sides) > 0, "the long line should scroll inside its side"
    else:
        assert second["top"] == first["top"] and second["left"] >= first["right"], "side by side"

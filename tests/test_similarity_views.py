"""Does the similarity page show what matched (tokens, functions) and stay small, with every pair in the CSV?"""
from __future__ import annotations

import csv
import io
import re

import numpy as np

from autograder.similarity import section
from autograder.similarity.section import csv_text, section_html, similarity_section
from tests.similarity_groups_corpus import _disguise, group_member, independent
from tests.test_similarity import LONG, _graded_folder


def _marks(fragment: str) -> list[str]:
    return re.findall(r"<mark>(.*?)</mark>", fragment, re.S)


def test_the_page_marks_the_matching_tokens_not_the_line_and_never_the_starter(tmp_path):
    """One line differs by one number: its other tokens are marked, the number is not; the signature the
    starter gave is never marked, though the k-grams that cover it reach into the student's code."""
    starter = tmp_path / "starter.py"
    starter.write_text("import math\n\n\ndef f(values, weights):\n    ...\n", encoding="utf-8")
    changed = LONG.replace("w ** 3", "w ** 5")
    codes = {"a": ["import math\n", LONG], "b": ["import math\n", changed],
             **{f"s{i}": [f"def g(a):\n    return a * {i}\n"] for i in range(8)}}
    result = similarity_section(_graded_folder(tmp_path, codes), base_files=(starter,))
    assert [(p.a, p.b) for p in result.flagged] == [("a", "b")]
    view = section_html(result)
    view = view[view.index("<h3>a and b"):]
    b_side = view[view.index("<b>b</b>"):]
    marks = _marks(b_side)
    assert any("math.sqrt(abs(v)) * w" in m for m in marks), marks
    assert not any("5" in m for m in marks), marks                       # the token that differs
    assert not any("def f" in m or "values, weights)" in m.split("zip")[0] for m in marks), marks
    assert "def f(values, weights):" in b_side                            # shown, unmarked


def _partial_copy_class():
    """30 independent students, an author with a solution of their own, and a student who copied two of
    the author's functions whole (renamed, re-commented) and wrote the rest independently."""
    rng = np.random.default_rng(3)
    students = {s.name: s.cells for s in (independent(f"s{i}", rng) for i in range(30))}
    author = group_member("author", rng, 0)
    partial = list(independent("partial", rng).cells)
    for function in ("cross_entropy_loss", "numerical_gradient"):
        slot = next(i for i, c in enumerate(partial) if c.startswith(f"def {function}("))
        head, _, body = next(c for c in author.cells if c.startswith(f"def {function}(")).partition("\n")
        partial[slot] = f"{head}\n{_disguise(body, rng, 'pc')}"
    students.update({"author": author.cells, "partial": partial})
    return students


def test_a_partial_copy_of_two_functions_names_them_in_the_csv_and_the_page(tmp_path):
    result = similarity_section(_graded_folder(tmp_path, _partial_copy_class()))
    pair = next(p for p in result.pairs if {p.a, p.b} == {"author", "partial"})
    assert pair.functions == ("cross_entropy_loss", "numerical_gradient"), pair
    rows = list(csv.DictReader(io.StringIO(csv_text(result))))
    row = next(r for r in rows if {r["student_a"], r["student_b"]} == {"author", "partial"})
    assert row["shared_functions"] == "cross_entropy_loss numerical_gradient"
    assert pair.score >= result.threshold
    assert "functions mostly shared: cross_entropy_loss, numerical_gradient" in section_html(result)


def test_a_pair_sharing_two_whole_functions_below_the_threshold_is_named_not_flagged(tmp_path):
    """The score alone flags: independent students of a large class share two functions written alike far more
    often than partial copies do (blind corpus, grading guide). The pair's functions stay in the CSV, and the page
    counts such pairs under the threshold."""
    result = similarity_section(_graded_folder(tmp_path, _partial_copy_class()), threshold=0.95)
    pair = next(p for p in result.pairs if {p.a, p.b} == {"author", "partial"})
    assert pair.score < 0.95 and len(pair.functions) >= 2
    assert pair not in result.flagged and all(p.score >= 0.95 for p in result.flagged)
    rows = list(csv.DictReader(io.StringIO(csv_text(result))))
    row = next(r for r in rows if {r["student_a"], r["student_b"]} == {"author", "partial"})
    assert row["flagged"] == "no" and row["shared_functions"] == "cross_entropy_loss numerical_gradient"
    below = sum(1 for p in result.pairs if p.score < 0.95 and len(p.functions) >= 2)
    assert f"{below} of them share two or more of the assignment's functions" in section_html(result)


def test_the_page_holds_the_flagged_pairs_and_the_csv_every_pair(tmp_path, monkeypatch):
    """Below the threshold a pair is only counted on the page; past the views kept, a flagged pair is one line."""
    fillers = {f"s{i}": [f"def g(a):\n    return np.sqrt(np.abs(a)).sum(axis=0) * {i // 2} - np.log1p(a).mean()\n"]
               for i in range(30)}
    # Three students share two functions: enough shared code to be flagged at the default threshold.
    second = ("def h(rows):\n    seen = {}\n    for r in rows:\n        seen[r[0]] = seen.get(r[0], 0) + len(r) * 2\n"
              "    best = sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))\n    return best[:3], len(seen) - 1\n")
    codes = {"a": [LONG, second], "b": [LONG.replace("total", "acc"), second], "c": [LONG.replace("scale", "sc"), second],
             **fillers}
    result = similarity_section(_graded_folder(tmp_path, codes))
    flagged, others = len(result.flagged), len(result.pairs) - len(result.flagged)
    assert flagged == 3 and others >= 15, (flagged, others)
    rows = list(csv.DictReader(io.StringIO(csv_text(result))))
    assert len(rows) == len(result.pairs) and sum(r["flagged"] == "no" for r in rows) == others
    monkeypatch.setattr(section, "VIEWS_SHOWN", 2)
    page = section_html(result)
    assert page.count('class="sim-sides"') == 2
    assert f"The other {others} pairs, not flagged, are listed only in similarity.csv" in page
    assert "1 more flagged pairs" in page
    assert "s0 and s1" not in page


def test_a_cell_past_the_parse_limit_is_left_out_and_said(tmp_path):
    """A 3 MB cell of nested lists costs gigabytes to normalise: like grading, similarity leaves a cell
    past the parse limit out of the comparison, and says so."""
    import time
    bomb = "x = " + "[" * 20 + ", ".join(["1"] * 600_000) + "]" * 20 + "\n"
    codes = {"a": ["import math\n", LONG], "b": ["import math\n", LONG], "mallory": ["import math\n", bomb]}
    started = time.monotonic()
    result = similarity_section(_graded_folder(tmp_path, codes))
    assert time.monotonic() - started < 60
    assert [(p.a, p.b) for p in result.flagged] == [("a", "b")]
    assert any(s == "mallory" and "longer than 256 KiB not compared" in why for s, why in result.not_compared)


def test_two_students_sharing_a_long_repetitive_cell_cannot_stall_the_page(tmp_path):
    """Aligning a cell's tokens with its normalised ones is quadratic in the worst case (one token
    repeated thousands of times): two such copies kept ``grader similarity`` busy for twenty
    minutes a side. Past the alignment's bound the pair is still flagged and shown, without marks."""
    import time
    from autograder.similarity.highlight import MAX_ALIGNED_TOKENS
    cell = "def pad(q):\n    return " + " + ".join(["q"] * (MAX_ALIGNED_TOKENS * 2)) + "\n"
    codes = {"a": ["import math\n", LONG, cell], "b": ["import math\n", LONG, cell],
             **{f"s{i}": [f"def g(a):\n    return a * {i}\n"] for i in range(8)}}
    result = similarity_section(_graded_folder(tmp_path, codes))
    assert [(p.a, p.b) for p in result.flagged] == [("a", "b")]
    started = time.monotonic()
    view = section_html(result)
    assert time.monotonic() - started < 10
    assert f"more than {MAX_ALIGNED_TOKENS} tokens, shown without marks" in view
    assert _marks(view)                                  # the ordinary cells are still marked


def test_a_page_spends_a_bounded_time_marking_however_many_cells_are_shared(tmp_path, monkeypatch):
    """Under the per-cell bound, many shared cells still add up (150 cells cost three minutes): the page
    has a time budget for marking, and the cells after it are shown unmarked, said so."""
    import time
    monkeypatch.setattr(section, "MARKING_SECONDS", 0.0)
    codes = {"a": ["import math\n", LONG], "b": ["import math\n", LONG],
             **{f"s{i}": [f"def g(a):\n    return a * {i}\n"] for i in range(8)}}
    result = similarity_section(_graded_folder(tmp_path, codes))
    assert [(p.a, p.b) for p in result.flagged] == [("a", "b")]
    started = time.monotonic()
    view = section_html(result)
    assert time.monotonic() - started < 5
    assert "shown without marks (this page spent its 0 s for marking)" in view
    assert not _marks(view)

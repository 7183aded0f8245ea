"""Does similarity keep what a class of 1,000 costs in check without changing what it reports?

Each test pins one of the changes that took the blind corpus's 1,000 submissions
from 820 MB to under 500 MB and a third of the CPU time (docs/grading-guide.md,
Speed): a cell parsed once, a side's lines packed, a cell aligned once for the page,
the CSV written in pieces.
"""
from __future__ import annotations

import csv
import io

from autograder.runtime.grading.files import write_atomic
from autograder.similarity import highlight, normalize
from autograder.similarity.compare import LineSpan, LineSpans, rank_pairs
from autograder.similarity.section import csv_pieces, csv_text, section_html, similarity_section, spans_text
from tests.test_similarity import LONG, _class_cells, _graded_folder


def test_a_cell_is_parsed_once_for_its_names_and_its_printed_tokens(monkeypatch):
    """Parsing is a tenth of normalising a class: the tree read for the cell's names is the one printed."""
    parsed: list[str] = []
    real = normalize._parse
    monkeypatch.setattr(normalize, "_parse", lambda source: parsed.append(source) or real(source))
    normalize._cell_names.cache_clear()
    normalize._normalised_cell.cache_clear()
    normalize._numbered_cell.cache_clear()
    source = LONG.replace("total", "parsed_once_total")       # a cell no cache has seen
    tokens = normalize.program_tokens([source])
    assert parsed == [source]
    assert [t.text for t in tokens][:4] == ["def", "ID", "(", "ID"]
    assert not normalize._UNREWRITTEN                           # no tree outlives the program


def test_a_side_s_lines_take_two_bytes_a_number_when_they_fit_and_four_when_not():
    small = LineSpans.of([LineSpan(0, 3, 9), LineSpan(2, 1, 1)])
    large = LineSpans.of([LineSpan(0, 3, 40_000)])
    assert bytes.__len__(small) == 12 and len(small) == 2               # 16-bit numbers
    assert list(large) == [LineSpan(0, 3, 40_000)] and bytes.__len__(large) == 12 and len(large) == 1
    assert small == (LineSpan(0, 3, 9), LineSpan(2, 1, 1)) and hash(small) == hash(LineSpans.of(list(small)))
    assert spans_text(large) == "cell 1: 3-40000"


def test_a_pair_side_s_lines_are_packed_and_read_back_as_spans():
    spans = (LineSpan(0, 3, 5), LineSpan(0, 8, 8), LineSpan(2, 1, 4))
    packed = LineSpans.of(spans)
    assert tuple(packed) == spans and len(packed) == 3 and packed == spans
    assert spans_text(packed) == spans_text(spans) == "cell 1: 3-5, 8; cell 3: 1-4"
    assert spans_text(LineSpans()) == "" and not LineSpans()


def test_pairs_carry_their_lines_as_packed_spans():
    others = {f"s{i}": [f"def g(a):\n    return a * {i} + {i}\n"] for i in range(8)}
    pairs = rank_pairs(_class_cells({**others, "a": [LONG], "b": [LONG.replace("total", "acc")]}))
    top = pairs[0]
    assert (top.a, top.b) == ("a", "b")
    assert isinstance(top.lines_a, LineSpans) and list(top.lines_a)[0].cell == 0 and len(top.lines_b) >= 1


def test_a_cell_shown_in_many_pairs_is_aligned_once(tmp_path):
    """A group of k shows each member in k - 1 pairs: aligning its cell (quadratic) is done once, not k - 1 times."""
    codes = {**{f"c{i}": [LONG.replace("total", f"t{i}")] for i in range(4)},
             **{f"s{i}": [f"def g(a):\n    return a * {i}\n"] for i in range(20)}}
    result = similarity_section(_graded_folder(tmp_path, codes), threshold=0.3)    # one short function: 0.47
    highlight._aligned.cache_clear()
    page = section_html(result)
    info = highlight._aligned.cache_info()
    assert len(result.viewed) >= 6 and page.count("<mark>") >= 12
    assert info.misses == 4 and info.hits >= 8, info


def test_the_csv_is_written_in_pieces_that_make_the_same_text(tmp_path):
    write_atomic(tmp_path / "x.csv", iter(["a,b\r\n", "1,2\r\n"]))
    assert (tmp_path / "x.csv").read_bytes() == b"a,b\r\n1,2\r\n"
    codes = {"a": [LONG], "b": [LONG.replace("total", "acc")],
             **{f"s{i}": [f"def g(a):\n    return a * {i} + {i}\n"] for i in range(8)}}
    result = similarity_section(_graded_folder((tmp_path / "class").mkdir() or tmp_path / "class", codes))
    assert "".join(csv_pieces(result)) == csv_text(result)
    rows = list(csv.DictReader(io.StringIO(csv_text(result))))
    assert (rows[0]["student_a"], rows[0]["student_b"]) == ("a", "b") and rows[0]["lines_a"] == "cell 1: 1-6", rows[0]


def test_identical_submissions_are_normalised_once(tmp_path, monkeypatch):
    """A copy handed in as it was (a quarter of the benchmark's 1,000) costs no second normalisation."""
    from autograder.similarity import parallel     # where a class's documents are made

    made: list[str] = []
    real = parallel.document
    monkeypatch.setattr(parallel, "document", lambda name, cells, settings: made.append(name) or real(name, cells, settings))
    others = {f"s{i}": [f"def g(a):\n    return a * {i} + {i} - len(a) // {i + 2}\n"] for i in range(8)}
    result = similarity_section(_graded_folder(tmp_path, {"a": [LONG], "b": [LONG], "d": [LONG], **others}),
                                threshold=0.3)
    assert sorted(made) == ["a", *sorted(others)]
    assert all(name == d.name for name, d in result.documents.items()) and len(result.documents) == 11
    top = {frozenset((p.a, p.b)): p.score for p in result.pairs[:3]}
    assert set(top) == {frozenset("ab"), frozenset("ad"), frozenset("bd")} and len(set(top.values())) == 1


def test_partners_holding_the_same_code_share_one_computed_side(monkeypatch):
    """The coverage of a side is computed once per distinct set of its fingerprints its partners hold: the four
    copies of one solution hold all of it, so from its side they are one row, not four."""
    from autograder.similarity import compare, shared_work

    sides: list[tuple[int, int]] = []
    real = compare.side
    # The sides are recorded in this process: a side a forked helper computed (shared_work) would not be seen.
    monkeypatch.setattr(shared_work, "cores", lambda: 1)
    monkeypatch.setattr(compare, "side", lambda index, doc, ranges, partners, shared: (
        lambda s: sides.append((len(partners), len(s.covered))) or s)(real(index, doc, ranges, partners, shared)))
    copies = {f"c{i}": [LONG.replace("total", f"t{i}")] for i in range(4)}
    others = {f"s{i}": [f"def g(a):\n    return a * {i} + {i} - len(a) // {i + 2}\n"] for i in range(20)}
    pairs = rank_pairs(_class_cells({"orig": [LONG], **copies, **others}))
    assert (4, 1) in sides
    five = ("orig", "c0", "c1", "c2", "c3")
    assert {frozenset((p.a, p.b)) for p in pairs[:10]} == {frozenset((a, b)) for a in five for b in five if a < b}
    assert len({p.score for p in pairs[:10]}) == 1


def test_the_rewriting_walks_statement_lists_only(monkeypatch):
    """Statements nest only in bodies, handlers and cases: the expressions (most of a tree) are not walked."""
    from autograder.similarity import rewrite

    walked: list[str] = []
    real = rewrite._blocks
    monkeypatch.setattr(rewrite, "_blocks", lambda node, rewriter: walked.append(type(node).__name__) or real(node, rewriter))
    source = ("def f(a):\n    out = []\n    for i in range(10):\n        out.append(a * i + 1)\n    return sum(out)\n"
              "x = f(2)\n")
    tokens = [t.text for t in normalize.program_tokens([source])]
    assert sorted(walked) == ["Assign", "Assign", "Expr", "For", "FunctionDef", "Module", "Return"]
    assert "for" in tokens and "append" not in tokens       # the loop still became its comprehension


def test_a_cell_s_functions_are_read_from_the_parse_that_normalised_it(monkeypatch):
    """Each parse of a long cell costs as much as printing it: the document of a new cell parses it once."""
    import ast

    from autograder.similarity import compare

    parsed: list[str] = []
    real = ast.parse
    monkeypatch.setattr(ast, "parse", lambda source, *a, **k: parsed.append(source) or real(source, *a, **k))
    source = LONG.replace("total", "functions_read_once")      # a cell no cache has seen
    doc = compare.document("a", [source])
    assert parsed.count(source) == 1
    assert [name for name, _, _ in doc.functions] == [n.name for n in real(source).body if isinstance(n, ast.FunctionDef)]
    assert doc.functions and not normalize._UNREWRITTEN

"""Is every submission read safely, and is every refusal a message a student can act on?"""
from __future__ import annotations

import json
import stat
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.runtime.grading.extract import extract_program
from autograder.runtime.grading.intake import IntakeLimits, Rejected, read_submission
from tests.adversarial import many_entries_zip, shifted_directory_zip, zip64_hidden_directory_zip

NAME = "lm-head"


def _notebook(*sources: str, assignment: str = NAME) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["otter"] = {"assignment_name": assignment}
    return nb


def _zip(path: Path, members: dict[str, bytes | str], links: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name in links:
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, "/etc/passwd")
    return path


def test_notebook_script_and_export_zip_are_read(tmp_path):
    nb = _notebook("def softmax(x):\n    return x")
    nbformat.write(nb, tmp_path / f"{NAME}.ipynb")
    assert read_submission(tmp_path / f"{NAME}.ipynb", NAME).kind == "ipynb"
    (tmp_path / "answer.py").write_text("def softmax(x):\n    return x\n")
    assert read_submission(tmp_path / "answer.py", NAME).script.startswith("def softmax")
    z = _zip(tmp_path / "sub.zip", {f"{NAME}.ipynb": nbformat.writes(nb), ".OTTER_LOG": b"log"})
    sub = read_submission(z, NAME)
    assert sub.source == f"sub.zip:{NAME}.ipynb" and sub.notebook.cells[0].source.startswith("def")


@pytest.mark.parametrize("members, links, fragment", [
    ({"../evil.ipynb": "{}"}, (), "leaves the zip's folder"),
    ({"/abs/lm-head.ipynb": "{}"}, (), "absolute path"),
    ({"lm-head.ipynb": "{}"}, ("link.py",), "symbolic link"),
    ({"lm-head.ipynb": "{}", "inner.zip": b"PK"}, (), "archive inside the zip"),
])
def test_unsafe_zips_are_refused(tmp_path, members, links, fragment):
    with pytest.raises(Rejected, match=fragment):
        read_submission(_zip(tmp_path / "s.zip", members, links), NAME)


def test_zip_bomb_and_entry_count_are_bounded(tmp_path):
    bomb = _zip(tmp_path / "bomb.zip", {"lm-head.ipynb": "x" * (30 * 2**20)})
    with pytest.raises(Rejected, match="too large"):
        read_submission(bomb, NAME, IntakeLimits(max_zip_total_bytes=10 * 2**20))
    many = _zip(tmp_path / "many.zip", {f"f{i}.txt": "x" for i in range(300)})
    with pytest.raises(Rejected, match="300 files"):
        read_submission(many, NAME)


def test_extra_files_are_ignored_and_noted_never_extracted(tmp_path):
    nb = nbformat.writes(_notebook("x = 1"))
    z = _zip(tmp_path / "s.zip", {f"{NAME}.ipynb": nb, "conftest.py": "raise SystemExit",
                                   "sitecustomize.py": "x", "numpy.py": "x", "evil.pth": "import os"})
    before = set(tmp_path.iterdir())
    sub = read_submission(z, NAME)
    assert set(tmp_path.iterdir()) == before           # nothing written to disk
    assert "conftest.py" in sub.notes[0] and "numpy.py" in sub.notes[0]


def test_exactly_one_notebook_of_the_assignment(tmp_path):
    ours = nbformat.writes(_notebook("x = 1"))
    other = nbformat.writes(_notebook("x = 1", assignment="perplexity-and-parameters"))
    cases = [
        ({"notes.txt": "hi"}, "holds no notebook of the assignment 'lm-head' (found: no notebook)"),
        ({"a/lm-head.ipynb": ours, "b/lm-head.ipynb": ours}, "holds 2 notebooks"),
        ({"other.ipynb": other}, "(found: `other.ipynb`)"),
    ]
    for number, (members, fragment) in enumerate(cases):
        with pytest.raises(Rejected) as info:
            read_submission(_zip(tmp_path / f"s{number}.zip", members), NAME)
        assert fragment in str(info.value)


@pytest.mark.parametrize("content, fragment", [
    (b"not json at all", "not JSON"),
    (json.dumps({"hello": 1}).encode(), "no cells"),
    (json.dumps({"cells": "nope", "nbformat": 4, "nbformat_minor": 5, "metadata": {}}).encode(),
     "not a valid Jupyter notebook"),
    (b"", "is empty"),
])
def test_broken_notebooks_are_refused_with_the_file_named(tmp_path, content, fragment):
    path = tmp_path / f"{NAME}.ipynb"
    path.write_bytes(content)
    with pytest.raises(Rejected) as info:
        read_submission(path, NAME)
    assert fragment in str(info.value) and path.name in str(info.value)


def test_wrong_assignment_notebook_and_unknown_suffix(tmp_path):
    nbformat.write(_notebook("x = 1", assignment="perplexity-and-parameters"), tmp_path / "x.ipynb")
    with pytest.raises(Rejected, match="not 'lm-head'"):
        read_submission(tmp_path / "x.ipynb", NAME)
    (tmp_path / "x.docx").write_bytes(b"PK")
    with pytest.raises(Rejected, match=".ipynb notebook, a .py script"):
        read_submission(tmp_path / "x.docx", NAME)


def test_file_size_limit(tmp_path):
    path = tmp_path / f"{NAME}.ipynb"
    path.write_bytes(b"x" * 2048)
    with pytest.raises(Rejected, match="limited to"):
        read_submission(path, NAME, IntakeLimits(max_file_bytes=1024))


def test_extraction_drops_ipython_syntax_and_neutralizes_otter(tmp_path):
    nb = _notebook(
        '# Initialize Otter\nimport otter\ngrader = otter.Notebook("lm-head.ipynb")',
        "%matplotlib inline\nimport numpy as np\n!pip install torch\nfiles = !ls",
        "def f(x):\n    %time y = 1\n    return x",
        "%%time\nz = 2",
        "%%bash\necho hi",
        'grader.check("q1")',
        "np.sum?",
        "grader.export(pdf=False, run_tests=True)",
    )
    nbformat.write(nb, tmp_path / f"{NAME}.ipynb")
    program = extract_program(read_submission(tmp_path / f"{NAME}.ipynb", NAME))
    code = "\n".join(program.cells)
    assert "otter" not in code.replace("# otter command", "")
    assert "%" not in code and "!" not in code and "?" not in code
    assert "z = 2" in code and "echo hi" not in code
    for cell in program.cells:
        compile(cell, "<cell>", "exec")                  # every kept cell is plain Python
    joined = " ".join(program.notes)
    assert "%matplotlib inline" in joined and "!pip install torch" in joined and "%%bash" in joined


def test_cleaning_a_cell_matches_the_line_by_line_rules():
    """A cell with nothing IPython- or otter-like in it skips the per-line patterns: whatever the
    cell, the result is what trying each pattern on each line gives (line breaks of every kind)."""
    import random

    from autograder.runtime.grading import extract as E

    def line_by_line(source: str) -> str:
        kept = []
        for line in source.splitlines():
            indent = line[: len(line) - len(line.lstrip())]
            if E._OTTER_LINE.match(line):
                kept.append(f"{indent}pass  # otter command, not needed for grading")
            elif E._MAGIC_LINE.match(line) or E._ASSIGN_SHELL.match(line) or E._HELP_LINE.match(line):
                kept.append(f"{indent}pass  # IPython syntax removed for grading")
            else:
                kept.append(line)
        return "\n".join(kept)

    pieces = ["x = 1", "%time", "!ls", "y = !ls", "a?", "?b", "import otter", "grader.check('q1')", "z != 2",
              "s = '%d' % 3", "  %magic", "\t%x", "\t !y", "y=\t!ls", "def f():\n    return 1", "c == %d",
              "w =  %x", "q = a?b", "grader = 3", "Otter", "\u00a0%m", "  ", ""]
    breaks = ["\n", "\r\n", "\r", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\u2028", "\u2029", "\x85", " ", "\t"]
    rng = random.Random(7)
    for _ in range(5000):
        source = rng.choice(["", "y = 2\n"]) + "".join(rng.choice(pieces) + rng.choice(breaks)
                                                       for _ in range(rng.randint(1, 6)))
        notes: list[str] = []
        assert E._clean_cell(source, 1, notes) == line_by_line(source), repr(source)
        assert bool(notes) == any(E._MAGIC_LINE.match(line) or E._ASSIGN_SHELL.match(line) or E._HELP_LINE.match(line)
                                  for line in source.splitlines() if not E._OTTER_LINE.match(line))
    # Long runs of blank lines are read in one pass (a pattern that let spaces cross line breaks
    # took minutes on a few hundred kilobytes of them).
    blank = "\n" * 400_000 + "x = 1"
    assert E._clean_cell(blank, 1, []) == blank
    # and so is a long line of spaces in a cell that takes the per-line path (the `?` sends it there)
    spaces = "print('why?')\n" + " " * 400_000 + "x\nfiles = !ls"
    assert E._clean_cell(spaces, 1, []).endswith("x\npass  # IPython syntax removed for grading")


def test_a_number_too_long_to_read_is_a_refusal_not_a_grader_error(tmp_path):
    path = tmp_path / f"{NAME}.ipynb"
    path.write_text('{"cells": [], "metadata": {"x": ' + "9" * 10_000 + '}, "nbformat": 4, "nbformat_minor": 5}')
    with pytest.raises(Rejected, match="not a valid notebook"):
        read_submission(path, NAME)


def test_a_cell_names_a_few_lines_of_ipython_syntax_and_counts_the_rest():
    from autograder.runtime.grading.extract import _clean_cell
    notes: list[str] = []
    cleaned = _clean_cell("x = 1\n" + "!ls\n" * 100_000, 3, notes)
    assert cleaned.count("pass  # IPython syntax removed for grading") == 100_000
    assert len(notes) == 6 and notes[-1] == "cell 3: 99,995 more lines of IPython syntax were skipped."


def test_only_single_values_of_otters_metadata_are_kept(tmp_path):
    """otter's encoded public tests fill most of a submitted notebook; grading never reads them."""
    nb = _notebook("x = 1")
    nb.metadata["otter"].update(OK_FORMAT=True, tests={"q1": "encoded " * 1000}, extra=[1, 2])
    nb.metadata["kernelspec"] = "not a dict"
    (tmp_path / f"{NAME}.ipynb").write_text(json.dumps(nb))
    read = read_submission(tmp_path / f"{NAME}.ipynb", NAME)
    assert read.notebook.metadata == {"otter": {"assignment_name": NAME, "OK_FORMAT": True}}
    nb.metadata["otter"]["assignment_name"] = 7        # still read as another assignment's notebook
    (tmp_path / f"{NAME}.ipynb").write_text(json.dumps(nb))
    with pytest.raises(Rejected, match="7"):
        read_submission(tmp_path / f"{NAME}.ipynb", NAME)


def test_cells_are_named_as_the_student_sees_them():
    from autograder.runtime.grading.extract import extract_program
    from autograder.runtime.grading.intake import Submission
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import numpy as np"),
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell(""),                               # empty: not run, still counted
        nbformat.v4.new_code_cell("\n\ndef softmax(x, axis=-1):\n    return x +\n"),
    ])
    program = extract_program(Submission("a.ipynb", "ipynb", nb, None))
    assert len(program.cells) == 2
    assert program.label(1) == "the code cell that starts `def softmax(x, axis=-1):` (code cell 3 from the top)"
    script = extract_program(Submission("a.py", "py", None, "x = 1\n"))
    assert script.label(0) == "your script"


def test_attempted_looks_at_the_last_definition_of_each_function():
    from autograder.runtime.grading.extract import Program, attempted
    stub = "def softmax(x, axis=-1):\n    \"\"\"Docs.\"\"\"\n    ...\n"
    real = "def softmax(x, axis=-1):\n    return x\n"
    names = ("softmax", "lm_head")
    assert not attempted(Program((stub, "print('hello')"), ()), names)
    assert attempted(Program((stub, real), ()), names)
    assert not attempted(Program((real, stub), ()), names)              # redefined as the stub again
    assert attempted(Program((stub, "def mine(x):\n    return x\nsoftmax = mine\n"), ()), names)
    assert not attempted(Program((stub, "def softmax(x:\n    return x\n"), ()), names)   # does not parse


def test_a_zip_of_many_notebooks_reads_only_the_assignments_own(tmp_path, monkeypatch):
    """A zip of five large notebooks (an amplification: each is parsed in the grader) costs what one
    notebook does: only the one named after the assignment is read, and never more than two."""
    import autograder.runtime.grading.intake as intake
    read = []
    real = intake.parse_notebook
    monkeypatch.setattr(intake, "parse_notebook", lambda data, where: read.append(where) or real(data, where))
    ours = nbformat.writes(_notebook("x = 1"))
    padding = nbformat.writes(_notebook("y = 2", assignment="other"))
    z = _zip(tmp_path / "s.zip", {f"{NAME}.ipynb": ours, **{f"extra{i}.ipynb": padding for i in range(5)}})
    assert read_submission(z, NAME).source == f"s.zip:{NAME}.ipynb"
    assert read == [f"s.zip:{NAME}.ipynb"]
    z = _zip(tmp_path / "t.zip", {f"extra{i}.ipynb": padding for i in range(5)})
    read.clear()
    with pytest.raises(Rejected, match="holds 5 notebooks"):
        read_submission(z, NAME)
    assert read == []


def _extra_field_zip(path: Path, entries: int, extra: int) -> Path:
    """A zip whose entries each carry ``extra`` bytes of empty extra-field records (the red team's
    zip: zipfile decodes such fields in time that grows with the square of their size)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for i in range(entries):
            info = zipfile.ZipInfo(f"f{i}.txt")
            info.extra = b"\xff\xff\x00\x00" * (extra // 4)
            zf.writestr(info, b"x")
    return path


def test_a_zip_whose_directory_would_cost_the_grader_time_is_refused_before_zipfile_reads_it(tmp_path):
    import time
    from autograder.runtime.grading.layouts.downloads import class_in_zip
    slow = _extra_field_zip(tmp_path / "mallory.zip", 60, 60_000)
    started = time.monotonic()
    with pytest.raises(Rejected, match="bytes of extra data"):
        read_submission(slow, NAME)
    assert class_in_zip(slow) == ""
    assert time.monotonic() - started < 2
    ordinary = _zip(tmp_path / "s.zip", {f"{NAME}.ipynb": nbformat.writes(_notebook("x = 1"))})
    assert read_submission(ordinary, NAME).kind == "ipynb"


@pytest.mark.parametrize("make, says", [
    (lambda p: shifted_directory_zip(p, 40), "bytes of extra data"),
    (lambda p: zip64_hidden_directory_zip(p, 40), "bytes of extra data"),
    (lambda p: many_entries_zip(p, 120_000), "list of files is"),
], ids=["shifted-directory", "zip64-hidden-directory", "many-entries"])
def test_the_directory_checked_is_the_one_zipfile_reads(tmp_path, monkeypatch, make, says):
    """A check that locates the directory otherwise than ``zipfile`` does lets the heavy directory
    through (the red team's zips: 12 to 34 s of grader CPU, or 1.5 GiB, for one student's file).
    Neither discovery nor intake may hand such a file to ``zipfile`` at all."""
    from autograder.runtime.grading.layouts import downloads
    path = make(tmp_path / "mallory.zip")

    def no_zipfile(*args, **kwargs):
        raise AssertionError("zipfile opened a zip the directory check should have refused")
    monkeypatch.setattr(zipfile, "ZipFile", no_zipfile)
    assert downloads.class_in_zip(path) == ""
    with pytest.raises(Rejected, match=says):
        read_submission(path, NAME)

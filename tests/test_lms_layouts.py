"""A mixed class, as each LMS hands it over, graded end to end.

Correct, partial, untouched, a cell that raises, an endless loop and a file
that is not a notebook, in Canvas's download, Moodle's download, a Gradescope
export and per-student folders: the ids come from the layout, the statuses,
flags and rounded totals are right, the exit code says whether anything was
graded, and the report of the class reads at 1280 px.
"""
from __future__ import annotations

import csv
import os
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from autograder.build import build
from autograder.cli import main
from tests.cohort import with_extra_cell, with_mistake, with_stubs, write_export_zip
from tests.suites import MISTAKES

pytestmark = pytest.mark.slow

ASSIGNMENT = "lm-head"
FUNCTIONS = ["next_token_batch", "lm_head", "softmax", "cross_entropy_loss", "lm_head_backward",
             "numerical_gradient", "max_rel_err"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    (result,) = build([ASSIGNMENT], tmp_path_factory.mktemp("dist"), None, verify=False)
    return result


def _broken(solution: nbformat.NotebookNode, function: str) -> nbformat.NotebookNode:
    """The solution with a syntax error left at the end of ``function``'s cell."""
    nb = nbformat.from_dict(solution)
    cell = next(c for c in nb.cells if c.cell_type == "code" and f"def {function}(" in c.source)
    cell.source += "\n    return x +\n"
    return nb


def _class(built) -> dict[str, bytes]:
    """Who submitted what: (kind -> file content as exported), six kinds."""
    solution = nbformat.read(built.solution, as_version=4)
    stub = nbformat.read(built.student, as_version=4)
    kinds = {
        "correct": solution,
        "partial": with_mistake(solution, MISTAKES["gradient-missing-one-over-n"]),
        "untouched": stub,
        "raises": _broken(solution, "softmax"),
        "endless": with_extra_cell(solution, "while True:\n    pass\n", position=3),
    }
    out = {}
    scratch = Path(os.environ.get("TMPDIR", "/tmp"))
    for kind, nb in kinds.items():
        path = write_export_zip(nb, scratch / f"lms-{os.getpid()}-{kind}.zip", ASSIGNMENT)
        out[kind] = path.read_bytes()
        path.unlink()
    out["not-a-notebook"] = b"%PDF-1.4 this is a scanned page\n"
    return out


EXPECT = {  # kind -> (status, flags, total as the gradebook writes it or None for "below 20 and above 0")
    "correct": ("graded", "", "20"),
    "partial": ("graded", "", None),
    "untouched": ("graded", "not-attempted", "0"),
    "raises": ("graded", "load-error", None),
    "endless": ("timeout", "", "0"),
    "not-a-notebook": ("rejected", "", "0"),
}
PEOPLE = {  # kind -> (Canvas user id, Moodle participant, SID, name with accents, commas and quotes)
    "correct": ("4101", "101", "1001", "Lovelace, Ada"),
    "partial": ("4102", "102", "1002", 'O\'Brien, José "Pepe"'),
    "untouched": ("4103", "103", "1003", "Gödel, Kurt"),
    "raises": ("4104", "104", "1004", "Noether, Emmy"),
    "endless": ("4105", "105", "1005", "Turing, Alan"),
    "not-a-notebook": ("4106", "106", "1006", "Hopper, Grace"),
}


def _canvas(folder: Path, files: dict[str, bytes]) -> dict[str, str]:
    for kind, data in files.items():
        user, _, _, name = PEOPLE[kind]
        sortable = "".join(ch for ch in name.lower() if ch.isalpha())
        late = "late_" if kind == "partial" else ""
        (folder / f"{sortable}_{late}{user}_{int(user) + 9000}_lm-head.zip").write_bytes(data)
    return {PEOPLE[k][0]: k for k in files}


def _moodle(folder: Path, files: dict[str, bytes]) -> dict[str, str]:
    for kind, data in files.items():
        _, participant, _, name = PEOPLE[kind]
        sub = folder / f"{name}_{participant}_assignsubmission_file_"
        sub.mkdir()
        (sub / "lm-head_2026_12_01T09_30_00_123456.zip").write_bytes(data)
    return {PEOPLE[k][1]: k for k in files}


def _gradescope(folder: Path, files: dict[str, bytes]) -> dict[str, str]:
    lines = []
    for number, (kind, data) in enumerate(files.items(), start=1):
        _, _, sid, name = PEOPLE[kind]
        key = f"submission_{number}"
        (folder / key).mkdir()
        (folder / key / "lm-head.zip").write_bytes(data)
        lines += [f"{key}:", "  :submitters:", f"  - :name: '{name.replace(chr(39), chr(39) * 2)}'",
                  f"    :sid: '{sid}'", f"    :email: s{sid}@uni.edu", "  :created_at: 2026-12-01 09:00:00 -08:00"]
    (folder / "submission_metadata.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {PEOPLE[k][2]: k for k in files}


def _folders(folder: Path, files: dict[str, bytes]) -> dict[str, str]:
    for kind, data in files.items():
        (folder / f"student-{kind}").mkdir()
        (folder / f"student-{kind}" / "lm-head.zip").write_bytes(data)
    return {f"student-{k}": k for k in files}


@pytest.mark.parametrize("layout", [_canvas, _moodle, _gradescope, _folders], ids=lambda f: f.__name__.strip("_"))
def test_a_mixed_class_from_each_layout(built, tmp_path, layout):
    files = _class(built)
    subs = tmp_path / "subs"
    subs.mkdir()
    ids = layout(subs, files)
    out = tmp_path / "out"
    export = tmp_path / "Grades-GPT.csv"
    rows = [["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "lm-head (777)", "Current Score"],
            ["    Points Possible", "", "", "", "", "20.00", "(read only)"]]
    rows += [[PEOPLE[k][3], PEOPLE[k][0], PEOPLE[k][2], f"s{PEOPLE[k][2]}@uni.edu", "A", "", "0"] for k in files]
    rows += [["Absent, Ann", "4999", "1999", "ann@uni.edu", "A", "", "0"]]
    with open(export, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    result = CliRunner().invoke(main, ["grade", str(subs), "-a", str(built.autograder_zip), "-o", str(out),
                                       "--timeout", "8", "--moodle-csv", "--canvas-gradebook", str(export)])
    assert result.exit_code == 0, result.output
    # (A Moodle download read without its worksheet says so first: its numbers were taken unchecked.)
    lines = [line for line in result.output.splitlines() if "without its grading worksheet" not in line]
    assert lines[1].startswith("Sandbox: bwrap")
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(book) == set(ids), (sorted(book), sorted(ids))
    for student, kind in ids.items():
        status, flags, total = EXPECT[kind]
        row = book[student]
        assert (row["status"], row["flags"]) == (status, flags), (kind, row)
        assert total is None and 0 < float(row["total"]) < 20 or row["total"] == total, (kind, row["total"])
        assert "." not in row["total"] or len(row["total"].split(".")[1]) <= 2
    raises = book[next(s for s, k in ids.items() if k == "raises")]
    assert "SyntaxError" in raises["note"]
    if layout is _canvas:
        assert "submitted late" in book["4102"]["note"]
    if layout in (_canvas, _moodle, _gradescope):
        names = {book[s]["name"] for s in ids}
        assert any("José" in n or "lovelace" in n or "Lovelace" in n for n in names)

    # Canvas's export comes back with the assignment's column filled for everyone the layout identifies.
    with open(out / "Grades-GPT-graded.csv", newline="", encoding="utf-8") as handle:
        filled = list(csv.reader(handle))
    assert [r[:5] + r[6:] for r in filled] == [r[:5] + r[6:] for r in rows]
    if layout in (_canvas, _gradescope):
        assert [r[5] for r in filled[2:-1]] == [book[s]["total"] for s in ids]
        assert filled[-1][5] == "" and "Absent, Ann" in result.output
    else:
        assert "not in the Canvas export (6)" in result.output

    report = tmp_path / "report.html"
    assert CliRunner().invoke(main, ["report", str(out), "-o", str(report)]).exit_code == 0
    page = report.read_text(encoding="utf-8")
    for standing in ("graded", "not attempted", "did not load", "timed out", "rejected"):
        assert f'data-standing="{standing}"' in page, standing


def test_nothing_graded_is_an_error(built, tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "alice.zip").write_bytes(b"not a zip at all")
    (subs / "bob.ipynb").write_text("{ not json")
    result = CliRunner().invoke(main, ["grade", str(subs), "-a", str(built.autograder_zip), "-o", str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "no submission could be graded" in result.output and "2 submissions: 2 rejected" in result.output

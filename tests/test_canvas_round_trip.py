"""`grader grade` on a small Canvas class with the instructor's own export, end to end.

The download and the export are written as Canvas writes them (``tests/lms_formats.py``):
a ``;``/decimal-comma export with a BOM, a "Manual Posting" row and a 100-point column.
"""
from __future__ import annotations

import csv

import pytest
from click.testing import CliRunner

from autograder.build import build
from autograder.cli import main
from tests import lms_formats as F

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    (result,) = build(["lm-head"], tmp_path_factory.mktemp("dist"), None, verify=False)
    return result


def test_a_canvas_class_fills_its_own_rows_with_canvas_names_in_the_exports_dialect(built, tmp_path):
    r = F.roster()
    solution, stub = built.solution.read_bytes(), built.student.read_bytes()
    # Lovelace's Canvas id 4101 is Knuth's SIS User ID; Knuth submitted nothing.
    subs = [F.CanvasSubmission(r["lovelace"], files={"lm-head.ipynb": solution}, attachment_ids=[88001]),
            F.CanvasSubmission(r["turing"], files={"lm-head.ipynb": stub}, attachment_ids=[88002]),
            F.CanvasSubmission(r["obrien"], files={"lm-head.ipynb": solution}, attachment_ids=[88004])]
    download = F.write_tree(tmp_path / "download", F.canvas_download(subs))
    export = tmp_path / F.canvas_export_file_name("CS 101")
    export.write_bytes(F.canvas_gradebook_for_class(col_sep=";", decimal=",", bom=True, manual_posting=True,
                                                    points=100.0, scores={"turing": 12.0}))
    out = tmp_path / "graded"
    args = ["grade", str(download), "-a", str(built.autograder_zip), "-o", str(out), "--canvas-gradebook",
            str(export), "--canvas-csv", "--isolation", "auto"]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code != 0 and "worth 100 points" in refused.output and "total is 20" in refused.output
    assert not (out / "gradebook.csv").exists()                  # refused before grading

    result = CliRunner().invoke(main, [*args, "--canvas-scale", "--canvas-column", "lm-head (12345)"])
    assert result.exit_code == 0, result.output
    filled = out / f"{export.stem}-graded.csv"
    rows = F.csv_rows(filled.read_bytes(), ";")
    assert filled.read_bytes().startswith(b"\xef\xbb\xbf") and rows[1][6] == "Manual Posting"
    cells = {row[0]: row[6] for row in rows[3:]}
    assert cells == {"Lovelace, Ada": "100", "Turing, Alan": "0", "Hopper, Grace": "",
                     "O'Brien-Smith, Seán": "100", "Nguyen_Tran, Mai": "", "Knuth, Donald": "", "Student, Test": ""}
    assert "filled 3 students in column 'lm-head (12345)'" in result.output
    assert '"Turing, Alan" (ID 4102): 12 -> 0' in result.output
    assert f"Canvas import file: {out / 'gradebook_canvas.csv'}" in result.output
    # Names from the Canvas export, not the download's "lovelaceada", everywhere the records are read.
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        names = {row["student"]: row["name"] for row in csv.DictReader(handle)}
    assert names == {"4101": "Lovelace, Ada", "4102": "Turing, Alan", "4104": "O'Brien-Smith, Seán"}
    assert '"name": "Lovelace, Ada"' in (out / "students" / "4101" / "outcome.json").read_text(encoding="utf-8")
    canvas_csv = F.csv_rows((out / "gradebook_canvas.csv").read_bytes())
    assert canvas_csv[0][5] == "lm-head (12345)" and canvas_csv[1][5] == "100"
    assert {row[1]: (row[2], row[5]) for row in canvas_csv[2:]} == {"4101": ("", "100"), "4102": ("", "0"),
                                                                    "4104": ("", "100")}

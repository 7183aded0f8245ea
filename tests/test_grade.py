"""Does `grader grade` grade a class in parallel, resume, and keep a consistent gradebook?"""
from __future__ import annotations

import copy
import csv
import json
import os
import shutil
import tempfile
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from autograder.build import build
from autograder.cli import main
from autograder.runtime.grading.bulk import discover, grade_batch
from tests.suites import MISTAKES
from autograder.report import build_report
from tests.cohort import with_mistake, with_stubs, write_export_zip

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    (result,) = build(["lm-head"], out, None, verify=False)
    return result


def _read_gradebook(path: Path) -> dict[str, dict]:
    with open(path, newline="") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


@pytest.fixture
def cohort(built, tmp_path):
    solution = nbformat.read(built.solution, as_version=4)
    folder = tmp_path / "subs"
    folder.mkdir()
    nbformat.write(solution, folder / "alice.ipynb")
    nbformat.write(with_mistake(solution, MISTAKES["loss-summed"]), folder / "bob.ipynb")
    write_export_zip(with_stubs(solution, ["lm_head_backward"]), folder / "carol.zip", "lm-head")
    (folder / "dave.ipynb").write_text("{not json")
    return folder


def test_text_that_is_not_unicode_never_stops_the_batch(built, tmp_path):
    """A lone surrogate, escaped in a notebook's JSON, and file and folder names that are not
    UTF-8 reach the feedback and the gradebook; they are written escaped, and every student is
    graded (the first such student used to stop the batch, or leave the class without a gradebook)."""
    import os
    solution = nbformat.read(built.solution, as_version=4)
    folder = tmp_path / "subs"
    folder.mkdir()
    odd = json.loads(nbformat.writes(solution))
    odd["metadata"]["otter"]["assignment_name"] = "lm-head\ud800"
    (folder / "aaa.ipynb").write_text(json.dumps(odd))           # json escapes the surrogate
    raw = os.fsencode(folder)
    os.mkdir(raw + b"/st\xe9phane")
    nbformat.write(solution, os.fsdecode(raw + b"/st\xe9phane/lm-head.ipynb"))
    nbformat.write(solution, os.fsdecode(raw + b"/bad\xffname.ipynb"))
    nbformat.write(solution, folder / "zoe.ipynb")
    out = tmp_path / "out"
    result = grade_batch([folder], built.autograder_zip, out, workers=1, timeout=20, canvas_csv=True)
    assert result.graded == 4
    text = (out / "gradebook.csv").read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    assert len(rows) == 4 and [r["status"] for r in rows].count("graded") == 3
    assert "\\udcff" in text                                  # the file name, escaped
    assert "\\ud800" in (out / "students" / "aaa" / "feedback.md").read_text(encoding="utf-8")
    assert (out / "gradebook_canvas.csv").exists() and build_report(out)


def test_grades_a_folder_with_gradebook_results_and_feedback(built, cohort, tmp_path):
    out = tmp_path / "out"
    result = grade_batch([cohort], built.autograder_zip, out, workers=2, timeout=20, canvas_csv=True)
    book = _read_gradebook(out / "gradebook.csv")
    assert set(book) == {"alice", "bob", "carol", "dave"}
    assert book["alice"]["total"] == book["alice"]["possible"] == "20"
    assert float(book["bob"]["total"]) < 20 and "loss-summed" in book["bob"]["mistakes"]
    assert book["carol"]["q5"] == "0" and book["carol"]["status"] == "graded"
    assert book["dave"]["status"] == "rejected" and "not JSON" in book["dave"]["note"]
    assert list(book["alice"])[:5] == ["student", "name", "email", "total", "possible"]
    for student in book:
        data = json.loads((out / "students" / student / "results.json").read_text())
        assert {"score", "tests", "output"} <= set(data)
        assert all({"name", "score", "max_score", "status", "output", "visibility"} <= set(t) for t in data["tests"])
        assert (out / "students" / student / "feedback.md").read_text().startswith("# Feedback: lm-head")
    feedback = (out / "students" / "bob" / "feedback.md").read_text()
    assert "Loss summed, not averaged" in feedback
    with open(out / "gradebook_canvas.csv", newline="") as handle:
        rows = list(csv.reader(handle))
    assert rows[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert rows[1][0] == "Points Possible" and rows[1][5] == "20"
    assert result.graded == 4 and result.skipped == 0 and not result.interrupted
    # the class report renders from this real output
    html = build_report(out)
    assert "Loss summed, not averaged" in html and "dave" in html


def test_rerun_resumes_and_force_regrades(built, cohort, tmp_path):
    out = tmp_path / "out"
    grade_batch([cohort], built.autograder_zip, out, workers=2, timeout=20)
    again = grade_batch([cohort], built.autograder_zip, out, workers=2, timeout=20)
    assert (again.graded, again.skipped) == (0, 4)
    (cohort / "alice.ipynb").write_text((cohort / "alice.ipynb").read_text() + " ")   # changed file
    changed = grade_batch([cohort], built.autograder_zip, out, workers=2, timeout=20)
    assert (changed.graded, changed.skipped) == (1, 3)
    forced = grade_batch([cohort], built.autograder_zip, out, workers=2, timeout=20, force=True)
    assert (forced.graded, forced.skipped) == (4, 0)


def test_interrupt_leaves_a_consistent_partial_gradebook_and_rerun_finishes(built, cohort, tmp_path):
    out = tmp_path / "out"
    seen = []

    def stop_after_two(entry, outcome, skipped):
        seen.append(entry.student)
        if len(seen) == 2:
            raise KeyboardInterrupt

    partial = grade_batch([cohort], built.autograder_zip, out, workers=1, timeout=20, on_done=stop_after_two)
    assert partial.interrupted
    book = _read_gradebook(out / "gradebook.csv")
    assert set(book) == set(seen)                              # exactly what finished, nothing half-done
    assert all((out / "students" / s / "results.json").is_file() for s in book)
    rest = grade_batch([cohort], built.autograder_zip, out, workers=2, timeout=20)
    assert (rest.graded, rest.skipped) == (2, 2)
    assert len(_read_gradebook(out / "gradebook.csv")) == 4


def test_gradescope_export_with_metadata_and_duplicate_submissions(built, tmp_path):
    solution = nbformat.read(built.solution, as_version=4)
    export = tmp_path / "export"
    for key, nb in (("submission_1", solution), ("submission_2", with_stubs(solution, ["softmax"])),
                    ("submission_3", with_mistake(solution, MISTAKES["dw-transposed"]))):
        (export / key).mkdir(parents=True)
        write_export_zip(nb, export / key / "lm-head.zip", "lm-head")
    (export / "submission_metadata.yml").write_text("""
submission_1:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1001'
    :email: ada@example.edu
  :created_at: 2026-11-20 10:00:00.000000000 -08:00
submission_2:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1001'
    :email: ada@example.edu
  :created_at: 2026-11-21 09:00:00.000000000 -08:00
submission_3:
  :submitters:
  - :name: Alan Turing
    :sid: '1002'
    :email: alan@example.edu
  :created_at: 2026-11-20 11:00:00.000000000 -08:00
""")
    entries = discover([export]).entries
    assert [(e.student, e.name, e.email) for e in entries] == [
        ("1001", "Ada Lovelace", "ada@example.edu"), ("1002", "Alan Turing", "alan@example.edu")]
    assert entries[0].path.parent.name == "submission_2"          # the later of Ada's two
    assert "graded `submission_2/lm-head.zip`, the latest by Gradescope's submission time" in entries[0].note
    out = tmp_path / "out"
    grade_batch([export], built.autograder_zip, out, workers=2, timeout=20)
    book = _read_gradebook(out / "gradebook.csv")
    assert book["1001"]["name"] == "Ada Lovelace" and book["1001"]["q3"] == "0"
    assert "the latest by Gradescope's submission time" in book["1001"]["note"]
    assert "dw-transposed" in book["1002"]["mistakes"]


def test_cli_prints_a_summary_and_reports_bad_input(built, cohort, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["grade", str(cohort / "alice.ipynb"), str(cohort / "bob.ipynb"),
                                  "-a", str(built.autograder_zip), "-o", str(tmp_path / "o"), "--workers", "1"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[1].startswith("Sandbox: bwrap"), "the sandbox is named first"
    assert "alice" in result.output and "2 submissions: 2 graded; 2 graded in this run" in result.output
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(main, ["grade", str(empty), "-a", str(built.autograder_zip), "-o", str(tmp_path / "o2")])
    assert result.exit_code == 1 and "no submissions found" in result.output
    bad_zip = tmp_path / "bad.zip"
    bad_zip.write_bytes(b"not a zip")
    result = runner.invoke(main, ["grade", str(cohort), "-a", str(bad_zip), "-o", str(tmp_path / "o3")])
    assert result.exit_code == 1 and "not a readable autograder zip" in result.output
    # Every submission rejected: nothing graded is an error, and it says why.
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "carol.py").write_bytes(b"\xff\xfe not text")
    result = runner.invoke(main, ["grade", str(junk), "-a", str(built.autograder_zip), "-o", str(tmp_path / "o4")])
    assert result.exit_code == 1 and "no submission could be graded" in result.output
    assert "1 submission: 1 rejected" in result.output


def test_a_weaker_level_is_refused_by_default_and_shown_everywhere_when_trusted(built, cohort, tmp_path):
    """Without --trusted-code, rlimits is refused at once, and the fresh-uid level is refused while
    the references are readable (a copy of the zip any user may read); with it, the level is in
    all four places."""
    runner = CliRunner()
    shared = Path(tempfile.mkdtemp(dir="/tmp"))
    shared.chmod(0o755)
    readable_zip = shutil.copy(built.autograder_zip, shared / "autograder.zip")
    os.chmod(readable_zip, 0o644)
    sub = str(cohort / "alice.ipynb")
    refused = runner.invoke(main, ["grade", sub, "-a", str(built.autograder_zip), "-o", str(tmp_path / "r"),
                                   "--isolation", "rlimits"])
    assert refused.exit_code == 1 and "refusing to run student code at the 'rlimits' level" in refused.output
    assert "--trusted-code" in refused.output and not (tmp_path / "r" / "alice").exists()
    try:
        probe = runner.invoke(main, ["grade", sub, "-a", str(readable_zip), "-o", str(tmp_path / "u"),
                                     "--isolation", "user"])
    finally:
        shutil.rmtree(shared)
    assert probe.exit_code == 1 and "could read" in probe.output and "chmod -R o-rwx" in probe.output

    out = tmp_path / "t"
    trusted = runner.invoke(main, ["grade", sub, "-a", str(built.autograder_zip), "-o", str(out),
                                   "--isolation", "rlimits", "--trusted-code"])
    assert trusted.exit_code == 0, trusted.output
    lines = trusted.output.splitlines()
    assert lines[1].startswith("Sandbox: rlimits (trusted code)") and lines[2].startswith("WARNING")
    assert _read_gradebook(out / "gradebook.csv")["alice"]["isolation"] == "rlimits (trusted code)"
    results = json.loads((out / "students" / "alice" / "results.json").read_text())
    assert results["extra_data"]["isolation"] == "rlimits (trusted code)"
    assert "rlimits (trusted code)" in results["output"]
    from autograder.report import build_report
    page = build_report(out)
    assert 'id="isolation" class="warning"' in page and "rlimits (trusted code)" in page


HANGING_GRADIENT = '''def numerical_gradient(f, x, eps=1e-6):
    grad = np.zeros(x.shape)
    i = 0
    while i < x.size:   # i never advances
        grad.flat[i] = 0.0
    return grad
'''


def _with_hanging_gradient(built) -> tuple[nbformat.NotebookNode, str]:
    """The solution with a `numerical_gradient` that never returns, and where its cell is."""
    nb = copy.deepcopy(nbformat.read(built.solution, as_version=4))
    (index,) = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                and c.source.startswith("def numerical_gradient")]
    nb.cells[index].source = HANGING_GRADIENT
    return nb, f"code cell {sum(1 for c in nb.cells[:index + 1] if c.cell_type == 'code')} from the top"


def _check_hang_verdicts(tests: list[dict], seconds: int) -> None:
    gradient = [t for t in tests if "numerical_gradient" in t["name"]]
    relative = [t for t in tests if "max_rel_err" in t["name"]]
    assert gradient and relative
    assert all(t["status"] == "failed" for t in gradient)
    assert sum(f"did not return within {seconds} s" in t["output"] for t in gradient) == 1
    assert all("did not return earlier" in t["output"] for t in gradient
               if f"within {seconds} s" not in t["output"])
    assert all(t["status"] == "passed" for t in relative), [t["output"] for t in relative]


def test_a_hanging_function_costs_no_other_function_its_points_under_otter_run(built, tmp_path):
    """The same under ``otter run`` (Gradescope's path): 10 s per call, 30 s in all, and three
    hangs of 10 s used to leave `max_rel_err` nothing."""
    from autograder.build.otter_steps import otter_run
    nb, where = _with_hanging_gradient(built)
    nbformat.write(nb, tmp_path / "erin.ipynb")
    results = otter_run(built.autograder_zip, tmp_path / "erin.ipynb")
    _check_hang_verdicts(results["tests"], 10)
    assert "numerical_gradient" in results["output"] and where in results["output"]


def test_a_hanging_function_costs_no_other_function_its_points(built, tmp_path):
    """`numerical_gradient` hangs on every call; the correct `max_rel_err` keeps every point.

    Before, each of its calls ran out the per-call window and the hangs used up the
    submission's total, so `max_rel_err` scored 0 ("used up its total time").
    """
    nb, where = _with_hanging_gradient(built)
    folder = tmp_path / "subs"
    folder.mkdir()
    nbformat.write(nb, folder / "erin.ipynb")
    out = tmp_path / "out"
    grade_batch([folder], built.autograder_zip, out, workers=1, timeout=10)
    _check_hang_verdicts(json.loads((out / "students" / "erin" / "results.json").read_text())["tests"], 10)
    book = _read_gradebook(out / "gradebook.csv")
    feedback = (out / "students" / "erin" / "feedback.md").read_text()
    for text in (book["erin"]["note"], feedback, build_report(out)):
        assert "numerical_gradient" in text and "did not return within 10 s" in text and where in text

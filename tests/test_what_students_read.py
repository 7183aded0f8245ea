"""Sentences of the feedback that describe the grading itself hold: a notebook that hangs is told
which cell hung, a rejected submission is told about its own file and never shown the instructor's
folders, and the note on a sandbox weaker than bubblewrap says who or what chose it."""
from __future__ import annotations

import json
import types
import zipfile
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from autograder.build import build
from autograder.cli import main
from autograder.runtime import otter_plugin
from autograder.runtime.grading.extract import extract_program
from autograder.runtime.grading.intake import read_submission
from autograder.runtime.grading.runner import grade_program
from autograder.runtime.grading.support import load_autograder
from autograder.runtime.sandbox import Limits
from autograder.runtime.sandbox import isolation as iso
from autograder.runtime.sandbox import policy
from autograder.runtime.sandbox.policy import Clearance, clear
from tests.cohort import write_export_zip

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("students-read")
    (result,) = build(["lm-head"], root / "dist", None, verify=False)
    return result


def _solution(built) -> nbformat.NotebookNode:
    return nbformat.read(built.solution, as_version=4)


def test_a_notebook_that_hangs_is_told_which_cell(built, tmp_path):
    nb = _solution(built)
    cell = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("def softmax("))
    cell.source += "\nwhile True:\n    pass\n"
    nbformat.write(nb, tmp_path / "hang.ipynb")
    ag = load_autograder(built.autograder_zip, tmp_path / "ag")
    program = extract_program(read_submission(tmp_path / "hang.ipynb", "lm-head"))
    outcome = grade_program(program, ag, "s", clear("auto", [tmp_path, built.autograder_zip]),
                            limits=Limits(wall_seconds_per_call=2.0, wall_seconds_total=10.0))
    assert outcome.status == "timeout"
    (note,) = [n for n in outcome.notes if "took too long" in n]
    assert "stopped in the code cell that starts `def softmax(" in note, note


def test_a_rejected_submission_in_nested_folders_shows_no_instructor_path(built, tmp_path):
    # A Gradescope export, deep in the instructor's folders, where one student's folder holds nothing.
    export = tmp_path / "courses" / "gpt" / "assignment_7700_export"
    (export / "submission_244007").mkdir(parents=True)
    (export / "submission_244008").mkdir()
    write_export_zip(_solution(built), export / "submission_244008" / "lm-head.zip", "lm-head")
    (export / "submission_metadata.yml").write_text(
        "submission_244007:\n  :submitters:\n  - :name: Ann\n    :sid: '1001'\n"
        "submission_244008:\n  :submitters:\n  - :name: Bob\n    :sid: '1002'\n", encoding="utf-8")
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["grade", str(export), "-a", str(built.autograder_zip), "-o", str(out),
                                       "--timeout", "8"])
    assert result.exit_code == 0, result.output
    feedback = (out / "students" / "1001" / "feedback.md").read_text(encoding="utf-8")
    results = (out / "students" / "1001" / "results.json").read_text(encoding="utf-8")
    for text in (feedback, results):
        for private in (str(tmp_path), "courses", "assignment_7700_export/"):
            assert private not in text, text
    assert "submission_244007" in feedback and "holds no file" in feedback, feedback


def _gradescope_layout(built, root: Path, notebook: nbformat.NotebookNode) -> Path:
    """otter's folders as Gradescope makes them: the zip unpacked in ``source``, the submission in
    ``submission`` (otter's working folder)."""
    with zipfile.ZipFile(built.autograder_zip) as zf:
        zf.extractall(root / "source")
    (root / "submission").mkdir()
    path = root / "submission" / "lm-head.ipynb"
    nbformat.write(notebook, path)
    return path


def test_on_gradescope_an_automatic_fallback_is_told_as_the_machines(built, tmp_path, monkeypatch):
    # Gradescope's machine: no bubblewrap, so "auto" falls back to the fresh-uid level, whose probe
    # (that the sandbox user reads none of the guarded files) is taken here as passed.
    monkeypatch.setattr(iso, "detect_isolation", lambda: iso.Isolation("user", "bubblewrap cannot run here"))
    monkeypatch.setattr(policy.reach, "readable_by_stranger", lambda places: [])
    monkeypatch.setattr(policy, "reachable_from_worker", lambda places: [])
    path = _gradescope_layout(built, tmp_path / "autograder", _solution(built))
    plugin = otter_plugin.TrustedGrading(str(path), {}, {})
    plugin.before_grading(None)
    plugin.before_execution(nbformat.read(path, as_version=4))
    results = types.SimpleNamespace()
    plugin.after_grading(results)
    written = results.to_gradescope_dict()
    assert written["extra_data"]["isolation"] == "user", plugin.error or written["output"]
    assert "The grading machine could not run bubblewrap" in written["output"], written["output"]
    assert "instructor chose" not in written["output"], written["output"]


@pytest.mark.parametrize("clearance, said, unsaid", [
    (Clearance("user", "d", fallback=True), "could not run bubblewrap", "instructor"),
    (Clearance("user", "d"), "Your instructor chose a sandbox weaker than bubblewrap", "could not run"),
    (Clearance("rlimits", "d", trusted=True, fallback=True), "your instructor chose it, for code they trust",
     "could not run"),
    (Clearance("bwrap", "d", fallback=False), "", "weaker"),
])
def test_the_weaker_level_note_says_who_chose_it(clearance, said, unsaid):
    assert said in clearance.student_note and (not unsaid or unsaid not in clearance.student_note)


def test_auto_marks_a_weaker_level_as_the_machines_choice(monkeypatch):
    monkeypatch.setattr(iso, "detect_isolation", lambda: iso.Isolation("rlimits", "no root, no bubblewrap"))
    assert clear("auto", [], trusted=True).fallback
    monkeypatch.setattr(iso, "check_level", lambda level: iso.Isolation(level, "forced"))
    assert not clear("rlimits", [], trusted=True).fallback


def test_the_export_prints_no_warning_about_unencrypted_kernel_traffic(built, tmp_path):
    # The export cell checks the zip it wrote in a kernel of its own; that kernel's start-up
    # warning reached the student's output on every export. Run as a student does: the notebook's
    # init cell, then its export cell, in a kernel started in the notebook's folder.
    from nbclient import NotebookClient
    folder = tmp_path / "student"
    folder.mkdir()
    nb = nbformat.read(built.student, as_version=4)
    nbformat.write(nb, folder / "lm-head.ipynb")
    init = next(c for c in nb.cells if c.cell_type == "code" and c.source.startswith("# Initialize Otter"))
    export = next(c for c in nb.cells if c.cell_type == "code" and "grader.export(" in c.source)
    run = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(init.source),
                                          nbformat.v4.new_code_cell(export.source)],
                                   metadata=nb.metadata)
    NotebookClient(run, timeout=300, resources={"metadata": {"path": str(folder)}}).execute()
    said = "".join(o.get("text", "") for cell in run.cells for o in cell.outputs)
    assert list(folder.glob("lm-head_*.zip")), said         # the export happened
    assert "Running your submission against local test cases" in said, said
    assert "without encryption" not in said and "eavesdropping" not in said, said

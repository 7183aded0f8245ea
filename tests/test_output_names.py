"""Ids and output names, run end to end through ``python -m autograder.cli grade``.

No file name can reach a class-level file (students live under ``OUT/students/``), no two
students share an id (names that clean to one id each get a suffix of their own, with a note),
no link in the class folder is followed (one file is never graded as two students' work
unseen), and a graded folder is its owner's alone: at the ``user`` level a later submission
cannot list who else is in the class. Each test runs on the default level (bubblewrap) and
on ``--isolation user`` (root, the grader run from 0700 folders, the checkout made 0700 as
on a machine that holds no references, since the probe refuses otherwise).
"""
from __future__ import annotations

import contextlib
import copy
import csv
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from tests.adversarial import subprocess_env
from tests.cohort import with_stubs

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
LEVELS = ("grader-grade", "grader-grade-user")
#: Submissions told apart by their totals: the functions each leaves as a stub.
# Each profile scores differently: no profile stubs softmax (q3, 3 points), since q6's numerical gradient
# is worth as much.
PROFILES = {"full": [], "backward": ["lm_head_backward"], "batches": ["next_token_batch"],
            "gradient": ["numerical_gradient"], "relerr": ["max_rel_err"]}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    folder = tmp_path_factory.mktemp("lab")
    (result,) = build(["lm-head"], folder / "dist", None, verify=False)
    solution = nbformat.read(result.solution, as_version=4)
    notebooks = {name: with_stubs(solution, stubs) for name, stubs in PROFILES.items()}
    # What each profile scores, graded once under plain names.
    subs = folder / "profiles"
    subs.mkdir()
    for name, nb in notebooks.items():
        nbformat.write(nb, subs / f"{name}.ipynb")
    run = _grade_cli(result.autograder_zip, subs, folder / "profiles-out", "grader-grade", folder)
    assert run.returncode == 0, run.stdout + run.stderr
    totals = {row["student"]: row["total"] for row in _gradebook(folder / "profiles-out")}
    assert len(set(totals.values())) == len(PROFILES), totals
    return result.autograder_zip, notebooks, totals


@contextlib.contextmanager
def _level(level: str):
    """At the user level the checkout (which holds the references) is 0700, or the probe refuses."""
    if level != "grader-grade-user":
        yield []
        return
    mode = REPO.stat().st_mode
    REPO.chmod(0o700)
    try:
        yield ["--isolation", "user"]
    finally:
        REPO.chmod(stat.S_IMODE(mode))


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], cwd=cwd, env=subprocess_env(),
                          capture_output=True, text=True, timeout=600, preexec_fn=lambda: os.umask(0o022))


def _grade_cli(zip_path: Path, folder: Path, out: Path, level: str, cwd: Path, *extra: str):
    with _level(level) as flags:
        return _cli(["grade", str(folder), "-a", str(zip_path), "-o", str(out), "--timeout", "60", *flags, *extra],
                    cwd)


def _gradebook(out: Path) -> list[dict]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _student_dir(out: Path, student: str) -> Path:
    """A student's folder, in this layout or the one before it (so a test fails on what it checks)."""
    return out / "students" / student if (out / "students" / student).is_dir() else out / student


def _class(tmp_path: Path, lab, files: dict[str, str]) -> Path:
    """A plain class folder: file name -> profile."""
    _, notebooks, _ = lab
    folder = tmp_path / "class"
    for name, profile in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebooks[profile], folder / name)
    return folder


def _graded(tmp_path: Path, lab, folder: Path, level: str, *extra: str) -> tuple[Path, list[dict]]:
    zip_path, _, _ = lab
    out = tmp_path / "out"
    run = _grade_cli(zip_path, folder, out, level, tmp_path, *extra)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    return out, _gradebook(out)


def _row_of(rows: list[dict], path: Path) -> dict:
    (row,) = [r for r in rows if Path(r["submission"]) == path]
    return row


# ------------------------------------------------------------------ class-level names


@pytest.mark.parametrize("level", LEVELS)
def test_file_names_of_class_files_leave_every_class_file_in_place(tmp_path, lab, level):
    """From the red team: gradebook.csv.ipynb, report.html.ipynb, similarity.csv.ipynb. Ours: the
    Moodle import's name, a per-student folder named like the similarity page, and ``students``."""
    names = ["gradebook.csv.ipynb", "report.html.ipynb", "similarity.csv.ipynb", "gradebook_moodle.csv.ipynb",
             "students.ipynb", "similarity.html/lm-head.ipynb"]
    folder = _class(tmp_path, lab, {name: "relerr" for name in names})
    out, rows = _graded(tmp_path, lab, folder, level, "--moodle-csv")
    assert len(rows) == len(names) and len({r["student"] for r in rows}) == len(names)
    assert {Path(r["submission"]) for r in rows} == {folder / n for n in names}
    for command in (["report", str(out)], ["similarity", str(out)]):
        run = _cli(command, tmp_path)
        assert run.returncode == 0, run.stdout + run.stderr
    for name in ("gradebook.csv", "report.html", "similarity.csv", "similarity.html"):
        assert (out / name).is_file(), f"{name} is not a file in {sorted(p.name for p in out.iterdir())}"
    # Plain folders give Moodle nothing to match on, so its file is not written; a student named
    # after it must not take its place either.
    assert not (out / "gradebook_moodle.csv").exists()
    assert all(r["status"] == "graded" and r["total"] == lab[2]["relerr"] for r in rows)


# ------------------------------------------------------------------ ids


@pytest.mark.parametrize("form", ["NFC", "NFD"])
@pytest.mark.parametrize("level", LEVELS)
def test_names_that_clean_to_one_id_are_four_students_each_with_their_grade(tmp_path, lab, level, form):
    """José and Josè both clean to ``Jos``; the old ``-2`` suffix was a real Jos-2's id."""
    files = {unicodedata.normalize(form, n) + ".ipynb": p for n, p in
             {"José": "full", "Josè": "backward", "Jos-2": "batches", "Jos": "gradient"}.items()}
    folder = _class(tmp_path, lab, files)
    out, rows = _graded(tmp_path, lab, folder, level)
    assert len(rows) == 4 and len({r["student"] for r in rows}) == 4
    for name, profile in files.items():
        row = _row_of(rows, folder / name)
        assert row["total"] == lab[2][profile], (name, row)
        if row["student"] != Path(name).stem:        # renamed: said in the row and the feedback
            assert "graded as" in row["note"] and row["student"] in row["note"], row
            feedback = (_student_dir(out, row["student"]) / "feedback.md").read_text(encoding="utf-8")
            assert f"graded as `{row['student']}`" in feedback
    assert _row_of(rows, folder / "Jos.ipynb")["student"] == "Jos"
    assert _row_of(rows, folder / "Jos-2.ipynb")["student"] == "Jos-2"
    rerun = _grade_cli(lab[0], folder, out, level, tmp_path)      # the same ids: nothing regraded
    assert rerun.returncode == 0 and "0 graded in this run, 4 already graded before" in rerun.stdout


@pytest.mark.parametrize("level", LEVELS)
def test_export_named_files_never_take_a_real_students_id(tmp_path, lab, level):
    """Ours: two files still named by the export cell were told apart as ``lm-head`` and
    ``lm-head-2``, the id of a student whose file is ``lm-head-2.ipynb``."""
    files = {"lm-head_2026_12_01T06_12_34_567890.ipynb": "full",
             "lm-head_2026_12_01T07_00_00_000001.ipynb": "backward", "lm-head-2.ipynb": "batches"}
    folder = _class(tmp_path, lab, files)
    _, rows = _graded(tmp_path, lab, folder, level)
    assert len(rows) == 3 and len({r["student"] for r in rows}) == 3
    for name, profile in files.items():
        assert _row_of(rows, folder / name)["total"] == lab[2][profile]
    assert _row_of(rows, folder / "lm-head-2.ipynb")["student"] == "lm-head-2"


@pytest.mark.parametrize("level", LEVELS)
def test_names_that_clean_to_nothing_are_not_merged_with_a_student_named_student(tmp_path, lab, level):
    """Ours: ``___`` and ``ü`` clean to nothing, whose id is ``student``: one was graded, as the
    latest of one person's submissions, and the real student.ipynb's work was dropped."""
    files = {"student.ipynb": "full", "___.ipynb": "backward", "ü.ipynb": "batches"}
    folder = _class(tmp_path, lab, files)
    for age, name in enumerate(files):      # the real student's file is the oldest
        os.utime(folder / name, (1_000_000 + age, 1_000_000 + age))
    _, rows = _graded(tmp_path, lab, folder, level)
    assert len(rows) == 3 and len({r["student"] for r in rows}) == 3
    for name, profile in files.items():
        assert _row_of(rows, folder / name)["total"] == lab[2][profile]
    assert _row_of(rows, folder / "student.ipynb")["student"] == "student"


# ------------------------------------------------------------------ links


@pytest.mark.parametrize("level", LEVELS)
def test_a_symlink_is_refused_and_a_hard_link_is_graded_with_a_note(tmp_path, lab, level):
    """From the red team: links in the class folder were followed, so two students were graded
    from a third's file, silently."""
    folder = _class(tmp_path, lab, {"alice.ipynb": "full", "carol.ipynb": "batches"})
    os.symlink("alice.ipynb", folder / "bob.ipynb")
    os.link(folder / "carol.ipynb", folder / "dave.ipynb")
    out, rows = _graded(tmp_path, lab, folder, level)
    by_id = {r["student"]: r for r in rows}
    assert sorted(by_id) == ["alice", "bob", "carol", "dave"]
    assert by_id["alice"]["total"] == lab[2]["full"] and not by_id["alice"]["note"]
    assert by_id["bob"]["status"] == "rejected" and by_id["bob"]["total"] == "0"
    assert "is a link in the class folder" in by_id["bob"]["note"]
    for student in ("carol", "dave"):
        assert by_id[student]["total"] == lab[2]["batches"]
        assert "also the submission of 1 other student" in by_id[student]["note"]
        assert "also the submission of 1 other student" in (_student_dir(out, student) / "feedback.md").read_text()


@pytest.mark.parametrize("level", LEVELS)
def test_a_linked_student_folder_is_refused(tmp_path, lab, level):
    """Ours: a per-student folder that is a link to another student's folder."""
    folder = _class(tmp_path, lab, {"alice/lm-head.ipynb": "full"})
    os.symlink("alice", folder / "mallory")
    _, rows = _graded(tmp_path, lab, folder, level)
    by_id = {r["student"]: r for r in rows}
    assert sorted(by_id) == ["alice", "mallory"] and by_id["alice"]["total"] == lab[2]["full"]
    assert by_id["mallory"]["status"] == "rejected" and by_id["mallory"]["total"] == "0"
    assert "is a link in the class folder" in by_id["mallory"]["note"]


@pytest.mark.parametrize("level", LEVELS)
def test_a_link_inside_a_student_folder_to_a_classmates_file_is_refused(tmp_path, lab, level):
    """Ours: a real per-student folder whose only notebook links to another student's, and one
    whose real notebook sits beside a link (the real one is graded, the link never read)."""
    folder = _class(tmp_path, lab, {"alice/lm-head.ipynb": "full", "eve/work.ipynb": "batches"})
    (folder / "trudy").mkdir()
    os.symlink("../alice/lm-head.ipynb", folder / "trudy" / "lm-head.ipynb")
    os.symlink("../alice/lm-head.ipynb", folder / "eve" / "a.ipynb")     # sorts before eve's own
    _, rows = _graded(tmp_path, lab, folder, level)
    by_id = {r["student"]: r for r in rows}
    assert sorted(by_id) == ["alice", "eve", "trudy"]
    assert by_id["trudy"]["status"] == "rejected" and "is a link in the class folder" in by_id["trudy"]["note"]
    assert by_id["eve"]["total"] == lab[2]["batches"] and Path(by_id["eve"]["submission"]).name == "work.ipynb"


# ------------------------------------------------------------------ modes


def _listing_notebook(notebook: nbformat.NotebookNode, out: Path) -> nbformat.NotebookNode:
    nb = copy.deepcopy(notebook)
    nb.cells.insert(0, nbformat.v4.new_code_cell(
        f"import os\nprint('WALKED')\nfor _root, _dirs, _files in os.walk({str(out)!r}):\n"
        "    print('LISTED', _root, _dirs, _files)\n"))
    return nb


def test_at_the_user_level_a_later_submission_cannot_list_the_class(tmp_path, lab):
    """From the red team: at the user level the output folder was 0755, so a later submission
    listed its classmates' ids (e-mail addresses). Everything under OUT is now 0700/0600 whatever
    the umask, the report and the similarity pages included."""
    zip_path, notebooks, _ = lab
    # OUT where a stranger can reach it (the red team's -o /tmp/graded): all else stays 0700.
    shared = Path(tempfile.mkdtemp(prefix="lmhead-shared-", dir="/tmp"))
    try:
        shared.chmod(0o755)
        out = shared / "graded"
        folder = tmp_path / "class"
        folder.mkdir()
        nbformat.write(notebooks["full"], folder / "alice.smith@uni.edu.ipynb")
        first = _grade_cli(zip_path, folder, out, "grader-grade-user", tmp_path)
        assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-2000:]
        nbformat.write(_listing_notebook(notebooks["full"], out), folder / "mallory.ipynb")
        second = _grade_cli(zip_path, folder, out, "grader-grade-user", tmp_path)
        assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
        feedback = (_student_dir(out, "mallory") / "feedback.md").read_text(encoding="utf-8")
        assert "WALKED" in feedback and "alice.smith" not in feedback, feedback
        for command in (["report", str(out)], ["similarity", str(out)]):
            assert _cli(command, tmp_path).returncode == 0
        wrong = [f"{p}: {oct(stat.S_IMODE(p.lstat().st_mode))}" for p in [out, *out.rglob("*")]
                 if stat.S_IMODE(p.lstat().st_mode) != (0o700 if p.is_dir() else 0o600)]
        assert not wrong, wrong
    finally:
        shutil.rmtree(shared, ignore_errors=True)

"""Whose each handed-in file is, per LMS layout, without grading: one point of issue 27 per test.

Every class is written by ``tests/lms_formats.py`` (the LMS's own naming); the
end-to-end runs of the same layouts are in ``test_class_layouts.py``.
"""
from __future__ import annotations

import os
import re
from datetime import datetime, timedelta
from pathlib import Path

import zipfile

import pytest

from autograder.runtime.grading.discover import GradingInputError, discover
from autograder.runtime.grading.layouts import canvas, moodle
from tests import lms_formats as F

NB = F.DEFAULT_NOTEBOOK
ZIPPED = datetime(2026, 12, 1, 9, 30).timestamp()


def _tree(root: Path, files: F.Files, times: dict[str, float] | None = None) -> Path:
    """``files`` unzipped under ``root``, every file carrying the zip's time unless ``times`` names it."""
    F.write_tree(root, files)
    for name in files:
        when = (times or {}).get(name, ZIPPED)
        os.utime(root / name, (when, when))
    return root


def _by_id(folder: Path) -> dict:
    return {e.student: e for e in discover([folder]).entries}


# --------------------------------------------------------------------------- point 1: two files, one rule


def test_two_files_of_one_student_follow_one_rule_in_every_layout(tmp_path):
    r = F.roster()
    export = "lm-head_2026_12_01T09_12_34_567890.zip"
    # Moodle keeps each file's time: the starter notebook was uploaded a day before the export zip.
    moodle_files = F.moodle_download([F.MoodleSubmission(r["hopper"], files={"lm-head.ipynb": NB, export: NB})])
    older = {n: ZIPPED - 86400 for n in moodle_files if n.endswith("/lm-head.ipynb")}
    hopper = _by_id(_tree(tmp_path / "moodle", moodle_files, older))["1234503"]
    assert hopper.path.name == export
    assert "graded `" + export + "`, the latest by file time" in hopper.note
    assert "not graded: `lm-head.ipynb`" in hopper.note

    # Canvas: both uploads carry the zip's time; the attachment id says which came later.
    canvas_files = F.canvas_download([F.CanvasSubmission(r["hopper"], files={"lm-head.ipynb": NB,
                                                                             "lm-head-1.ipynb": NB},
                                                         attachment_ids=[88031, 88003])])
    hopper = _by_id(_tree(tmp_path / "canvas", canvas_files))["4103"]
    assert hopper.path.name == "hoppergrace_4103_88031_lm-head.ipynb"
    assert "Canvas's upload order" in hopper.note and "hoppergrace_4103_88003_lm-head-1.ipynb" in hopper.note

    # Gradescope: one submission, one time; the export zip is taken before the notebook, the PDF listed.
    t = datetime(2026, 11, 30, 21, 4, tzinfo=F.PST)
    gs = F.gradescope_export([F.GradescopeSubmission(1, [r["obrien"]], {"lm-head.ipynb": NB, "lm-head.zip": NB,
                                                                        "lm-head.pdf": F.DEFAULT_PDF}, t)])
    obrien = _by_id(_tree(tmp_path / "gs", gs) / "assignment_8046601_export")["1004"]
    assert obrien.path.name == "lm-head.zip" and not obrien.refused
    assert "the export zip is taken before a notebook" in obrien.note
    assert "`lm-head.ipynb`" in obrien.note and "a PDF (`lm-head.pdf`)" in obrien.note


# --------------------------------------------------------------------------- point 2: groups


def test_every_member_of_a_gradescope_group_gets_a_row_of_their_own(tmp_path):
    r = F.roster()
    t = datetime(2026, 11, 30, 21, 4, tzinfo=F.PST)
    gs = F.gradescope_export([F.GradescopeSubmission(2, [r["turing"], r["hopper"]], {"lm-head.ipynb": NB}, t),
                              F.GradescopeSubmission(3, [r["lovelace"]], {"lm-head.ipynb": NB}, t)])
    found = discover([_tree(tmp_path / "gs", gs) / "assignment_8046601_export"])
    entries = {e.student: e for e in found.entries}
    assert sorted(entries) == ["1001", "1002", "4102"]
    turing, hopper = entries["1002"], entries["4102"]
    assert turing.path == hopper.path and turing.group == hopper.group == "gradescope:submission_2"
    assert "group submission" in turing.note and "Grace Hopper" in turing.note
    assert "Alan Turing" in hopper.note and not entries["1001"].group
    assert not any("one file is the submission of" in w for w in found.warnings)   # by design, not a copy


def test_a_group_members_name_reaches_the_others_feedback_as_quoted_text(tmp_path):
    """A name is what its owner typed into Gradescope: in a partner's note it is quoted, never markup."""
    r = F.roster()
    t = datetime(2026, 11, 30, 21, 4, tzinfo=F.PST)
    mallory = F.Person("<img src=x onerror=alert(1)> [Regrade](https://evil.example)", "**Mallory**",
                       email="m@uni.edu", sid="666")
    gs = F.gradescope_export([F.GradescopeSubmission(2, [mallory, r["lovelace"]], {"lm-head.ipynb": NB}, t)])
    entries = {e.student: e for e in discover([_tree(tmp_path / "gs", gs) / "assignment_8046601_export"]).entries}
    note = entries["1001"].note
    assert "<img" in note                         # the name is there, as it was typed ...
    quoted = re.findall(r"(`+)(.+?)\1", note)
    assert any("<img" in body and "Mallory" in body for _, body in quoted), note   # ... inside a code span
    outside = re.sub(r"(`+).+?\1", "", note)
    assert "<" not in outside and "](" not in outside and "**" not in outside, note


def test_a_gradescope_student_without_sid_is_keyed_by_email_with_no_sid(tmp_path):
    t = datetime(2026, 11, 30, 21, 4, tzinfo=F.PST)
    person = F.Person("Kurt", "Gödel", email="kurt@uni.edu")
    gs = F.gradescope_export([F.GradescopeSubmission(5, [person], {"lm-head.ipynb": NB}, t)])
    (kurt,) = discover([_tree(tmp_path / "gs", gs) / "assignment_8046601_export"]).entries
    assert (kurt.student, kurt.email, kurt.sid) == ("kurt@uni.edu", "kurt@uni.edu", "")


# --------------------------------------------------------------------------- point 4: everything handed in


def test_canvas_names_are_read_as_content_zipper_writes_them():
    assert canvas.parse("nguyen_tranmai_4105_88010_lm_head_v2.ipynb") == canvas.CanvasName(
        "nguyen_tranmai", "4105", "", False, 88010, "", "lm_head_v2.ipynb")
    assert canvas.parse("nguyen_tranmai_LATE_4105_text.html").late
    assert canvas.parse("knuthdonald_4106_link.html").entry == "link"
    anon = canvas.parse("LATE_anon_Qm3Ab_88002_lm-head.ipynb")
    assert (anon.anonymous_id, anon.user_id, anon.late, anon.student_id) == ("Qm3Ab", "", True, "anon_Qm3Ab")
    assert canvas.parse("anon_bW9cN_text.html").entry == "text"
    assert canvas.parse("lm-head_2026_12_01T06_12_34_567890.zip") is None      # an export name, not Canvas's
    assert moodle.flat("Ada Lovelace_1234501_assignsubmission_onlinetext_onlinetext.html").plugin == "onlinetext"
    assert moodle.folder("Ada Lovelace_1234501_assignsubmission_file").participant == "1234501"


@pytest.mark.parametrize("anonymous", [False, True], ids=["named", "anonymous"])
def test_everything_a_canvas_student_handed_in_gets_a_row(tmp_path, anonymous):
    _, files = F.canvas_class(anonymous=anonymous)
    entries = _by_id(_tree(tmp_path / "canvas", files))
    ids = (["anon_f8X9w", "anon_Qm3Ab", "anon_7Hk2p", "anon_Zr4Te", "anon_bW9cN", "anon_kP2sL"] if anonymous
           else ["4101", "4102", "4103", "4104", "4105", "4106"])
    assert sorted(entries) == sorted(ids)
    late, pdf, text, link = (entries[ids[i]] for i in (1, 3, 4, 5))
    assert late.note == "submitted late (Canvas)"
    assert not pdf.refused and "a PDF" in pdf.note
    assert "We received a text entry typed into Canvas" in text.refused and "rejected" in text.note
    assert "We received a web link submitted in Canvas" in link.refused
    if not anonymous:
        assert text.name == "nguyen_tranmai" and text.lms_user_id == "4105"


@pytest.mark.parametrize("version,as_folders", [("4.1", True), ("3", True), ("4.1", False)],
                         ids=["4.1-folders", "3.x-folders", "flat"])
def test_everything_a_moodle_student_handed_in_gets_a_row(tmp_path, version, as_folders):
    r = F.roster()
    files = F.moodle_download([F.MoodleSubmission(r["lovelace"], files={"lm-head.ipynb": NB}),
                               F.MoodleSubmission(r["turing"], onlinetext="<p>my answer</p>"),
                               F.MoodleSubmission(r["hopper"], files={"lm-head.pdf": F.DEFAULT_PDF}),
                               F.MoodleSubmission(r["obrien"], files={"hw_12_34_v2.ipynb": NB})],
                              version=version, as_folders=as_folders)
    entries = _by_id(_tree(tmp_path / "moodle", files))
    assert sorted(entries) == ["1234501", "1234502", "1234503", "1234504"]   # hw_12_34 is no Canvas id
    assert entries["1234501"].name == "Ada Lovelace" and not entries["1234501"].refused
    assert "We received online text typed into Moodle" in entries["1234502"].refused
    assert "We received a PDF (`" in entries["1234503"].refused
    assert "submit the .ipynb notebook or the zip the notebook's last cell writes" in entries["1234503"].refused


@pytest.mark.parametrize("as_folders", [True, False], ids=["folders", "flat"])
def test_a_moodle_team_download_is_refused_before_a_group_id_is_read_as_a_participant(tmp_path, as_folders):
    """Moodle 4.1+ names a team's folder by the group's name and **group** id, read exactly like a
    student's name and participant number; the students in no group share a "Default group" folder
    with no number, which only a team download has. Group 1234502's grade must not go to Turing."""
    r = F.roster()
    files = F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Team Rocket", 1234502),
                                                  members=[r["lovelace"], r["hopper"]]),
                               F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Default group", None),
                                                  members=[r["knuth"]])],
                              version="4.1", as_folders=as_folders)
    assert any(name.startswith("Team Rocket_1234502_assignsubmission_file") for name in files)
    with pytest.raises(GradingInputError, match=r"Default group_assignsubmission_file.*team submissions.*"
                                                r"Nothing was graded"):
        discover([_tree(tmp_path / "moodle", files)])


# --------------------------------------------------------------------------- point 5: a class is never one student


@pytest.mark.parametrize("layout", ["canvas", "moodle", "gradescope"])
def test_a_download_zip_is_refused_and_its_wrapper_folder_is_graded_as_the_class(tmp_path, layout):
    files, name = {"canvas": (F.canvas_class()[1], F.canvas_zip_name("CS 101", "LM head")),
                   "moodle": (F.moodle_class(), F.moodle_zip_name("CS101", "LM head", 77)),
                   "gradescope": (F.gradescope_class(), F.gradescope_zip_name())}[layout]
    zip_path = F.write_zip(tmp_path / name, files)
    with pytest.raises(GradingInputError, match="the zip as downloaded"):
        discover([zip_path])
    downloads = tmp_path / "Downloads"
    folder = F.unzip_like("windows", zip_path, downloads)
    assert folder.parent == downloads
    wrapped = discover([downloads])
    direct = discover([folder if layout != "gradescope" else folder / "assignment_8046601_export"])
    assert len(wrapped.entries) > 1
    assert [(e.student, e.path) for e in wrapped.entries] == [(e.student, e.path) for e in direct.entries]
    assert any("holds only the folder" in w for w in wrapped.warnings)


def test_a_class_inside_a_class_folder_is_a_refused_row_and_a_warning_never_a_stop(tmp_path):
    """A class (or a file shaped like one) inside the class folder is one row, refused, with a warning
    for the instructor: a student who hands in a Gradescope-shaped folder or zip cannot stop the class."""
    root = tmp_path / "subs"
    (root / "alice").mkdir(parents=True)
    (root / "alice" / "lm-head.ipynb").write_bytes(NB)
    F.write_tree(root / "export", {k.split("/", 1)[1]: v for k, v in F.gradescope_class().items()})
    with zipfile.ZipFile(root / "mallory.zip", "w") as zf:
        zf.writestr("submission_metadata.yml", "{}")
        zf.writestr("submission_1/lm-head.ipynb", NB)
    found = discover([root])
    by_id = {e.student: e for e in found.entries}
    assert set(by_id) == {"alice", "export", "mallory"}
    assert by_id["alice"].refused is None or not by_id["alice"].refused
    for student in ("export", "mallory"):
        assert "holds a whole class's download" in by_id[student].refused, by_id[student]
        assert any(student in w and "grade it on its own" in w for w in found.warnings)


def test_a_file_given_by_name_that_cannot_be_graded_is_a_rejected_row_and_a_loose_one_is_listed(tmp_path):
    (tmp_path / "carol.pdf").write_bytes(F.DEFAULT_PDF)
    (carol,) = discover([tmp_path / "carol.pdf"]).entries
    assert carol.student == "carol" and "We received a PDF (`carol.pdf`)" in carol.refused
    (tmp_path / "alice.ipynb").write_bytes(NB)
    found = discover([tmp_path])
    assert [e.student for e in found.entries] == ["alice"]
    assert any("carol.pdf" in s and "whose it is cannot be told" in s for s in found.skipped)


def test_a_canvas_display_name_that_reads_like_moodle_is_read_as_canvas(tmp_path):
    """Canvas keeps a student's own file name after its prefix; Moodle's prefixes hold no underscore.
    A display name such as `x_assignsubmission_file_...` neither stops the class (Moodle's team sign)
    nor makes a Canvas user a Moodle participant."""
    root = tmp_path / "canvas"
    root.mkdir()
    for name in ("alicejones_2002_9002_x_assignsubmission_file_lm-head.ipynb", "bobsmith_2003_9003_lm-head.ipynb",
                 "carolking_4105_9004_x_4105_assignsubmission_file_lm-head.ipynb"):
        (root / name).write_bytes(NB)
    found = discover([root])
    assert len(found.entries) == 3
    assert not any("-" in e.student and e.student.startswith("4105") for e in found.entries), found.entries

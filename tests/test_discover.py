"""Whose submission is each file: ids that two people never share, links never followed."""
from __future__ import annotations

import os
import re
from pathlib import Path

from autograder.runtime.grading.discover import discover


def _export(folder: Path, submitters: dict[str, tuple[str, str, str, str]]) -> Path:
    """A Gradescope export: key -> (name, email, sid, created_at), each with a notebook."""
    lines = []
    for key, (name, email, sid, created) in submitters.items():
        (folder / key).mkdir(parents=True)
        (folder / key / "lm-head.ipynb").write_text("{}")
        lines += [f"{key}:", "  :submitters:", f"  - :name: {name}", f"    :sid: '{sid}'",
                  f"    :email: {email}", f"  :created_at: {created}"]
    (folder / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    return folder


def test_two_people_with_the_same_email_local_part_keep_their_own_grades(tmp_path):
    export = _export(tmp_path / "export", {
        "submission_1": ("Alice Real", "alice@uni.edu", "", "2026-11-20 10:00:00 -08:00"),
        "submission_2": ("Alice Fake", "alice@evil.example", "", "2026-11-21 10:00:00 -08:00"),
    })
    found = discover([export])
    assert sorted(e.student for e in found.entries) == ["alice@evil.example", "alice@uni.edu"]
    assert {e.name for e in found.entries} == {"Alice Real", "Alice Fake"}


def test_the_sid_decides_and_a_later_submission_by_the_same_person_replaces_the_earlier(tmp_path):
    export = _export(tmp_path / "export", {
        "submission_1": ("Ada", "ada@uni.edu", "1001", "2026-11-20 10:00:00 -08:00"),
        "submission_2": ("Ada", "ada.l@uni.edu", "1001", "2026-11-21 10:00:00 -08:00"),
        "submission_3": ("Other", "ada@uni.edu", "1002", "2026-11-22 10:00:00 -08:00"),
    })
    entries = {e.student: e for e in discover([export]).entries}
    assert set(entries) == {"1001", "1002"}
    assert entries["1001"].path.parent.name == "submission_2"


def test_without_sid_or_email_the_submission_id_is_used(tmp_path):
    export = _export(tmp_path / "export", {
        "submission_7": ("", "", "", "2026-11-20 10:00:00 -08:00"),
        "submission_8": ("", "", "", "2026-11-20 11:00:00 -08:00"),
    })
    assert sorted(e.student for e in discover([export]).entries) == ["submission_7", "submission_8"]


def test_ids_that_collide_after_cleaning_are_both_kept_and_reported(tmp_path):
    export = _export(tmp_path / "export", {
        "submission_1": ("A", "a b@uni.edu", "", "2026-11-20 10:00:00 -08:00"),
        "submission_2": ("B", "a/b@uni.edu", "", "2026-11-20 11:00:00 -08:00"),
    })
    found = discover([export])
    ids = sorted(e.student for e in found.entries)
    # Neither name is the id itself, so neither keeps it: each gets a suffix from its own name.
    assert len(set(ids)) == 2 and all(re.fullmatch(r"a_b@uni\.edu-[0-9a-f]{8}", i) for i in ids)
    assert ids == sorted(e.student for e in discover([export]).entries)          # the same on every run
    assert len(found.warnings) == 2 and all("1 other submission(s)" in w for w in found.warnings)
    assert all("graded as" in e.note for e in found.entries)


def test_links_are_never_followed_and_each_is_a_refused_row(tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("print('reference')\n")
    folder = tmp_path / "subs"
    folder.mkdir()
    (folder / "alice.py").write_text("def softmax(z):\n    return z\n")
    os.symlink(outside, folder / "mallory.py")
    os.symlink(folder / "alice.py", folder / "alias.py")          # inside: refused too
    found = discover([folder])
    entries = {e.student: e for e in found.entries}
    assert sorted(entries) == ["alias", "alice", "mallory"]
    assert not entries["alice"].refused
    assert all("is a link in the class folder" in entries[s].refused for s in ("alias", "mallory"))
    assert len(found.skipped) == 2 and any("mallory.py" in s and "secret.py" in s for s in found.skipped)


def test_a_canvas_download_takes_the_id_from_the_file_name(tmp_path):
    folder = tmp_path / "canvas"
    folder.mkdir()
    for name in ("lovelaceada_4101_88001_lm-head.zip", "turingalan_late_4102_88002_lm-head-1.zip",
                 "gödelkurt_4103_88003_lm-head.ipynb", "gödelkurt_4103_88009_lm-head.zip"):
        (folder / name).write_text("{}")
    os.utime(folder / "gödelkurt_4103_88003_lm-head.ipynb", (1, 1))       # the older of Kurt's two
    entries = {e.student: e for e in discover([folder]).entries}
    assert set(entries) == {"4101", "4102", "4103"}
    assert entries["4101"].name == "lovelaceada" and entries["4101"].lms_user_id == "4101"
    assert entries["4102"].note == "submitted late (Canvas)"
    assert entries["4103"].path.name == "gödelkurt_4103_88009_lm-head.zip"
    assert "handed in 2 files; graded `gödelkurt_4103_88009_lm-head.zip`, the latest" in entries["4103"].note


def test_a_moodle_download_takes_the_id_and_name_from_the_folder(tmp_path):
    folder = tmp_path / "moodle"
    for name in ("Ada Lovelace_101_assignsubmission_file_", 'José "Pepe" O\'Brien, Jr._102_assignsubmission_file_'):
        (folder / name).mkdir(parents=True)
        (folder / name / "lm-head_2026_12_01T06_12_34_567890.zip").write_text("{}")
    found = discover([folder])
    entries = {e.student: e for e in found.entries}
    assert set(entries) == {"101", "102"}
    assert entries["102"].name == 'José "Pepe" O\'Brien, Jr.' and entries["102"].lms_user_id == "102"
    # The folder says whose it is; the file name need not. Only the unchecked number is worth a word.
    assert [w for w in found.warnings if "without its grading worksheet" not in w] == []


def test_per_student_subfolders_are_read_and_export_names_are_not_ids(tmp_path):
    folder = tmp_path / "plain"
    (folder / "alice").mkdir(parents=True)
    (folder / "alice" / "lm-head.zip").write_text("{}")
    (folder / "bob" / "nested").mkdir(parents=True)
    (folder / "bob" / "nested" / "answers.py").write_text("x = 1\n")
    (folder / "empty").mkdir()
    for stamp in ("2026_12_01T06_12_34_567890", "2026_12_01T07_00_00_000001"):
        (folder / f"lm-head_{stamp}.zip").write_text("{}")
    found = discover([folder])
    ids = sorted(e.student for e in found.entries)
    assert ids[:2] == ["alice", "bob"] and len(ids) == 4          # two people, never merged
    assert all(re.fullmatch(r"lm-head-[0-9a-f]{8}", i) for i in ids[2:])
    assert any("cannot be known" in w and "2 file(s)" in w for w in found.warnings)

"""Moodle folders placed by the assignment's grading worksheet: team downloads read, nothing misplaced.

A Moodle 4.1+ team download names each group's folder by the group's name and **group** id, exactly
as an individual download names a participant's: without the worksheet the two cannot be told apart.
The downloads and worksheets are written by ``tests/lms_formats.py`` from Moodle's own source.
"""
from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

import pytest

from autograder.runtime.grading.discover import discover
from autograder.runtime.grading.layouts import moodle_participants
from autograder.runtime.grading.layouts.moodle_participants import WorksheetError
from tests import lms_formats as F

NB = F.DEFAULT_NOTEBOOK
ZIPPED = datetime(2026, 12, 1, 9, 30).timestamp()
GROUPS = {"lovelace": "Team Rocket", "hopper": "Team Rocket", "turing": "Engines", "obrien": "Analytical",
          "nguyen": "Analytical", "knuth": "Default group"}


def _tree(root: Path, files: F.Files) -> Path:
    F.write_tree(root, files)
    for name in files:
        os.utime(root / name, (ZIPPED, ZIPPED))
    return root


def _sheet(tmp_path: Path, *, team: bool, blind: bool = False, people=("lovelace", "turing", "hopper", "obrien",
                                                                          "nguyen", "knuth")) -> Path:
    r = F.roster()
    rows = [F.WorksheetRow(r[k], group=GROUPS[k]) for k in people]
    path = tmp_path / F.moodle_worksheet_file_name("CS101", "LM head", 77)
    path.write_bytes(F.moodle_grading_worksheet(rows, 20.0, team=team, blind=blind))
    return path


def _team_download() -> F.Files:
    """Every student in a group: Team Rocket's id, 1234502, is also Turing's participant number."""
    return F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Team Rocket", 1234502)),
                              F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Analytical", 77))])


@pytest.mark.parametrize("as_folders", [True, False], ids=["folders", "flat"])
def test_an_all_grouped_team_download_goes_to_every_member_and_never_to_the_participant_with_the_group_id(
        tmp_path, as_folders):
    files = F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Team Rocket", 1234502)),
                               F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Analytical", 77))],
                              as_folders=as_folders)
    folder = _tree(tmp_path / "moodle", files)
    participants = moodle_participants.read(_sheet(tmp_path, team=True))
    entries = {e.student: e for e in discover([folder], participants).entries}
    assert sorted(entries) == ["1234501", "1234503", "1234504", "1234505"]          # never Turing, 1234502
    rocket = [entries["1234501"], entries["1234503"]]
    assert {e.name for e in rocket} == {"Ada Lovelace", "Grace Hopper"}
    assert all(e.group == "moodle-team:Team Rocket" and "Team Rocket" in str(e.path.relative_to(folder)) for e in rocket)
    assert "group submission (Moodle group `Team Rocket`) with `Grace Hopper`" in entries["1234501"].note
    assert entries["1234504"].email == "sean@uni.edu" and not any(e.refused for e in entries.values())


def test_without_the_worksheet_an_all_grouped_download_is_graded_only_with_a_warning_that_says_so(tmp_path):
    """What the download alone cannot tell is said before grading, with the option that tells it."""
    found = discover([_tree(tmp_path / "moodle", _team_download())])
    assert "1234502" in {e.student for e in found.entries}
    assert any("without its grading worksheet" in w and "--moodle-worksheet" in w for w in found.warnings)


def test_the_default_group_folder_goes_to_the_students_in_no_group(tmp_path):
    files = F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Default group", None))])
    folder = _tree(tmp_path / "moodle", files)
    entries = discover([folder], moodle_participants.read(_sheet(tmp_path, team=True))).entries
    assert [(e.student, e.name) for e in entries] == [("1234506", "Donald Knuth")]
    assert "of one member" in entries[0].note


def test_a_3x_team_download_places_each_members_own_folder(tmp_path):
    r = F.roster()
    files = F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Team Rocket", 9),
                                                  members=[r["lovelace"], r["hopper"]])], version="3")
    assert any(name.startswith("Team Rocket-Ada Lovelace_1234501_") for name in files)
    entries = discover([_tree(tmp_path / "moodle", files)],
                       moodle_participants.read(_sheet(tmp_path, team=True))).entries
    assert [(e.student, e.name, e.refused) for e in entries] == [("1234501", "Ada Lovelace", ""),
                                                                  ("1234503", "Grace Hopper", "")]


def test_an_individual_download_is_checked_name_by_number_and_a_misfit_is_refused_with_the_reason(tmp_path):
    r = F.roster()
    files = F.moodle_download([F.MoodleSubmission(r["lovelace"], files={"lm-head.ipynb": NB})])
    files.update(_team_download())                       # group folders that read like participants
    folder = _tree(tmp_path / "moodle", files)
    found = discover([folder], moodle_participants.read(_sheet(tmp_path, team=False)))
    entries = {e.student: e for e in found.entries}
    assert entries["1234501"].name == "Ada Lovelace" and not entries["1234501"].refused
    assert entries["1234501"].email == "ada@uni.edu"
    assert "participant 1234502 of" in entries["1234502"].refused and "'Alan Turing'" in entries["1234502"].refused
    assert "participant 77, who is not in" in entries["77"].refused
    assert sum("1234502" in w for w in found.warnings) == 1


def test_blind_marking_matches_by_number_alone(tmp_path):
    r = F.roster()
    files = F.moodle_download([F.MoodleSubmission(r["turing"], files={"lm-head.ipynb": NB})], blind=True)
    assert any(name.startswith("Participant_1234502_") for name in files)
    entries = discover([_tree(tmp_path / "moodle", files)],
                       moodle_participants.read(_sheet(tmp_path, team=False, blind=True))).entries
    assert [(e.student, e.refused) for e in entries] == [("1234502", "")]


def test_a_group_the_worksheet_does_not_know_is_refused_not_guessed(tmp_path):
    files = F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Ghosts", 5))])
    entries = discover([_tree(tmp_path / "moodle", files)],
                       moodle_participants.read(_sheet(tmp_path, team=True))).entries
    assert len(entries) == 1 and "neither a group of" in entries[0].refused


def test_the_worksheets_maximum_grade_and_a_file_that_is_no_worksheet(tmp_path):
    assert moodle_participants.read(_sheet(tmp_path, team=True)).max_grade == 20.0
    bad = tmp_path / "grades.csv"
    bad.write_text("Email address,Grade\nada@uni.edu,3\n", encoding="utf-8")
    with pytest.raises(WorksheetError, match="no \"Identifier\" column.*Download grading worksheet"):
        moodle_participants.read(bad)
    twice = tmp_path / "twice.csv"
    twice.write_text("Identifier,Full name\nParticipant 1,A\nParticipant 1,B\n", encoding="utf-8")
    with pytest.raises(WorksheetError, match="line 3: participant 1 is listed twice"):
        moodle_participants.read(twice)


def test_names_compare_as_moodle_wrote_them_into_the_folder():
    """``clean_filename`` drops the apostrophe and ``_`` became a space in the folder only."""
    assert moodle_participants.same_name("Seán OBrien-Smith") == moodle_participants.same_name("Seán O'Brien-Smith")
    assert moodle_participants.same_name("Mai Nguyen Tran") == moodle_participants.same_name("Mai Nguyen_Tran")
    assert moodle_participants.same_name("Ada Lovelace") != moodle_participants.same_name("Team Rocket")


def test_groups_whose_names_read_alike_in_a_folder_are_refused_not_merged(tmp_path):
    """"Team A" and "Team_A" (or a group named "default_group" beside Moodle's "Default group") give one
    folder name: neither group's file may be graded for the other's members."""
    r = F.roster()
    rows = [F.WorksheetRow(r["lovelace"], group="Team A"), F.WorksheetRow(r["turing"], group="Team_A"),
            F.WorksheetRow(r["hopper"], group="Default group"), F.WorksheetRow(r["knuth"], group="default_group")]
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes(F.moodle_grading_worksheet(rows, 20.0, team=True))
    files = F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Team A", 5)),
                               F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Team_A", 6)),
                               F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Default group", None))])
    found = discover([_tree(tmp_path / "moodle", files)], moodle_participants.read(sheet))
    assert found.entries and all(e.refused for e in found.entries), [(e.student, e.refused) for e in found.entries]
    assert not any(e.lms_user_id for e in found.entries)            # no participant's row in Moodle's file


def test_a_group_folder_refused_is_no_participants_row_in_moodles_worksheet(tmp_path):
    """A group named like a member's own 3.x folder makes that folder ambiguous: refused, and never
    written to Moodle's worksheet as that member's 0."""
    r = F.roster()
    rows = [F.WorksheetRow(r["lovelace"], group="Team A"), F.WorksheetRow(r["turing"], group="Team A"),
            F.WorksheetRow(r["hopper"], group="Team A-Alan Turing")]
    sheet = tmp_path / "sheet.csv"
    sheet.write_bytes(F.moodle_grading_worksheet(rows, 20.0, team=True))
    files = F.moodle_download([F.MoodleSubmission(files={"lm-head.ipynb": NB}, group=("Team A", 9),
                                                  members=[r["lovelace"], r["turing"]])], version="3")
    entries = {e.path.parent.name: e for e in discover([_tree(tmp_path / "moodle", files)],
                                                        moodle_participants.read(sheet)).entries}
    turing = next(e for name, e in entries.items() if "Alan Turing" in name)
    assert turing.refused and turing.lms_user_id == "" and not turing.identity.startswith("moodle:")

"""The LMS fixture writers produce what Canvas's, Moodle's and Gradescope's code produces.

Fast checks of names, columns and separators only; nothing here grades.
"""
from __future__ import annotations

import json
import zipfile
from datetime import datetime, timezone

import yaml

from tests import lms_formats as F


def test_the_default_notebook_is_a_valid_notebook_of_the_assignment():
    import nbformat
    nb = nbformat.reads(F.DEFAULT_NOTEBOOK.decode(), as_version=4)
    nbformat.validate(nb)
    assert json.loads(F.DEFAULT_NOTEBOOK)["metadata"]["otter"]["assignment_name"] == "lm-head"


def test_canvas_names_follow_content_zipper():
    assert F.canvas_user_name("Lovelace, Ada") == "lovelace, ada"
    assert F.canvas_prefix("Lovelace, Ada", 4101) == "lovelaceada_4101"
    assert F.canvas_prefix("Turing, Alan", 4102, late=True) == "turingalan_LATE_4102"
    assert F.canvas_prefix("O'Brien-Smith, Seán", 4104) == "obriensmithseán_4104"
    assert F.canvas_prefix("Nguyen_Tran, Mai", 4105) == "nguyen_tranmai_4105"      # [[:word:]] keeps "_"
    assert F.canvas_prefix("Agent_007_, James", 9) == "agent007james_9"             # /_(\d+)_/ -> "\1"
    assert F.canvas_prefix(None, anonymous_id="f8X9w") == "anon_f8X9w"
    assert F.canvas_prefix(None, anonymous_id="f8X9w", late=True) == "LATE_anon_f8X9w"
    assert F.canvas_unique_filename("lm-head.ipynb", ["lm-head.ipynb"]) == "lm-head-1.ipynb"
    assert F.canvas_unique_filename("lm-head.ipynb", ["lm-head.ipynb", "lm-head-1.ipynb"]) == "lm-head-2.ipynb"
    assert F.canvas_unique_filename("a.tar.gz", ["a.tar.gz"]) == "a-1.tar.gz"
    assert F.canvas_sanitize_attachment_filename('a:b?"c".ipynb') == "a_b_c_.ipynb"
    assert F.canvas_zip_name("CS 101", "LM head") == "CS_101-LM_head_submissions.zip"


def test_the_canvas_download_is_flat_with_attachment_ids_and_html_for_text_and_urls():
    subs, files = F.canvas_class(b"SOL", b"STU")
    assert sorted(files) == [
        "hoppergrace_4103_88013_lm-head-1.ipynb",
        "knuthdonald_4106_link.html",
        "lovelaceada_4101_88001_lm-head.ipynb",
        "nguyen_tranmai_4105_text.html",
        "obriensmithseán_4104_88004_lm-head.ipynb",
        "obriensmithseán_4104_88005_lm-head.pdf",
        "turingalan_LATE_4102_88002_lm-head.ipynb",
    ]
    assert files["lovelaceada_4101_88001_lm-head.ipynb"] == b"SOL"
    assert b"colab.research.google.com" in files["knuthdonald_4106_link.html"]
    _, anon = F.canvas_class(anonymous=True)
    assert "LATE_anon_Qm3Ab_88002_lm-head.ipynb" in anon and "anon_bW9cN_text.html" in anon
    assert not any("4101" in name or "lovelace" in name for name in anon)


def test_canvas_gradebook_exports_follow_the_exporter():
    rows = F.csv_rows(F.canvas_gradebook_for_class())
    assert rows[0][:7] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Warm-up (12001)",
                           "lm-head (12345)"]
    assert rows[0][-6:] == ["Current Points", "Final Points", "Current Score", "Unposted Current Score",
                            "Final Score", "Unposted Final Score"]
    assert rows[1][:7] == ["    Points Possible", "", "", "", "", "10.00", "100.00"]
    assert set(rows[1][7:]) == {"(read only)"}
    assert rows[2][:7] == ["Lovelace, Ada", "4101", "S1001", "ada@uni.edu", "Section 1", "9.50", ""]
    assert rows[-1][0] == "Student, Test"                         # the test student comes last
    assert {r[2] for r in rows[2:]} & {r[1] for r in rows[2:]} == {"4101", "4102"}   # SIS ids = others' ids

    semi = F.canvas_gradebook_for_class(col_sep=";", decimal=",")
    assert semi.startswith(b"Student;ID;SIS User ID;")
    assert F.csv_rows(semi, ";")[1][5:7] == ["10,00", "100,00"]
    assert b'"Lovelace, Ada";4101;' not in semi and b"Lovelace, Ada;4101;" in semi   # no quotes needed with ;

    manual = F.canvas_gradebook_for_class(bom=True, manual_posting=True)
    assert manual.startswith(b"\xef\xbb\xbfStudent,ID,")
    hidden = F.csv_rows(manual)[1]
    assert hidden[0] == "" and hidden[6] == "Manual Posting" and hidden[5] == ""
    assert F.csv_rows(manual)[2][0] == "    Points Possible"

    nosis = F.csv_rows(F.canvas_gradebook_for_class(include_sis_id=False))
    assert nosis[0][:5] == ["Student", "ID", "SIS Login ID", "Section", "Warm-up (12001)"]
    assert F.canvas_export_file_name("CS 101") == "2026-12-01T0930_Grades-CS_101.csv"


def test_moodle_names_follow_the_downloader():
    assert F.moodle_clean_filename('José "Pepe" O\'Brien & Co: a/b') == "José Pepe OBrien  Co ab"
    files = F.moodle_class(b"SOL", b"STU")
    assert sorted(files) == [
        "Ada Lovelace_1234501_assignsubmission_file/lm-head.ipynb",
        "Alan Turing_1234502_assignsubmission_file/lm-head.ipynb",
        "Alan Turing_1234502_assignsubmission_onlinetext/onlinetext.html",
        "Grace Hopper_1234503_assignsubmission_file/lm-head (1).ipynb",
        "Grace Hopper_1234503_assignsubmission_file/lm-head.ipynb",
        "Seán OBrien-Smith_1234504_assignsubmission_file/lm-head.ipynb",
    ]
    assert files["Alan Turing_1234502_assignsubmission_onlinetext/onlinetext.html"].startswith(
        b'<!DOCTYPE html><html><head><meta charset="UTF-8"></head><body>')
    old = F.moodle_class(version="3")
    assert "Ada Lovelace_1234501_assignsubmission_file_/lm-head.ipynb" in old
    assert "Alan Turing_1234502_assignsubmission_onlinetext_/onlinetext.html" in old
    flat = F.moodle_class(as_folders=False)
    assert "Ada Lovelace_1234501_assignsubmission_file_lm-head.ipynb" in flat
    assert "Alan Turing_1234502_assignsubmission_onlinetext_onlinetext.html" in flat
    blind = F.moodle_class(blind=True)
    assert "Participant_1234501_assignsubmission_file/lm-head.ipynb" in blind
    assert sorted(F.moodle_group_class()) == ["Team Rocket_42_assignsubmission_file/lm-head.ipynb"]
    assert sorted(F.moodle_group_class(version="3")) == [
        "Team Rocket-Ada Lovelace_1234501_assignsubmission_file_/lm-head.ipynb",
        "Team Rocket-Alan Turing_1234502_assignsubmission_file_/lm-head.ipynb"]
    assert F.moodle_zip_name("CS101", "LM head", 42) == "CS101-LM head-42.zip"


def test_the_moodle_worksheet_has_moodles_columns_bom_and_dates():
    data = F.moodle_worksheet_for_class()
    assert data.startswith(b"\xef\xbb\xbfIdentifier,\"Full name\",\"Email address\",Status,Grade,")
    rows = F.csv_rows(data)
    assert rows[0] == ["Identifier", "Full name", "Email address", "Status", "Grade", "Maximum Grade",
                       "Grade can be changed", "Last modified (submission)", "Last modified (grade)",
                       "Feedback comments"]
    assert rows[1][:2] == ["Participant 1234501", "Ada Lovelace"]
    assert rows[3][4:6] == ["55.00", "100.00"] and rows[3][8] == "Tuesday, 1 December 2026, 8:15 AM"
    assert rows[1][8] == "-"
    blind = F.csv_rows(F.moodle_grading_worksheet([F.WorksheetRow(F.roster()["knuth"])], 10, blind=True))
    assert blind[0][:2] == ["Identifier", "Status"] and blind[1][0] == "Participant 1234506"
    assert F.moodle_worksheet_file_name("CS101", "LM head", 42) == "Grades-CS101-LM head-42.csv"


def test_the_gradescope_export_lists_every_group_member_with_ruby_symbol_keys():
    files = F.gradescope_class(b"SOL", b"STU")
    root = "assignment_8046601_export"
    assert all(name.startswith(root + "/") for name in files)
    assert f"{root}/submission_409194003/lm-head.pdf" in files and f"{root}/submission_409194004/lm-head.pdf" in files
    meta = yaml.safe_load(files[f"{root}/submission_metadata.yml"])
    group = meta["submission_409194002"]
    assert [s[":sid"] for s in group[":submitters"]] == ["1002", "4102"]          # strings, both members
    assert set(group[":submitters"][0]) == {":name", ":sid", ":email"}
    assert group[":created_at"] == datetime(2026, 12, 1, 5, 4, 5, 123456, tzinfo=timezone.utc)
    assert meta["submission_409194003"][":history"][0][":score"] == 0.0
    assert meta["submission_409194004"][":score"] is None
    apart = yaml.safe_load(F.gradescope_class(group=False)[f"{root}/submission_metadata.yml"])
    assert apart["submission_409194005"][":submitters"][0][":sid"] == "4102"


def test_the_zip_and_what_macos_and_windows_unzip_it_to(tmp_path):
    files = F.gradescope_class()
    z = F.write_zip(tmp_path / F.gradescope_zip_name(), files)
    with zipfile.ZipFile(z) as zf:
        assert sorted(zf.namelist()) == sorted(files)
        assert {i.date_time for i in zf.infolist()} == {(2026, 12, 1, 9, 30, 0)}
    mac = F.unzip_like("macos", z, tmp_path / "mac")
    win = F.unzip_like("windows", z, tmp_path / "win")
    assert (mac / "submission_metadata.yml").is_file()
    assert win.name == "assignment_8046601_export" and (win / win.name / "submission_metadata.yml").is_file()
    _, canvas = F.canvas_class()
    cz = F.write_zip(tmp_path / F.canvas_zip_name("CS 101", "LM head"), canvas)
    for system in ("macos", "windows"):
        folder = F.unzip_like(system, cz, tmp_path / system)
        assert folder.name == "CS_101-LM_head_submissions"
        assert (folder / "lovelaceada_4101_88001_lm-head.ipynb").is_file()


def test_a_canvas_export_with_first_and_last_names_and_an_integration_id():
    rows = F.csv_rows(F.canvas_gradebook_for_class(first_last=True, manual_posting=True))
    assert rows[0][:7] == ["LastName", "FirstName", "ID", "SIS User ID", "SIS Login ID", "Section", "Warm-up (12001)"]
    assert rows[1][7] == "Manual Posting" and rows[2][:2] == ["    Points Possible", ""]
    assert rows[3][:3] == ["Lovelace", "Ada", "4101"]
    assert len({len(r) for r in rows}) == 1
    people = list(F.roster().values())[:1]
    with_integration = F.csv_rows(F.canvas_gradebook_export(people, [], integration_id=True))
    assert with_integration[0][:6] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Integration ID", "Section"]

"""A real class, as each LMS hands it over, graded end to end: every student exactly once.

Each class is written by ``tests/lms_formats.py`` (the LMS's own naming, cited there),
then given to ``grader grade`` three ways: as the download zip (refused before grading,
with what to do), as the folder one level above the unzipped class (what Windows's
"Extract All" or a Downloads folder gives: graded as the class), and as the class
folder itself (the same students, files and notes). Every student the LMS handed
over has one row in ``gradebook.csv``, one ``results.json`` and ``feedback.md``, and
one line in the report, with the right grade and a note that says what was graded.
"""
from __future__ import annotations

import csv
import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import quote

import nbformat
import pytest
from click.testing import CliRunner

from autograder.build import build
from autograder.cli import main
from autograder.report import build_report
from autograder.runtime.grading.discover import discover
from autograder.runtime.grading.layouts import moodle_participants
from autograder.runtime.grading.outcome import STUDENTS_DIR
from autograder.similarity.section import similarity_section
from tests import lms_formats as F
from tests.cohort import write_export_zip

pytestmark = pytest.mark.slow

ASSIGNMENT = "lm-head"
#: When the LMS made the download zip: every member carries it, so file times tie.
ZIPPED = datetime(2026, 12, 1, 9, 30, 0)


@dataclass(frozen=True)
class Expect:
    """One student's row: status, total, and words the note must hold (for the instructor and the student)."""

    status: str
    total: str
    note: tuple[str, ...] = ()
    name: str = ""


@dataclass(frozen=True)
class Notebooks:
    solution: bytes        # the solution notebook: 20 points
    stub: bytes            # the starter notebook: 0 points, not attempted
    export: bytes          # the solution as the export cell zips it: 20 points


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    (result,) = build([ASSIGNMENT], tmp_path_factory.mktemp("dist"), None, verify=False)
    return result


@pytest.fixture(scope="module")
def notebooks(built, tmp_path_factory) -> Notebooks:
    solution = nbformat.read(built.solution, as_version=4)
    export = write_export_zip(solution, tmp_path_factory.mktemp("export") / "lm-head.zip", ASSIGNMENT)
    return Notebooks(Path(built.solution).read_bytes(), Path(built.student).read_bytes(), export.read_bytes())


EXPORT_NAME = "lm-head_2026_12_01T09_12_34_567890.zip"


# --------------------------------------------------------------------------- the classes


def canvas_class(nb: Notebooks) -> tuple[str, F.Files, dict[str, Expect]]:
    """Canvas flat files: an upload, a LATE one, a notebook with its PDF, a text entry, a URL, a PDF alone,
    a name with ``_`` handing in the export zip, and two uploads of one name (``lm-head-1.ipynb``, the later)."""
    r = F.roster()
    tran = F.Person("Minh", "Le_Van", 4107)
    kim = F.Person("Lee", "Kim", 4108)
    subs = [
        F.CanvasSubmission(r["lovelace"], files={"lm-head.ipynb": nb.solution}, attachment_ids=[88001]),
        F.CanvasSubmission(r["turing"], files={"lm-head.ipynb": nb.stub}, attachment_ids=[88002], late=True),
        F.CanvasSubmission(r["hopper"], files={"lm-head.ipynb": nb.stub, "lm-head-1.ipynb": nb.solution},
                           attachment_ids=[88003, 88031]),
        F.CanvasSubmission(r["obrien"], files={"lm-head.ipynb": nb.solution, "lm-head.pdf": F.DEFAULT_PDF},
                           attachment_ids=[88004, 88005]),
        F.CanvasSubmission(r["nguyen"], kind="online_text_entry", body="<p>see attached</p>"),
        F.CanvasSubmission(r["knuth"], kind="online_url", url="https://colab.research.google.com/drive/1AbC"),
        F.CanvasSubmission(tran, files={EXPORT_NAME: nb.export}, attachment_ids=[88007]),
        F.CanvasSubmission(kim, files={"lm-head.pdf": F.DEFAULT_PDF}, attachment_ids=[88008]),
    ]
    expect = {
        "4101": Expect("graded", "20", name="lovelaceada"),
        "4102": Expect("graded", "0", ("submitted late",), "turingalan"),
        "4103": Expect("graded", "20", ("graded `hoppergrace_4103_88031_lm-head-1.ipynb`", "Canvas's upload order",
                                         "hoppergrace_4103_88003_lm-head.ipynb")),
        "4104": Expect("graded", "20", ("the only file that can be graded", "a PDF")),
        "4105": Expect("rejected", "0", ("text entry typed into Canvas",), "nguyen_tranmai"),
        "4106": Expect("rejected", "0", ("web link submitted in Canvas",)),
        "4107": Expect("graded", "20", name="le_vanminh"),
        "4108": Expect("rejected", "0", ("a PDF",)),
    }
    return F.canvas_zip_name("CS 101", "LM head"), F.canvas_download(subs), expect


def canvas_anonymous_class(nb: Notebooks) -> tuple[str, F.Files, dict[str, Expect]]:
    """Anonymous grading: no names, no user ids, ``anon_<id>`` and ``LATE_anon_<id>``."""
    r = F.roster()
    subs = [
        F.CanvasSubmission(r["lovelace"], files={"lm-head.ipynb": nb.solution}, attachment_ids=[88001],
                           late=True, anonymous_id="f8X9w"),
        F.CanvasSubmission(r["nguyen"], kind="online_text_entry", body="<p>hi</p>", anonymous_id="bW9cN"),
        F.CanvasSubmission(r["knuth"], kind="online_url", url="https://example.org/nb", anonymous_id="kP2sL"),
    ]
    expect = {"anon_f8X9w": Expect("graded", "20", ("submitted late",)),
              "anon_bW9cN": Expect("rejected", "0", ("text entry",)),
              "anon_kP2sL": Expect("rejected", "0", ("web link",))}
    return F.canvas_zip_name("CS 101", "LM head"), F.canvas_download(subs), expect


def _moodle(nb: Notebooks, version: str, as_folders: bool) -> tuple[str, F.Files, dict[str, Expect]]:
    """Moodle: a notebook, a notebook with online text, the starter notebook and (later) the export zip in
    one submission, online text alone, a PDF alone."""
    r = F.roster()
    subs = [
        F.MoodleSubmission(r["lovelace"], files={"lm-head.ipynb": nb.solution}),
        F.MoodleSubmission(r["turing"], files={"lm-head.ipynb": nb.stub}, onlinetext="<p>Late, sorry.</p>"),
        F.MoodleSubmission(r["hopper"], files={"lm-head.ipynb": nb.stub, EXPORT_NAME: nb.export}),
        F.MoodleSubmission(r["obrien"], files={"lm-head.ipynb": nb.solution}),
        F.MoodleSubmission(r["nguyen"], onlinetext="<p>My answers: ...</p>"),
        F.MoodleSubmission(r["knuth"], files={"lm-head.pdf": F.DEFAULT_PDF}),
    ]
    expect = {
        "1234501": Expect("graded", "20", name="Ada Lovelace"),
        "1234502": Expect("graded", "0", ("online text typed into Moodle",)),
        "1234503": Expect("graded", "20", ("the latest by file time", "not graded:", "lm-head.ipynb")),
        "1234504": Expect("graded", "20", name="Seán OBrien-Smith"),
        "1234505": Expect("rejected", "0", ("online text typed into Moodle",)),
        "1234506": Expect("rejected", "0", ("a PDF",)),
    }
    return F.moodle_zip_name("CS101", "LM head", 77), F.moodle_download(subs, version=version,
                                                                        as_folders=as_folders), expect


def moodle_41_class(nb: Notebooks):
    return _moodle(nb, "4.1", True)


def moodle_3x_class(nb: Notebooks):
    return _moodle(nb, "3", True)


def moodle_flat_class(nb: Notebooks):
    return _moodle(nb, "4.1", False)


def moodle_team_class(nb: Notebooks) -> tuple[str, F.Files, dict[str, Expect]]:
    """A Moodle 4.1 team assignment, graded with its grading worksheet: "Team Rocket" (group id 1234502,
    which is also Turing's participant number) = Lovelace and Hopper; "Analytical" (group 77) = O'Brien
    and Nguyen, the starter notebook; Knuth in no group ("Default group"); Turing's group "Engines"
    handed in nothing, so Turing has no row: his number on Team Rocket's folder is a group id."""
    r = F.roster()
    subs = [F.MoodleSubmission(files={"lm-head.ipynb": nb.solution}, group=("Team Rocket", 1234502)),
            F.MoodleSubmission(files={"lm-head.ipynb": nb.stub}, group=("Analytical", 77)),
            F.MoodleSubmission(files={"lm-head.ipynb": nb.solution}, group=("Default group", None))]
    expect = {
        "1234501": Expect("graded", "20", ("group submission (Moodle group `Team Rocket`) with `Grace Hopper`",),
                          "Ada Lovelace"),
        "1234503": Expect("graded", "20", ("Moodle group `Team Rocket`", "Ada Lovelace"), "Grace Hopper"),
        "1234504": Expect("graded", "0", ("Moodle group `Analytical`", "Mai Nguyen_Tran")),
        "1234505": Expect("graded", "0", ("Moodle group `Analytical`",)),
        "1234506": Expect("graded", "20", ("Moodle group `Default group`) of one member",), "Donald Knuth"),
    }
    return F.moodle_zip_name("CS101", "LM team", 78), F.moodle_download(subs), expect


def _team_worksheet() -> bytes:
    """``moodle_team_class``'s worksheet: every participant with the "Group" column Moodle adds."""
    r = F.roster()
    groups = {"lovelace": "Team Rocket", "hopper": "Team Rocket", "obrien": "Analytical", "nguyen": "Analytical",
              "turing": "Engines", "knuth": "Default group"}
    return F.moodle_grading_worksheet([F.WorksheetRow(r[k], group=g) for k, g in groups.items()], 20.0, team=True)


#: The grading worksheet a class is graded with (``--moodle-worksheet``).
WORKSHEETS = {"moodle_team_class": _team_worksheet}


def gradescope_class(nb: Notebooks) -> tuple[str, F.Files, dict[str, Expect]]:
    """Gradescope: a single submitter, a group of two, the starter notebook + export zip + PDF in one
    submission, a PDF alone, and a student who gave no SID."""
    r = F.roster()
    t = datetime(2026, 11, 30, 21, 4, 5, 123456, tzinfo=F.PST)
    no_sid = F.Person("Kurt", "Gödel", email="kurt@uni.edu")
    subs = [
        F.GradescopeSubmission(409194001, [r["lovelace"]], {"lm-head.ipynb": nb.solution}, t),
        F.GradescopeSubmission(409194002, [r["turing"], r["hopper"]], {"lm-head.ipynb": nb.solution}, t),
        F.GradescopeSubmission(409194003, [r["obrien"]], {"lm-head.ipynb": nb.stub, "lm-head.zip": nb.export,
                                                         "lm-head.pdf": F.DEFAULT_PDF}, t + timedelta(hours=1)),
        F.GradescopeSubmission(409194004, [r["nguyen"]], {"lm-head.pdf": F.DEFAULT_PDF}, t),
        F.GradescopeSubmission(409194006, [no_sid], {"lm-head.ipynb": nb.solution}, t),
    ]
    expect = {
        "1001": Expect("graded", "20", name="Ada Lovelace"),
        "1002": Expect("graded", "20", ("group submission", "Grace Hopper"), "Alan Turing"),
        "4102": Expect("graded", "20", ("group submission", "Alan Turing"), "Grace Hopper"),
        "1004": Expect("graded", "20", ("graded `lm-head.zip`", "the export zip is taken", "a PDF")),
        "1005": Expect("rejected", "0", ("a PDF",)),
        "kurt@uni.edu": Expect("graded", "20", name="Kurt Gödel"),
    }
    return F.gradescope_zip_name(), F.gradescope_export(subs), expect


CLASSES = [canvas_class, canvas_anonymous_class, moodle_41_class, moodle_3x_class, moodle_flat_class,
           moodle_team_class, gradescope_class]


# --------------------------------------------------------------------------- on disk


def _as_downloaded(zip_path: Path, downloads: Path, system: str, times: dict[str, float]) -> Path:
    """Unzip as ``system`` does into ``downloads`` (file times those of the zip, else ``times``): the class folder."""
    folder = F.unzip_like(system, zip_path, downloads)
    stamp = ZIPPED.timestamp()
    for path in downloads.rglob("*"):
        if path.is_file():
            os.utime(path, (stamp, stamp))
    for path in downloads.rglob("*"):
        relative = str(path.relative_to(downloads))
        for (who, name), when in times.items():
            if who in relative and path.name.endswith(name):
                os.utime(path, (when, when))
    return folder


def _older_starter(files: F.Files) -> dict[tuple[str, str], float]:
    """Moodle keeps each file's own time: Hopper's starter notebook, beside her export zip, was uploaded first."""
    return {("Hopper", "lm-head.ipynb"): (ZIPPED - timedelta(days=1)).timestamp()} if any(
        EXPORT_NAME in name and "Hopper" in name for name in files) else {}


def _gradebook(out: Path) -> list[dict[str, str]]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _relative(entries, root: Path) -> list[tuple]:
    return [(e.student, e.name, e.sid, e.email, e.lms_user_id, str(e.path.relative_to(root)), e.refused,
             e.group, e.note.replace(str(root), "")) for e in entries]


def _check_lms_files(out: Path, book: list[dict[str, str]], *, moodle: bool) -> None:
    """Every gradebook row once in Canvas's import file (its ids each in one row only, its grade the
    total) and, for a Moodle download, once in Moodle's worksheet as its participant."""
    who = sorted((row["name"] or row["student"], row["total"]) for row in book)
    with open(out / "gradebook_canvas.csv", newline="", encoding="utf-8") as handle:
        canvas = list(csv.reader(handle))[2:]                    # the header, then Points Possible
    assert sorted((r[0], r[5]) for r in canvas) == who, (canvas, who)
    for column in (1, 2, 3):                                     # ID, SIS User ID, SIS Login ID
        ids = [r[column] for r in canvas if r[column]]
        assert len(ids) == len(set(ids)), (column, ids)
    if moodle:
        with open(out / "gradebook_moodle_worksheet.csv", newline="", encoding="utf-8-sig") as handle:
            sheet = list(csv.DictReader(handle))
        assert sorted((r["Full name"], r["Grade"]) for r in sheet) == who, (sheet, who)
        participants = [r["Identifier"] for r in sheet]
        assert len(participants) == len(set(participants)) and all(p.startswith("Participant ") for p in participants)


@pytest.mark.parametrize("make", CLASSES, ids=lambda f: f.__name__)
def test_every_student_of_a_real_class_is_graded_once_from_the_zip_its_wrapper_and_its_folder(
        built, notebooks, tmp_path, make):
    zip_name, files, expect = make(notebooks)
    zip_path = F.write_zip(tmp_path / "zip" / zip_name, files, ZIPPED)
    runner = CliRunner()

    # The zip as downloaded: refused before grading, with what to do.
    refused = runner.invoke(main, ["grade", str(zip_path), "-a", str(built.autograder_zip),
                                   "-o", str(tmp_path / "from-zip")])
    assert refused.exit_code == 1, refused.output
    assert "(the zip as downloaded), not one student's submission: unzip it" in refused.output
    assert not (tmp_path / "from-zip" / "gradebook.csv").exists()

    # Unzipped into Downloads (Windows keeps a folder named after the zip around everything).
    downloads = tmp_path / "Downloads"
    system = "windows" if make is not gradescope_class else "macos"
    class_folder = _as_downloaded(zip_path, downloads, system, _older_starter(files))
    assert downloads != class_folder and [p.name for p in downloads.iterdir()] == [class_folder.name]

    out = tmp_path / "out"
    worksheet = []
    if make.__name__ in WORKSHEETS:
        (tmp_path / "worksheet.csv").write_bytes(WORKSHEETS[make.__name__]())
        worksheet = ["--moodle-worksheet", str(tmp_path / "worksheet.csv")]
    result = runner.invoke(main, ["grade", str(downloads), "-a", str(built.autograder_zip), "-o", str(out),
                                  "--timeout", "20", "--canvas-csv", "--moodle-csv", *worksheet])
    assert result.exit_code == 0, result.output
    assert f"holds only the folder {class_folder.name}" in result.output

    book = _gradebook(out)
    students = [row["student"] for row in book]
    assert sorted(students) == sorted(expect), (students, sorted(expect))     # each exactly once
    report = build_report(out)
    for row in book:
        want = expect[row["student"]]
        assert (row["status"], row["total"]) == (want.status, want.total), row
        for words in want.note:
            assert words in row["note"], (words, row["note"])
        if want.name:
            assert row["name"] == want.name, row
        folder = out / STUDENTS_DIR / row["student"]
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        assert results["score"] == float(want.total) and results["extra_data"]["status"] == want.status
        feedback = (folder / "feedback.md").read_text(encoding="utf-8")
        for words in want.note:
            assert words in feedback, (words, feedback)
        link = quote(f"{STUDENTS_DIR}/{row['student']}/feedback.md")
        assert report.count(f'"{link}"') == 1, row["student"]
    _check_lms_files(out, book, moodle=make in (moodle_41_class, moodle_3x_class, moodle_flat_class,
                                                moodle_team_class))
    if make is gradescope_class:
        kurt = next(r for r in book if r["student"] == "kurt@uni.edu")
        assert kurt["email"] == "kurt@uni.edu"
        # One group's one file is compared once: its members are never a pair of copies.
        similar = similarity_section(out)
        assert not [p for p in similar.pairs if {p.a, p.b} == {"1002", "4102"}]
        assert ("4102", "one group submission with 1002: compared as 1002") in similar.not_compared

    # The class folder itself: the same students, files and notes as through its wrapper.
    participants = moodle_participants.read(tmp_path / "worksheet.csv") if worksheet else None
    assert _relative(discover([class_folder], participants).entries, class_folder) == \
        _relative(discover([downloads], participants).entries, class_folder)

"""Does `grader questions` list, generate and export question sets, and reject bad input clearly?"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from autograder.cli_questions import questions
from question_bank import build_bundle, family_names
from question_bank.errors import QuestionBankError, RosterError
from question_bank.exporters import exporters, get_exporter, student_view
from question_bank.roster import read_roster


@pytest.fixture()
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture()
def roster(tmp_path: Path) -> Path:
    path = tmp_path / "roster.csv"
    path.write_text("student_id,name\nz1234567,Ada\nz7654321,Grace\n", encoding="utf-8")
    return path


def invoke(runner: CliRunner, *args: str):
    return runner.invoke(questions, list(args), catch_exceptions=False)


# --- list ---------------------------------------------------------------------------

def test_list_shows_every_family_with_its_summary(runner):
    result = invoke(runner, "list")
    assert result.exit_code == 0
    lines = result.output.strip().splitlines()
    assert [line.split()[0] for line in lines] == family_names()
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_every_command_has_help(runner):
    for command in ("list", "generate", "stress"):
        result = invoke(runner, command, "--help")
        assert result.exit_code == 0
        assert questions.commands[command].help.strip()


# --- generate -----------------------------------------------------------------------

def test_generate_json_to_stdout_is_the_bundle(runner):
    result = invoke(runner, "generate", "-f", "causal-mask", "-f", "uniform-baseline", "-n", "3", "--seed", "7")
    assert result.exit_code == 0
    bundle = json.loads(result.output)
    assert bundle["families"] == ["causal-mask", "uniform-baseline"]
    variants = bundle["sheets"][0]["variants"]
    assert [v["family"] for v in variants] == ["causal-mask"] * 3 + ["uniform-baseline"] * 3


def test_generate_is_byte_identical_for_the_same_seed(runner):
    first = invoke(runner, "generate", "-n", "2", "--seed", "5").output
    assert invoke(runner, "generate", "-n", "2", "--seed", "5").output == first
    assert invoke(runner, "generate", "-n", "2", "--seed", "6").output != first


def test_generate_markdown_holds_questions_then_key(runner):
    result = invoke(runner, "generate", "-f", "chain-rule-joint", "-n", "2", "--format", "md")
    assert result.exit_code == 0
    text = result.output
    assert text.index("# Practice questions") < text.index("# Answer key")
    assert text.count("## 1. Joint probability") == 2   # once in the questions, once in the key
    assert "**Answer:**" in text and "Why the other choices are wrong" in text


def test_generate_writes_to_a_file(runner, tmp_path):
    out = tmp_path / "sheet.md"
    result = invoke(runner, "generate", "-n", "1", "--format", "md", "-o", str(out))
    assert result.exit_code == 0
    assert out.read_text(encoding="utf-8").startswith("# Practice questions")


def test_generate_per_student_sets_and_one_key(runner, roster, tmp_path):
    out = tmp_path / "sets"
    args = ["generate", "-f", "perplexity-from-probs", "-n", "2", "--students", str(roster), "--salt", "s3cret"]
    assert invoke(runner, *args, "-o", str(out)).exit_code == 0
    assert sorted(p.name for p in out.iterdir()) == ["answer-key.json", "z1234567.json", "z7654321.json"]
    key = json.loads((out / "answer-key.json").read_text())
    assert [s["student_id"] for s in key["sheets"]] == ["z1234567", "z7654321"]
    stems = [[v["stem"] for v in s["variants"]] for s in key["sheets"]]
    assert stems[0] != stems[1], "two students got the same questions"
    student = json.loads((out / "z1234567.json").read_text())
    assert [q["stem"] for q in student["questions"]] == stems[0]
    text = json.dumps(student)
    assert '"value"' not in text and '"correct"' not in text and '"seed"' not in text
    # same salt, same sets; another salt, other sets
    again = tmp_path / "again"
    invoke(runner, *args, "-o", str(again))
    assert (again / "answer-key.json").read_bytes() == (out / "answer-key.json").read_bytes()
    other = tmp_path / "other"
    invoke(runner, *args[:-1], "pepper", "-o", str(other))
    assert (other / "answer-key.json").read_bytes() != (out / "answer-key.json").read_bytes()


def test_generate_per_student_markdown(runner, roster, tmp_path):
    out = tmp_path / "md"
    result = invoke(runner, "generate", "-n", "1", "--format", "md", "--students", str(roster),
                    "--salt", "x", "-o", str(out))
    assert result.exit_code == 0
    sheet = (out / "z1234567.md").read_text()
    assert "Answer key" not in sheet and "**Answer:**" not in sheet
    key = (out / "answer-key.md").read_text()
    assert "z1234567" in key and "z7654321" in key


@pytest.mark.parametrize("args, message", [
    (["-f", "no-such-family"], "unknown question family 'no-such-family'"),
    (["-n", "0"], "-n must be at least 1"),
    (["--salt", "x"], "--salt only applies with --students"),
])
def test_generate_rejects_bad_input_clearly(runner, args, message):
    result = runner.invoke(questions, ["generate", *args])
    assert result.exit_code == 1
    assert message in result.output


def test_generate_rejects_an_unknown_format(runner):
    result = runner.invoke(questions, ["generate", "--format", "pdf"])
    assert result.exit_code == 2
    assert "pdf" in result.output


def test_generate_rejects_an_unreadable_roster(runner, tmp_path):
    result = runner.invoke(questions, ["generate", "--students", str(tmp_path / "missing.csv"), "--salt", "x",
                                       "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert "cannot read roster" in result.output


def test_generate_roster_needs_salt_and_output(runner, roster, tmp_path):
    no_salt = runner.invoke(questions, ["generate", "--students", str(roster), "-o", str(tmp_path / "o")])
    assert no_salt.exit_code == 1 and "--salt" in no_salt.output
    no_out = runner.invoke(questions, ["generate", "--students", str(roster), "--salt", "x"])
    assert no_out.exit_code == 1 and "-o DIRECTORY" in no_out.output


@pytest.mark.parametrize("content, message", [
    ("name\nAda\n", "expected a header"),
    ("student_id\n", "no students"),
    ("student_id\na1\na1\n", "appears twice"),
    ("student_id,name\n,Ada\n", "empty"),
])
def test_read_roster_rejects_bad_rosters(tmp_path, content, message):
    path = tmp_path / "r.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(RosterError, match=message):
        read_roster(path)


def test_read_roster_accepts_other_id_columns(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("\ufeffEmail,Name\nada@example.org,Ada\n", encoding="utf-8")
    assert read_roster(path) == ["ada@example.org"]


# --- exporters --------------------------------------------------------------------------

def test_exporter_registry_has_json_and_md():
    assert {"json", "md"} <= set(exporters())
    with pytest.raises(QuestionBankError, match="available"):
        get_exporter("pdf")


@pytest.mark.parametrize("fmt", ["json", "md"])
def test_text_exporters_keep_every_stem_verbatim(fmt):
    """The HTML, notebook and LMS formats are checked format by format in tests/test_exports.py."""
    bundle = build_bundle(n=1, seed=3)
    files = get_exporter(fmt).transform(bundle)
    assert list(files)[0] == "questions" + get_exporter(fmt).suffix
    content = files["questions" + get_exporter(fmt).suffix]
    for variant in bundle["sheets"][0]["variants"]:
        first_line = variant["stem"].splitlines()[0]
        assert (first_line in content) or (json.dumps(first_line)[1:-1] in content), variant["id"]


def test_student_view_hides_answers_and_seed():
    variant = build_bundle(["tied-weights"], n=1)["sheets"][0]["variants"][0]
    view = student_view(variant)
    assert set(view["answer"]) == {"kind", "unit", "log_space"}
    assert all(set(c) == {"id", "text"} for c in view["choices"])
    assert "seed" not in view and "solution" not in view


# --- stress ------------------------------------------------------------------------------

def test_stress_command_prints_a_table_and_passes(runner):
    result = invoke(runner, "stress", "-f", "causal-mask", "-f", "dlogits-entry", "-n", "40")
    assert result.exit_code == 0, result.output
    assert "causal-mask" in result.output and "dlogits-entry" in result.output
    assert "all ok" in result.output


def test_stress_command_exits_non_zero_on_a_failure(runner, monkeypatch):
    from question_bank import get_family
    monkeypatch.setattr(type(get_family("causal-mask")), "check", lambda self, variant: ["wrong answer"])
    result = runner.invoke(questions, ["stress", "-f", "causal-mask", "-n", "5"])
    assert result.exit_code == 1
    assert "FAIL" in result.output and "wrong answer" in result.output


def test_stress_command_rejects_bad_input(runner):
    assert "-n must be at least 1" in runner.invoke(questions, ["stress", "-n", "0"]).output
    assert "unknown question family" in runner.invoke(questions, ["stress", "-f", "nope"]).output

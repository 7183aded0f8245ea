"""Does `grader build` produce verified, deterministic assignments, and refuse bad config?

The end-to-end tests run otter (marked slow); they share one verified build.
"""
from __future__ import annotations

import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from autograder.build import build
from autograder.build.config import resolve_settings
from autograder.build.master import render_master
from autograder.build.otter_steps import otter_run, score_of
from autograder.build.source import solution_cell_source
from autograder.build.spec import available_assignments
from autograder.cli import main
from autograder.runtime.errors import BuildError, ConfigError

ASSIGNMENTS = ["lm-head", "perplexity-and-parameters"]


# ------------------------------------------------------------ fast unit tests

def test_both_assignments_are_built_in():
    assert available_assignments() == sorted(ASSIGNMENTS)


def test_solution_cells_come_from_the_reference_with_markers():
    import inspect

    import solutions.head_and_loss as ref
    cell = solution_cell_source("solutions.head_and_loss", "softmax")
    assert cell.startswith("def softmax(")
    assert '"""Numerically stable softmax' in cell            # the docstring stays for students
    assert cell.index("# BEGIN SOLUTION") > cell.index('"""', 20)
    assert cell.rstrip().endswith("# END SOLUTION")
    body = [line for line in inspect.getsource(ref.softmax).splitlines() if "np.exp(shifted)" in line]
    assert body and body[0] in cell


def test_every_student_api_function_is_a_question():
    functions = set()
    for settings in resolve_settings(None, None):
        for q in settings.questions:
            functions.update(q.functions)
    assert functions == {
        "next_token_batch", "lm_head", "softmax", "cross_entropy_loss", "lm_head_backward",
        "numerical_gradient", "max_rel_err", "sequence_log_prob", "perplexity",
        "perplexity_from_loss", "masked_cross_entropy", "tied_lm_head", "greedy_next_token",
        "causal_mask", "gpt_param_count"}


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "course.yaml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("text, fragments", [
    ("course_titel: x\n", ["unknown key 'course_titel'", "course_title", "due_date"]),
    ("course_title: [1, 2]\n", ["course_title should be text"]),
    ("assignments:\n  lm-haed: {}\n", ["unknown assignment 'lm-haed'", "lm-head", "perplexity-and-parameters"]),
    ("assignments:\n  lm-head:\n    pionts: {q1: 2}\n", ["unknown key 'pionts'", "points"]),
    ("assignments:\n  lm-head:\n    points: {q9: 2}\n", ["unknown question 'q9'", "q1"]),
    ("assignments:\n  lm-head:\n    points: {q1: -2}\n", ["points.q1 should be a positive number"]),
    ("assignments:\n  lm-head:\n    sizes: {Q: 2}\n", ["unknown size 'Q'", "B, T, C"]),
    ("assignments:\n  lm-head:\n    sizes: {B: two}\n", ["sizes.B should be a whole number"]),
    ("assignments:\n  lm-head:\n    hidden_seed: 15\n", ["hidden_seed is no longer used", "secret"]),
    ("assignments:\n  lm-head:\n    questions: {q4: false}\n", ["q4: this question is required", "q6"]),
    ("- just\n- a list\n", ["should be a mapping"]),
    ("key: [unclosed\n", ["not valid YAML"]),
])
def test_config_errors_name_the_problem_and_the_choices(tmp_path, text, fragments):
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        resolve_settings(None, path)
    for fragment in fragments:
        assert fragment in str(info.value)
    assert str(path) in str(info.value)


def test_missing_config_file_and_unknown_assignment(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        resolve_settings(None, tmp_path / "nope.yaml")
    with pytest.raises(ConfigError, match="valid assignments: lm-head, perplexity-and-parameters"):
        resolve_settings(["lm-heads"], None)


def test_cli_reports_config_errors_and_writes_nothing(tmp_path):
    out = tmp_path / "dist"
    result = CliRunner().invoke(main, ["build", "-o", str(out), "--config",
                                       str(_write(tmp_path, "titel: x\n"))])
    assert result.exit_code == 1
    assert "unknown key 'titel'" in result.output
    assert not out.exists()


def test_config_sets_title_points_sizes_seeds_questions_and_due_date(tmp_path):
    path = _write(tmp_path, """
course_title: "Deep Learning 501"
due_date: "Friday 5 pm"
assignments:
  lm-head:
    points: {q4: 8}
    sizes: {B: 2, T: 5}
    public_seed: 7
    questions: {q6: false}
""")
    settings = resolve_settings(["lm-head"], path)[0]
    assert [q.name for q in settings.questions] == ["q1", "q2", "q3", "q4", "q5"]
    assert settings.public_seed == 7
    notebook, items = render_master(settings)
    text = "\n".join(c.source for c in notebook.cells)
    assert "Deep Learning 501" in text and "Friday 5 pm" in text
    assert "Question 4: Cross-entropy loss and dlogits (8 points)" in text
    assert "B, T, C = 2, 5, 16" in text and "default_rng(7)" in text
    assert "numerical_gradient" not in text
    assert sum(i.points for i in items if i.question == "q4") == pytest.approx(8)


def test_question_points_are_split_exactly_over_hidden_items():
    """Do the tests' shares, in hundredths, add up to each question's points exactly (in decimal)?"""
    from decimal import Decimal
    for settings in resolve_settings(None, None):
        _, items = render_master(settings)
        for q in settings.questions:
            shares = [Decimal(repr(i.points)) for i in items if i.question == q.name]
            assert all(s == s.quantize(Decimal("0.01")) for s in shares)
            assert sum(shares) == Decimal(repr(q.points))


@pytest.mark.parametrize("total, weights", [(5, [2, 2, 2, 2, 1, 1, 1, 1, 2, 2, 2]), (3, [1] * 7), (2, [1, 1, 1]),
                                            (20, [1]), (4.5, [3, 1, 1])])
def test_split_points_uses_largest_remainders(total, weights):
    from decimal import Decimal
    from autograder.build.hidden_items import split_points
    shares = split_points(total, weights)
    assert sum(Decimal(repr(s)) for s in shares) == Decimal(repr(float(total)))
    exact = [total * w / sum(weights) for w in weights]
    assert all(abs(s - e) < 0.01 for s, e in zip(shares, exact))


def test_master_notebook_structure():
    settings = resolve_settings(["perplexity-and-parameters"], None)[0]
    notebook, items = render_master(settings)
    raw = [c.source.splitlines()[0] for c in notebook.cells if c.cell_type == "raw"]
    assert raw[0] == "# ASSIGNMENT CONFIG"
    assert raw.count("# BEGIN QUESTION") == raw.count("# END QUESTION") == len(settings.questions)
    assert raw.count("# BEGIN TESTS") == raw.count("# END TESTS") == len(settings.questions)
    hidden_cells = [c for c in notebook.cells if c.cell_type == "code" and "run_hidden_item" in c.source]
    assert len(hidden_cells) == len(items) > len(settings.questions)


# ------------------------------------------------------------ end to end (otter)

@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    results = build(None, out, None, verify=True)
    return out, {r.name: r for r in results}


@pytest.mark.slow
def test_build_writes_fixed_names_and_verifies_itself(built):
    out, results = built
    for name in ASSIGNMENTS:
        for path in (f"{name}/student/{name}.ipynb", f"{name}/solution/{name}.ipynb",
                     f"{name}/autograder/autograder.zip"):
            assert (out / path).is_file(), path
        score, possible = results[name].solution_score
        assert possible > 0 and score == possible
        assert results[name].student_score == (0.0, possible)


@pytest.mark.slow
def test_zip_carries_exactly_the_runtime_and_the_support_folder(built):
    """Is every member of the zip one that the build meant to ship, and nothing of the tooling?"""
    from autograder.build.contents import runtime_files, support_files
    from autograder.build.spec import load_spec
    from autograder.build.wheel import runtime_wheel_name
    out, _ = built
    spec = load_spec("lm-head")
    with zipfile.ZipFile(out / "lm-head/autograder/autograder.zip") as zf:
        names = set(zf.namelist())
        config = zf.read("files/lmhead_support/hidden_config.json").decode()
        wheel = zipfile.ZipFile(io.BytesIO(zf.read(f"files/lmhead_support/wheels/{runtime_wheel_name()}")))
    questions = [q.name for q in spec.questions]
    support = {f"files/lmhead_support/{n}" for n, _ in support_files(spec.folder, questions, config)}
    otter_own = {"run_autograder", "run_otter.py", "setup.sh", "environment.yml", "otter_config.json",
                 *(f"tests/{q}.py" for q in questions)}
    assert names == otter_own | support | {f"files/lmhead_support/wheels/{runtime_wheel_name()}"}
    # hidden tests only in their folder; references and catalogue only in the support folder
    assert [n for n in names if "test_q" in n and not n.startswith("files/lmhead_support/hidden/")] == []
    packaged = {n for n in wheel.namelist() if ".dist-info/" not in n}
    assert packaged == {n for n, _ in runtime_files()}
    assert all(n == "autograder/__init__.py" or n.startswith("autograder/runtime/") for n in packaged)
    assert not any(part in n for n in packaged for part in ("solutions", "mistakes.py", "hidden/", "test_q"))


@pytest.mark.slow
def test_the_zip_and_the_solution_are_readable_by_their_owner_alone(built):
    """The zip (hidden tests, references, secret) and the solution notebook (references) are the
    owner's alone, wherever the output lies: a stranger uid reading a copy of the output, modes kept,
    in a folder every user may enter, reads the student's files and nothing else."""
    import os
    import tempfile

    from autograder.runtime.sandbox import reach
    out, _ = built
    for name in ASSIGNMENTS:
        for part in ("autograder", "solution"):
            for path in [out / name / part, *(out / name / part).rglob("*")]:
                assert path.stat().st_mode & 0o077 == 0, f"{path} is open to others: {oct(path.stat().st_mode)}"
    if os.geteuid() != 0:
        pytest.skip("the stranger-uid probe needs root")
    shared = Path(tempfile.mkdtemp(prefix="lmhead-open-dist-"))
    try:
        shared.chmod(0o755)
        shutil.copytree(out, shared / "dist", symlinks=True)
        (shared / "dist").chmod(0o755)         # the build's own folder: the test's tmp is private
        readable = reach.readable_by_stranger([shared])
        assert readable, "the student's notebooks should be readable: the probe saw nothing"
        assert [p for p in readable if "/student/" not in p] == []
    finally:
        shutil.rmtree(shared)


def _zip_contents(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as zf:
        return {n: hashlib.sha256(zf.read(n)).hexdigest() for n in zf.namelist()}


@pytest.mark.slow
def test_two_builds_are_identical(built, tmp_path):
    out, _ = built
    again = build(None, tmp_path, None, verify=False)
    for r in again:
        for part in (f"student/{r.name}.ipynb", f"solution/{r.name}.ipynb"):
            assert (tmp_path / r.name / part).read_bytes() == (out / r.name / part).read_bytes(), part
        again_zip = _zip_contents(tmp_path / r.name / "autograder/autograder.zip")
        first_zip = _zip_contents(out / r.name / "autograder/autograder.zip")
        config = "files/lmhead_support/hidden_config.json"
        # Only the secret differs: each build draws its own.
        assert {k: v for k, v in again_zip.items() if k != config} == \
            {k: v for k, v in first_zip.items() if k != config}
        secrets_ = [json.loads(zipfile.ZipFile(p).read(config))
                    for p in (tmp_path / r.name / "autograder/autograder.zip", out / r.name / "autograder/autograder.zip")]
        assert secrets_[0].pop("secret") != secrets_[1].pop("secret")
        assert secrets_[0] == secrets_[1]


def _solved_copy(student: Path, solution: Path) -> nbformat.NotebookNode:
    """The student notebook with every stub replaced by the solution's code."""
    nb_student = nbformat.read(student, as_version=4)
    nb_solution = nbformat.read(solution, as_version=4)
    solved = {c.source.split("(")[0]: c.source for c in nb_solution.cells
              if c.cell_type == "code" and c.source.startswith("def ")}
    for cell in nb_student.cells:
        if cell.cell_type == "code" and cell.source.startswith("def "):
            cell.source = solved[cell.source.split("(")[0]]
    return nb_student


def _execute(nb: nbformat.NotebookNode, folder: Path) -> nbformat.NotebookNode:
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}).execute()
    return nb


@pytest.mark.slow
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_student_notebook_runs_top_to_bottom_and_exports_without_latex(built, tmp_path, name):
    out, _ = built
    shutil.copy(out / name / "student" / f"{name}.ipynb", tmp_path / f"{name}.ipynb")
    nb = _execute(nbformat.read(tmp_path / f"{name}.ipynb", as_version=4), tmp_path)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert errors == []
    assert list(tmp_path.glob(f"{name}*.zip")), "the export cell should write a submission zip"


@pytest.mark.slow
@pytest.mark.parametrize("name", ASSIGNMENTS)
def test_solved_copy_exported_zip_scores_full_marks(built, tmp_path, name):
    out, _ = built
    solved = _solved_copy(out / name / "student" / f"{name}.ipynb", out / name / "solution" / f"{name}.ipynb")
    nbformat.write(solved, tmp_path / f"{name}.ipynb")
    _execute(nbformat.read(tmp_path / f"{name}.ipynb", as_version=4), tmp_path)
    exports = list(tmp_path.glob(f"{name}*.zip"))
    assert len(exports) == 1
    score, possible = score_of(otter_run(out / name / "autograder/autograder.zip", exports[0]))
    assert possible > 0 and score == possible


@pytest.mark.slow
def test_a_build_that_fails_verification_leaves_the_output_untouched(tmp_path, monkeypatch):
    out = tmp_path / "dist"
    (out / "lm-head").mkdir(parents=True)
    (out / "lm-head" / "keep.txt").write_text("from an earlier build")
    import autograder.build.pipeline as pipeline
    monkeypatch.setattr(pipeline, "otter_run", lambda zip_path, nb: {"tests": [
        {"name": "q1", "score": 0, "max_score": 2, "output": "q1 - 1 failed"}]})
    with pytest.raises(BuildError, match="solution notebook scored 0 of 2"):
        build(["lm-head"], out, None, verify=True)
    assert sorted(p.name for p in out.iterdir()) == ["lm-head"]
    assert [p.name for p in (out / "lm-head").iterdir()] == ["keep.txt"]


def test_every_source_folder_is_a_regular_package():
    """``pip install .`` installs only folders with an ``__init__.py`` (setuptools' find_packages);
    an editable install would hide a missing one, so it is checked here."""
    root = Path(__file__).resolve().parents[1]
    missing = [str(folder.relative_to(root)) for top in ("autograder", "question_bank", "solutions")
               for folder in [root / top, *(root / top).rglob("*")]
               if folder.is_dir() and folder.name != "__pycache__" and any(folder.glob("*.py"))
               and not (folder / "__init__.py").is_file()]
    assert missing == [], f"add an __init__.py to {missing}"


def test_a_long_module_says_why_it_is_one_module():
    """Modules over 400 lines state at their top why they are not split."""
    root = Path(__file__).resolve().parents[1]
    long = [p for top in ("autograder", "question_bank") for p in (root / top).rglob("*.py")
            if len(p.read_text(encoding="utf-8").splitlines()) > 400]
    silent = [str(p.relative_to(root)) for p in long
              if "Why one module" not in p.read_text(encoding="utf-8").split('"""')[1]]
    assert silent == [], f"over 400 lines without a reason at the top: {silent}"


@pytest.mark.slow
def test_a_real_broken_solution_and_a_scoring_blank_notebook_fail_the_build(tmp_path, monkeypatch):
    """Not simulated: the solution notebook's softmax is wrong, and otter grades the built zip."""
    import autograder.build.master as master
    import autograder.build.pipeline as pipeline
    right = master.solution_cell_source

    def broken(module, function):
        source = right(module, function)
        # A softmax that forgets to normalise: wrong everywhere.
        return source.replace("return e / np.sum(e, axis=axis, keepdims=True)", "return e") \
            if function == "softmax" else source
    monkeypatch.setattr(master, "solution_cell_source", broken)
    with pytest.raises(BuildError, match="solution notebook scored"):
        build(["lm-head"], tmp_path / "a", None, verify=True)
    assert not (tmp_path / "a" / "lm-head").exists()

    monkeypatch.setattr(master, "solution_cell_source", right)
    from autograder.runtime.grading.outcome import GradeOutcome, ItemOutcome
    monkeypatch.setattr(pipeline, "_grade_blank", lambda *a: GradeOutcome(
        "blank", "lm-head", "graded", "bwrap", (ItemOutcome("q1", "t", 2.0, True),), 20.0))
    with pytest.raises(BuildError, match="untouched student notebook scored 2"):
        build(["lm-head"], tmp_path / "b", None, verify=True)


def _guide_config() -> str:
    """The course config example of the instructor guide, verbatim."""
    import re
    guide = (Path(__file__).resolve().parent.parent / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    match = re.search(r"## The course config.*?```yaml\n(.*?)```", guide, re.S)
    assert match, "the instructor guide has no course config example"
    return match.group(1)


@pytest.mark.slow
def test_the_instructor_guides_example_config_builds_verified(tmp_path):
    """Does the guide's own example (an optional question switched off) build and verify, and does
    the same hold for the other assignment's optional question? Once the catalogued mistakes of a
    switched-off question's function stopped every such build at its verification."""
    import yaml
    raw = yaml.safe_load(_guide_config())
    assert raw["assignments"]["lm-head"]["questions"] == {"q6": False}
    raw["assignments"]["perplexity-and-parameters"] = {"questions": {"q4": False}}
    path = tmp_path / "course.yaml"
    path.write_text(_guide_config() + "  perplexity-and-parameters:\n    questions: {q4: false}\n", encoding="utf-8")
    assert yaml.safe_load(path.read_text()) == raw
    results = build(["lm-head", "perplexity-and-parameters"], tmp_path / "dist", path)
    configs = {r.autograder_zip.parent.parent.name:
               json.loads(zipfile.ZipFile(r.autograder_zip).read("files/lmhead_support/hidden_config.json"))
               for r in results}
    assert configs["lm-head"]["questions"] == ["q1", "q2", "q3", "q4", "q5"]
    assert configs["lm-head"]["left_out_functions"] == ["max_rel_err", "numerical_gradient"]
    assert "q4" not in configs["perplexity-and-parameters"]["questions"]
    assert configs["perplexity-and-parameters"]["left_out_functions"]


def _guide_zip_members() -> list[tuple[str, str]]:
    """The instructor guide's table of what the autograder zip holds: (pattern, how it matches) per
    backticked name of its first column. ``name ...`` stands for every file numbered like it, a
    name ending in ``/`` for a folder, one with ``*`` for a glob."""
    import re
    guide = (Path(__file__).resolve().parent.parent / "docs" / "instructor-guide.md").read_text(encoding="utf-8")
    section = re.search(r"## What the autograder zip holds\n(.*?)\n## ", guide, re.S)
    assert section, "the instructor guide has no section on what the autograder zip holds"
    rows = [line for line in section.group(1).splitlines() if line.startswith("| `")]
    assert rows, "the section has no table of members"
    patterns = []
    for row in rows:
        first = row.split("|")[1]
        for name, more in re.findall(r"`([^`]+)`( \.\.\.)?", first):
            if more:
                patterns.append((re.sub(r"\d+(?=\.py$)", "*", name), "glob"))
            elif name.endswith("/"):
                patterns.append((name, "folder"))
            else:
                patterns.append((name, "glob" if "*" in name else "exact"))
    return patterns


def test_the_instructor_guide_lists_exactly_what_the_zip_holds(tmp_path):
    """Does every member the guide names exist in a built zip, and is every member of it named? The
    guide once listed a requirements.txt and a runtime folder that no zip had."""
    from fnmatch import fnmatchcase
    patterns = _guide_zip_members()

    def matches(member: str, pattern: str, how: str) -> bool:
        return member.startswith(pattern) if how == "folder" else fnmatchcase(member, pattern)

    for result in build(None, tmp_path / "dist", None, verify=False):
        with zipfile.ZipFile(result.autograder_zip) as zf:
            members = [n for n in zf.namelist() if not n.endswith("/")]
        unnamed = [m for m in members if not any(matches(m, p, how) for p, how in patterns)]
        absent = [p for p, how in patterns if not any(matches(m, p, how) for m in members)]
        assert unnamed == [] and absent == [], (result.name, "not in the guide:", unnamed, "not in the zip:", absent)

"""The autograder zip's environment pins what the build verified with, and grades alike there.

Left unpinned, Gradescope's environment resolved a newer NumPy than the build's and named an
extra mistake in nine q4 tests that local grading did not. The zip now pins NumPy, pytest and
nbformat to the versions installed where the build ran, and the build's Python; a fresh
environment installed from the zip's own requirements (as Gradescope's is) grades a mixed class
with the same verdict and message in every test as ``grader grade``.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import version
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.build import build
from autograder.runtime.grading.bulk import grade_batch
from tests.cohort import with_mistake, with_stubs
from tests.grading_paths import GradescopeLike, machine_tmp
from tests.suites import MISTAKES

pytestmark = pytest.mark.slow

#: What the verdicts depend on: each pinned to the version installed here, where the build ran.
VERDICT_PACKAGES = ("numpy", "pytest", "nbformat")


def _environment(zip_path: Path) -> tuple[list[str], list[str]]:
    """The conda and pip dependencies of the zip's environment.yml."""
    with zipfile.ZipFile(zip_path) as zf:
        env = yaml.safe_load(zf.read("environment.yml"))
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    return conda, pip


def _class(solution: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """A small mixed class: correct, one mistake each in q4, q3 and q1, and a q5 left as a stub."""
    return {
        "alice": solution,
        "bob": with_mistake(solution, MISTAKES["loss-summed"]),
        "carl": with_mistake(solution, MISTAKES["softmax-global-max"]),
        "dana": with_mistake(with_stubs(solution, ["lm_head_backward"]), MISTAKES["targets-not-shifted"]),
        "erik": with_mistake(solution, MISTAKES["gradient-missing-one-over-n"]),
    }


def test_the_zip_pins_the_versions_the_build_verified_with_and_grades_alike_there(tmp_path_factory):
    lab = tmp_path_factory.mktemp("pinned")
    lab.chmod(0o700)
    (result,) = build(["lm-head"], lab / "dist", None, verify=False)
    conda, pip = _environment(result.autograder_zip)
    assert f"python={sys.version_info.major}.{sys.version_info.minor}" in conda
    for name in VERDICT_PACKAGES:
        assert f"{name}=={version(name)}" in pip, (name, pip)

    gradescope = GradescopeLike(result.autograder_zip, lab / "dist", lab / "gradescope", lab,
                                machine_tmp(tmp_path_factory.mktemp("machine-tmp")))
    python = gradescope.venv / "bin" / "python"
    for name in VERDICT_PACKAGES:
        installed = subprocess.run([str(python), "-c", f"from importlib.metadata import version; "
                                    f"print(version({name!r}))"], capture_output=True, text=True,
                                   env=gradescope.env, check=True).stdout.strip()
        assert installed == version(name), (name, installed)

    folder = lab / "class"
    folder.mkdir()
    students = _class(nbformat.read(result.solution, as_version=4))
    for name, nb in students.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    out = lab / "graded"
    grade_batch([folder], result.autograder_zip, out, workers=1, timeout=30)

    for name in students:
        run = lab / f"run-{name}"
        run.mkdir()
        shutil.copy(folder / f"{name}.ipynb", run / f"{name}.ipynb")
        (run / "out").mkdir()
        proc = subprocess.run(gradescope.command(run, f"{name}.ipynb"), cwd=run, env=gradescope.env,
                              capture_output=True, text=True, timeout=600)
        there = json.loads((run / "out" / "results.json").read_text())
        here = json.loads((out / "students" / name / "results.json").read_text())
        assert proc.returncode == 0, proc.stderr[-2000:]
        verdicts = lambda results: {t["name"]: (t["status"], t["score"], t["output"]) for t in results["tests"]
                                    if not t["name"].startswith("Public")}
        here_v, there_v = verdicts(here), verdicts(there)
        shared = sorted(here_v.keys() & there_v.keys())
        assert len(shared) == len(here_v), (name, sorted(here_v.keys() - there_v.keys()))
        for test in shared:
            assert here_v[test] == there_v[test], (name, test, here_v[test], there_v[test])
        assert here["score"] == there["score"], name
    # The class is mixed: the verdicts compared include failures that name mistakes.
    bob = json.loads((out / "students" / "bob" / "results.json").read_text())
    assert any("loss-summed" in t["extra_data"]["mistakes"] for t in bob["tests"])

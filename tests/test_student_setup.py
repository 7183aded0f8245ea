"""A student's setup, from the requirements file the build writes, and nothing else.

A fresh virtual environment gets only ``student/requirements.txt``; in it a filled notebook
runs every cell headless (the public checks and the export cell included), the exported zip
grades to full marks, and the untouched notebook runs without an error cell.
"""
from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from autograder.runtime.grading.bulk import grade_batch

pytestmark = pytest.mark.slow

RUN = r'''
import sys, nbformat
from nbclient import NotebookClient
path = sys.argv[1]
nb = nbformat.read(path, as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=True,
               resources={"metadata": {"path": sys.argv[2]}}).execute()
nbformat.write(nb, path)
'''


def _errors(nb: nbformat.NotebookNode) -> list[str]:
    return [f"{o.get('ename')}: {o.get('evalue')}" for c in nb.cells if c.cell_type == "code"
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


def test_a_fresh_environment_from_the_requirements_runs_exports_and_grades(tmp_path):
    (result,) = build(["lm-head"], tmp_path / "dist", None, verify=False)
    requirements = result.student.parent / "requirements.txt"
    assert "otter-grader==" in requirements.read_text() and "numpy" in requirements.read_text()

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "JUPYTER_PATH")}
    clean["PATH"] = f"{env_dir / 'bin'}:{clean.get('PATH', '')}"
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "-r", str(requirements)],
                             capture_output=True, text=True, env=clean, timeout=1500)
    assert install.returncode == 0, install.stderr[-3000:]
    # Only what the file installs: none of the grader's own packages.
    probe = subprocess.run([str(python), "-c", "import importlib.util as u; print(u.find_spec('autograder'), "
                            "u.find_spec('solutions'))"], capture_output=True, text=True, env=clean, cwd=tmp_path)
    assert probe.stdout.strip() == "None None", probe.stdout + probe.stderr

    runs = {}
    for kind, source in (("filled", result.solution), ("untouched", result.student)):
        work = tmp_path / kind
        work.mkdir()
        notebook = work / "lm-head.ipynb"
        notebook.write_bytes(source.read_bytes())
        run = subprocess.run([str(python), "-c", RUN, str(notebook), str(work)], capture_output=True, text=True,
                             env=clean, cwd=work, timeout=900)
        assert run.returncode == 0, run.stderr[-3000:]
        runs[kind] = (work, nbformat.read(notebook, as_version=4))

    work, filled = runs["filled"]
    assert _errors(filled) == [], _errors(filled)
    zips = sorted(work.glob("lm-head*.zip"))
    assert len(zips) == 1, f"the export cell wrote {zips}"
    graded = grade_batch(zips, result.autograder_zip, tmp_path / "out", timeout=60)
    (row,) = graded.rows
    assert (row["status"], row["total"], row["possible"]) == ("graded", "20", "20"), row

    _, untouched = runs["untouched"]
    assert _errors(untouched) == [], _errors(untouched)

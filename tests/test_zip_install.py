"""Can the grading runtime be installed from the autograder zip alone, and grade there?

Gradescope builds its image from the zip: this installs the zip's Python
requirements (those listed in its environment.yml, our runtime wheel among
them, taken from inside the zip) into a fresh virtual environment that has
never seen the project, and grades with that environment's `otter run`.
"""
from __future__ import annotations

import json
import os
import subprocess
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

from autograder.build import build

pytestmark = pytest.mark.slow


def _pip_requirements(source: Path) -> list[str]:
    env = yaml.safe_load((source / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    # Gradescope unpacks the zip at /autograder/source; here it is `source`.
    return [r.replace("/autograder/source", str(source)) for r in pip]


def test_runtime_installs_from_the_zip_and_grades_a_submission(tmp_path):
    (result,) = build(["lm-head"], tmp_path / "dist", None, verify=False)
    source = tmp_path / "source"
    with zipfile.ZipFile(result.autograder_zip) as zf:
        zf.extractall(source)
    requirements = _pip_requirements(source)
    wheel = [r for r in requirements if r.endswith(".whl")]
    assert wheel and Path(wheel[0]).is_file() and str(source) in wheel[0]   # shipped inside the zip

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    clean_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    install = subprocess.run([str(python), "-m", "pip", "install", "--quiet", *requirements],
                             capture_output=True, text=True, env=clean_env, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    # The environment has the runtime from the wheel, not from this checkout, and no reference:
    # the references travel only in the zip's support folder, out of student code's reach.
    probe = ("import importlib.util, autograder; print(autograder.__file__); "
             "print([m for m in ('solutions', 'autograder.build', 'autograder.report', 'question_bank') "
             "if importlib.util.find_spec(m)])")
    where = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=clean_env, cwd=tmp_path)
    assert str(env_dir) in where.stdout, where.stdout + where.stderr
    assert where.stdout.splitlines()[1] == "[]", where.stdout

    out = tmp_path / "out"
    out.mkdir()
    run = subprocess.run([str(env_dir / "bin" / "otter"), "run", "-a", str(result.autograder_zip),
                          "-o", str(out), str(result.solution)],
                         capture_output=True, text=True, env=clean_env, cwd=tmp_path, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["score"] == 20
    assert results["extra_data"]["isolation"] not in ("", None)

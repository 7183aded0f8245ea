"""The user level with the grader installed in a virtual environment inside a root-only folder.

This is the layout where the white-box red team scored 20/20 with a blank
notebook: NumPy and the references (the ``solutions`` package) installed
side by side in one site-packages, the whole tree closed to other users,
so the path probe cleared the level. The worker kept a descriptor of
NumPy's folder, opened as root to import from it after dropping root, and
``..`` from it led to the references. The descriptor attacks of the
corpus must score what the untouched notebook scores.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import venv
from pathlib import Path

import nbformat
import numpy
import pytest

from autograder.build import build
from autograder.runtime.sandbox import isolation as iso
from tests.adversarial import BY_NAME, AttackContext, marker, write_zip, zip_members
from tests.grading_paths import covered_folders, in_private_mounts, machine_tmp

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not iso.running_as_root(), reason="the user level needs root")]

REPO = Path(__file__).resolve().parents[1]


def test_descriptors_of_a_closed_installation_lead_nowhere(tmp_path):
    closed = tmp_path / "closed"
    closed.mkdir(mode=0o700)
    (result,) = build(["lm-head"], closed / "dist", None, verify=False)
    env_dir = closed / "venv"
    venv.EnvBuilder(system_site_packages=True).create(env_dir)
    site = env_dir / "lib" / f"python{os.sys.version_info[0]}.{os.sys.version_info[1]}" / "site-packages"
    numpy_dir = Path(numpy.__file__).resolve().parent
    for path in (numpy_dir, numpy_dir.parent / "numpy.libs"):
        if path.is_dir():
            shutil.copytree(path, site / path.name, symlinks=True)
    for package in ("autograder", "solutions", "question_bank"):
        shutil.copytree(REPO / package, site / package, ignore=shutil.ignore_patterns("__pycache__"))
    stub = nbformat.read(result.student, as_version=4)
    subs = closed / "subs"
    subs.mkdir()
    write_zip(zip_members(stub), subs / "untouched.zip")
    for name in ("descriptor_walk", "openat_walk"):
        members, _ = BY_NAME[name].build(stub, AttackContext(marker(name), 9, ()))
        write_zip(members, subs / f"{name}.zip")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    out = closed / "out"
    # Checkouts of the grader elsewhere on this machine (this one, an editable install's) are
    # covered, as on a machine that has only this installation: the probe would rightly refuse.
    command = [str(env_dir / "bin" / "python"), "-m", "autograder.cli", "grade", str(subs), "-a",
               str(result.autograder_zip), "-o", str(out), "--isolation", "user", "--timeout", "10"]
    scratch = tmp_path / "machine-tmp"
    scratch.mkdir()
    run = subprocess.run(in_private_mounts(command, closed, cover=covered_folders(), tmp=machine_tmp(scratch),
                                           keep=[closed]),
                         cwd=closed, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert "site-packages/autograder" in subprocess.run(
        [str(env_dir / "bin" / "python"), "-c", "import autograder; print(autograder.__file__)"],
        cwd=closed, env=env, capture_output=True, text=True).stdout, "the venv's own copy must be graded"
    with open(out / "gradebook.csv", newline="") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    for name in ("descriptor_walk", "openat_walk"):
        assert book[name]["status"] == "graded"
        assert float(book[name]["total"]) == float(book["untouched"]["total"]), (name, book[name])

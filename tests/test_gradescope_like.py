"""Grading as on Gradescope: root, no bubblewrap, only the zip's runtime installed.

A fresh environment gets the zip's requirements alone (the runtime wheel, no references);
``otter run`` grades with bubblewrap hidden from PATH, so the plugin must fall back to the
fresh-uid level, which it accepts only after making otter's folder root-only and probing
that a sandbox user can read nothing it must not. A correct notebook still scores full
marks there; hostile notebooks that go looking for the references, the hidden tests and
the secret, or write outside their sandbox, score what the untouched notebook scores.
"""
from __future__ import annotations

import json
import os
import subprocess
import venv
import zipfile
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from tests.adversarial import BY_NAME, AttackContext, marker, write_zip, zip_members
from tests.test_zip_install import _pip_requirements

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
ATTACKS = ["reference_from_packages", "hidden_tests_on_disk", "files_outside", "loopback"]
#: Where a submission at the fresh-uid level could leave files: every world-writable place.
SCRATCH = [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), Path("/run/lock")]


def _without_bwrap(folder: Path) -> str:
    """A PATH with every program of the usual PATH but bubblewrap (links in ``folder``)."""
    folder.mkdir()
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for entry in os.listdir(directory):
            link = folder / entry
            if entry != "bwrap" and not link.exists():
                link.symlink_to(os.path.join(directory, entry))
    return str(folder)


def _secrets(zip_path: Path) -> list[str]:
    with zipfile.ZipFile(zip_path) as zf:
        config = json.loads(zf.read("files/lmhead_support/hidden_config.json"))
        hidden = [line.strip() for name in zf.namelist() if "/hidden/test_" in name
                  for line in zf.read(name).decode().splitlines() if len(line.strip()) > 40]
    return [config["secret"], *hidden]


def test_without_bubblewrap_otter_run_isolates_at_the_fresh_uid_level(tmp_path):
    (result,) = build(["lm-head"], tmp_path / "dist", None, verify=False)
    source = tmp_path / "source"
    with zipfile.ZipFile(result.autograder_zip) as zf:
        zf.extractall(source)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    install = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "--quiet",
                              *_pip_requirements(source)], capture_output=True, text=True, env=clean, timeout=900)
    assert install.returncode == 0, install.stderr[-3000:]
    clean["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{_without_bwrap(tmp_path / 'bin')}"
    assert subprocess.run(["sh", "-c", "command -v bwrap"], env=clean, capture_output=True).returncode != 0

    def otter(submission: Path, name: str) -> dict:
        out = tmp_path / f"out-{name}"
        out.mkdir()
        run = subprocess.run([str(env_dir / "bin" / "otter"), "run", "-a", str(result.autograder_zip), "-o", str(out),
                              str(submission)], capture_output=True, text=True, env=clean, cwd=tmp_path, timeout=600)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        return json.loads((out / "results.json").read_text())

    mode = REPO.stat().st_mode
    REPO.chmod(0o700)        # the checkout holds the references; Gradescope's machine has none
    try:
        correct = otter(result.solution, "correct")
        assert correct["score"] == 20 and correct["extra_data"]["isolation"] == "user", correct["output"][-1500:]
        stub = nbformat.read(result.student, as_version=4)
        secrets = _secrets(result.autograder_zip)
        for name in ATTACKS:
            ctx = AttackContext(marker(name), 9, (str(REPO), str(tmp_path), "/autograder", "/work"))
            members, _ = BY_NAME[name].build(stub, ctx)
            submission = tmp_path / f"{name}.zip"
            write_zip(members, submission)
            results = otter(submission, name)
            text = json.dumps(results)
            assert results["score"] == 0, (name, results["score"])
            assert results["extra_data"]["isolation"] == "user"
            assert not [s for s in secrets if s in text], f"{name} got hidden test text or the secret into results"
            left = [p for root in SCRATCH if root.is_dir() for p in root.iterdir() if ctx.marker in p.name]
            assert left == [], f"{name} left {left}"
    finally:
        REPO.chmod(mode)

"""The two otter commands the build relies on, run as subprocesses.

``otter assign`` turns the master notebook into the student and autograder
folders; ``otter run`` grades a notebook with the built zip exactly as an
instructor (or Gradescope) would, which is what the build's self-check needs.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.runtime.errors import BuildError

#: Generous bound on one otter subprocess; a healthy run takes a few seconds.
OTTER_TIMEOUT_S = 300


def _otter() -> list[str]:
    exe = shutil.which("otter", path=str(Path(sys.executable).parent)) or shutil.which("otter")
    if exe is None:
        raise BuildError("the `otter` command is not installed: pip install 'otter-grader[grading]==7.0.*'")
    return [exe]


def _env() -> dict[str, str]:
    """otter imports the grading plugin from this package: make sure it finds the same copy."""
    import autograder
    here = str(Path(autograder.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (here, env.get("PYTHONPATH", "")) if p)
    return env


def otter_assign(master: Path, dist: Path) -> None:
    """Run ``otter assign`` on ``master`` into ``dist`` (no PDFs; the build verifies itself)."""
    cmd = _otter() + ["assign", "--no-pdfs", "--no-run-tests", str(master), str(dist)]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=master.parent, timeout=OTTER_TIMEOUT_S,
                          env=_env())
    if proc.returncode != 0:
        raise BuildError(f"otter assign failed for {master.name}:\n{_tail(proc)}")


def otter_run(autograder_zip: Path, submission: Path) -> dict:
    """Grade ``submission`` with ``otter run`` and return its results.json as a dict."""
    with tempfile.TemporaryDirectory(prefix="lmhead-verify-") as out:
        cmd = _otter() + ["run", "-a", str(autograder_zip), "-o", out, str(submission)]
        # The build grades only its own solution and starter notebooks: trusted code, so a
        # machine without bubblewrap can still verify a build (TRUSTED_ENV in the otter plugin).
        env = {**_env(), "LMHEAD_TRUSTED_CODE": "1"}
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=OTTER_TIMEOUT_S, env=env)
        results = Path(out) / "results.json"
        if proc.returncode != 0 or not results.is_file():
            raise BuildError(f"otter run could not grade {submission.name}:\n{_tail(proc)}")
        return json.loads(results.read_text(encoding="utf-8"))


def score_of(results: dict) -> tuple[float, float]:
    """(score, possible) of an otter results.json, summed over the graded tests."""
    graded = [t for t in results.get("tests", []) if t.get("max_score") is not None]
    score = results.get("score", sum(float(t.get("score") or 0) for t in graded))
    # Points are split into decimals per test; sums carry float round-off.
    return round(float(score), 6), round(float(sum(float(t["max_score"]) for t in graded)), 6)


def _tail(proc: subprocess.CompletedProcess, lines: int = 25) -> str:
    text = (proc.stdout or "") + (proc.stderr or "")
    return "\n".join(text.strip().splitlines()[-lines:])

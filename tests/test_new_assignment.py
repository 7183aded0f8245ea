"""A third assignment, added by following docs/authoring-guide.md's steps and nothing else.

The repository is copied to a scratch folder; there a small assignment ("temperature",
one function) is added exactly as the guide says: a reference in ``solutions/``, a folder
under ``assignments/`` with its spec, templates, public checks, hidden module and mistakes.
No other file is touched. It must build with its self-check, and grade a correct
submission to full marks and a catalogued mistake with its name.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]

FILES = {
    "solutions/temperature.py": '''
        """Reference for the temperature assignment."""
        import numpy as np


        def scale_logits(logits: np.ndarray, temperature: float) -> np.ndarray:
            """Logits divided by ``temperature`` (> 0): same shape, float64."""
            return np.asarray(logits, dtype=np.float64) / float(temperature)
        ''',
    "assignments/temperature/assignment.yaml": '''
        name: temperature
        title: "Sampling temperature"
        solutions_module: solutions.temperature
        sizes: {B: 1, T: 2, C: 3}
        public_seed: 5
        intro: intro.md.j2
        questions:
          - name: q1
            title: "Scaling logits"
            functions: [scale_logits]
            points: 4
            contracts:
              inputs_unchanged: "Do not change `logits` in place."
        ''',
    "assignments/temperature/intro.md.j2": '''
        # {{ course_title }}: {{ assignment_title }}

        Dividing logits by a temperature above 1 flattens the distribution; below 1 sharpens it.
        ''',
    "assignments/temperature/cells/setup.py.j2": '''
        import numpy as np
        rng = np.random.default_rng({{ public_seed }})
        ''',
    "assignments/temperature/questions/q1.md.j2": '''
        ## Question 1: {{ question_title }} ({{ points }} points)

        Write `scale_logits(logits, temperature)`: the logits divided by the temperature.
        {{ contract.inputs_unchanged }}
        ''',
    "assignments/temperature/public/q1.py.j2": '''
        def test_q1_halves(scale_logits):
            import numpy as np
            assert np.allclose(scale_logits(np.array([2.0, 4.0]), 2.0), [1.0, 2.0]), "divide by the temperature"
        ''',
    "assignments/temperature/hidden/test_q1.py": '''
        import numpy as np
        import pytest

        import solutions as ref
        from autograder.runtime.compare import check_array
        from autograder.runtime.judge import call, expect


        @pytest.mark.contract("inputs_unchanged")
        @pytest.mark.points(1)
        @pytest.mark.parametrize("shape", [(3, 5), (2, 4, 7)])
        def test_matches_reference(student, rng, shape):
            args = (rng.standard_normal(shape) * 3, float(rng.uniform(0.2, 3.0)))
            out = call(student, "scale_logits", *args)
            expect(check_array("scaled", out, ref.scale_logits(*args)), function="scale_logits",
                   make_args=lambda: args, output=out)
        ''',
    "assignments/temperature/mistakes.py": '''
        """Known mistakes of the temperature assignment."""
        import numpy as np

        from autograder.runtime.catalogue import mistake


        @mistake(function="scale_logits", title="Multiplied by the temperature",
                 explanation="You multiplied the logits by the temperature; a temperature divides them.")
        def multiplied_by_temperature(logits, temperature):
            """logits * temperature."""
            return np.asarray(logits, dtype=np.float64) * float(temperature)
        ''',
}


def test_a_third_assignment_from_the_guide_builds_and_grades(tmp_path):
    repo = tmp_path / "repo"
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in tracked:
        if (REPO / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, repo / name)
    for name, text in FILES.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(textwrap.dedent(text).lstrip("\n"))
    init = repo / "solutions" / "__init__.py"        # step 1: export the reference
    init.write_text(init.read_text() + "\nfrom solutions.temperature import scale_logits  # noqa: E402\n"
                    "__all__.append(\"scale_logits\")\n")

    env = {**os.environ, "PYTHONPATH": str(repo)}
    grader = [sys.executable, "-m", "autograder.cli"]
    built = subprocess.run([*grader, "build", "temperature", "-o", str(tmp_path / "dist")], cwd=repo, env=env,
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    assert "solution 4/4, blank student 0/4" in built.stdout

    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "right.py").write_text("import numpy as np\n\ndef scale_logits(logits, temperature):\n"
                                   "    return np.asarray(logits, dtype=float) / temperature\n")
    (subs / "wrong.py").write_text("import numpy as np\n\ndef scale_logits(logits, temperature):\n"
                                   "    return np.asarray(logits, dtype=float) * temperature\n")
    graded = subprocess.run([*grader, "grade", str(subs), "-a", str(tmp_path / "dist/temperature/autograder/autograder.zip"),
                             "-o", str(tmp_path / "out")], cwd=repo, env=env, capture_output=True, text=True, timeout=600)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    with open(tmp_path / "out" / "gradebook.csv", newline="") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    assert book["right"]["total"] == "4" and book["wrong"]["total"] == "0"
    assert book["wrong"]["mistakes"] == "multiplied-by-temperature"

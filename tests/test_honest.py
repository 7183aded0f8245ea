"""Do honest submissions get the same per-question scores from our trusted grader as from otter's own kernel grading?

Honest submissions are built from the SOLUTION notebook: correct, catalogued
mistakes, functions left as stubs, syntax errors, a missing function, extra
helpers, extra standard-library imports, prints, IPython magics. Each is
graded

- by ``grader grade`` (the sandboxed runner, one batch, one worker), and
- by ``otter run`` on the SAME autograder zip with the plugin switched off
  (``"plugins"`` removed from its otter_config.json), which is otter's own
  grading: the notebook runs in a Jupyter kernel and each question is scored
  at its check cell,

and every question must get the same score from both, to 1e-6. A few are
also graded by ``otter run`` with the plugin on, which must agree as well.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from autograder.runtime.grading.discover import _student_id
from autograder.runtime.grading.outcome import student_folder
from tests.suites import MISTAKES
from tests.adversarial import otter_executable, subprocess_env, without_plugin
from tests.cohort import with_extra_cell, with_mistake, with_stubs, write_export_zip

ASSIGNMENT = "lm-head"
OTTER_TIMEOUT = 300
#: Mistakes graded, one or two per function (the whole catalogue is in test_mistakes.py).
MISTAKE_NAMES = ["targets-not-shifted", "head-bias-missing", "softmax-without-max-subtraction",
                 "softmax-axis-argument-ignored", "gradient-missing-one-over-n", "logits-changed-in-place",
                 "dw-transposed", "input-not-restored", "rel-err-without-guard"]
#: Every submission of the cohort, in order (see ``honest_cohort``).
COHORT = ["correct", *[f"mistake-{m}" for m in MISTAKE_NAMES], "stub-softmax", "stub-backward-and-gradient",
          "stub-batch-head-relerr", "syntax-error-cell", "syntax-error-in-softmax", "missing-softmax",
          "missing-backward", "runtime-error-cell", "extra-helpers", "extra-stdlib-imports",
          "prints-while-called", "not-implemented", "ipython-magics"]
#: Also graded through the plugin (otter run with the trusted grading switched on).
THROUGH_PLUGIN = ["correct", "mistake-gradient-missing-one-over-n", "syntax-error-in-softmax", "missing-softmax"]


def _cell_of(nb: nbformat.NotebookNode, function: str) -> int:
    return next(i for i, c in enumerate(nb.cells)
                if c.cell_type == "code" and c.source.startswith(f"def {function}("))


def _replace(nb: nbformat.NotebookNode, function: str, source: str) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    nb.cells[_cell_of(nb, function)].source = source
    return nb


def _without(nb: nbformat.NotebookNode, function: str) -> nbformat.NotebookNode:
    nb = copy.deepcopy(nb)
    del nb.cells[_cell_of(nb, function)]
    return nb


HELPERS = '''\
def _flatten_positions(a):
    """(B, T, ...) -> (B*T, ...)"""
    return a.reshape(-1, *a.shape[2:])


def _log_softmax_rows(z):
    shifted = z - z.max(axis=1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def cross_entropy_loss(logits, targets):
    B, T, V = logits.shape
    N = B * T
    logp = _log_softmax_rows(_flatten_positions(np.asarray(logits, dtype=np.float64)))
    rows = np.arange(N)
    tgt = _flatten_positions(np.asarray(targets))
    loss = float(-logp[rows, tgt].mean())
    d = np.exp(logp)
    d[rows, tgt] -= 1.0
    return loss, (d / N).reshape(B, T, V)
'''

STDLIB = {
    "next_token_batch": '''\
import itertools

def next_token_batch(data, ix, block_size):
    starts = [int(i) for i in np.asarray(ix).reshape(-1)]
    windows = list(itertools.starmap(lambda i, t: data[i:i + t + 1], zip(starts, itertools.repeat(block_size))))
    xb = np.stack([w[:-1] for w in windows])
    yb = np.stack([w[1:] for w in windows])
    return xb, yb
''',
    "numerical_gradient": '''\
import itertools, math

def numerical_gradient(f, x, eps=1e-6):
    grad = np.zeros(x.shape, dtype=np.float64)
    for idx in itertools.product(*map(range, x.shape)):
        orig = x[idx]
        x[idx] = orig + eps
        up = float(f(x))
        x[idx] = orig - eps
        down = float(f(x))
        x[idx] = orig
        grad[idx] = (up - down) / (2 * eps)
    if not all(math.isfinite(g) for g in grad.ravel()):
        print("numerical_gradient: some entries are not finite")
    return grad
''',
    "max_rel_err": '''\
import functools, math, operator

def max_rel_err(a, n):
    a = np.asarray(a, dtype=np.float64).ravel()
    n = np.asarray(n, dtype=np.float64).ravel()
    errs = map(lambda p: abs(p[0] - p[1]) / (max(abs(p[0]), abs(p[1])) + 1e-12), zip(a, n))
    return functools.reduce(max, errs, 0.0) if len(a) else 0.0
''',
}


def honest_cohort(solution: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """At least twenty honest submissions, by name."""
    cohort = {"correct": solution}
    for name in MISTAKE_NAMES:
        cohort[f"mistake-{name}"] = with_mistake(solution, MISTAKES[name])
    cohort["stub-softmax"] = with_stubs(solution, ["softmax"])
    cohort["stub-backward-and-gradient"] = with_stubs(solution, ["lm_head_backward", "numerical_gradient"])
    cohort["stub-batch-head-relerr"] = with_stubs(solution, ["next_token_batch", "lm_head", "max_rel_err"])
    cohort["syntax-error-cell"] = with_extra_cell(solution, "def broken(:\n    pass\n", 3)
    cohort["syntax-error-in-softmax"] = _replace(
        solution, "softmax", "def softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True\n")
    cohort["missing-softmax"] = _without(solution, "softmax")
    cohort["missing-backward"] = _without(solution, "lm_head_backward")
    cohort["runtime-error-cell"] = with_extra_cell(solution, "import numpy as np\nraise RuntimeError('oops')\n", 3)
    cohort["extra-helpers"] = _replace(solution, "cross_entropy_loss", HELPERS)
    stdlib = solution
    for function, source in STDLIB.items():
        stdlib = _replace(stdlib, function, source)
    cohort["extra-stdlib-imports"] = stdlib
    chatty = solution.cells[_cell_of(solution, "softmax")].source.replace(
        "    shifted = x", "    print('softmax called on', x.shape)\n    shifted = x")
    cohort["prints-while-called"] = _replace(solution, "softmax", chatty)
    cohort["not-implemented"] = _replace(
        solution, "lm_head_backward", "def lm_head_backward(hidden, W_head, dlogits):\n"
                                      "    raise NotImplementedError('backward pass: to do')\n")
    magics = with_extra_cell(solution, "%matplotlib inline\n%load_ext autoreload\n", 3)
    cohort["ipython-magics"] = with_extra_cell(
        magics, "%%time\nprobe = softmax(np.array([[1.0, 2.0, 3.0]]))\nprint(probe.sum())\n", len(magics.cells) - 2)
    return cohort


def otter_scores(autograder_zip: Path, submission: Path, out: Path, *, with_repo: bool) -> dict:
    out.mkdir(parents=True)
    proc = subprocess.run([otter_executable(), "run", "-a", str(autograder_zip), "-o", str(out), str(submission)],
                          capture_output=True, text=True, timeout=OTTER_TIMEOUT, env=subprocess_env(with_repo), cwd=out)
    results_path = out / "results.json"
    assert proc.returncode == 0 and results_path.is_file(), proc.stdout[-2000:] + proc.stderr[-2000:]
    return json.loads(results_path.read_text(encoding="utf-8"))


def per_question_otter(results: dict) -> dict[str, float]:
    """otter's own results.json: one entry per question, named ``qN``."""
    return {t["name"]: float(t["score"] or 0.0) for t in results["tests"]
            if t.get("name", "").startswith("q") and t["name"][1:].isdigit()}


def per_question_ours(results: dict) -> dict[str, float]:
    """Our results.json: one entry per hidden test item; summed per question."""
    scores: dict[str, float] = {}
    for t in results["tests"]:
        question = t["extra_data"]["question"]
        scores[question] = scores.get(question, 0.0) + float(t["score"])
    return scores


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("honest")
    (result,) = build([ASSIGNMENT], root / "dist", None, verify=False)
    solution = nbformat.read(result.solution, as_version=4)
    cohort = honest_cohort(solution)
    folder = root / "submissions"
    folder.mkdir()
    files = {}
    for index, (name, nb) in enumerate(cohort.items()):
        if index % 2:   # half as the export zip, half as the bare notebook
            files[name] = write_export_zip(nb, folder / f"{name}.zip", ASSIGNMENT)
        else:
            files[name] = folder / f"{name}.ipynb"
            nbformat.write(nb, files[name])

    out = root / "ours"
    proc = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a",
                           str(result.autograder_zip), "-o", str(out), "--workers", "1"],
                          capture_output=True, text=True, timeout=OTTER_TIMEOUT, env=subprocess_env(True), cwd=root)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    ours = {name: json.loads((student_folder(out, _student_id(path.stem)) / "results.json").read_text(encoding="utf-8"))
            for name, path in files.items()}

    plain_zip = without_plugin(result.autograder_zip, root / "autograder-without-plugin.zip")
    otter = {name: otter_scores(plain_zip, path, root / "otter" / name, with_repo=False)
             for name, path in files.items()}
    plugin = {name: otter_scores(result.autograder_zip, files[name], root / "plugin" / name, with_repo=True)
              for name in THROUGH_PLUGIN}
    return {"cohort": cohort, "ours": ours, "otter": otter, "plugin": plugin}


def test_the_cohort_has_at_least_twenty_submissions():
    assert len(COHORT) >= 20 and len(set(COHORT)) == len(COHORT)


@pytest.mark.slow
def test_the_cohort_covers_full_partial_and_zero_scores(graded):
    assert list(graded["cohort"]) == COHORT
    totals = {name: r["score"] for name, r in graded["ours"].items()}
    possible = graded["ours"]["correct"]["extra_data"]["possible"]
    assert totals["correct"] == pytest.approx(possible)
    assert any(0 < t < possible for t in totals.values())
    assert all(t < possible for name, t in totals.items() if name.startswith(("mistake-", "stub-", "missing-")))
    for name in ("extra-helpers", "extra-stdlib-imports", "prints-while-called", "syntax-error-cell",
                 "runtime-error-cell", "ipython-magics"):
        assert totals[name] == pytest.approx(possible), name


@pytest.mark.slow
@pytest.mark.parametrize("name", COHORT)
def test_same_per_question_scores_as_otters_own_grading(graded, name):
    ours = per_question_ours(graded["ours"][name])
    otter = per_question_otter(graded["otter"][name])
    print(f"\nHONEST {name}: ours {ours} | otter {otter}")
    assert set(otter) == set(ours) == {f"q{i}" for i in range(1, 7)}
    for question in sorted(ours):
        assert ours[question] == pytest.approx(otter[question], abs=1e-6), (
            f"{name} {question}: our grader gives {ours[question]}, otter's kernel grading {otter[question]}")


@pytest.mark.slow
@pytest.mark.parametrize("name", THROUGH_PLUGIN)
def test_otter_run_with_the_plugin_gives_the_same_scores(graded, name):
    through_plugin = per_question_ours(graded["plugin"][name])
    assert through_plugin == pytest.approx(per_question_ours(graded["ours"][name]), abs=1e-6)
    assert through_plugin == pytest.approx(per_question_otter(graded["otter"][name]), abs=1e-6)

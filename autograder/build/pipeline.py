"""Build assignments end to end and publish only what verified.

Everything is built in a scratch folder; ``DIR/<name>`` is replaced only
after the whole assignment built and passed its self-check, so a failed
build never leaves a half-written or broken assignment behind.
"""
from __future__ import annotations

import secrets
import shutil
import tempfile
import time
import threading
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat

from autograder.build.config import AssignmentSettings, resolve_settings
from autograder.build.contents import support_files
from autograder.build.hidden_items import HiddenItem
from autograder.build.master import demo_cells, hidden_config, render_master
from autograder.build.otter_steps import otter_assign, otter_run, score_of
from autograder.build.wheel import build_runtime_wheel
from autograder.build.zips import write_zip
from autograder.resources import templates_dir
from autograder.runtime.errors import BuildError
from autograder.runtime.grading.outcome import GradeOutcome
from autograder.runtime.grading.runner import grade_submission
from autograder.runtime.grading.support import SUPPORT_DIR, load_autograder
from autograder.runtime.sandbox.policy import clear

#: Bytes of the secret each build makes for drawing hidden inputs.
SECRET_BYTES = 32


@dataclass(frozen=True)
class BuildResult:
    """What one assignment's build produced and how its self-check went."""

    name: str
    student: Path
    solution: Path
    autograder_zip: Path
    seconds: float
    solution_score: tuple[float, float] | None    # None when verification was skipped
    student_score: tuple[float, float] | None


def _write_support(settings: AssignmentSettings, items: list[HiddenItem], support: Path,
                   demos: list[str] = ()) -> None:
    """The folder shipped in the zip: hidden tests, references, catalogue, config, runtime wheel."""
    config = hidden_config(settings, items, secrets.token_hex(SECRET_BYTES), demos)
    for name, data in support_files(settings.spec.folder, [q.name for q in settings.questions], config):
        target = support / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    build_runtime_wheel(support / "wheels")


#: The submission section's text, once (otter prefixes its own general advice to the instructions).
SUBMISSION_TEXT = ("## Submission\n\nSave the notebook (Ctrl-S or Cmd-S), then run the cell below. It writes a "
                   "zip file next to the notebook, named after the assignment and the time: submit that zip. "
                   "If you change the notebook afterwards, export and submit again.")


#: Appended to otter's init cell: the export cell then no longer shows the student the start-up
#: warning of the kernel its check runs in (unencrypted loopback TCP: nothing about their work).
EXPORT_CHECK_OUTPUT = "notebook/export_check_output.py"


def _normalize_notebook(path: Path) -> None:
    """One submission text, an init cell that keeps the export's check quiet about its kernel's
    transport, no empty trailing cells, and stable ids so two builds write identical notebooks."""
    nb = nbformat.read(path, as_version=4)
    quiet = (templates_dir() / EXPORT_CHECK_OUTPUT).read_text(encoding="utf-8")
    for cell in nb.cells:
        if cell.cell_type == "markdown" and cell.source.startswith("## Submission"):
            cell.source = SUBMISSION_TEXT
        if cell.cell_type == "code" and cell.source.startswith("# Initialize Otter") and quiet not in cell.source:
            cell.source = cell.source.rstrip("\n") + "\n" + quiet.rstrip("\n")
    while nb.cells and not nb.cells[-1].source.strip():
        nb.cells.pop()
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:03d}"
    nbformat.write(nb, path)


#: Gradescope's entry point in the zip, replaced by ours: it lets the grader read the
#: submitted notebook before otter parses it (see ``otter_plugin.prepare_submission``).
RUN_OTTER = "run_otter.py"


#: What a student installs to open and check the notebook, written beside it.
STUDENT_REQUIREMENTS = "requirements.txt"


def student_requirements(name: str) -> str:
    """The student's requirements: NumPy, the otter-grader the zip was built with (the notebook's
    checks and export cell use it), and a Jupyter front end."""
    from importlib.metadata import version
    return (f"# What {name}.ipynb needs. Install, then open the notebook:\n"
            f"#   python -m pip install -r requirements.txt\n"
            f"#   jupyter lab {name}.ipynb\n"
            f"numpy>=1.24,<3\n"
            f"otter-grader=={version('otter-grader')}\n"
            f"jupyterlab>=4,<5\n")


def _normalize_zip(source: Path, dest: Path) -> None:
    """Rewrite a zip with sorted members and fixed timestamps, and our ``run_otter.py``."""
    ours = (templates_dir() / "gradescope" / RUN_OTTER).read_bytes()
    with zipfile.ZipFile(source) as zin:
        write_zip(dest, ((name, ours if name == RUN_OTTER else zin.read(name), zin.getinfo(name).external_attr)
                         for name in sorted(zin.namelist())
                         if not name.endswith("/") and "__pycache__" not in name))


def _render_one(settings: AssignmentSettings, scratch: Path) -> tuple[Path, float]:
    """The master notebook and support folder of one assignment (in this thread: pytest
    collects the hidden tests, and pytest is not thread-safe). Returns the master and the seconds."""
    start = time.perf_counter()
    work = scratch / f"{settings.name}-master"
    work.mkdir()
    master_nb, items = render_master(settings)
    master = work / f"{settings.name}.ipynb"
    nbformat.write(master_nb, master)
    _write_support(settings, items, work / SUPPORT_DIR, demo_cells(master_nb))
    return master, time.perf_counter() - start


def _build_one(settings: AssignmentSettings, scratch: Path, verify: bool, master: Path,
               rendered_in: float) -> BuildResult:
    """otter assign, the zip and its self-check: subprocesses, so assignments build side by side."""
    start = time.perf_counter() - rendered_in
    name = settings.name
    otter_dist = scratch / f"{name}-otter"
    otter_assign(master, otter_dist)
    zips = sorted((otter_dist / "autograder").glob("*.zip"))
    if len(zips) != 1:
        raise BuildError(f"otter assign wrote {len(zips)} zips for {name}, expected 1")

    out = scratch / name
    for part in ("student", "solution", "autograder"):
        (out / part).mkdir(parents=True)
    student = out / "student" / f"{name}.ipynb"
    solution = out / "solution" / f"{name}.ipynb"
    autograder_zip = out / "autograder" / "autograder.zip"
    shutil.copy2(otter_dist / "student" / f"{name}.ipynb", student)
    shutil.copy2(otter_dist / "autograder" / f"{name}.ipynb", solution)
    _normalize_notebook(student)
    _normalize_notebook(solution)
    _normalize_zip(zips[0], autograder_zip)
    (out / "student" / STUDENT_REQUIREMENTS).write_text(student_requirements(name), encoding="utf-8")
    for private in ("solution", "autograder"):
        _owner_only(out / private)

    solution_score = student_score = None
    if verify:
        # The solution goes through otter with the zip, as Gradescope will run it; that proves the
        # zip's path. The blank notebook then takes the grader's own path with the same zip (the
        # same support folder, engine and sandbox), side by side with the otter run.
        with ThreadPoolExecutor(max_workers=1) as pool:
            solution_run = pool.submit(otter_run, autograder_zip, solution)
            blank = _grade_blank(autograder_zip, student, scratch / f"{name}-blank")
            solution_results = solution_run.result()
        solution_score = score_of(solution_results)
        if solution_score[1] <= 0 or abs(solution_score[0] - solution_score[1]) > 1e-6:
            raise BuildError(f"{name}: the solution notebook scored {solution_score[0]:g} of "
                             f"{solution_score[1]:g} with the built autograder; the build is not "
                             "published. Fix the hidden tests or the reference solution.\n"
                             + _failure_summary(solution_results))
        student_score = (blank.total, blank.possible)
        if student_score[0] != 0:
            raise BuildError(f"{name}: the untouched student notebook scored {student_score[0]:g} "
                             f"of {student_score[1]:g}; a stub must earn nothing. The build is not published.")
    return BuildResult(name, student, solution, autograder_zip, time.perf_counter() - start,
                       solution_score, student_score)


def _owner_only(folder: Path) -> None:
    """Make ``folder`` and everything in it readable by its owner alone.

    The zip holds the hidden tests, the references and the secret, and the solution
    notebook holds the references: a student with an account on the machine that
    grades (``otter run`` or ``grader grade`` below bubblewrap, where the sandbox
    is just another user) must not read them.
    """
    for path in folder.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)
    folder.chmod(0o700)


#: pytest (which collects the hidden suite) is not thread-safe: one collection at a time.
_COLLECTING = threading.Lock()


def _grade_blank(autograder_zip: Path, notebook: Path, dest: Path) -> GradeOutcome:
    """The untouched notebook graded through the zip by the grader's own path (our own code: trusted)."""
    ag = load_autograder(autograder_zip, dest)
    with _COLLECTING:
        ag.suite
    clearance = clear("auto", [dest, autograder_zip], trusted=True)
    return grade_submission(notebook, ag, "blank", clearance)


def _failure_summary(results: dict, limit: int = 2000) -> str:
    """The outputs of the tests that lost points, shortened for an error message."""
    lost = [t for t in results.get("tests", [])
            if t.get("max_score") is not None and float(t.get("score") or 0) < float(t["max_score"])]
    text = "\n".join(f"{t['name']}: {t.get('output', '').strip()}" for t in lost)
    return text[:limit] + ("\n..." if len(text) > limit else "")


def _publish(built: Path, dest: Path) -> None:
    """Replace ``dest`` by ``built`` so that ``dest`` is never half-written."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = dest.parent / f".{dest.name}.new"
    old = dest.parent / f".{dest.name}.old"
    for leftover in (staging, old):
        if leftover.exists():
            shutil.rmtree(leftover)
    # Nothing of the copy is reachable by others until it is whole, with its owner-only
    # folders closed (copytree gives a folder its mode after copying into it).
    staging.mkdir(mode=0o700)
    shutil.copytree(built, staging, dirs_exist_ok=True)
    if dest.exists():
        dest.rename(old)
    staging.rename(dest)
    if old.exists():
        shutil.rmtree(old)


def build(
    names: list[str] | None = None,
    output_dir: str | Path = "dist",
    config_path: str | Path | None = None,
    verify: bool = True,
    progress: Callable[[str], None] = lambda message: None,
) -> list[BuildResult]:
    """Build the named assignments (all built-in ones by default) into ``output_dir``.

    The config is validated for every assignment before anything is built;
    each assignment is published to ``output_dir/<name>`` only once it has
    built and (unless ``verify`` is false) passed its self-check.
    """
    all_settings = resolve_settings(names, config_path)
    output_dir = Path(output_dir)
    results = []
    with tempfile.TemporaryDirectory(prefix="lmhead-build-") as tmp:
        scratch = Path(tmp)
        rendered = []
        for settings in all_settings:
            progress(f"building {settings.name}")
            with _COLLECTING:
                rendered.append(_render_one(settings, scratch))
        with ThreadPoolExecutor(max_workers=max(1, len(all_settings))) as pool:
            built = list(pool.map(lambda job: _build_one(job[0], scratch, verify, *job[1]),
                                  zip(all_settings, rendered)))
        for result in built:
            _publish(scratch / result.name, output_dir / result.name)
            final = output_dir / result.name
            results.append(BuildResult(
                result.name, final / "student" / f"{result.name}.ipynb",
                final / "solution" / f"{result.name}.ipynb", final / "autograder" / "autograder.zip",
                result.seconds, result.solution_score, result.student_score))
    return results

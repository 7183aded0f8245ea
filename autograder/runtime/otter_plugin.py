"""Trusted grading under ``otter run`` and on Gradescope.

otter imports this plugin in its own (parent) process. ``before_grading``,
the first event, runs before otter reads anything the submission brought:
it deletes every file of the submission but the notebook itself (otter
would unpickle the zip's ``.OTTER_LOG`` in this process, and its kernel
would import a ``lmhead_support/`` or ``ipython_config.py`` the zip put
there) and puts back otter's own support folder. Before otter starts its
kernel, ``before_execution`` grades the notebook with the sandboxed runner,
removes it too, and hands otter an empty notebook: nothing of the student's
runs in otter's kernel or process. ``after_grading`` then makes otter write
the trusted results, in Gradescope's format, as its results.json.
"""
from __future__ import annotations

import gc
import os
import shutil
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import nbformat

from autograder.runtime.grading.extract import Program, extract_program
from autograder.runtime.grading.feedback import results_json
from autograder.runtime.grading.intake import EXPORT_FILES, Rejected, Submission, parse_notebook
from autograder.runtime.grading.outcome import GradeOutcome
from autograder.runtime.grading.runner import grade_program, refused_outcome, rejected_outcome
from autograder.runtime.grading.support import SUPPORT_DIR, load_support_dir
from autograder.runtime.sandbox.errors import SandboxUnavailable
from autograder.runtime.sandbox.policy import clear
from autograder.runtime.text import block, code

try:
    from otter.plugins import AbstractOtterPlugin
except ImportError:  # pragma: no cover - otter is a dependency of the package
    AbstractOtterPlugin = object

#: What otter itself puts in the submission folder and may stay there.
_OTTER_OWNED = {"tests", SUPPORT_DIR, "__init__.py"}
#: Set to 1 in the environment of ``otter run`` to grade at a weaker level than the
#: sandbox policy accepts, for code the instructor trusts (the build sets it to
#: verify its own solution and starter notebooks).
TRUSTED_ENV = "LMHEAD_TRUSTED_CODE"
#: The kernel otter starts for the empty notebook it is handed: always the plain
#: Python 3 kernel, whatever the submission's metadata asked for.
KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}
_KERNEL_METADATA = {"kernelspec": KERNELSPEC,
                    "language_info": {"name": "python"}}


def student_id(metadata: dict | None, argv: list[str] | None = None) -> str:
    """Whose submission this is: on Gradescope the student's SID, else e-mail, else the
    submission id; under ``otter run`` (no metadata) the submitted file's name."""
    metadata = metadata or {}
    users = metadata.get("users") if isinstance(metadata.get("users"), list) else []
    for key in ("sid", "email"):
        for user in users:
            if isinstance(user, dict) and str(user.get(key) or "").strip():
                return str(user[key]).strip()
    if str(metadata.get("id") or "").strip():
        return str(metadata["id"]).strip()
    # otter run grades in this process: its command line names the submission after the options.
    args = list(sys.argv[1:] if argv is None else argv)
    files = [a for i, a in enumerate(args) if Path(a).suffix in (".zip", ".ipynb", ".py")
             and (i == 0 or args[i - 1] not in ("-a", "--autograder"))]
    return Path(files[-1]).stem if files else "submission"


class TrustedGrading(AbstractOtterPlugin):
    """Grade in the sandbox; give otter nothing of the student's to run."""

    outcome: GradeOutcome | None = None
    error: str = ""
    removed: tuple[str, ...] = ()
    #: The submitted notebook as read by the grader's own parser before otter saw it,
    #: or why it could not be read.
    parsed: Any = None
    unreadable: str = ""

    def _support(self) -> Path:
        # otter's layout: <ag_dir>/source (the zip), <ag_dir>/submission (cwd), <ag_dir>/results
        ag_dir = Path(self.submission_path).resolve().parent.parent
        return ag_dir / "source" / "files" / SUPPORT_DIR

    def _submission(self, nb: Any) -> Submission:
        path = Path(self.submission_path)
        if self.unreadable:
            raise Rejected(self.unreadable)
        if self.parsed is not None:
            return Submission(path.name, "ipynb", self.parsed, None)
        if path.suffix == ".py":
            return Submission(path.name, "py", None, path.read_text(encoding="utf-8", errors="replace"))
        if isinstance(nb, nbformat.NotebookNode):
            return Submission(path.name, "ipynb", nb, None)
        return Submission(path.name, "ipynb", parse_notebook(path.read_bytes(), path.name), None)

    def _take_notebook(self) -> None:
        """Read the notebook with the grader's parser, then leave otter a harmless one in its place.

        otter parses the notebook and starts the kernel its metadata names before
        ``before_execution``: a nesting bomb, a kernelspec that is a string or names
        a missing kernel would crash it with no results.json at all.
        """
        path = Path(self.submission_path)
        if path.suffix != ".ipynb":
            return
        try:
            self.parsed = parse_notebook(path.read_bytes(), path.name)
            otter_meta = self.parsed.metadata.get("otter")
            self.unreadable = _unreadable_mark(self.parsed)
        except Rejected as exc:
            self.unreadable, otter_meta = str(exc), None
        placeholder = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
        placeholder.metadata = _otter_safe_metadata(otter_meta)
        path.write_text(nbformat.writes(placeholder), encoding="utf-8")

    def _clear_submission_folder(self, keep: str | None = None) -> list[str]:
        """Delete what the submission brought (conftest.py, numpy.py, .pth, .OTTER_LOG, ...) from
        otter's cwd, all but ``keep``; return the names deleted."""
        folder = Path(self.submission_path).resolve().parent
        removed = []
        for entry in sorted(folder.iterdir()):
            if entry.name in _OTTER_OWNED or entry.name == keep:
                continue
            removed.append(entry.name + ("/" if entry.is_dir() and not entry.is_symlink() else ""))
            _delete(entry)
        return removed

    def _restore_otter_files(self) -> list[str]:
        """Put otter's own copies back where the zip could have brought its own.

        otter copies its support folder into the submission folder only when
        no such folder is there yet, so a zip holding ``lmhead_support/``
        would have its own code imported by the tests in otter's kernel.
        Returns the names that were replaced because they differed.
        """
        folder = Path(self.submission_path).resolve().parent
        source = folder.parent / "source"
        replaced = []
        for name, original in ((SUPPORT_DIR, source / "files" / SUPPORT_DIR), ("tests", source / "tests")):
            target = folder / name
            if not original.is_dir():
                continue
            if not _same_tree(target, original):
                if target.exists() or target.is_symlink():
                    replaced.append(f"{name}/ (replaced by the autograder's own)")
                _delete(target)
                shutil.copytree(original, target)
        init = folder / "__init__.py"
        if init.is_symlink() or init.exists() and (not init.is_file() or init.stat().st_size):
            replaced.append("__init__.py (emptied)")
            _delete(init)
        init.touch()
        return replaced

    def before_grading(self, config: Any) -> None:
        """Runs before otter reads the submission's files: delete all of them but the notebook."""
        try:
            self.removed = tuple(self._clear_submission_folder(keep=Path(self.submission_path).name)
                                 + self._restore_otter_files())
            self._take_notebook()
        except Exception:   # grading must still happen; before_execution clears again
            self.error = traceback.format_exc()

    def before_execution(self, submission: Any) -> Any:
        support = self._support()
        student = student_id(self.submission_metadata)
        name = Path(self.submission_path).name
        ag_dir = support.parent.parent.parent
        try:
            os.chmod(ag_dir, 0o700)   # keep a fallback sandbox user out
            ag = load_support_dir(support)
            try:
                zips, lost = given_autograder_zips()
                clearance = clear("auto", [ag_dir, *zips], trusted=os.environ.get(TRUSTED_ENV) == "1",
                                  flag=f"{TRUSTED_ENV}=1 in otter's environment")
                if lost and clearance.level != "bwrap" and not clearance.trusted:
                    raise SandboxUnavailable(_lost_zip_message(lost, clearance.level))
                program = extract_program(self._submission(submission))
                removed = [n for n in self.removed if n.rstrip("/") not in EXPORT_FILES]
                if removed:
                    shown = ", ".join(code(n) for n in removed[:10]) + (" ..." if len(removed) > 10 else "")
                    program = Program(program.cells, program.notes + (
                        f"These files in the submission were not used: {shown}",), program.labels)
                self.outcome = grade_program(program, ag, student, clearance, submission=name)
            except SandboxUnavailable as exc:
                self.outcome = refused_outcome(ag, student, str(exc), name)
            except Rejected as exc:
                self.outcome = rejected_outcome(ag, student, str(exc), name)
        except Exception:   # never let otter fall back to running the student's code
            self.error = traceback.format_exc()
        self._clear_submission_folder()
        self._restore_otter_files()
        empty = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
        # otter starts the kernel the metadata names: never one the submission chose.
        empty.metadata = _otter_safe_metadata((getattr(submission, "metadata", None) or {}).get("otter"))
        if isinstance(submission, str):
            return "pass\n"
        return empty

    def after_grading(self, results: Any) -> None:
        trusted = None
        if self.outcome is not None:
            try:
                trusted = results_json(self.outcome)
            except Exception as exc:          # noqa: BLE001 - a results.json must still be written
                self.error = f"writing the results failed: {type(exc).__name__}"
        if trusted is None:
            trusted = {"score": 0, "output": "The grader failed on this submission; please tell your "
                       "instructor.", "tests": [{"name": "Grader error", "score": 0, "max_score": 0,
                                                 "status": "failed", "visibility": "hidden",
                                                 "output": block(self.error[-4000:])}],
                       "extra_data": {"status": "error"}}
        # otter writes results.json from this method; the instance attribute replaces it.
        results.to_gradescope_dict = lambda ag_config=None: trusted


def given_autograder_zips() -> tuple[list[Path], list[str]]:
    """The autograder zip ``otter run`` was given (``-a``), found from inside otter's process.

    The zip holds the hidden tests, the references and the secret, and its path
    is in otter's command line for every user of the machine to see: below
    bubblewrap it must be as unreadable to a sandbox user as otter's own
    unpacked copy. otter has left the folder it started in when the plugin
    runs, so a relative path is resolved against the folders otter's
    ``chdir`` will return to.

    Returns:
        The zip files found, and the paths given that could not be located.
        Both are empty outside ``otter run`` (on Gradescope otter is handed
        the unpacked ``/autograder``, no zip).
    """
    given = list(dict.fromkeys(_zips_in_otter_frames() + _zips_in_argv(sys.argv[1:])))
    found: list[Path] = []
    lost: list[str] = []
    bases: list[str] | None = None
    for value in given:
        path = Path(value)
        if path.is_absolute():
            if path.is_file():       # a zip removed since otter unpacked it holds nothing any more
                found.append(path)
            continue
        if bases is None:
            bases = _working_folders_left()
        hits = [Path(base) / path for base in bases if (Path(base) / path).is_file()]
        found += [hit for hit in hits if hit not in found]
        if not hits:
            lost.append(value)
    return found, lost


def _zips_in_otter_frames() -> list[str]:
    """The ``autograder`` argument of ``otter.run.main`` on this thread's stack (otter's default included)."""
    main = getattr(sys.modules.get("otter.run"), "main", None)
    code = getattr(main, "__code__", None)
    values = []
    frame = sys._getframe(1)
    while frame is not None and code is not None:
        if frame.f_code is code:
            value = frame.f_locals.get("autograder")
            if isinstance(value, (str, os.PathLike)):
                values.append(os.fspath(value))
        frame = frame.f_back
    return values


def _zips_in_argv(args: list[str]) -> list[str]:
    """``-a``/``--autograder`` values naming a zip on an ``otter run`` command line."""
    if "run" not in args:
        return []
    values = []
    for i, arg in enumerate(args):
        if arg in ("-a", "--autograder") and i + 1 < len(args):
            values.append(args[i + 1])
        elif arg.startswith("--autograder="):
            values.append(arg.split("=", 1)[1])
        elif arg.startswith("-a") and not arg.startswith("--") and len(arg) > 2:
            values.append(arg[2:])
    return [v for v in values if v.endswith(".zip")]


def _working_folders_left() -> list[str]:
    """Folders otter's ``chdir`` contexts will return to (the first is where otter was started),
    then the current folder and the shell's."""
    chdir = getattr(getattr(sys.modules.get("otter.utils"), "chdir", None), "__wrapped__", None)
    code = getattr(chdir, "__code__", None)
    folders = []
    if code is not None:
        for obj in gc.get_objects():
            if isinstance(obj, types.GeneratorType) and obj.gi_code is code and obj.gi_frame is not None:
                saved = obj.gi_frame.f_locals.get("curr_dir")
                if isinstance(saved, str):
                    folders.append(saved)
    folders += [os.getcwd(), os.environ.get("PWD", "")]
    return [f for f in dict.fromkeys(folders) if f and os.path.isabs(f)]


def _lost_zip_message(lost: list[str], level: str) -> str:
    return (f"refusing to run student code at the '{level}' level: otter was given the autograder zip "
            f"{', '.join(repr(v) for v in lost)}, which the grader could not find to check that a sandbox "
            f"user cannot read it (it holds the hidden tests, the references and the secret). Pass the "
            f"zip's absolute path to `otter run -a`, in a folder other users cannot read.")


#: Where :func:`prepare_submission` leaves the reason a notebook could not be read.
_UNREADABLE_KEY = "lmhead_unreadable"


def _unreadable_mark(nb: Any) -> str:
    mark = nb.metadata.get("otter", {}).get(_UNREADABLE_KEY) if isinstance(nb.metadata.get("otter"), dict) else None
    return mark if isinstance(mark, str) else ""


def prepare_submission(folder: str | Path) -> None:
    """Make every notebook in ``folder`` one otter can read, before otter starts.

    otter parses the notebook before any plugin runs, so on Gradescope the zip's
    ``run_otter.py`` calls this first: a notebook the grader can read is rewritten
    with plain metadata, one it cannot (a JSON nesting bomb) is replaced by a
    placeholder that carries the reason, which the plugin then reports.
    """
    for path in sorted(Path(folder).glob("*.ipynb")):
        try:
            nb = parse_notebook(path.read_bytes(), path.name)
            nb.metadata = _otter_safe_metadata(nb.metadata.get("otter"))
        except Rejected as exc:
            nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("pass")])
            nb.metadata = _otter_safe_metadata({_UNREADABLE_KEY: str(exc)[:190]})
        except OSError:
            continue
        path.write_text(nbformat.writes(nb), encoding="utf-8")


def _otter_safe_metadata(otter_meta: Any) -> dict:
    """Notebook metadata otter can act on safely: the python3 kernel, and the submission's
    ``otter`` entry only as plain strings (otter compares the assignment name)."""
    meta: dict = {k: dict(v) for k, v in _KERNEL_METADATA.items()}
    if isinstance(otter_meta, dict):
        plain = {k: v for k, v in otter_meta.items() if isinstance(k, str) and isinstance(v, str) and len(v) < 200}
        if plain:
            meta["otter"] = plain
    return meta


def _delete(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink(missing_ok=True)


def _same_tree(target: Path, original: Path) -> bool:
    """Whether ``target`` is a real folder holding exactly the files of ``original``, byte for byte."""
    if target.is_symlink() or not target.is_dir():
        return False
    def files(root: Path) -> dict[str, Path]:
        return {p.relative_to(root).as_posix(): p for p in root.rglob("*")
                if p.is_file() or p.is_symlink() or not p.is_dir()}
    have, want = files(target), files(original)
    if have.keys() != want.keys() or any(p.is_symlink() for p in have.values()):
        return False
    return all(have[k].read_bytes() == want[k].read_bytes() for k in want)

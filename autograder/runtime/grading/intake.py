"""Read a submission safely: a notebook, a script, or the export zip.

Nothing from a submission is ever extracted to disk: the one notebook (or
script) to grade is read from memory, so extra files in a zip (conftest.py,
sitecustomize.py, numpy.py, .pth files) never land where Python would load
them. Every problem raises ``Rejected`` with a message the student can act on.
"""
from __future__ import annotations

import json
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import nbformat

from autograder.runtime.errors import SubmissionError
from autograder.runtime.text import code
from autograder.runtime.grading.zip_directory import directory_problem


class Rejected(SubmissionError):
    """The submission cannot be graded; the message says why and what to do."""


@dataclass(frozen=True)
class IntakeLimits:
    """Bounds on what a submission may be."""

    max_file_bytes: int = 20 * 2**20          # the uploaded file itself
    max_notebook_bytes: int = 20 * 2**20      # the notebook inside a zip, uncompressed
    max_zip_entries: int = 200
    max_zip_total_bytes: int = 100 * 2**20    # all members, uncompressed
    max_compression_ratio: int = 200          # a higher ratio is a zip bomb


#: Files the notebook's export cell itself puts in the zip beside the notebook.
EXPORT_FILES = frozenset({".OTTER_LOG", "__zip_filename__"})
#: Archive suffixes refused inside a zip: a nested archive can hide anything.
NESTED_ARCHIVES = (".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".whl", ".egg")


@dataclass(frozen=True)
class Submission:
    """The notebook (or script) to grade, as parsed, safe data."""

    source: str                          # where it came from, e.g. "alice.zip:lm-head.ipynb"
    kind: str                            # "ipynb" or "py"
    notebook: nbformat.NotebookNode | None
    script: str | None
    notes: tuple[str, ...] = ()


def _check_size(path: Path, limits: IntakeLimits) -> None:
    size = path.stat().st_size
    if size > limits.max_file_bytes:
        raise Rejected(f"{code(path.name)} is {size / 2**20:.1f} MB; submissions are limited to "
                       f"{limits.max_file_bytes / 2**20:.0f} MB. Clear the notebook's outputs "
                       "(Kernel > Restart & Clear Output), save, and export again.")
    if size == 0:
        raise Rejected(f"{code(path.name)} is empty. Save your notebook and export it again.")


def parse_notebook(data: bytes, name: str) -> nbformat.NotebookNode:
    """Parse and validate notebook JSON, or raise ``Rejected`` naming the file (``name``, as the student wrote it)."""
    where = code(name)
    try:
        text = data.decode("utf-8")
        raw = json.loads(text)
    except RecursionError:
        raise Rejected(f"{where} is not a valid notebook: its JSON is nested too deeply to read. "
                       "Re-download it from Jupyter with File > Save, then export again.") from None
    except ValueError as exc:     # not UTF-8, not JSON, or a number of more than 4,300 digits
        raise Rejected(f"{where} is not a valid notebook (not JSON: {code(exc)}). Re-download it from "
                       "Jupyter with File > Save, then export again.") from None
    if not isinstance(raw, dict) or "cells" not in raw:
        raise Rejected(f"{where} is JSON but not a Jupyter notebook (it has no cells).")
    # Grading reads the cells and the assignment's name, nothing else of the notebook's
    # metadata: a kernelspec that is a string, or names a kernel nobody has, is an editor's
    # doing and no reason to refuse the code. Of otter's entry only single values are kept
    # (the assignment's name among them): its nested entries are otter's encoded public
    # tests, often most of the file, which nothing here reads and which took most of the
    # time spent validating.
    metadata = raw.get("metadata")
    otter_meta = metadata.get("otter") if isinstance(metadata, dict) else None
    raw["metadata"] = {"otter": {k: v for k, v in otter_meta.items() if not isinstance(v, (dict, list))}} \
        if isinstance(otter_meta, dict) else {}
    try:
        # reads validates the converted notebook and, told where, hands back
        # the validation error instead of only logging it.
        invalid: dict = {}
        nb = nbformat.reads(json.dumps(raw), as_version=4, capture_validation_error=invalid)
        if "ValidationError" in invalid:
            raise invalid["ValidationError"]
    except Exception as exc:  # nbformat raises several unrelated types
        first_line = (str(exc).splitlines() or [""])[0]
        raise Rejected(f"{where} is not a valid Jupyter notebook ({code(type(exc).__name__ + ': ' + first_line, 200)}).") from None
    return nb


def _assignment_of(nb: nbformat.NotebookNode) -> str | None:
    return nb.get("metadata", {}).get("otter", {}).get("assignment_name")


def _unsafe_member(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    path = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        return f"{code(name)}: absolute path"
    if ".." in path.parts:
        return f"{code(name)}: path leaves the zip's folder"
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        return f"{code(name)}: symbolic link"
    if name.lower().endswith(NESTED_ARCHIVES):
        return f"{code(name)}: archive inside the zip"
    return None


#: Notebooks of one zip parsed at most (each may be as large as one notebook submission).
MOST_NOTEBOOKS_READ = 2


def _read_zip(path: Path, assignment: str, limits: IntakeLimits) -> Submission:
    problem = directory_problem(path, limits.max_zip_entries)
    if problem:
        raise Rejected(f"{code(path.name)} was refused: {problem}. Submit the zip the notebook's export cell writes.")
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise Rejected(f"{code(path.name)} is not a readable zip file ({code(exc)}). Export the notebook "
                       "again with its last cell and submit the zip it writes.") from None
    with zf:
        members = [i for i in zf.infolist() if not i.is_dir()]
        if len(members) > limits.max_zip_entries:
            raise Rejected(f"{code(path.name)} holds {len(members)} files; at most {limits.max_zip_entries} "
                           "are accepted. Submit the zip the notebook's export cell writes.")
        unsafe = [reason for i in members if (reason := _unsafe_member(i))]
        if unsafe:
            raise Rejected(f"{code(path.name)} was refused: " + "; ".join(unsafe[:5]) +
                           ". Submit the zip the notebook's export cell writes.")
        total = sum(i.file_size for i in members)
        packed = sum(i.compress_size for i in members) or 1
        if total > limits.max_zip_total_bytes or total / packed > limits.max_compression_ratio:
            raise Rejected(f"{code(path.name)} unpacks to {total / 2**20:.0f} MB; it was refused as too large.")
        notebooks = [i for i in members if i.filename.endswith(".ipynb")
                     and not any(part in (".ipynb_checkpoints", "__MACOSX") or part.startswith("._")
                                 for part in PurePosixPath(i.filename).parts)]
        # The export cell names the notebook after the assignment: only those are read when there are
        # any, and never more than a couple, so a zip of many large notebooks costs what one does.
        named = [i for i in notebooks if PurePosixPath(i.filename).name == f"{assignment}.ipynb"]
        to_read = named or notebooks
        if len(to_read) > MOST_NOTEBOOKS_READ:
            shown = ", ".join(code(i.filename) for i in to_read[:5]) + (" ..." if len(to_read) > 5 else "")
            raise Rejected(f"{code(path.name)} holds {len(to_read)} notebooks ({shown}); grading reads at most "
                           f"{MOST_NOTEBOOKS_READ}. Submit a zip with exactly one {assignment}.ipynb, as the export "
                           "cell makes it.")
        parsed = []
        for info in to_read:
            if info.file_size > limits.max_notebook_bytes:
                raise Rejected(f"{code(info.filename)} is too large ({info.file_size / 2**20:.0f} MB). "
                               "Clear its outputs and export again.")
            with zf.open(info) as handle:
                data = handle.read(limits.max_notebook_bytes + 1)
            parsed.append((info.filename, parse_notebook(data, f"{path.name}:{info.filename}")))
        ours = [(n, nb) for n, nb in parsed if _assignment_of(nb) == assignment
                or PurePosixPath(n).name == f"{assignment}.ipynb"]
        if len(ours) != 1:
            found = ", ".join(code(n) for n, _ in parsed) or "no notebook"
            want = "no notebook" if not ours else f"{len(ours)} notebooks"
            raise Rejected(f"{code(path.name)} holds {want} of the assignment {assignment!r} (found: {found}). "
                           f"Submit a zip with exactly one {assignment}.ipynb, as the export cell makes it.")
        name, nb = ours[0]
        others = sorted(i.filename for i in members if i.filename != name and i.filename not in EXPORT_FILES)
        notes = (f"The zip also holds files grading does not use: {', '.join(code(o) for o in others[:10])}"
                 + (" ..." if len(others) > 10 else ""),) if others else ()
        return Submission(f"{path.name}:{name}", "ipynb", nb, None, notes)


def read_submission(path: str | Path, assignment: str, limits: IntakeLimits = IntakeLimits()) -> Submission:
    """Read ``path`` (``.ipynb``, ``.py`` or ``.zip``) for ``assignment``, or raise ``Rejected``."""
    path = Path(path)
    # Only the file's own name is ever quoted: the folders above it are the instructor's.
    if path.is_dir():
        raise Rejected(f"{code(path.name)} is a folder with no submission in it (no .ipynb notebook, .py "
                       "script or export .zip): submit the zip the notebook's export cell makes.")
    if not path.is_file():
        raise Rejected(f"{code(path.name)} was not found among the submissions (or is not a regular file): "
                       "submit the zip the notebook's export cell makes.")
    try:
        _check_size(path, limits)
    except OSError as exc:
        raise Rejected(f"{code(path.name)} could not be read ({exc.strerror or type(exc).__name__}); submit it "
                       "again.") from None
    suffix = path.suffix.lower()
    if suffix == ".zip":
        return _read_zip(path, assignment, limits)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Rejected(f"{code(path.name)} could not be read ({exc.strerror or type(exc).__name__}); submit it "
                       "again.") from None
    if suffix == ".ipynb":
        nb = parse_notebook(data, path.name)
        named = _assignment_of(nb)
        if named not in (None, assignment):
            raise Rejected(f"{code(path.name)} is a notebook of the assignment {code(named)}, not {assignment!r}: "
                           "submit the notebook of this assignment.")
        return Submission(path.name, "ipynb", nb, None)
    if suffix == ".py":
        try:
            return Submission(path.name, "py", None, data.decode("utf-8"))
        except UnicodeDecodeError:
            raise Rejected(f"{code(path.name)} is not UTF-8 text; save it as UTF-8 and submit again.") from None
    raise Rejected(f"{code(path.name)}: submissions must be a .ipynb notebook, a .py script, or the .zip "
                   "the notebook's export cell makes.")

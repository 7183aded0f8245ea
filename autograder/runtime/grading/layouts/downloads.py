"""A whole class where one student's submission is expected: the LMS's download zip, or a folder.

An instructor naturally passes what the LMS handed over: the download zip itself
(Canvas's ``<course>-<assignment>_submissions.zip``, Moodle's
``<course>-<assignment>-<cmid>.zip``, Gradescope's ``assignment_<id>_export.zip``), or
the folder an unzip made of it, which is often one level above the class (Windows's
"Extract All" always makes ``<zip name>/``, and a Gradescope export holds a single
``assignment_<id>_export/`` folder, so ``X/X/...``). Graded as one student, a class
got one row, or a 20/20 for whichever notebook came first. These checks tell a
class apart from one submission by the LMS's own names, reading only names (a
zip's directory, a folder's listing), never contents.
"""
from __future__ import annotations

import shlex
import zipfile
from pathlib import Path, PurePosixPath

from autograder.runtime.grading.layouts import canvas, moodle
from autograder.runtime.grading.layouts.gradescope import METADATA_FILE
from autograder.runtime.grading.layouts.handed_in import ignored
from autograder.runtime.grading.zip_directory import directory_problem

#: Enough names to tell: a class shows itself in its first few.
_LOOK_AT = 200


def class_in_names(names: list[str], plain: bool = True) -> str:
    """Which LMS's class the relative paths ``names`` are, or "" if they are not a class.

    A class is a Gradescope export (its metadata file), Canvas files or Moodle folders or
    files of at least two different students, or (with ``plain``) notebooks and zips in two
    different folders (a class of per-student folders); one student's files are none of these.
    """
    paths = [PurePosixPath(n) for n in names[:_LOOK_AT * 10] if not ignored(PurePosixPath(n))]
    if any(p.name == METADATA_FILE for p in paths):
        return "a Gradescope export"
    canvas_people = {c.who for p in paths if (c := canvas.parse(p.name))}
    if len(canvas_people) > 1:
        return "a Canvas download"
    moodle_people = {m.who for p in paths for part in p.parts if (m := moodle.folder(part) or moodle.flat(part))}
    if len(moodle_people) > 1:
        return "a Moodle download"
    folders = {p.parts[0] for p in paths if len(p.parts) > 1 and p.suffix.lower() in (".ipynb", ".zip")}
    return "a class of per-student folders" if plain and len(folders) > 1 else ""


def class_in_zip(path: Path) -> str:
    """Which LMS's class the zip ``path`` holds (see :func:`class_in_names`), or ""."""
    if directory_problem(path):
        return ""                          # not opened here: intake refuses it, to the student
    try:
        with zipfile.ZipFile(path) as zf:
            names = [i.filename for i in zf.infolist()[:_LOOK_AT * 10] if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError):
        return ""                          # not a readable zip: intake says so, to the student
    found = class_in_names(names)
    tops = {PurePosixPath(n).parts[0] for n in names}
    if not found and len(tops) == 1 and all(len(PurePosixPath(n).parts) > 1 for n in names):
        # One folder around everything (a zipped class folder): what is inside it decides.
        found = class_in_names([str(PurePosixPath(*PurePosixPath(n).parts[1:])) for n in names])
    return found


def class_in_folder(folder: Path, plain: bool = True) -> str:
    """Which LMS's class ``folder`` holds, from its own listing and its subfolders' (see :func:`class_in_names`)."""
    names: list[str] = []
    try:
        for child in sorted(folder.iterdir())[:_LOOK_AT]:
            if child.is_dir() and not child.is_symlink():
                names += [f"{child.name}/{g.name}" for g in sorted(child.iterdir())[:_LOOK_AT]] or [f"{child.name}/"]
            else:
                names.append(child.name)
    except OSError:
        return ""
    return class_in_names(names, plain)


def refusal(path: Path, what: str) -> str:
    """The instructor's message for a download zip given where a folder is expected."""
    zip_name, folder = shlex.quote(path.name), shlex.quote(path.stem)
    return (f"{path} is {what} (the zip as downloaded), not one student's submission: unzip it and "
            f"grade the folder it makes, e.g. `unzip {zip_name} -d {folder}` then "
            f"`grader grade {folder} ...`. Nothing was graded.")

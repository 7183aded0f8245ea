"""What a handed-in file is, and what the student is told when it cannot be graded.

Every file a student handed in gets a row: a notebook, a script or an export zip is
graded; anything else (a PDF, a Canvas text entry or link, Moodle online text, a
Word file ...) is recorded as ``rejected`` with a sentence saying what was received
and what to hand in instead, so nobody looks like a non-submitter.
"""
from __future__ import annotations

from pathlib import Path, PurePath

from autograder.runtime.text import code

#: Files graded, by how much they look like the assignment: a notebook or the export
#: zip first, a script next (often a helper beside the notebook).
GRADABLE_RANK = {".ipynb": 2, ".zip": 2, ".py": 1}
#: Files an operating system or an unzip leaves in a folder: never anyone's submission.
SYSTEM_FILES = frozenset({".ds_store", "thumbs.db", "desktop.ini"})
SYSTEM_FOLDERS = frozenset({"__macosx", ".ipynb_checkpoints"})
#: What to hand in, as every refusal ends.
WHAT_TO_SUBMIT = "submit the .ipynb notebook or the zip the notebook's last cell writes"


def rank(path: PurePath) -> int:
    """2 for a notebook or an export zip, 1 for a script, 0 for what cannot be graded."""
    return GRADABLE_RANK.get(path.suffix.lower(), 0)


def ignored(relative: PurePath) -> bool:
    """A hidden file, an editor's checkpoint or what macOS and Windows leave behind."""
    return any(part.startswith(".") or part.lower() in SYSTEM_FOLDERS for part in relative.parts) \
        or relative.name.lower() in SYSTEM_FILES


def received(path: Path, kind: str = "") -> str:
    """What the student handed in, in a few words: "a PDF (`lm-head.pdf`)".

    ``kind`` is what the layout says the file is: ``text`` (a Canvas text entry),
    ``link`` (a Canvas URL entry) or ``onlinetext`` (Moodle's online text).
    """
    if kind == "text":
        return "a text entry typed into Canvas"
    if kind == "link":
        return "a web link submitted in Canvas"
    if kind == "onlinetext":
        return "online text typed into Moodle"
    if path.suffix.lower() == ".pdf":
        return f"a PDF ({code(path.name)})"
    return f"{code(path.name)}, which is not a notebook"


def refusal(path: Path, kind: str = "") -> str:
    """The student's sentence for a file that cannot be graded."""
    what = received(path, kind)
    extra = " (a link to Colab or GitHub cannot be opened by the grader)" if kind == "link" else ""
    return f"We received {what}{extra}; it cannot be graded: {WHAT_TO_SUBMIT}."


def instructor_note(path: Path, kind: str = "") -> str:
    """The gradebook's sentence for a student who handed in only what cannot be graded."""
    return f"handed in {received(path, kind)} and no notebook: rejected, nothing was graded"

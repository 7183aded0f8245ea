"""What `grader grade` prints is text on the instructor's terminal, whatever the file names say.

File names, ids and notes come from students and LMS exports. A name holding ``ESC ] 52 ; c ;
... BEL`` writes the terminal's clipboard when printed, a CSI sequence clears the screen or moves
the cursor, a C1 control is CSI on some terminals, a bidirectional override reorders what is read.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.runtime.text import terminal
from tests.adversarial import subprocess_env

ROOT = Path(__file__).resolve().parent.parent
#: Escape sequences and controls a file name can carry (OSC 52 clipboard write, CSI, C1 CSI, bidi).
HOSTILE = ("\x1b]52;c;UFdORUQ=\x07", "\x1b[2J\x1b[H", "\x9b31m", "\u202e", "\x1bP+q\x1b\\", "\r")
#: What must never reach the terminal: ESC, BEL, C1 controls, bidirectional controls, CR.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def test_terminal_escapes_every_control_and_keeps_the_rest():
    text = "".join(HOSTILE) + "José\tb\nc"
    shown = terminal(text)
    assert not UNSAFE.search(shown) and "\n" not in shown and "José" in shown
    assert "\\x1b]52;c;UFdORUQ=\\x07" in shown and "\\u202e" in shown and "\\x9b" in shown
    assert terminal("a\nb\tc", multiline=True) == "a\nb\tc"
    assert terminal("bad\udcffname") == "bad\\udcffname"


@pytest.mark.slow
def test_grader_grade_prints_no_control_sequence_from_file_names(tmp_path):
    from autograder.build import build
    (result,) = build(["lm-head"], tmp_path / "dist", None, verify=False)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "x.ipynb").write_text("{}")
    folder = tmp_path / "class"
    folder.mkdir()
    for number, piece in enumerate(HOSTILE):
        # Unreadable submissions, whose rejection notes quote their names; a link leading out of
        # the folder (skipped and named); two names that make the same id (a warning names both).
        (folder / f"s{number}{piece}.ipynb").write_text("{not json")
        os.symlink(outside / "x.ipynb", folder / f"link{number}{piece}.ipynb")
        (folder / f"twin{number}{piece}.py").write_bytes(b"\xff not text")
        (folder / f"twin{number}{'_' * len(piece)}.py").write_bytes(b"\xff not text")
    done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a",
                           str(result.autograder_zip), "-o", str(tmp_path / "out"), "--workers", "1"],
                          cwd=ROOT, env=subprocess_env(True), capture_output=True, timeout=300)
    printed = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert done.returncode == 1 and "no submission could be graded" in printed, printed
    assert "skipped" in printed and "link0" in printed, printed
    found = sorted({repr(c) for c in UNSAFE.findall(printed)})
    assert not found, f"grader grade printed control characters {found}:\n{printed!r}"[:3000]
    assert "\\x1b]52;c;UFdORUQ=\\x07" in printed, "the names should still be shown, escaped"

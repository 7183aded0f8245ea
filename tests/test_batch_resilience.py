"""A grading process that dies mid-batch costs its student a row marked error, never the batch.

The white-box red team got grading processes OOM-killed (memory held
outside any process's limits), and ``grader grade`` then waited forever
with no gradebook: ``Pool.imap_unordered`` loses a task whose process dies.
Here the test plays the OOM killer: it finds the grading process busy with
a submission stuck in an endless loop, and kills it with SIGKILL.
"""
from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from autograder.runtime.sandbox import isolation as iso
from autograder.runtime.sandbox import procs
from tests.adversarial import subprocess_env
from tests.cohort import _function_cells

pytestmark = pytest.mark.slow

#: How long the batch may take once its grading process was killed (the old pool never returned).
FINISH_SECONDS = 90


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    (result,) = build(["lm-head"], tmp_path_factory.mktemp("dist"), None, verify=False)
    return result


def _busy_worker(cli: int) -> int | None:
    """A sandboxed process of the batch (a fresh uid, below ``cli``) that has used a second of CPU."""
    for pid, uid in procs._live_uids():
        if not iso.UID_FIRST <= uid < iso.UID_FIRST + iso.UID_COUNT:
            continue
        try:
            ticks = int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[11])
        except (OSError, IndexError, ValueError):
            continue
        if ticks >= os.sysconf("SC_CLK_TCK") and _grading_process(pid, cli) is not None:
            return pid
    return None


def _grading_process(pid: int, cli: int) -> int | None:
    """The ancestor of ``pid`` whose parent is ``cli``: the grading process it works for."""
    while pid > 1:
        info = procs._read_info(pid)
        if info is None:
            return None
        if info.ppid == cli:
            return pid
        pid = info.ppid
    return None


def test_a_killed_grading_process_gives_an_error_row_and_the_class_its_gradebook(built, tmp_path):
    solution = nbformat.read(built.solution, as_version=4)
    folder = tmp_path / "class"
    folder.mkdir()
    nbformat.write(solution, folder / "alice.ipynb")
    stuck = nbformat.read(built.solution, as_version=4)
    cell = _function_cells(stuck)["softmax"]
    stuck.cells[cell].source = "def softmax(x, axis=-1):\n    while True:\n        pass\n"
    nbformat.write(stuck, folder / "mallory.ipynb")
    nbformat.write(solution, folder / "zoe.ipynb")
    out = tmp_path / "out"
    cli = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a",
                            str(built.autograder_zip), "-o", str(out), "--timeout", "20", "--workers", "2"],
                           env=subprocess_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        worker = None
        while worker is None and time.monotonic() < deadline and cli.poll() is None:
            worker = _busy_worker(cli.pid)
            time.sleep(0.2)
        assert worker is not None, "the endless loop never showed up in a sandbox"
        grading = _grading_process(worker, cli.pid)
        stuck_uid = procs._live_uid(worker)
        os.kill(grading, signal.SIGKILL)
        killed = time.monotonic()
        log, _ = cli.communicate(timeout=FINISH_SECONDS)
    except subprocess.TimeoutExpired:
        os.killpg(cli.pid, signal.SIGKILL)
        cli.communicate()
        pytest.fail(f"the batch did not finish within {FINISH_SECONDS} s of its grading process being killed")
    assert time.monotonic() - killed < FINISH_SECONDS
    with open(out / "gradebook.csv", newline="") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    assert set(book) == {"alice", "mallory", "zoe"}, log.decode(errors="replace")[-2000:]
    assert book["alice"]["status"] == book["zoe"]["status"] == "graded"
    assert book["alice"]["total"] == book["zoe"]["total"] == book["alice"]["possible"]
    assert book["mallory"]["status"] == "error"
    assert "grading process was killed by SIGKILL" in book["mallory"]["note"]
    # the stuck submission's sandbox died with the process that ran it
    assert stuck_uid is not None and procs.of_uid(stuck_uid) == []

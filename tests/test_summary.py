"""The terminal summary of ``grader grade``: the sandbox first, grammatical counts, no word cut without a mark."""
from __future__ import annotations

import pytest

from autograder.runtime.grading.bulk import BatchResult
from autograder.runtime.grading.summary import clip, nothing_graded, summary_lines
from autograder.runtime.sandbox.policy import Clearance


def _row(student: str, status: str, mistakes: str = "", flags: str = "", note: str = "") -> dict:
    return {"student": student, "total": "0", "possible": "20", "status": status, "mistakes": mistakes,
            "flags": flags, "note": note}


def test_clip_cuts_at_a_word_and_marks_the_cut():
    text = "targets-not-shifted; gradient-missing-one-over-n; head-bias-missing"
    assert clip(text, 200) == text
    short = clip(text, 30)
    assert short.endswith("…") and len(short) <= 30 and text.startswith(short[:-1].rstrip())
    assert short[:-1] in ("targets-not-shifted",)
    assert clip("a" * 40, 10) == "a" * 9 + "…"


def test_the_sandbox_comes_first_and_a_weaker_one_is_a_warning():
    strong = BatchResult([_row("alice", "graded")], 1, 0, False, Clearance("bwrap", "bubblewrap: namespaces"))
    lines = summary_lines(strong)
    assert lines[0].startswith("Sandbox: bwrap") and not any("WARNING" in line for line in lines)
    weak = BatchResult([_row("alice", "graded")], 1, 0, False, Clearance("user", "fresh uid", trusted=True))
    lines = summary_lines(weak)
    assert lines[0] == "Sandbox: user (trusted code): fresh uid" and lines[1].startswith("WARNING")


def test_counts_are_grammatical_and_rejections_are_not_counted_as_graded():
    one = BatchResult([_row("alice", "rejected", note="not a zip")], 0, 0, False, Clearance("bwrap", "b"))
    assert summary_lines(one)[-1] == "1 submission: 1 rejected; 0 graded in this run, 0 already graded before."
    assert nothing_graded(one) == ("no submission could be graded: 1 submission, none of them readable by the "
                                   "grader (the first says: not a zip).")
    many = BatchResult([_row("a", "graded"), _row("b", "graded"), _row("c", "timeout"), _row("d", "error")],
                       3, 1, False, Clearance("bwrap", "b"))
    assert summary_lines(many)[-1] == ("4 submissions: 2 graded, 1 timed out, 1 grader error; "
                                       "3 graded in this run, 1 already graded before.")
    assert nothing_graded(many) is None


def test_a_probed_user_level_is_a_note_not_a_trusted_code_warning():
    """Once said 'accepted with --trusted-code' for every level below bubblewrap, flag or not."""
    probed = BatchResult([_row("alice", "graded")], 1, 0, False, Clearance("user", "fresh uid"))
    lines = summary_lines(probed)
    assert not any("trusted" in line or "WARNING" in line for line in lines)
    assert lines[1].startswith("Note: graded at the 'user' level") and "one at a time" in lines[1]


def test_below_bubblewrap_submissions_are_graded_one_at_a_time(tmp_path, monkeypatch):
    """Workers running side by side at the user level share /tmp, /dev/shm and Unix socket names
    (two submissions talked through them): the batch then runs a single grading process."""
    from autograder.runtime.grading import bulk
    from autograder.runtime.sandbox import policy
    asked = []

    class Stop(Exception):
        pass

    def processes(workers, *args, **kwargs):
        asked.append(workers)
        raise Stop

    monkeypatch.setattr(bulk, "GradingProcesses", processes)
    monkeypatch.setattr(bulk, "load_autograder", lambda *a: type("AG", (), {"suite": None, "digest": "d",
                                                                              "assignment": "lm-head",
                                                                              "class_probes": None})())
    for level, expected in (("user", 1), ("bwrap", 2)):
        monkeypatch.setattr(bulk, "clear", lambda *a, level=level, **k: policy.Clearance(level, "test"))
        monkeypatch.setattr(bulk, "world_writable_dirs", lambda: ())
        monkeypatch.setattr(bulk, "staged_runtime", lambda: None)
        with pytest.raises(Stop):
            bulk.grade_entries([], tmp_path / "zip", tmp_path / f"out-{level}", workers=2)
        assert asked[-1] == expected, level

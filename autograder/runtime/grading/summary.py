"""The terminal summary of a ``grader grade`` run: plain lines, the sandbox first."""
from __future__ import annotations

from autograder.runtime.grading.bulk import BatchResult
from autograder.runtime.grading.outcome import STATUSES, points

#: How the summary names each status, singular and plural.
_STATUS_WORDS = {"graded": ("graded", "graded"), "rejected": ("rejected", "rejected"),
                 "timeout": ("timed out", "timed out"), "error": ("grader error", "grader errors")}
#: Width of the mistakes column in the table.
MISTAKES_WIDTH = 48


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, cut at a word boundary with an ellipsis."""
    if len(text) <= width:
        return text
    cut = text[:width - 1]
    if " " in cut or ";" in cut:
        cut = cut[:max(cut.rfind(" "), cut.rfind(";"))].rstrip(" ;")
    return cut + "…"


def plural(count: int, word: str, words: str | None = None) -> str:
    return f"{count} {word if count == 1 else (words or word + 's')}"


def sandbox_lines(result: BatchResult) -> list[str]:
    """The level student code ran at, and a warning when it is weaker than bubblewrap."""
    c = result.clearance
    lines = [f"Sandbox: {c.label}: {c.detail}"]
    if c.level != "bwrap" and c.trusted:
        lines.append(f"WARNING: graded at the weaker '{c.level}' level, accepted with --trusted-code: student "
                     "code could read what this machine's other users can read. Use it only for code you trust.")
    elif c.level != "bwrap":
        lines.append(f"Note: graded at the '{c.level}' level (bubblewrap is not usable here): a probe found "
                     "nothing student code must not read, and submissions were graded one at a time, since "
                     "at this level they would share /tmp and /dev/shm.")
    return lines


def summary_lines(result: BatchResult) -> list[str]:
    """The sandbox, one row per student, and the counts."""
    rows = result.rows
    lines = sandbox_lines(result)
    lines.append(f"{'student':<24}{'total':>8}{'possible':>10}  {'status':<10}{'flags / mistakes'}")
    for r in rows:
        remarks = "; ".join(x for x in (r.get("flags", ""), r["mistakes"]) if x)
        lines.append(f"{clip(r['student'], 23):<24}{r['total']:>8}{r['possible']:>10}  {r['status']:<10}"
                     f"{clip(remarks, MISTAKES_WIDTH)}")
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    parts = [plural(n, *_STATUS_WORDS[s]) for s, n in counts.items() if n]
    lines.append(f"{plural(len(rows), 'submission')}: {', '.join(parts) or 'none'}; "
                 f"{result.graded} graded in this run, {result.skipped} already graded before.")
    return lines + lms_lines(result)


#: How many names a summary list shows before "and N more".
LIST_LENGTH = 12


def listing(title: str, items: list[str]) -> list[str]:
    """A titled list, one item a line (names hold commas: "Hopper, Grace"), the rest counted."""
    if not items:
        return []
    shown = [f"    {clip(item, 160)}" for item in items[:LIST_LENGTH]]
    more = [f"    ... and {len(items) - LIST_LENGTH} more"] if len(items) > LIST_LENGTH else []
    return [f"  {title} ({len(items)}):", *shown, *more]


def lms_lines(result: BatchResult) -> list[str]:
    """Where the grades for the LMS went, and everything the LMS files do not say by themselves."""
    lines = []
    if result.canvas_csv is not None:
        lines.append(f"Canvas import file: {result.canvas_csv}")
    fill = result.canvas
    if fill is not None:
        lines.append(f"Canvas: filled {plural(fill.filled, 'student')} in column {fill.column!r}: {fill.path}")
        if fill.scaled:
            lines.append(f"  grades scaled from {points(fill.scaled[0])} to the column's {points(fill.scaled[1])} "
                         "points (--canvas-scale)")
        lines += listing("left blank, not one to one", fill.ambiguous)
        lines += listing("scores already in the column, replaced", fill.changed)
        lines += listing("scores already in the column, kept (--canvas-keep-scores)", fill.kept)
        lines += listing("not in the Canvas export", fill.submissions_without_student)
        lines += listing("no submission graded", fill.students_without_submission)
    moodle = result.moodle
    if moodle is not None:
        for path in moodle.written:
            lines.append(f"Moodle: {path}")
        for reason in moodle.not_written:
            lines.append(f"Moodle: not written: {reason}")
        if moodle.written:
            lines.append(f"  grades out of {points(moodle.max_grade)}: the Moodle assignment's Maximum grade must be "
                         f"{points(moodle.max_grade)} (Moodle skips a grade above it; its default is 100); "
                         "--moodle-max-grade sets it")
        lines += listing("in neither Moodle file (no e-mail, ID number or Moodle participant)", moodle.left_out)
    return lines


def nothing_graded(result: BatchResult) -> str | None:
    """Why no submission could be graded, or ``None`` when at least one was."""
    rows = result.rows
    if any(r["status"] in ("graded", "timeout") for r in rows):
        return None
    if not rows:
        return "no submission was graded."
    first = next((r["note"] for r in rows if r["note"]), "")
    return (f"no submission could be graded: {plural(len(rows), 'submission')}, none of them readable by the "
            f"grader" + (f" (the first says: {first})" if first else "") + ".")

"""The terminal summary of a ``grader grade`` run: plain lines, the sandbox first."""
from __future__ import annotations

from autograder.runtime.grading.bulk import BatchResult
from autograder.runtime.grading.outcome import STATUSES

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


def lms_lines(result: BatchResult) -> list[str]:
    """Where the grades for the LMS went, and who could not be matched there."""
    lines = []
    fill = result.canvas
    if fill is not None:
        lines.append(f"Canvas: filled {plural(fill.filled, 'student')} in column {fill.column!r}: {fill.path}")
        if fill.submissions_without_student:
            lines.append(f"  not in the Canvas export ({len(fill.submissions_without_student)}): "
                         + clip(", ".join(fill.submissions_without_student), 200))
        if fill.students_without_submission:
            lines.append(f"  no submission graded ({len(fill.students_without_submission)}): "
                         + clip(", ".join(fill.students_without_submission), 200))
    for path in result.moodle:
        lines.append(f"Moodle: {path}")
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

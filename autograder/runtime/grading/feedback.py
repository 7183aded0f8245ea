"""The two renderings of a grading outcome for the student: Gradescope's
results.json and a feedback.md they can read."""
from __future__ import annotations

from autograder.runtime.grading.outcome import GradeOutcome, ItemOutcome, points
from autograder.runtime.text import block

#: How much of the student's printed output is kept in the feedback.
STDOUT_FEEDBACK_CHARS = 4000

def _summary(outcome: GradeOutcome) -> str:
    lines = [f"**{outcome.assignment}**: {points(outcome.total)} / {points(outcome.possible)} points."]
    if outcome.status != "graded":
        lines.append(f"Status: **{outcome.status}**.")
    lines += [f"- {note}" for note in outcome.notes]
    for _, text in outcome.group_notes:
        # The instructor's own Markdown, written once for everyone whose code does the same thing.
        lines += ["", "**A note from your instructor:**", "", text]
    if outcome.stdout.strip():
        # Output the sandbox did not keep is counted in a note of the grader's own (never
        # read back from this text, which the student wrote).
        printed = outcome.stdout
        cut = " (shortened)" if len(printed) > STDOUT_FEEDBACK_CHARS else ""
        lines += ["", f"What your notebook printed{cut}:", "", block(printed[:STDOUT_FEEDBACK_CHARS])]
    lines += ["", f"_Graded in a sandbox ({outcome.isolation})._"]
    if outcome.isolation_note:
        lines.append(f"_{outcome.isolation_note}_")
    return "\n".join(lines)


def results_json(outcome: GradeOutcome, visibility: str = "visible") -> dict:
    """Gradescope's results.json for ``outcome`` (score, tests, markdown output)."""
    tests = [{
        "name": f"{item.question}: {item.test}",
        "score": round(item.score, 2),
        "max_score": round(item.points, 2),
        "status": "passed" if item.passed else "failed",
        "output": item.message if not item.passed else "Passed.",
        "output_format": "md",
        "visibility": visibility,
        "tags": [item.question],
        "extra_data": {"question": item.question, "test": item.test, "mistakes": list(item.mistakes)},
    } for item in outcome.items]
    return {
        "score": round(outcome.total, 2),
        "output": _summary(outcome),
        "output_format": "md",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"student": outcome.student, "status": outcome.status,
                       "isolation": outcome.isolation, "assignment": outcome.assignment,
                       "mistakes": list(outcome.mistakes), "possible": outcome.possible,
                       "flags": list(outcome.flags), "groups": [g for g, _ in outcome.group_notes]},
    }


def feedback_markdown(outcome: GradeOutcome) -> str:
    """A readable feedback page: the summary, then every test of each question that lost points.

    Every lost point is listed: a test whose message repeats an earlier one
    of the same question gets a line of its own that refers back to it.
    """
    parts = [f"# Feedback: {outcome.assignment}", "", _summary(outcome), ""]
    by_question: dict[str, list[ItemOutcome]] = {}
    for item in outcome.items:
        by_question.setdefault(item.question, []).append(item)
    for question, items in by_question.items():
        earned = sum(i.score for i in items)
        possible = sum(i.points for i in items)
        parts.append(f"## {question}: {points(earned)} / {points(possible)}")
        failed = [i for i in items if not i.passed]
        if not failed:
            parts += ["All hidden tests passed.", ""]
            continue
        parts += [f"{points(possible - earned)} points lost in {len(failed)} of {len(items)} tests.", ""]
        first_with: dict[str, str] = {}
        for item in failed:
            head = f"- **{item.test}** ({points(item.points)} points)"
            if item.message in first_with:      # the same problem: one line, no repeated paragraph
                parts.append(f"{head}: the same problem as in {first_with[item.message]}.")
                continue
            first_with[item.message] = f"**{item.test}**"
            parts += [head, "", _indent(item.message), ""]
        parts.append("")
    return "\n".join(parts).rstrip() + "\n"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in text.splitlines())

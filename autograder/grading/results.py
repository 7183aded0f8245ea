"""A grading outcome as plain data, and its two renderings: Gradescope's
results.json and a feedback.md the student can read."""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

#: How much of the student's printed output is kept in the feedback.
STDOUT_FEEDBACK_CHARS = 4000

#: What became of a submission, in the order summaries and reports list them.
STATUSES: tuple[str, ...] = ("graded", "rejected", "timeout", "error")
#: The gradebook's columns before and after its one column per question.
LEADING_COLUMNS: tuple[str, ...] = ("student", "name", "email", "total", "possible")
TRAILING_COLUMNS: tuple[str, ...] = ("status", "mistakes", "submission", "note")

#: The notice the sandbox appends when it dropped output (``OutputBuffer.text``).
_DROPPED = re.compile(r"\n\[output truncated: the first (\d+) bytes are shown; about (\d+) more were not kept\]\s*$")


@dataclass(frozen=True)
class ItemOutcome:
    """One hidden test's verdict for one submission."""

    question: str
    test: str
    points: float
    passed: bool
    message: str = ""
    mistakes: tuple[str, ...] = ()

    @property
    def score(self) -> float:
        return self.points if self.passed else 0.0


@dataclass(frozen=True)
class GradeOutcome:
    """Everything known about one graded (or refused) submission."""

    student: str
    assignment: str
    status: str                         # one of STATUSES
    isolation: str
    items: tuple[ItemOutcome, ...] = ()
    possible: float = 0.0
    notes: tuple[str, ...] = ()
    stdout: str = ""
    seconds: float = 0.0
    submission: str = ""

    @property
    def total(self) -> float:
        return round(sum(i.score for i in self.items), 6)

    @property
    def mistakes(self) -> tuple[str, ...]:
        """Distinct diagnosed mistakes, in the order they were first seen."""
        seen: dict[str, None] = {}
        for item in self.items:
            for slug in item.mistakes:
                seen.setdefault(slug, None)
        return tuple(seen)

    def question_scores(self) -> dict[str, float]:
        scores: dict[str, float] = {}
        for item in self.items:
            scores[item.question] = round(scores.get(item.question, 0.0) + item.score, 6)
        return scores

    def to_dict(self) -> dict:
        data = asdict(self)
        data["items"] = [asdict(i) for i in self.items]
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "GradeOutcome":
        items = tuple(ItemOutcome(**{**i, "mistakes": tuple(i.get("mistakes", ()))}) for i in data["items"])
        return cls(**{**data, "items": items, "notes": tuple(data.get("notes", ()))})


def _summary(outcome: GradeOutcome) -> str:
    lines = [f"**{outcome.assignment}**: {outcome.total:g} / {outcome.possible:g} points."]
    if outcome.status != "graded":
        lines.append(f"Status: **{outcome.status}**.")
    lines += [f"- {note}" for note in outcome.notes]
    if outcome.stdout.strip():
        # The sandbox ends output it did not keep with a notice; keep that notice
        # in view however much of the output itself is cut here.
        printed, found = outcome.stdout, _DROPPED.search(outcome.stdout)
        if found:
            printed = printed[:found.start()]
        shown = printed[:STDOUT_FEEDBACK_CHARS]
        cut = " (shortened)" if len(printed) > STDOUT_FEEDBACK_CHARS or found else ""
        lines += ["", f"What your notebook printed{cut}:", "", "```", shown.rstrip(), "```"]
        if found:
            kept, dropped = int(found.group(1)), int(found.group(2))
            lines += ["", f"Output truncated: your notebook printed about {kept + dropped:,} bytes; the grader "
                      f"kept the first {kept:,} and dropped the rest."]
    lines += ["", f"_Graded in a sandbox ({outcome.isolation})._"]
    return "\n".join(lines)


def results_json(outcome: GradeOutcome, visibility: str = "visible") -> dict:
    """Gradescope's results.json for ``outcome`` (score, tests, markdown output)."""
    tests = [{
        "name": f"{item.question}: {item.test}",
        "score": round(item.score, 4),
        "max_score": round(item.points, 4),
        "status": "passed" if item.passed else "failed",
        "output": item.message if not item.passed else "Passed.",
        "output_format": "md",
        "visibility": visibility,
        "tags": [item.question],
        "extra_data": {"question": item.question, "test": item.test, "mistakes": list(item.mistakes)},
    } for item in outcome.items]
    return {
        "score": round(outcome.total, 4),
        "output": _summary(outcome),
        "output_format": "md",
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"student": outcome.student, "status": outcome.status,
                       "isolation": outcome.isolation, "assignment": outcome.assignment,
                       "mistakes": list(outcome.mistakes), "possible": outcome.possible},
    }


def feedback_markdown(outcome: GradeOutcome) -> str:
    """A readable feedback page: the summary, then each question's failed tests."""
    parts = [f"# Feedback: {outcome.assignment}", "", _summary(outcome), ""]
    by_question: dict[str, list[ItemOutcome]] = {}
    for item in outcome.items:
        by_question.setdefault(item.question, []).append(item)
    for question, items in by_question.items():
        earned = sum(i.score for i in items)
        possible = sum(i.points for i in items)
        parts.append(f"## {question}: {earned:g} / {possible:g}")
        failed = [i for i in items if not i.passed]
        if not failed:
            parts += ["All hidden tests passed.", ""]
            continue
        shown: set[str] = set()
        for item in failed:
            if item.message in shown:      # one parametrized failure is enough to read
                continue
            shown.add(item.message)
            parts += [f"- **{item.test}** ({item.points:g} points)", "", _indent(item.message), ""]
    return "\n".join(parts).rstrip() + "\n"


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" if line else "" for line in text.splitlines())

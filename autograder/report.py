"""Class report: one self-contained HTML page from the folder ``grader grade`` writes.

The roster, statuses, per-question scores and diagnosed mistakes come from
``OUT/gradebook.csv``; per-test verdicts come from each ``OUT/<student>/results.json``
(Gradescope format). A student folder may lack ``results.json`` (a submission
rejected before grading), so the gradebook alone decides who is in the class.

The page is one file with nothing to fetch: the plots are PNGs drawn with
matplotlib and embedded as ``data:`` URIs, the styles are inline, and a
Content-Security-Policy forbids every other source, so a stray external link
shows up as a browser error instead of a silent request.
"""
from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator
from statistics import mean, median

import jinja2
from markupsafe import Markup, escape
# The object-oriented API draws on an Agg canvas without pyplot's global state,
# so the report works with no display and never touches the user's backend.
from matplotlib.figure import Figure

from autograder.runtime.errors import GraderError
# The statuses ``grader grade`` writes (only ``graded`` submissions enter the
# per-question and per-test rates) and the gradebook's fixed columns.
from autograder.runtime.grading.gradebook import LEADING_COLUMNS, TRAILING_COLUMNS
from autograder.runtime.grading.outcome import STATUSES
from autograder.runtime.grading.outcome import Diagnosis, read_record
from autograder.resources import templates_dir

GRADEBOOK_NAME = "gradebook.csv"
RESULTS_NAME = "results.json"
REPORT_NAME = "report.html"
TEMPLATE_NAME = "report/report.html.j2"

#: How many of the most frequent mistakes the page explains; the rest are counted.
TOP_MISTAKES = 15

#: One colour per status, shared by the histogram and the page's legend.
STATUS_COLOURS: dict[str, str] = {
    "graded": "#3b6ea8", "rejected": "#9a9a9a", "timeout": "#d98c2b", "error": "#b5443b",
}

_REGRADE_HINT = "run `grader grade SUBMISSIONS -o OUT` again to rewrite it"


class ReportError(GraderError):
    """The grading output folder cannot be turned into a class report."""


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class Submission:
    """One row of the gradebook.

    Attributes:
        scores: points per question; ``None`` where the cell is empty (a
            submission rejected before grading has no per-question scores).
        mistakes: slugs of diagnosed mistakes, possibly unknown to this catalogue.
    """

    student: str
    name: str
    email: str
    total: float
    possible: float
    scores: dict[str, float | None]
    status: str
    mistakes: tuple[str, ...]
    submission: str
    note: str


@dataclass(frozen=True)
class Gradebook:
    """The whole gradebook: its question columns in order, and one row per student."""

    path: Path
    questions: tuple[str, ...]
    submissions: tuple[Submission, ...]


@dataclass(frozen=True)
class Verdict:
    """One hidden test's outcome for one student, from ``results.json``."""

    question: str
    test: str
    score: float
    max_score: float
    passed: bool
    mistakes: tuple[str, ...]


@dataclass(frozen=True)
class ClassResults:
    """Every readable ``results.json`` of the roster, and what could not be read.

    Attributes:
        verdicts: per student, that student's test verdicts in file order.
        assignment: the assignment named in the first readable file, if any.
        unreadable: per student, why their ``results.json`` was skipped.
    """

    verdicts: dict[str, tuple[Verdict, ...]]
    assignment: str | None
    unreadable: dict[str, str]


def _parse_number(cell: str, column: str, line: int, path: Path) -> float:
    try:
        value = float(cell)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ReportError(f"{path}, line {line}: column {column!r} should be a plain decimal number, "
                          f"found {cell!r}; {_REGRADE_HINT}")
    return value


def _question_columns(header: list[str], path: Path) -> tuple[str, ...]:
    """The question columns between ``possible`` and ``status``, after checking the fixed ones."""
    n_fixed = len(LEADING_COLUMNS) + len(TRAILING_COLUMNS)
    if (len(header) < n_fixed or tuple(header[:len(LEADING_COLUMNS)]) != LEADING_COLUMNS
            or tuple(header[-len(TRAILING_COLUMNS):]) != TRAILING_COLUMNS):
        expected = ",".join((*LEADING_COLUMNS, "<one column per question>", *TRAILING_COLUMNS))
        raise ReportError(f"{path} does not look like a gradebook from `grader grade`: expected the header "
                          f"{expected}, found {','.join(header)}; {_REGRADE_HINT}")
    questions = tuple(header[len(LEADING_COLUMNS):-len(TRAILING_COLUMNS)])
    repeated = sorted(q for q, n in Counter(questions).items() if n > 1)
    if repeated:
        raise ReportError(f"{path}: question column(s) {', '.join(repeated)} appear more than once; "
                          f"{_REGRADE_HINT}")
    return questions


def _parse_row(record: dict[str, str], questions: tuple[str, ...], line: int, path: Path) -> Submission:
    status = record["status"].strip()
    if status not in STATUSES:
        raise ReportError(f"{path}, line {line}: status {status!r} is not one of {', '.join(STATUSES)}; "
                          f"{_REGRADE_HINT}")
    student = record["student"].strip()
    if not student:
        raise ReportError(f"{path}, line {line}: the student column is empty; {_REGRADE_HINT}")
    scores = {q: _parse_number(record[q], q, line, path) if record[q].strip() else None for q in questions}
    return Submission(
        student=student,
        name=record["name"],
        email=record["email"],
        total=_parse_number(record["total"], "total", line, path),
        possible=_parse_number(record["possible"], "possible", line, path),
        scores=scores,
        status=status,
        mistakes=tuple(slug.strip() for slug in record["mistakes"].split(";") if slug.strip()),
        submission=record["submission"],
        note=record["note"],
    )


def _gradebook_text(path: Path) -> str:
    """The gradebook's text; raises ``ReportError`` if it is missing, unreadable or blank."""
    if not path.is_file():
        raise ReportError(f"no gradebook at {path}: pass the folder that `grader grade` wrote "
                          f"(it holds {GRADEBOOK_NAME} and one folder per student), "
                          f"or run `grader grade SUBMISSIONS -o {path.parent}` first")
    try:
        # utf-8-sig: a gradebook saved again by a spreadsheet program often gains a byte-order mark.
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReportError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}); {_REGRADE_HINT}") from exc
    except OSError as exc:
        raise ReportError(f"cannot read {path}: {exc.strerror or exc}; check that it is readable") from exc
    if not text.strip():
        raise ReportError(f"{path} is empty; {_REGRADE_HINT}")
    return text


def _records(text: str, path: Path) -> Iterator[tuple[int, list[str]]]:
    """The non-blank CSV records of ``text`` with their line numbers; a CSV error names its line."""
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        for cells in rows:
            if any(cell.strip() for cell in cells):
                yield rows.line_num, cells
    except csv.Error as exc:
        raise ReportError(f"{path}, line {rows.line_num}: not valid CSV ({exc}); {_REGRADE_HINT}") from exc


def read_gradebook(path: Path) -> Gradebook:
    """Read and check ``gradebook.csv``.

    Raises:
        ReportError: the file is missing, unreadable, empty, not UTF-8 or not
            CSV, has a different header, a row of the wrong length, a bad
            number or status, no students, or the same student twice.
    """
    records = _records(_gradebook_text(path), path)
    _, header = next(records)  # the text is not blank, so there is a first record
    header = [column.strip() for column in header]
    questions = _question_columns(header, path)
    submissions: list[Submission] = []
    seen: set[str] = set()
    for line, cells in records:
        if len(cells) != len(header):
            raise ReportError(f"{path}, line {line}: expected {len(header)} cells like the header, "
                              f"found {len(cells)}; {_REGRADE_HINT}")
        submission = _parse_row(dict(zip(header, cells)), questions, line, path)
        if submission.student in seen:
            raise ReportError(f"{path}, line {line}: student {submission.student!r} appears twice; "
                              f"{_REGRADE_HINT}")
        seen.add(submission.student)
        submissions.append(submission)
    if not submissions:
        raise ReportError(f"{path} has a header but no students; {_REGRADE_HINT}")
    return Gradebook(path, questions, tuple(submissions))


def _verdict(test: dict) -> Verdict:
    """One Gradescope test entry; ``extra_data`` names its question and test, the name is the fallback."""
    extra = test.get("extra_data") or {}
    name = str(test.get("name", ""))
    tags = test.get("tags") or []
    return Verdict(
        question=str(extra.get("question") or (tags[0] if tags else "")),
        test=str(extra.get("test") or name),
        score=float(test.get("score", 0.0)),
        max_score=float(test.get("max_score", 0.0)),
        passed=test.get("status") == "passed",
        mistakes=tuple(str(slug) for slug in extra.get("mistakes") or ()),
    )


def read_results(path: Path) -> tuple[tuple[Verdict, ...], str | None]:
    """The test verdicts and assignment name of one ``results.json``.

    Raises:
        ValueError: the file is not JSON in Gradescope's format (``tests`` a list of objects).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("tests"), list):
        raise ValueError("no list of tests")
    if not all(isinstance(test, dict) for test in data["tests"]):
        raise ValueError("a test entry is not an object")
    assignment = (data.get("extra_data") or {}).get("assignment")
    return tuple(_verdict(test) for test in data["tests"]), (str(assignment) if assignment else None)


def _results_path(out_dir: Path, student: str) -> Path | None:
    # A student id is used as a folder name; one that is not a plain name must not reach outside OUT.
    if Path(student).name != student or student in (".", ".."):
        return None
    return out_dir / student / RESULTS_NAME


def read_class_results(out_dir: Path, gradebook: Gradebook) -> ClassResults:
    """Read the ``results.json`` of every student in the gradebook.

    A missing file is normal (rejected before grading) and an unreadable one
    is reported on the page, not raised: the rest of the class still deserves a report.
    """
    verdicts: dict[str, tuple[Verdict, ...]] = {}
    unreadable: dict[str, str] = {}
    assignment: str | None = None
    for submission in gradebook.submissions:
        path = _results_path(out_dir, submission.student)
        if path is None or not path.is_file():
            continue
        try:
            tests, named = read_results(path)
        except (OSError, UnicodeDecodeError, ValueError, TypeError, AttributeError) as exc:
            unreadable[submission.student] = str(exc) or type(exc).__name__
            continue
        verdicts[submission.student] = tests
        assignment = assignment or named
    return ClassResults(verdicts, assignment, unreadable)


# --------------------------------------------------------------------------- statistics


def _test_label(question: str, test: str) -> str:
    """A test as Gradescope names it: ``q4: test_large_offsets``."""
    return f"{question}: {test}" if question else test


@dataclass(frozen=True)
class QuestionStat:
    """Mean points of one question over the graded submissions that have a score for it.

    ``max_points`` comes from the tests' ``max_score`` in ``results.json``;
    it is ``None`` when no results file names the question.
    """

    question: str
    graded: int
    mean_points: float | None
    max_points: float | None

    @property
    def fraction(self) -> float | None:
        """Mean score as a fraction of the question's points, when both are known."""
        if self.mean_points is None or not self.max_points:
            return None
        return self.mean_points / self.max_points


@dataclass(frozen=True)
class PassRate:
    """How many graded submissions passed one hidden test."""

    question: str
    test: str
    passed: int
    attempts: int

    @property
    def label(self) -> str:
        """The test's name as Gradescope shows it."""
        return _test_label(self.question, self.test)

    @property
    def rate(self) -> float:
        """Fraction of attempts that passed."""
        return self.passed / self.attempts


@dataclass(frozen=True)
class MistakeStat:
    """One diagnosed mistake: how many students made it, and the catalogue's words for it.

    A slug unknown to this catalogue (a gradebook from another version) keeps
    its slug as title and ``known`` is false.
    """

    slug: str
    count: int
    title: str
    function: str | None
    explanation: str | None
    tests: tuple[str, ...]

    @property
    def known(self) -> bool:
        """Whether this grader's catalogue describes the mistake."""
        return self.explanation is not None


def question_maxima(results: ClassResults) -> dict[str, float]:
    """Each question's points: the sum of its tests' ``max_score`` (the largest seen, if files disagree)."""
    maxima: dict[str, float] = {}
    for tests in results.verdicts.values():
        per_question: Counter[str] = Counter()
        for verdict in tests:
            per_question[verdict.question] += verdict.max_score
        for question, points in per_question.items():
            maxima[question] = max(points, maxima.get(question, 0.0))
    return maxima


def question_stats(gradebook: Gradebook, maxima: dict[str, float]) -> list[QuestionStat]:
    """Per-question means over graded submissions, in gradebook column order."""
    graded = [s for s in gradebook.submissions if s.status == "graded"]
    stats = []
    for question in gradebook.questions:
        scores = [s.scores[question] for s in graded if s.scores[question] is not None]
        stats.append(QuestionStat(question, len(scores), mean(scores) if scores else None,
                                  maxima.get(question)))
    return stats


def pass_rates(gradebook: Gradebook, results: ClassResults) -> list[PassRate]:
    """Per-test pass counts over graded submissions with a results file.

    Ordered by the gradebook's question order, then by first appearance, so
    the table reads like the assignment.
    """
    passed: Counter[tuple[str, str]] = Counter()
    attempts: Counter[tuple[str, str]] = Counter()
    for submission in gradebook.submissions:
        if submission.status != "graded":
            continue
        for verdict in results.verdicts.get(submission.student, ()):
            key = (verdict.question, verdict.test)
            attempts[key] += 1
            passed[key] += verdict.passed
    question_order = {q: i for i, q in enumerate(gradebook.questions)}
    first_seen = {key: i for i, key in enumerate(attempts)}
    keys = sorted(attempts, key=lambda k: (question_order.get(k[0], len(question_order)), first_seen[k]))
    return [PassRate(q, t, passed[(q, t)], attempts[(q, t)]) for q, t in keys]


def _diagnoses(out_dir: Path, gradebook: Gradebook) -> dict[str, Diagnosis]:
    """Title and explanation of every mistake named in the students' records."""
    known: dict[str, Diagnosis] = {}
    for s in gradebook.submissions:
        record = read_record(out_dir / s.student)
        for d in record.outcome.diagnoses if record else ():
            known.setdefault(d.slug, d)
    return known


def mistake_stats(gradebook: Gradebook, results: ClassResults, known: dict[str, Diagnosis] | None = None
                  ) -> list[MistakeStat]:
    """Diagnosed mistakes by number of students, most frequent first (ties in slug order).

    Counts come from the gradebook (one per student, however many tests
    showed it); the tests a mistake was seen in come from ``results.json``.
    """
    counts = Counter(slug for s in gradebook.submissions for slug in dict.fromkeys(s.mistakes))
    seen_in: dict[str, dict[str, None]] = {}
    for tests in results.verdicts.values():
        for verdict in tests:
            for slug in verdict.mistakes:
                seen_in.setdefault(slug, {})[_test_label(verdict.question, verdict.test)] = None
    stats = []
    for slug, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        entry = (known or {}).get(slug)
        stats.append(MistakeStat(
            slug=slug, count=count,
            title=entry.title if entry else slug,
            function=entry.function if entry else None,
            explanation=entry.explanation if entry else None,
            tests=tuple(sorted(seen_in.get(slug, ()))),
        ))
    return stats


# --------------------------------------------------------------------------- plots


def _png_data_uri(figure: Figure) -> str:
    """The figure as a base64 PNG ``data:`` URI (no Software stamp, so the bytes do not depend on the version)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def score_histogram(submissions: tuple[Submission, ...], possible: float) -> str:
    """Histogram of total scores, stacked by status so rejected zeros are not mistaken for weak work."""
    figure = Figure(figsize=(7.5, 3.2))
    axes = figure.subplots()
    # Up to the largest total too, so extra credit is not cut off; whole-point bins while they
    # stay readable, 20 equal bins beyond that.
    upper = max(possible, *(s.total for s in submissions)) or 1.0
    n_bins = max(1, min(20, math.ceil(upper)))
    groups = [(status, [s.total for s in submissions if s.status == status]) for status in STATUSES]
    groups = [(status, totals) for status, totals in groups if totals]
    axes.hist([totals for _, totals in groups], bins=n_bins, range=(0, upper), stacked=True,
              color=[STATUS_COLOURS[status] for status, _ in groups],
              label=[f"{status} ({len(totals)})" for status, totals in groups], edgecolor="white")
    axes.set_xlabel(f"total score (out of {_points(possible)})")
    axes.set_ylabel("submissions")
    axes.yaxis.get_major_locator().set_params(integer=True)
    axes.legend(frameon=False)
    axes.spines[["top", "right"]].set_visible(False)
    return _png_data_uri(figure)


def question_chart(stats: list[QuestionStat]) -> str | None:
    """Bar chart of each question's mean score fraction; ``None`` when no question's points are known."""
    known = [s for s in stats if s.fraction is not None]
    if not known:
        return None
    figure = Figure(figsize=(7.5, 2.8))
    axes = figure.subplots()
    bars = axes.bar([s.question for s in known], [100 * s.fraction for s in known], color="#3b6ea8")
    axes.bar_label(bars, labels=[f"{100 * s.fraction:.0f}%" for s in known], padding=2)
    axes.set_ylim(0, 110)
    axes.set_ylabel("mean score (% of points)")
    axes.spines[["top", "right"]].set_visible(False)
    return _png_data_uri(figure)


def pass_rate_chart(stats: list[PassRate]) -> str | None:
    """Horizontal bars of each test's pass rate, first test on top; ``None`` without tests."""
    if not stats:
        return None
    figure = Figure(figsize=(7.5, 0.6 + 0.28 * len(stats)))
    axes = figure.subplots()
    labels = [s.label for s in reversed(stats)]
    rates = [100 * s.rate for s in reversed(stats)]
    # Red under half, amber under 80 %, blue otherwise: the weak tests stand out at a glance.
    colours = ["#b5443b" if r < 50 else "#d98c2b" if r < 80 else "#3b6ea8" for r in rates]
    axes.barh(labels, rates, color=colours)
    axes.set_xlim(0, 100)
    axes.set_xlabel("graded submissions passing (%)")
    axes.tick_params(axis="y", labelsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return _png_data_uri(figure)


# --------------------------------------------------------------------------- page


def _points(value: float) -> str:
    """Points as people write them: 20, 12.5, 3.25 (never 20.0)."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _inline_code(text: str) -> Markup:
    """Escape catalogue text and show its `backticked` names as code, as the Markdown feedback does."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["points"] = _points
    environment.filters["inline_code"] = _inline_code
    return environment


@dataclass(frozen=True)
class ClassSummary:
    """Head-line numbers: submissions per status, and the graded submissions' mean and median total."""

    students: int
    statuses: dict[str, int]
    possible: float
    mean: float | None
    median: float | None


def class_summary(gradebook: Gradebook) -> ClassSummary:
    """The head-line numbers of a gradebook (``possible`` is the largest, should rows disagree)."""
    graded = [s.total for s in gradebook.submissions if s.status == "graded"]
    return ClassSummary(
        students=len(gradebook.submissions),
        statuses={status: sum(s.status == status for s in gradebook.submissions) for status in STATUSES},
        possible=max(s.possible for s in gradebook.submissions),
        mean=mean(graded) if graded else None,
        median=median(graded) if graded else None,
    )


def build_report(out_dir: Path) -> str:
    """The class report of a ``grader grade`` output folder, as one HTML page.

    Args:
        out_dir: the folder holding ``gradebook.csv`` and one folder per student.

    Raises:
        ReportError: the folder or its gradebook is missing, empty or corrupt.
    """
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise ReportError(f"{out_dir} is not a folder: pass the output folder of `grader grade` "
                          f"(the one holding {GRADEBOOK_NAME})")
    gradebook = read_gradebook(out_dir / GRADEBOOK_NAME)
    results = read_class_results(out_dir, gradebook)
    summary = class_summary(gradebook)
    questions = question_stats(gradebook, question_maxima(results))
    tests = pass_rates(gradebook, results)
    mistakes = mistake_stats(gradebook, results, _diagnoses(out_dir, gradebook))
    graded = [s.student for s in gradebook.submissions if s.status == "graded"]
    return _environment().get_template(TEMPLATE_NAME).render(
        title=results.assignment or out_dir.resolve().name,
        summary=summary,
        status_colours=STATUS_COLOURS,
        histogram=score_histogram(gradebook.submissions, summary.possible),
        questions=questions,
        question_chart=question_chart(questions),
        tests=tests,
        test_chart=pass_rate_chart(tests),
        graded_with_results=sum(student in results.verdicts for student in graded),
        mistakes=mistakes[:TOP_MISTAKES],
        other_mistakes=mistakes[TOP_MISTAKES:],
        diagnosed_students=sum(1 for s in gradebook.submissions if s.mistakes),
        problems=sorted((s for s in gradebook.submissions if s.status != "graded"),
                        key=lambda s: (STATUSES.index(s.status), s.student)),
        unreadable=results.unreadable,
        graded_without_results=[student for student in graded
                                if student not in results.verdicts and student not in results.unreadable],
    )


def write_report(out_dir: Path, dest: Path | None = None) -> Path:
    """Build the class report and write it, replacing any earlier one in one step.

    Args:
        out_dir: the output folder of ``grader grade``.
        dest: where to write; defaults to ``OUT/report.html``.

    Returns:
        The path written.

    Raises:
        ReportError: as :func:`build_report`, or ``dest`` cannot be written.
    """
    out_dir = Path(out_dir)
    dest = Path(dest) if dest is not None else out_dir / REPORT_NAME
    page = build_report(out_dir)
    # Write beside the target, then rename: a browser open on the old report never sees half a page.
    temporary = dest.with_name(f".{dest.name}.partial")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(page, encoding="utf-8")
        os.replace(temporary, dest)
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise ReportError(f"cannot write the report to {dest}: {exc.strerror or exc}; "
                          "choose another path with -o") from exc
    return dest

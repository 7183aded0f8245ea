"""Class report: one self-contained HTML page from the folder ``grader grade`` writes.

Everything on the page comes from the grading records, ``OUT/students/<student>/outcome.json``
(:class:`~autograder.runtime.grading.outcome.GradeRecord`): the same data the
gradebook CSVs are exported from, so a new field reaches the report without a
parser in between. ``gradebook.csv`` is not read.

The page is the instructor's desk: a sortable table of every student, with
what became of their submission (graded, not attempted, did not load, timed
out, rejected, failed to run) kept apart, so an untouched notebook's zeros do
not pull down the question and test rates. It is one file with nothing to
fetch: plots are PNGs drawn with matplotlib and embedded as ``data:`` URIs,
the styles are inline, the only script (column sorting) is allowed by its
hash in the Content-Security-Policy, and every other source is forbidden.
Student text (names, notes, file names) is escaped by the template engine.

Why one module of this size: reading the records, the statistics, the three plots and the page are one pipeline with one input; each part is a few small functions.
"""
from __future__ import annotations

import base64
import hashlib
import io
import math
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from statistics import mean, median

import jinja2
from markupsafe import Markup, escape
# The object-oriented API draws on an Agg canvas without pyplot's global state,
# so the report works with no display and never touches the user's backend.
from matplotlib.figure import Figure

from autograder.resources import templates_dir
from autograder.runtime.errors import GraderError
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.outcome import (RECORD_NAME, STUDENTS_DIR, GradeRecord, points, read_record,
                                                record_folders)

REPORT_NAME = "report.html"
TEMPLATE_NAME = "report/report.html.j2"
SORT_SCRIPT = "report/sort.js"

#: How many of the most frequent mistakes the page explains; the rest are counted.
TOP_MISTAKES = 15

#: What became of a submission, as the desk shows it, in the order it lists them,
#: with the colour the chips, the histogram and its legend share.
STANDINGS: dict[str, str] = {
    "graded": "#3b6ea8",
    "not attempted": "#8c6bb1",
    "did not load": "#c0577a",
    "timed out": "#d98c2b",
    "rejected": "#9a9a9a",
    "failed to run": "#b5443b",
}
#: Pass-rate bands of the tests chart, with their legend.
RATE_BANDS: tuple[tuple[float, str, str], ...] = (
    (50.0, "#b5443b", "under 50% pass"), (80.0, "#d98c2b", "50-79% pass"), (math.inf, "#3b6ea8", "80% or more pass"))

_REGRADE_HINT = "run `grader grade SUBMISSIONS -o OUT` again to rewrite it"


class ReportError(GraderError):
    """The grading output folder cannot be turned into a class report."""


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class ClassRecords:
    """Every student's record in a graded folder, and the folders whose record could not be read.

    Attributes:
        records: one per student folder with a readable ``outcome.json``, by student id.
        unreadable: folder name -> why its ``outcome.json`` was left out.
    """

    records: tuple[GradeRecord, ...]
    unreadable: dict[str, str]


def read_class(out_dir: Path) -> ClassRecords:
    """Read ``OUT/students/*/outcome.json``.

    Raises:
        ReportError: ``out_dir`` is not a folder or holds no record at all.
    """
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise ReportError(f"{out_dir} is not a folder: pass the output folder of `grader grade` "
                          f"(the one holding {STUDENTS_DIR}/, one folder per student)")
    records: list[GradeRecord] = []
    unreadable: dict[str, str] = {}
    try:
        folders = record_folders(out_dir)
    except ValueError as exc:
        raise ReportError(str(exc)) from None
    for folder in folders:
        record = read_record(folder)
        if record is None:
            unreadable[folder.name] = f"{RECORD_NAME} is not a grading record; {_REGRADE_HINT}"
        else:
            records.append(record)
    if not records and not unreadable:
        raise ReportError(f"no grading records in {out_dir} (no {STUDENTS_DIR}/<student>/{RECORD_NAME}): pass the folder "
                          f"that `grader grade` wrote, or run `grader grade SUBMISSIONS -o {out_dir}` first")
    return ClassRecords(tuple(records), unreadable)


# --------------------------------------------------------------------------- statistics


def standing(record: GradeRecord) -> str:
    """What became of the submission, as one of :data:`STANDINGS`."""
    outcome = record.outcome
    if outcome.status == "graded":
        if "not-attempted" in outcome.flags:
            return "not attempted"
        return "did not load" if "load-error" in outcome.flags else "graded"
    return {"timeout": "timed out", "rejected": "rejected"}.get(outcome.status, "failed to run")


def rated(records: tuple[GradeRecord, ...]) -> list[GradeRecord]:
    """The records that enter the question and test rates: graded, and attempted."""
    return [r for r in records if r.outcome.status == "graded" and "not-attempted" not in r.outcome.flags]


def _test_label(question: str, test: str) -> str:
    """A test as Gradescope names it: ``q4: test_large_offsets``."""
    return f"{question}: {test}" if question else test


@dataclass(frozen=True)
class QuestionStat:
    """Mean points of one question over the rated submissions."""

    question: str
    graded: int
    mean_points: float | None
    max_points: float

    @property
    def fraction(self) -> float | None:
        """Mean score as a fraction of the question's points."""
        if self.mean_points is None or not self.max_points:
            return None
        return self.mean_points / self.max_points


@dataclass(frozen=True)
class PassRate:
    """How many rated submissions passed one hidden test."""

    question: str
    test: str
    passed: int
    attempts: int

    @property
    def label(self) -> str:
        return _test_label(self.question, self.test)

    @property
    def rate(self) -> float:
        return self.passed / self.attempts


@dataclass(frozen=True)
class MistakeStat:
    """One diagnosed mistake: how many students made it, and the words their feedback used for it.

    A slug with no diagnosis in any record keeps its slug as title and ``known`` is false.
    """

    slug: str
    count: int
    title: str
    function: str | None
    explanation: str | None
    tests: tuple[str, ...]

    @property
    def known(self) -> bool:
        return self.explanation is not None


def questions_in_order(records: tuple[GradeRecord, ...]) -> list[str]:
    """Every question, in the order the records list their tests."""
    order: dict[str, None] = {}
    for record in records:
        for item in record.outcome.items:
            order.setdefault(item.question, None)
    return list(order)


def question_stats(records: tuple[GradeRecord, ...]) -> list[QuestionStat]:
    """Per-question means over the rated submissions; points from the tests' weights."""
    maxima: dict[str, float] = {}
    for record in records:
        for question, value in record.outcome.question_points().items():
            maxima[question] = max(value, maxima.get(question, 0.0))
    counted = rated(records)
    stats = []
    for question in questions_in_order(records):
        scores = [r.outcome.question_scores().get(question, 0.0) for r in counted]
        stats.append(QuestionStat(question, len(scores), mean(scores) if scores else None, maxima[question]))
    return stats


def pass_rates(records: tuple[GradeRecord, ...]) -> list[PassRate]:
    """Per-test pass counts over the rated submissions, in the assignment's order."""
    passed: Counter[tuple[str, str]] = Counter()
    attempts: Counter[tuple[str, str]] = Counter()
    for record in rated(records):
        for item in record.outcome.items:
            attempts[(item.question, item.test)] += 1
            passed[(item.question, item.test)] += item.passed
    return [PassRate(q, t, passed[(q, t)], n) for (q, t), n in attempts.items()]


def mistake_stats(records: tuple[GradeRecord, ...]) -> list[MistakeStat]:
    """Diagnosed mistakes by number of students, most frequent first (ties in slug order)."""
    counts = Counter(slug for r in records for slug in r.outcome.mistakes)
    seen_in: dict[str, dict[str, None]] = {}
    words = {}
    for record in records:
        for item in record.outcome.items:
            for slug in item.mistakes:
                seen_in.setdefault(slug, {})[_test_label(item.question, item.test)] = None
        for diagnosis in record.outcome.diagnoses:
            words.setdefault(diagnosis.slug, diagnosis)
    stats = []
    for slug, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        entry = words.get(slug)
        stats.append(MistakeStat(slug, count, entry.title if entry else slug, entry.function if entry else None,
                                 entry.explanation if entry else None, tuple(sorted(seen_in.get(slug, ())))))
    return stats


@dataclass(frozen=True)
class ClassSummary:
    """Head-line numbers: submissions per standing, and the rated submissions' mean and median total."""

    students: int
    standings: dict[str, int]
    possible: float
    rated: int
    mean: float | None
    median: float | None


def class_summary(records: tuple[GradeRecord, ...]) -> ClassSummary:
    """The head-line numbers (``possible`` is the largest, should records disagree)."""
    totals = [r.outcome.total for r in rated(records)]
    counts = Counter(standing(r) for r in records)
    return ClassSummary(len(records), {s: counts[s] for s in STANDINGS}, max(r.outcome.possible for r in records),
                        len(totals), mean(totals) if totals else None, median(totals) if totals else None)


@dataclass(frozen=True)
class DeskRow:
    """One student's line in the desk table."""

    record: GradeRecord
    standing: str
    mistakes: tuple[str, ...]     # titles of the diagnosed mistakes
    feedback: str | None          # relative link to the student's feedback.md, when it exists
    note: str


def desk_rows(out_dir: Path, records: tuple[GradeRecord, ...]) -> list[DeskRow]:
    """One row per student, by id; the note is the first thing an instructor should read about them."""
    rows = []
    for record in records:
        titles = {d.slug: d.title for d in record.outcome.diagnoses}
        folder = f"{STUDENTS_DIR}/{record.entry.student}"
        has_feedback = (out_dir / folder / "feedback.md").is_file()
        notes = [n for n in (record.entry.note, *record.outcome.notes) if n]
        rows.append(DeskRow(record, standing(record), tuple(titles.get(s, s) for s in record.outcome.mistakes),
                            f"{folder}/feedback.md" if has_feedback else None, " | ".join(notes)))
    return rows


# --------------------------------------------------------------------------- plots


def _png_data_uri(figure: Figure) -> str:
    """The figure as a base64 PNG ``data:`` URI (no Software stamp, so the bytes do not depend on the version)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def score_histogram(records: tuple[GradeRecord, ...], possible: float) -> str:
    """Histogram of total scores, stacked by standing so untouched and rejected zeros are not mistaken for weak work."""
    figure = Figure(figsize=(7.5, 3.2))
    axes = figure.subplots()
    # Up to the largest total too, so extra credit is not cut off; whole-point bins while they
    # stay readable, 20 equal bins beyond that.
    upper = max(possible, *(r.outcome.total for r in records)) or 1.0
    groups = [(s, [r.outcome.total for r in records if standing(r) == s]) for s in STANDINGS]
    groups = [(s, totals) for s, totals in groups if totals]
    axes.hist([totals for _, totals in groups], bins=max(1, min(20, math.ceil(upper))), range=(0, upper),
              stacked=True, color=[STANDINGS[s] for s, _ in groups],
              label=[f"{s} ({len(totals)})" for s, totals in groups], edgecolor="white")
    axes.set_xlabel(f"total score (out of {points(possible)})")
    axes.set_ylabel("submissions")
    axes.yaxis.get_major_locator().set_params(integer=True)
    # Beside the plot, not on it: a legend inside the axes hides the bars at zero.
    axes.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes.spines[["top", "right"]].set_visible(False)
    return _png_data_uri(figure)


def question_chart(stats: list[QuestionStat]) -> str | None:
    """Bar chart of each question's mean score fraction (one series); ``None`` when nothing was rated."""
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


def _band(rate: float) -> str:
    return next(colour for upper, colour, _ in RATE_BANDS if rate < upper)


def pass_rate_chart(stats: list[PassRate]) -> str | None:
    """Horizontal bars of each test's pass rate, first test on top, coloured by band (the page prints the legend)."""
    if not stats:
        return None
    figure = Figure(figsize=(7.5, 0.6 + 0.28 * len(stats)))
    axes = figure.subplots()
    rates = [100 * s.rate for s in reversed(stats)]
    axes.barh([s.label for s in reversed(stats)], rates, color=[_band(r) for r in rates])
    axes.set_xlim(0, 100)
    axes.set_xlabel("attempted submissions passing (%)")
    axes.tick_params(axis="y", labelsize=8)
    axes.spines[["top", "right"]].set_visible(False)
    return _png_data_uri(figure)


# --------------------------------------------------------------------------- page


def _inline_code(text: str) -> Markup:
    """Escape text and show its `backticked` spans as code, as the Markdown feedback does."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def _sort_script() -> tuple[Markup, Markup]:
    """The column-sorting script and the CSP source that allows exactly it."""
    script = (templates_dir() / SORT_SCRIPT).read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    return Markup(script), Markup(f"'sha256-{digest}'")


def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())),
                                     undefined=jinja2.StrictUndefined, autoescape=True,
                                     trim_blocks=True, lstrip_blocks=True)
    environment.filters["points"] = points
    environment.filters["inline_code"] = _inline_code
    return environment


def _similarity_fragment(out_dir: Path) -> Markup:
    """The similarity section (ranked pairs, flagged ones side by side), already escaped."""
    from autograder.similarity.section import SimilarityError, section_html, similarity_section
    try:
        return Markup(section_html(similarity_section(out_dir)))
    except SimilarityError as exc:
        return Markup(f'<p class="note">Not compared: {escape(str(exc))}</p>')


def _groups_fragment(records: tuple[GradeRecord, ...]) -> Markup:
    """The mistake-groups section (``autograder.groups``), rendered by this page's environment."""
    from autograder.groups.class_groups import class_groups
    from autograder.groups.section import SECTION_TEMPLATE, section_context
    return Markup(_environment().get_template(SECTION_TEMPLATE).render(**section_context(class_groups(records))))


def build_report(out_dir: Path, similarity: bool = False) -> str:
    """The class report of a ``grader grade`` output folder, as one HTML page.

    ``similarity`` adds the section of ``grader similarity`` (it reads every
    submission again, so it is asked for, not the default).

    Raises:
        ReportError: the folder is missing or holds no grading record.
    """
    out_dir = Path(out_dir)
    loaded = read_class(out_dir)
    records = loaded.records
    script, script_source = _sort_script()
    context = {"title": out_dir.resolve().name, "unreadable": loaded.unreadable, "sort_script": script,
               "script_source": script_source, "standing_colours": STANDINGS}
    if not records:
        return _environment().get_template(TEMPLATE_NAME).render(**context, summary=None)
    summary = class_summary(records)
    questions = question_stats(records)
    tests = pass_rates(records)
    mistakes = mistake_stats(records)
    return _environment().get_template(TEMPLATE_NAME).render(
        **{**context, "title": records[0].outcome.assignment or context["title"]},
        summary=summary,
        isolation=sorted({r.outcome.isolation for r in records if r.outcome.status != "rejected"}),
        histogram=score_histogram(records, summary.possible),
        questions=questions, question_chart=question_chart(questions),
        tests=tests, test_chart=pass_rate_chart(tests), rate_bands=RATE_BANDS,
        mistakes=mistakes[:TOP_MISTAKES], other_mistakes=mistakes[TOP_MISTAKES:],
        diagnosed_students=sum(1 for r in records if r.outcome.mistakes),
        desk=desk_rows(out_dir, records),
        similarity=_similarity_fragment(out_dir) if similarity else None,
        groups=_groups_fragment(records),
    )


def write_report(out_dir: Path, dest: Path | None = None, similarity: bool = False) -> Path:
    """Build the class report and write it, replacing any earlier one in one step.

    Returns:
        The path written (``OUT/report.html`` unless ``dest`` is given).

    Raises:
        ReportError: as :func:`build_report`, or ``dest`` cannot be written.
    """
    out_dir = Path(out_dir)
    dest = Path(dest) if dest is not None else out_dir / REPORT_NAME
    page = build_report(out_dir, similarity)
    # Written beside the target, then renamed (a browser open on the old report never sees half a
    # page), and its owner's alone, as everything in a graded folder: it names every student.
    try:
        write_atomic(dest, page)
    except OSError as exc:
        raise ReportError(f"cannot write the report to {dest}: {exc.strerror or exc}; "
                          "choose another path with -o") from exc
    return dest

"""Similarity of a graded class: read the folder ``grader grade`` wrote, rank pairs, write CSV and HTML.

The graded folder keeps each student's record (``<student>/outcome.json``),
which names the submission file it graded (``entry.path``, as given to
``grader grade``: absolute, or relative to where it ran) but holds no copy of
it. Each submission is read again from there with the grading intake and
extraction, so the code compared is exactly the code that ran. A submission
that cannot be read any more (moved, deleted, rejected at grading) is listed
as not compared, with the reason.

``similarity_section(out_dir)`` is what ``grader report`` calls;
``section_html(result)`` renders it as an HTML fragment in which every piece
of student code and every name is escaped.

Why one module of this size: reading the graded folder, the class-level ranking it feeds
and the two writers (CSV, HTML) share one result object and its escaping rules; the
comparison itself (``compare``, ``inverted``, ``winnow``) and the marking (``highlight``)
already live apart.
"""
from __future__ import annotations

import csv
import html
import io
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from pathlib import Path

from autograder.runtime.errors import GraderError
from autograder.runtime.grading.extract import PARSE_LIMIT, extract_program
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.gradebook import cell
from autograder.runtime.grading.intake import read_submission
from autograder.runtime.grading.outcome import RECORD_NAME, read_record, record_folders
from autograder.runtime.errors import SubmissionError
from autograder.similarity.base import base_from_file, starter_cells
from autograder.similarity.compare import (Comparison, Document, Group, LineSpan, LineSpans, Pair, Settings, base_hashes, compare_class,
                                           own_tokens, starter_lines)
from autograder.similarity.inverted import rarity
from autograder.similarity.parallel import documents as documents_of
from autograder.similarity.highlight import MAX_ALIGNED_TOKENS, marked_html, marked_ranges

CSV_NAME = "similarity.csv"
GROUPS_CSV_NAME = "similarity-groups.csv"
HTML_NAME = "similarity.html"
#: Default score from which a pair is flagged (see docs/grading-guide.md: how to set it).
DEFAULT_THRESHOLD = 0.6
#: Flagged pairs shown side by side in the page; any further flagged pair is listed there in one line, and every
#: pair (flagged or not) is in the CSV. An instructor reads a few dozen pairs, and the page of a class where
#: thousands are flagged stays a few megabytes.
VIEWS_SHOWN = 100


class SimilarityError(GraderError):
    """The graded folder cannot be compared (not a graded folder, nothing readable)."""


@dataclass(frozen=True)
class SimilarityResult:
    """Pairs of one graded folder, ranked, and what could not be compared."""

    pairs: tuple[Pair, ...]
    threshold: float
    compared: int
    documents: dict[str, Document] = field(default_factory=dict)
    not_compared: tuple[tuple[str, str], ...] = ()        # (student, why)
    base: str = ""                                         # where the base code came from
    groups: tuple[Group, ...] = ()
    common: tuple[str, ...] = ()                           # per assignment: what was discounted as common, and why
    #: (a, b) -> token indices of a and of b to mark: the matched tokens of each viewed pair, starter lines left out.
    marks: dict[tuple[str, str], tuple[frozenset[int], frozenset[int]]] = field(default_factory=dict)

    def is_flagged(self, pair: Pair) -> bool:
        # The score alone flags. Sharing two whole functions did too, until the blind corpus showed independent
        # students of a large class sharing two or three functions written alike: 38,317 such pairs against 9
        # copies over its nine classes (docs/grading-guide.md). The functions stay in the CSV and the page.
        return pair.score >= self.threshold

    @cached_property
    def flagged(self) -> tuple[Pair, ...]:
        """The pairs at or above the threshold, highest score first."""
        return tuple(p for p in self.pairs if self.is_flagged(p))

    @property
    def viewed(self) -> tuple[Pair, ...]:
        """The flagged pairs shown side by side in the page (the highest ``VIEWS_SHOWN``)."""
        return self.flagged[:VIEWS_SHOWN]


def _resolve(path: Path, out_dir: Path) -> Path:
    if path.is_absolute() or path.exists():
        return path
    beside = out_dir.parent / path
    return beside if beside.exists() else path


def read_class(out_dir: Path) -> tuple[dict[str, tuple[str, tuple[str, ...]]], list[tuple[str, str]]]:
    """``{student: (assignment, code cells)}`` of every readable submission, and the others with why."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise SimilarityError(f"{out_dir} is not a folder; pass the folder `grader grade -o OUT` wrote.")
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    skipped: list[tuple[str, str]] = []
    groups: dict[str, str] = {}       # group submission -> the member it is compared as
    try:
        folders = record_folders(out_dir)
    except ValueError as exc:
        raise SimilarityError(str(exc)) from None
    if not folders:
        raise SimilarityError(f"{out_dir} holds no students/<student>/{RECORD_NAME} records; run `grader grade ... -o {out_dir}` first.")
    for folder in folders:
        record = read_record(folder)
        if record is None:
            skipped.append((folder.name, f"{RECORD_NAME} cannot be read"))
            continue
        if record.entry.refused:      # a link, or a file that is no notebook: never read, here either
            skipped.append((record.entry.student, "not graded: " + record.entry.refused))
            continue
        if record.entry.group:
            # The members of one group submission hand in one file: compared once, never as copies.
            first = groups.setdefault(record.entry.group, record.entry.student)
            if first != record.entry.student:
                skipped.append((record.entry.student, f"one group submission with {first}: compared as {first}"))
                continue
        path = _resolve(Path(record.entry.path), out_dir)
        try:
            program = extract_program(read_submission(path, record.outcome.assignment))
        except (SubmissionError, OSError) as exc:
            skipped.append((record.entry.student, f"submission {path} cannot be read: {exc}"))
            continue
        # A cell past the grader's own parse limit is left out of the comparison (grading does not
        # parse it either): normalising a few megabytes of one cell costs gigabytes.
        huge = [number for number, cell in enumerate(program.cells, start=1) if len(cell) > PARSE_LIMIT]
        if huge:
            skipped.append((record.entry.student, f"code cell(s) {', '.join(map(str, huge))} longer than "
                                                  f"{PARSE_LIMIT >> 10} KiB not compared"))
        found[record.entry.student] = (record.outcome.assignment,
                                       tuple(cell if len(cell) <= PARSE_LIMIT else "" for cell in program.cells))
    return found, skipped


def similarity_section(out_dir: str | Path, threshold: float = DEFAULT_THRESHOLD,
                       base_files: tuple[str | Path, ...] = (), settings: Settings = Settings()) -> SimilarityResult:
    """Rank every pair of submissions in the graded folder ``out_dir``.

    The base code is the built-in assignment's starter notebook, or the files
    in ``base_files`` (the student notebook, and any course code students were
    given) when there are any. Pairs are only formed within one assignment.
    """
    out_dir = Path(out_dir)
    found, skipped = read_class(out_dir)
    by_assignment: dict[str, list[str]] = {}
    for student, (assignment, _) in found.items():
        by_assignment.setdefault(assignment, []).append(student)
    pairs: list[Pair] = []
    groups: list[Group] = []
    common: list[str] = []
    documents: dict[str, Document] = {}
    marks: dict[tuple[str, str], tuple[frozenset[int], frozenset[int]]] = {}
    sources = []
    # Identical submissions (a copy handed in as it was) are normalised once, and share their arrays; the
    # distinct ones are normalised on every core at once (``parallel``), whatever their assignment.
    distinct: dict[tuple[str, ...], str] = {}
    for assignment, students in sorted(by_assignment.items()):
        for s in students:
            distinct.setdefault(found[s][1], s)
    bases: dict[str, tuple[list[str], str]] = {}

    def read_bases() -> None:       # rendering a starter notebook takes seconds: done while helpers normalise
        bases.update({assignment: base_code(assignment, base_files) for assignment in sorted(by_assignment)})

    made = dict(zip(distinct, documents_of([(s, cells) for cells, s in distinct.items()], settings,
                                           meanwhile=read_bases)))
    for assignment, students in sorted(by_assignment.items()):
        base_cells, source = bases[assignment]
        sources.append(source)
        docs = [replace(made[found[s][1]], name=s) for s in students]
        documents.update({d.name: d for d in docs})
        starter = starter_lines(base_cells)
        compared = compare_class(docs, base_hashes(base_cells, settings), settings, starter)
        own = {}
        # The pairs the page may show side by side: this assignment's share of ``viewed`` is a prefix of this.
        to_view = [p for p in compared.pairs if p.score >= threshold]
        for p in to_view[:VIEWS_SHOWN]:
            a, b = compared.matched(p.a, p.b)
            for name in (p.a, p.b):
                if name not in own:
                    own[name] = own_tokens(documents[name], starter)
            marks[(p.a, p.b)] = (frozenset(a & own[p.a]), frozenset(b & own[p.b]))
        pairs += compared.pairs
        groups += compared.groups
        common.append(common_note(assignment, compared, settings))
    pairs.sort(key=lambda p: (-p.score, p.a, p.b))
    return SimilarityResult(tuple(pairs), threshold, len(found), documents, tuple(skipped), "; ".join(sources),
                            tuple(groups), tuple(common), marks)


def base_code(assignment: str, base_files: tuple[str | Path, ...] = ()) -> tuple[list[str], str]:
    """The base code of ``assignment`` (the files in ``base_files``, or else the built-in assignment's starter
    notebook) and where it came from."""
    if base_files:
        return [c for f in base_files for c in base_from_file(f, assignment)], ", ".join(str(f) for f in base_files)
    try:
        return list(starter_cells(assignment)), f"the starter notebook of {assignment}"
    except GraderError:
        return [], f"none ({assignment} is not a built-in assignment; pass --base)"


def common_note(assignment: str, compared: Comparison, settings: Settings) -> str:
    """What was discounted as common in one assignment's comparison, and why."""
    half = rarity(max(compared.compared // 2, 1), compared.compared).item() if compared.compared > 2 else 1.0
    note = (f"{assignment}: the base code weighs nothing (every student was given it); code held by more students "
            f"weighs less (held by half of the {compared.compared} submissions, {half:.2f} of code only two hold), "
            "however long it is, and a group's code is never discounted for the group's size")
    if compared.common_fingerprints:
        note += (f"; {compared.common_fingerprints} fingerprints held by more than {compared.common_limit} submissions "
                 f"(a share of {settings.common_fraction:g} of the class) weigh nothing")
    return note


# ------------------------------------------------------------------ CSV

CSV_COLUMNS = ("rank", "student_a", "student_b", "score", "flagged", "matched_tokens", "lines_a", "lines_b",
               "shared_functions")


def spans_text(spans: "LineSpans | tuple[LineSpan, ...] | list[LineSpan]") -> str:
    """``cell 3: 4-9; cell 5: 2`` (cells counted from 1, as a notebook shows them)."""
    if isinstance(spans, LineSpans):
        return _ordered_spans_text(spans.flat())
    by_cell: dict[int, list[str]] = {}
    for s in spans:
        by_cell.setdefault(s.cell, []).append(f"{s.first}" if s.first == s.last else f"{s.first}-{s.last}")
    return "; ".join(f"cell {c + 1}: {', '.join(r)}" for c, r in sorted(by_cell.items()))


def _ordered_spans_text(flat: list[int]) -> str:
    """:func:`spans_text` of spans already in (cell, line) order, given flat: the CSV of 1,000 submissions
    writes half a million of them."""
    out: list[str] = []
    current = -1
    numbers = iter(flat)
    for c, first, last in zip(numbers, numbers, numbers):
        text = str(first) if first == last else f"{first}-{last}"
        if c != current:
            out.append(f"{'; ' if out else ''}cell {c + 1}: {text}")
            current = c
        else:
            out.append(f", {text}")
    return "".join(out)


def csv_text(result: SimilarityResult) -> str:
    """Every pair sharing unusual code, highest score first, as CSV, text cells neutralised."""
    return "".join(csv_pieces(result))


#: CSV rows formatted at once: the CSV of 1,000 submissions is 30 MB, four times that as one Python string.
_ROWS_AT_ONCE = 5000


#: Distinct sides' line texts the CSV writer keeps (see :func:`csv_pieces`).
_LINES_KEPT = 1 << 16


def csv_pieces(result: SimilarityResult) -> Iterator[str]:
    """:func:`csv_text` a few thousand rows at a time."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    # A side's lines repeat: every partner holding the same of a submission's code covers the same lines
    # (a tenth as many distinct sides as pairs in the cohort class of 1,000), so a recent one is written out
    # once. The cache is bounded: where every submission is its own (the blind corpus's class of 1,000),
    # nearly every side is distinct, and keeping every text took 40 MB at the peak.
    lines = lru_cache(maxsize=_LINES_KEPT)(lambda spans: cell(spans_text(spans)))
    names: dict[str, str] = {}          # each student's cell, made once
    for rank, p in enumerate(result.pairs, start=1):
        a, b = lines(p.lines_a), lines(p.lines_b)
        name_a = names.get(p.a)
        if name_a is None:
            name_a = names[p.a] = cell(p.a)
        name_b = names.get(p.b)
        if name_b is None:
            name_b = names[p.b] = cell(p.b)
        writer.writerow([rank, name_a, name_b, f"{p.score:.4f}", "yes" if result.is_flagged(p) else "no",
                         p.matched_tokens, a, b, cell(" ".join(p.functions)) if p.functions else ""])
        if rank % _ROWS_AT_ONCE == 0:
            yield text.getvalue()
            text.seek(0)
            text.truncate()
    yield text.getvalue()


GROUP_COLUMNS = ("group", "size", "students", "shared_tokens", "weight_in_pairs", "lines_of", "lines",
                 "shared_functions")


def groups_csv_text(result: SimilarityResult) -> str:
    """Every group as CSV: its members, size, the code they all hold (lines in one member), and what a token
    of that code weighs in pair scores (the rarity of code held by as many as the group: 1 for code only
    two hold; never 0, whatever the group's size)."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(GROUP_COLUMNS)
    for number, g in enumerate(result.groups, start=1):
        writer.writerow([number, len(g.members), cell(" ".join(g.members)), g.shared_tokens,
                         f"{g.weight:.2f}", cell(g.shown), cell(spans_text(g.lines)),
                         cell(" ".join(g.functions))])
    return text.getvalue()


# ------------------------------------------------------------------ HTML

# The two sides stand next to each other while each can be 20em wide, and one above the other on a
# phone; a code line longer than its side scrolls inside it, never widening the page.
_STYLE = """
.similarity{overflow-wrap:break-word}
.sim-pair{margin:1.5em 0;border-top:1px solid #ccc}
.sim-sides{display:flex;flex-wrap:wrap;gap:1em}
.sim-side{flex:1 1 20em;min-width:0;overflow-x:auto}
.sim-side pre{font-size:12px;background:#f7f7f7;padding:.5em;margin:.3em 0}
.sim-side mark{background:#ffe08a}
.sim-note{color:#555;font-size:90%}
"""


#: Seconds one page may spend marking matching tokens. Aligning a cell is quadratic (worse when the
#: normaliser reordered its tokens) in the cell's length, which the student chooses, and a notebook
#: may hold many cells: past this budget the remaining cells are shown without marks, said so.
MARKING_SECONDS = 30.0


class _MarkingBudget:
    """The time one page has left for marking (see ``MARKING_SECONDS``)."""

    def __init__(self) -> None:
        self._until = time.monotonic() + MARKING_SECONDS

    def spent(self) -> bool:
        return time.monotonic() >= self._until


def _code_html(doc: Document, marked: frozenset[int] | set[int], budget: _MarkingBudget) -> str:
    """The cells of ``doc`` that hold a marked token, escaped, the original tokens matching them marked."""
    parts = []
    for number in sorted({doc.tokens[i].cell for i in marked}):
        indices = [i for i, t in enumerate(doc.tokens) if t.cell == number]
        if budget.spent():
            ranges, why = None, f": shown without marks (this page spent its {MARKING_SECONDS:g} s for marking)"
        else:
            ranges = marked_ranges(doc.cells[number], [doc.tokens[i] for i in indices],
                                   [i in marked for i in indices])
            why = "" if ranges is not None else f": more than {MAX_ALIGNED_TOKENS} tokens, shown without marks"
        parts.append(f'<div class="sim-note">cell {number + 1}{why}</div>'
                     f'<pre>{marked_html(doc.cells[number], ranges or [])}</pre>')
    return "".join(parts)


def _functions_note(functions: tuple[str, ...]) -> str:
    if not functions:
        return "no function of the assignment mostly shared"
    return "functions mostly shared: " + ", ".join(html.escape(f) for f in functions)


def _below_with_functions(result: SimilarityResult) -> str:
    """'' or how many pairs under the threshold share two or more whole functions: a partial copy looks like
    that, and so do independent students of a large class who wrote two functions the same way."""
    count = sum(1 for p in result.pairs if not result.is_flagged(p) and len(p.functions) >= 2)
    if not count:
        return ""
    return (f"; {count} of them share two or more of the assignment's functions (a partial copy looks like that, "
            "and so do independent students who wrote two functions the same way): read their "
            "shared_functions in the CSV")


def section_html(result: SimilarityResult) -> str:
    """An HTML fragment: the groups, then the flagged pairs side by side (the highest ``VIEWS_SHOWN``; any
    further flagged pair in one line each), the matching tokens marked; the other pairs are only counted.

    Student names and code are escaped with ``html.escape``; nothing in the
    fragment loads or runs anything.
    """
    e = html.escape
    budget = _MarkingBudget()
    flagged, viewed = result.flagged, result.viewed
    out = [f"<style>{_STYLE}</style>", '<section class="similarity"><h2>Similarity</h2>',
           f"<p>{len(flagged)} of {len(result.pairs)} pairs sharing unusual code are flagged: they score at least "
           f"{result.threshold:g} ({result.compared} submissions compared; base code: {e(result.base)}). "
           "A high score is a reason to look at the two submissions, not a finding of copying.</p>",
           f'<p class="sim-note">The other {len(result.pairs) - len(flagged)} pairs, not flagged, are '
           f"listed only in {CSV_NAME}, with their scores, lines and shared functions"
           f"{_below_with_functions(result)}.</p>"]
    for why in result.common:
        out.append(f'<p class="sim-note">Discounted as common: {e(why)}.</p>')
    for number, g in enumerate(result.groups, start=1):
        shown = result.documents.get(g.shown)
        why = (" They are joined by pairs that score high, and every one of them holds the code below: each "
               f"token of it weighs {g.weight:.2f} in their pair scores (1 for code only two submissions hold), "
               "however many members the group has.")
        out.append(f'<div class="sim-pair"><h3>Group {number}: {len(g.members)} submissions all hold the same '
                   f'{g.shared_tokens} tokens of code</h3><p>{", ".join(e(m) for m in g.members)}.{e(why)}</p>'
                   f'<p class="sim-note">{_functions_note(g.functions)}</p>')
        if shown is not None:
            out.append(f'<div class="sim-side"><b>{e(g.shown)}</b>{_code_html(shown, set(g.tokens), budget)}</div>')
        out.append("</div>")
    if result.not_compared:
        out.append("<p>Not compared: " + "; ".join(f"{e(s)} ({e(why)})" for s, why in result.not_compared) + "</p>")
    for p in viewed:
        a, b = result.documents.get(p.a), result.documents.get(p.b)
        marks_a, marks_b = result.marks.get((p.a, p.b), (frozenset(), frozenset()))
        out.append(f'<div class="sim-pair"><h3>{e(p.a)} and {e(p.b)}: {p.score:.2f}</h3>'
                   f'<p class="sim-note">{p.matched_tokens} matched tokens; {_functions_note(p.functions)}</p>')
        if a is not None and b is not None:
            out.append('<div class="sim-sides">'
                       f'<div class="sim-side"><b>{e(p.a)}</b>{_code_html(a, marks_a, budget)}</div>'
                       f'<div class="sim-side"><b>{e(p.b)}</b>{_code_html(b, marks_b, budget)}</div>'
                       "</div>")
        out.append("</div>")
    if len(flagged) > len(viewed):
        out.append(f'<p>{len(flagged) - len(viewed)} more flagged pairs, not shown side by side (their lines are in '
                   f"{CSV_NAME}):</p><ul>")
        out += [f"<li>{e(p.a)} and {e(p.b)}: {p.score:.2f}; {_functions_note(p.functions)}</li>"
                for p in flagged[len(viewed):]]
        out.append("</ul>")
    out.append("</section>")
    return "\n".join(out)


def page_html(result: SimilarityResult) -> str:
    """A standalone page around :func:`section_html`, with a policy that forbids loading anything."""
    return ("<!doctype html><html><head><meta charset=\"utf-8\">"
            # Without a viewport a phone lays the page out 980 px wide and shrinks it to unreadable text.
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            "<title>Similarity</title></head><body>" + section_html(result) + "</body></html>\n")


def write_similarity(out_dir: str | Path, threshold: float = DEFAULT_THRESHOLD, base_files: tuple[str | Path, ...] = (),
                     output: str | Path | None = None) -> tuple[SimilarityResult, Path, Path]:
    """Write ``similarity.csv`` and ``similarity.html`` (into ``output``, default ``out_dir``)."""
    result = similarity_section(out_dir, threshold, base_files)
    folder = Path(output) if output is not None else Path(out_dir)
    csv_path, html_path = folder / CSV_NAME, folder / HTML_NAME
    write_atomic(csv_path, csv_pieces(result))
    write_atomic(folder / GROUPS_CSV_NAME, groups_csv_text(result))
    write_atomic(html_path, page_html(result))
    return result, csv_path, html_path

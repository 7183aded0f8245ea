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
"""
from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass, field
from pathlib import Path

from autograder.runtime.errors import GraderError
from autograder.runtime.grading.extract import extract_program
from autograder.runtime.grading.files import write_atomic
from autograder.runtime.grading.gradebook import cell
from autograder.runtime.grading.intake import read_submission
from autograder.runtime.grading.outcome import RECORD_NAME, read_record, record_folders
from autograder.runtime.errors import SubmissionError
from autograder.similarity.base import base_from_file, starter_cells
from autograder.similarity.compare import (Document, Group, LineSpan, Pair, Settings, base_hashes, compare_class, document,
                                           starter_lines)

CSV_NAME = "similarity.csv"
GROUPS_CSV_NAME = "similarity-groups.csv"
HTML_NAME = "similarity.html"
#: Default score from which a pair is flagged (see docs/grading-guide.md: how to set it).
DEFAULT_THRESHOLD = 0.45
#: Pairs listed in the CSV and the page besides the flagged ones, so the gap below the threshold shows.
UNFLAGGED_SHOWN = 10


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

    @property
    def flagged(self) -> tuple[Pair, ...]:
        return tuple(p for p in self.pairs if p.score >= self.threshold)

    def shown(self, extra: int = UNFLAGGED_SHOWN) -> tuple[Pair, ...]:
        """The flagged pairs and the next ``extra`` below the threshold."""
        return self.pairs[: len(self.flagged) + extra]


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
        found[record.entry.student] = (record.outcome.assignment, program.cells)
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
    sources = []
    for assignment, students in sorted(by_assignment.items()):
        if base_files:
            base_cells = [c for f in base_files for c in base_from_file(f, assignment)]
            sources.append(", ".join(str(f) for f in base_files))
        else:
            try:
                base_cells = list(starter_cells(assignment))
                sources.append(f"the starter notebook of {assignment}")
            except GraderError:
                base_cells = []
                sources.append(f"none ({assignment} is not a built-in assignment; pass --base)")
        docs = [document(s, found[s][1], settings) for s in students]
        documents.update({d.name: d for d in docs})
        compared = compare_class(docs, base_hashes(base_cells, settings), settings, starter_lines(base_cells))
        pairs += compared.pairs
        groups += compared.groups
        common.append(f"{assignment}: {compared.common_fingerprints} fingerprints outside the base code are held by more "
                      f"than {compared.common_limit} of {compared.compared} submissions (a tenth of the class, at least "
                      f"{settings.common_minimum}) and weigh nothing in pair scores; a long block shared that way is "
                      "listed as a group instead")
    pairs.sort(key=lambda p: (-p.score, p.a, p.b))
    return SimilarityResult(tuple(pairs), threshold, len(found), documents, tuple(skipped), "; ".join(sources),
                            tuple(groups), tuple(common))


# ------------------------------------------------------------------ CSV

CSV_COLUMNS = ("rank", "student_a", "student_b", "score", "flagged", "matched_tokens", "lines_a", "lines_b")


def spans_text(spans: tuple[LineSpan, ...] | list[LineSpan]) -> str:
    """``cell 3: 4-9; cell 5: 2`` (cells counted from 1, as a notebook shows them)."""
    by_cell: dict[int, list[str]] = {}
    for s in spans:
        by_cell.setdefault(s.cell, []).append(f"{s.first}" if s.first == s.last else f"{s.first}-{s.last}")
    return "; ".join(f"cell {c + 1}: {', '.join(r)}" for c, r in sorted(by_cell.items()))


def csv_text(result: SimilarityResult) -> str:
    """The pairs shown (flagged ones and the next below the threshold) as CSV, text cells neutralised."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(CSV_COLUMNS)
    for rank, p in enumerate(result.shown(), start=1):
        writer.writerow([rank, cell(p.a), cell(p.b), f"{p.score:.4f}", "yes" if p.score >= result.threshold else "no",
                         p.matched_tokens, cell(spans_text(p.lines_a)),
                         cell(spans_text(p.lines_b))])
    return text.getvalue()


GROUP_COLUMNS = ("group", "size", "students", "shared_tokens", "discounted_in_pairs", "lines_of", "lines")


def groups_csv_text(result: SimilarityResult) -> str:
    """Every group as CSV: its members, size, the code they alone share (lines in one member), and whether
    pair scores discount that code as common (the group is larger than a tenth of the class)."""
    text = io.StringIO(newline="")
    writer = csv.writer(text)
    writer.writerow(GROUP_COLUMNS)
    for number, g in enumerate(result.groups, start=1):
        writer.writerow([number, len(g.members), cell(" ".join(g.members)), g.shared_tokens,
                         "yes" if g.discounted else "no", cell(g.shown), cell(spans_text(g.lines))])
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


def _code_html(doc: Document, spans: list[LineSpan]) -> str:
    """The cells of ``doc`` that hold a matched line, every line escaped, matched lines marked."""
    marked = {(s.cell, line) for s in spans for line in range(s.first, s.last + 1)}
    parts = []
    for number in sorted({c for c, _ in marked}):
        lines = doc.cells[number].splitlines()
        body = "\n".join(f"<mark>{html.escape(text)}</mark>" if (number, i) in marked else html.escape(text)
                         for i, text in enumerate(lines, start=1))
        parts.append(f'<div class="sim-note">cell {number + 1}</div><pre>{body}</pre>')
    return "".join(parts)


def section_html(result: SimilarityResult, extra: int = 0) -> str:
    """An HTML fragment: the flagged pairs (and ``extra`` more) side by side, matched lines highlighted.

    Student names and code are escaped with ``html.escape``; nothing in the
    fragment loads or runs anything.
    """
    e = html.escape
    out = [f"<style>{_STYLE}</style>", '<section class="similarity"><h2>Similarity</h2>',
           f"<p>{len(result.flagged)} of {len(result.pairs)} pairs sharing unusual code score at least "
           f"{result.threshold:g} ({result.compared} submissions compared; base code: {e(result.base)}). "
           "A high score is a reason to look at the two submissions, not a finding of copying.</p>"]
    for why in result.common:
        out.append(f'<p class="sim-note">Discounted as common: {e(why)}.</p>')
    for number, g in enumerate(result.groups, start=1):
        shown = result.documents.get(g.shown)
        why = (" Pair scores count this code as common (more than a tenth of the class holds it), so the pairs of "
               "this group score low or are not listed: this group is where it shows." if g.discounted else "")
        out.append(f'<div class="sim-pair"><h3>Group {number}: {len(g.members)} submissions share '
                   f'{g.shared_tokens} tokens no one else has</h3><p>{", ".join(e(m) for m in g.members)}.{e(why)}</p>')
        if shown is not None:
            out.append(f'<div class="sim-side"><b>{e(g.shown)}</b>{_code_html(shown, list(g.lines))}</div>')
        out.append("</div>")
    if result.not_compared:
        out.append("<p>Not compared: " + "; ".join(f"{e(s)} ({e(why)})" for s, why in result.not_compared) + "</p>")
    for p in result.shown(extra):
        a, b = result.documents.get(p.a), result.documents.get(p.b)
        out.append(f'<div class="sim-pair"><h3>{e(p.a)} and {e(p.b)}: {p.score:.2f}</h3>'
                   f'<p class="sim-note">{p.matched_tokens} matched tokens</p>')
        if a is not None and b is not None:
            out.append('<div class="sim-sides">'
                       f'<div class="sim-side"><b>{e(p.a)}</b>{_code_html(a, list(p.lines_a))}</div>'
                       f'<div class="sim-side"><b>{e(p.b)}</b>{_code_html(b, list(p.lines_b))}</div>'
                       "</div>")
        out.append("</div>")
    out.append("</section>")
    return "\n".join(out)


def page_html(result: SimilarityResult) -> str:
    """A standalone page around :func:`section_html` (flagged pairs and the next ones below the threshold,
    as in the CSV), with a policy that forbids loading anything."""
    return ("<!doctype html><html><head><meta charset=\"utf-8\">"
            # Without a viewport a phone lays the page out 980 px wide and shrinks it to unreadable text.
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            "<title>Similarity</title></head><body>" + section_html(result, UNFLAGGED_SHOWN) + "</body></html>\n")


def write_similarity(out_dir: str | Path, threshold: float = DEFAULT_THRESHOLD, base_files: tuple[str | Path, ...] = (),
                     output: str | Path | None = None) -> tuple[SimilarityResult, Path, Path]:
    """Write ``similarity.csv`` and ``similarity.html`` (into ``output``, default ``out_dir``)."""
    result = similarity_section(out_dir, threshold, base_files)
    folder = Path(output) if output is not None else Path(out_dir)
    csv_path, html_path = folder / CSV_NAME, folder / HTML_NAME
    write_atomic(csv_path, csv_text(result))
    write_atomic(folder / GROUPS_CSV_NAME, groups_csv_text(result))
    write_atomic(html_path, page_html(result))
    return result, csv_path, html_path

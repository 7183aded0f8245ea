"""``grader questions``: list, generate and stress-test exam-practice questions.

Each command only parses its options, calls one function of the
``question_bank`` core, and prints; ``GraderError`` becomes a one-line error.
"""
from __future__ import annotations

from pathlib import Path

import click

from autograder.cli_support import reports_errors
from question_bank.exporters import exporters
from question_bank.generate import GenerateRequest, run_generate
from question_bank.registry import family_summaries
from question_bank.stress import run_stress

_FAMILY_OPTION_HELP = "Question family (repeatable); default: every family. See `grader questions list`."


@click.group("questions")
def questions() -> None:
    """Draw seeded exam-practice questions from the question bank."""


@questions.command("list")
@reports_errors
def list_command() -> None:
    """List the question families with a one-line description each.

    Example: grader questions list
    """
    summaries = family_summaries()
    width = max(len(name) for name, _ in summaries)
    for name, summary in summaries:
        click.echo(f"{name:<{width}}  {summary}")


@questions.command("generate")
@click.option("-f", "--family", "families", multiple=True, metavar="FAMILY", help=_FAMILY_OPTION_HELP)
@click.option("-n", "n", type=int, default=1, show_default=True, help="Variants per family.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Root seed; the same seed gives the same bytes.")
@click.option("--format", "fmt", type=click.Choice(list(exporters())), default="json", show_default=True,
              help="Export format: " + "; ".join(f"{name}: {e.description}" for name, e in exporters().items())
              + ". See docs/practice-guide.md.")
@click.option("-o", "--out", type=click.Path(path_type=Path), default=None,
              help="Output file (one set) or directory (with --students). Default: standard output.")
@click.option("--students", "roster", type=click.Path(path_type=Path), default=None,
              help="Roster CSV with a student_id (or id, sid, email) column: one set per student.")
@click.option("--salt", default=None,
              help="Secret keying each student's seed (HMAC); required with --students.")
@click.option("--exam", "exam", type=click.Path(path_type=Path), default=None,
              help="Exam spec (YAML: slots of family, subquestion, points; a total): slot k is the same "
                   "task for every student and LMS group. -n is then the LMS pool per slot.")
@reports_errors
def generate_command(families: tuple[str, ...], n: int, seed: int, fmt: str, out: Path | None,
                     roster: Path | None, salt: str | None, exam: Path | None) -> None:
    """Generate question variants and export them.

    Formats with an answer key in a separate file (md, html) write it beside
    the -o file: -o week3.html gives week3.html and week3-answer-key.html.

    \b
    Examples:
      grader questions generate -f perplexity-from-probs -n 3 --format md
      grader questions generate -n 2 --seed 7 -o practice.json
      grader questions generate --format html -o week3.html
      grader questions generate --format selfcheck -o practice.html
      grader questions generate --format notebook -o practice.ipynb
      grader questions generate -n 5 --format qti -o week3.zip
      grader questions generate -n 5 --format moodle -o week3.xml
      grader questions generate --students roster.csv --salt SECRET --format md -o sheets/
      grader questions generate --exam midterm.yaml --students roster.csv --salt SECRET -o exams/
      grader questions generate --exam midterm.yaml --students roster.csv --salt SECRET --format paper -o exams/
      grader questions generate --exam midterm.yaml -n 20 --format qti -o midterm.zip
    """
    result = run_generate(GenerateRequest(families=families, n=n, seed=seed, fmt=fmt, out=out,
                                          roster=roster, salt=salt, exam=exam))
    if result.text is not None:
        click.echo(result.text, nl=False)
    else:
        click.echo(f"wrote {result.n_variants} variants to {len(result.written)} file(s) under {out}", err=True)


@questions.command("stress")
@click.option("-f", "--family", "families", multiple=True, metavar="FAMILY", help=_FAMILY_OPTION_HELP)
@click.option("-n", "n", type=int, default=1000, show_default=True, help="Variants per family.")
@click.option("--seed", type=int, default=0, show_default=True, help="Root seed of the stress run.")
@click.pass_context
@reports_errors
def stress_command(ctx: click.Context, families: tuple[str, ...], n: int, seed: int) -> None:
    """Generate N variants per family and check every answer independently.

    Reports distinct variants, where the correct choice lands and the time per
    variant, then how often each content-blind player (smallest, largest,
    sign pair, most alike, longest, ...) finds the key from the printed
    choices alone, per sub-question ("hits/variants", "!" past chance plus
    the margin); exits with status 1 if any check fails.

    Example: grader questions stress -n 1000
    """
    report = run_stress(families, n, seed)
    click.echo(report.table())
    click.echo()
    click.echo(report.cue_table())
    if not report.ok:
        ctx.exit(1)

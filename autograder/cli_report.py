"""``grader report``: the class report command. Parses options and calls
:func:`autograder.report.write_report`; no logic lives here."""
from __future__ import annotations

from pathlib import Path

import click

from autograder.cli_support import echo, reports_errors


@click.command()
@click.argument("out_dir", metavar="OUT", type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the page.  [default: OUT/report.html]")
@click.option("--similarity", is_flag=True,
              help="Add the section of `grader similarity`: pairs of submissions sharing unusual code.")
@reports_errors
def report(out_dir: Path, output: Path | None, similarity: bool) -> None:
    """Write a one-page HTML report of a graded class.

    OUT is the folder `grader grade` wrote (one folder per student, each with
    its outcome.json). The page lists every student with what became of the
    submission (graded, not attempted, did not load, timed out, rejected,
    failed to run), a link to their feedback, the score histogram, each
    question's mean score and each hidden test's pass rate over the attempted
    submissions, and the most frequent diagnosed mistakes with their
    explanations. It is a single file with the plots embedded: open it in any
    browser, offline, or send it on.

    \b
    Examples:
      grader report out
      grader report out -o reports/week3.html
      grader report out --similarity
    """
    # Imported here so that other commands do not pay for matplotlib.
    from autograder.report import write_report

    echo(f"report written to {write_report(out_dir, output, similarity)}")

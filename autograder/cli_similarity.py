"""``grader similarity``: rank pairs of submissions by the unusual code they share.
Parses options and calls :func:`autograder.similarity.section.write_similarity`; no logic lives here."""
from __future__ import annotations

from pathlib import Path

import click

from autograder.cli_support import echo, reports_errors
from autograder.runtime.text import terminal
from autograder.similarity.section import DEFAULT_THRESHOLD


@click.command()
@click.argument("out_dir", metavar="OUT", type=click.Path(file_okay=False, path_type=Path))
@click.option("--threshold", type=click.FloatRange(0, 1), default=DEFAULT_THRESHOLD, show_default=True,
              help="Score from which a pair is flagged.")
@click.option("--base", "base_files", multiple=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Starter notebook or course code students were given (repeatable); "
                   "[default: the built-in assignment's starter notebook].")
@click.option("-o", "--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for similarity.csv and similarity.html.  [default: OUT]")
@reports_errors
def similarity(out_dir: Path, threshold: float, base_files: tuple[Path, ...], output: Path | None) -> None:
    """Rank pairs of submissions by how much unusual code they share.

    OUT is the folder `grader grade` wrote. Code from the starter notebook and
    code much of the class wrote count for nothing; the score says how much
    of two submissions' remaining code they share. A pair is flagged at the
    threshold. Writes similarity.csv (every pair sharing unusual code: score,
    matched lines, functions shared), similarity-groups.csv (three or more
    submissions joined by high-scoring pairs that all hold most of one
    solution, at any group size) and
    similarity.html (groups and flagged pairs side by side, matching tokens
    marked). A high score is a reason to look, not a verdict.

    \b
    Examples:
      grader similarity graded
      grader similarity graded --threshold 0.3 --base dist/lm-head/student/lm-head.ipynb
    """
    from autograder.similarity.section import write_similarity

    result, csv_path, html_path = write_similarity(out_dir, threshold, base_files, output)
    for student, why in result.not_compared:
        echo(f"not compared: {student}: {why}", err=True)
    click.echo(f"{result.compared} submissions compared, {len(result.flagged)} pairs flagged (at or above {threshold:g})")
    for number, g in enumerate(result.groups, start=1):
        click.echo(f"  group {number}: {len(g.members)} submissions ({', '.join(terminal(m) for m in g.members)}) "
                   f"all hold the same {g.shared_tokens} tokens of code")
    for p in result.flagged[:20]:
        shared = f"  ({', '.join(terminal(f) for f in p.functions)})" if p.functions else ""
        click.echo(f"  {p.score:.2f}  {click.style(terminal(p.a), bold=True)}  {click.style(terminal(p.b), bold=True)}{shared}")
    echo(f"written: {csv_path}, {csv_path.with_name('similarity-groups.csv').name} and {html_path}")

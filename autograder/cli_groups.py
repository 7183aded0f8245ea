"""``grader groups``: the class's wrong results grouped by behaviour, and the instructor's notes for
them. Parses options and calls :func:`autograder.groups.run.run_groups`; no logic lives here."""
from __future__ import annotations

from pathlib import Path

import click

from autograder.cli_support import echo, reports_errors


@click.command()
@click.argument("out_dir", metavar="OUT", type=click.Path(file_okay=False, path_type=Path))
@click.option("--notes", "notes_file", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="notes.yaml (group id -> your Markdown note): each member of a group gets its note in "
                   "feedback.md, results.json and the gradebook.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Where to write the CSV.  [default: OUT/groups.csv]")
@reports_errors
def groups(out_dir: Path, notes_file: Path | None, output: Path | None) -> None:
    """Group the class's wrong results by what the code does, and write groups.csv.

    OUT is the folder `grader grade` wrote. Per function, each group of
    submissions that fail the same tests, with the same named mistake and
    the same outputs on probes the whole class shares; its size, share of
    the points lost, a representative's code beside a second member's and
    what the grader could say. Groups no catalogued mistake names come
    first. A group's id stays the same on every rerun: write a note for it
    in notes.yaml and pass --notes to give it to every member.

    \b
    Examples:
      grader groups graded
      grader groups graded --notes course/notes.yaml
    """
    from autograder.groups.notes import read_notes
    from autograder.groups.run import run_groups

    notes = read_notes(notes_file) if notes_file else None
    result = run_groups(out_dir, output, notes)
    unnamed = [g for g in result.found.groups if not g.named]
    click.echo(f"{len(result.found.groups)} groups ({len(unnamed)} unnamed) over "
               f"{len({r.entry.student for g in result.found.groups for r in g.members})} submissions")
    for g in sorted(unnamed, key=lambda g: -g.size)[:10]:
        echo(f"  {g.id}  {g.size} submissions, {result.found.share(g):.0%} of the points lost")
    if result.notes is not None:
        echo(f"notes: {len(result.notes.changed)} submissions' files rewritten")
        for gid in result.notes.unused:
            echo(f"  note for {gid}: no submission is in that group (yet)", err=True)
    echo(f"written: {result.csv_path}")

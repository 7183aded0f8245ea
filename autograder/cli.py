"""The ``grader`` command line: parses options, calls one core function per
command, and turns ``GraderError`` into a one-line error. No logic lives here."""
from __future__ import annotations

import click

from autograder import __version__
from autograder.cli_questions import questions
from autograder.cli_support import reports_errors


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grader")
def main() -> None:
    """LM-head grader: build auto-graded assignments on the language-modelling
    head and its loss, grade submissions, and draw exam-practice questions."""


@main.command()
@click.argument("assignments", nargs=-1)
@click.option("-o", "--output", "output_dir", default="dist", show_default=True,
              type=click.Path(file_okay=False), help="Folder to write the built assignments into.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False),
              help="Course config (YAML): title, points, sizes, seeds, optional questions, due date.")
@click.option("--no-verify", is_flag=True,
              help="Skip the self-check (solution scores full marks, blank notebook scores 0).")
@reports_errors
def build(assignments: tuple[str, ...], output_dir: str, config_path: str | None, no_verify: bool) -> None:
    """Build assignments into student and solution notebooks and an autograder zip.

    With no ASSIGNMENTS, builds every built-in assignment. Each build is
    verified with otter before it is written to OUTPUT/<assignment>/.

    \b
    Examples:
      grader build
      grader build lm-head -o out --config course.yaml
    """
    from autograder.build import build as run_build

    results = run_build(list(assignments) or None, output_dir, config_path, verify=not no_verify,
                        progress=lambda message: click.echo(message, err=True))
    for r in results:
        check = "not verified" if r.solution_score is None else (
            f"solution {r.solution_score[0]:g}/{r.solution_score[1]:g}, "
            f"blank student {r.student_score[0]:g}/{r.student_score[1]:g}")
        click.echo(f"{r.name}: built in {r.seconds:.1f} s ({check})")
        click.echo(f"  student notebook  {r.student}")
        click.echo(f"  solution notebook {r.solution}")
        click.echo(f"  autograder zip    {r.autograder_zip}")


main.add_command(questions)


if __name__ == "__main__":
    main()

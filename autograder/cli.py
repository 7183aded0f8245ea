"""The ``grader`` command line: parses options, calls one core function per
command, and turns ``GraderError`` into a one-line error. No logic lives here."""
from __future__ import annotations

import importlib
import sys

import click

from autograder import __version__
from autograder.cli_support import echo, fail, reports_errors


class _Commands(click.Group):
    """The commands, those in modules of their own imported only when asked for: their imports
    (the question bank, the similarity engine) took a fifth of a second off every `grader grade`."""

    _ELSEWHERE = {"questions": "autograder.cli_questions", "practice": "autograder.cli_practice",
                  "report": "autograder.cli_report", "similarity": "autograder.cli_similarity",
                  "groups": "autograder.cli_groups"}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(self._ELSEWHERE))

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self._ELSEWHERE and name not in self.commands:
            self.add_command(getattr(importlib.import_module(self._ELSEWHERE[name]), name))
        return super().get_command(ctx, name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
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
    if results:
        from autograder.build.pins import pins_summary
        click.echo(pins_summary())


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-a", "--autograder", "autograder_zip", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The autograder.zip written by `grader build`.")
@click.option("-o", "--output", "out", required=True, type=click.Path(file_okay=False),
              help="Folder for gradebook.csv and one folder of results per student.")
@click.option("--workers", type=click.IntRange(1, 64), default=None,
              help="Submissions graded at once [default: the number of CPUs].")
@click.option("--timeout", type=click.FloatRange(1, 3600), default=30.0, show_default=True,
              help="Wall-clock seconds of one submission's total budget (a function that hangs gets its own "
                   "per-call window and is not called again; see the grading guide).")
@click.option("--force", is_flag=True, help="Regrade submissions that were already graded.")
@click.option("--canvas-csv", is_flag=True,
              help="Also write gradebook_canvas.csv for Canvas's gradebook import (column: --canvas-column).")
@click.option("--canvas-gradebook", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A gradebook CSV exported from Canvas: writes a copy with this assignment's column filled.")
@click.option("--canvas-column", default=None, metavar="TITLE",
              help="The Canvas column to fill [default: the one titled like the assignment].")
@click.option("--canvas-scale", is_flag=True,
              help="Scale grades to the Canvas column's Points Possible when it differs from the autograder's "
                   "total [default: refuse].")
@click.option("--canvas-keep-scores", is_flag=True,
              help="Keep a score already in the Canvas column instead of replacing it (each is listed).")
@click.option("--moodle-csv", is_flag=True,
              help="Also write Moodle's grade import CSV (and its grading worksheet for a Moodle download).")
@click.option("--moodle-max-grade", type=click.FloatRange(0, min_open=True), default=None, metavar="POINTS",
              help="The Moodle assignment's Maximum grade: grades are scaled to it [default: the autograder's "
                   "total; Moodle's own default is 100].")
@click.option("--moodle-worksheet", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Moodle's grading worksheet of the assignment (Download grading worksheet): checks whose "
                   "each folder of a Moodle download is, reads team downloads (every member of a group graded "
                   "on its file), and implies --moodle-csv; its Maximum Grade is the default --moodle-max-grade.")
@click.option("--notes", "notes_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="notes.yaml: group id -> your note; every member of each mistake group gets its note "
                   "(see `grader groups`).")
@click.option("--isolation", type=click.Choice(["auto", "bwrap", "user", "rlimits"]), default="auto",
              show_default=True, help="Sandbox to use; auto picks the strongest that works here.")
@click.option("--trusted-code", "trusted", is_flag=True,
              help="Accept a sandbox weaker than bubblewrap for code you trust (your own solutions); "
                   "without it such a sandbox is refused.")
@reports_errors
def grade(paths, autograder_zip, out, workers, timeout, force, canvas_csv, canvas_gradebook, canvas_column,
          canvas_scale, canvas_keep_scores, moodle_csv, moodle_max_grade, moodle_worksheet, notes_file,
          isolation, trusted) -> None:
    """Grade submissions in bulk: a gradebook, results.json and feedback per student.

    PATHS are submission files (.ipynb, .py or the export .zip), folders of
    them or of one subfolder per student, Canvas's or Moodle's download of
    an assignment's submissions, or a Gradescope "export submissions"
    folder. Each submission runs
    in its own sandbox and is judged from outside it. A rerun skips what was
    already graded with the same autograder unless --force.

    \b
    Examples:
      grader grade submissions/ -a dist/lm-head/autograder/autograder.zip -o graded
      grader grade export/ -a autograder.zip -o graded --canvas-csv
      grader grade canvas_download/ -a autograder.zip -o graded --canvas-gradebook grades.csv
      grader grade moodle_download/ -a autograder.zip -o graded --moodle-worksheet Grades-CS101-LM-77.csv
      grader grade submissions/ -a autograder.zip -o graded --notes course/notes.yaml
    """
    from autograder.runtime.grading.bulk import discover, grade_entries, moodle_comments, moodle_options
    from autograder.runtime.grading.summary import nothing_graded, summary_lines

    notes = None
    if notes_file:
        from autograder.groups.notes import read_notes
        notes = read_notes(notes_file)     # read first: a malformed file is an error before grading
    participants, moodle_csv, moodle_max_grade = moodle_options(moodle_worksheet, moodle_csv, moodle_max_grade)
    found = discover(paths, participants)
    entries = found.entries
    for line in [f"skipped {s}" for s in found.skipped] + found.warnings:
        echo(line, err=True)
    with click.progressbar(length=len(entries), label="grading", file=sys.stderr, show_eta=True) as bar:
        result = grade_entries(entries, autograder_zip, out, workers=workers, timeout=timeout, force=force,
                               isolation=isolation, trusted=trusted, canvas_csv=canvas_csv,
                               canvas_gradebook=canvas_gradebook, canvas_column=canvas_column,
                               canvas_scale=canvas_scale, canvas_keep_scores=canvas_keep_scores,
                               moodle_csv=moodle_csv, moodle_max_grade=moodle_max_grade, notes=notes,
                               moodle_comments=moodle_comments(participants),
                               on_done=lambda entry, outcome, skipped: bar.update(1))
    for line in summary_lines(result):
        echo(line)
    if result.interrupted:
        raise fail(f"interrupted: {result.graded} graded this run; rerun the same command to grade the rest.")
    problem = nothing_graded(result)
    if problem:
        raise fail(problem)


if __name__ == "__main__":
    main()

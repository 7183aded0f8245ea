"""The ``grader`` command line: parses options, calls one core function per
command, and turns ``GraderError`` into a one-line error. No logic lives here."""
from __future__ import annotations

import functools

import click

from autograder import __version__
from autograder.errors import GraderError


def reports_errors(func):
    """Turn the core's ``GraderError`` into a clean click error (exit code 1)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except GraderError as exc:
            raise click.ClickException(str(exc)) from exc
    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="grader")
def main() -> None:
    """LM-head grader: build auto-graded assignments on the language-modelling
    head and its loss, grade submissions, and draw exam-practice questions."""

"""Helpers shared by the command modules (the core never imports click)."""
from __future__ import annotations

import functools

import click

from autograder.runtime.errors import GraderError
from autograder.runtime.text import terminal


def echo(line: str, err: bool = False) -> None:
    """Print one line the terminal shows as text: file names, ids and notes come from submissions
    and LMS exports, and an escape sequence in one (``ESC ] 52``, a clipboard write) would reach
    the instructor's terminal. Every control character prints as a visible escape."""
    click.echo(terminal(line), err=err)


def fail(message: str) -> click.ClickException:
    """A click error (exit code 1) whose message, which may quote submissions, prints as text."""
    return click.ClickException(terminal(message, multiline=True))


def reports_errors(func):
    """Turn the core's ``GraderError`` into a clean click error (exit code 1)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except GraderError as exc:
            raise fail(str(exc)) from exc
    return wrapper

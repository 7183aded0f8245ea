"""Helpers shared by the command modules (the core never imports click)."""
from __future__ import annotations

import functools

import click

from autograder.runtime.errors import GraderError


def reports_errors(func):
    """Turn the core's ``GraderError`` into a clean click error (exit code 1)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except GraderError as exc:
            raise click.ClickException(str(exc)) from exc
    return wrapper

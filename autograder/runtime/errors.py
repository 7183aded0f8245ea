"""Exceptions the core raises; the CLI turns each into a one-line error.

Every message says what was expected, what was found and what to do.
"""


class GraderError(Exception):
    """Base class of every error the grader reports to a user."""


class ConfigError(GraderError):
    """A course config file is missing, unreadable or holds an invalid value."""


class BuildError(GraderError):
    """An assignment could not be built or failed its own verification."""


class SubmissionError(GraderError):
    """A submission could not be read as a notebook, script or export zip."""

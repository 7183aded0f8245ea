"""Errors of the sandbox itself (as opposed to errors of the student's code).

A student's code failing, hanging or crashing is never an exception on the
grader's side: it is data in an ``ImportResult`` or ``CallResult``. These
exceptions mean the grader could not run the sandbox at all.
"""
from autograder.runtime.errors import GraderError


class SandboxError(GraderError):
    """The sandbox could not be started or used; the message says what to fix."""


class SandboxUnavailable(SandboxError):
    """The requested isolation level cannot be used on this machine."""

"""Run untrusted student code in an isolated worker process and call into it.

Values cross between the grader and the worker only as plain data (see
``channel.py``).
"""
from autograder.sandbox.channel import ChannelError, Named
from autograder.sandbox.errors import SandboxError, SandboxUnavailable
from autograder.sandbox.limits import Limits

__all__ = ["ChannelError", "Limits", "Named", "SandboxError", "SandboxUnavailable"]

"""Run untrusted student code in an isolated worker process and call into it.

The grader (trusted) holds the hidden tests and references; the student's
code runs in a separate worker process, isolated as strongly as the machine
allows (see ``isolation.py`` and ``docs/security-model.md``). Values cross
between them only as plain data (see ``channel.py``).

Example::

    with SandboxSession(source) as session:
        result = session.call("softmax", logits)
        if result.ok:
            probs = result.value          # a plain numpy.ndarray
        else:
            print(result.error)           # what went wrong, for the student
"""
from autograder.sandbox.channel import ChannelError, Named
from autograder.sandbox.errors import SandboxError, SandboxUnavailable
from autograder.sandbox.isolation import Isolation, detect_isolation
from autograder.sandbox.limits import Limits
from autograder.sandbox.runner import CallError, CallResult, CellError, ImportResult, SandboxSession, WarmStart
from autograder.sandbox.forkserver import ForkServer  # noqa: E402  (needs runner first)

__all__ = [
    "CallError", "CallResult", "CellError", "ChannelError", "ForkServer", "ImportResult", "Isolation", "Limits",
    "Named", "SandboxError", "SandboxSession", "SandboxUnavailable", "WarmStart", "detect_isolation",
]

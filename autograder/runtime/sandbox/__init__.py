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
from autograder.runtime.sandbox.channel import ChannelError, Named
from autograder.runtime.sandbox.errors import SandboxError, SandboxUnavailable
from autograder.runtime.sandbox.isolation import Isolation, detect_isolation
from autograder.runtime.sandbox.limits import Limits
from autograder.runtime.sandbox.results import CallError, CallResult, CellError, ImportResult
from autograder.runtime.sandbox.session import SandboxSession, WarmStart, WorkerSource
from autograder.runtime.sandbox.forkserver import ForkServer

__all__ = [
    "CallError", "CallResult", "CellError", "ChannelError", "ForkServer", "ImportResult", "Isolation", "Limits",
    "Named", "SandboxError", "SandboxSession", "SandboxUnavailable", "WarmStart", "WorkerSource", "detect_isolation",
]

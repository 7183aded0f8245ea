"""Resource limits for one sandboxed submission.

The defaults fit the hidden tests of this unit with a wide margin (all of
them together take well under a second of CPU and a few MB of memory) while
keeping a hostile or broken submission from hurting the grading machine.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """Limits applied to the worker process that runs a student's code.

    Attributes:
        cpu_seconds: ``RLIMIT_CPU`` of each worker process. A worker that
            uses it up is stopped by the kernel (SIGXCPU, then SIGKILL a
            second later).
        memory_bytes: ``RLIMIT_AS`` (address space) of each process. Python
            with NumPy needs about 150 MB of address space; allocations past
            the limit raise ``MemoryError`` inside the student's code.
        max_processes: processes and threads the submission may create
            (``RLIMIT_NPROC``). The kernel counts this limit per user, so it
            is only exact when the worker runs under a user of its own (the
            ``user`` level and ``bwrap`` run as root, which both switch to a
            fresh uid nobody else uses). Where the worker keeps the grader's
            own uid, the limit is set to the tasks that uid already runs
            plus this number, so the grader's other processes do not count
            against the student. 64 leaves room for a few threads or a small
            ``multiprocessing`` pool and stops a fork bomb early. Root is
            exempt from ``RLIMIT_NPROC``, so the ``rlimits`` level run as
            root has no process limit at all.
        file_size_bytes: ``RLIMIT_FSIZE``, the largest file the worker may
            write. Writing past it fails with ``OSError`` (the worker ignores
            SIGXFSZ so the write fails instead of killing the process).
        open_files: ``RLIMIT_NOFILE``.
        wall_seconds_total: wall-clock budget for the whole submission:
            starting the worker, running its code and every call, including
            restarts after a crash. A call that hangs (runs out its
            ``wall_seconds_per_call``) and the reload it forces are not taken
            from it: that function is not called again, and the others keep
            their time (see ``longest_session``).
        wall_seconds_per_call: wall-clock limit for loading the code and for
            each call. A call that exceeds it is stopped by killing the
            worker, which is restarted for the next call.
        stdout_bytes: how much of the student's printed output (stdout and
            stderr together) is kept; the rest is counted and dropped.
        message_bytes: the largest single message on the channel, in either
            direction (arguments of one call, or one return value).
        work_dir_bytes: size of the in-memory work directory under bubblewrap
            (a tmpfs, so it also bounds the memory files can take there).
    """

    cpu_seconds: int = 10
    memory_bytes: int = 1 * GIB
    max_processes: int = 64
    file_size_bytes: int = 16 * MIB
    open_files: int = 64
    wall_seconds_total: float = 30.0
    wall_seconds_per_call: float = 10.0
    stdout_bytes: int = 64 * KIB
    message_bytes: int = 64 * MIB
    work_dir_bytes: int = 64 * MIB

    def longest_session(self, functions: int) -> float:
        """Longest wall-clock time a session that calls ``functions`` distinct functions can take:
        the total budget, one per-call window for the call that was running when the total ran out,
        and, for each function that hangs (once at most, since it is not called again), its per-call
        window and the reload of the code after it."""
        return self.wall_seconds_total + self.wall_seconds_per_call * (1 + 2 * functions)

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"Limits.{field.name} must be a positive number, got {value!r}.")
        # NumPy alone needs ~150 MB of address space and a dozen descriptors:
        # below these floors the worker cannot even start, which would look
        # like a broken submission rather than a misconfigured grader.
        if self.memory_bytes < 256 * MIB:
            raise ValueError(f"Limits.memory_bytes must be at least 256 MiB, got {self.memory_bytes}.")
        if self.open_files < 16:
            raise ValueError(f"Limits.open_files must be at least 16, got {self.open_files}.")

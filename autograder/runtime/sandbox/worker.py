"""The program that runs inside the sandbox, next to the student's code.

The runner does not import this module: it sends its source text, together
with the channel's, to a fresh ``python -I -S`` in the sandbox, where the
project's packages are not installed. So this file imports only the
standard library (NumPy comes in through the channel module), and it keeps
no secret: everything in this process is visible to the student's code,
which can also rewrite it. The grader therefore treats every byte the worker
sends as untrusted; the worker's job is only to make honest submissions
easy to grade and to report their failures as data.

Life of a worker: set up output capture and signals, import NumPy and common
modules, drop root privileges where the runner asked for it, send ``ready``,
then serve requests until the request pipe closes:

* ``load`` runs the submission's cells in a fresh namespace named
  ``__student__`` and reports each cell's exception (any ``BaseException``,
  so ``sys.exit`` and ``KeyboardInterrupt`` too) as data, sending a
  ``progress`` frame with each cell's index as it starts it (a load that
  never ends is then told by the grader which cell was running);
* ``call`` calls one function of that namespace on decoded arguments and
  replies with its value, or with the exception it raised, plus the array
  arguments it changed in place and, for the names in the request's
  ``record``, the calls the function made to them (``calls``).

Arrays of both travel through the arena the grader shares with the worker,
when it passed one, and inline in the message otherwise.

The process always ends with ``os._exit``, so no cleanup handler of the
student's can run after the grader has stopped listening.

Why one module of this size: it is sent into the sandbox as source text with the channel and nothing else, so it cannot import a sibling of its own.
"""
from __future__ import annotations

import builtins
import dis
import importlib
import inspect
import io
import linecache
import mmap
import os
import signal
import stat
import sys
import threading
import traceback
from types import ModuleType
from typing import Any, Iterable

#: Modules imported before privileges are dropped. Where the worker switches
#: to an unprivileged user without a private filesystem view, the Python
#: installation may not be readable by that user (it can live in root's
#: home), so what a submission is likely to import is loaded beforehand.
PREIMPORTS = (
    "numpy", "numpy.linalg", "numpy.random", "numpy.fft",
    "math", "cmath", "random", "statistics", "fractions", "decimal", "itertools", "functools",
    "collections", "collections.abc", "operator", "copy", "heapq", "bisect", "string", "re",
    "typing", "dataclasses", "json", "time", "warnings", "textwrap", "enum", "numbers",
)
#: Frames of the worker itself, left out of tracebacks shown to students.
OWN_FILES = frozenset({"<sandbox_worker>", "<sandbox_channel>", "<sandbox_zygote>", "<string>"})
MESSAGE_CHARS = 2000
TRACEBACK_CHARS = 4000
MAX_FUNCTIONS = 500
#: Calls of each helper recorded during one call of the function under test, at most.
RECORD_CALLS = 2
#: Array elements one recorded helper call may hold (inputs and output together). A larger
#: call is reported by name only: copying it could push an honest submission over its memory
#: limit, and the grader's check of the helper would cost as much as the test.
RECORD_ELEMENTS = 200_000
MAX_PARAMS = 32
EXIT_SETUP_FAILED = 70
PR_SET_PDEATHSIG = 1
PR_SET_NO_NEW_PRIVS = 38

#: System calls the student's code is refused (``EPERM``), per architecture, with the
#: ``AUDIT_ARCH`` value the kernel reports for it and the number of ``seccomp`` itself.
#: Each one makes kernel state that outlives the process, escapes its memory limit or
#: is shared with other submissions: SysV shared memory, queues and semaphores and POSIX
#: queues (they live in the IPC namespace until removed), ``memfd`` and secret memory
#: (pages no process's address space accounts for), kernel keys (kept per uid, readable
#: by serial number), ``io_uring`` (which makes sockets without calling ``socket``), and
#: ``flock`` and ``inotify``: sandboxes graded at the same time see the same read-only
#: files (the standard library, NumPy), and a lock taken on one, or a watch on it, carries
#: bits from one submission to another. The same files' pages in the page cache are shared
#: too: ``fadvise`` and ``readahead`` evict or load them, and ``mincore``, ``cachestat`` and
#: ``preadv2`` (with ``RWF_NOWAIT``) tell which are cached, exactly, so one submission could
#: leave bits for the next; all are refused (``pwritev2`` with them, its twin).
#: ``socket`` is allowed for ``AF_UNIX`` only: no TCP or UDP state, no netlink; ``fcntl``
#: is allowed except for its record locks (``FCNTL_LOCKS``), the other way to lock a file.
SYSCALLS = {
    "x86_64": {"arch": 0xC000003E, "seccomp": 317, "socket": 41, "fcntl": 72, "denied": {
        "shmget": 29, "semget": 64, "msgget": 68, "mq_open": 240, "memfd_create": 319,
        "add_key": 248, "request_key": 249, "keyctl": 250, "io_uring_setup": 425, "memfd_secret": 447,
        "flock": 73, "inotify_init": 253, "inotify_init1": 294, "fanotify_init": 300,
        "fadvise64": 221, "readahead": 187, "mincore": 27, "cachestat": 451, "preadv2": 327, "pwritev2": 328}},
    "aarch64": {"arch": 0xC00000B7, "seccomp": 277, "socket": 198, "fcntl": 25, "denied": {
        "shmget": 194, "semget": 190, "msgget": 186, "mq_open": 180, "memfd_create": 279,
        "add_key": 217, "request_key": 218, "keyctl": 219, "io_uring_setup": 425, "memfd_secret": 447,
        "flock": 32, "inotify_init1": 26, "fanotify_init": 262,
        "fadvise64": 223, "readahead": 213, "mincore": 232, "cachestat": 451, "preadv2": 286, "pwritev2": 287}},
}
#: ``fcntl`` commands that lock: F_GETLK, F_SETLK, F_SETLKW and their open-file forms.
FCNTL_LOCKS = (5, 6, 7, 36, 37, 38)
#: x86_64 numbers with this bit set are the x32 ABI: another table, refused whole.
X32_BIT = 0x40000000
AF_UNIX = 1


class OutputBudget:
    """Bytes of output the worker may still forward, shared by stdout and stderr."""

    def __init__(self, limit: int) -> None:
        self.remaining = limit
        self.dropped = 0
        self._lock = threading.Lock()

    def take(self, wanted: int, total: int) -> int:
        """Reserve up to ``wanted`` bytes of a write of ``total``; count the rest as dropped."""
        with self._lock:
            granted = min(wanted, self.remaining)
            self.remaining -= granted
            self.dropped += max(total - granted, 0)
            return granted


class BoundedStream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr``: forwards text to a descriptor until the budget runs out.

    Past the budget, writes cost only a length count, so printing 200 MB
    neither fills memory nor floods the pipe to the grader.
    """

    def __init__(self, fd: int, budget: OutputBudget) -> None:
        super().__init__()
        self._fd = fd
        self._budget = budget

    @property
    def encoding(self) -> str:
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        return self._fd

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        # Slice before encoding: a character is at least one byte, so this
        # never encodes more than the budget, however long ``text`` is.
        data = text[:max(self._budget.remaining, 0)].encode("utf-8", "replace")
        granted = self._budget.take(len(data), len(text))
        view = memoryview(data)[:granted]
        try:
            while view:
                view = view[os.write(self._fd, view):]
        except OSError:   # the grader closed the pipe: nothing to report to
            pass
        return len(text)

    def flush(self) -> None:
        pass


def _safe_str(value: Any) -> str:
    """``str(value)``, bounded, even when the student's ``__str__`` fails."""
    try:
        text = str(value)
    except BaseException:   # the student's __str__ may raise anything
        return "<the message could not be converted to text>"
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + " ...[truncated]"


def describe_exception(exc: BaseException) -> dict[str, str]:
    """Type name, message and a traceback of the student's frames only."""
    type_name = _safe_str(type(exc).__name__)
    message = _safe_str(exc)
    try:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename not in OWN_FILES]
        lines = traceback.format_list(frames) + traceback.format_exception_only(type(exc), exc)
        text = "Traceback (most recent call last):\n" + "".join(lines) if frames else "".join(lines)
    except BaseException:
        text = f"{type_name}: {message}\n"
    if len(text) > TRACEBACK_CHARS:   # the end of a traceback says the most
        text = "...[earlier lines not shown]\n" + text[-TRACEBACK_CHARS:]
    return {"type": type_name, "message": message, "traceback": text}


def _parameters(fn: Any) -> list[str]:
    try:
        names = list(inspect.signature(fn).parameters)
    except BaseException:
        return []
    return [str(name)[:100] for name in names[:MAX_PARAMS]]


def _numbers_read(fn: Any, namespace: dict[str, Any]) -> dict[str, int]:
    """The module-level ints (2 or more) ``fn``'s code, nested code included, loads as globals."""
    code = getattr(fn, "__code__", None)
    found: dict[str, int] = {}
    stack = [code] if code is not None and hasattr(code, "co_code") else []
    try:
        while stack and len(found) < 6:
            current = stack.pop()
            stack.extend(c for c in current.co_consts if hasattr(c, "co_code"))
            for op in dis.get_instructions(current):
                if op.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(op.argval, str):
                    value = namespace.get(op.argval)
                    if type(value) is int and 2 <= value < 10**12:
                        found[op.argval[:40]] = value
    except Exception:   # a code object the student built by hand: nothing to report
        return {}
    return found


def _changed(before: Any, after: Any, np: ModuleType) -> bool:
    """Whether an array argument differs from its copy taken before the call."""
    if type(after) is not np.ndarray or after.shape != before.shape or after.dtype != before.dtype:
        return True
    if np.array_equal(after, before):
        return False
    # Only an array holding NaN can still be unchanged. ``equal_nan`` costs twenty times as
    # much (it masks both arrays), which on every call made this check cost more than the
    # student's own function on large inputs.
    return before.dtype.kind not in "fc" or not np.array_equal(after, before, equal_nan=True)


def _plain(value: Any, np: ModuleType, depth: int = 0) -> bool:
    """Whether ``value`` is data the channel carries (a recorded helper call is sent back only then)."""
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return True
    if kind is np.ndarray or isinstance(value, np.generic):
        return value.dtype.kind in "biufc"
    if kind in (tuple, list) and depth < 4 and len(value) <= 64:
        return all(_plain(item, np, depth + 1) for item in value)
    if kind is dict and depth < 4 and len(value) <= 64:
        return all(type(k) is str and _plain(v, np, depth + 1) for k, v in value.items())
    return False


def _elements(value: Any, np: ModuleType) -> int:
    """Array elements in a plain ``value`` (each other item counts one)."""
    if type(value) is np.ndarray:
        return int(value.size)
    if type(value) in (tuple, list):
        return sum(_elements(item, np) for item in value)
    if type(value) is dict:
        return sum(_elements(item, np) for item in value.values())
    return 1


def _copied(value: Any, np: ModuleType) -> Any:
    """A copy of a plain ``value``: the student's code may change its arrays after the call."""
    if type(value) is np.ndarray:
        return value.copy()
    if type(value) in (tuple, list):
        return type(value)(_copied(item, np) for item in value)
    if type(value) is dict:
        return {key: _copied(item, np) for key, item in value.items()}
    return value


def _resolve_named(value: Any, channel: ModuleType) -> Any:
    """Replace ``Named`` markers (at any depth) by the functions they stand for."""
    if isinstance(value, channel.Named):
        return value.function()
    if type(value) in (tuple, list):
        return type(value)(_resolve_named(item, channel) for item in value)
    if type(value) is dict:
        return {key: _resolve_named(item, channel) for key, item in value.items()}
    return value


class Worker:
    """Serves ``load`` and ``call`` requests on the two protocol pipes."""

    def __init__(self, channel: ModuleType, config: dict[str, Any], budget: OutputBudget) -> None:
        self.channel = channel
        self.np = sys.modules["numpy"]
        self.requests = config["requests"]
        self.replies = config["replies"]
        self.max_bytes = config["max_bytes"]
        #: The arena shared with the grader, if it sent one: arrays cross through it (see ``channel``).
        self.arena = _map_arena(config, channel)
        self.budget = budget
        self.namespace: dict[str, Any] | None = None
        #: Per function name, the submission's functions its code reaches by name (see ``reached``).
        self._reached: dict[str, frozenset[str]] = {}
        self.seq: Any = None    # echoed in the reply, so the grader can match it to its request

    def serve(self) -> None:
        """Answer requests until the grader closes the request pipe."""
        np = self.np
        self.send({"op": "ready", "pid": os.getpid(), "uid": os.getuid(),
                   "python": sys.version.split()[0], "numpy": np.__version__})
        while True:
            try:
                body = self.channel.read_frame(self.requests, self.max_bytes)
            except BaseException:   # an unreadable request: the grader will see the pipe close
                os._exit(3)
            if body is None:
                os._exit(0)
            try:
                reply = self.handle(body)
            except BaseException as exc:   # e.g. an interrupt delivered between student calls
                reply = self.pack({"ok": False, "kind": "worker", **describe_exception(exc)})
            try:
                self.channel.write_all(self.replies, reply)
            except BaseException:
                os._exit(4)

    def send(self, fields: dict[str, Any]) -> None:
        self.channel.write_all(self.replies, self.pack(fields))

    def pack(self, fields: dict[str, Any], values: dict[str, Any] | None = None) -> bytes:
        fields = dict(fields, dropped=self.budget.dropped, seq=self.seq)
        return self.channel.pack(fields, values, max_bytes=self.max_bytes, arena=self.arena)

    def handle(self, body: bytes) -> bytes:
        """Decode one request and run it."""
        try:
            fields, values = self.channel.unpack(body, allow_named=True, arena=self.arena)
        except self.channel.ChannelError as exc:
            return self.pack({"ok": False, "kind": "bad_request", "type": "ChannelError",
                              "message": str(exc), "traceback": ""})
        self.seq = fields.get("seq")
        if fields.get("op") == "load":
            return self.load(fields.get("cells"), fields.get("numbers_for"))
        if fields.get("op") == "call":
            return self.call(fields.get("function"), values.get("args"), fields.get("record"))
        return self.pack({"ok": False, "kind": "bad_request", "type": "ValueError",
                          "message": f"unknown request {fields.get('op')!r}", "traceback": ""})

    def load(self, cells: Any, numbers_for: Any = None) -> bytes:
        """Run the submission's cells in order; a failing cell does not stop the next."""
        if not isinstance(cells, list) or not all(isinstance(c, str) for c in cells):
            return self.pack({"ok": False, "kind": "bad_request", "type": "ValueError",
                              "message": "load needs a list of code cells", "traceback": ""})
        self._keep_copy(cells)
        namespace: dict[str, Any] = {"__name__": "__student__", "__builtins__": builtins}
        self.namespace = namespace
        self._reached = {}
        errors = []
        for index, source in enumerate(cells):
            # Which cell runs now, so that a cell that never ends can be named: the grader kills
            # the worker at its deadline and reads the last of these.
            self.send({"op": "progress", "cell": index})
            # The name tracebacks and syntax errors show: the grader says which cell it was.
            filename = "cell"
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            try:
                exec(compile(source, filename, "exec"), namespace)
            except BaseException as exc:   # SystemExit and KeyboardInterrupt are failures too
                errors.append({"cell": index, **describe_exception(exc)})
        functions = self.functions()
        wanted = functions if not isinstance(numbers_for, list) else \
            [name for name in numbers_for if isinstance(name, str) and name in functions]
        return self.pack({"ok": True, "errors": errors, "functions": functions,
                          "numbers_read": self.numbers_read(wanted)})

    def _keep_copy(self, cells: list[str]) -> None:
        # The submission's file in the work directory, for code that reads
        # its own source; losing it (file-size limit) is not an error.
        try:
            with open("submission.py", "w", encoding="utf-8") as handle:
                handle.write("\n\n".join(cells))
        except OSError:
            pass

    def functions(self) -> dict[str, list[str]]:
        """Callables the submission defined, with their parameter names."""
        found: dict[str, list[str]] = {}
        for name, value in list(self.namespace.items()):
            if len(found) >= MAX_FUNCTIONS:
                break
            if isinstance(name, str) and not name.startswith("__") and callable(value) \
                    and not isinstance(value, ModuleType):
                found[name[:200]] = _parameters(value)
        return found

    def numbers_read(self, functions: Iterable[str]) -> dict[str, dict[str, int]]:
        """For each of ``functions`` (names ``functions()`` found), the notebook-level whole numbers
        of 2 or more it reads by name (``B``, ``T``, ``V`` set in an earlier cell): a size taken from
        there instead of from the arguments is a common slip, which the grader names when it fails."""
        found: dict[str, dict[str, int]] = {}
        for name in functions:
            numbers = _numbers_read(self.namespace.get(name), self.namespace)
            if numbers:
                found[name] = numbers
        return found

    def call(self, function: Any, args: Any, record: Any = None) -> bytes:
        """Call ``function`` from the submission's namespace with ``args``.

        ``record``: names of the submission's functions whose calls made during this one are
        recorded (inputs and output) and sent back as ``calls``, so the grader can tell a wrong
        helper from a wrong caller. Only those ``function`` reaches by name are wrapped; with none,
        the call runs as it is.
        """
        if self.namespace is None:
            return self.fail("not_loaded", "RuntimeError", "the submission's code was not loaded")
        if not isinstance(function, str) or not isinstance(args, tuple):
            return self.fail("bad_request", "ValueError", "call needs a function name and a tuple of arguments")
        if function not in self.namespace:
            return self.fail("missing", "NameError", f"`{function}` is not defined: run the cell that "
                                                     "defines it, and keep its name.")
        fn = self.namespace[function]
        if not callable(fn):
            # The message is the value's type alone: the grader writes the sentence around it.
            return self.fail("not_callable", "TypeError", self.channel.type_name(fn))
        args = _resolve_named(args, self.channel)
        np = self.np
        before = {i: np.array(a, copy=True) for i, a in enumerate(args) if type(a) is np.ndarray}
        log: list[dict[str, Any]] = []
        wrapped = self._wrap_helpers(function, record, log)
        try:
            value = fn(*args)
        except BaseException as exc:   # sys.exit, KeyboardInterrupt... all become a failed call
            self._unwrap(wrapped)
            fields = {"ok": False, "kind": "raised", **describe_exception(exc), "raised_in": self._raised_in(exc)}
            return self._pack_with_calls(fields, {"args_after": self._mutated(args, before)}, log)
        self._unwrap(wrapped)
        mutated = self._mutated(args, before)
        try:
            return self._pack_with_calls({"ok": True}, {"value": value, "args_after": mutated}, log)
        except BaseException as exc:   # ChannelError, or the student's own methods failing
            reason = str(exc) if isinstance(exc, self.channel.ChannelError) else \
                f"converting it raised {describe_exception(exc)['type']}"
            # The message is the reason alone: the grader writes the sentence around it.
            return self.pack({"ok": False, "kind": "unencodable", "type": "ChannelError",
                              "message": reason, "traceback": ""},
                             {"args_after": {}})

    def _pack_with_calls(self, fields: dict[str, Any], values: dict[str, Any], log: list[dict[str, Any]]) -> bytes:
        """The reply, with the recorded helper calls when there are any and they can cross."""
        if log:
            try:
                return self.pack(fields, dict(values, calls=log))
            except BaseException:   # a recorded input that cannot cross: the reply goes without
                pass
        return self.pack(fields, values)

    def reached(self, function: str) -> frozenset[str]:
        """The submission's functions ``function``'s code names, directly or through each other
        (a loss that calls a log-softmax that calls the softmax reaches both); cached per load."""
        found = self._reached.get(function)
        if found is not None:
            return found
        names: set[str] = set()
        try:
            stack = [function]
            while stack and len(names) < MAX_FUNCTIONS:
                code = getattr(self.namespace.get(stack.pop()), "__code__", None)
                codes = [code] if hasattr(code, "co_code") else []
                while codes:
                    current = codes.pop()
                    codes.extend(c for c in current.co_consts if hasattr(c, "co_code"))
                    for name in current.co_names:
                        if name not in names and name != function and \
                                hasattr(getattr(self.namespace.get(name), "__code__", None), "co_code"):
                            names.add(name)
                            stack.append(name)
        except BaseException:   # a code object the student built by hand: nothing is recorded
            names = set()
        found = self._reached[function] = frozenset(names)
        return found

    def _wrap_helpers(self, function: str, record: Any, log: list[dict[str, Any]]) -> list[tuple[str, Any]]:
        """Put a recording wrapper in the namespace for each helper of ``record`` that ``function``
        reaches; returns ``[(name, original)]`` for ``_unwrap``."""
        if not isinstance(record, list) or not record:
            return []
        reached = self.reached(function)
        wrapped = []
        for name in record:
            if isinstance(name, str) and name != function and name in reached:
                original = self.namespace.get(name)
                if callable(original):
                    self.namespace[name] = self._recording(name, original, log)
                    wrapped.append((name, original))
        return wrapped

    def _unwrap(self, wrapped: list[tuple[str, Any]]) -> None:
        for name, original in wrapped:
            self.namespace[name] = original

    def _recording(self, helper: str, original: Any, log: list[dict[str, Any]]) -> Any:
        """``original``, recording its first ``RECORD_CALLS`` calls: the student's function that
        made the call, copies of the inputs and of the output (within ``RECORD_ELEMENTS``), or the
        helper's name alone beyond that (the grader then knows it was called, not on what)."""
        np, namespace = self.np, self.namespace
        seen = [0]

        def caller() -> str:
            try:
                own = sys._getframe(2).f_code     # 0: here, 1: the wrapper, 2: who called the helper
                for name, value in list(namespace.items()):
                    if isinstance(name, str) and getattr(value, "__code__", None) is own:
                        return name[:200]
            except BaseException:   # the student's objects may misbehave: then no caller
                pass
            return ""

        def recorded(*args: Any, **kwargs: Any) -> Any:
            seen[0] += 1
            if seen[0] > RECORD_CALLS:
                return original(*args, **kwargs)
            entry: dict[str, Any] = {"helper": helper, "caller": caller()}
            log.append(entry)
            if not _plain(args, np) or not _plain(kwargs, np) or _elements((args, kwargs), np) > RECORD_ELEMENTS:
                return original(*args, **kwargs)
            given = _copied((args, kwargs), np)
            value = original(*args, **kwargs)
            if _plain(value, np) and _elements((given, value), np) <= RECORD_ELEMENTS:
                entry.update(args=given[0], kwargs=given[1], value=_copied(value, np))
            return value

        return recorded

    def _raised_in(self, exc: BaseException) -> list[str]:
        """The submission's own top-level functions the exception passed through, outermost first:
        the grader lays the error on the last one (a loss that calls a broken softmax)."""
        try:
            own = {value.__code__: name for name, value in list(self.namespace.items())
                   if isinstance(name, str) and hasattr(getattr(value, "__code__", None), "co_code")
                   and getattr(value, "__module__", None) == "__student__"}
            names: list[str] = []
            tb = exc.__traceback__
            while tb is not None and len(names) < 20:
                name = own.get(tb.tb_frame.f_code)
                if name is not None and (not names or names[-1] != name):
                    names.append(name[:200])
                tb = tb.tb_next
            return names
        except BaseException:   # the student's objects may misbehave: then no chain
            return []

    def _mutated(self, args: tuple, before: dict[int, Any]) -> dict[str, Any]:
        try:
            return {str(i): args[i] for i, copy in before.items() if _changed(copy, args[i], self.np)}
        except BaseException:
            return {}

    def fail(self, kind: str, type_name: str, message: str) -> bytes:
        return self.pack({"ok": False, "kind": kind, "type": type_name, "message": message,
                          "traceback": ""})


def _map_arena(config: dict[str, Any], channel: ModuleType) -> Any:
    """The arena the grader passed, mapped, or ``None``. (``mmap`` keeps a duplicate of the
    descriptor: the student's code can reach the file, which the grader's seals and its
    ``pread``/``pwrite`` access make harmless to anyone but the student.)"""
    fd, size = config.get("arena"), config.get("arena_bytes")
    if not isinstance(fd, int) or not isinstance(size, int) or size <= 0:
        return None
    try:
        return channel.MappedArena(mmap.mmap(fd, size))
    finally:
        os.close(fd)


def _setup_output(config: dict[str, Any]) -> OutputBudget:
    budget = OutputBudget(int(config["stdout_bytes"]))
    sys.stdout = BoundedStream(1, budget)
    sys.stderr = BoundedStream(2, budget)
    return budget


def _drop_privileges(uid: int, gid: int) -> None:
    """Become ``uid``/``gid`` for good (real, effective and saved ids)."""
    os.setgroups([])
    os.setgid(gid)
    os.setuid(uid)
    if os.getresuid() != (uid, uid, uid) or os.getresgid() != (gid, gid, gid):
        raise OSError(f"could not switch to uid {uid}")


def _use_staged_runtime(staged: dict[str, str]) -> None:
    """Import from the copies the grader staged wherever the new uid cannot enter the originals.

    The installation may sit in a directory only root can enter (root's
    home, a 0700 folder). The grader then copies the standard library and
    NumPy where any uid can read them (``isolation.staged_runtime``), and
    this points the import system there: ``sys.path``, and the search path
    of every package already imported (``numpy``, ``json``...), whose
    submodules may load later.
    """
    if not staged:
        return
    roots = sorted(staged, key=len, reverse=True)

    def moved(path: str) -> str:
        for root in roots:
            if path == root or path.startswith(root + "/"):
                return staged[root] + path[len(root):]
        return path

    sys.path[:] = [moved(path) for path in sys.path]
    for module in list(sys.modules.values()):
        search = getattr(module, "__path__", None)
        if isinstance(search, list):
            search[:] = [moved(path) if isinstance(path, str) else path for path in search]
    sys.path_importer_cache.clear()


def _close_directory_descriptors() -> None:
    """Close every descriptor of a directory: one opened as root would let ``..`` walk from it
    to places the new uid may not enter (the installation's site-packages, the grader's folder)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        try:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.close(fd)
        except OSError:      # the listing's own descriptor, already closed
            pass


def _die_with_parent(parent: int) -> None:
    """Get SIGKILL if the grader dies (set here: changing uid clears the setting)."""
    import ctypes
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:     # the grader died before the setting took effect
        os._exit(EXIT_SETUP_FAILED)


def _seccomp_program(table: dict[str, Any], errno: int) -> list[tuple[int, int, int, int]]:
    """Classic BPF: kill foreign ABIs; refuse ``table``'s denied calls, non-Unix sockets and
    ``fcntl`` locks; allow the rest."""
    ld_w_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    kill, deny, allow = 0x80000000, 0x00050000 | errno, 0x7FFF0000
    # Offsets in ``struct seccomp_data``: nr at 0, arch at 4, args[0] and args[1] (low
    # halves, both architectures being little-endian) at 16 and 24.
    nr, arch, arg0, arg1 = 0, 4, 16, 24
    # Instructions with jump targets named by label; resolved to relative offsets below.
    code: list[tuple] = [(ld_w_abs, None, None, arch), (jeq, "abi", "kill", table["arch"]), ("abi",),
                         (ld_w_abs, None, None, nr), (jge, "kill", None, X32_BIT)]
    code += [(jeq, "deny", None, number) for number in table["denied"].values()]
    code += [(jeq, "fcntl", None, table["fcntl"]), (jeq, "socket", None, table["socket"]),
             (ret, None, None, allow),
             ("fcntl",), (ld_w_abs, None, None, arg1)]
    code += [(jeq, "deny", None, command) for command in FCNTL_LOCKS]
    code += [(ret, None, None, allow),
             ("socket",), (ld_w_abs, None, None, arg0), (jeq, "allow", "deny", AF_UNIX),
             ("allow",), (ret, None, None, allow),
             ("deny",), (ret, None, None, deny),
             ("kill",), (ret, None, None, kill)]
    where, index = {}, 0
    for item in code:
        if len(item) == 1:
            where[item[0]] = index
        else:
            index += 1
    program, index = [], 0
    for item in code:
        if len(item) == 1:
            continue
        op, jt, jf, k = item
        offset = lambda label: 0 if label is None else where[label] - index - 1   # noqa: E731
        program.append((op, offset(jt), offset(jf), k))
        index += 1
    return program


def _restrict_system_calls() -> None:
    """Refuse the student's code the calls of ``SYSCALLS``; fail closed where that cannot be done."""
    import ctypes
    import errno as errnos
    import platform
    table = SYSCALLS.get(platform.machine())
    if table is None:
        raise OSError(f"the sandbox knows no system call numbers for {platform.machine()!r} "
                      f"(it knows {', '.join(SYSCALLS)}): it cannot restrict the student's code here")
    program = _seccomp_program(table, errnos.EPERM)

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint32)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*[Filter(*entry) for entry in program])
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs could not be set")
    # SECCOMP_SET_MODE_FILTER with TSYNC: every thread of the process, not only this one.
    done = libc.syscall(table["seccomp"], 1, 1, ctypes.byref(Program(len(program), filters)))
    if done != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"the seccomp filter could not be installed: {os.strerror(code)}")


def _add_site_builtins() -> None:
    # ``-S`` skips ``site``, which is what defines exit() and quit(); a
    # notebook may call them, and they should raise SystemExit as usual.
    import _sitebuiltins
    builtins.exit = _sitebuiltins.Quitter("exit", "Ctrl-D (i.e. EOF)")
    builtins.quit = _sitebuiltins.Quitter("quit", "Ctrl-D (i.e. EOF)")


def _keep_freed_memory() -> None:
    """Have malloc keep freed blocks of a few MB for reuse (as ``autograder.runtime.allocator``
    does for the grader; this file cannot import it): fresh 1.6 MB arrays then cost no page
    faults. The thresholds are lower than the grader's: blocks kept count against the
    student's address-space limit, and larger ones are returned as before."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
        mallopt(-3, 4 << 20)         # M_MMAP_THRESHOLD
        mallopt(-1, 32 << 20)        # M_TRIM_THRESHOLD
    except (OSError, AttributeError):
        pass


def preimport() -> None:
    """Import ``PREIMPORTS`` (those this Python lacks are skipped)."""
    for name in PREIMPORTS:
        try:
            importlib.import_module(name)
        except ImportError:
            pass


def setup_failed(what: str) -> None:
    """Report the exception being handled on stderr and exit; never returns."""
    try:
        os.write(2, (f"{what} setup failed:\n" + traceback.format_exc()).encode())
    finally:
        os._exit(EXIT_SETUP_FAILED)


def main(channel: ModuleType, config: dict[str, Any]) -> None:
    """Entry point inside the sandbox; never returns."""
    try:
        for fd in (config["requests"], config["replies"]):
            os.set_inheritable(fd, False)    # programs the student starts do not get them
            # (nor the arena's: ``Worker`` closes it once mapped, before any student code runs)
        budget = _setup_output(config)
        # Past RLIMIT_FSIZE a write should fail with an error, not kill the worker.
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        _keep_freed_memory()
        preimport()
        if config.get("drop"):
            _drop_privileges(*config["drop"])
            _use_staged_runtime(config.get("staged") or {})
        _close_directory_descriptors()
        if config.get("die_with_parent"):
            _die_with_parent(config["parent"])
        _add_site_builtins()
        sys.argv = ["submission.py"]
        worker = Worker(channel, config, budget)
        _restrict_system_calls()       # last: nothing of the worker's own needs these calls
    except BaseException:
        setup_failed("sandbox worker")
    try:
        worker.serve()
    finally:
        os._exit(0)

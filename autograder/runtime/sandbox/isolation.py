"""How the worker process is isolated: detection, bubblewrap arguments, limits.

Three levels, strongest first:

``bwrap``
    bubblewrap with PID, network, IPC, UTS and cgroup namespaces, a
    read-only view of the Python runtime and NumPy only, and in-memory
    ``/tmp`` and work directory. Run as a normal user it also unshares the
    user namespace. Run as root it does not: a user namespace would map the
    sandbox back to uid 0, which the kernel exempts from the process limit;
    instead the worker switches to a fresh unprivileged uid of its own
    before any student code runs.
``user``
    (root only, when bubblewrap cannot start.) No namespaces: the worker
    switches to a fresh unprivileged uid, so it cannot read root's files or
    signal the grader, and everything that uid runs is killed at the end.
``rlimits``
    Resource limits, a new session and best-effort cleanup only.

``detect_isolation`` probes once per process and caches the answer.

Why one module of this size: the three levels share detection, the probe of what works here and the limits they apply; split, each level would repeat them.
"""
from __future__ import annotations

import atexit
import ctypes
import functools
import importlib.util
import json
import logging
import os
import pwd
import resource
import secrets
import shutil
import site
import stat
import subprocess
import sys
import sysconfig
import tempfile
import threading
from dataclasses import dataclass
from typing import Callable

from autograder.runtime.sandbox import procs
from autograder.runtime.sandbox.errors import SandboxUnavailable
from autograder.runtime.sandbox.limits import Limits

logger = logging.getLogger(__name__)

LEVELS = ("bwrap", "user", "rlimits")
#: Where things appear inside the bubblewrap sandbox.
SANDBOX_ROOT = "/sandbox"
SANDBOX_SITE = "/sandbox/site"
SANDBOX_WORK = "/sandbox/work"
#: Fresh uids are drawn from here: far above real accounts and the usual
#: subordinate-id ranges of rootless containers.
UID_FIRST, UID_COUNT = 1_900_000_000, 100_000_000
PR_SET_CHILD_SUBREAPER = 36
#: Environment of the worker (nothing of the grader's is passed on).
BASE_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    # One BLAS thread: faster for the small arrays of this unit, and
    # threads count against the process limit.
    "OPENBLAS_NUM_THREADS": "1",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "NUMEXPR_NUM_THREADS": "1",
    "VECLIB_MAXIMUM_THREADS": "1",
}
_PROBE_TIMEOUT = 20.0
_LIBC = ctypes.CDLL(None, use_errno=True)


@dataclass(frozen=True)
class Isolation:
    """An isolation level and a sentence on what it means here."""

    level: str
    detail: str


@dataclass(frozen=True)
class RuntimeView:
    """The parts of this Python installation the worker needs.

    Attributes:
        executable: the real interpreter binary (outside any virtualenv).
        roots: directories bound read-only at their own path (interpreter,
            standard library, libpython).
        hidden: directories inside ``roots`` covered by an empty tmpfs (every
            site-packages: they hold the grader, otter and the references).
        numpy: NumPy's package directory and its ``numpy.libs`` sibling when
            present, bound on their own under ``SANDBOX_SITE``.
    """

    executable: str
    roots: tuple[str, ...]
    hidden: tuple[str, ...]
    numpy: tuple[str, ...]


def running_as_root() -> bool:
    """Whether the grader has root's powers (and must drop them for the worker)."""
    return os.geteuid() == 0


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _real(path: str) -> str:
    return os.path.realpath(path)


@functools.lru_cache(maxsize=1)
def runtime_view() -> RuntimeView:
    """Work out which directories the sandbox must see, and which it must not."""
    executable = _real(getattr(sys, "_base_executable", None) or sys.executable)
    # The interpreter's own path, not sysconfig's: inside a virtualenv,
    # sysconfig names the venv's lib directory, which holds only packages.
    needed = {_real(p) for p in _bare_sys_path(executable) if os.path.exists(p)}
    needed.add(os.path.dirname(executable))
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir and os.path.isdir(libdir):
        needed.add(_real(libdir))
    for prefix in {sys.base_prefix, sys.base_exec_prefix}:
        needed.add(_real(prefix))
    roots = _outermost(needed | {"/usr"})
    return RuntimeView(executable, tuple(roots), tuple(_hidden_dirs(roots, needed)), _numpy_dirs())


def _bare_sys_path(executable: str) -> list[str]:
    """``sys.path`` of ``python -I -S``: the standard library and its extension modules."""
    try:
        done = subprocess.run([executable, "-I", "-S", "-c", "import json, sys; print(json.dumps(sys.path))"],
                              capture_output=True, timeout=_PROBE_TIMEOUT, check=True, env={})
        return [p for p in json.loads(done.stdout) if isinstance(p, str) and p]
    except (OSError, ValueError, subprocess.SubprocessError) as exc:
        raise SandboxUnavailable(f"could not run the interpreter {executable}: {exc}") from None


def _outermost(paths: set[str]) -> list[str]:
    """``paths`` without those inside another one, sorted."""
    ordered = sorted(paths, key=len)
    kept: list[str] = []
    for path in ordered:
        if not any(_inside(path, root) for root in kept):
            kept.append(path)
    return sorted(kept)


def _hidden_dirs(roots: list[str], needed: set[str]) -> list[str]:
    """Package directories that the bound roots would otherwise expose."""
    prefixes = [sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix]
    candidates = set(site.getsitepackages(prefixes)) | set(sys.path)
    candidates |= {sysconfig.get_paths()[key] for key in ("purelib", "platlib")}
    if site.ENABLE_USER_SITE is not None:
        candidates.add(site.getusersitepackages())
    hidden = set()
    for candidate in candidates:
        if not candidate or not os.path.isdir(candidate):
            continue
        path = _real(candidate)
        # Never cover the interpreter or the standard library themselves.
        if any(_inside(need, path) for need in needed):
            continue
        if any(_inside(path, root) for root in roots):
            hidden.add(path)
    return _outermost(hidden)


def _numpy_dirs() -> tuple[str, ...]:
    spec = importlib.util.find_spec("numpy")
    if spec is None or not spec.submodule_search_locations:
        raise SandboxUnavailable("NumPy is not installed for this Python; the sandbox needs it.")
    package = _real(list(spec.submodule_search_locations)[0])
    libs = os.path.join(os.path.dirname(package), "numpy.libs")    # manylinux wheels keep OpenBLAS here
    return (package, libs) if os.path.isdir(libs) else (package,)


def _parents(path: str) -> list[str]:
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[:i + 1]) for i in range(len(parts))]


def enterable_by_stranger(path: str) -> bool:
    """Whether a uid with no groups can walk to the directory ``path`` and list it.

    Only the "other" permission bits count (ACLs are not read): a directory
    this wrongly calls enterable makes imports fail, never a file readable.
    """
    real = _real(path)
    try:
        for step in ["/", *_parents(real + "/x")]:
            if not os.stat(step).st_mode & stat.S_IXOTH:
                return False
        return bool(os.stat(real).st_mode & stat.S_IROTH)
    except OSError:
        return False


#: Folders a staged copy leaves out: every site-packages (the grader, otter and the
#: references may be installed there), and tests and tools no submission imports.
_STAGE_SKIP = frozenset({"site-packages", "dist-packages", "test", "tests", "idlelib", "tkinter",
                         "turtledemo", "ensurepip", "lib2to3"})
_staged: dict[str, str] | None = None
_stage_lock = threading.Lock()


def _link_or_copy(source: str, target: str) -> str:
    # A hard link costs no copy; across filesystems (or where links are refused) copy.
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)
    return target


def _stage(groups: list[tuple[str, ...]]) -> dict[str, str]:
    """Copies of the directory ``groups`` no stranger can enter, in one fresh folder it can."""
    needed = [group for group in groups if not all(enterable_by_stranger(d) for d in group)]
    if not needed:
        return {}
    root = tempfile.mkdtemp(prefix="lmhead-runtime-")
    os.chmod(root, 0o755)
    creator = os.getpid()
    # Forked grading processes inherit this hook; only the process that made the copy removes it.
    atexit.register(lambda: os.getpid() == creator and shutil.rmtree(root, ignore_errors=True))
    staged: dict[str, str] = {}
    for index, group in enumerate(needed):
        folder = os.path.join(root, str(index))
        for source in sorted(group, key=len):
            inside = next((done for done in staged if _inside(source, done)
                           and not _STAGE_SKIP & set(source[len(done):].split("/"))), None)
            if inside is not None:       # lib-dynload inside the standard library: copied with it
                staged[source] = staged[inside] + source[len(inside):]
                continue
            os.makedirs(folder, 0o755, exist_ok=True)
            target = os.path.join(folder, os.path.basename(source))
            shutil.copytree(source, target, symlinks=True, copy_function=_link_or_copy,
                            ignore=lambda _dir, names: [n for n in names if n in _STAGE_SKIP])
            staged[source] = target
    return staged


def staged_runtime() -> dict[str, str]:
    """For the ``user`` level: each import directory of the worker (standard library, NumPy)
    that a fresh uid cannot enter by path, mapped to a copy that it can enter.

    The worker imports from these after it drops root. (It used to keep
    descriptors of the originals opened as root; ``..`` from such a
    descriptor reached their parents, site-packages and the references
    with them.) Made once per process, removed when the process that made
    it exits; empty where the installation is open to everyone.
    """
    global _staged
    with _stage_lock:
        if _staged is None:
            view = runtime_view()
            paths = [_real(p) for p in _bare_sys_path(view.executable) if os.path.isdir(p)]
            _staged = _stage([(path,) for path in dict.fromkeys(paths)] + [view.numpy])
        return _staged


#: Files of /etc the dynamic loader may need: its cache, and the alternatives
#: links through which Debian's NumPy finds its BLAS. Nothing else of /etc.
LOADER_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives")


def _system_dirs() -> list[str]:
    """Bind or link /bin, /lib... as they are on the host (often links into /usr)."""
    args: list[str] = []
    for path in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in LOADER_FILES:
        args += ["--ro-bind-try", path, path]
    return args


def scratch_mounts(limits: Limits, as_root: bool) -> list[tuple[str, int, int]]:
    """``(path, mode, bytes)`` of the sandbox's writable in-memory directories.

    As root the worker switches to its own uid after they are made, so the
    work directory must be writable by anyone (sticky, like ``/tmp``).
    """
    size = limits.work_dir_bytes
    return [("/dev/shm", 0o1777, size), ("/tmp", 0o1777, size),
            (SANDBOX_WORK, 0o1777 if as_root else 0o755, size)]


def bwrap_arguments(view: RuntimeView, limits: Limits, env: dict[str, str], as_root: bool,
                    extra_caps: tuple[str, ...] = ()) -> list[str]:
    """The ``bwrap`` command line up to (not including) the worker's own command.

    ``extra_caps`` are kept besides ``CAP_SETUID``/``CAP_SETGID`` (root only):
    the fork server needs ``CAP_SYS_ADMIN`` to give each worker its own
    mount and IPC namespace.
    """
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        raise SandboxUnavailable("bubblewrap (`bwrap`) is not installed; install the `bubblewrap` package.")
    for root in view.roots:
        if root == "/" or root == _real(os.path.expanduser("~")):
            raise SandboxUnavailable(f"the Python installation lives in {root}, which cannot be shown "
                                     "to the sandbox without exposing everything in it.")
    args = [bwrap, "--die-with-parent", "--new-session"]
    if as_root:
        # No user namespace (see the module docstring); no capability but
        # the two the worker needs to switch to its own uid and then loses.
        args += ["--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                 "--unshare-cgroup-try", "--cap-drop", "ALL",
                 "--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        for cap in extra_caps:
            args += ["--cap-add", cap]
    else:
        args += ["--unshare-all"]
    args += ["--hostname", "sandbox", "--ro-bind", "/usr", "/usr", *_system_dirs()]
    made = {"/usr"}
    for root in view.roots:
        for parent in _parents(root):
            # bwrap would create missing parents 0700; the dropped uid must traverse them.
            if parent not in made and not any(_inside(parent, r) for r in ("/usr", *view.roots)):
                args += ["--perms", "0755", "--dir", parent]
                made.add(parent)
        if root != "/usr":
            args += ["--ro-bind", root, root]
    for path in view.hidden:
        args += ["--tmpfs", path, "--remount-ro", path]
    args += ["--perms", "0755", "--dir", SANDBOX_ROOT, "--perms", "0755", "--dir", SANDBOX_SITE]
    for path in view.numpy:
        args += ["--ro-bind", path, f"{SANDBOX_SITE}/{os.path.basename(path)}"]
    args += ["--proc", "/proc", "--dev", "/dev"]
    for path, mode, size in scratch_mounts(limits, as_root):
        args += ["--perms", f"{mode:04o}", "--size", str(size), "--tmpfs", path]
    args += ["--chdir", SANDBOX_WORK, "--clearenv"]
    for key, value in sorted(env.items()):
        args += ["--setenv", key, value]
    # Last: nothing outside the three tmpfs mounts stays writable.
    return args + ["--remount-ro", "/", "--"]


def worker_env(home: str, token: str) -> dict[str, str]:
    """The worker's whole environment; the token marks its processes for cleanup."""
    return dict(BASE_ENV, HOME=home, TMPDIR=home if home != SANDBOX_WORK else "/tmp",
                LMHEAD_SANDBOX_SESSION=token)


def _clamped(wanted: int, current_hard: int) -> int:
    # Without root the hard limit can only go down: never ask for more than it.
    if current_hard == resource.RLIM_INFINITY:
        return wanted
    return min(wanted, current_hard)


def rlimit_settings(limits: Limits, nproc: int) -> list[tuple[int, tuple[int, int]]]:
    """``(resource, (soft, hard))`` pairs for the worker."""
    wanted = [
        # The hard CPU limit a second later turns SIGXCPU, which code can catch, into SIGKILL.
        (resource.RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds + 1),
        (resource.RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
        (resource.RLIMIT_NPROC, nproc, nproc),
        (resource.RLIMIT_FSIZE, limits.file_size_bytes, limits.file_size_bytes),
        (resource.RLIMIT_NOFILE, limits.open_files, limits.open_files),
        (resource.RLIMIT_CORE, 0, 0),
    ]
    settings = []
    for kind, soft, hard in wanted:
        current_hard = resource.getrlimit(kind)[1]
        hard = _clamped(int(hard), current_hard)
        settings.append((kind, (min(_clamped(int(soft), current_hard), hard), hard)))
    return settings


def make_preexec(settings: list[tuple[int, tuple[int, int]]], subreaper: bool) -> Callable[[], None]:
    """The function run in the forked child before exec: limits, optionally subreaper.

    It only makes system calls (no imports, no allocation-heavy work), which
    is what keeps ``preexec_fn`` safe enough in a process with threads.
    """
    def preexec() -> None:
        for kind, pair in settings:
            resource.setrlimit(kind, pair)
        if subreaper:
            # Orphans of the worker's children stay below the worker, where
            # cleanup finds them, instead of moving to init.
            _LIBC.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    return preexec


_reserved_uids: set[int] = set()
_uid_lock = threading.Lock()


def reserve_uid() -> int:
    """A uid no process and no account uses, reserved until ``release_uid``."""
    with _uid_lock:
        in_use = procs.uids_in_use() | _reserved_uids
        while True:
            uid = UID_FIRST + secrets.randbelow(UID_COUNT)
            if uid in in_use:
                continue
            try:
                pwd.getpwuid(uid)
                continue
            except KeyError:
                _reserved_uids.add(uid)
                return uid


def release_uid(uid: int) -> None:
    """Make ``uid`` available again (its processes must be gone)."""
    with _uid_lock:
        _reserved_uids.discard(uid)


_detected: Isolation | None = None
_detect_lock = threading.Lock()


def detect_isolation() -> Isolation:
    """The strongest level that works here; probed once per process."""
    global _detected
    with _detect_lock:
        if _detected is None:
            reason = probe_bwrap()
            if reason is None:
                _detected = Isolation("bwrap", describe("bwrap"))
            else:
                fallback = "user" if running_as_root() else "rlimits"
                _detected = Isolation(fallback, f"{describe(fallback)} (bubblewrap unavailable: {reason})")
                logger.warning("sandbox: bubblewrap unavailable (%s); student code runs with the weaker "
                               "'%s' isolation", reason, fallback)
        return _detected


def describe(level: str) -> str:
    """One sentence on what ``level`` isolates on this machine."""
    if level == "bwrap":
        who = "a fresh unprivileged uid" if running_as_root() else "a user namespace"
        return (f"bubblewrap: PID, network, IPC and mount namespaces, {who}, read-only Python and "
                "NumPy only, in-memory work directory, resource limits")
    if level == "user":
        return ("fresh unprivileged uid with resource limits and a system-call filter (no network "
                "sockets, shared memory or IPC); no namespaces: world-readable files stay reachable")
    return ("resource limits, a new session and a system-call filter (no network sockets, shared "
            "memory or IPC) only: the submission runs as the grader's user with its files")


def check_level(level: str) -> Isolation:
    """Validate an explicitly requested level; raise ``SandboxUnavailable`` if it cannot run."""
    if level not in LEVELS:
        raise ValueError(f"isolation must be 'auto' or one of {', '.join(LEVELS)}, got {level!r}.")
    if level == "user" and not running_as_root():
        raise SandboxUnavailable("isolation 'user' needs root (to switch to an unprivileged uid).")
    if level == "bwrap":
        reason = probe_bwrap()
        if reason is not None:
            raise SandboxUnavailable(f"bubblewrap cannot start here: {reason}")
    return Isolation(level, describe(level))


_probe_result: list[str | None] = []
_probe_lock = threading.Lock()


def probe_bwrap() -> str | None:
    """``None`` if a bubblewrap sandbox starts and imports NumPy, else why not (cached)."""
    with _probe_lock:
        if not _probe_result:
            _probe_result.append(_run_probe())
        return _probe_result[0]


def _run_probe() -> str | None:
    try:
        view = runtime_view()
        env = worker_env(SANDBOX_WORK, "probe")
        command = bwrap_arguments(view, Limits(), env, running_as_root()) + [
            view.executable, "-I", "-S", "-c",
            f"import sys; sys.path.insert(0, {SANDBOX_SITE!r}); import numpy"]
        settings = rlimit_settings(Limits(), procs.task_count(os.getuid()) + Limits().max_processes)
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, env=env,
                              timeout=_PROBE_TIMEOUT, preexec_fn=make_preexec(settings, False))
    except SandboxUnavailable as exc:
        return str(exc)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        message = (done.stderr or done.stdout).decode("utf-8", "replace").strip().splitlines()
        return f"exit code {done.returncode}: {message[-1] if message else 'no message'}"
    return None

"""Which isolation level grading may use for untrusted code: fail closed.

``bwrap`` hides everything but Python and NumPy from the student's code, so
it is always acceptable. The weaker levels are not, by default:

``user``
    (root without bubblewrap, typical of hosted graders in Docker.) The
    worker runs as a fresh uid, so it reads whatever is world-readable.
    Grading goes ahead only if a probe, run as such a uid, can read none of
    the guarded paths: the references, hidden tests, the secret, other
    submissions and their results. Otherwise it refuses, naming what is
    readable and how to close it.
``rlimits``
    (no root, no bubblewrap.) The worker runs as the grader's own user and
    can read everything the grader can: refused.

``trusted=True`` (``grader grade --trusted-code``) accepts a weaker level
without the checks, for code the instructor trusts (their own solutions);
the level then shows wherever results are read.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from autograder.runtime.sandbox import isolation as iso
from autograder.runtime.sandbox import reach
from autograder.runtime.sandbox.errors import SandboxUnavailable

#: How a refusal tells the instructor to get the strong level.
INSTALL_BWRAP = ("install bubblewrap (`apt install bubblewrap` or `dnf install bubblewrap`) where user "
                 "namespaces are allowed, so grading can hide everything but Python and NumPy from student code")
#: Readable paths named in a refusal, at most.
SHOWN = 8
#: Run as a submission's code in a real ``user``-level worker: the files under ``paths`` it can
#: read, by path or through any descriptor of a directory it holds (``..`` from such a
#: descriptor walks to parents whose path is closed to the uid). Named by their real paths.
WORKER_PROBE = """
import os, stat

def _walk(start, budget):
    found, stack, seen = [], [start], 0
    while stack and seen < budget:
        path = stack.pop()
        seen += 1
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISDIR(mode):
                stack.extend(sorted(os.path.join(path, name) for name in os.listdir(path)))
            elif stat.S_ISREG(mode):
                with open(path, "rb") as handle:
                    handle.read(1)
                found.append(path)
        except OSError:
            continue
    return found

def reach(paths, budget):
    descriptors = []
    for name in os.listdir("/proc/self/fd"):
        link = "/proc/self/fd/" + name
        try:
            if stat.S_ISDIR(os.stat(link).st_mode):
                descriptors.append((link, os.readlink(link)))
        except OSError:
            pass
    found = set()
    for path in paths:
        ways = [path] + [link + "/" + os.path.relpath(path, target) for link, target in descriptors]
        for way in ways:
            found.update(path + hit[len(way):] for hit in _walk(way, budget))
    return sorted(found), [target for _link, target in descriptors]
"""


@dataclass(frozen=True)
class Clearance:
    """The level grading will use, and why it is acceptable."""

    level: str
    detail: str
    trusted: bool = False
    #: Chosen by ``"auto"`` because bubblewrap could not run here (not asked for by anyone).
    fallback: bool = False

    @property
    def label(self) -> str:
        """The level as results, gradebooks and reports show it."""
        return f"{self.level} (trusted code)" if self.trusted and self.level != "bwrap" else self.level

    @property
    def student_note(self) -> str:
        """'' at bubblewrap, else what the student is told of the weaker level, in terms that hold:
        who chose it, or that the machine could not run bubblewrap, and what was checked."""
        if self.level == "bwrap":
            return ""
        if self.trusted:
            return ("This sandbox level is weaker than bubblewrap; your instructor chose it, for code they "
                    "trust, without the checks untrusted code gets.")
        checked = ("your code ran as a separate user which, as checked before grading, could read none of "
                   "the grader's files (hidden tests, reference solutions, other submissions).")
        if self.fallback:
            return "The grading machine could not run bubblewrap, the strongest sandbox, so a weaker one was used: " + checked
        return "Your instructor chose a sandbox weaker than bubblewrap: " + checked


def reference_locations() -> list[Path]:
    """Where this machine keeps the grader's references, hidden tests and catalogues, as far as
    the running Python can tell.

    The ``solutions`` package where it is importable, every ``solutions``
    package that sits beside an ``autograder`` package on ``sys.path`` (a
    checkout first on the path hides an installed copy from the import
    system, not from a student), the checkout an editable install points at,
    and an ``assignments`` folder beside or inside the ``autograder`` package.
    The grading runtime alone has none of them.
    """
    places: list[Path] = []
    spec = importlib.util.find_spec("solutions")
    if spec is not None and spec.submodule_search_locations:
        places += [Path(p) for p in spec.submodule_search_locations]
    for entry in sys.path:
        root = Path(entry or ".")
        if (root / "solutions" / "__init__.py").is_file() and (root / "autograder" / "__init__.py").is_file():
            places.append(root / "solutions")
    checkout = editable_checkout()
    if checkout is not None:
        places += [checkout / "solutions", checkout / "assignments"]
    package = Path(__file__).resolve().parents[2]          # .../autograder
    places += [package / "assignments", package.parent / "assignments"]
    unique: list[Path] = []
    for place in places:
        if place.is_dir() and place.resolve() not in unique:
            unique.append(place.resolve())
    return unique


def editable_checkout() -> Path | None:
    """The source folder of an editable install of the grader (``pip install -e``), if any."""
    try:
        text = importlib.metadata.distribution("lmhead-grader").read_text("direct_url.json")
        info = json.loads(text or "{}")
    except (importlib.metadata.PackageNotFoundError, ValueError, OSError):
        return None
    url = info.get("url") if isinstance(info, dict) else None
    dir_info = info.get("dir_info") if isinstance(info, dict) else None
    # A plain ``pip install .`` records its source folder too, but runs from its own copy:
    # only an editable install keeps reading the checkout.
    if not isinstance(url, str) or not url.startswith("file://") or not isinstance(dir_info, dict) \
            or dir_info.get("editable") is not True:
        return None
    return Path(url[len("file://"):])


def build_outputs(guarded: Iterable[str | Path]) -> list[Path]:
    """The solution folder the build wrote beside each guarded autograder zip.

    ``grader build`` writes ``DIST/<name>/autograder/autograder.zip`` and the
    solution notebook, which holds every reference, in ``DIST/<name>/solution/``:
    whoever grades with a zip from there has the solution next to it.
    """
    found = []
    for raw in guarded:
        path = Path(raw)
        if path.suffix == ".zip" and path.parent.name == "autograder":
            solution = path.parent.parent / "solution"
            if solution.is_dir():
                found.append(solution)
    return found


def reachable_from_worker(paths: Iterable[str | Path]) -> list[str]:
    """The files under ``paths`` a real ``user``-level worker can read, descriptors included.

    The path probe (``reach.readable_by_stranger``) sees what a fresh uid
    reaches by name; this runs :data:`WORKER_PROBE` as a submission's code,
    so whatever the worker itself holds after dropping root counts too. A
    probe that fails counts every path as readable.
    """
    from autograder.runtime.sandbox.limits import Limits
    from autograder.runtime.sandbox.session import SandboxSession
    paths = [str(Path(p)) for p in paths if os.path.lexists(p)]
    if not paths:
        return []
    with SandboxSession(WORKER_PROBE, Limits(), isolation="user") as session:
        result = session.call("reach", paths, reach.PROBE_FILES)
    if not result.ok or not isinstance(result.value, tuple) or not isinstance(result.value[0], list):
        return paths
    return [str(p) for p in result.value[0]]


def clear(isolation: str, guarded: Iterable[str | Path], *, trusted: bool = False,
          flag: str = "--trusted-code") -> Clearance:
    """The level to grade untrusted code at, or ``SandboxUnavailable`` saying what is missing.

    Args:
        isolation: ``"auto"`` or a level to force; a forced level that cannot
            run here is refused at once.
        guarded: paths student code must not read (the unpacked hidden suite,
            the autograder zip, the submissions, the output folder); the
            installation's own references are added.
        trusted: accept a weaker level without checks.
        flag: how the caller's user opts in, for the message.
    """
    chosen = iso.detect_isolation() if isolation == "auto" else iso.check_level(isolation)
    if chosen.level == "bwrap":
        return Clearance(chosen.level, chosen.detail)
    fallback = isolation == "auto"     # anything but bubblewrap here is what the machine allowed
    if trusted:
        return Clearance(chosen.level, chosen.detail, trusted=True, fallback=fallback)
    why = chosen.detail
    if chosen.level == "rlimits":
        raise SandboxUnavailable(
            f"refusing to run student code at the 'rlimits' level ({why}): it would run as your own user "
            f"and could read the reference solutions, hidden tests and other submissions. To fix it, "
            f"{INSTALL_BWRAP}; or, only for code you trust (your own solutions), pass {flag}.")
    guarded = list(guarded)
    places = [*guarded, *build_outputs(guarded), *reference_locations()]
    readable = reach.readable_by_stranger(places) or reachable_from_worker(places)
    if readable:
        shown = "\n  ".join(readable[:SHOWN]) + ("\n  ..." if len(readable) > SHOWN else "")
        folders = sorted({str(Path(p).parent) for p in readable})[:SHOWN]
        raise SandboxUnavailable(
            f"refusing to run student code at the 'user' level ({why}): a sandbox user could read "
            f"{len(readable)} file(s) it must not see, for example:\n  {shown}\n"
            f"To fix it, {INSTALL_BWRAP}; or make these unreadable to other users "
            f"(e.g. `chmod -R o-rwx {' '.join(folders)}`); or, only for code you trust, pass {flag}.")
    return Clearance(chosen.level, chosen.detail, fallback=fallback)

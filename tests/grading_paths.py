"""The two grading paths below bubblewrap, as the adversarial tests run them.

Both run as root in a private mount namespace (``unshare --mount``), so what
they hide is hidden from them alone and the machine is left as it was. There
``/tmp`` is a folder of the test's own (a machine's /tmp holds whatever its
other users left, copies of a checkout included: a grader can guard only what
it knows of), and the test's folders are put back in place inside it:

- ``grader-grade-user``: ``grader grade --isolation user`` with the zip, the
  submissions and the output in a folder only root can enter, which is what
  the grader's refusal tells an instructor without bubblewrap to do. The
  folders holding checkouts of the grader (this one, its siblings, the
  checkout an editable install points at) are covered by an empty folder
  only root may enter, as ``chmod o-rwx`` would make them; this checkout is
  put back in place for root, for the grader to run from.
- ``gradescope-like``: Gradescope's machine. A fresh environment with only
  the zip's runtime requirements installed (no checkout, no references),
  bubblewrap hidden, ``/autograder`` a folder of its own holding the
  instructor's build output (``/autograder/dist/<name>/...``, with the modes
  ``grader build`` gave it) and the submission (``/autograder/submission``),
  and ``otter run`` grading at the fresh-uid level with the zip of that build.
"""
from __future__ import annotations

import functools
import os
import shlex
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

from autograder.runtime.sandbox import policy
from tests.test_zip_install import _pip_requirements

ROOT = Path(__file__).resolve().parent.parent
#: Gradescope's working folder; in the namespace, a folder of the test is mounted there.
GRADESCOPE = Path("/autograder")


#: File names that mark a copy of the references, the hidden tests or a build (what an attack looks for).
COPY_MARKS = ("head_and_loss.py", "hidden_config.json", "autograder.zip")
#: Where other copies sit on a machine (``/tmp`` is replaced in every run below).
COPY_ROOTS = ("/root", "/home", "/work", "/opt", "/srv", "/var/tmp", "/dev/shm")


def _python_folders() -> list[Path]:
    return [Path(p).resolve() for p in (sys.executable, sys.prefix, sys.base_prefix)]


@functools.lru_cache(maxsize=None)
def copies_elsewhere(depth: int = 9) -> tuple[Path, ...]:
    """Folders holding another copy of the references, hidden tests or a build on this machine
    (other checkouts, their installs, earlier builds), outside this checkout and the Python that
    runs the tests. The grader guards what it is given and what its own Python can see; other copies
    are the machine owner's to close (the security model says so), which the tests do by covering them.
    Walked once per session (tests write their own copies under /tmp, which is never walked): every
    run below bubblewrap asks for it."""
    found = set()
    for root in COPY_ROOTS:
        base = root.count("/")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__", "node_modules")]
            if dirpath.count("/") - base >= depth:
                dirnames[:] = []
            here = Path(dirpath)
            if any(f in COPY_MARKS for f in filenames) or (here.name == "hidden" and
                                                          any(f.startswith("test_q") for f in filenames)):
                found.add(here)
                if (here.parent / "solution").is_dir():       # a build's solution notebook beside its zip
                    found.add(here.parent / "solution")
    return tuple(sorted(found))


def covered_folders() -> list[Path]:
    """Folders to cover for a run at the user level: the one holding this checkout (a developer's
    other checkouts sit beside it), the one holding an editable install's checkout, and every other
    copy of the references on the machine, never one holding the Python that runs the grader."""
    candidates = [ROOT.parent, *copies_elsewhere()]
    editable = policy.editable_checkout()
    if editable is not None:
        candidates.append(editable.parent)
    python = _python_folders()
    chosen = []
    for folder in (c.resolve() for c in candidates):
        if folder == Path("/") or any(p == folder or folder in p.parents for p in python):
            continue
        if folder != ROOT.parent and (folder == ROOT or ROOT in folder.parents):
            continue                     # this checkout: closed to others for the session (conftest)
        chosen.append(folder)
    return sorted({c for c in chosen if not any(o != c and o in c.parents for o in chosen)})


def python_under_tmp() -> list[Path]:
    """The folder right below ``/tmp`` holding the Python that runs the tests, if it is there (CI
    makes its environment with ``mktemp -d``): each run below puts it back in its replaced ``/tmp``,
    with its own modes, so the grader can start."""
    tmp = Path("/tmp").resolve()
    return sorted({tmp / p.relative_to(tmp).parts[0] for p in _python_folders()
                   if tmp in p.parents and p != tmp})


def bwrap_on_path(path: str) -> list[str]:
    """Every ``bwrap`` executable on ``path``."""
    return [os.path.join(d, "bwrap") for d in path.split(os.pathsep)
            if d and os.access(os.path.join(d, "bwrap"), os.X_OK)]


def in_private_mounts(cmd: list[str], cwd: Path, *, cover: list[Path], tmp: Path, keep: list[Path],
                      binds: list[tuple[Path, Path]] = (), blank: list[str] = ()) -> list[str]:
    """``cmd`` run in a private mount namespace where each folder of ``cover`` is an empty folder
    only root may enter, ``tmp`` is ``/tmp``, each folder of ``keep`` is back at its own path (held
    meanwhile in a root-only tmpfs at ``/autograder``), each ``(source, target)`` of ``binds`` is
    mounted at ``target``, and each file of ``blank`` is ``/dev/null`` (not executable:
    ``shutil.which`` skips it). The Python running the tests is kept too where it is in ``/tmp``. No kept folder may hold ``tmp``: the sandbox's cleanup walks the
    machine's world-writable folders, and a mount inside itself would be a loop."""
    q = shlex.quote
    keep = [*keep, *(p for p in python_under_tmp() if p not in keep)]
    held = [GRADESCOPE / f"held{i}" for i in range(len(keep))]
    lines = ["set -e", f"mount -t tmpfs -o mode=0700 lmhead-held {GRADESCOPE}"]
    for path, hold in zip(keep, held):
        lines += [f"mkdir {q(str(hold))}", f"mount --bind {q(str(path))} {q(str(hold))}"]
    lines += [f"mount -t tmpfs -o mode=0700 lmhead-covered {q(str(c))}" for c in cover]
    lines.append(f"mount --bind {q(str(tmp))} /tmp")
    for path, hold in zip(keep, held):
        lines += [f"mkdir -p {q(str(path))}", f"mount --bind {q(str(hold))} {q(str(path))}"]
    lines += [f"mount --bind {q(str(s))} {q(str(t))}" for s, t in binds]
    lines += [f"mount --bind /dev/null {q(b)}" for b in blank]
    lines += [f"cd {q(str(cwd))}", 'exec "$@"']
    return ["unshare", "--mount", "--propagation", "private", "sh", "-c", "\n".join(lines), "sh", *cmd]


def machine_tmp(folder: Path) -> Path:
    """``folder`` made the ``/tmp`` of the runs below bubblewrap (sticky, writable by all)."""
    folder.chmod(0o1777)
    GRADESCOPE.mkdir(exist_ok=True)          # a mount point; on the machine it stays empty
    return folder


def user_level_grade(cmd: list[str], cwd: Path, lab: Path, tmp: Path) -> list[str]:
    """``cmd`` (a ``grader grade`` from this checkout, in the test folder ``lab``) with the
    checkouts covered but this one, and ``tmp`` as ``/tmp``."""
    return in_private_mounts(cmd, cwd, cover=covered_folders(), tmp=tmp, keep=[ROOT, lab])


class GradescopeLike:
    """A fresh environment holding only the zip's runtime, and the ``/autograder`` folder.

    Built once (a virtual environment and a pip install take most of a minute) and shared
    by every run on the path.
    """

    def __init__(self, zip_path: Path, dist: Path, root: Path, lab: Path, tmp: Path):
        """Install ``zip_path``'s requirements under ``root`` (in the test folder ``lab``); lay out
        ``root/autograder`` with a copy of the build output ``dist`` (modes kept) and an empty
        ``submission`` folder; ``tmp`` is the runs' ``/tmp``."""
        root.mkdir()
        self.lab, self.tmp = lab, tmp
        source = root / "source"
        with zipfile.ZipFile(zip_path) as zf:
            zf.extractall(source)
        self.venv = root / "venv"
        venv.EnvBuilder(with_pip=True).create(self.venv)
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        install = subprocess.run([str(self.venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                                  *_pip_requirements(source)], capture_output=True, text=True, env=self.env,
                                 timeout=900)
        if install.returncode != 0:
            raise RuntimeError(f"installing the zip's requirements failed:\n{install.stderr[-3000:]}")
        self.env["PATH"] = f"{self.venv / 'bin'}{os.pathsep}{self.env.get('PATH', '')}"
        self.folder = root / "autograder"
        self.folder.mkdir()
        self.folder.chmod(0o755)                 # root's, like Gradescope's /autograder
        shutil.copytree(dist, self.folder / "dist", symlinks=True)
        (self.folder / "submission").mkdir()
        (self.folder / "submission").chmod(0o755)
        name = zip_path.parent.parent.name
        #: The zip and solution notebook as the graded run sees them.
        self.zip = GRADESCOPE / "dist" / name / "autograder" / zip_path.name
        self.dist = self.folder / "dist" / name

    def command(self, run_folder: Path, submission: str, *, autograder: str | None = None,
                cwd: str = "/autograder/submission") -> list[str]:
        """``otter run`` on ``run_folder/submission`` (mounted at ``/autograder/submission``), writing
        ``run_folder/out/results.json``; ``autograder`` is the ``-a`` value (the build's zip)."""
        inside = GRADESCOPE / "submission"
        run_folder.chmod(0o755)
        cmd = [str(self.venv / "bin" / "otter"), "run", "-a", autograder or str(self.zip),
               "-o", str(inside / "out"), str(inside / submission)]
        return in_private_mounts(cmd, Path(cwd), cover=covered_folders(), tmp=self.tmp, keep=[self.lab],
                                 binds=[(self.folder, GRADESCOPE), (run_folder, inside)],
                                 blank=bwrap_on_path(self.env["PATH"]))

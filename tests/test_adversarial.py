"""Does a hostile submission gain nothing, on every path a submission is graded?

Every attack of ``tests/adversarial.py`` is graded on its export zip on each
of the grading paths it names (``Attack.paths``, from ``PATHS``), as an
instructor or Gradescope would run them (subprocesses, the built autograder
zip; the two paths below bubblewrap are set up by ``tests/grading_paths.py``).
For each run:

- it scores no more than the untouched student notebook does on the same path;
- the grader returns within its time limit plus 5 s, plus a start-up
  allowance measured on the untouched notebook (see ``Lab.allowance``);
- nothing it started survives (processes carrying its marker in their
  command line or environment, or running as the uid its sandbox had);
- no file or kernel key named with its marker appears outside the sandbox,
  nothing reaches the test's loopback port, and the outputs are not rewritten
  after the grader returned;
- results.json is valid Gradescope JSON, reveals no hidden test or
  reference source, and says what happened.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from autograder.runtime.grading.discover import _student_id
from autograder.runtime.grading.gradebook import FORMULA_STARTS
from autograder.runtime.grading.outcome import STATUSES, student_folder
from autograder.runtime.sandbox import Limits
from tests.adversarial import (ATTACKS, BY_NAME, CLASS_FILE_ATTACKS, NOTEBOOK, PATHS, SESSION, AttackContext,
                               attacked, invalidate_keys,
                               keys_named, marker, otter_executable, probe_flood, probe_key, subprocess_env,
                               without_plugin, write_zip, zip_members)
from tests.grading_paths import GradescopeLike, machine_tmp, user_level_grade

ROOT = Path(__file__).resolve().parent.parent
#: ``grader grade --timeout``: the wall-clock budget of one submission.
GRADE_TIMEOUT = 6.0
#: Under ``otter run`` the plugin grades with the default limits.
OTTER_LIMIT = Limits().wall_seconds_total
SLACK = 5.0
#: The paths where student code runs as a fresh uid of the machine (bubblewrap is not used).
USER_LEVEL = ("grader-grade-user", "gradescope-like")
#: Every attack on exactly the paths it names.
CASES = [(attack, path) for attack in ATTACKS for path in attack.paths]
#: How long a run may take before the test gives up on it (and fails).
HARD_TIMEOUT = 180.0
#: A process or file may take this long to disappear after the grader returned.
GRACE = 1.0
#: How long the outputs must stay untouched after the grader returned, for attacks that start processes.
WATCH = 3.0
LINGERING = {"fork_bomb", "results_rewriter", "shadowed_support"}
#: Attacks that do gain marks where the student's code and the tests share a process.
#: (The ndarray subclass whose comparisons always agree earns nothing even in otter's own
#: kernel now, so it is no control.)
REAL_ELSEWHERE = ["reference_from_packages", "frames_and_gc"]


class Listener:
    """A loopback TCP server recording every byte any client sends."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            conn.settimeout(1.0)
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.server.close()


@dataclass
class Run:
    """One grading run: its results.json, how long it took, and the files it wrote."""

    path: str
    results: dict | None
    seconds: float
    returncode: int | None
    log: str
    outputs: list[Path] = field(default_factory=list)


def _run(cmd: list[str], cwd: Path, with_repo: bool = True,
         env: dict[str, str] | None = None) -> tuple[float, int | None, str]:
    """Run ``cmd`` with its output going to files (an escaped process holding a pipe
    must not delay the measurement); kill its process group if it hangs."""
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    with open(out, "wb") as so, open(err, "wb") as se:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env or subprocess_env(with_repo), stdout=so, stderr=se,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            code = proc.wait(timeout=HARD_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        seconds = time.monotonic() - start
    log = (out.read_text(errors="replace")[-3000:] + err.read_text(errors="replace")[-3000:])
    return seconds, code, log


def grade(lab: "Lab", path: str, submission: Path, folder: Path) -> Run:
    """Grade ``submission`` through ``path`` with working folder ``folder``."""
    folder.mkdir(parents=True)
    out = folder / "out"
    out.mkdir()
    env = None
    if path in ("grader-grade", "grader-grade-user"):
        cmd = [sys.executable, "-m", "autograder.cli", "grade", str(submission), "-a", str(lab.zip),
               "-o", str(out), "--timeout", f"{GRADE_TIMEOUT:g}"]
        if path == "grader-grade-user":
            cmd = user_level_grade(cmd + ["--isolation", "user"], folder, lab.root, lab.tmp)
        results_path = student_folder(out, _student_id(submission.stem)) / "results.json"
    elif path == "otter-run":
        cmd = [otter_executable(), "run", "-a", str(lab.zip), "-o", str(out), str(submission)]
        results_path = out / "results.json"
    else:
        gradescope = lab.gradescope()
        shutil.copy(submission, folder / submission.name)
        cmd, env = gradescope.command(folder, submission.name), gradescope.env
        results_path = out / "results.json"
    seconds, code, log = _run(cmd, folder, env=env)
    try:
        results = json.loads(results_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        results = None
    outputs = sorted(p for p in out.rglob("*") if p.is_file())
    return Run(path, results, seconds, code, log, outputs)


def results_text(results: dict) -> str:
    parts = [str(results.get("output", ""))]
    parts += [str(t.get("output", "")) for t in results.get("tests", []) if isinstance(t, dict)]
    return "\n".join(parts)


#: Elements a student's text must never become once Markdown is rendered.
LIVE_TAGS = {"script", "img", "iframe", "object", "embed", "svg", "style", "form", "input", "link", "meta"}


def live_markup(markdown: str) -> list[str]:
    """Live pieces of ``markdown`` once a CommonMark renderer with raw HTML turned on (as the
    renderers of results.json may have) renders it: dangerous elements, event handlers,
    script links, and terminal escapes or bidirectional overrides in the text."""
    from html.parser import HTMLParser

    from markdown_it import MarkdownIt
    found: list[str] = []

    class Scan(HTMLParser):
        def handle_starttag(self, tag, attrs):
            if tag in LIVE_TAGS:
                found.append(f"<{tag}>")
            for name, value in attrs:
                if name.startswith("on") or (value or "").strip().lower().startswith("javascript:"):
                    found.append(f"<{tag} {name}={value}>")

    Scan().feed(MarkdownIt("commonmark", {"html": True}).render(markdown))
    found += [repr(c) for c in ("\x1b", "\u202e") if c in markdown]
    return found




def formula_cells(csv_text: str) -> list[str]:
    """Cells of a CSV that a spreadsheet would evaluate (numbers the grader writes are fine)."""
    import csv
    import io
    bad = []
    for row in csv.reader(io.StringIO(csv_text)):
        for cell in row:
            if cell.startswith(FORMULA_STARTS):
                try:
                    float(cell)
                except ValueError:
                    bad.append(cell)
    return bad


def check_valid(results: dict | None, log: str) -> None:
    """Gradescope's results.json: a score, a summary, and every test with its score and output."""
    assert isinstance(results, dict), f"no valid results.json; the grader said:\n{log}"
    assert isinstance(results.get("score"), (int, float)) and not isinstance(results["score"], bool), results
    assert isinstance(results.get("output"), str) and results["output"].strip(), "results.json has no summary"
    tests = results.get("tests")
    assert isinstance(tests, list) and tests, "results.json should list the tests"
    for test in tests:
        assert isinstance(test.get("name"), str) and test["name"], test
        assert isinstance(test.get("score"), (int, float)) and isinstance(test.get("max_score"), (int, float)), test
        assert 0 <= test["score"] <= test["max_score"] + 1e-9, test
        assert isinstance(test.get("output"), str), f"test {test['name']} has no output"
    assert abs(sum(t["score"] for t in tests) - results["score"]) < 1e-3, "the score is not the sum of the tests"
    assert results.get("extra_data", {}).get("status") in STATUSES, "results.json should give the status"


# ------------------------------------------------------------------ scanning

def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def processes_of(mark: str, uids: set[int]) -> dict[int, str]:
    """Live processes carrying ``mark`` in their command line or environment, named after the
    session (``/proc/<pid>/comm``: forks that never exec), or running as one of ``uids``."""
    found = {}
    token = mark.encode()
    tag = SESSION.encode()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        stat = _read(f"/proc/{name}/stat").decode(errors="replace")
        if not stat or stat[stat.rfind(")") + 2:][:1] in ("Z", "X", ""):
            continue
        status = _read(f"/proc/{name}/status").decode(errors="replace")
        uid_line = next((line for line in status.splitlines() if line.startswith("Uid:")), "Uid: -1")
        cmdline = _read(f"/proc/{name}/cmdline")
        if token in cmdline or token in _read(f"/proc/{name}/environ") or int(uid_line.split()[1]) in uids \
                or _read(f"/proc/{name}/comm").strip() == tag:
            found[int(name)] = cmdline.replace(b"\0", b" ").decode(errors="replace")[:200]
    return found


def files_named(mark: str, roots: list[tuple[Path, int]]) -> list[Path]:
    """Files and folders whose name holds ``mark`` under each ``(root, depth)``."""
    found: set[Path] = set()
    for root, depth in roots:
        if not root.is_dir():
            continue
        base = len(root.parts)
        for dirpath, dirnames, filenames in os.walk(root, onerror=lambda _e: None):
            here = Path(dirpath)
            dirnames[:] = [d for d in dirnames if d not in (".git", "proc", "sys")]
            for name in dirnames + filenames:
                if mark in name:
                    found.add(here / name)
            if len(here.parts) - base >= depth:
                dirnames[:] = []
    return sorted(found)


def sandbox_uids(results: dict | None, mark: str) -> set[int]:
    """The uids the submission's code reported running as (every attack prints them first)."""
    text = results_text(results) if results else ""
    uids = {int(u) for u in re.findall(re.escape(mark) + r" uid=(\d+)", text)}
    return {u for u in uids if u not in (0, os.getuid())}


def snapshot(paths: list[Path]) -> dict[str, tuple[int, bytes]]:
    return {str(p): (p.stat().st_mtime_ns, p.read_bytes()) for p in paths if p.is_file()}


def _kill(pids) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _remove(paths) -> None:
    for path in paths:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                path.unlink()
            except OSError:
                pass


# ------------------------------------------------------------------ the lab

@dataclass
class Lab:
    root: Path
    zip: Path
    stub: nbformat.NotebookNode
    listener: Listener
    secrets: list[str]
    #: The /tmp of the runs below bubblewrap.
    tmp: Path
    baselines: dict[str, Run] = field(default_factory=dict)
    _gradescope: GradescopeLike | None = None

    def gradescope(self) -> GradescopeLike:
        """The Gradescope-like machine, set up on first use and shared by every run on that path."""
        if self._gradescope is None:
            self._gradescope = GradescopeLike(self.zip, self.zip.parent.parent.parent, self.root / "gradescope",
                                              self.root, self.tmp)
        return self._gradescope

    def baseline(self, path: str) -> Run:
        """The untouched notebook's run on ``path`` (graded on first use)."""
        if path not in self.baselines:
            submission = self.root / "stub.zip"
            if not submission.exists():
                write_zip(zip_members(self.stub), submission)
            run = grade(self, path, submission, self.root / f"baseline-{path}")
            check_valid(run.results, run.log)
            self.baselines[path] = run
        return self.baselines[path]

    def context(self, name: str, cwd: Path) -> AttackContext:
        return AttackContext(marker(name), self.listener.port, (str(ROOT), str(self.root), str(cwd)))

    def allowance(self, path: str) -> float:
        """Start-up cost of one run on ``path``: the untouched notebook's run time (interpreter,
        otter and pytest imports, the kernel for otter, the sandbox start), plus half of it for
        the noise of a shared 2-core machine."""
        return 1.5 * self.baseline(path).seconds

    def limit(self, path: str) -> float:
        """The grader's own bound on one submission (its total budget, plus a window and a reload
        for each function that hangs once), with the start-up allowance and slack."""
        total = GRADE_TIMEOUT if path.startswith("grader-grade") else OTTER_LIMIT
        limits = Limits(wall_seconds_total=total, wall_seconds_per_call=min(total, Limits().wall_seconds_per_call))
        return limits.longest_session(len(self.functions)) + SLACK + self.allowance(path)

    @property
    def functions(self) -> tuple[str, ...]:
        """The student functions the hidden tests call (each may hang once)."""
        with zipfile.ZipFile(self.zip) as zf:
            config = json.loads(zf.read("files/lmhead_support/hidden_config.json"))
        return tuple(f for q in config["questions"] for f in config["functions"].get(q, ()))

    def scan_roots(self, cwd: Path) -> list[tuple[Path, int]]:
        home = Path(os.path.expanduser("~"))
        # /dev/mqueue: POSIX message queues show there as files where the mqueue filesystem is mounted.
        return [(Path("/tmp"), 7), (Path("/var/tmp"), 3), (Path("/dev/shm"), 3), (Path("/dev/mqueue"), 1),
                (ROOT, 10), (home, 2),
                (self.root, 12), (cwd, 12), (Path("/"), 1), (Path("/autograder"), 4), (Path("/work"), 2),
                (Path("/usr/local/lib"), 1), (Path("/run/lock"), 2), (self.tmp, 7)]


def _hidden_lines(zip_path: Path, public: str) -> list[str]:
    """Distinctive source lines of the hidden tests and the references (none is in the student notebook)."""
    lines = set()
    with zipfile.ZipFile(zip_path) as zf:
        for name in zf.namelist():
            if name.startswith("files/lmhead_support/hidden/test_") or name.endswith("solutions/head_and_loss.py"):
                for line in zf.read(name).decode().splitlines():
                    line = line.strip()
                    if len(line) >= 30 and not line.startswith(("#", '"""')) and line not in public:
                        lines.add(line)
        config = json.loads(zf.read("files/lmhead_support/hidden_config.json"))
    return sorted(lines) + [config["secret"]]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    root = tmp_path_factory.mktemp("adversarial")
    root.chmod(0o700)     # the user-level paths grade from a folder only root may enter
    (result,) = build(["lm-head"], root / "dist", None, verify=False)
    stub = nbformat.read(result.student, as_version=4)
    listener = Listener()
    public = nbformat.writes(stub)
    lab = Lab(root, result.autograder_zip, stub, listener, _hidden_lines(result.autograder_zip, public),
              machine_tmp(tmp_path_factory.mktemp("machine-tmp")))
    yield lab
    listener.close()


def test_the_corpus_has_at_least_fifteen_attacks_each_otherwise_a_stub(tmp_path):
    """Quick: every attack builds a zip whose notebook parses, keeps every student function
    and the stub's other cells, and carries its marker."""
    assert len(ATTACKS) >= 15
    assert len({a.name for a in ATTACKS}) == len(ATTACKS)
    assert all(a.paths and set(a.paths) <= set(PATHS) for a in ATTACKS), [a.paths for a in ATTACKS]
    stub = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import otter\ngrader = otter.Notebook('lm-head.ipynb')"),
        nbformat.v4.new_code_cell("import numpy as np"),
        *[nbformat.v4.new_code_cell(f"def {name}(a):\n    ...\n") for name in
          ("next_token_batch", "lm_head", "softmax", "cross_entropy_loss", "lm_head_backward",
           "numerical_gradient", "max_rel_err")],
        nbformat.v4.new_code_cell('grader.check("q1")')])
    for attack in ATTACKS:
        ctx = AttackContext(marker(attack.name), 1, (str(tmp_path),))
        members, kind = attack.build(stub, ctx)
        assert kind == "zip" and NOTEBOOK in members
        nb = nbformat.reads(members[NOTEBOOK], as_version=4)
        sources = [c.source for c in nb.cells]
        assert sum(s.startswith("def ") for s in sources) == 7, attack.name
        assert sources[0] == stub.cells[0].source and sources[-1] == stub.cells[-1].source
        everything = json.dumps({k: v if isinstance(v, str) else v.decode("latin-1") for k, v in members.items()})
        assert ctx.marker in everything, attack.name
        write_zip(members, tmp_path / f"{attack.name}.zip")
    notebook = attacked(stub, AttackContext("m", 1, ()))
    assert len(notebook.cells) == len(stub.cells) + 1


@pytest.mark.slow
@pytest.mark.parametrize("path", PATHS)
def test_the_untouched_notebook_scores_zero_every_way(lab, path):
    run = lab.baseline(path)
    assert run.returncode == 0, run.log
    assert run.results["score"] == 0, path
    assert run.results["extra_data"]["status"] == "graded"
    if path in USER_LEVEL:
        assert run.results["extra_data"]["isolation"] == "user", run.results["output"][-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("name", REAL_ELSEWHERE)
def test_the_attacks_are_real_where_the_tests_share_the_kernel(lab, name):
    """Control: otter's own grading (the same zip, plugin off) gives these attacks marks,
    so their zeros through the trusted grader are the sandbox's doing."""
    folder = lab.root / f"control-{name}"
    folder.mkdir()
    plain = without_plugin(lab.zip, folder / "autograder-without-plugin.zip")
    submission = folder / f"{name}.zip"
    write_zip(BY_NAME[name].build(lab.stub, lab.context(name, folder))[0], submission)
    (folder / "out").mkdir()
    seconds, code, log = _run([otter_executable(), "run", "-a", str(plain), "-o", str(folder / "out"),
                               str(submission)], folder, with_repo=False)
    try:
        results = json.loads((folder / "out" / "results.json").read_text(encoding="utf-8"))
        earned = sum(float(t.get("score") or 0) for t in results["tests"])
        print(f"\nCONTROL {name} | otter without the plugin | {earned:g} points | {seconds:.1f} s")
        assert earned > lab.baseline("otter-run").results["score"], log
    finally:
        _kill(processes_of(marker(name), set()))
        _remove(files_named(marker(name), lab.scan_roots(folder)))


@pytest.mark.slow
@pytest.mark.parametrize("attack,path", CASES, ids=[f"{a.name}-{p}" for a, p in CASES])
def test_an_attack_gains_nothing(lab, attack, path):
    lab.baseline(path)
    folder = lab.root / f"{attack.name}-{path}"
    ctx = lab.context(attack.name, folder)
    mark = ctx.marker
    submission = lab.root / "submissions" / path / f"{attack.name}.zip"
    submission.parent.mkdir(parents=True, exist_ok=True)
    members, kind = attack.build(lab.stub, ctx)
    assert kind == "zip"
    write_zip(members, submission)
    received_before = len(lab.listener.received)

    run = grade(lab, path, submission, folder)
    returned = time.monotonic()
    uids = sandbox_uids(run.results, mark)
    survivors, leaked = {}, []
    try:
        # Survivors: give the cleanup a moment, then nothing may be left.
        while True:
            survivors = processes_of(mark, uids)
            if not survivors or time.monotonic() - returned > GRACE:
                break
            time.sleep(0.1)
        leaked = files_named(mark, lab.scan_roots(folder))
        keys = keys_named(mark)
        if attack.name in LINGERING:
            before = snapshot(run.outputs)
            time.sleep(max(0.0, WATCH - (time.monotonic() - returned)))
            rewritten = [p for p, v in snapshot(run.outputs).items() if before.get(p) != v]
        else:
            rewritten = []
        late = processes_of(mark, uids)

        isolation = (run.results or {}).get("extra_data", {}).get("isolation", "?")
        print(f"\nADVERSARIAL {attack.name} | {path} | score {run.results and run.results.get('score')} "
              f"| {run.seconds:.1f} s (limit {lab.limit(path):.1f}) | isolation {isolation} | sandbox uids "
              f"{sorted(uids)} | survivors {len(survivors)} | leaked {len(leaked)} | status "
              f"{(run.results or {}).get('extra_data', {}).get('status')}")

        assert isinstance(run.results, dict), f"no results.json; the grader said:\n{run.log}"
        stub_score = lab.baseline(path).results["score"]
        assert run.results.get("score", 0) <= stub_score + 1e-9, (
            f"{attack.name} scored {run.results['score']} through {path}; the stub scores {stub_score}")
        assert run.returncode == 0, f"the grader failed:\n{run.log}"
        check_valid(run.results, run.log)
        if path in USER_LEVEL:      # a refusal scores 0 too, and would prove nothing
            assert isolation == "user", f"{path} did not grade at the user level ({isolation}):\n" \
                f"{run.results['output'][-2000:]}"
        assert run.seconds <= lab.limit(path), (
            f"{path} took {run.seconds:.1f} s on {attack.name}; the limit is {lab.limit(path):.1f} s")
        assert not survivors, f"processes of {attack.name} survived the grader: {survivors}"
        assert not late, f"processes of {attack.name} appeared after the grader returned: {late}"
        assert not leaked, f"{attack.name} left files outside its sandbox: {leaked}"
        assert not keys, f"{attack.name} left kernel keys behind: {keys}"
        assert not rewritten, f"{attack.name} rewrote {rewritten} after the grader returned"
        assert mark.encode() not in bytes(lab.listener.received[received_before:]), \
            f"{attack.name} reached the test's loopback port"
        text = results_text(run.results)
        assert '"score": 100' not in json.dumps(run.results)
        shown = [line for line in lab.secrets if line in text]
        assert not shown, f"results.json shows hidden test or reference source: {shown[:3]}"
        shown = [p for p in attack.hides if re.search(p, text)]
        assert not shown, f"results.json of {attack.name} ({path}) shows what it should hide: {shown}"
        live = live_markup(text)
        assert not live, f"results.json of {attack.name} ({path}) renders live markup: {live[:5]}"
        assert any(re.search(pattern, text) for pattern in attack.says), (
            f"results.json of {attack.name} ({path}) should say what happened ({attack.says}); it says:\n"
            f"{text[:3000]}")
        if path.startswith("grader-grade"):
            feedback = (student_folder(folder / "out", _student_id(attack.name)) / "feedback.md").read_text()
            assert not live_markup(feedback), f"feedback.md renders live markup: {live_markup(feedback)[:5]}"
            gradebook = (folder / "out" / "gradebook.csv").read_text()
            assert not formula_cells(gradebook), f"gradebook.csv holds formulas: {formula_cells(gradebook)}"
            row = next(line for line in gradebook.splitlines() if line.startswith(_student_id(attack.name) + ","))
            assert row.split(",")[3] == f"{run.results['score']:g}"
    finally:
        _kill(processes_of(mark, uids))
        _remove(files_named(mark, lab.scan_roots(folder)))
        invalidate_keys(keys_named(mark))



# ------------------------------------------------------------------ below bubblewrap

@pytest.mark.slow
@pytest.mark.parametrize("path", USER_LEVEL)
def test_a_correct_notebook_scores_full_marks_at_the_user_level(lab, path):
    """The user-level paths do grade (a refusal would make every attack there score 0)."""
    folder = lab.root / f"correct-{path}"
    submission = lab.root / "submissions" / path / "correct.zip"
    submission.parent.mkdir(parents=True, exist_ok=True)
    solution = nbformat.read(lab.zip.parent.parent / "solution" / NOTEBOOK, as_version=4)
    write_zip(zip_members(solution), submission)
    run = grade(lab, path, submission, folder)
    check_valid(run.results, run.log)
    assert run.results["extra_data"]["isolation"] == "user", run.results["output"][-2000:]
    assert run.results["score"] == 20, run.results["output"][-2000:]


def _otter_run_refusal(lab: Lab, name: str, **where: str) -> str:
    """What ``otter run`` on the Gradescope-like machine says about the untouched notebook, where it
    refuses to grade; ``where`` passes the ``-a`` value and the working folder."""
    gradescope = lab.gradescope()
    folder = lab.root / name
    folder.mkdir()
    (folder / "out").mkdir()
    write_zip(zip_members(lab.stub), folder / "stub.zip")
    seconds, code, log = _run(gradescope.command(folder, "stub.zip", **where), folder, env=gradescope.env)
    results = json.loads((folder / "out" / "results.json").read_text(encoding="utf-8"))
    check_valid(results, log)
    assert results["score"] == 0 and results["extra_data"]["isolation"] == "none (refused)", results["output"]
    return results["output"]


@pytest.mark.slow
def test_otter_run_refuses_the_user_level_while_the_build_output_is_readable(lab):
    """otter's zip is named in its command line: below bubblewrap the plugin grades only while a sandbox
    user can read neither the zip nor the solution notebook the build wrote beside it (given by an
    absolute path, or by one relative to the folder otter was started in)."""
    gradescope = lab.gradescope()
    folder, zip_path = gradescope.dist / "autograder", gradescope.dist / "autograder" / lab.zip.name
    solution = gradescope.dist / "solution"
    modes = {p: p.stat().st_mode & 0o777 for p in (folder, zip_path, solution, solution / NOTEBOOK)}
    try:
        folder.chmod(0o755)
        zip_path.chmod(0o644)
        said = _otter_run_refusal(lab, "refused-readable-zip")
        assert f"{gradescope.zip}" in said and "a sandbox user could read" in said, said
        folder.chmod(modes[folder])
        zip_path.chmod(modes[zip_path])
        solution.chmod(0o755)
        (solution / NOTEBOOK).chmod(0o644)
        relative = str(gradescope.zip.relative_to(gradescope.zip.parent.parent))
        said = _otter_run_refusal(lab, "refused-readable-solution", autograder=relative,
                                  cwd=str(gradescope.zip.parent.parent))
        assert f"{gradescope.zip.parent.parent}/solution/{NOTEBOOK}" in said, said
    finally:
        for path, mode in modes.items():
            path.chmod(mode)


# ------------------------------------------------------------------ names an LMS export carries

def _export(folder: Path, people: list[tuple[str, str, str, str, nbformat.NotebookNode]]) -> Path:
    """A Gradescope export: (key, name, email, created_at, notebook) per submission, no SIDs."""
    from tests.cohort import write_export_zip
    lines = []
    for key, name, email, created, nb in people:
        (folder / key).mkdir(parents=True)
        write_export_zip(nb, folder / key / "lm-head.zip", "lm-head")
        lines += [f"{key}:", "  :submitters:", f"  - :name: {json.dumps(name)}", "    :sid: ''",
                  f"    :email: {json.dumps(email)}", f"  :created_at: {created}"]
    (folder / "submission_metadata.yml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.mark.slow
def test_names_and_files_cannot_plant_formulas_or_take_anothers_grade(lab, tmp_path):
    """Two attacks through what an export carries: display names, e-mails and file names that are
    spreadsheet formulas; and a later submission under another domain's same e-mail local part
    (once the id was the local part, so it replaced Alice's row)."""
    from autograder.runtime.grading.bulk import grade_batch
    solution = nbformat.read(lab.zip.parent.parent / "solution" / NOTEBOOK, as_version=4)
    export = _export(tmp_path / "export", [
        ("submission_1", "Alice Real", "alice@uni.edu", "2026-12-01 09:00:00 -08:00", solution),
        ("submission_2", "=HYPERLINK(\"http://127.0.0.1\",\"grade\")", "alice@evil.example",
         "2026-12-01 10:00:00 -08:00", lab.stub),
        ("submission_3", "@SUM(A1:A9)", "+1+1@evil.example", "2026-12-01 11:00:00 -08:00", lab.stub),
    ])
    plain = tmp_path / "plain"
    plain.mkdir()
    from tests.cohort import write_export_zip
    for name in ("@SUM(A1)", "-2+3", "=1+1"):
        write_export_zip(lab.stub, plain / f"{name}.zip", "lm-head")
    out = tmp_path / "out"
    result = grade_batch([export, plain], lab.zip, out, timeout=30, canvas_csv=True, moodle_csv=True)
    with open(out / "gradebook.csv", newline="") as handle:
        rows = {r["email"] or r["student"]: r for r in csv.DictReader(handle)}
    assert rows["alice@uni.edu"]["total"] == "20" and rows["alice@uni.edu"]["name"] == "Alice Real"
    assert rows["alice@evil.example"]["total"] == "0"
    assert len(result.rows) == 6
    for name in ("gradebook.csv", "gradebook_canvas.csv", "gradebook_moodle.csv"):
        bad = formula_cells((out / name).read_text(encoding="utf-8"))
        assert bad == [], f"{name} holds formulas: {bad}"


#: Grader CPU seconds a class of one blank notebook and one attacking file may cost, sandboxes
#: included (about 2 s here): the attacks cost 10 to 30 s, or gigabytes, before they were refused.
CLASS_FILE_CPU = 8.0


@pytest.mark.slow
@pytest.mark.parametrize("attack,path", [(a, p) for a in CLASS_FILE_ATTACKS for p in a.paths],
                         ids=[f"{a.name}-{p}" for a in CLASS_FILE_ATTACKS for p in a.paths])
def test_a_file_aimed_at_the_graders_own_readers_costs_it_nothing(lab, attack, path):
    """A file in the class folder is read by the grader itself before any sandbox: it is refused as
    that student's row, cheaply, and the classmate beside it is graded."""
    folder = lab.root / f"class-{attack.name}-{path}"
    submissions = folder / "class"
    submissions.mkdir(parents=True)
    nbformat.write(lab.stub, submissions / "bob.ipynb")
    attack.write(submissions / "mallory.zip")
    out = folder / "out"
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(submissions), "-a", str(lab.zip), "-o", str(out),
           "--timeout", f"{GRADE_TIMEOUT:g}"]
    if path == "grader-grade-user":
        cmd = user_level_grade(cmd + ["--isolation", "user"], folder, lab.root, lab.tmp)
    before = os.times()
    seconds, code, log = _run(cmd, folder)
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    print(f"\nCLASS FILE {attack.name} | {path} | {seconds:.1f} s | grader CPU {cpu:.1f} s")
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    assert code == 0, log
    assert rows["bob"]["status"] == "graded", rows
    assert rows["mallory"]["status"] == "rejected", rows["mallory"]
    results = json.loads((student_folder(out, "mallory") / "results.json").read_text(encoding="utf-8"))
    assert attack.says in results["output"], results["output"]
    assert cpu < CLASS_FILE_CPU, f"{attack.name} cost the grader {cpu:.1f} s of CPU through {path}"



#: Grader CPU seconds grading one submission that floods the class probes may cost, sandbox included
#: (about 2 s here): digesting its 75,000 arrays one by one cost the grader 8 s or more per probe call.
PROBE_FLOOD_CPU = 6.0


@pytest.mark.slow
def test_a_result_of_many_parts_on_the_class_probes_costs_the_grader_little(lab):
    """Round 9: the class probes are called after the hidden suite and their results digested by the
    grader, outside the sandbox. A submission that recognises the probe calls by their public inputs
    and returns 75,000 small arrays on them only is graded cheaply, and its digest is still made
    from what it returned. (Only ``grader grade`` runs the class probes.)"""
    from autograder.runtime.class_probes import _digest, output_digest
    from autograder.runtime.grading.outcome import read_record
    from autograder.runtime.grading.support import load_autograder

    import numpy as np
    folder = lab.root / "probe-flood"
    submissions = folder / "class"
    submissions.mkdir(parents=True)
    inputs = load_autograder(lab.zip, folder / "support").class_probes.inputs
    ctx = lab.context("probe_flood", folder)
    flooded = "next_token_batch"
    # Two of its probe calls (each argument set is probed in several variants): the rest return None.
    write_zip(probe_flood([probe_key(args) for args in inputs[flooded][:2]], (flooded,))(lab.stub, ctx)[0],
              submissions / "mallory.zip")
    out = folder / "out"
    # A budget both flooded calls fit in on a busy machine (each moves 75,000 arrays through the channel).
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(submissions), "-a", str(lab.zip), "-o", str(out),
           "--timeout", "15"]
    before = os.times()
    try:
        seconds, code, log = _run(cmd, folder)
    finally:
        _kill(processes_of(ctx.marker, set()))
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    print(f"\nPROBE FLOOD | grader-grade | {seconds:.1f} s | grader CPU {cpu:.1f} s")
    assert code == 0, log
    record = read_record(student_folder(out, "mallory"))
    assert record.outcome.total == 0
    flood = output_digest([np.full(1, 0.5)] * 75000)
    digests = {f: digest for _, f, digest in record.outcome.behaviour}
    assert len(inputs[flooded]) > 2
    parts = [flood] * 2 + [output_digest(None)] * (len(inputs[flooded]) - 2)
    assert digests.get(flooded) == _digest("|".join(parts)), (
        f"the probe calls of {flooded} were not both answered with the flood: {record.outcome.behaviour}")
    assert cpu < PROBE_FLOOD_CPU, f"75,000 arrays on the class probes cost the grader {cpu:.1f} s of CPU"

"""Can one submission reach another through what the kernel shares, on both ``grader grade`` levels?

An independent review passed data between two submissions of one class
through what no sandbox folder holds: a kernel key (the user keyring
outlives the process, and ``/proc/keys`` lists a key open to every uid by
its serial), file locks on NumPy's own files (every sandbox opens them, and
a lock taken in one is seen from another graded at the same time), and, at
the user level, a file in the machine's ``/dev/shm`` written by one
submission while another was graded beside it. Here each channel's sender
and receivers are graded in one batch with the untouched notebook, through
``python -m autograder.cli grade`` (bubblewrap) and ``--isolation user`` as
root from a folder only root may enter (``tests/grading_paths.py``); a
receiver must score what the untouched notebook scores and its feedback
must not hold what the sender sent.

The same review found two ways past the user level's reach probe, which
must refuse to grade while a sandbox user could read what it must not see:
a class folder or zip given through a link (the probe skipped links, the
worker reads through them), and an output folder left open with thousands
of entries, which spent the probe's whole budget before it reached the
references of the grader run from a checkout anyone may read.
"""
from __future__ import annotations

import csv
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from tests.adversarial import (AttackContext, attacked, invalidate_keys, keys_named, subprocess_env, write_zip,
                               zip_members)
from tests.grading_paths import ROOT, covered_folders, in_private_mounts, machine_tmp, user_level_grade

pytestmark = pytest.mark.slow

#: Unique to this run: the sender's payload and its key's name carry it.
TAG = f"lmchan{secrets.token_hex(4)}"
#: ``grader grade --timeout``: a sender holds its channel open for a few seconds at load.
TIMEOUT = 25
LEVELS = ("bwrap", "user")

#: A working softmax: what a receiver that got it would answer with (and score for).
SOFTMAX = (f"# {TAG}-payload\n"
           "import numpy as np\n"
           "def softmax(x, axis=-1):\n"
           "    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
           "    return e / e.sum(axis=axis, keepdims=True)\n")
#: A receiver's softmax: whatever it received, else nothing.
RECEIVED_SOFTMAX = {"softmax": "    f = _REF.get('softmax')\n    return f(x, axis) if callable(f) else None\n"}

#: ``add_key`` and ``keyctl`` by architecture.
KEY_CALLS = r'''
import ctypes, os
_libc = ctypes.CDLL(None, use_errno=True)
_ADD_KEY, _KEYCTL = (248, 250) if os.uname().machine == "x86_64" else (217, 219)
'''
#: A key named after the run in the uid's user keyring, holding the payload, open to every uid.
KEY_SENDER = KEY_CALLS + r'''
_data = __PAYLOAD__.encode()
_serial = _libc.syscall(_ADD_KEY, b"user", __TAG__.encode(), _data, len(_data), ctypes.c_int(-4))
if _serial >= 0:
    _libc.syscall(_KEYCTL, 5, _serial, ctypes.c_uint(0x3f3f0b0b))     # setperm: all may view and read
print("sender stored key", _serial, os.strerror(ctypes.get_errno()) if _serial < 0 else "", flush=True)
'''
#: Finds the key by its serial in /proc/keys, reads it and answers with the code it holds.
KEY_RECEIVER = KEY_CALLS + r'''
_REF = {}
try:
    for _line in open("/proc/keys"):
        if __TAG__ in _line:
            _buffer = ctypes.create_string_buffer(4096)
            _n = _libc.syscall(_KEYCTL, 11, int(_line.split()[0], 16), _buffer, 4096)
            if _n > 0:
                _code = _buffer.raw[:_n].decode()
                print("receiver read:", _code, flush=True)
                exec(_code, _REF)
except OSError as _e:
    print("receiver: /proc/keys", type(_e).__name__, flush=True)
'''

#: Sixteen bits, one a NumPy file, the first file saying 'sending': shared flock locks held for a while.
LOCK_FILES = r'''
import errno, fcntl, os, time
import numpy
_folder = numpy.__path__[0]
_files = []
for _dirpath, _dirnames, _names in sorted(os.walk(_folder)):
    _files += [os.path.join(_dirpath, f) for f in sorted(_names) if f.endswith((".py", ".pyi"))]
_fds = [os.open(f, os.O_RDONLY) for f in _files[:17]]
'''
LOCK_VALUE = 0xBEEF
LOCK_SENDER = LOCK_FILES + r'''
_held = []
try:
    fcntl.flock(_fds[0], fcntl.LOCK_SH)
    for _i in range(16):
        if (__VALUE__ >> _i) & 1:
            fcntl.flock(_fds[_i + 1], fcntl.LOCK_SH)
            _held.append(_i)
    print("sender holds", len(_held), "locks", flush=True)
    time.sleep(6)
except OSError as _e:
    print("sender: flock", errno.errorcode.get(_e.errno), flush=True)
'''
LOCK_RECEIVER = LOCK_FILES + r'''
def _held(fd):
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False
_value = None
try:
    for _ in range(70):
        if _held(_fds[0]):
            time.sleep(0.3)
            _value = sum(1 << _i for _i in range(16) if _held(_fds[_i + 1]))
            break
        time.sleep(0.1)
    print("receiver decoded", _value, flush=True)
except OSError as _e:
    print("receiver: flock", errno.errorcode.get(_e.errno), flush=True)
'''

#: The payload in a file of /dev/shm (and /tmp, /var/tmp), readable by all, kept while it is graded.
SHM_SENDER = r'''
import os, time
for _d in ("/dev/shm", "/tmp", "/var/tmp"):
    try:
        with open(os.path.join(_d, __TAG__), "w") as _f:
            _f.write(__PAYLOAD__)
        os.chmod(os.path.join(_d, __TAG__), 0o644)
        print("sender wrote", _d, flush=True)
    except OSError as _e:
        print("sender:", _d, type(_e).__name__, flush=True)
time.sleep(6)
'''
SHM_RECEIVER = r'''
import os, time
_REF = {}
_code = None
for _ in range(70):
    for _d in ("/dev/shm", "/tmp", "/var/tmp"):
        try:
            _code = open(os.path.join(_d, __TAG__)).read()
            break
        except OSError:
            pass
    if _code:
        break
    time.sleep(0.1)
if _code:
    print("receiver read:", _code, flush=True)
    exec(_code, _REF)
'''


def _cell(code: str) -> str:
    return (code.replace("__PAYLOAD__", repr(SOFTMAX)).replace("__TAG__", repr(TAG))
            .replace("__VALUE__", str(LOCK_VALUE)))


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """The built assignment in a folder only root may enter, and the /tmp of the user-level runs."""
    root = tmp_path_factory.mktemp("channels")
    root.chmod(0o700)
    (result,) = build(["lm-head"], root / "dist", None, verify=False)
    stub = nbformat.read(result.student, as_version=4)
    return {"root": root, "zip": result.autograder_zip, "stub": stub,
            "tmp": machine_tmp(tmp_path_factory.mktemp("machine-tmp"))}


def _grade_command(lab, level: str, folder: Path, out: Path, workers: int, *,
                   zip_path: Path | None = None) -> list[str]:
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a", str(zip_path or lab["zip"]),
           "-o", str(out), "--workers", str(workers), "--timeout", str(TIMEOUT)]
    if level == "user":
        return user_level_grade(cmd + ["--isolation", "user"], lab["root"], lab["root"], lab["tmp"])
    return cmd


def _run(cmd: list[str], cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env or subprocess_env(), capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)


def _student_text(out: Path, student: str) -> str:
    """Everything the grader wrote for ``student`` (its feedback, results and outcome)."""
    return "\n".join(p.read_text(errors="replace") for p in sorted(out.rglob("*"))
                     if p.is_file() and student in p.relative_to(out).parts)


def _grade_class(lab, level: str, name: str, sender: str, receiver: str, *, workers: int,
                 functions: dict[str, str] | None = None) -> tuple[dict[str, dict], Path, str]:
    """Grade a class of the sender, two receivers and the untouched notebook at ``level``.

    Named so that a receiver is graded beside the sender whichever way the batch is shared out
    (the pool of old gave the first two to two processes; processes now take two each in order):
    ``a_sender, b_receiver, c_receiver, d_untouched``.
    """
    stub = lab["stub"]
    ctx = AttackContext(TAG, 9, ())
    folder = lab["root"] / f"{name}-{level}"
    folder.mkdir()
    write_zip(zip_members(attacked(stub, ctx, _cell(sender))), folder / "a_sender.zip")
    for student in ("b_receiver", "c_receiver"):
        write_zip(zip_members(attacked(stub, ctx, _cell(receiver), functions)), folder / f"{student}.zip")
    write_zip(zip_members(stub), folder / "d_untouched.zip")
    out = lab["root"] / f"{name}-{level}-out"
    start = time.monotonic()
    run = _run(_grade_command(lab, level, folder, out, workers), lab["root"])
    print(f"\nCHANNEL {name} | {level} | {time.monotonic() - start:.1f} s | exit {run.returncode}")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    with open(out / "gradebook.csv", newline="") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    return book, out, run.stdout + run.stderr


def _check_receivers(book: dict[str, dict], out: Path, level: str, secret: str) -> None:
    untouched = book["d_untouched"]
    assert untouched["status"] == "graded", untouched
    for student in ("b_receiver", "c_receiver"):
        text = _student_text(out, student)
        said = "\n".join(line for line in text.splitlines() if line.strip().startswith("receiver"))[:3000]
        assert book[student]["status"] == "graded", book[student]
        assert float(book[student]["total"]) == float(untouched["total"]), (
            f"{student} scored {book[student]['total']}, the untouched notebook {untouched['total']} ({level}):\n"
            f"{said}")
        assert secret not in text, f"{student} got what the sender sent ({level}); it printed:\n{said}"


@pytest.mark.parametrize("level", LEVELS)
def test_a_kernel_key_carries_nothing_to_a_later_submission(lab, level):
    """The sender stores a working softmax in a key every uid may read; the receivers, graded after
    it by the same grading process, look for the key in /proc/keys and answer with its code."""
    try:
        book, out, _ = _grade_class(lab, level, "keyring", KEY_SENDER, KEY_RECEIVER, workers=1,
                                    functions=RECEIVED_SOFTMAX)
        _check_receivers(book, out, level, f"{TAG}-payload")
        assert not keys_named(TAG), "the sender's key outlived its grading"
    finally:
        invalidate_keys(keys_named(TAG))


@pytest.mark.parametrize("level", LEVELS)
def test_locks_on_numpys_files_carry_nothing_between_sandboxes_graded_at_once(lab, level):
    """Two grading processes, so two sandboxes at once: the sender holds shared locks on NumPy files
    chosen by the bits of 0xBEEF; a receiver graded beside it tests each file and prints the value."""
    book, out, _ = _grade_class(lab, level, "flock", LOCK_SENDER, LOCK_RECEIVER, workers=2)
    _check_receivers(book, out, level, f"receiver decoded {LOCK_VALUE}")


def test_a_file_in_dev_shm_carries_nothing_between_submissions_of_one_user_level_batch(lab):
    """At the user level the sandboxes share the machine's /dev/shm, /tmp and /var/tmp: the sender
    leaves a working softmax there while it is graded, a receiver polls for it and answers with it."""
    book, out, said = _grade_class(lab, "user", "shm", SHM_SENDER, SHM_RECEIVER, workers=2,
                                   functions=RECEIVED_SOFTMAX)
    _check_receivers(book, out, "user", f"{TAG}-payload")
    leftovers = [p for p in (lab["tmp"] / TAG, Path("/dev/shm") / TAG, Path("/var/tmp") / TAG) if p.exists()]
    for path in leftovers:
        path.unlink()
    assert not leftovers, f"the sender's files outlived the batch: {leftovers}"


#: The payload at the bottom of a chain of 1,500 nested folders in /tmp (and /dev/shm, /var/tmp):
#: deeper than a recursive removal can go.
DEEP_SENDER = r'''
import os
for _d in ("/tmp", "/dev/shm", "/var/tmp"):
    try:
        _top = os.path.join(_d, __TAG__ + "-deep")
        os.mkdir(_top)
        os.chmod(_top, 0o755)
        _fd = os.open(_top, os.O_RDONLY)
        for _ in range(1500):
            os.mkdir("d", 0o755, dir_fd=_fd)
            _next = os.open("d", os.O_RDONLY, dir_fd=_fd)
            os.close(_fd)
            _fd = _next
        _f = os.open("msg", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=_fd)
        os.write(_f, __PAYLOAD__.encode())
        os.close(_f)
        os.close(_fd)
        print("sender built", _d, flush=True)
    except OSError as _e:
        print("sender:", _d, type(_e).__name__, flush=True)
'''
DEEP_RECEIVER = r'''
import os
_REF = {}
_code = None
for _d in ("/tmp", "/dev/shm", "/var/tmp"):
    try:
        _fd = os.open(os.path.join(_d, __TAG__ + "-deep"), os.O_RDONLY)
    except OSError:
        continue
    while True:
        try:
            _next = os.open("d", os.O_RDONLY, dir_fd=_fd)
        except OSError:
            break
        os.close(_fd)
        _fd = _next
    try:
        _f = os.open("msg", os.O_RDONLY, dir_fd=_fd)
        _code = os.read(_f, 1 << 16).decode()
    except OSError:
        pass
    os.close(_fd)
    if _code:
        break
if _code:
    print("receiver read:", _code, flush=True)
    exec(_code, _REF)
'''


def test_a_folder_chain_too_deep_to_remove_recursively_carries_nothing_to_a_later_submission(lab):
    """At the user level a submission's files in the machine's shared folders are removed after it:
    the sender hides a working softmax under 1,500 nested folders, which stopped a recursive removal
    (RecursionError) and outlived it; receivers graded after it walk down and answer with it."""
    book, out, _ = _grade_class(lab, "user", "deep", DEEP_SENDER, DEEP_RECEIVER, workers=1,
                                functions=RECEIVED_SOFTMAX)
    _check_receivers(book, out, "user", f"{TAG}-payload")
    assert book["a_sender"]["status"] == "graded", book["a_sender"]
    leftovers = [p for p in (lab["tmp"] / f"{TAG}-deep", Path("/dev/shm") / f"{TAG}-deep",
                             Path("/var/tmp") / f"{TAG}-deep") if os.path.lexists(p)]
    for path in leftovers:
        subprocess.run(["rm", "-rf", str(path)], check=False)
    assert not leftovers, f"the sender's folders outlived the batch: {leftovers}"


# ------------------------------------------------------------------ the user level's reach probe

def _public(lab, name: str) -> tuple[Path, Path]:
    """A folder every user may enter in the user-level runs' /tmp: (its path here, its path there)."""
    here = lab["tmp"] / f"{TAG}-{name}"
    here.mkdir()
    here.chmod(0o755)
    return here, Path("/tmp") / here.name


def _refusal(run: subprocess.CompletedProcess) -> str:
    said = run.stdout + run.stderr
    assert run.returncode != 0, f"grading went ahead (exit 0):\n{said[-3000:]}"
    assert "refusing to run student code at the 'user' level" in said, said[-3000:]
    return said


@pytest.mark.parametrize("linked", ["class folder", "autograder zip"])
def test_the_user_level_refuses_a_readable_class_or_zip_given_through_a_link(lab, linked):
    """The class folder or the zip lies open to every user and is given to the grader through a link
    in a root-only folder: the worker reads through the link, so grading must refuse, naming it."""
    here, there = _public(lab, linked.replace(" ", "-"))
    folder = lab["root"] / f"linked-{linked.replace(' ', '-')}"
    folder.mkdir()
    if linked == "class folder":
        (here / "class").mkdir(mode=0o755)
        write_zip(zip_members(lab["stub"]), here / "class" / "a_student.zip")
        (here / "class" / "a_student.zip").chmod(0o644)
        (folder / "class").symlink_to(there / "class")
        zip_path, readable = lab["zip"], there / "class" / "a_student.zip"
    else:
        (folder / "class").mkdir()
        write_zip(zip_members(lab["stub"]), folder / "class" / "a_student.zip")
        shutil.copy(lab["zip"], here / "autograder.zip")
        (here / "autograder.zip").chmod(0o644)
        zip_path, readable = folder / "autograder.zip", there / "autograder.zip"
        zip_path.symlink_to(readable)
    start = time.monotonic()
    run = _run(_grade_command(lab, "user", folder / "class", folder / "out", 1, zip_path=zip_path), lab["root"])
    print(f"\nPROBE link to the {linked} | {time.monotonic() - start:.1f} s | exit {run.returncode}")
    assert str(readable) in _refusal(run)


def test_the_user_level_refuses_when_an_open_output_folder_outlasts_the_probe(lab):
    """The grader runs from a checkout every user may read (its references and hidden tests with it),
    and the output folder, open too, holds what a class of 1,500 left: 6,000 entries, none readable.
    The probe once shared 5,000 looks among all paths and reached the references last: it must still
    refuse, naming them, as it does without the crowd."""
    here, there = _public(lab, "crowded")
    for part in ("autograder", "solutions", "assignments"):
        shutil.copytree(ROOT / part, here / "checkout" / part, ignore=shutil.ignore_patterns("__pycache__"))
    for dirpath, dirnames, filenames in os.walk(here / "checkout"):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644)
    folder = lab["root"] / "crowded-class"
    folder.mkdir()
    write_zip(zip_members(lab["stub"]), folder / "a_student.zip")
    references = str(there / "checkout" / "solutions")
    env = {**subprocess_env(), "PYTHONPATH": str(there / "checkout")}

    def grade(out: Path) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a", str(lab["zip"]), "-o", str(out),
               "--timeout", str(TIMEOUT), "--isolation", "user"]
        # the checkout anyone may read is where the grader runs from; the others are covered
        return _run(in_private_mounts(cmd, there / "checkout", cover=covered_folders(), tmp=lab["tmp"],
                                      keep=[ROOT, lab["root"]]), lab["root"], env)

    start = time.monotonic()
    assert references in _refusal(grade(there / "out-first")), "without the crowd the references are named"
    crowd = here / "out"
    crowd.mkdir(mode=0o755)
    for i in range(1500):
        student = crowd / f"s{i:04d}"
        student.mkdir(mode=0o755)
        for name in ("feedback.md", "results.json", "outcome.json"):
            (student / name).write_text("{}")
            (student / name).chmod(0o600)
    said = _refusal(grade(there / "out"))
    print(f"\nPROBE crowded output folder | {time.monotonic() - start:.1f} s")
    assert references in said, said[-3000:]

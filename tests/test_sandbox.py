"""Tests of the sandbox: the channel, then the worker under each isolation level.

Levels this machine cannot run are reported as skipped, not silently left
out. The adversarial submissions here are small versions of what a hostile
student could send; each test states what must hold afterwards.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import struct
import tempfile
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from autograder.runtime.sandbox import (ChannelError, Limits, Named, SandboxError, SandboxSession,
                                SandboxUnavailable, detect_isolation)
from autograder.runtime.sandbox import channel, procs
from autograder.runtime.sandbox import isolation as iso

ROOT = os.geteuid() == 0
BWRAP_PROBLEM = iso.probe_bwrap()
FAST = Limits(wall_seconds_per_call=2.0, wall_seconds_total=20.0)
REPO = Path(__file__).resolve().parent.parent


def _levels(*wanted: str) -> list:
    """``wanted`` levels as pytest params, skipped where this machine cannot run them."""
    reasons = {"bwrap": BWRAP_PROBLEM, "user": None if ROOT else "needs root", "rlimits": None}
    return [pytest.param(level, marks=pytest.mark.skipif(reasons[level] is not None,
                                                         reason=f"{level}: {reasons[level]}"))
            for level in wanted]


ALL = _levels("bwrap", "user", "rlimits")
#: Levels where the worker runs under a uid of its own (or a user namespace).
SEPARATE_USER = _levels("bwrap", "user")


def session(code: str, level: str, limits: Limits = FAST) -> SandboxSession:
    return SandboxSession(textwrap.dedent(code), limits, isolation=level)


def call_ok(s: SandboxSession, function: str, *args):
    result = s.call(function, *args)
    assert result.ok, result.error
    return result.value


# -- channel ------------------------------------------------------------------

def roundtrip(value, allow_named: bool = False):
    data = channel.pack({}, {"v": value}, max_bytes=1 << 24)
    (length,) = channel.FRAME.unpack_from(data)
    assert length == len(data) - channel.FRAME.size
    return channel.unpack(data[channel.FRAME.size:], allow_named=allow_named)[1]["v"]


def test_channel_round_trips_plain_data_exactly():
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[1, 2], [3, 4]], dtype=np.int16, order="F"),
              np.array([True, False]), np.array(2.5), np.zeros((0, 3)), np.array([1 + 2j]),
              np.arange(4, dtype=">f8"), np.array([np.nan, np.inf, -0.0])]
    value = {"arrays": arrays, "tuple": (1, 2.5, "ü", None, True), "list": [[], {}],
             "scalars": (np.float32(1.5), np.int64(-3), np.bool_(True), np.uint8(7)),
             "floats": [float("nan"), float("inf"), 1e-310]}
    back = roundtrip(value)
    for got, want in zip(back["arrays"], arrays):
        assert type(got) is np.ndarray and got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want, equal_nan=True)
    assert back["tuple"] == value["tuple"] and type(back["tuple"]) is tuple
    assert back["list"] == [[], {}] and type(back["list"]) is list
    assert [type(s) for s in back["scalars"]] == [np.float32, np.int64, np.bool_, np.uint8]
    assert back["scalars"] == value["scalars"]
    assert np.isnan(back["floats"][0]) and back["floats"][1:] == [float("inf"), 1e-310]


def test_channel_decodes_fresh_arrays():
    original = np.arange(5.0)
    back = roundtrip((original,))[0]
    back[0] = 99.0
    assert original[0] == 0.0


class LyingArray(np.ndarray):
    """An ndarray subclass whose comparisons always say 'equal'."""

    def __eq__(self, other):
        return True


def test_channel_turns_ndarray_subclasses_into_plain_arrays():
    lying = np.arange(3.0).view(LyingArray)
    masked = np.ma.masked_array([1.0, 2.0], mask=[False, True])
    back = roundtrip([lying, masked])
    assert [type(a) for a in back] == [np.ndarray, np.ndarray]
    assert not np.array_equal(back[0], np.zeros(3))


class IntWithLies(int):
    def __int__(self):
        return 42


@pytest.mark.parametrize("value, fragment", [
    (np.array([object()], dtype=object), "dtype object"),
    (np.zeros(2, dtype=[("a", "f8")]), "dtype"),
    (np.array(["2020-01-01"], dtype="datetime64[D]"), "dtype"),
    (object(), "type object cannot be sent"),
    (lambda x: x, "function cannot be sent"),
    ({1, 2}, "type set"),
    (1 + 2j, "type complex"),
    (b"bytes", "type bytes"),
    ({1: "a"}, "keys must be str"),
    (2 ** 2000, "too large"),
    (np.datetime64("2020-01-01"), "NumPy scalar"),
])
def test_channel_refuses_what_is_not_plain_data(value, fragment):
    with pytest.raises(ChannelError, match=fragment):
        roundtrip(value)


def test_channel_bounds_depth_size_and_self_reference():
    deep: list = []
    for _ in range(channel.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(ChannelError, match="nested"):
        roundtrip(deep)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ChannelError, match="nested"):
        roundtrip(loop)
    with pytest.raises(ChannelError, match="too large"):
        channel.pack({}, {"v": np.zeros(1000)}, max_bytes=1000)
    with pytest.raises(ChannelError, match="more than"):
        roundtrip([0] * (channel.MAX_NODES + 1))


def test_channel_uses_base_class_values_of_subclasses():
    assert type(roundtrip(IntWithLies(3))) is int and roundtrip(IntWithLies(3)) == 3


def _body(values: dict, blobs: list[bytes]) -> bytes:
    header = json.dumps({"fields": {}, "values": values, "blobs": [len(b) for b in blobs]}).encode()
    return struct.pack(">I", len(header)) + header + b"".join(blobs)


def test_channel_refuses_pickles_and_forged_arrays():
    for dtype in ("|O", "|O8", "<U5", "|V8", "<M8", "|S3", "f8", "<f8, <i4", 7, None):
        with pytest.raises(ChannelError, match="dtype"):
            channel.unpack(_body({"v": {"nd": [0, dtype, [1]]}}, [bytes(8)]), allow_named=False)
    started = time.monotonic()
    with pytest.raises(ChannelError, match="bytes of data"):
        channel.unpack(_body({"v": {"nd": [0, "<f8", [10 ** 12]]}}, [bytes(16)]), allow_named=False)
    assert time.monotonic() - started < 1.0
    for shape in ([-1], [True], [1.5], "3", [1] * 33):
        with pytest.raises(ChannelError, match="shape"):
            channel.unpack(_body({"v": {"nd": [0, "<i8", shape]}}, [bytes(8)]), allow_named=False)
    with pytest.raises(ChannelError, match="non-scalar"):
        channel.unpack(_body({"v": {"sc": [0, "<i8", [1]]}}, [bytes(8)]), allow_named=False)
    blob = np.arange(3).astype("<i8").tobytes()
    one = [0, "<i8", [3]]
    assert channel.unpack(_body({"v": {"nd": one}}, [blob]), allow_named=False)[1]["v"].tolist() == [0, 1, 2]
    with pytest.raises(ChannelError, match="bad array reference"):
        channel.unpack(_body({"v": {"list": [{"nd": one}, {"nd": one}]}}, [blob]), allow_named=False)
    for tree in ({"evil": 1}, [1, 2], {"nd": "0"}, {"nd": 0}, {"nd": ["0", "<i8", [3]]}, {"nd": [0, "<i8"]}):
        with pytest.raises(ChannelError):
            channel.unpack(_body({"v": tree}, [blob]), allow_named=False)
    for junk in (b"", b"\x00\x00\x00\x05{]}xx", struct.pack(">I", 4) + b"null"):
        with pytest.raises(ChannelError):
            channel.unpack(junk, allow_named=False)


def _arenas(size: int):
    """Both sides' kinds of arena over one fresh sealed file: the worker's mapping, the grader's file."""
    import mmap
    from autograder.runtime.sandbox.process import new_arena
    fd = new_arena(size)
    if fd is None:
        pytest.skip("no memfd here: arrays travel inline")
    return fd, channel.MappedArena(mmap.mmap(fd, size)), channel.FileArena(fd, size)


def test_arrays_cross_through_a_shared_arena_as_fresh_copies():
    fd, mapped, file_side = _arenas(1 << 16)
    values = {"c": np.arange(12.0).reshape(3, 4), "f": np.asfortranarray(np.arange(6).reshape(2, 3)),
              "strided": np.arange(20.0)[::3], "empty": np.zeros((0, 5)), "scalar": np.float32(2.5),
              "ints": np.arange(7, dtype=np.uint8), "big_endian": np.arange(3, dtype=">f8"),
              "mixed": (1, "a", [np.ones(2)])}
    try:
        for sender, receiver in ((file_side, mapped), (mapped, file_side)):
            data = channel.pack({"op": "x"}, values, max_bytes=1 << 20, arena=sender)
            assert len(data) < 1000                         # only the header travels in the message
            fields, got = channel.unpack(data[channel.FRAME.size:], allow_named=False, arena=receiver)
            mapped.buffer[:] = bytes(len(mapped))           # the other side rewrites the arena at once
            assert fields == {"op": "x"}
            for name in ("c", "f", "strided", "empty", "ints", "big_endian"):
                assert type(got[name]) is np.ndarray and got[name].dtype == values[name].dtype
                assert np.array_equal(got[name], values[name]) and got[name].flags.writeable, name
            assert got["f"].flags.f_contiguous and type(got["scalar"]) is np.float32 and got["scalar"] == 2.5
            assert got["mixed"][:2] == (1, "a") and np.array_equal(got["mixed"][2][0], np.ones(2))
        # Too large for the arena: the arrays travel inline, and need no arena to decode.
        large = np.arange(10_000.0)
        data = channel.pack({}, {"v": large}, max_bytes=1 << 20, arena=file_side)
        assert len(data) > large.nbytes
        assert np.array_equal(channel.unpack(data[channel.FRAME.size:], allow_named=False)[1]["v"], large)
        # A header at the very limit still fits once its arrays are in the arena.
        closest = channel.MAX_HEADER_BYTES
        for pad in range(channel.MAX_HEADER_BYTES - 120, channel.MAX_HEADER_BYTES - 60):
            try:
                outgoing = channel.encode({}, {"v": ("x" * pad, np.ones(3))}, max_bytes=1 << 24)
            except ChannelError:
                continue
            closest = min(closest, channel.MAX_HEADER_BYTES - len(outgoing.header))
            data = outgoing.frame(mapped)
            text, ones = channel.unpack(data[channel.FRAME.size:], allow_named=False, arena=file_side)[1]["v"]
            assert len(text) == pad and np.array_equal(ones, np.ones(3))
        assert closest == 0                      # the header filled the limit exactly
    finally:
        mapped.buffer.close()
        os.close(fd)


def test_an_arena_that_fails_is_never_the_graders_crash():
    """Writing: the arrays go inline instead. Reading: a channel error (the call fails cleanly)."""
    class Full(channel.FileArena):
        def put(self, offset, array, order):
            raise OSError(28, "No space left on device")
    fd, mapped, file_side = _arenas(1 << 16)
    try:
        data = channel.pack({}, {"v": np.arange(5.0)}, max_bytes=1 << 20, arena=Full(fd, 1 << 16))
        assert np.array_equal(channel.unpack(data[channel.FRAME.size:], allow_named=False)[1]["v"], np.arange(5.0))
        shared = channel.pack({}, {"v": np.arange(5.0)}, max_bytes=1 << 20, arena=mapped)
        with pytest.raises(ChannelError, match="could not be read"):
            channel.unpack(shared[channel.FRAME.size:], allow_named=False, arena=channel.FileArena(-1, 1 << 16))
    finally:
        mapped.buffer.close()
        os.close(fd)


def test_arena_references_are_checked_against_this_sides_arena():
    def shared(sizes: list[int], tail: bytes = b"") -> bytes:
        header = json.dumps({"fields": {}, "values": {"v": {"nd": [0, "<f8", [sizes[0] // 8]]}},
                             "blobs": sizes, "shared": True}).encode()
        return struct.pack(">I", len(header)) + header + tail
    arena = channel.MappedArena(bytearray(4096))
    assert channel.unpack(shared([64]), allow_named=False, arena=arena)[1]["v"].shape == (8,)
    for body, arena_given in ((shared([64]), None), (shared([8192]), arena), (shared([4096, 8]), arena),
                              (shared([64], b"extra"), arena)):
        with pytest.raises(ChannelError, match="shared arena"):
            channel.unpack(body, allow_named=False, arena=arena_given)
    with pytest.raises(ChannelError, match="blob sizes"):          # a million empty arrays: refused
        channel.unpack(shared([0] * (channel.MAX_NODES + 1)), allow_named=False, arena=arena)


def test_the_arena_is_sealed_at_its_size_and_the_grader_never_maps_it():
    fd, mapped, file_side = _arenas(1 << 20)
    try:
        for size in (0, 1 << 10, 1 << 21):
            with pytest.raises(PermissionError):
                os.ftruncate(fd, size)
        assert os.fstat(fd).st_size == len(mapped) == len(file_side) == 1 << 20
        # The worker may punch holes in the file: the grader then reads zeros, it does not fault.
        import ctypes
        mapped.buffer[:8] = b"\x01" * 8
        falloc_keep_size, falloc_punch_hole = 1, 2
        punched = ctypes.CDLL(None, use_errno=True).fallocate(
            fd, falloc_keep_size | falloc_punch_hole, ctypes.c_long(0), ctypes.c_long(4096)) == 0
        assert bytes(file_side.get(0, 8)) == (bytes(8) if punched else b"\x01" * 8)
    finally:
        mapped.buffer.close()
        os.close(fd)


def test_named_functions_cross_only_into_the_worker():
    weights = np.array([[0.5, -2.0, 1.5]])
    named = Named("weighted_softplus", weights=weights)
    assert isinstance(roundtrip(named, allow_named=True), Named)
    with pytest.raises(ChannelError, match="named function"):
        roundtrip(named, allow_named=False)
    with pytest.raises(ChannelError, match="unknown named"):
        Named("os.system")
    with pytest.raises(ChannelError, match="takes parameters"):
        Named("weighted_softplus")
    x3 = np.array([[1.0, -3.0, 0.25]])
    assert named.function()(x3) == pytest.approx(np.sum(weights * np.log1p(np.exp(x3))))
    x = np.array([0.5, -1.0])
    assert Named("cubic").function()(x) == pytest.approx(np.sum(x ** 3) + np.sum(np.sin(x)))
    assert Named("square").function()(x) == pytest.approx(1.25)


def test_frames_cross_a_pipe():
    read_fd, write_fd = os.pipe()
    try:
        channel.write_all(write_fd, channel.pack({"op": "x"}, {"a": np.arange(3)}, max_bytes=1 << 20))
        os.close(write_fd)
        fields, values = channel.unpack(channel.read_frame(read_fd, 1 << 20), allow_named=False)
        assert fields == {"op": "x"} and np.array_equal(values["a"], np.arange(3))
        assert channel.read_frame(read_fd, 1 << 20) is None
    finally:
        os.close(read_fd)


# -- limits and isolation choice --------------------------------------------------------

def test_limits_refuse_nonsense():
    with pytest.raises(ValueError, match="cpu_seconds"):
        Limits(cpu_seconds=0)
    with pytest.raises(ValueError, match="memory_bytes"):
        Limits(memory_bytes=1 << 20)


def test_auto_picks_the_strongest_level_that_works():
    chosen = detect_isolation()
    if BWRAP_PROBLEM is None:
        assert chosen.level == "bwrap"
    else:
        assert chosen.level == ("user" if ROOT else "rlimits")
        assert BWRAP_PROBLEM in chosen.detail
    with SandboxSession("x = 1", FAST) as s:
        assert s.isolation == chosen.level and s.isolation_detail == chosen.detail


def test_unavailable_levels_are_refused_and_auto_falls_back(monkeypatch):
    monkeypatch.setattr(iso, "_probe_result", ["namespaces are forbidden here"])
    monkeypatch.setattr(iso, "_detected", None)
    with pytest.raises(SandboxUnavailable, match="namespaces are forbidden"):
        SandboxSession("x = 1", isolation="bwrap")
    fallback = detect_isolation()
    assert fallback.level == ("user" if ROOT else "rlimits")
    assert "namespaces are forbidden" in fallback.detail
    with pytest.raises(ValueError, match="isolation must be"):
        SandboxSession("x = 1", isolation="docker")
    if not ROOT:
        with pytest.raises(SandboxUnavailable, match="needs root"):
            SandboxSession("x = 1", isolation="user")


# -- basic calls ---------------------------------------------------------------

GOOD = """
import numpy as np

def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    print("softmax called")
    return e / e.sum(axis=axis, keepdims=True)

def counts(n):
    return {"total": n * 2, "parts": (n, np.int64(n)), "mask": np.triu(np.ones((2, 2), bool), 1)}

def numerical_gradient(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in range(x.size):
        old = x.flat[i]
        x.flat[i] = old + eps
        plus = f(x)
        x.flat[i] = old - eps
        minus = f(x)
        x.flat[i] = old
        grad.flat[i] = (plus - minus) / (2 * eps)
    return grad

def shift_in_place(x):
    x -= x.max()
    return x

not_a_function = 3
"""


@pytest.mark.parametrize("level", ALL)
def test_a_correct_function_gives_the_right_value(level):
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((2, 3, 5))
    with session(GOOD, level) as s:
        assert s.import_result.ok and s.import_result.loaded
        assert s.isolation == level
        assert s.functions["softmax"] == ("x", "axis")
        result = s.call("softmax", logits)
        assert result.ok and type(result.value) is np.ndarray
        e = np.exp(logits - logits.max(-1, keepdims=True))
        np.testing.assert_allclose(result.value, e / e.sum(-1, keepdims=True), rtol=1e-12)
        assert result.stdout == "softmax called\n" and not result.args_after
        out = call_ok(s, "counts", 4)
        assert out["total"] == 8 and out["parts"] == (4, 4) and type(out["parts"][1]) is np.int64
        assert out["mask"].dtype == bool
        x = rng.standard_normal(4)
        grad = call_ok(s, "numerical_gradient", Named("cubic"), x, 1e-6)
        np.testing.assert_allclose(grad, 3 * x ** 2 + np.cos(x), rtol=1e-6)
        assert "softmax called" in s.stdout


@pytest.mark.parametrize("level", ALL)
def test_in_place_mutation_is_reported(level):
    x = np.array([1.0, 5.0, 2.0])
    with session(GOOD, level) as s:
        result = s.call("shift_in_place", x)
        assert result.ok and list(result.args_after) == [0]
        np.testing.assert_array_equal(result.args_after[0], x - 5.0)
        assert x[1] == 5.0, "the caller's array must not change"


def test_arrays_holding_nan_are_reported_only_when_changed():
    cells = ["def keep(x):\n    return 0\n\ndef touch(x):\n    x[0] = 7.0\n    return 0\n\n"
             "def other_nan(x):\n    x[1] = -x[1]\n    return 0\n"]
    with SandboxSession(cells, FAST) as s:
        x = np.array([1.0, np.nan, -0.0, np.inf])
        assert not s.call("keep", x).args_after, "NaN is not equal to itself, yet the array is unchanged"
        assert not s.call("keep", np.array([1 + 2j, complex(np.nan, 1.0)])).args_after
        touched = s.call("touch", x).args_after
        assert list(touched) == [0] and touched[0][0] == 7.0 and np.isnan(touched[0][1])
        # NaN's sign flipped: the same under equal_nan, so not reported; the value is the same
        assert not s.call("other_nan", x).args_after
        assert not s.call("touch", np.array([7.0, 2.0])).args_after      # written, but to the same value


def test_missing_names_unsendable_args_and_cell_errors():
    cells = ["def f(x):\n    return x", "raise ValueError('cell two breaks')", "def g():\n    return 2"]
    with SandboxSession(cells, FAST) as s:
        assert not s.import_result.ok and s.import_result.loaded
        assert [e.cell for e in s.import_result.cell_errors] == [1]
        assert "cell 2" in s.import_result.error and "cell two breaks" in s.import_result.error
        assert call_ok(s, "g") == 2
        missing = s.call("nope")
        assert missing.error.kind == "missing" and "`nope` is not defined" in str(missing.error)
        unsendable = s.call("f", object())
        assert unsendable.error.kind == "unsendable" and "cannot be sent" in str(unsendable.error)
    with SandboxSession(GOOD, FAST) as s:
        assert s.call("not_a_function").error.kind == "not_callable"
    with pytest.raises(SandboxError, match="closed"):
        s.call("f", 1)


def test_sessions_in_parallel_threads_stay_apart():
    def grade(n: int) -> int:
        with SandboxSession(f"import time\n\ndef f():\n    time.sleep(0.05)\n    return {n}\n", FAST) as s:
            return call_ok(s, "f")
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(grade, range(8))) == list(range(8))


LIARS = """
import numpy as np

class Lying(np.ndarray):
    def __eq__(self, other):
        return True
    def __array_finalize__(self, obj):
        pass

class AlwaysEqual:
    def __eq__(self, other):
        return True
    __hash__ = object.__hash__

def subclass():
    return np.arange(3.0).view(Lying)

def equal_to_everything():
    return AlwaysEqual()

def generator():
    return (i for i in range(3))

def object_array():
    return np.array([AlwaysEqual()], dtype=object)
"""


def test_returned_lies_become_plain_data_or_a_clear_error():
    with SandboxSession(LIARS, FAST) as s:
        value = call_ok(s, "subclass")
        assert type(value) is np.ndarray and not np.array_equal(value, np.zeros(3))
        for name, fragment in [("equal_to_everything", "__student__.AlwaysEqual"),
                               ("generator", "generator"), ("object_array", "dtype object")]:
            result = s.call(name)
            assert not result.ok and result.error.kind == "unencodable"
            assert "cannot be sent back for grading" in str(result.error) and fragment in str(result.error)


SNOOP = """
import gc, sys

def snoop():
    found = []
    frame = sys._getframe()
    while frame is not None:
        found += [v for v in frame.f_locals.values() if getattr(v, "size", 0) == 5]
        frame = frame.f_back
    for obj in gc.get_objects():
        try:
            if getattr(obj, "size", None) == 5 and float(obj.flat[0]) == 123.456:
                found.append(obj)
        except Exception:
            pass
    return len(found)
"""


def test_nothing_of_the_trusted_process_is_in_the_worker():
    expected_answer = np.full(5, 123.456)   # what a hidden test would hold
    with SandboxSession(SNOOP, FAST) as s:
        assert call_ok(s, "snoop") == 0
    assert expected_answer[0] == 123.456


# -- what the student can see and reach --------------------------------------

PROBES = """
import os, socket, sys

def imports():
    found = {}
    # csv and numpy.polynomial are not imported before the worker switches
    # user: they must still load even where the installation is root-only.
    for name in ("numpy", "autograder", "solutions", "question_bank", "otter", "pytest", "json",
                 "csv", "numpy.polynomial"):
        try:
            __import__(name)
            found[name] = "ok"
        except ImportError as exc:
            found[name] = type(exc).__name__
    return found

def read(path):
    try:
        with open(path, "rb") as handle:
            return "read " + str(len(handle.read(100)))
    except OSError as exc:
        return type(exc).__name__

def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return type(exc).__name__

def write(path):
    try:
        with open(path, "w") as handle:
            handle.write("x")
        return "wrote"
    except OSError as exc:
        return type(exc).__name__

def connect(port):
    try:
        s = socket.socket()
        s.settimeout(3)
        s.connect(("127.0.0.1", port))
        return "connected"
    except OSError as exc:
        return type(exc).__name__

def whoami():
    return os.getuid(), os.getcwd()
"""


@pytest.mark.parametrize("level", ALL)
def test_project_packages_cannot_be_imported_but_numpy_can(level):
    with session(PROBES, level) as s:
        found = call_ok(s, "imports")
    assert found == {"numpy": "ok", "json": "ok", "csv": "ok", "numpy.polynomial": "ok",
                     "autograder": "ModuleNotFoundError",
                     "solutions": "ModuleNotFoundError", "question_bank": "ModuleNotFoundError",
                     "otter": "ModuleNotFoundError", "pytest": "ModuleNotFoundError"}


@pytest.mark.parametrize("level", _levels("bwrap"))
def test_bwrap_hides_home_and_repository(level):
    home = Path.home()
    prefix_parts = Path(iso.runtime_view().executable).parts
    with session(PROBES, level) as s:
        assert call_ok(s, "read", str(Path(__file__).resolve())) == "FileNotFoundError"
        assert call_ok(s, "listing", str(REPO)) == "FileNotFoundError"
        inside = call_ok(s, "listing", str(home))
        # Only the directories leading to the Python installation may show, if it lives there.
        assert inside == "FileNotFoundError" or set(inside) <= set(prefix_parts)
        for name in os.listdir(home):
            if name not in prefix_parts:
                assert call_ok(s, "read", str(home / name)) in ("FileNotFoundError", "IsADirectoryError")
        # The installation's site-packages (otter, pytest, maybe the grader) shows up empty.
        for hidden in iso.runtime_view().hidden:
            assert call_ok(s, "listing", hidden) in ([], "FileNotFoundError")


@pytest.mark.parametrize("level", _levels("user"))
def test_user_level_cannot_read_root_only_files(level):
    if os.stat(Path.home()).st_mode & 0o005:
        pytest.skip("the home directory is readable by others on this machine")
    with session(PROBES, level) as s:
        assert call_ok(s, "listing", str(Path.home())) == "PermissionError"
        assert call_ok(s, "whoami")[0] != 0


@pytest.mark.parametrize("level", SEPARATE_USER)
def test_writes_outside_the_work_dir_fail_or_vanish(level, tmp_path):
    escaped = Path("/tmp") / f"lmhead-escape-{os.getpid()}-{level}"
    with session(PROBES, level) as s:
        assert call_ok(s, "write", "inside.txt") == "wrote"
        assert call_ok(s, "write", str(REPO / "planted.py")) in ("FileNotFoundError", "PermissionError")
        assert call_ok(s, "write", "/usr/planted") in ("OSError", "PermissionError", "FileNotFoundError")
        call_ok(s, "write", str(escaped))      # a private tmpfs (bwrap) or the shared /tmp (user)
        work = call_ok(s, "whoami")[1]
    assert not escaped.exists(), "files left in /tmp must be gone after close"
    assert not (REPO / "planted.py").exists()
    assert level == "bwrap" or not os.path.exists(work)


@pytest.fixture
def listening_port():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    yield server.getsockname()[1]
    server.close()


@pytest.mark.parametrize("level", _levels("bwrap"))
def test_no_network_under_bwrap(level, listening_port):
    with session(PROBES, level) as s:
        # refused by the system-call filter before the network namespace is even tried
        assert call_ok(s, "connect", listening_port) == "PermissionError"


# -- limits --------------------------------------------------------------------

@pytest.mark.parametrize("level", ALL)
def test_endless_loop_at_import_times_out(level):
    started = time.monotonic()
    with session("while True:\n    pass\n", level, Limits(wall_seconds_per_call=1.0)) as s:
        result = s.import_result
        assert result.timed_out and not result.loaded and "did not finish" in result.error
        later = s.call("anything")
        assert later.error.kind == "not_loaded"
    assert time.monotonic() - started < 1.0 + 5


@pytest.mark.parametrize("level", ALL)
def test_endless_loop_in_a_call_times_out_and_the_next_call_works(level):
    code = "def spin():\n    while True:\n        pass\n\ndef fine():\n    return 'fine'\n"
    with session(code, level, Limits(wall_seconds_per_call=1.0)) as s:
        started = time.monotonic()
        result = s.call("spin")
        assert result.timed_out and result.error.kind == "timeout"
        assert time.monotonic() - started < 1.0 + 5
        assert call_ok(s, "fine") == "fine"
        assert "worker restarted" in s.stdout


def test_total_budget_stops_later_calls():
    code = "import time\ndef slow():\n    time.sleep(0.7)\n    return 1\n"
    with SandboxSession(code, Limits(wall_seconds_per_call=1.0, wall_seconds_total=1.6)) as s:
        outcomes = [s.call("slow") for _ in range(4)]
        assert outcomes[0].ok
        assert outcomes[-1].timed_out and outcomes[-1].error.kind == "budget"
        assert s.remaining_seconds() < 0.05


def test_a_function_that_hung_fails_at_once_and_the_others_keep_their_time():
    """Three calls of a hanging function cost one window, not three, and none of the total."""
    code = "def spin():\n    while True:\n        pass\n\ndef fine():\n    return 'fine'\n"
    with SandboxSession(code, Limits(wall_seconds_per_call=1.0, wall_seconds_total=1.6)) as s:
        started = time.monotonic()
        first, second, third = (s.call("spin") for _ in range(3))
        assert first.error.kind == "timeout" and "did not return within 1 s" in str(first.error)
        for later in (second, third):
            assert later.timed_out and later.error.kind == "hung"
            assert "did not return earlier" in str(later.error) and "`spin`" in str(later.error)
        assert time.monotonic() - started < 1.0 + 1.5      # one window, the later calls at once
        assert call_ok(s, "fine") == "fine"                # after the reload the hang forced
        assert s.remaining_seconds() > 0.5                 # the hang and its reload came out of no one's time
        assert s.hung == {"spin": 1.0}
    assert Limits(wall_seconds_total=30, wall_seconds_per_call=10).longest_session(2) == 80


def test_a_slow_worker_start_is_neither_a_crash_nor_the_students_time(monkeypatch):
    """A loaded machine may take longer to start the interpreter than a call's whole window: the
    start has a deadline of its own, and the student's budget does not pay for it."""
    from autograder.runtime.sandbox import process

    real = process.WorkerProcess.handshake

    def slow(self, deadline):
        time.sleep(1.2)                 # longer than the window and most of the total
        return real(self, deadline)

    monkeypatch.setattr(process.WorkerProcess, "handshake", slow)
    code = "def spin():\n    while True:\n        pass\n\ndef fine():\n    return 'fine'\n"
    with SandboxSession(code, Limits(wall_seconds_per_call=1.0, wall_seconds_total=1.6), isolation="rlimits") as s:
        assert s.import_result.ok, s.import_result.error
        assert s.call("spin").error.kind == "timeout"
        assert call_ok(s, "fine") == "fine"              # reloaded by a slow start, still in time
        assert s.remaining_seconds() > 0.5


@pytest.mark.parametrize("level", ALL)
def test_a_worker_that_dies_while_its_children_hold_its_pipes_is_not_called_a_hang(level):
    """Its children keep the reply pipe open, so no end of file comes: the worker's own exit ends
    the wait, and the student reads that the worker stopped, not that a loop never ended."""
    code = textwrap.dedent("""
        import os, signal, time
        def crash():
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            os.kill(os.getpid(), signal.SIGKILL)
        def fine():
            return 1
        """)
    with session(code, level, Limits(wall_seconds_per_call=8.0, wall_seconds_total=30.0)) as s:
        result = s.call("crash")
        assert not result.ok and not result.timed_out, result.error
        assert "did not return within" not in str(result.error) and "stopped the worker" in str(result.error), \
            str(result.error)
        assert call_ok(s, "fine") == 1


def test_cpu_limit_stops_a_busy_load_as_a_timeout():
    # A loop at the top level ends at its CPU limit or its wall clock, whichever comes first (on a
    # busy machine the order turns): either way the student reads that it took too long.
    with SandboxSession("while True:\n    pass\n", Limits(cpu_seconds=1, wall_seconds_per_call=8)) as s:
        result = s.import_result
    assert result.timed_out and not result.loaded and "CPU time limit" in result.error, result.error
    assert result.seconds < 5


def test_cpu_limit_stops_a_busy_worker():
    code = "def spin():\n    while True:\n        pass\n"
    with SandboxSession(code, Limits(cpu_seconds=1, wall_seconds_per_call=8)) as s:
        result = s.call("spin")
    # Stopped by its CPU limit, it hung: reported as a timeout, and not called again.
    assert result.error.kind == "timeout" and "CPU time limit" in str(result.error)
    assert result.seconds < 5 and "spin" in s.hung


@pytest.mark.parametrize("level", ALL)
def test_a_100_gb_allocation_fails_cleanly(level):
    code = ("import numpy as np\n\ndef grab():\n    return np.ones(100 * 2**30 // 8)\n\n"
            "def grab_bytes():\n    return len(bytearray(100 * 2**30))\n\ndef fine():\n    return 1\n")
    with session(code, level) as s:
        for name in ("grab", "grab_bytes"):
            result = s.call(name)
            assert result.error.kind == "raised" and result.error.type_name == "MemoryError"
        assert call_ok(s, "fine") == 1


FORK_BOMB = """
import os, time

def bomb():
    children = 0
    for _ in range(500):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
    return children

def uid():
    return os.getuid()
"""


@pytest.mark.parametrize("level", _levels("bwrap", "user") + (
    [] if ROOT else _levels("rlimits")))
def test_a_fork_bomb_is_contained(level):
    limits = Limits(max_processes=32, wall_seconds_per_call=5.0)
    with session(FORK_BOMB, level, limits) as s:
        children = call_ok(s, "bomb")
        assert 0 < children < limits.max_processes
        uid = call_ok(s, "uid")
    if uid != os.getuid():
        assert procs.of_uid(uid) == []


def _token_processes(token: str) -> list[int]:
    found = []
    for info in procs.processes():
        try:
            with open(f"/proc/{info.pid}/cmdline", "rb") as handle:
                if token.encode() in handle.read():
                    found.append(info.pid)
        except OSError:
            pass
    return found


DAEMON = """
import os, sys, time

def detach(marker_dir, token):
    # Double fork and a new session: the grandchildren are nobody's children.
    # One stays Python, one becomes a shell carrying `token` in its command line.
    target = marker_dir if os.path.isdir(marker_dir) else "."
    if os.fork() == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                if os.fork() == 0:
                    os.execv("/bin/sh", ["sh", "-c", 'while :; do date +%s%N > "$0"/sh-marker; sleep 0.5; done',
                                         target, token])
                for _ in range(80):
                    with open(os.path.join(target, "py-marker"), "w") as handle:
                        handle.write(str(time.time()))
                    time.sleep(0.5)
        finally:
            os._exit(0)
    time.sleep(0.3)
    return os.getuid()
"""


@pytest.fixture
def marker_dir():
    """A directory every user can write to (pytest's tmp_path is private to its owner)."""
    path = Path(tempfile.mkdtemp(prefix="lmhead-markers-", dir="/tmp"))
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("level", ALL)
def test_a_detached_process_does_not_survive_close(level, marker_dir):
    token = f"lmhead-daemon-{os.getpid()}-{level}"
    with session(DAEMON, level) as s:
        uid = call_ok(s, "detach", str(marker_dir), token)
        assert _token_processes(token), "the detached shell should be running before close"
    markers = sorted(marker_dir.iterdir())
    before = {p.name: p.stat().st_mtime_ns for p in markers}
    time.sleep(1.2)
    assert _token_processes(token) == []
    assert {p.name: p.stat().st_mtime_ns for p in marker_dir.iterdir()} == before
    if level != "bwrap":     # outside bwrap the markers land in the host directory
        assert {"py-marker", "sh-marker"} <= set(before)
    if uid != os.getuid():
        assert procs.of_uid(uid) == []


EXITS = """
import os, sys

def leave():
    sys.exit(3)

def vanish():
    os._exit(5)

def interrupt():
    raise KeyboardInterrupt

def fine():
    return "still here"
"""


@pytest.mark.parametrize("level", ALL)
@pytest.mark.parametrize("statement, loaded, fragment", [
    ("import sys\nsys.exit(2)", True, "SystemExit"),
    ("import os\nos._exit(0)", False, "exited with code 0"),
    ("raise KeyboardInterrupt", True, "KeyboardInterrupt"),
    ("exit()", True, "SystemExit"),
])
def test_exits_and_interrupts_at_import_are_reported(level, statement, loaded, fragment):
    with session(statement + "\n", level) as s:
        result = s.import_result
    assert not result.ok and result.loaded is loaded and fragment in result.error


@pytest.mark.parametrize("level", ALL)
def test_exits_and_interrupts_in_calls_are_reported(level):
    with session(EXITS, level) as s:
        left = s.call("leave")
        assert left.error.kind == "raised" and str(left.error) == "`leave` raised `SystemExit: 3`"
        vanished = s.call("vanish")
        assert vanished.error.kind == "crashed" and "exited with code 5" in str(vanished.error)
        interrupted = s.call("interrupt")
        assert interrupted.error.kind == "raised" and interrupted.error.type_name == "KeyboardInterrupt"
        assert call_ok(s, "fine") == "still here"


@pytest.mark.parametrize("level", ALL)
def test_printing_200_mb_is_truncated_in_bounded_time_and_memory(level):
    code = ("import os\n\ndef chatter():\n    for _ in range(100):\n        print('x' * 1_000_000)\n"
            "    for _ in range(100):\n        os.write(1, b'y' * 1_000_000)\n    return 'done'\n")
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.monotonic()
    with session(code, level, Limits(wall_seconds_per_call=10.0)) as s:
        assert call_ok(s, "chatter") == "done"
        output, dropped = s.stdout, s.stdout_dropped
    assert time.monotonic() - started < 10
    assert len(output) <= FAST.stdout_bytes and dropped >= 200_000_000 - FAST.stdout_bytes
    growth_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak_before
    assert growth_kib < 64 * 1024


ARENA_ABUSE = """
import ctypes, os, threading
import numpy as np

def _arena():
    for line in open("/proc/self/maps"):
        if "lmhead-arena" in line:
            start, end = (int(part, 16) for part in line.split()[0].split("-"))
            return start, end - start
    return None

def scribble_then_answer(x):
    # Overwrite the whole arena with garbage, try to shrink every descriptor
    # (it was closed once mapped) and return the right value all the same.
    start, size = _arena()
    ctypes.memset(start, 0xFF, size)
    shrunk = 0
    for fd in range(64):
        try:
            os.ftruncate(fd, 0)
            shrunk += 1
        except OSError:
            pass
    return x * 2, shrunk

def where():
    return _arena() is not None

def append_mode():
    # The worker's own descriptor of the arena: make every write through it append.
    import fcntl
    for name in os.listdir("/proc/self/fd"):
        try:
            if "lmhead-arena" in os.readlink(f"/proc/self/fd/{name}"):
                fd = int(name)
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
                return True
        except OSError:
            pass
    return False
"""


@pytest.mark.parametrize("level", ALL)
def test_the_student_can_only_spoil_its_own_messages_in_the_arena(level):
    x = np.arange(6.0).reshape(2, 3)
    with session(ARENA_ABUSE, level) as s:
        assert call_ok(s, "where") is True           # this level shares an arena with its worker
        for _ in range(3):                           # the next calls still work: nothing faulted here
            value, shrunk = call_ok(s, "scribble_then_answer", x)
            assert np.array_equal(value, x * 2) and shrunk == 0
        assert call_ok(s, "append_mode") is True     # its descriptor's flags are not the grader's
        value, _ = call_ok(s, "scribble_then_answer", x)
        assert np.array_equal(value, x * 2) and np.array_equal(x, np.arange(6.0).reshape(2, 3))


CHURN = """
import resource, sys
import numpy as np
sys.path.insert(0, {root!r})
if sys.argv[1] == "worker":
    from autograder.runtime.sandbox.worker import _keep_freed_memory
    _keep_freed_memory()
else:                                   # keeping every block below 64 MB, as a first version did
    import ctypes
    ctypes.CDLL(None).mallopt(-3, 64 << 20); ctypes.CDLL(None).mallopt(-1, 256 << 20)
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
big = [np.ones(50 << 17) for _ in range(12)]     # 12 x 50 MB, freed below a small survivor
small = np.ones(2000)
del big
try:
    np.empty(700 << 17)
    print("fits")
except MemoryError:
    print("MemoryError")
"""


def test_the_workers_allocator_settings_leave_the_student_its_memory():
    """Freed blocks the worker keeps count against its address-space limit: what fits under
    glibc's defaults must still fit (keeping blocks up to 64 MB did not)."""
    import subprocess
    import sys
    program = CHURN.format(root=str(REPO))

    def run(kind: str) -> str:
        return subprocess.run([sys.executable, "-c", program, kind], capture_output=True, text=True,
                              timeout=60).stdout.strip()
    control = run("64MB")
    if control != "MemoryError":
        pytest.skip(f"this allocator does not show the fragmentation ({control!r})")
    assert run("worker") == "fits"


def test_nothing_importable_in_the_worker_computes_a_graded_answer():
    """The worker-side functions a student's code can import compute no graded function:
    none of them agrees with the reference loss on logits and targets."""
    import solutions
    rng = np.random.default_rng(3)
    logits, targets = rng.standard_normal((2, 3, 5)), rng.integers(0, 5, size=(2, 3))
    loss = solutions.cross_entropy_loss(logits, targets)[0]
    for name, (fn, params) in channel.NAMED_FUNCTIONS.items():
        for args in ({p: targets for p in params}, {p: np.ones_like(logits) for p in params}):
            try:
                value = fn(logits, **args)
            except Exception:
                continue
            assert not np.isclose(value, loss), f"{name} computes the mean cross-entropy"


def test_a_fortran_ordered_view_crosses_with_its_layout():
    """A transposed array arrives transposed, so code that assumes C order meets it as in a notebook."""
    x = np.arange(12.0).reshape(4, 3).T
    back = roundtrip(x, allow_named=False)
    assert np.array_equal(back, x) and back.flags.f_contiguous and not back.flags.c_contiguous
    assert back.flags.writeable
    strided = np.arange(24.0)[::2].reshape(3, 4)          # neither order: arrives C-contiguous
    assert roundtrip(strided, allow_named=False).flags.c_contiguous
    with pytest.raises(ChannelError, match="order"):
        channel.unpack(_body({"v": {"nd": [0, "<f8", [2, 2], "X"]}}, [np.zeros(4).tobytes()]), allow_named=False)


def test_a_view_of_another_layout_crosses_into_the_worker_as_that_view_and_nothing_else():
    """Every other column of a matrix (or a reversed, stepped one) arrives in the worker as such a
    view, neither C- nor Fortran-ordered, with zeros in its gaps (nothing of the matrix it was cut
    from crosses); replies and messages to the grader carry no views, and a forged layout is refused."""
    matrix = np.arange(1.0, 25.0).reshape(3, 8)
    for view in (matrix[:, ::2], matrix[::-1, ::3], matrix.T[::2], np.arange(1.0, 11.0)[::-2]):
        data = channel.pack({}, {"v": view}, max_bytes=1 << 20, views=True)
        back = channel.unpack(data[channel.FRAME.size:], allow_named=True)[1]["v"]
        assert np.array_equal(back, view) and back.strides == view.strides and back.flags.writeable
        assert not back.flags.c_contiguous and not back.flags.f_contiguous
        assert not np.shares_memory(back.ravel(), back)        # ``x.ravel()`` is a copy, as in a notebook
        assert set(np.asarray(back.base).ravel().tolist()) - set(view.ravel().tolist()) <= {0.0}
        with pytest.raises(ChannelError, match="view"):
            channel.unpack(data[channel.FRAME.size:], allow_named=False)
    # Without ``views`` (the worker's replies), and for layouts it cannot keep, C order as before.
    assert roundtrip(matrix[:, ::2], allow_named=True).flags.c_contiguous
    overlapping = np.lib.stride_tricks.as_strided(np.arange(6.0), (4, 3), (8, 8))
    column = np.zeros((100, 10))[:, 0]                   # its matrix is ten times its size
    for kept in (overlapping, column):
        data = channel.pack({}, {"v": kept}, max_bytes=1 << 20, views=True)
        back = channel.unpack(data[channel.FRAME.size:], allow_named=True)[1]["v"]
        assert np.array_equal(back, kept) and back.flags.c_contiguous
    memory = np.zeros(6).tobytes()
    fine = channel.unpack(_body({"v": {"nd": [0, "<f8", [2, 2], "S", 3, [-1, 2]]}}, [memory]), allow_named=True)
    assert fine[1]["v"].strides == (-8, 16)
    # Past the end, before the start, two entries in one place, a stride short, not whole numbers.
    for offset, strides in ((0, [5, 1]), (1, [-2, 1]), (0, [1, 1]), (0, [2]), (0.5, [2, 1]), (0, [True, 1])):
        with pytest.raises(ChannelError):
            channel.unpack(_body({"v": {"nd": [0, "<f8", [2, 2], "S", offset, strides]}}, [memory]), allow_named=True)


@pytest.mark.parametrize("level", ALL)
def test_a_stepped_view_reaches_the_students_function_as_a_view(level):
    """``x.ravel()`` of a view neither C- nor Fortran-ordered is a copy in a notebook: so it is in the
    sandbox, where a nudge through it never reaches ``x``."""
    with session("""
        import numpy as np
        def layout(x):
            return bool(x.flags.c_contiguous), bool(x.flags.f_contiguous), bool(np.shares_memory(x.ravel(), x))
    """, level) as s:
        s.start()
        assert call_ok(s, "layout", np.zeros((3, 8))[:, ::2]) == (False, False, False)
        assert call_ok(s, "layout", np.zeros((3, 4)).T) == (False, True, False)


def test_the_reach_probe_counts_what_it_cannot_even_look_at_as_unreadable(tmp_path):
    """A folder inside one the stranger may not enter is out of reach, not a failed probe."""
    from autograder.runtime.sandbox import reach
    from autograder.runtime.sandbox.isolation import running_as_root
    if not running_as_root():
        pytest.skip("the probe needs root to become a stranger")
    closed = tmp_path / "closed"
    (closed / "inner").mkdir(parents=True)
    (closed / "inner" / "secret.txt").write_text("hidden")
    closed.chmod(0o700)
    assert reach.readable_by_stranger([closed / "inner"]) == []
    import shutil
    import tempfile
    public = Path(tempfile.mkdtemp(dir="/tmp"))          # pytest's own folders are root-only
    try:
        public.chmod(0o755)
        opened = public / "open.txt"
        opened.write_text("public")
        opened.chmod(0o644)
        assert reach.readable_by_stranger([public]) == [str(opened)]
    finally:
        shutil.rmtree(public)


def test_the_reach_probe_fails_closed_through_links_and_past_its_budget(tmp_path, monkeypatch):
    """A guarded path given as a link is checked at its target (the worker reads through it), and a
    path with more entries open to others than the probe looks at counts as readable, not as clear:
    both once let `--isolation user` grade with the references readable."""
    from autograder.runtime.sandbox import reach
    from autograder.runtime.sandbox.isolation import running_as_root
    if not running_as_root():
        pytest.skip("the probe needs root to become a stranger")
    import shutil
    import tempfile
    public = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        public.chmod(0o755)
        (public / "class").mkdir()
        secret = public / "class" / "secret.txt"
        secret.write_text("hidden")
        link = tmp_path / "class-link"            # in a root-only folder, pointing at an open one
        link.symlink_to(public / "class")
        assert str(secret) in reach.readable_by_stranger([link])
        crowd = public / "crowd"
        crowd.mkdir()
        for i in range(30):
            (crowd / f"{i:02d}").mkdir(mode=0o700)     # closed: nothing readable, but each costs a look
        assert reach.readable_by_stranger([crowd]) == []
        monkeypatch.setattr(reach, "PROBE_FILES", 10)
        assert reach.readable_by_stranger([crowd]) == [str(crowd)]
    finally:
        shutil.rmtree(public)


def test_the_cleanup_lists_every_world_writable_folder_a_stranger_can_reach_and_none_it_cannot(tmp_path):
    """A stranger (a uid with no groups) can write in a world-writable folder only through folders it
    may search: those are listed, a world-writable folder under a 0700 one is not (and the walk does
    not enter the 0700 folder at all, which is what keeps it short)."""
    from autograder.runtime.sandbox.reach import writable_below

    open_path = tmp_path / "open" / "deeper"
    open_path.mkdir(parents=True)
    (tmp_path / "open").chmod(0o711)          # searchable by others, not listable: still reachable
    shared = open_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    closed = tmp_path / "closed"
    hidden = closed / "tmp"
    hidden.mkdir(parents=True)
    hidden.chmod(0o1777)
    closed.chmod(0o700)
    found = writable_below(str(tmp_path))
    assert str(shared) in found
    assert str(hidden) not in found and not any(p.startswith(str(closed) + "/") for p in found)


@pytest.mark.parametrize("level", _levels("bwrap"))
def test_the_session_reports_the_notebook_level_numbers_each_function_reads(level):
    code = """
    B, T, EPS, FLAG = 4, 8, 1e-12, True
    def uses_globals(x):
        return x.reshape(B, T, -1).sum() * EPS if FLAG else 0
    def uses_attribute(W):
        return W.T                      # an attribute named T is not the global T
    def nested(x):
        return [v * B for v in x]
    """
    with session(code, level) as s:
        assert s.numbers_read["uses_globals"] == {"B": 4, "T": 8}      # no float, no bool
        assert "uses_attribute" not in s.numbers_read
        assert s.numbers_read["nested"] == {"B": 4}                     # code inside a comprehension
    # Asked about some functions only, the worker reports those (and no name it does not define).
    with SandboxSession(textwrap.dedent(code), FAST, isolation=level,
                        numbers_for=["nested", "uses_attribute", "missing"]) as s:
        assert s.start().ok and s.numbers_read == {"nested": {"B": 4}}


# -- kernel state a submission could leave behind or share ---------------------

KERNEL_STATE = """
import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)

def _errno(result):
    return "made" if result >= 0 else os.strerror(ctypes.get_errno())

def attempts():
    found = {}
    for family, kind in (("AF_INET", socket.SOCK_STREAM), ("AF_INET6", socket.SOCK_DGRAM),
                         ("AF_NETLINK", socket.SOCK_RAW), ("AF_PACKET", socket.SOCK_RAW)):
        try:
            socket.socket(getattr(socket, family), kind).close()
            found[family] = "made"
        except OSError as exc:
            found[family] = exc.strerror
    try:
        os.close(os.memfd_create("held"))
        found["memfd"] = "made"
    except OSError as exc:
        found["memfd"] = exc.strerror
    found["shmget"] = _errno(libc.shmget(0, 1 << 20, 0o1000 | 0o600))
    found["msgget"] = _errno(libc.msgget(0, 0o1000 | 0o600))
    found["semget"] = _errno(libc.semget(0, 1, 0o1000 | 0o600))
    found["mq_open"] = _errno(ctypes.CDLL("librt.so.1", use_errno=True).mq_open(b"/lmhead-q", 0o100 | 2, 0o600, None))
    found["add_key"] = _errno(libc.syscall(248 if os.uname().machine == "x86_64" else 217, b"user", b"lmhead",
                                           b"x", 1, -4))
    # Locks and watches on a file every sandbox sees (NumPy's own, read-only).
    import fcntl, numpy, struct
    with open(numpy.__file__, "rb") as shared:
        for name, lock in (("flock", lambda: fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                           ("lockf", lambda: fcntl.lockf(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                           ("F_OFD_SETLK", lambda: fcntl.fcntl(shared, 37, struct.pack("hhqqi", 0, 0, 0, 0, 0)))):
            try:
                lock()
                found[name] = "made"
            except OSError as exc:
                found[name] = exc.strerror
        found["F_GETFD"] = "ok" if fcntl.fcntl(shared, fcntl.F_GETFD) >= 0 else "failed"
    found["inotify"] = _errno(libc.inotify_init1(0))
    # The page cache of those files: evicting pages, and asking which are cached.
    with open(numpy.__file__, "rb") as shared:
        for name, ask in (("fadvise", lambda: os.posix_fadvise(shared.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)),
                          ("preadv2", lambda: os.preadv(shared.fileno(), [bytearray(1)], 0, os.RWF_NOWAIT))):
            try:
                ask()
                found[name] = "made"
            except OSError as exc:
                found[name] = exc.strerror
    # Unfiltered, mincore of an unmapped page fails with ENOMEM; filtered, with EPERM.
    vector = (ctypes.c_ubyte * 1)()
    found["mincore"] = _errno(libc.mincore(ctypes.c_void_p(0), 4096, vector))
    # What stays allowed: a Unix socket pair, and the arena the grader shared.
    a, b = socket.socketpair()
    a.sendall(b"ok")
    found["unix"] = b.recv(2).decode()
    return found
"""
REFUSED = "Operation not permitted"


@pytest.mark.parametrize("level", ALL)
def test_student_code_cannot_make_sockets_shared_memory_or_queues(level):
    """Sockets other than AF_UNIX, memfd, SysV IPC, POSIX queues and kernel keys all outlive the
    process, escape its memory limit or reach other submissions; locks and watches on files every
    sandbox shares carry bits between submissions graded at once: refused at every level."""
    with session(KERNEL_STATE, level) as s:
        found = call_ok(s, "attempts")
    assert found == {"AF_INET": REFUSED, "AF_INET6": REFUSED, "AF_NETLINK": REFUSED, "AF_PACKET": REFUSED,
                     "memfd": REFUSED, "shmget": REFUSED, "msgget": REFUSED, "semget": REFUSED,
                     "mq_open": REFUSED, "add_key": REFUSED, "flock": REFUSED, "lockf": REFUSED,
                     "F_OFD_SETLK": REFUSED, "F_GETFD": "ok", "inotify": REFUSED, "fadvise": REFUSED,
                     "preadv2": REFUSED, "mincore": REFUSED, "unix": "ok"}


def test_the_seccomp_program_refuses_exactly_its_list():
    """The filter, read as the kernel would run it, for every number of the table."""
    from autograder.runtime.sandbox import worker
    for machine, table in worker.SYSCALLS.items():
        program = worker._seccomp_program(table, 1)

        def run(arch, nr, arg0=0, arg1=0):
            data = {0: nr, 4: arch, 16: arg0, 24: arg1}
            pc, acc = 0, 0
            while True:
                code, jt, jf, k = program[pc]
                if code == 0x20:
                    acc = data[k]
                elif code == 0x06:
                    return k
                elif code in (0x15, 0x35):
                    taken = acc == k if code == 0x15 else acc >= k
                    pc += jt if taken else jf
                pc += 1
        assert run(table["arch"] ^ 1, 0) == 0x80000000, machine          # a foreign ABI is killed
        assert run(table["arch"], worker.X32_BIT | 1) == 0x80000000
        for name, number in table["denied"].items():
            assert run(table["arch"], number) == 0x00050001, (machine, name)
        assert run(table["arch"], table["socket"], 2) == 0x00050001           # AF_INET
        assert run(table["arch"], table["socket"], 1) == 0x7FFF0000           # AF_UNIX
        for command in range(0, 1100):                                          # fcntl: locks refused
            expected = 0x00050001 if command in worker.FCNTL_LOCKS else 0x7FFF0000
            assert run(table["arch"], table["fcntl"], 3, command) == expected, (machine, command)
        for number in range(0, 460):
            if number not in table["denied"].values() and number not in (table["socket"], table["fcntl"]):
                assert run(table["arch"], number) == 0x7FFF0000, (machine, number)


@pytest.mark.skipif(not ROOT, reason="needs root to create IPC objects as another uid")
def test_ipc_objects_of_a_submission_uid_are_removed_after_it():
    """Detached System V segments, queues and semaphores of a uid (made here directly, as the
    filter keeps student code from making them) are found by their real column names and removed."""
    import ctypes
    from autograder.runtime.sandbox import reach
    uid = iso.reserve_uid()
    try:
        pid = os.fork()
        if pid == 0:
            try:
                os.setgid(uid)
                os.setuid(uid)
                libc = ctypes.CDLL(None, use_errno=True)
                made = [libc.shmget(0, 1 << 20, 0o1000 | 0o600), libc.msgget(0, 0o1000 | 0o600),
                        libc.semget(0, 1, 0o1000 | 0o600)]
                os._exit(0 if min(made) >= 0 else 1)
            finally:
                os._exit(2)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0

        def owned() -> list[str]:
            found = []
            for kind in ("shm", "msg", "sem"):
                lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
                header = lines[0].split()
                found += [kind for line in lines[1:] if int(line.split()[header.index("uid")]) == uid]
            return found
        assert owned() == ["shm", "msg", "sem"]
        removed = reach.remove_ipc_of(uid)
        assert owned() == [] and len(removed) == 3
    finally:
        iso.release_uid(uid)


# -- what the worker's own descriptors reach -------------------------------------

DESCRIPTORS = """
import os, stat

def held(site, probe_file):
    found = {"directories": [], "read": []}
    for name in os.listdir("/proc/self/fd"):
        link = "/proc/self/fd/" + name
        try:
            if not stat.S_ISDIR(os.stat(link).st_mode):
                continue
            target = os.readlink(link)
        except OSError:
            continue
        found["directories"].append(target)
        fd = int(name)
        for way in (link + "/" + os.path.relpath(probe_file, target),
                    link + "/../" + os.path.relpath(probe_file, os.path.dirname(target))):
            try:
                with open(way, "rb") as handle:
                    found["read"].append((way, len(handle.read(10))))
            except OSError:
                pass
        try:      # openat(fd, "..") and on up: the same walk without /proc
            parent = os.open("..", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            found["read"].append(("openat ..", sorted(os.listdir(parent))[:5]))
        except OSError:
            pass
    return found
"""


@pytest.mark.parametrize("level", _levels("user"))
def test_the_user_level_worker_keeps_no_descriptor_that_walks_past_its_uid(level):
    """Where the installation sits under a folder only root enters, the worker imports from a
    staged copy and holds no directory descriptor: ``..`` from one reached site-packages (the
    references, the grader), through /proc/self/fd and through openat alike."""
    import numpy
    site = os.path.dirname(os.path.dirname(os.path.realpath(numpy.__file__)))
    if all(os.stat(p).st_mode & 0o001 for p in Path(site).parents):
        pytest.skip("the installation is open to every user here: nothing to reach through descriptors")
    probe_file = os.path.join(site, "numpy", "version.py")
    with session(DESCRIPTORS + PROBES, level) as s:
        assert call_ok(s, "held", site, probe_file) == {"directories": [], "read": []}
        imported = call_ok(s, "imports")          # csv and numpy.polynomial load after the drop
    assert imported["csv"] == "ok" and imported["numpy.polynomial"] == "ok"


@pytest.mark.skipif(not ROOT, reason="needs root to become a stranger")
def test_the_worker_probe_counts_what_a_descriptor_reaches(tmp_path):
    """The probe that clears the user level runs as the submission's code: a directory
    descriptor opened as root inside a closed folder makes its secret readable, and it says so."""
    from autograder.runtime.sandbox import policy
    # An installation open to everyone inside a folder only root enters, as in root's home.
    closed = tmp_path / "home" / "install"
    (closed / "open" / "inner").mkdir(parents=True)
    (closed / "refs").mkdir()
    (closed / "refs" / "secret.py").write_text("answer = 42")
    for folder in (closed, closed / "open", closed / "open" / "inner", closed / "refs"):
        folder.chmod(0o755)
    (closed / "refs" / "secret.py").chmod(0o644)
    closed.parent.chmod(0o700)
    uid = iso.reserve_uid()
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
        if pid == 0:
            try:
                held = os.open(closed / "open" / "inner", os.O_RDONLY | os.O_DIRECTORY)
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                scope: dict = {}
                exec(policy.WORKER_PROBE, scope)
                found, targets = scope["reach"]([str(closed / "refs")], 100)
                os.write(write_end, json.dumps([found, targets, held]).encode())
            finally:
                os._exit(0)
        os.close(write_end)
        os.waitpid(pid, 0)
        found, targets, _held = json.loads(os.read(read_end, 1 << 16))
    finally:
        os.close(read_end)
        iso.release_uid(uid)
    assert found == [str(closed / "refs" / "secret.py")]
    assert targets == [str(closed / "open" / "inner")]
    # and without the descriptor, nothing: what the real worker now holds
    assert policy.reachable_from_worker([closed / "refs"]) == []

"""Tests of the sandbox's channel: what may cross between grader and worker."""
from __future__ import annotations

import io
import json
import os
import struct
import time

import numpy as np
import pytest

from autograder.sandbox import ChannelError, Limits, Named
from autograder.sandbox import channel


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


def _npy(array: np.ndarray, allow_pickle: bool = False) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=allow_pickle)
    return buffer.getvalue()


def test_channel_refuses_pickles_and_forged_arrays():
    pickled = _npy(np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ChannelError, match="dtype object"):
        channel.unpack(_body({"v": {"nd": 0}}, [pickled]), allow_named=False)
    forged = io.BytesIO()
    np.lib.format.write_array_header_1_0(forged, {"descr": "<f8", "fortran_order": False, "shape": (10 ** 12,)})
    started = time.monotonic()
    with pytest.raises(ChannelError, match="bytes of data"):
        channel.unpack(_body({"v": {"nd": 0}}, [forged.getvalue() + bytes(16)]), allow_named=False)
    assert time.monotonic() - started < 1.0
    blob = _npy(np.arange(3))
    with pytest.raises(ChannelError, match="bad array reference"):
        channel.unpack(_body({"v": {"list": [{"nd": 0}, {"nd": 0}]}}, [blob]), allow_named=False)
    for tree in ({"evil": 1}, [1, 2], {"nd": "0"}):
        with pytest.raises(ChannelError):
            channel.unpack(_body({"v": tree}, [blob]), allow_named=False)
    for junk in (b"", b"\x00\x00\x00\x05{]}xx", struct.pack(">I", 4) + b"null"):
        with pytest.raises(ChannelError):
            channel.unpack(junk, allow_named=False)


def test_named_functions_cross_only_into_the_worker():
    targets = np.array([[0, 2]])
    named = Named("cross_entropy", targets=targets)
    assert isinstance(roundtrip(named, allow_named=True), Named)
    with pytest.raises(ChannelError, match="named function"):
        roundtrip(named, allow_named=False)
    with pytest.raises(ChannelError, match="unknown named"):
        Named("os.system")
    with pytest.raises(ChannelError, match="takes parameters"):
        Named("cross_entropy")
    logits = np.array([[[1.0, 2.0, 3.0], [0.5, 0.5, -1.0]]])
    want = -np.mean(np.log(np.exp(logits) / np.exp(logits).sum(-1, keepdims=True))[0, [0, 1], [0, 2]])
    assert named.function()(logits) == pytest.approx(want)
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


# -- limits ------------------------------------------------------------

def test_limits_refuse_nonsense():
    with pytest.raises(ValueError, match="cpu_seconds"):
        Limits(cpu_seconds=0)
    with pytest.raises(ValueError, match="memory_bytes"):
        Limits(memory_bytes=1 << 20)

"""The narrow channel between the grader and the sandboxed worker.

Only plain data crosses: ``None``, ``bool``, ``int``, ``float``, ``str``,
NumPy arrays and NumPy scalars of boolean, integer, floating or complex
dtype, and tuples, lists and dicts (string keys) of those, up to a depth and
a node count. Arrays travel as their raw bytes in C order (in Fortran order for
a Fortran-ordered array, which keeps its layout; on the way into the worker, a
view that is neither, such as every other column of a matrix, keeps its
layout too, see ``_Encoder._view``), with dtype and shape in the JSON header; the dtype must be a plain bool/int/uint/float/complex one and the
byte count must match the shape before anything is allocated, so whatever the
other side sends, decoding yields fresh, plain ``numpy.ndarray`` objects (never
a subclass, never an object array) and plain Python containers. (Raw bytes
rather than ``.npy``: parsing a ``.npy`` header per array was a large share of
a call's cost.)
Anything else fails with ``ChannelError`` and a message saying what was
found and what is accepted.

NumPy scalars keep their dtype (an ``np.float32`` comes back as an
``np.float32``, not a ``float``): the comparison helpers look at dtypes, and
a float32 answer should be judged as what it is.

A hidden test cannot send a Python function into the sandbox. It sends
``Named("cubic")`` instead, which the worker resolves to a function from the
fixed registry ``NAMED_FUNCTIONS`` below; the trusted side gets the very same
function from ``Named.function()`` to compute the expected answer.

Messages are framed as an 8-byte big-endian length followed by the body. A
body is a 4-byte header length, a JSON header (control fields, value trees
and blob sizes) and the arrays' bytes.

This module is also executed inside the sandbox, where it is sent as source
text: it must import nothing but the standard library and NumPy.

Why one module of this size: it runs on both sides, sent into the sandbox as source text beside the worker, so encoder, decoder and their bounds must live in one file.
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import struct
from typing import Any, Callable, Mapping

import numpy as np

#: dtype kinds an array or NumPy scalar may have: bool, int, uint, float, complex.
ARRAY_KINDS = "biufc"
#: Containers nested deeper than this are refused (guards against recursion).
MAX_DEPTH = 32
#: Values (scalars, arrays and containers) in one message, at most.
MAX_NODES = 100_000
#: Largest JSON header: arrays travel as blobs, so the header only holds
#: structure and scalars, and parsing it must stay cheap for the grader.
MAX_HEADER_BYTES = 2 << 20
#: Most dimensions an array may have (NumPy's own limit is 64).
MAX_NDIM = 32
#: How an array's dtype is written: byte order, kind, item size (``"<f8"``).
_DTYPE_TEXT = re.compile(r"[<>|][biufc][0-9]{1,2}")
#: Integers beyond this many bits are refused (no answer in this unit is near it).
MAX_INT_BITS = 1024

#: A view sent with its layout (``_Encoder._view``) spans at most this many times its own entries:
#: its gaps travel as zeros, and a column of a large matrix is not worth its matrix.
VIEW_SPAN_FACTOR = 8
#: Arrays in a shared arena start at multiples of this many bytes (a cache line).
ARENA_ALIGN = 64
#: How a header ends: whether its arrays are in the shared arena or follow it.
_NOT_SHARED, _SHARED = b',"shared":false}', b',"shared":true}'

FRAME = struct.Struct(">Q")
_HEADER_LENGTH = struct.Struct(">I")
_TAGS = ("nd", "sc", "tuple", "list", "dict")
_ACCEPTED = ("None, bool, int, float, str, NumPy arrays and scalars of bool/int/float/complex dtype, "
             "and tuples, lists and dicts (with str keys) of those")


class ChannelError(ValueError):
    """A value or message cannot cross the channel; the message says why."""


def type_name(value: Any) -> str:
    """``module.QualName`` of ``value``'s type, for messages."""
    kind = type(value)
    module = getattr(kind, "__module__", "?")
    qualname = getattr(kind, "__qualname__", kind.__name__)
    return qualname if module == "builtins" else f"{module}.{qualname}"


# -- named worker-side functions -------------------------------------------

def cubic(x: np.ndarray) -> float:
    """``sum(x**3) + sum(sin(x))``: smooth, with a gradient that depends on x."""
    return float(np.sum(x ** 3) + np.sum(np.sin(x)))


def square(x: np.ndarray) -> float:
    """``sum(x**2)``, whose gradient is ``2x``."""
    return float(np.sum(x ** 2))


def weighted_softplus(x: np.ndarray, *, weights: np.ndarray) -> float:
    """``sum(weights * log(1 + exp(x)))``: smooth and non-linear, with a gradient that depends on x.

    Not a loss of the course: nothing here may compute a graded function's answer,
    since the worker-side module is importable by the student's code.
    """
    z = np.asarray(x, dtype=np.float64)
    return float(np.sum(np.asarray(weights, dtype=np.float64) * np.logaddexp(0.0, z)))


#: name -> (function, names of the keyword parameters it needs).
NAMED_FUNCTIONS: dict[str, tuple[Callable[..., float], tuple[str, ...]]] = {
    "cubic": (cubic, ()),
    "square": (square, ()),
    "weighted_softplus": (weighted_softplus, ("weights",)),
}


class Named:
    """A function from ``NAMED_FUNCTIONS``, passed by name into the sandbox.

    ``Named("weighted_softplus", weights=w)`` stands for ``x -> weighted_softplus(x, weights=w)``.
    Parameters are channel values themselves (``w`` travels as an array).
    """

    __slots__ = ("name", "params")

    def __init__(self, name: str, /, **params: Any) -> None:
        if name not in NAMED_FUNCTIONS:
            raise ChannelError(f"unknown named function {name!r}; known: {', '.join(sorted(NAMED_FUNCTIONS))}.")
        wanted = NAMED_FUNCTIONS[name][1]
        if set(params) != set(wanted):
            raise ChannelError(f"named function {name!r} takes parameters ({', '.join(wanted)}), "
                               f"got ({', '.join(sorted(params))}).")
        self.name = name
        self.params = dict(params)

    def function(self) -> Callable[[np.ndarray], float]:
        """The plain function this name stands for, with its parameters bound."""
        fn = NAMED_FUNCTIONS[self.name][0]
        return functools.partial(fn, **self.params) if self.params else fn

    def __call__(self, x: np.ndarray) -> float:
        # Callable outside the sandbox too, so hidden tests that pass a Named
        # run unchanged in a notebook kernel and against the references.
        return self.function()(x)

    def __repr__(self) -> str:
        params = "".join(f", {k}=..." for k in self.params)
        return f"Named({self.name!r}{params})"


# -- encoding ----------------------------------------------------------------

def _array_dtype_ok(dtype: np.dtype) -> bool:
    return dtype.kind in ARRAY_KINDS and dtype.fields is None and dtype.subdtype is None


class _Encoder:
    """Turns a value into a JSON tree plus array bytes, enforcing the bounds."""

    def __init__(self, max_bytes: int, views: bool = False) -> None:
        #: The arrays to send and the order to lay each out in; copied only when framed.
        self.arrays: list[tuple[np.ndarray, str]] = []
        self.blob_bytes = 0
        self.nodes = 0
        self.max_bytes = max_bytes
        #: Whether a view neither C- nor Fortran-ordered keeps its layout (into the worker only).
        self.views = views

    def encode(self, value: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ChannelError(f"the value holds more than {MAX_NODES} items.")
        if depth > MAX_DEPTH:
            raise ChannelError(f"the value is nested more than {MAX_DEPTH} levels deep.")
        if value is None:
            return None
        if isinstance(value, Named):
            return {"named": value.name, "params": self.encode(value.params, depth + 1)}
        if isinstance(value, np.ndarray):
            # A subclass is sent as the plain array it wraps: its methods
            # (and any comparison they override) stay on this side.
            return {"nd": self._array(np.ndarray.view(value, np.ndarray))}
        if isinstance(value, np.generic):
            if not _array_dtype_ok(value.dtype):
                raise ChannelError(f"a NumPy scalar of dtype {value.dtype} cannot be sent; "
                                   f"accepted: {_ACCEPTED}.")
            return {"sc": self._array(np.asarray(value))}
        return self._encode_plain(value, depth)

    def _encode_plain(self, value: Any, depth: int) -> Any:
        # Base-class methods, not the value's own: a subclass of int, str,
        # list... cannot change what is sent by overriding them.
        if isinstance(value, bool):
            return bool(value)
        if isinstance(value, int):
            number = int.__int__(value)
            if number.bit_length() > MAX_INT_BITS:
                raise ChannelError(f"an int of {number.bit_length()} bits is too large to send "
                                   f"(at most {MAX_INT_BITS} bits).")
            return number
        if isinstance(value, float):
            return float.__float__(value)
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, tuple):
            return {"tuple": [self.encode(item, depth + 1) for item in tuple.__iter__(value)]}
        if isinstance(value, list):
            return {"list": [self.encode(item, depth + 1) for item in list.__iter__(value)]}
        if isinstance(value, dict):
            pairs = []
            for key, item in dict.items(value):
                if not isinstance(key, str):
                    raise ChannelError(f"dict keys must be str, found a key of type {type_name(key)}.")
                pairs.append([str.__str__(key), self.encode(item, depth + 1)])
            return {"dict": pairs}
        raise ChannelError(f"a value of type {type_name(value)} cannot be sent; accepted: {_ACCEPTED}.")

    def _array(self, array: np.ndarray) -> list:
        """``[blob index, dtype text, shape]``; the bytes go to the blobs in C order."""
        if not _array_dtype_ok(array.dtype):
            raise ChannelError(f"an array of dtype {array.dtype} cannot be sent; accepted dtypes are "
                               "bool, integer, floating and complex.")
        if array.ndim > MAX_NDIM:
            raise ChannelError(f"an array of {array.ndim} dimensions cannot be sent (at most {MAX_NDIM}).")
        if self.blob_bytes + array.nbytes > self.max_bytes:
            raise ChannelError(f"the value is too large to send ({self.blob_bytes + array.nbytes} bytes "
                               f"of arrays; at most {self.max_bytes}).")
        # A Fortran-ordered array (a transposed view, say) keeps its layout across: a
        # function that assumes C order (``x.reshape(-1)`` as a view) must meet it as it would
        # in a notebook. Into the worker a view of another layout keeps it too (``_view``);
        # any other array arrives C-contiguous.
        if self.views:
            view = _view_layout(array)
            if view is not None:
                span, offset, strides = view
                self.arrays.append((span, "C"))
                self.blob_bytes += span.nbytes
                return [len(self.arrays) - 1, array.dtype.str, list(array.shape), "S", offset, strides]
        fortran = array.ndim > 1 and array.flags.f_contiguous and not array.flags.c_contiguous
        self.arrays.append((array, "F" if fortran else "C"))
        self.blob_bytes += array.nbytes
        return [len(self.arrays) - 1, array.dtype.str, list(array.shape), *(["F"] if fortran else [])]


def _view_layout(array: np.ndarray) -> tuple[np.ndarray, int, list[int]] | None:
    """A view neither C- nor Fortran-ordered as the memory it spans (its entries in place, zeros in
    the gaps: nothing of the array it was cut from travels), the offset of its first entry and its
    strides, both in entries; None for a contiguous array, or a layout ``_strided_view`` would
    refuse (overlapping entries, a stride not a whole number of entries, or a span over
    ``VIEW_SPAN_FACTOR`` times its entries), which travels C-contiguous as before."""
    if array.size < 2 or array.flags.c_contiguous or array.flags.f_contiguous:
        return None
    size = array.itemsize
    if any(s % size for s in array.strides):
        return None
    strides = [s // size if n > 1 else 0 for s, n in zip(array.strides, array.shape)]
    if not _strides_ok(array.shape, strides):
        return None
    low = sum(min(0, (n - 1) * e) for n, e in zip(array.shape, strides))
    high = sum(max(0, (n - 1) * e) for n, e in zip(array.shape, strides))
    if high - low + 1 > VIEW_SPAN_FACTOR * array.size:
        return None
    span = np.zeros(high - low + 1, dtype=array.dtype)
    np.ndarray(array.shape, array.dtype, buffer=span, offset=-low * size,
               strides=[e * size for e in strides])[...] = array
    return span, -low, strides


def _strides_ok(shape: tuple[int, ...] | list[int], strides: list[int]) -> bool:
    """Whether entries laid out with ``strides`` (in entries) never share memory: taken from the
    smallest step up, each step is larger than all the ground the smaller ones cover."""
    covered = 0
    for n, e in sorted(((n, abs(e)) for n, e in zip(shape, strides) if n > 1), key=lambda pair: pair[1]):
        if e <= covered:
            return False
        covered += (n - 1) * e
    return True


def arena_layout(sizes: list[int]) -> tuple[list[int], int]:
    """Where arrays of ``sizes`` bytes start in a shared arena, and where the last ends."""
    offsets, end = [], 0
    for size in sizes:
        offsets.append(end)
        end += -(-size // ARENA_ALIGN) * ARENA_ALIGN
    return offsets, end


class MappedArena:
    """The worker's side of the shared arena: a mapping of the file, copied into and out of."""

    def __init__(self, buffer: Any) -> None:
        self.buffer = buffer

    def __len__(self) -> int:
        return len(self.buffer)

    def put(self, offset: int, array: np.ndarray, order: str) -> None:
        np.ndarray(array.shape, array.dtype, buffer=self.buffer, offset=offset, order=order)[...] = array

    def get(self, offset: int, size: int) -> np.ndarray:
        """A fresh copy of ``size`` bytes at ``offset`` (as a uint8 array)."""
        return np.frombuffer(self.buffer, np.uint8, size, offset).copy()


class FileArena:
    """The grader's side of the shared arena: the file itself, read and written with
    ``pread``/``pwrite`` and never mapped, so nothing the worker does to the file (punching
    holes, using up memory) can fault this process: a failure is an ``OSError``."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd = fd
        self.size = size

    def __len__(self) -> int:
        return self.size

    def put(self, offset: int, array: np.ndarray, order: str) -> None:
        # Written straight from the array's memory where it is laid out in ``order`` already.
        if (order == "C" and array.flags.c_contiguous) or (order == "F" and array.flags.f_contiguous):
            data = memoryview(array.reshape(-1, order=order).view(np.uint8))
        else:
            data = memoryview(array.tobytes(order=order))
        while data:
            written = os.pwrite(self.fd, data, offset)
            if written <= 0:
                raise OSError("the shared arena took no bytes")
            data, offset = data[written:], offset + written

    def get(self, offset: int, size: int) -> bytearray:
        """A fresh copy of ``size`` bytes at ``offset``."""
        buffer = bytearray(size)
        view, done = memoryview(buffer), 0
        while done < size:
            try:
                count = os.preadv(self.fd, [view[done:]], offset + done)
            except OSError as exc:
                raise ChannelError(f"the shared arena could not be read ({exc.strerror}).") from None
            if count <= 0:
                raise ChannelError("malformed message: the shared arena ended early.")
            done += count
        return buffer


class Outgoing:
    """One encoded message whose arrays have not been copied anywhere yet.

    ``frame(arena)`` lays them out in the shared arena when one is given and
    they fit, and after the header in the message itself otherwise.
    """

    def __init__(self, header: bytes, arrays: list[tuple[np.ndarray, str]]) -> None:
        self.header = header
        self.arrays = arrays

    def frame(self, arena: MappedArena | FileArena | None = None) -> bytes:
        """The framed message (length prefix included); arrays go into ``arena`` if they fit."""
        if self.arrays and arena is not None and self._put_all(arena):
            # The header ends with the flag ``"shared":false`` (see ``encode``); ``true`` is
            # shorter, so the header stays within the size ``encode`` checked.
            header = self.header[:-len(_NOT_SHARED)] + _SHARED
            pieces: list[bytes] = []
        else:
            header = self.header
            pieces = [array.tobytes(order=order) for array, order in self.arrays]
        body_length = _HEADER_LENGTH.size + len(header) + sum(len(piece) for piece in pieces)
        return b"".join([FRAME.pack(body_length), _HEADER_LENGTH.pack(len(header)), header, *pieces])

    def _put_all(self, arena: MappedArena | FileArena) -> bool:
        """Copy every array into ``arena``; ``False`` (send them inline instead) if they do not
        fit or the file cannot take them, e.g. when memory for its pages runs out."""
        offsets, end = arena_layout([array.nbytes for array, _ in self.arrays])
        if end > len(arena):
            return False
        try:
            for (array, order), offset in zip(self.arrays, offsets):
                if array.nbytes:
                    arena.put(offset, array, order)
        except OSError:
            return False
        return True


def encode(fields: Mapping[str, Any], values: Mapping[str, Any] | None = None, *,
           max_bytes: int, views: bool = False) -> Outgoing:
    """Encode one message: plain JSON ``fields`` plus channel-encoded ``values``.

    Raises ``ChannelError`` if a value cannot be sent or the message would
    exceed ``max_bytes`` (counting its arrays, wherever they travel). With
    ``views`` (a request to the worker, whose decoder accepts them), a view
    neither C- nor Fortran-ordered keeps its layout.
    """
    encoder = _Encoder(max_bytes, views)
    trees = {name: encoder.encode(value) for name, value in (values or {}).items()}
    try:
        header = json.dumps({"fields": dict(fields), "values": trees,
                             "blobs": [array.nbytes for array, _ in encoder.arrays], "shared": False},
                            separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError) as exc:   # a field that is not plain JSON data
        raise ChannelError(f"the message cannot be encoded: {exc}") from None
    size = len(header)
    if size > MAX_HEADER_BYTES:
        raise ChannelError(f"the value's structure is too large to send ({size} bytes of "
                           f"numbers, strings and containers; at most {MAX_HEADER_BYTES}).")
    body_length = _HEADER_LENGTH.size + size + encoder.blob_bytes
    if body_length > max_bytes:
        raise ChannelError(f"the value is too large to send ({body_length} bytes; at most {max_bytes}).")
    return Outgoing(header, encoder.arrays)


def pack(fields: Mapping[str, Any], values: Mapping[str, Any] | None = None, *,
         max_bytes: int, arena: MappedArena | FileArena | None = None, views: bool = False) -> bytes:
    """``encode`` and frame in one step (see ``Outgoing.frame`` for ``arena``, ``encode`` for ``views``)."""
    return encode(fields, values, max_bytes=max_bytes, views=views).frame(arena)


# -- decoding ----------------------------------------------------------------

def _dtype(text: Any) -> np.dtype:
    """The dtype written as ``text``, if it is one an array may have."""
    if not isinstance(text, str) or not _DTYPE_TEXT.fullmatch(text):
        raise ChannelError(f"an array arrived with a malformed dtype {str(text)[:40]!r}.")
    return _checked_dtype(text)


@functools.lru_cache(maxsize=64)
def _checked_dtype(text: str) -> np.dtype:
    # Cached: a session sends the same few dtypes thousands of times, and the
    # pattern above admits only a few dozen texts at all.
    try:
        dtype = np.dtype(text)
    except TypeError:
        raise ChannelError(f"an array arrived with an unknown dtype {text!r}.") from None
    if not _array_dtype_ok(dtype):
        raise ChannelError(f"an array of dtype {dtype} arrived; accepted dtypes are bool, integer, "
                           "floating and complex.")
    return dtype


def _shape(raw: Any) -> tuple[int, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_NDIM or \
            any(not isinstance(n, int) or isinstance(n, bool) or n < 0 for n in raw):
        raise ChannelError(f"an array arrived with an invalid shape {str(raw)[:80]}.")
    return tuple(raw)


class _ArenaBlob:
    """An array's bytes in the shared arena, read only when the array is built."""

    def __init__(self, arena: MappedArena | FileArena, offset: int, size: int) -> None:
        self.arena, self.offset, self.size = arena, offset, size

    def __len__(self) -> int:
        return self.size


def _array_from(blob: memoryview | _ArenaBlob, dtype: np.dtype, shape: tuple[int, ...],
                order: str = "C") -> np.ndarray:
    """A fresh, writable array of ``shape`` (in ``order``) from ``blob``, whose length must match exactly."""
    # Checking the size first means a forged shape cannot make the decoder
    # allocate a huge array for a few bytes of data.
    expected = math.prod(shape) * dtype.itemsize
    if expected != len(blob):
        raise ChannelError(f"an array of shape {shape} and dtype {dtype} arrived with "
                           f"{len(blob)} bytes of data instead of {expected}.")
    if isinstance(blob, _ArenaBlob):      # read as a fresh copy already: no second one
        data = blob.arena.get(blob.offset, blob.size) if blob.size else bytearray()
        return np.frombuffer(data, dtype=dtype).reshape(shape, order=order)
    return np.frombuffer(blob, dtype=dtype).reshape(shape, order=order).copy(order=order)


class _Decoder:
    """Rebuilds values from a JSON tree and blobs, enforcing the same bounds."""

    def __init__(self, blobs: list[memoryview] | list[_ArenaBlob], allow_named: bool) -> None:
        self.blobs = blobs
        self.used: set[int] = set()
        self.allow_named = allow_named
        self.nodes = 0

    def decode(self, node: Any, depth: int = 0) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            raise ChannelError(f"the value holds more than {MAX_NODES} items.")
        if depth > MAX_DEPTH:
            raise ChannelError(f"the value is nested more than {MAX_DEPTH} levels deep.")
        if node is None or isinstance(node, (bool, str, float)):
            return node
        if isinstance(node, int):
            if node.bit_length() > MAX_INT_BITS:
                raise ChannelError(f"an int of {node.bit_length()} bits arrived (at most {MAX_INT_BITS}).")
            return node
        if not isinstance(node, dict):
            raise ChannelError(f"malformed value: an untagged {type_name(node)}.")
        if len(node) == 2 and "named" in node and "params" in node:
            return self._named(node, depth)
        if len(node) != 1 or next(iter(node)) not in _TAGS:
            raise ChannelError(f"malformed value: unknown tag {sorted(node)[:3]}.")
        tag, payload = next(iter(node.items()))
        if tag == "nd" and isinstance(payload, list) and len(payload) == 6 and payload[3] == "S":
            return self._view(payload)
        if tag in ("nd", "sc"):
            if not isinstance(payload, list) or len(payload) not in (3, 4) or payload[3:] not in ([], ["F"]):
                raise ChannelError("malformed value: an array without (index, dtype, shape[, order]).")
            dtype, shape = _dtype(payload[1]), _shape(payload[2])
            if tag == "sc" and shape:
                raise ChannelError("a NumPy scalar arrived with a non-scalar shape.")
            array = _array_from(self._take_blob(payload[0]), dtype, shape, "F" if payload[3:] else "C")
            return array if tag == "nd" else array[()]
        if not isinstance(payload, list):
            raise ChannelError(f"malformed value: {tag} without a list of items.")
        if tag == "tuple":
            return tuple(self.decode(item, depth + 1) for item in payload)
        if tag == "list":
            return [self.decode(item, depth + 1) for item in payload]
        return self._dict(payload, depth)

    def _view(self, payload: list) -> np.ndarray:
        """A view sent with its layout (``_view_layout``): a fresh array of the memory it spans and
        the view of it, checked to lie inside it without overlapping itself."""
        if not self.allow_named:
            raise ChannelError("an array laid out as a view arrived where only plain arrays are accepted.")
        dtype, shape, offset, strides = _dtype(payload[1]), _shape(payload[2]), payload[4], payload[5]
        if not (isinstance(offset, int) and not isinstance(offset, bool) and isinstance(strides, list)
                and len(strides) == len(shape)
                and all(isinstance(e, int) and not isinstance(e, bool) for e in strides)):
            raise ChannelError("malformed value: a view without an offset and one stride per axis.")
        blob = self._take_blob(payload[0])
        if len(blob) % dtype.itemsize:
            raise ChannelError(f"a view of dtype {dtype} arrived with {len(blob)} bytes of memory.")
        span = _array_from(blob, dtype, (len(blob) // dtype.itemsize,))
        low = offset + sum(min(0, (n - 1) * e) for n, e in zip(shape, strides))
        high = offset + sum(max(0, (n - 1) * e) for n, e in zip(shape, strides))
        if math.prod(shape) == 0 or low < 0 or high >= span.size or not _strides_ok(shape, strides):
            raise ChannelError(f"a view of shape {shape} arrived whose strides leave its memory or overlap.")
        return np.ndarray(shape, dtype, buffer=span, offset=offset * dtype.itemsize,
                          strides=[e * dtype.itemsize for e in strides])

    def _dict(self, pairs: list, depth: int) -> dict:
        out = {}
        for pair in pairs:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)):
                raise ChannelError("malformed value: a dict entry is not a (str key, value) pair.")
            out[pair[0]] = self.decode(pair[1], depth + 1)
        return out

    def _named(self, node: dict, depth: int) -> Named:
        if not self.allow_named:
            raise ChannelError("a named function arrived where only data is accepted.")
        params = self.decode(node["params"], depth + 1)
        if not isinstance(node["named"], str) or not isinstance(params, dict):
            raise ChannelError("malformed named function.")
        return Named(node["named"], **params)

    def _take_blob(self, index: Any) -> memoryview | _ArenaBlob:
        # Each blob may be used once, so a small message cannot decode into
        # many copies of one large array.
        if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(self.blobs) \
                or index in self.used:
            raise ChannelError("malformed value: bad array reference.")
        self.used.add(index)
        return self.blobs[index]


def _split_body(body: bytes, arena: MappedArena | FileArena | None = None
                ) -> tuple[dict, list[memoryview] | list[_ArenaBlob]]:
    """Parse the JSON header of a message body and cut out its blobs (in ``arena`` if it says so)."""
    if len(body) < _HEADER_LENGTH.size:
        raise ChannelError("malformed message: too short.")
    (header_length,) = _HEADER_LENGTH.unpack_from(body)
    start = _HEADER_LENGTH.size
    if header_length > MAX_HEADER_BYTES or start + header_length > len(body):
        raise ChannelError("malformed message: bad header length.")
    try:
        header = json.loads(body[start:start + header_length].decode("utf-8"))
    except (ValueError, RecursionError) as exc:    # includes UnicodeDecodeError
        raise ChannelError(f"malformed message header: {type(exc).__name__}.") from None
    if not (isinstance(header, dict) and isinstance(header.get("fields"), dict)
            and isinstance(header.get("values"), dict) and isinstance(header.get("blobs"), list)):
        raise ChannelError("malformed message: header without fields, values and blobs.")
    sizes = header["blobs"]
    if len(sizes) > MAX_NODES or any(not isinstance(n, int) or isinstance(n, bool) or n < 0 for n in sizes):
        raise ChannelError("malformed message: bad blob sizes.")
    if header.get("shared") is True:
        # Only the sizes come from the message: the offsets follow from them,
        # and every one must lie inside this side's own arena.
        offsets, end = arena_layout(sizes)
        if arena is None or end > len(arena) or start + header_length != len(body):
            raise ChannelError("malformed message: arrays in a shared arena that does not hold them.")
        return header, [_ArenaBlob(arena, offset, size) for offset, size in zip(offsets, sizes)]
    if start + header_length + sum(sizes) != len(body):
        raise ChannelError("malformed message: blob sizes do not match the body.")
    blobs, offset, view = [], start + header_length, memoryview(body)
    for size in sizes:
        blobs.append(view[offset:offset + size])     # views: no copy until the array is built
        offset += size
    return header, blobs


def unpack(body: bytes, *, allow_named: bool, arena: MappedArena | FileArena | None = None
           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Decode a message body (without its frame length) into ``(fields, values)``.

    ``fields`` is the plain JSON data as sent (check its types before use);
    ``values`` holds the decoded channel values, always fresh copies (also of
    arrays that were in ``arena``). ``allow_named`` accepts ``Named``
    functions and arrays laid out as views, which only the worker should.
    """
    header, blobs = _split_body(body, arena)
    decoder = _Decoder(blobs, allow_named)
    values = {}
    for name, tree in header["values"].items():
        values[name] = decoder.decode(tree)
    return header["fields"], values


def check_value(value: Any, *, max_bytes: int) -> None:
    """Raise ``ChannelError`` if ``value`` could not be sent."""
    pack({}, {"value": value}, max_bytes=max_bytes)


# -- blocking frame I/O (used by the worker) --------------------------------

def _read_exactly(fd: int, count: int) -> bytes | None:
    chunks, remaining = [], count
    while remaining:
        chunk = os.read(fd, min(remaining, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, max_bytes: int) -> bytes | None:
    """Read one framed message body from ``fd``; ``None`` at end of file."""
    prefix = _read_exactly(fd, FRAME.size)
    if prefix is None:
        return None
    (length,) = FRAME.unpack(prefix)
    if length > max_bytes:
        raise ChannelError(f"a message of {length} bytes arrived (at most {max_bytes}).")
    return _read_exactly(fd, length)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (a blocking pipe)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]

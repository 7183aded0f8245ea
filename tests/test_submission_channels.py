"""Can one submission pass anything to the next one graded? A sender and a receiver, in one batch.

The white-box red team scored 20/20 with a blank notebook and a receiver:
fork-server workers shared a network namespace, and the TIME_WAIT entries
a sender's connections left in ``/proc/net/tcp`` (they outlive it by a
minute) carried its code to the next submission. Here the sender encodes a
working ``softmax`` in the ports of such connections, in abstract Unix
socket names and in SysV objects; the receiver, graded next by the same
grading process (one worker, so the same fork server), decodes whatever it
finds and answers with it. It must score what the untouched notebook scores.
"""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.build import build
from tests.adversarial import AttackContext, attacked, subprocess_env, write_zip, zip_members

pytestmark = pytest.mark.slow

PAYLOAD = (b"import numpy as np\n"
           b"def softmax(x, axis=-1):\n"
           b"    e = np.exp(x - np.max(x, axis=axis, keepdims=True))\n"
           b"    return e / e.sum(axis=axis, keepdims=True)\n")

#: One byte per connection: the server's port is 20000 + 256 * index + byte; the client
#: closes first, so the entry in TIME_WAIT (state 06) names that port for a minute.
SENDER = r'''
import ctypes, socket
_PAYLOAD = __PAYLOAD__
_left = []
for _i, _b in enumerate(_PAYLOAD):
    try:
        _server = socket.socket()
        _server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        _server.bind(("127.0.0.1", 20000 + 256 * _i + _b))
        _server.listen(1)
        _client = socket.create_connection(_server.getsockname())
        _conn, _ = _server.accept()
        _client.close()
        _conn.close()
        _server.close()
        _left.append(_i)
    except OSError as _e:     # a port taken by chance: that byte is lost, the rest still go
        _left.append(type(_e).__name__)
try:      # SysV: a segment keyed by a fixed number, holding the payload
    _libc = ctypes.CDLL(None, use_errno=True)
    _libc.shmat.restype = ctypes.c_void_p
    _id = _libc.shmget(0x4C4D5345, 4096, 0o1000 | 0o666)
    if _id >= 0:
        ctypes.memmove(_libc.shmat(_id, None, 0), _PAYLOAD + b"\0", len(_PAYLOAD) + 1)
except OSError:
    pass
print("sender left", _left[-3:], flush=True)
'''

RECEIVER = r'''
import ctypes
_REF = {}
def _decode_time_wait():
    found = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            port = int(fields[2].split(":")[-1], 16)     # the server's side, seen from the client
            if fields[3] == "06" and port >= 20000:
                found[(port - 20000) // 256] = (port - 20000) % 256
    return bytes(found[i] for i in range(len(found)) if i in found)
def _decode_sysv():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    ident = libc.shmget(0x4C4D5345, 0, 0)
    if ident < 0:
        return b""
    return ctypes.string_at(libc.shmat(ident, None, 0))
for _source in (_decode_time_wait, _decode_sysv):
    try:
        _code = _source()
        if _code:
            exec(_code.decode(errors="replace"), _REF)
            print("receiver decoded", len(_code), "bytes", flush=True)
    except BaseException as _e:
        print("receiver", _source.__name__, type(_e).__name__, flush=True)
'''


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    (result,) = build(["lm-head"], tmp_path_factory.mktemp("dist"), None, verify=False)
    return result


def test_nothing_a_submission_leaves_reaches_the_next_one(built, tmp_path):
    stub = nbformat.read(built.student, as_version=4)
    ctx = AttackContext("lmchannel", 9, ())
    folder = tmp_path / "class"
    folder.mkdir()
    sender = attacked(stub, ctx, SENDER.replace("__PAYLOAD__", repr(PAYLOAD)))
    receiver = attacked(stub, ctx, RECEIVER, {"softmax": "    f = _REF.get('softmax')\n"
                                                         "    return f(x, axis) if callable(f) else None\n"})
    # Graded in name order by one grading process: the sender first, then the receiver.
    write_zip(zip_members(sender), folder / "a_sender.zip")
    write_zip(zip_members(receiver), folder / "b_receiver.zip")
    write_zip(zip_members(stub), folder / "c_untouched.zip")
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a", str(built.autograder_zip),
                          "-o", str(out), "--workers", "1", "--timeout", "20"],
                         env=subprocess_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    with open(out / "gradebook.csv", newline="") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    assert book["b_receiver"]["status"] == "graded"
    received = (out / "students" / "b_receiver" / "results.json").read_text()
    assert "receiver decoded" not in received
    assert float(book["b_receiver"]["total"]) == float(book["c_untouched"]["total"]), received[-2000:]

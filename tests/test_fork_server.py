"""Workers forked from one sandbox: as separate from each other as freshly started ones?"""
import os
import signal
import time

import numpy as np
import pytest

from autograder.runtime.sandbox import SandboxSession, procs
from autograder.runtime.sandbox import isolation as iso
from autograder.runtime.sandbox.forkserver import ForkServer
from autograder.runtime.sandbox.limits import Limits

pytestmark = pytest.mark.skipif(not iso.running_as_root() or iso.probe_bwrap() is not None,
                                reason="the fork server needs root and bubblewrap")

LIMITS = Limits(wall_seconds_per_call=3.0)

PROBE = """
import builtins, ctypes, os
left = getattr(builtins, 'left_behind', None)
builtins.left_behind = 1
libc = ctypes.CDLL(None, use_errno=True)
def arena():
    for line in open('/proc/self/maps'):
        if 'lmhead-arena' in line:
            return int(line.split('-')[0], 16)
def state():
    def listing(path):
        return sorted(os.listdir(path))
    status = open('/proc/self/status').read()
    caps = [line.split()[1] for line in status.splitlines() if line.startswith(('CapEff', 'CapPrm'))]
    no_new_privs = [line.split()[1] for line in status.splitlines() if line.startswith('NoNewPrivs')]
    return {'left': left, 'uid': os.getuid(), 'tmp': listing('/tmp'), 'shm': listing('/dev/shm'),
            'work': listing('.'), 'caps': caps, 'nnp': no_new_privs,
            'ipc': libc.shmget(0x4C4D, 0, 0), 'arena': arena() and ctypes.string_at(arena(), 6).hex(),
            'net': os.readlink('/proc/self/ns/net'), 'unix': open('/proc/net/unix').read().count('lmhead-left')}
def leave_things():
    open('/tmp/left', 'w').write('secret')
    open('/dev/shm/left', 'w').write('secret')
    open('left', 'w').write('secret')
    made = libc.shmget(0x4C4D, 4096, 0o1000 | 0o666)       # IPC_CREAT: refused to student code
    assert made == -1 and ctypes.get_errno() == 1, (made, ctypes.get_errno())
    import socket
    global held
    held = socket.socket(socket.AF_UNIX)
    held.bind(b'\\0lmhead-left')          # an abstract name: no file, only the network namespace
    ctypes.memmove(arena(), b'secret', 6)
    if os.fork() == 0:                      # a background process that outlives the call
        os.setsid()
        while True:
            pass
    return os.getuid()
def poke(pid):
    found = []
    try:
        os.kill(pid, 0)
        found.append('signal')
    except OSError:
        pass
    for part in ('mem', 'environ', 'fd'):
        try:
            os.listdir(f'/proc/{pid}/{part}') if part == 'fd' else open(f'/proc/{pid}/{part}', 'rb').read(1)
            found.append(part)
        except OSError:
            pass
    return found
def spin():
    while True:
        pass
def leave():
    os._exit(3)
"""


@pytest.fixture
def server():
    fs = ForkServer(LIMITS)
    assert fs.usable
    yield fs
    fs.close()


def test_each_worker_starts_clean_and_leaves_nothing(server):
    seen = []
    for _ in range(3):
        with SandboxSession(PROBE, LIMITS, warm=server) as session:
            assert session.start().ok
            before = session.call("state").value
            uid = session.call("leave_things").value
            after = session.call("state").value
            assert after["tmp"] == ["left"] and after["shm"] == ["left"] and "left" in after["work"]
            assert after["arena"] == b"secret".hex() and after["unix"] == 1
            seen.append(before)
        # the background process died with the session
        assert procs.of_uid(uid) == []
    for state in seen:
        assert state["left"] is None
        assert state["tmp"] == [] and state["shm"] == [] and state["work"] == ["submission.py"]
        assert state["ipc"] == -1                  # no shared memory segment of an earlier worker
        assert state["unix"] == 0                  # no socket name of an earlier worker
        assert state["arena"] == "00" * 6          # a fresh arena, not an earlier worker's
        assert set(state["caps"]) == {"0000000000000000"} and state["nnp"] == ["1"]
    assert len({state["uid"] for state in seen}) == 3 and 0 not in {state["uid"] for state in seen}
    # each worker has a network namespace of its own, not the server's: no port, TIME_WAIT
    # entry or socket name of one submission is visible to the next (the numbers of ended
    # namespaces are reused, so they are compared with the server's, not with each other)
    server_net = os.readlink(f"/proc/{server._host_pid}/ns/net")
    assert all(state["net"] != server_net for state in seen)


def test_the_worker_cannot_touch_the_server_or_the_sandbox_init(server):
    with SandboxSession(PROBE, LIMITS, warm=server) as session:
        for pid in (1, 2):
            assert session.call("poke", pid).value == []


def test_timeouts_and_crashes_restart_through_the_server(server):
    with SandboxSession(PROBE, LIMITS, warm=server) as session:
        first = session.call("state").value["uid"]
        stuck = session.call("spin", timeout=1.0)
        assert stuck.timed_out and stuck.error.kind == "timeout"
        assert session.call("state").value["uid"] != first
        crashed = session.call("leave")
        assert crashed.error.kind == "crashed" and "code 3" in crashed.error.message
        assert session.call("state").value["left"] is None


def test_a_dead_server_is_replaced(server):
    with SandboxSession("def f(x):\n    return x + 1\n", LIMITS, warm=server) as session:
        assert session.call("f", np.ones(2)).value.tolist() == [2.0, 2.0]
    bwrap = server._proc.pid
    os.killpg(bwrap, signal.SIGKILL)
    time.sleep(0.2)
    with SandboxSession("def f(x):\n    return x + 1\n", LIMITS, warm=server) as session:
        assert session.call("f", np.ones(2)).value.tolist() == [2.0, 2.0]
    assert server._proc.pid != bwrap


def test_closing_stops_the_sandbox(server):
    with SandboxSession("def f():\n    return 1\n", LIMITS, warm=server) as session:
        assert session.call("f").value == 1
    inner = server._host_pid
    server.close()
    assert inner is not None
    assert not os.path.exists(f"/proc/{inner}") or open(f"/proc/{inner}/stat").read().split()[2] == "Z"
    assert server.take("bwrap", LIMITS) is None


def test_other_levels_and_limits_start_their_own_workers():
    assert ForkServer(LIMITS, isolation="rlimits").take("rlimits", LIMITS) is None
    fs = ForkServer(LIMITS)
    try:
        assert fs.take("bwrap", Limits()) is None     # not the limits it was made for
    finally:
        fs.close()

"""Does a worker started ahead of time behave exactly like a fresh one, and leave nothing behind?"""
import os

import numpy as np

from autograder.runtime.sandbox import SandboxSession, WarmStart


def test_each_session_gets_its_own_fresh_worker():
    warm = WarmStart()
    try:
        seen = []
        for value in (1, 2, 3):
            code = (f"import builtins, os\nleft = getattr(builtins, 'left_behind', None)\n"
                    f"builtins.left_behind = {value}\n"
                    f"open('/tmp/mark', 'a').write('x')\n"
                    f"def f(x):\n    return x + {value}\n"
                    f"def state():\n    return [left, len(open('/tmp/mark').read()), os.getpid()]\n")
            with SandboxSession(code, warm=warm) as session:
                assert session.call("f", np.zeros(2)).value.tolist() == [value, value]
                seen.append(session.call("state").value)
        # nothing from an earlier submission is visible to a later one
        assert all(left is None and marks == 1 for left, marks, _ in seen)
    finally:
        warm.close()


def test_closing_stops_the_spare_worker():
    warm = WarmStart()
    with SandboxSession("def f():\n    return 1\n", warm=warm) as session:
        assert session.call("f").value == 1
    spare = warm._spare
    assert spare is not None and spare.alive()
    pid = spare.resources.proc.pid
    warm.close()
    assert not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z"

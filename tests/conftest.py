"""Shared pytest configuration: the ``slow`` marker gates end-to-end otter runs, and the checkout
is closed to other users while the tests run as root."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The checkout's mode before the session, kept by the controller to restore it.
_STASH = pytest.StashKey[int]()


def _is_worker(config) -> bool:
    """True in a parallel worker process (pytest-xdist), where the controller owns the checkout's mode."""
    return hasattr(config, "workerinput")


def pytest_configure(config):
    """The tests that grade below bubblewrap run student code as another uid, which the grader lets
    read nothing of the references: so the checkout under test must be unreadable to it wherever CI
    clones it (the runs also cover the folder holding it, except where the Python running them
    lives there too). Done once, by the process that outlives every worker; restored at the end."""
    config.addinivalue_line("markers", "slow: runs otter end to end (seconds per test)")
    if os.geteuid() != 0 or _is_worker(config):
        return
    mode = ROOT.stat().st_mode & 0o7777
    config.stash[_STASH] = mode
    ROOT.chmod(mode & ~0o077)


def pytest_unconfigure(config):
    mode = config.stash.get(_STASH, None)
    if mode is not None:
        ROOT.chmod(mode)

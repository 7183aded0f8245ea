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


#: The files whose tests take minutes (measured with ``--durations``), longest first. The test
#: processes take whole files in collection order, so a long file collected last leaves one process
#: working alone at the end while the others wait: these are collected first instead.
LONGEST_FILES = ("test_question_bank_stress_full_1.py", "test_question_bank_stress_full_2.py", "test_honest.py",
                 "test_public_checks.py", "test_pinned_environment.py", "test_adversarial.py", "test_student_setup.py",
                 "test_zip_install.py", "test_question_bank_mistakes.py", "test_real_code_corpora.py",
                 "test_blind_corpora.py")


def pytest_collection_modifyitems(session, config, items):
    """Collect the longest files first (a stable sort: every file's own order is kept)."""
    rank = {name: index for index, name in enumerate(LONGEST_FILES)}
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FILES)))

"""Shared pytest configuration: the ``slow`` marker gates end-to-end otter runs, and the checkout
(with the references installed beside the Python running the tests) is closed to other users while
the tests run as root."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: The checkout's mode before the session, kept by the controller to restore it.
_STASH = pytest.StashKey[int]()
#: The modes of the installed references' files and folders that others could read, to restore them.
_INSTALLED = pytest.StashKey[dict]()


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
    config.stash[_INSTALLED] = _close_installed_references()


def _close_installed_references() -> dict[Path, int]:
    """``chmod o-rwx`` on the references installed outside the checkout (``pip install .`` copies the
    ``solutions`` package into the environment's site-packages), as the grader's refusal at the user
    level tells an instructor to do. An environment made in a folder others may enter (``python -m
    venv /tmp/venv``) leaves them readable, and every run at the user level is then refused; CI's
    environment sits in a 0700 folder of ``mktemp -d``, where they were closed already."""
    from autograder.runtime.sandbox.policy import reference_locations
    changed: dict[Path, int] = {}
    for place in reference_locations():
        place = place.resolve()
        if not place.exists() or place == ROOT or ROOT in place.parents:
            continue                          # the checkout is closed above
        entries = [place]
        if place.is_dir():
            for folder, dirs, files in os.walk(place):
                entries += [Path(folder) / name for name in (*dirs, *files)]
        for entry in entries:
            mode = entry.lstat().st_mode & 0o7777
            if mode & 0o007 and not entry.is_symlink():
                changed[entry] = mode
                entry.chmod(mode & ~0o007)
    return changed


def pytest_unconfigure(config):
    mode = config.stash.get(_STASH, None)
    if mode is not None:
        ROOT.chmod(mode)
    for entry, mode in config.stash.get(_INSTALLED, {}).items():
        entry.chmod(mode)


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

"""Where the templates and assignment specs live, in a checkout or an install.

In a checkout (and an editable install) they are the top-level ``templates/``
and ``assignments/`` folders; a regular install copies them into the
``autograder`` package (see ``setup.py``).
"""
from __future__ import annotations

from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    for candidate in (_PACKAGE_DIR.parent / name, _PACKAGE_DIR / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"the grader's {name}/ folder is missing next to {_PACKAGE_DIR}: "
                            "reinstall the package (pip install .)")


def templates_dir() -> Path:
    """Folder holding the jinja2 templates."""
    return _data_dir("templates")


def assignments_dir() -> Path:
    """Folder holding one sub-folder per built-in assignment."""
    return _data_dir("assignments")

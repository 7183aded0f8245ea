"""Importing a package's modules so that their registration decorators run."""
from __future__ import annotations

import importlib
import pkgutil


def import_submodules(package_name: str) -> None:
    """Import every module of ``package_name`` whose name does not start with ``_``, in name order."""
    package = importlib.import_module(package_name)
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{info.name}")

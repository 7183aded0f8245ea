"""The versions the autograder zip's environment pins: those the build verified with.

A hidden test's verdict and message depend on the packages that compute and judge the
student's values: NumPy (the student's arithmetic and the references', rounding, which
mistakes a wrong value matches), pytest (collecting and running the hidden suite) and
nbformat (reading the submitted notebook), besides otter-grader, which otter pins itself.
Left unpinned, Gradescope's image resolved a newer NumPy than the build's and named an
extra mistake in nine tests that local grading did not. So the zip's environment pins
each to the version installed where the build ran (read from the installed
distributions, never typed in), and its Python to the build's major.minor version:
conda installs that Python whatever the image's own is, and every pinned wheel exists
for it, since the build ran on it.
"""
from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version

from autograder.runtime.errors import BuildError

#: The distributions the verdicts depend on (otter-grader is pinned by otter itself).
VERDICT_PACKAGES: tuple[str, ...] = ("numpy", "pytest", "nbformat")


def verified_versions() -> dict[str, str]:
    """Each verdict package's version installed here, where the build runs and verifies."""
    found = {}
    for name in VERDICT_PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            raise BuildError(f"{name} is not installed where the build runs: the autograder zip pins the "
                             f"version the build verified with; install the grader's requirements.") from None
    return found


def pinned_requirements() -> list[str]:
    """``name==version`` for each verdict package, as pip reads them."""
    return [f"{name}=={v}" for name, v in verified_versions().items()]


def python_version() -> str:
    """The build's Python as ``major.minor``: the zip's environment installs that Python."""
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def pins_summary() -> str:
    """One line for the build's output: what the zip pins, and why."""
    pins = ", ".join([f"python={python_version()}", *pinned_requirements()])
    return (f"autograder zip pins {pins}: the versions this build verified with (the hidden tests' "
            "verdicts depend on them)")

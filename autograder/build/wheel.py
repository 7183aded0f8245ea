"""A wheel of the grading runtime, shipped inside the autograder zip.

Gradescope builds its grading image from the zip alone; the trusted runner
(the otter plugin, the sandbox, the hidden-suite engine) has to be
installable from it. The wheel holds exactly the runtime (see
``contents.py``): no reference, no hidden test, no secret, since whatever it
installs is readable by every user of the machine. It is written directly
(a zip with a ``.dist-info`` folder), so building it needs neither the
project's source tree nor network access.
"""
from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import autograder
from autograder.build.contents import runtime_files
from autograder.build.pins import pinned_requirements
from autograder.build.zips import write_zip

DIST_NAME = "lmhead_grader_runtime"

#: Besides the verdict packages, pinned to the build's versions (``pins.py``).
_REQUIRES = ["PyYAML>=6.0", "otter-grader>=7.0.0,<7.1"]


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def runtime_wheel_name() -> str:
    """File name of the grading-runtime wheel shipped in the zip."""
    return f"{DIST_NAME}-{autograder.__version__}-py3-none-any.whl"


def build_runtime_wheel(dest_dir: Path) -> Path:
    """Write the runtime wheel into ``dest_dir`` and return its path."""
    version = autograder.__version__
    dist_info = f"{DIST_NAME}-{version}.dist-info"
    members = runtime_files()
    metadata = "\n".join(["Metadata-Version: 2.1", f"Name: {DIST_NAME}", f"Version: {version}",
                          "Summary: Grading runtime of the LM-head grader (sandboxed trusted grading)",
                          "Requires-Python: >=3.10", *[f"Requires-Dist: {r}" for r in [*pinned_requirements(), *_REQUIRES]]]) + "\n"
    wheel = "Wheel-Version: 1.0\nGenerator: lmhead-grader\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    members += [(f"{dist_info}/METADATA", metadata.encode()), (f"{dist_info}/WHEEL", wheel.encode())]
    record = "\n".join([_record_line(n, d) for n, d in members] + [f"{dist_info}/RECORD,,"]) + "\n"
    members.append((f"{dist_info}/RECORD", record.encode()))
    dest_dir.mkdir(parents=True, exist_ok=True)
    path = dest_dir / runtime_wheel_name()
    write_zip(path, ((name, data, 0o644 << 16) for name, data in members))
    return path

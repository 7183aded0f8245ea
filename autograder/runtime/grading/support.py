"""The autograder's secret half: the support folder shipped inside the zip.

``grader build`` puts everything that must stay out of students' reach in
one folder of the autograder zip, ``files/lmhead_support/``:

- ``hidden/test_<question>.py``: the hidden tests;
- ``solutions/``: the reference solutions the hidden tests compare with;
- ``mistakes.py``: the assignment's catalogue of known mistakes;
- ``hidden_config.json``: the assignment, its questions and functions, each
  hidden test's points, and the secret that, mixed with a submission, draws
  that submission's hidden inputs;
- ``wheels/``: the grading runtime (this package), which holds no secret.

Under ``grader grade`` the folder is unpacked into a private temporary
directory; under ``otter run`` and on Gradescope otter has unpacked it and
the plugin makes its parent folder unreadable to other users before any
student code runs.
"""
from __future__ import annotations

import functools
import hashlib
import io
import json
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autograder.runtime.class_probes import ClassProbes, capture_class_probes
from autograder.runtime.catalogue import CATALOGUE_FILE, Catalogue, load_catalogue
from autograder.runtime.errors import GraderError
from autograder.runtime.hidden_suite import HiddenSuite, hidden_test_path

#: The support folder's name inside the zip's ``files/`` (and so next to the submission under otter).
SUPPORT_DIR = "lmhead_support"
SUPPORT_PREFIX = f"files/{SUPPORT_DIR}/"
CONFIG_NAME = "hidden_config.json"
#: What the graders unpack from the support folder: the wheel is for installing, not grading.
_GRADING_PARTS = ("hidden/", "solutions/", CATALOGUE_FILE, CONFIG_NAME)


class AutograderError(GraderError):
    """The autograder zip is missing, unreadable or not one built by ``grader build``."""


@dataclass(frozen=True, eq=False)
class LoadedAutograder:
    """The hidden suite of one built assignment, unpacked for the trusted grader."""

    assignment: str
    folder: Path
    secret: bytes
    questions: tuple[str, ...]
    functions: dict[str, tuple[str, ...]]
    items: dict[str, tuple[tuple[str, float], ...]]
    digest: str
    solutions_module: str = "solutions"
    #: Hashes of the lesson-workflow cells the build added (see ``grading.demo_cells``).
    demo_cells: frozenset[str] = frozenset()
    #: Functions of questions the course config switched off (their mistakes are not loaded).
    left_out_functions: tuple[str, ...] = ()

    @property
    def possible(self) -> float:
        return round(sum(p for items in self.items.values() for _, p in items), 6)

    @property
    def student_functions(self) -> tuple[str, ...]:
        return tuple(f for q in self.questions for f in self.functions.get(q, ()))

    @property
    def hidden_paths(self) -> list[Path]:
        """The hidden test module of each question, in question order."""
        return [hidden_test_path(self.folder, q) for q in self.questions]

    def seed_for(self, submission_digest: str) -> int:
        """The hidden inputs' seed for a submission whose code hashes to ``submission_digest``.

        A keyed hash of the build's secret and the submission: the same code
        always meets the same inputs (a regrade is identical), other code
        meets others, and without the secret nobody can tell which.
        """
        keyed = hashlib.blake2b(submission_digest.encode(), key=self.secret[:64], digest_size=16)
        return int.from_bytes(keyed.digest(), "big")

    @functools.cached_property
    def catalogue(self) -> Catalogue:
        self._reference_path()
        return load_catalogue(self.folder, self.assignment, self.student_functions, self.solutions_module,
                              self.left_out_functions)

    @functools.cached_property
    def suite(self) -> HiddenSuite:
        """The hidden suite, collected once."""
        self._reference_path()
        return HiddenSuite(self.hidden_paths, self.items, self.catalogue)

    @functools.cached_property
    def class_probes(self) -> ClassProbes:
        """The class's shared probes (``class_probes``): made once, before the grading processes fork."""
        suite = self.suite
        return capture_class_probes(self.assignment, suite.cases, self.functions, self.catalogue.reference)

    def _reference_path(self) -> None:
        # The hidden tests and the catalogue import ``solutions``: the copy
        # shipped beside them, wherever the grader itself was installed from.
        folder = str(self.folder)
        if folder not in sys.path:
            sys.path.insert(0, folder)


def load_autograder(zip_path: str | Path, dest: str | Path) -> LoadedAutograder:
    """Unpack the support folder of ``zip_path`` into ``dest`` and read its config."""
    zip_path, dest = Path(zip_path), Path(dest)
    try:
        data = zip_path.read_bytes()
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (OSError, zipfile.BadZipFile) as exc:
        raise AutograderError(f"{zip_path} is not a readable autograder zip ({exc}); "
                              "pass the autograder.zip written by `grader build`.") from None
    with zf:
        names = [n for n in zf.namelist() if n.startswith(SUPPORT_PREFIX)
                 and n[len(SUPPORT_PREFIX):].startswith(_GRADING_PARTS)]
        if SUPPORT_PREFIX + CONFIG_NAME not in names:
            raise AutograderError(f"{zip_path} holds no {SUPPORT_PREFIX}{CONFIG_NAME}: it was not built by "
                                  "this version of `grader build`. Rebuild it with `grader build`.")
        for name in names:
            relative = PurePosixPath(name[len(SUPPORT_PREFIX):])
            if ".." in relative.parts or name.endswith("/"):
                continue
            target = dest.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(zf.read(name))
    return load_support_dir(dest, hashlib.sha256(data).hexdigest())


def load_support_dir(support: str | Path, digest: str = "") -> LoadedAutograder:
    """Read an unpacked support folder (``hidden_config.json``, ``hidden/``, ...)."""
    support = Path(support)
    try:
        config = json.loads((support / CONFIG_NAME).read_text(encoding="utf-8"))
        questions = tuple(config["questions"])
        items = {q: tuple((test, float(points)) for test, points in config["items"][q]) for q in questions}
        functions = {q: tuple(config["functions"][q]) for q in questions}
        secret = bytes.fromhex(config["secret"])
        if len(secret) < 16:
            raise ValueError("the secret is shorter than 16 bytes")
        demos = frozenset(d for d in config.get("demo_cells", []) if isinstance(d, str))
        left_out = tuple(str(f) for f in config.get("left_out_functions", []))
        return LoadedAutograder(config["assignment"], support, secret, questions, functions, items, digest,
                                str(config.get("solutions_module", "solutions")), demos, left_out)
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise AutograderError(f"{support / CONFIG_NAME} is missing or malformed ({exc}); "
                              "rebuild the autograder with `grader build`.") from None

"""Catalogues of known student mistakes, one per assignment.

An assignment's folder may hold ``mistakes.py``: deliberately wrong
implementations of its student functions, each with the function's exact
signature and a short explanation written for the student. The grader's
diagnosis (``autograder.runtime.diagnosis``) runs them on the inputs of a
failed hidden test; when one reproduces the student's output, the feedback
names the mistake.

A catalogue module marks its entries with :func:`mistake`; the slug is the
function's name in kebab case unless ``name=`` is given::

    @mistake(function="perplexity", title="...", explanation="...")
    def perplexity_exp_of_sum(token_probs): ...

The catalogue reuses the references for the steps a mistake gets right, so
it ships only inside the autograder zip's support folder, next to the hidden
tests, where student code cannot read it.
"""
from __future__ import annotations

import hashlib
import importlib
import importlib.util
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from autograder.runtime.errors import GraderError

#: File name of an assignment's catalogue, in its folder and in the zip's support folder.
CATALOGUE_FILE = "mistakes.py"

_SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
#: Attribute under which ``mistake`` records an entry on its implementation.
_ENTRY = "__catalogued_mistake__"


class CatalogueError(GraderError):
    """A catalogue module is malformed: an unknown function, a bad or repeated slug."""


@dataclass(frozen=True)
class Mistake:
    """One known mistake.

    Attributes:
        name: kebab-case slug, unique within its catalogue.
        function: the student function this implementation replaces.
        title: a few words naming the mistake (used as a feedback heading).
        explanation: 1-3 sentences for the student: what went wrong and why,
            without giving the corrected code.
        implementation: the wrong implementation, same signature as ``function``.
        non_finite: the mistake *is* an overflow, underflow or 0/0 (a missing
            max subtraction, a missing guard): only such mistakes may explain a
            result with no finite value at all, which carries no other evidence.
    """

    name: str
    function: str
    title: str
    explanation: str
    implementation: Callable
    non_finite: bool = False


def _slug_of(python_name: str) -> str:
    return python_name.strip("_").replace("_", "-")


def mistake(*, function: str, title: str, explanation: str, name: str | None = None,
            non_finite: bool = False) -> Callable[[Callable], Callable]:
    """Decorator marking an implementation as a known mistake of ``function``.

    Returns the implementation unchanged (mistakes stay plain functions);
    :func:`load_catalogue` collects the marked ones and checks ``function``
    against the assignment's functions.

    Raises:
        CatalogueError: a malformed slug, or an empty title or explanation
            (caught when the catalogue is loaded, not at grading time).
    """
    title = " ".join(title.split())
    explanation = " ".join(explanation.split())
    if not title or not explanation:
        raise CatalogueError(f"the mistake of {function!r} needs a title and an explanation")

    def register(implementation: Callable) -> Callable:
        slug = name or _slug_of(implementation.__name__)
        if not _SLUG.match(slug):
            raise CatalogueError(f"mistake slug {slug!r} is not kebab case (a-z, 0-9, single hyphens)")
        setattr(implementation, _ENTRY, Mistake(slug, function, title, explanation, implementation, non_finite))
        return implementation

    return register


@dataclass(frozen=True)
class Catalogue:
    """The known mistakes of one assignment, in the order its module defines them.

    ``solutions_module`` names the module of the assignment's reference
    solutions, which the diagnosis compares mistakes with.
    """

    assignment: str
    functions: tuple[str, ...]
    mistakes: dict[str, Mistake] = field(default_factory=dict)
    solutions_module: str = "solutions"

    def reference(self, function: str) -> Callable:
        """The reference implementation of one of the assignment's functions."""
        if function not in self.functions:
            raise ValueError(f"{function!r} is not a function of the assignment {self.assignment!r}")
        return getattr(importlib.import_module(self.solutions_module), function)

    def for_function(self, function: str) -> list[Mistake]:
        """The mistakes of one student function.

        Raises:
            ValueError: ``function`` is not one of the assignment's (a typo
                would otherwise silently disable the diagnosis).
        """
        if function not in self.functions:
            raise ValueError(f"{function!r} is not a function of the assignment {self.assignment!r}; "
                             f"its functions are {', '.join(self.functions)}")
        return [m for m in self.mistakes.values() if m.function == function]


def load_catalogue(folder: str | Path, assignment: str, functions: tuple[str, ...],
                   solutions_module: str = "solutions", left_out: tuple[str, ...] = ()) -> Catalogue:
    """The catalogue in ``folder/mistakes.py`` (an empty one if there is none).

    ``left_out`` are functions of questions the course config switched off:
    their mistakes are dropped, since no hidden test calls those functions.

    Raises:
        CatalogueError: an entry names a function the assignment does not
            have, or two entries share a slug.
    """
    path = Path(folder) / CATALOGUE_FILE
    catalogue = Catalogue(assignment, tuple(functions), solutions_module=solutions_module)
    if not path.is_file():
        return catalogue
    # One module name per file: a catalogue unpacked from an autograder zip must not
    # replace the assignment folder's own in sys.modules (or the other way round).
    where = hashlib.blake2b(str(path.resolve()).encode(), digest_size=6).hexdigest()
    module_name = "lmhead_catalogue_" + re.sub(r"\W", "_", assignment) + "_" + where
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module       # inspect.getsource finds entries through it
    spec.loader.exec_module(module)
    for value in vars(module).values():
        entry = getattr(value, _ENTRY, None)
        if not isinstance(entry, Mistake) or getattr(value, "__module__", None) != module_name:
            continue
        if entry.function in left_out:
            continue
        if entry.function not in catalogue.functions:
            raise CatalogueError(f"{path}: mistake {entry.name!r} replaces {entry.function!r}, which is not a "
                                 f"function of {assignment!r} (its functions: {', '.join(functions)})")
        if entry.name in catalogue.mistakes:
            raise CatalogueError(f"{path}: mistake slug {entry.name!r} is used twice; give one of them name=...")
        catalogue.mistakes[entry.name] = entry
    return catalogue

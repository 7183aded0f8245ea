"""An assignment's spec (``assignments/<name>/assignment.yaml``) as typed data."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from autograder.resources import assignments_dir
from autograder.runtime.catalogue import Catalogue, Mistake, load_catalogue
from autograder.runtime.errors import ConfigError


@dataclass(frozen=True)
class QuestionSpec:
    """One question: the functions the student writes and its default points.

    ``contracts`` maps a key to a sentence of the question's text: each requirement its hidden
    tests enforce (sizes, memory, dtypes, in-place changes, ...), which the question's template
    shows as ``{{ contract.<key> }}`` and each hidden test names with ``@pytest.mark.contract``.
    """

    name: str
    title: str
    functions: tuple[str, ...]
    points: float
    optional: bool = False
    contracts: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AssignmentSpec:
    """Everything the build needs to know about one assignment."""

    name: str
    title: str
    folder: Path
    solutions_module: str
    sizes: dict[str, int]
    public_seed: int
    intro: str
    questions: tuple[QuestionSpec, ...] = field(default_factory=tuple)

    def question(self, name: str) -> QuestionSpec:
        for q in self.questions:
            if q.name == name:
                return q
        raise KeyError(name)

    @property
    def functions(self) -> tuple[str, ...]:
        """Every student function of the assignment, in question order."""
        return tuple(f for q in self.questions for f in q.functions)

    def catalogue(self) -> Catalogue:
        """The assignment's known mistakes (``mistakes.py`` in its folder)."""
        return load_catalogue(self.folder, self.name, self.functions, self.solutions_module)


def _contracts(question: dict, assignment: str) -> dict[str, str]:
    """A question's ``contracts:`` mapping (key -> sentence), checked for shape."""
    raw = question.get("contracts") or {}
    where = f"assignment {assignment}, question {question.get('name')}: contracts"
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} should map a key to a sentence, got {type(raw).__name__}.")
    for key, sentence in raw.items():
        if not (isinstance(key, str) and key.isidentifier()) or not (isinstance(sentence, str) and sentence.strip()):
            raise ConfigError(f"{where}: {key!r} should be an identifier mapped to a non-empty sentence, "
                              f"got {sentence!r}.")
    return {key: " ".join(sentence.split()) for key, sentence in raw.items()}


def available_assignments() -> list[str]:
    """Names of the built-in assignments, sorted."""
    return sorted(p.name for p in assignments_dir().iterdir() if (p / "assignment.yaml").is_file())


def load_spec(name: str) -> AssignmentSpec:
    """Read ``assignments/<name>/assignment.yaml``; unknown names list the valid ones."""
    folder = assignments_dir() / name
    path = folder / "assignment.yaml"
    if not path.is_file():
        raise ConfigError(f"unknown assignment {name!r}; valid assignments: "
                          f"{', '.join(available_assignments())}")
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    questions = tuple(
        QuestionSpec(name=q["name"], title=q["title"], functions=tuple(q["functions"]),
                     points=float(q["points"]), optional=bool(q.get("optional", False)),
                     contracts=_contracts(q, name))
        for q in raw["questions"]
    )
    return AssignmentSpec(
        name=raw["name"], title=raw["title"], folder=folder,
        solutions_module=raw["solutions_module"], sizes=dict(raw["sizes"]),
        public_seed=int(raw["public_seed"]),
        intro=raw["intro"], questions=questions,
    )


def builtin_catalogues() -> dict[str, Catalogue]:
    """The catalogue of every built-in assignment, by assignment name."""
    return {name: load_spec(name).catalogue() for name in available_assignments()}


def all_mistakes() -> dict[str, Mistake]:
    """Every built-in catalogued mistake by slug (slugs are unique across assignments)."""
    merged: dict[str, Mistake] = {}
    for catalogue in builtin_catalogues().values():
        merged.update(catalogue.mistakes)
    return merged


def student_functions() -> dict[str, str]:
    """Every built-in student function, and the assignment it belongs to."""
    return {f: name for name in available_assignments() for f in load_spec(name).functions}

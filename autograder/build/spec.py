"""An assignment's spec (``assignments/<name>/assignment.yaml``) as typed data."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from autograder.errors import ConfigError
from autograder.resources import assignments_dir


@dataclass(frozen=True)
class QuestionSpec:
    """One question: the functions the student writes and its default points."""

    name: str
    title: str
    functions: tuple[str, ...]
    points: float
    optional: bool = False


@dataclass(frozen=True)
class AssignmentSpec:
    """Everything the build needs to know about one assignment."""

    name: str
    title: str
    folder: Path
    solutions_module: str
    sizes: dict[str, int]
    public_seed: int
    hidden_seed: int
    intro: str
    questions: tuple[QuestionSpec, ...] = field(default_factory=tuple)

    def question(self, name: str) -> QuestionSpec:
        for q in self.questions:
            if q.name == name:
                return q
        raise KeyError(name)


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
                     points=float(q["points"]), optional=bool(q.get("optional", False)))
        for q in raw["questions"]
    )
    return AssignmentSpec(
        name=raw["name"], title=raw["title"], folder=folder,
        solutions_module=raw["solutions_module"], sizes=dict(raw["sizes"]),
        public_seed=int(raw["public_seed"]), hidden_seed=int(raw["hidden_seed"]),
        intro=raw["intro"], questions=questions,
    )

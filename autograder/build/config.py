"""The course config file: what an instructor may change, validated up front.

A config is YAML like::

    course_title: "GPT from scratch"
    due_date: "Friday 5 pm"
    assignments:
      lm-head:
        points: {q4: 8}             # per-question points
        sizes: {B: 2, T: 6}         # tensor sizes of the worked example
        public_seed: 7              # inputs of the notebook and its public tests
        questions: {q6: false}      # optional questions in (true) or out (false)
        due_date: "Monday 9 am"     # overrides the course's due date

Every problem (unknown key, wrong type, unknown assignment or question, a
required question switched off) raises ``ConfigError`` naming the file, the
key and the valid choices, before anything is written.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from autograder.build.spec import AssignmentSpec, QuestionSpec, available_assignments, load_spec
from autograder.runtime.errors import ConfigError

DEFAULT_COURSE_TITLE = "GPT from scratch"

_COURSE_KEYS = {"course_title": str, "due_date": str, "assignments": dict}
_ASSIGNMENT_KEYS = {"points": dict, "sizes": dict, "public_seed": int, "questions": dict, "due_date": str}
#: Keys that earlier versions accepted, and what replaced them.
_RETIRED_KEYS = {"hidden_seed": "hidden inputs are now drawn from a secret the build makes for each "
                                "autograder zip, mixed with each submission; delete the key"}


@dataclass(frozen=True)
class AssignmentSettings:
    """One assignment's spec with the course config applied."""

    spec: AssignmentSpec
    course_title: str
    due_date: str
    sizes: dict[str, int]
    public_seed: int
    questions: tuple[QuestionSpec, ...]    # included questions, points resolved

    @property
    def name(self) -> str:
        return self.spec.name


def _type_name(kind: type) -> str:
    return {str: "text", dict: "a mapping", int: "a whole number"}.get(kind, kind.__name__)


def _check_keys(where: str, raw: dict, allowed: dict[str, type], source: str) -> None:
    for key, value in raw.items():
        if key in _RETIRED_KEYS:
            raise ConfigError(f"{source}: {where}.{key} is no longer used: {_RETIRED_KEYS[key]}.")
        if key not in allowed:
            raise ConfigError(f"{source}: unknown key {key!r} in {where}; valid keys: "
                              f"{', '.join(sorted(allowed))}")
        kind = allowed[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ConfigError(f"{source}: {where}.{key} should be {_type_name(kind)}, "
                              f"got {type(value).__name__} {value!r}")


def load_config(path: str | Path | None) -> dict[str, Any]:
    """Read and shape-check a config file; ``None`` gives the built-in defaults."""
    if path is None:
        return {}
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {path} does not exist: check the path given to --config")
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: the config should be a mapping of keys to values, "
                          f"got {type(raw).__name__}")
    source = str(path)
    _check_keys("the config", raw, _COURSE_KEYS, source)
    valid = available_assignments()
    for name, settings in raw.get("assignments", {}).items():
        if name not in valid:
            raise ConfigError(f"{source}: unknown assignment {name!r} under assignments; "
                              f"valid assignments: {', '.join(valid)}")
        if not isinstance(settings, dict):
            raise ConfigError(f"{source}: assignments.{name} should be a mapping, got {settings!r}")
        _check_keys(f"assignments.{name}", settings, _ASSIGNMENT_KEYS, source)
    raw["_source"] = source
    return raw


def _resolve(spec: AssignmentSpec, course: dict[str, Any]) -> AssignmentSettings:
    source = course.get("_source", "config")
    raw = course.get("assignments", {}).get(spec.name, {})
    where = f"{source}: assignments.{spec.name}"
    names = [q.name for q in spec.questions]

    for key in raw.get("points", {}):
        if key not in names:
            raise ConfigError(f"{where}.points: unknown question {key!r}; questions: {', '.join(names)}")
    for key, value in raw.get("points", {}).items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(f"{where}.points.{key} should be a positive number, got {value!r}")

    sizes = dict(spec.sizes)
    for key, value in raw.get("sizes", {}).items():
        if key not in sizes:
            raise ConfigError(f"{where}.sizes: unknown size {key!r}; sizes: {', '.join(sizes)}")
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 512:
            raise ConfigError(f"{where}.sizes.{key} should be a whole number from 1 to 512, got {value!r}")
        sizes[key] = value

    toggles = raw.get("questions", {})
    for key, value in toggles.items():
        if key not in names:
            raise ConfigError(f"{where}.questions: unknown question {key!r}; questions: {', '.join(names)}")
        if not isinstance(value, bool):
            raise ConfigError(f"{where}.questions.{key} should be true or false, got {value!r}")
        if not value and not spec.question(key).optional:
            optional = [q.name for q in spec.questions if q.optional] or ["none"]
            raise ConfigError(f"{where}.questions.{key}: this question is required and cannot be "
                              f"switched off; optional questions: {', '.join(optional)}")

    public_seed = raw.get("public_seed", spec.public_seed)

    points = raw.get("points", {})
    questions = tuple(
        QuestionSpec(q.name, q.title, q.functions, float(points.get(q.name, q.points)), q.optional, q.contracts)
        for q in spec.questions if toggles.get(q.name, True)
    )
    return AssignmentSettings(
        spec=spec,
        course_title=course.get("course_title", DEFAULT_COURSE_TITLE),
        due_date=raw.get("due_date", course.get("due_date", "")),
        sizes=sizes,
        public_seed=public_seed,
        questions=questions,
    )


def resolve_settings(names: list[str] | None, config_path: str | Path | None) -> list[AssignmentSettings]:
    """Settings for each named assignment (all built-in ones when ``names`` is empty)."""
    course = load_config(config_path)
    valid = available_assignments()
    for name in names or []:
        if name not in valid:
            raise ConfigError(f"unknown assignment {name!r}; valid assignments: {', '.join(valid)}")
    return [_resolve(load_spec(name), course) for name in (names or valid)]

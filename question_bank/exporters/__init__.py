"""Exporter registry: each format is a thin transform (bundle -> files) plus a write.

An exporter module defines ``transform(bundle) -> dict[str, str | bytes]``
and registers it with :func:`register_exporter`. The bundle is the JSON
data of :func:`question_bank.generate.build_bundle`; an exporter reads
nothing else. File names follow :func:`sheet_file_names`:

* one anonymous sheet: ``questions<suffix>``, plus companion files such as
  ``answer-key<suffix>`` for formats whose key is a separate document;
* one sheet per student: ``<student id><suffix>``, plus one combined
  ``answer-key<suffix>`` where the format has a key.

:func:`write_files` puts an anonymous sheet at the ``-o`` path and its
companions beside it (``week3.md`` and ``week3-answer-key.md``); a roster's
files go into the ``-o`` directory. :meth:`Exporter.as_text` is what
standard output shows.

Modules in this package are imported on first use, so adding a format is
adding a module.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from autograder.runtime.tolerances import QUESTION_RTOL
from question_bank._submodules import import_submodules
from question_bank.errors import QuestionBankError, UnknownFormatError
from question_bank.roster import safe_file_stem

Files = dict[str, "str | bytes"]
Transform = Callable[[dict[str, Any]], Files]
Writer = Callable[[Files, Path, bool], list[Path]]

ANSWER_KEY_STEM = "answer-key"
SINGLE_SHEET_STEM = "questions"


def write_files(files: Files, out: Path, per_student: bool) -> list[Path]:
    """Write exported files: into directory ``out`` for a roster, else at file ``out``.

    For one anonymous sheet the first file goes to ``out`` and each further
    file beside it, named ``<out stem>-<file stem><suffix>``.

    Raises:
        QuestionBankError: if the output cannot be written.
    """
    try:
        if per_student:
            out.mkdir(parents=True, exist_ok=True)
            targets = [out / name for name in files]
        else:
            out.parent.mkdir(parents=True, exist_ok=True)
            names = list(files)
            targets = [out] + [companion_path(out, name) for name in names[1:]]
        for target, content in zip(targets, files.values()):
            _write_one(target, content)
        return targets
    except OSError as exc:
        raise QuestionBankError(f"cannot write to {str(out)!r}: {exc}. Choose a writable -o path.") from exc


def companion_path(out: Path, name: str) -> Path:
    """Where file ``name`` of a sheet written at ``out`` goes: ``week3.md`` + ``answer-key.md``
    -> ``week3-answer-key.md``."""
    stem, dot, suffix = name.partition(".")
    return out.with_name(f"{out.stem}-{stem}{dot}{suffix}")


def _write_one(path: Path, content: str | bytes) -> None:
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


@dataclass(frozen=True)
class Exporter:
    """A registered export format.

    Attributes:
        name: the ``--format`` value.
        suffix: file suffix, with the dot.
        description: one line for help texts.
        transform: bundle -> ``{file name: content}``.
        write: puts the files on disk (default :func:`write_files`).
        joinable: whether several text files may be printed one after the
            other on standard output (true for Markdown; false for formats
            where two documents in one stream would be invalid).
    """

    name: str
    suffix: str
    description: str
    transform: Transform
    write: Writer = write_files
    joinable: bool = False

    def as_text(self, files: Files) -> str:
        """The files as one text for standard output.

        Raises:
            QuestionBankError: for binary output, or several files that
                cannot share one stream; the message says to pass ``-o``.
        """
        if any(isinstance(content, bytes) for content in files.values()):
            raise QuestionBankError(f"--format {self.name} writes a binary file; pass -o FILE{self.suffix}.")
        if len(files) > 1 and not self.joinable:
            raise QuestionBankError(
                f"--format {self.name} writes {len(files)} files ({', '.join(files)}); "
                f"pass -o FILE{self.suffix} and the others are written beside it.")
        return "\n".join(str(content) for content in files.values())


_EXPORTERS: dict[str, Exporter] = {}
_loaded = False


def register_exporter(name: str, suffix: str, description: str, write: Writer = write_files,
                      joinable: bool = False) -> Callable[[Transform], Transform]:
    """Decorator registering a transform function as the exporter ``name``."""
    def decorate(transform: Transform) -> Transform:
        if name in _EXPORTERS:
            raise ValueError(f"exporter {name!r} is registered twice")
        _EXPORTERS[name] = Exporter(name, suffix, description, transform, write, joinable)
        return transform
    return decorate


def exporters() -> dict[str, Exporter]:
    """All registered exporters by name, sorted."""
    global _loaded
    if not _loaded:
        import_submodules(__name__)
        _loaded = True
    return dict(sorted(_EXPORTERS.items()))


def get_exporter(name: str) -> Exporter:
    """The exporter called ``name``.

    Raises:
        UnknownFormatError: naming the available formats.
    """
    registry = exporters()
    if name not in registry:
        raise UnknownFormatError(f"unknown export format {name!r}; available: {', '.join(registry)}.")
    return registry[name]


def sheet_file_names(bundle: dict[str, Any], suffix: str) -> list[str]:
    """File name of each sheet, in sheet order (see the module docstring)."""
    if not bundle["personalised"]:
        return [SINGLE_SHEET_STEM + suffix]
    return [safe_file_stem(sheet["student_id"]) + suffix for sheet in bundle["sheets"]]


def sheet_rtol(sheet: dict[str, Any]) -> float:
    """The relative tolerance of the sheet's number answers (an exam may set its own), for intro texts."""
    return max((v["answer"]["rtol"] for v in sheet["variants"] if v["answer"]["kind"] == "float"),
               default=QUESTION_RTOL)


def points_note(variant: dict[str, Any]) -> str:
    """`` (4 points)`` after an exam slot's heading; empty outside an exam (no points set)."""
    if "points" not in variant:
        return ""
    points = variant["points"]
    return f" ({points:g} point{'' if points == 1 else 's'})"


def student_view(variant: dict[str, Any]) -> dict[str, Any]:
    """What a student may see of a variant: no answer, feedback, solution or seed.

    The seed is withheld too: with it and the public generator anyone could
    recompute the answer.
    """
    answer = variant["answer"]
    return {
        "family": variant["family"],
        "title": variant["title"],
        "stem": variant["stem"],
        "answer": {"kind": answer["kind"], "unit": answer["unit"], "log_space": answer["log_space"]},
        "choices": [{"id": c["id"], "text": c["text"]} for c in variant["choices"]],
        # an ordering's positions or a matching's items (their texts only: the key stays out)
        **({"slots": [{"text": slot["text"]} for slot in answer["slots"]]} if "slots" in answer else {}),
        **{k: variant[k] for k in ("slot", "points") if k in variant},
    }

"""The core generation API: variants, sheets, bundles and the ``generate`` command.

* :func:`generate_variant` — one variant of one family from one seed.
* :func:`generate_sheet` — ``n`` variants of each family from a root seed.
* :func:`build_bundle` — the sheets for a class (one per student, or one).
* :func:`run_generate` — what ``grader questions generate`` does: bundle,
  export, write.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from question_bank.errors import GenerationError, QuestionBankError, Redraw, RosterError, require_at_least_one
from question_bank.choices import known_mistakes
from question_bank.formatting import group_math_commas
from question_bank.misconceptions import misconception_ref
from question_bank.registry import Family, get_family, resolve_families
from question_bank.roster import read_roster_entries, safe_file_stem
from question_bank.seeding import student_seed, variant_seed
from question_bank.variant import (
    ARRANGEMENT_KINDS,
    CHOICE_IDS,
    SCHEMA_VERSION,
    Draft,
    Option,
    canonical,
    validate_variant,
)

#: A family may reject this many draws in a row before generation gives up;
#: every family rejects far less than one draw in ten.
MAX_REDRAWS = 200

#: Bundle layout version.
BUNDLE_SCHEMA = 1


def generate_variant(family: str, seed: int, part: str | None = None) -> dict[str, Any]:
    """Variant of ``family`` drawn from ``np.random.default_rng(seed)``.

    The same family, version and seed always give the same dict (and the
    same JSON bytes). ``part`` asks a multi-part family for that part of the
    seed's scenario; without it such a family's seed draws its part too.

    Raises:
        UnknownFamilyError: if the family does not exist.
        GenerationError: if the family keeps rejecting draws or returns an
            invalid variant (both are bugs in the family).
    """
    fam = get_family(family)
    if part is not None and part not in fam.parts:
        raise GenerationError(f"family {family!r} has no part {part!r}; its parts: {', '.join(fam.parts) or 'none'}")
    rng = np.random.default_rng(int(seed))
    draft = _draw(fam, rng, seed, part)
    variant = assemble(fam, int(seed), draft, rng)
    problems = validate_variant(variant)
    if problems:
        raise GenerationError(f"family {family!r} seed {seed} produced an invalid variant: {problems}")
    return variant


def generate_item(family: str, seed: int) -> list[dict[str, Any]]:
    """The variants one seed of ``family`` asks: every part of a multi-part family's scenario, in order,
    else the one variant."""
    fam = get_family(family)
    if not fam.parts:
        return [generate_variant(family, seed)]
    return [generate_variant(family, seed, part) for part in fam.parts]


def _draw(fam: Family, rng: np.random.Generator, seed: int, part: str | None = None) -> Draft:
    for _ in range(MAX_REDRAWS):
        try:
            return fam.build(rng) if part is None else fam.build_part(rng, part)
        except Redraw:
            continue
    raise GenerationError(f"family {fam.name!r} rejected {MAX_REDRAWS} draws in a row for seed {seed}")


def assemble(fam: Family, seed: int, draft: Draft, rng: np.random.Generator) -> dict[str, Any]:
    """Turn a draft into a variant dict: shuffle the options and give them ids.

    True/false options keep their True-then-False order (readers expect it);
    the answer's position still varies because the statement is true or
    false at random. All other options are shuffled with ``rng``, which makes
    the correct position uniform across seeds. Ordering and matching options
    come in the order the family printed them (it shuffles them itself, so the
    printed order of steps is never the key), and their key is already ids.
    """
    answer = draft.answer
    options = list(draft.options)
    if len(options) > len(CHOICE_IDS):
        raise GenerationError(f"family {fam.name!r} made {len(options)} options; at most {len(CHOICE_IDS)}")
    if answer.kind not in ("true_false",) + ARRANGEMENT_KINDS:
        options = [options[int(i)] for i in rng.permutation(len(options))]
    choices = []
    for choice_id, option in zip(CHOICE_IDS, options):
        choices.append({
            "id": choice_id,
            "text": option.text,
            "value": option.value,
            "correct": option.correct,
            "misconception": None if option.misconception is None else _ref(option.misconception),
            "feedback": option.feedback,
        })
    value: Any = answer.value
    if answer.kind == "single_choice":
        value = next(c["id"] for c in choices if c["correct"])
    elif answer.kind == "multiple_choice":
        value = sorted(c["id"] for c in choices if c["correct"])
    record = {"kind": answer.kind, "value": value, "display": answer.display, "rtol": answer.rtol,
              "atol": answer.atol, "unit": answer.unit, "log_space": answer.log_space}
    if answer.kind in ARRANGEMENT_KINDS:
        record["slots"] = list(answer.slots)
    if answer.kind == "ordering":
        record["rules"] = list(answer.rules)
    item_id = f"{fam.name}-v{fam.version}-{seed}"
    extra = {} if draft.part is None else {"part": {"item": item_id, **draft.part}}
    return canonical(_group_commas({
        **extra,
        "schema": SCHEMA_VERSION,
        "id": item_id if draft.part is None else f"{item_id}-{draft.part['label']}",
        "family": fam.name,
        "version": fam.version,
        "seed": seed,
        "title": fam.title,
        "tags": list(fam.tags) + [t for t in draft.tags if t not in fam.tags],
        "parameters": draft.parameters,
        "stem": draft.stem,
        "answer": record,
        "choices": choices,
        "mistakes": [_mistake_record(option, draft.mistakes)
                     for option in known_mistakes(_reference_value(draft), draft.mistakes)],
        "solution": draft.solution,
    }))


#: The texts of a variant that may hold math; their grouping commas become ``{,}``.
_TEXT_FIELDS = ("stem", "solution", "text", "feedback", "display")


def _group_commas(obj: Any) -> Any:
    """``obj`` with :func:`formatting.group_math_commas` applied to every text field, at any depth."""
    if isinstance(obj, dict):
        return {k: group_math_commas(v) if k in _TEXT_FIELDS and isinstance(v, str) else _group_commas(v)
                for k, v in obj.items()}
    if isinstance(obj, list):
        return [_group_commas(v) for v in obj]
    return obj


def _reference_value(draft: Draft) -> Any:
    """The value mistakes are compared with: the answer's, or the single correct option's."""
    if draft.answer.value is not None:
        return draft.answer.value
    correct = [option.value for option in draft.options if option.correct]
    return correct[0] if len(correct) == 1 else None


def _mistake_record(option: Option, candidates: Sequence[Option]) -> dict[str, Any]:
    """One known mistake as the variant stores it; ``also`` lists the other formulas that print the same
    text (two pairs of mistakes can give one value), so a reader's one-mistake links are all on record."""
    record = {"formula": option.formula, "value": option.value, "text": option.text,
              "misconception": _ref(option.misconception), "feedback": option.feedback}
    also = [other.formula for other in candidates
            if other.formula and other.formula != option.formula and other.text == option.text]
    if also:
        record["also"] = also
    return record


def _ref(misconception_id: str) -> dict[str, str]:
    try:
        return misconception_ref(misconception_id)
    except KeyError:
        raise GenerationError(f"unknown misconception id {misconception_id!r}; add it to "
                              "question_bank/misconceptions.py") from None


#: A set draws at most this many seeds per question asked before it reports that the
#: family has run out of new questions (a pool of k stems is covered in about k ln k draws).
DRAWS_PER_QUESTION = 60


def stem_key(variant: dict[str, Any]) -> str:
    """A stem as a reader sees it: rendered to plain text, whitespace collapsed.

    An ordering's or matching's question is its stem with its lines or options (the same stem
    asks about other lines), so their texts, sorted, are part of its key.
    """
    from question_bank.exporters._markup import to_text   # the exporters import this module

    text = " ".join(to_text(variant["stem"]).split())
    if variant["answer"]["kind"] in ARRANGEMENT_KINDS:
        text += " | " + " | ".join(sorted(to_text(c["text"]) for c in variant["choices"]))
    return text


def distinct_variants(family: str, n: int, root_seed: int) -> list[dict[str, Any]]:
    """``n`` variants of ``family`` with pairwise different stems, drawn from ``root_seed``
    (``n`` items of a multi-part family: each item's parts in order, so ``n`` times its part count).

    Seeds ``variant_seed(root_seed, family, 0, 1, ...)`` are tried in order and a
    variant whose stem was already drawn is skipped, so a set never repeats a question.

    Raises:
        QuestionBankError: if ``n`` exceeds the family's ``distinct_items``, or if
            the draws run out before ``n`` different stems appear; both say how many
            the family can give.
    """
    fam = get_family(family)
    if fam.distinct_items is not None and n > fam.distinct_items:
        raise QuestionBankError(f"family {family!r} has only {fam.distinct_items} different questions; "
                                f"-n {n} would repeat some. Ask for at most -n {fam.distinct_items}.")
    seen: set[str] = set()
    variants: list[dict[str, Any]] = []
    for index in range(DRAWS_PER_QUESTION * n + 100):
        # a multi-part family's question is its whole item: every part of one scenario, in order
        item = generate_item(family, variant_seed(root_seed, family, index))
        key = stem_key(item[0])
        if key not in seen:
            seen.add(key)
            variants += item
            if len(seen) == n:
                return variants
    raise QuestionBankError(f"family {family!r} gave only {len(seen)} different questions in "
                            f"{index + 1} draws; ask for at most -n {len(seen)}.")


def generate_sheet(families: list[str], n: int, root_seed: int,
                   student_id: str | None = None) -> dict[str, Any]:
    """``n`` variants of each family, in family order, drawn from ``root_seed``; no stem repeats."""
    variants = [v for name in families for v in distinct_variants(name, n, root_seed)]
    return {"student_id": student_id, "root_seed": int(root_seed), "variants": variants}


def check_roster_salt(students: list[str] | None, salt: str | None) -> None:
    """A salt goes with a roster and a roster needs one: without it, students could recompute
    each other's questions from their ids.

    Raises:
        QuestionBankError: for a salt without students, or students without a salt.
    """
    if students is None and salt is not None:
        raise QuestionBankError("--salt only applies with --students; pass a roster or drop the salt.")
    if students is not None and not salt:
        raise QuestionBankError("--students needs --salt SECRET so that students cannot "
                                "recompute each other's questions from their ids.")


def build_bundle(families: list[str] | tuple[str, ...] = (), n: int = 1, seed: int = 0,
                 students: list[str] | None = None, salt: str | None = None) -> dict[str, Any]:
    """All sheets of one generation run, as JSON data.

    Args:
        families: family names; empty means every family.
        n: variants per family and sheet (at least 1).
        seed: root seed; with students it is mixed into each student's HMAC.
        students: student ids; each gets a sheet seeded by
            HMAC(salt, seed/student_id). ``None`` gives one anonymous sheet.
        salt: the instructor's secret; required with ``students``.

    Raises:
        QuestionBankError: for n < 1, unknown families, or students without a salt.
    """
    require_at_least_one(n)
    names = resolve_families(list(families))
    check_roster_salt(students, salt)
    if students is None:
        sheets = [generate_sheet(names, n, seed)]
    else:
        sheets = [generate_sheet(names, n, student_seed(s, salt, seed), student_id=s) for s in students]
    return {
        "schema": BUNDLE_SCHEMA,
        "families": names,
        "n_per_family": n,
        "seed": int(seed),
        "personalised": students is not None,
        "sheets": sheets,
    }


@dataclass(frozen=True)
class GenerateRequest:
    """Options of ``grader questions generate``, already parsed.

    Attributes:
        families: family names (empty: all).
        n: variants per family.
        seed: root seed.
        fmt: export format name (see :mod:`question_bank.exporters`).
        out: output file (one sheet) or directory (roster); ``None`` prints
            a single sheet to standard output.
        roster: CSV of student ids, for one set per student.
        salt: secret keying each student's seed.
        exam: exam spec file; its slots replace ``families``, and ``n`` is
            the pool size per slot for an LMS group (1 with a roster).
    """

    families: tuple[str, ...] = ()
    n: int = 1
    seed: int = 0
    fmt: str = "json"
    out: Path | None = None
    roster: Path | None = None
    salt: str | None = None
    exam: Path | None = None


@dataclass
class GenerateResult:
    """What a generation run produced.

    Attributes:
        files: exported file names and contents.
        written: paths written to disk (empty when printing).
        text: the single file's text when no output path was given, else None.
        n_variants: total variants generated.
    """

    files: dict[str, str | bytes]
    written: list[Path] = field(default_factory=list)
    text: str | None = None
    n_variants: int = 0


def run_generate(request: GenerateRequest) -> GenerateResult:
    """Generate, export and write a question set as ``request`` says.

    Raises:
        QuestionBankError: (or a subclass) for unknown families or formats,
            n < 1, an unreadable roster, a roster without ``out``, or a salt
            without a roster.
    """
    from question_bank.exporters import ANSWER_KEY_STEM, get_exporter

    exporter = get_exporter(request.fmt)
    students = None
    names: dict[str, str] = {}
    if request.roster is not None:
        entries = read_roster_entries(request.roster)
        students = [entry.student_id for entry in entries]
        names = {entry.student_id: entry.name for entry in entries}
        if request.out is None:
            raise RosterError("--students writes one file per student; pass -o DIRECTORY.")
        if any(safe_file_stem(s) == ANSWER_KEY_STEM for s in students):
            raise RosterError("a student id 'answer-key' would overwrite the answer key file; rename it.")
    if request.exam is not None:
        from question_bank.exam import build_exam_bundle, load_exam_spec

        if request.families:
            raise QuestionBankError("--exam fixes the families slot by slot; drop -f.")
        bundle = build_exam_bundle(load_exam_spec(request.exam), request.seed, students, request.salt, request.n,
                                   names)
    else:
        bundle = build_bundle(request.families, request.n, request.seed, students, request.salt)
    files = exporter.transform(bundle)
    n_variants = sum(len(sheet["variants"]) for sheet in bundle["sheets"])
    if request.out is None:
        return GenerateResult(files=files, text=exporter.as_text(files), n_variants=n_variants)
    written = exporter.write(files, Path(request.out), students is not None)
    return GenerateResult(files=files, written=written, n_variants=n_variants)

"""Exam specs: a fixed list of slots, so every student's slot k is the same task.

A spec is a small YAML file::

    title: Midterm, part B
    total: 10
    slots:
      - family: param-count
        subquestion: total        # required when the family asks several tasks
        points: 4
      - family: causal-mask
        subquestion: blocked_count
        points: 3
      - family: perplexity-from-probs
        points: 3

Slot k of every student's set (and every variant of slot k's LMS group) is
drawn from slot k's family with slot k's sub-question: the parameters
differ, the task does not. A family with several sub-questions must name one,
because "param-count" alone could give one student a full total and another
a LayerNorm count. ``total`` must equal the sum of the points, which catches
a slot dropped while editing.

A multi-part family (``logits-to-gradient``) named without ``subquestion:``
fills its slot with the whole item: every part of one scenario, in order,
the slot's points split evenly over the parts (in hundredths). Naming one of
its parts asks that part alone, its scenario printed with it.

Optional ``course:``, ``date:`` (free text, e.g. ``2025-03-14 10:00``) and
``duration:`` (e.g. ``90 minutes``) are printed in the header of a paper exam
(``--format paper``); they change no question.

An optional ``tolerance:`` sets how close a typed number answer must be, for
every number answer of the exam: ``rtol`` (relative), ``atol`` (absolute) and
``sig_figs`` (the answer to that many significant figures: a relative half
unit in the last figure, 3 gives 0.5%). The largest of what is given applies,
and never less than the question's own absolute tolerance for the worked
solution's rounded steps. A draw where a known mistake would then be accepted
is skipped, so a wide tolerance never turns a mistake into a right answer.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from question_bank.errors import QuestionBankError, require_at_least_one
from question_bank.generate import (
    BUNDLE_SCHEMA,
    DRAWS_PER_QUESTION,
    check_roster_salt,
    generate_item,
    generate_variant,
    stem_key,
)
from question_bank.registry import get_family
from question_bank.seeding import student_seed, variant_seed
from question_bank.variant import answer_matches


@dataclass(frozen=True)
class ExamSlot:
    """One slot: which family, which of its sub-questions, and its points."""

    family: str
    subquestion: str
    points: float

    @property
    def label(self) -> str:
        """``family/sub-question`` (the family alone for a one-task family)."""
        return f"{self.family}/{self.subquestion}" if self.subquestion else self.family


@dataclass(frozen=True)
class Tolerance:
    """An exam's acceptance tolerance for number answers; ``None`` leaves the question's own."""

    rtol: float | None = None
    atol: float | None = None

    def apply(self, variant: dict[str, Any]) -> dict[str, Any] | None:
        """``variant`` with this tolerance on a float answer; ``None`` if a known mistake would pass."""
        answer = variant["answer"]
        if answer["kind"] != "float" or (self.rtol is None and self.atol is None):
            return variant
        widened = {**answer, "rtol": self.rtol if self.rtol is not None else answer["rtol"],
                   "atol": max(answer["atol"], self.atol or 0.0)}
        if any(answer_matches(widened, m["value"]) for m in variant["mistakes"]):
            return None
        return {**variant, "answer": widened}


@dataclass(frozen=True)
class ExamSpec:
    """A parsed, checked exam spec."""

    title: str
    total: float
    slots: tuple[ExamSlot, ...]
    tolerance: Tolerance = Tolerance()
    course: str = ""
    date: str = ""
    duration: str = ""

    def as_record(self) -> dict[str, Any]:
        """The spec as the bundle stores it (exporters read points and titles from here)."""
        return {"title": self.title, "total": self.total,
                "course": self.course, "date": self.date, "duration": self.duration,
                "tolerance": {"rtol": self.tolerance.rtol, "atol": self.tolerance.atol},
                "slots": [{"slot": k, "family": s.family, "subquestion": s.subquestion, "points": s.points}
                          for k, s in enumerate(self.slots, start=1)]}


def load_exam_spec(path: Path) -> ExamSpec:
    """Read and check an exam spec file.

    Raises:
        QuestionBankError: naming the file, the slot and what to write instead.
    """
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise QuestionBankError(f"cannot read the exam spec {path}: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise QuestionBankError(f"exam spec {path} is not valid YAML: {exc}") from None
    return parse_exam_spec(data, str(path))


def parse_exam_spec(data: Any, where: str = "exam spec") -> ExamSpec:
    """Check spec data (as loaded from YAML) and return the spec; see :func:`load_exam_spec`."""
    if not isinstance(data, dict) or not isinstance(data.get("slots"), list) or not data["slots"]:
        raise QuestionBankError(f"{where}: expected a mapping with a non-empty list `slots:`, found "
                                f"{type(data).__name__}; see docs/practice-guide.md, 'Exam specs'.")
    unknown = set(data) - {"title", "total", "slots", "tolerance", *_HEADER_KEYS}
    if unknown:
        raise QuestionBankError(f"{where}: unknown keys {sorted(unknown)}; expected title, total, slots, tolerance, "
                                f"{', '.join(_HEADER_KEYS)}.")
    slots = tuple(_parse_slot(entry, f"{where}, slot {k}") for k, entry in enumerate(data["slots"], start=1))
    points = sum(s.points for s in slots)
    total = data.get("total", points)
    if not _is_points(total) or abs(float(total) - points) > 1e-9:
        raise QuestionBankError(f"{where}: total is {total!r} but the slots' points add up to {points:g}; "
                                "fix a slot's points or the total.")
    return ExamSpec(title=str(data.get("title") or "Exam"), total=float(total), slots=slots,
                    tolerance=_parse_tolerance(data.get("tolerance"), f"{where}, tolerance"),
                    **{key: _header_text(data.get(key), f"{where}, {key}") for key in _HEADER_KEYS})


#: Spec keys printed in a paper exam's header and nowhere else.
_HEADER_KEYS = ("course", "date", "duration")


def _header_text(value: Any, where: str) -> str:
    """A header field as text; YAML reads ``2025-03-14`` as a date and ``90`` as a number, both fine."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        raise QuestionBankError(f"{where}: expected one line of text (e.g. `date: 2025-03-14 10:00`), "
                                f"found {value!r}.")
    return " ".join(str(value).split())


def _parse_tolerance(entry: Any, where: str) -> Tolerance:
    if entry is None:
        return Tolerance()
    if not isinstance(entry, dict) or not entry or set(entry) - {"rtol", "atol", "sig_figs"}:
        raise QuestionBankError(f"{where}: expected a mapping with rtol, atol and/or sig_figs "
                                f"(e.g. `tolerance: {{sig_figs: 3}}`), found {entry!r}.")
    for key, value in entry.items():
        if not _is_points(value):
            raise QuestionBankError(f"{where}: {key} must be a positive number, found {value!r}.")
    relative = [float(entry["rtol"])] if "rtol" in entry else []
    if "sig_figs" in entry:
        if not float(entry["sig_figs"]).is_integer():
            raise QuestionBankError(f"{where}: sig_figs must be a whole number, found {entry['sig_figs']!r}.")
        relative.append(0.5 * 10.0 ** (1 - int(entry["sig_figs"])))
    return Tolerance(rtol=max(relative) if relative else None,
                     atol=float(entry["atol"]) if "atol" in entry else None)


def _is_points(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and x > 0


def _parse_slot(entry: Any, where: str) -> ExamSlot:
    if not isinstance(entry, dict) or "family" not in entry:
        raise QuestionBankError(f"{where}: expected a mapping with `family:` (and `subquestion:`, `points:`), "
                                f"found {entry!r}.")
    unknown = set(entry) - {"family", "subquestion", "points"}
    if unknown:
        raise QuestionBankError(f"{where}: unknown keys {sorted(unknown)}; expected family, subquestion, points.")
    family = get_family(str(entry["family"]))
    subs = family.subquestions()
    sub = entry.get("subquestion")
    if sub is None and family.parts:
        sub = ""   # a multi-part family's slot without a sub-question asks the whole item
    if sub is None and subs != ("",):
        raise QuestionBankError(f"{where}: family {family.name!r} asks several tasks; add `subquestion:` with "
                                f"one of {', '.join(subs)}.")
    sub = "" if sub is None else str(sub)
    if sub not in subs and not (family.parts and sub == ""):
        allowed = "none (the family asks one task)" if subs == ("",) else ", ".join(subs)
        raise QuestionBankError(f"{where}: family {family.name!r} has no sub-question {sub!r}; "
                                f"allowed: {allowed}.")
    points = entry.get("points", 1)
    if not _is_points(points):
        raise QuestionBankError(f"{where}: points must be a positive number, found {points!r}.")
    return ExamSlot(family=family.name, subquestion=sub, points=float(points))


def slot_variants(slot: ExamSlot, number: int, root_seed: int, n: int,
                  tolerance: Tolerance = Tolerance()) -> list[dict[str, Any]]:
    """``n`` variants of ``slot`` with pairwise different stems, each marked with its slot and points.

    Seeds are tried in order (``variant_seed(root_seed, "<family>#slot<number>", i)``) and a
    draw of another sub-question, a repeated stem, or one where ``tolerance`` would accept a
    known mistake is skipped, so the slot's task is fixed and two slots of the same task in
    one exam do not share a draw.

    Raises:
        QuestionBankError: when the draws run out before ``n`` different stems appear.
    """
    family = get_family(slot.family)
    if family.parts and not slot.subquestion:
        return _item_slot_variants(slot, number, root_seed, n, tolerance)
    budget = DRAWS_PER_QUESTION * n * len(family.subquestions()) + 100
    seen: set[str] = set()
    found: list[dict[str, Any]] = []
    for index in range(budget):
        variant = generate_variant(slot.family, variant_seed(root_seed, f"{slot.family}#slot{number}", index))
        if family.subquestion(variant["parameters"]) != slot.subquestion:
            continue
        variant = tolerance.apply(variant)
        if variant is None:
            continue
        key = stem_key(variant)
        if key in seen:
            continue
        seen.add(key)
        found.append({**variant, "slot": number, "points": slot.points})
        if len(found) == n:
            return found
    raise QuestionBankError(f"slot {number} ({slot.label}) gave only {len(found)} different questions in "
                            f"{budget} draws; ask for a smaller pool (-n {max(len(found), 1)}).")


def part_points(points: float, count: int) -> list[float]:
    """A slot's points split over ``count`` parts in hundredths, the remainder on the first parts."""
    hundredths = round(points * 100)
    share, extra = divmod(hundredths, count)
    return [(share + (1 if k < extra else 0)) / 100 for k in range(count)]


def _item_slot_variants(slot: ExamSlot, number: int, root_seed: int, n: int,
                        tolerance: Tolerance) -> list[dict[str, Any]]:
    """``n`` whole items of a multi-part family for ``slot``: every part of one scenario in order, each
    marked with the slot and its share of the points; an item where the tolerance would accept a
    known mistake in any part is skipped as a whole, so the parts keep one scenario."""
    family = get_family(slot.family)
    shares = part_points(slot.points, len(family.parts))
    seen: set[str] = set()
    found: list[dict[str, Any]] = []
    budget = DRAWS_PER_QUESTION * n + 100
    for index in range(budget):
        item = [tolerance.apply(v) for v in
                generate_item(slot.family, variant_seed(root_seed, f"{slot.family}#slot{number}", index))]
        key = stem_key(item[0]) if item[0] is not None else ""
        if any(v is None for v in item) or key in seen:
            continue
        seen.add(key)
        found += [{**v, "slot": number, "points": share} for v, share in zip(item, shares)]
        if len(seen) == n:
            return found
    raise QuestionBankError(f"slot {number} ({slot.label}) gave only {len(seen)} different items in "
                            f"{budget} draws; ask for a smaller pool (-n {max(len(seen), 1)}).")


def exam_sheet(spec: ExamSpec, root_seed: int, per_slot: int = 1,
               student_id: str | None = None) -> dict[str, Any]:
    """One sheet: ``per_slot`` variants of each slot, in slot order."""
    variants = [v for k, slot in enumerate(spec.slots, start=1)
                for v in slot_variants(slot, k, root_seed, per_slot, spec.tolerance)]
    return {"student_id": student_id, "root_seed": int(root_seed), "variants": variants}


def build_exam_bundle(spec: ExamSpec, seed: int = 0, students: list[str] | None = None,
                      salt: str | None = None, pool: int = 1,
                      names: dict[str, str] | None = None) -> dict[str, Any]:
    """The sheets of an exam, as :func:`question_bank.generate.build_bundle` lays them out.

    With ``students`` each gets one variant per slot from their HMAC seed;
    without, one sheet holds ``pool`` variants per slot, which the LMS
    exports turn into one question group per slot (one item drawn per student).
    A student with a non-empty name in ``names`` (id -> roster name) gets it as
    the sheet's ``student_name``, for the paper exam's header; names seed nothing.

    Raises:
        QuestionBankError: for pool < 1, students without a salt, or a roster with a pool.
    """
    require_at_least_one(pool)
    check_roster_salt(students, salt)
    if students is None:
        sheets = [exam_sheet(spec, seed, pool)]
    else:
        if pool != 1:
            raise QuestionBankError(f"-n {pool} with --students: a personal exam has one question per slot; "
                                    "drop -n (the pool size is for LMS groups without a roster).")
        sheets = [exam_sheet(spec, student_seed(s, salt, seed), 1, student_id=s) for s in students]
        for sheet in sheets:
            if (names or {}).get(sheet["student_id"]):
                sheet["student_name"] = names[sheet["student_id"]]
    return {
        "schema": BUNDLE_SCHEMA,
        "families": list(dict.fromkeys(s.family for s in spec.slots)),
        "n_per_family": pool,
        "seed": int(seed),
        "personalised": students is not None,
        "exam": spec.as_record(),
        "sheets": sheets,
    }


__all__ = ["ExamSlot", "ExamSpec", "Tolerance", "build_exam_bundle", "exam_sheet", "load_exam_spec", "parse_exam_spec",
           "slot_variants"]

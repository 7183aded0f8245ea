"""The variant: one generated question as plain, JSON-serializable data.

A family's ``build`` returns a :class:`Draft` (stem, parameters, answer,
options, every known mistake, worked solution). :func:`question_bank.generate.generate_variant`
shuffles the options, gives them ids and turns the draft into a ``dict``
with this layout (schema 2)::

    {
      "schema": 2,
      "id": "perplexity-from-probs-v1-123",     # family, version, seed
      "family": "perplexity-from-probs", "version": 1, "seed": 123,
      "title": "...", "tags": ["perplexity", ...],
      "parameters": {...},                       # everything the stem shows
      "stem": "Markdown with $LaTeX$",
      "answer": {
        "kind": "float" | "integer" | "shape" | "single_choice"
                | "multiple_choice" | "true_false" | "ordering" | "matching",
        "value": 2.15443469003 | 10 | [4, 8, 24] | "c" | ["a", "d"] | true,
        "display": "2.154",                      # the answer as printed
        "rtol": 0.001, "atol": 1e-09,            # floats only, else null
        "unit": "nats",                          # may be ""
        "log_space": false                       # true: value is ln of the quantity
      },
      "choices": [                               # display order, ids a, b, c, ...
        {"id": "a", "text": "$2.154$", "value": 2.154..., "correct": true,
         "misconception": null, "feedback": "..."},
        {"id": "b", "text": "$6.463$", "value": 6.463..., "correct": false,
         "misconception": {"id": "sum-vs-mean", "name": "..."}, "feedback": "..."}
      ],
      "mistakes": [                              # every known wrong value, drawn or not
        {"formula": "perplexity-from-probs/total-nll", "value": 6.463..., "text": "$6.463$",
         "misconception": {"id": "sum-vs-mean", "name": "..."}, "feedback": "..."}
      ],                                         # (+ "also": [formulas printing the same text])
      "solution": "Markdown worked solution"
    }

A part of a multi-part item (a family with ``parts``) adds ``"part"``::

      "part": {"item": "logits-to-gradient-v1-123",  # the item's id; the variant's id adds "-c"
               "index": 2, "count": 4, "label": "c", "name": "loss",
               "carry": {"from": 1, "op": "affine_log", "offset": 0.8, "scale": -0.5}}

``carry`` (``null`` for a part that reads no earlier one) says how the
part's key follows from the answer to part ``from``; see
:func:`question_bank.answers.carried_value` for its operations.

Ordering and matching answers hold one choice id per slot as their value
(``["e", "a", "c", "d"]``), and add ``"slots"`` (the positions or left-hand
items, each with notes on its wrong pairs) and, for an ordering, ``"rules"``
(the pairs of steps whose order the data flow forces); see :class:`Answer`.

``mistakes`` lists, for answers with a value, every candidate mistake the
family computed (see :mod:`question_bank.mistakes`) that is finite and
clearly different from the answer; the wrong choices are drawn from it.

Numeric answers (float, integer, shape) carry choices too, so an exporter
may ask for a typed answer (value + tolerance) or a multiple-choice pick.
The wrong choices are the distractors. Floats are rounded to
:data:`FLOAT_DIGITS` significant digits so the JSON is byte-identical on
every platform.

Why one module of this size: the layout above and the checks below are one contract; split, the schema and what validates it could drift apart.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from question_bank.answers import NUMERIC_KINDS, is_number
from question_bank.misconceptions import MISCONCEPTIONS

#: Layout version of the variant dict; bump when a key changes meaning.
SCHEMA_VERSION = 2

#: Significant digits kept for every float in a variant. Twelve digits are
#: far more than any answer needs and far fewer than the last bits in which
#: ``exp``/``log`` may differ between C libraries.
FLOAT_DIGITS = 12

CHOICE_KINDS = ("single_choice", "multiple_choice", "true_false")
#: Kinds answered by giving one choice per slot: the steps in order (slot k = the k-th step), or
#: a right-hand option for each left-hand item. The choices are the right-hand side and may
#: hold more options than slots (a step that does not belong, a shape no item has).
ARRANGEMENT_KINDS = ("ordering", "matching")
ANSWER_KINDS = NUMERIC_KINDS + CHOICE_KINDS + ARRANGEMENT_KINDS

CHOICE_IDS = "abcdefgh"


@dataclass(frozen=True)
class Answer:
    """The correct answer of a draft.

    Attributes:
        kind: one of :data:`ANSWER_KINDS`.
        value: the number, shape list or boolean computed by ``solutions/``;
            ``None`` for single and multiple choice, whose value (the ids of
            the correct choices) is only known after shuffling.
        display: the answer as a reader should see it.
        rtol: relative tolerance (floats only).
        atol: absolute tolerance (floats only).
        unit: unit of a numeric answer, e.g. ``"nats"``; may be empty.
        log_space: True when ``value`` is the natural log of the quantity
            (used for probabilities too small to type comfortably).
        slots: ordering and matching only: the left-hand side, one
            ``{"text", "value", "wrong"}`` per slot (``wrong`` maps a choice id
            picked for that slot to ``{"misconception", "feedback"}``: why
            that pair is wrong; ordering slots, the positions, leave it empty).
        rules: ordering only: ``{"before", "after", "feedback"}`` per pair of
            steps (choice ids) whose order the data flow forces, the feedback
            saying what the later step reads from the earlier one.
    """

    kind: str
    value: Any
    display: str
    rtol: float | None = None
    atol: float | None = None
    unit: str = ""
    log_space: bool = False
    slots: tuple[dict[str, Any], ...] = ()
    rules: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True)
class Option:
    """One choice before shuffling.

    Attributes:
        value: JSON-able value the choice stands for (number, shape list,
            string, boolean or small dict); compared with the answer.
        text: Markdown shown to the student.
        correct: whether choosing it is right.
        misconception: id in the catalogue for a wrong choice, else ``None``.
        feedback: Markdown shown after the choice is picked.
        formula: key of the :mod:`question_bank.mistakes` formula that
            computed a wrong value (its label comes from there); ``None`` for
            the correct option and for fixed options of conceptual families.
    """

    value: Any
    text: str
    correct: bool
    misconception: str | None = None
    feedback: str = ""
    formula: str | None = None


@dataclass(frozen=True)
class Draft:
    """What a family's ``build`` returns; see the module docstring."""

    parameters: dict[str, Any]
    stem: str
    answer: Answer
    options: list[Option]
    solution: str
    tags: tuple[str, ...] = field(default_factory=tuple)
    #: Every wrong value the family knows for this question, drawn as a choice
    #: or not; exporters and judges name a typed answer that matches one.
    mistakes: list[Option] = field(default_factory=list)
    #: Multi-part families only: where this part sits in its item and how its key follows
    #: from the earlier part it reads (see :func:`_check_part`); ``None`` for a one-part question.
    part: dict[str, Any] | None = None


def canonical(obj: Any) -> Any:
    """Plain-Python copy of ``obj`` with floats rounded to :data:`FLOAT_DIGITS`.

    NumPy scalars and arrays become Python numbers and lists, tuples become
    lists, dict keys become strings. Raises ``ValueError`` on NaN or infinity,
    which JSON cannot carry.
    """
    kind = type(obj)
    # The plain types first, by exact type: a variant is thousands of them, and the checks below
    # (NumPy's abstract types among them) cost several times more. A bool is not an int here.
    if kind is str or obj is None:
        return obj
    if kind is dict:
        return {str(k): canonical(v) for k, v in obj.items()}
    if kind is list:
        return [canonical(v) for v in obj]
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if not math.isfinite(x):
            raise ValueError(f"a variant cannot hold the non-finite float {x!r}")
        rounded = float(f"{x:.{FLOAT_DIGITS}g}")
        return rounded + 0.0  # turns -0.0 into 0.0
    if isinstance(obj, np.ndarray):
        return canonical(obj.tolist())
    if isinstance(obj, dict):
        return {str(k): canonical(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    if obj is None or isinstance(obj, str):
        return obj
    raise TypeError(f"a variant cannot hold a {type(obj).__name__}: {obj!r}")


def to_json(obj: Any) -> str:
    """Deterministic JSON text: sorted keys, two-space indent, trailing newline."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def json_key(obj: Any) -> str:
    """Compact JSON text of ``obj``, equal for two objects exactly when their :func:`to_json` is.

    For comparing and counting, not for writing: ``json`` encodes without an indent in C and with
    one in Python, several times slower, and the indent adds nothing to a comparison.
    """
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def values_close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether two choice values agree: numbers within tolerance, else equality."""
    if is_number(a) and is_number(b):
        return abs(float(a) - float(b)) <= atol + rtol * abs(float(b))
    return a == b


def answer_matches(answer: dict[str, Any], response: Any) -> bool:
    """Grade ``response`` against a variant's ``answer`` record.

    Floats pass within ``rtol``/``atol``, integers must be equal, shapes must
    match entry by entry, choice answers compare ids (order-free for
    multiple choice) or booleans. This is the rule exporters and self-check
    pages implement.
    """
    kind, value = answer["kind"], answer["value"]
    if kind == "float":
        return is_number(response) and values_close(response, value, answer["rtol"], answer["atol"])
    if kind == "integer":
        return is_number(response) and float(response) == value
    if kind == "shape":
        return isinstance(response, (list, tuple)) and [int(v) for v in response] == list(value)
    if kind == "multiple_choice":
        return isinstance(response, (list, tuple)) and sorted(response) == sorted(value)
    if kind in ARRANGEMENT_KINDS:
        return isinstance(response, (list, tuple)) and list(response) == list(value)
    return response == value


def validate_variant(variant: dict[str, Any]) -> list[str]:
    """Problems with a variant's structure; an empty list means it is sound.

    Checks what every exporter relies on: required keys, the answer kind and
    its value type, choice ids, exactly the right number of correct choices,
    the answer agreeing with the correct choice, every wrong choice naming a
    catalogued misconception with feedback, no wrong choice accepted by
    :func:`answer_matches`, and the dict being canonical JSON data.
    """
    problems: list[str] = []
    required = ("schema", "id", "family", "version", "seed", "title", "tags",
                "parameters", "stem", "answer", "choices", "mistakes", "solution")
    missing = [key for key in required if key not in variant]
    if missing:
        return [f"missing keys {missing}"]
    if variant["schema"] != SCHEMA_VERSION:
        problems.append(f"schema is {variant['schema']!r}, expected {SCHEMA_VERSION}")
    for key in ("stem", "solution", "title"):
        if not isinstance(variant[key], str) or not variant[key].strip():
            problems.append(f"{key} must be non-empty Markdown text")
    answer = variant["answer"]
    kind = answer.get("kind")
    if kind not in ANSWER_KINDS:
        return problems + [f"answer kind {kind!r} is not one of {ANSWER_KINDS}"]
    problems += _check_answer_value(answer)
    if kind in ARRANGEMENT_KINDS:
        problems += _check_arrangement(variant["choices"], answer)
    else:
        problems += _check_choices(variant["choices"], answer)
    problems += _check_mistakes(variant["mistakes"], variant["choices"], answer)
    if "part" in variant:
        problems += _check_part(variant["part"])
    try:
        if canonical(variant) != variant or json.loads(json_key(variant)) != variant:
            problems.append("variant is not canonical JSON data (unrounded float, tuple or numpy value)")
    except (TypeError, ValueError) as exc:
        problems.append(f"variant is not JSON data: {exc}")
    return problems



#: The operations a carry record may name (see :func:`question_bank.answers.carried_value`).
CARRY_OPS = {"softmax_with": ("row", "index"), "affine": ("offset", "scale"), "affine_log": ("offset", "scale")}


def _check_part(part: Any) -> list[str]:
    """A part record: its place in the item, and a carry that reads an earlier part with a known operation."""
    if not isinstance(part, dict):
        return [f"part must be a mapping, found {part!r}"]
    index, count = part.get("index"), part.get("count")
    if not (isinstance(index, int) and isinstance(count, int) and 0 <= index < count):
        return [f"part index {index!r} is not within the item's {count!r} parts"]
    problems = []
    if part.get("label") != CHOICE_IDS[index]:
        problems.append(f"part {index} is labelled {part.get('label')!r}, expected {CHOICE_IDS[index]!r}")
    carry = part.get("carry")
    if carry is not None:
        if not isinstance(carry, dict) or carry.get("op") not in CARRY_OPS:
            return problems + [f"carry {carry!r} names none of the operations {sorted(CARRY_OPS)}"]
        if not (isinstance(carry.get("from"), int) and 0 <= carry["from"] < index):
            problems.append(f"part {index} carries from {carry.get('from')!r}, which is not an earlier part")
        missing = [key for key in CARRY_OPS[carry["op"]] if key not in carry]
        if missing:
            problems.append(f"carry {carry['op']!r} lacks {missing}")
    return problems


def _check_mistakes(mistakes: Any, choices: list[dict[str, Any]], answer: dict[str, Any]) -> list[str]:
    """Each known mistake is named, explained and wrong; each numeric distractor is one of them."""
    if not isinstance(mistakes, list):
        return ["mistakes must be a list"]
    problems = []
    for index, mistake in enumerate(mistakes):
        label = f"mistake {index} ({mistake.get('formula')!r})"
        ref = mistake.get("misconception")
        if not isinstance(ref, dict) or ref.get("id") not in MISCONCEPTIONS:
            problems.append(f"{label} names no catalogued misconception: {ref!r}")
        if not isinstance(mistake.get("feedback"), str) or not mistake["feedback"].strip():
            problems.append(f"{label} has no feedback")
        if not isinstance(mistake.get("text"), str) or not mistake["text"].strip():
            problems.append(f"{label} has no text")
        if answer["kind"] in NUMERIC_KINDS and answer_matches(answer, mistake.get("value")):
            problems.append(f"{label} ({mistake.get('value')!r}) would be accepted as the answer")
    if answer["kind"] in NUMERIC_KINDS:
        known = [(m.get("value"), (m.get("misconception") or {}).get("id")) for m in mistakes]
        for choice in choices:
            if not choice.get("correct") and (choice.get("value"), (choice.get("misconception") or {}).get("id")) not in known:
                problems.append(f"choice {choice.get('id')!r} is not among the variant's known mistakes")
    return problems


def _check_arrangement(choices: Any, answer: dict[str, Any]) -> list[str]:
    """An ordering or matching key: one choice per slot, every choice used by the key marked correct,
    every other a named distractor, more choices than slots, per-pair notes and rules on real ids."""
    if not isinstance(choices, list) or len(choices) < 2:
        return ["a variant needs at least two choices"]
    ids = [c.get("id") for c in choices]
    problems = []
    if ids != list(CHOICE_IDS[: len(choices)]):
        problems.append(f"choice ids are {ids}, expected {list(CHOICE_IDS[:len(choices)])}")
    texts = [c.get("text") for c in choices]
    if len(set(texts)) != len(texts):
        problems.append("two choices print the same text")
    slots, value = answer.get("slots"), answer.get("value")
    if not isinstance(slots, list) or not slots:
        return problems + ["an ordering or matching answer needs its slots"]
    if not isinstance(value, list) or len(value) != len(slots) or not set(value) <= set(ids):
        return problems + [f"the key {value!r} is not one choice id per slot ({len(slots)} slots)"]
    if len(choices) <= len(slots):
        problems.append(f"{len(choices)} choices for {len(slots)} slots: the last pair would be free")
    if answer["kind"] == "ordering" and len(set(value)) != len(value):
        problems.append("an ordering key uses a step twice")
    for choice in choices:
        if choice.get("correct") is not (choice.get("id") in value):
            problems.append(f"choice {choice.get('id')!r} is marked {choice.get('correct')!r} but the key "
                            f"{'uses' if choice.get('id') in value else 'does not use'} it")
        if choice.get("id") not in value:
            problems += _check_one_choice(choice, answer)
    for index, slot in enumerate(slots):
        if not isinstance(slot.get("text"), str) or not slot["text"].strip():
            problems.append(f"slot {index + 1} has no text")
        wrong = slot.get("wrong", {})
        if not set(wrong) <= set(ids) - {value[index]}:
            problems.append(f"slot {index + 1} has notes on {sorted(wrong)}, not only on wrong choices")
    if answer["kind"] == "ordering":
        problems += _check_rules(answer.get("rules"), value)
    return problems


def _check_rules(rules: Any, value: list[str]) -> list[str]:
    """Every rule holds in the key, and the rules force the key: each step is ruled after the one before it."""
    if not isinstance(rules, list):
        return ["an ordering answer needs its rules"]
    position = {step: k for k, step in enumerate(value)}
    problems = [f"rule {rule.get('before')!r} before {rule.get('after')!r} does not hold in the key"
                for rule in rules
                if position.get(rule.get("before"), len(value)) >= position.get(rule.get("after"), -1)]
    pairs = {(rule.get("before"), rule.get("after")) for rule in rules}
    problems += [f"no rule puts {b!r} after {a!r}: the key is not the only order"
                 for a, b in zip(value, value[1:]) if (a, b) not in pairs]
    return problems


def _check_answer_value(answer: dict[str, Any]) -> list[str]:
    kind, value = answer["kind"], answer.get("value")
    problems = []
    if kind == "float":
        if not isinstance(value, float):
            problems.append(f"float answer holds {value!r}")
        if not (isinstance(answer.get("rtol"), float) and isinstance(answer.get("atol"), float)):
            problems.append("float answer needs float rtol and atol")
    elif kind == "integer" and not (isinstance(value, int) and not isinstance(value, bool)):
        problems.append(f"integer answer holds {value!r}")
    elif kind == "shape" and not (isinstance(value, list) and all(isinstance(v, int) for v in value)):
        problems.append(f"shape answer holds {value!r}")
    elif kind == "true_false" and not isinstance(value, bool):
        problems.append(f"true/false answer holds {value!r}")
    elif kind in ARRANGEMENT_KINDS and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        problems.append(f"{kind} answer holds {value!r}, expected choice ids")
    if not isinstance(answer.get("display"), str) or not answer["display"]:
        problems.append("answer needs a display string")
    if not isinstance(answer.get("log_space"), bool):
        problems.append("answer needs a boolean log_space flag")
    return problems


def _check_choices(choices: Any, answer: dict[str, Any]) -> list[str]:
    if not isinstance(choices, list) or len(choices) < 2:
        return ["a variant needs at least two choices"]
    problems = []
    ids = [c.get("id") for c in choices]
    if ids != list(CHOICE_IDS[: len(choices)]):
        problems.append(f"choice ids are {ids}, expected {list(CHOICE_IDS[:len(choices)])}")
    texts = [c.get("text") for c in choices]
    if len(set(texts)) != len(texts):
        problems.append("two choices print the same text")
    correct = [c for c in choices if c.get("correct") is True]
    kind = answer["kind"]
    if kind == "multiple_choice":
        if not correct:
            problems.append("a multiple-choice variant needs at least one correct choice")
        elif sorted(c["id"] for c in correct) != answer["value"]:
            problems.append("answer value is not the sorted ids of the correct choices")
    elif len(correct) != 1:
        problems.append(f"expected exactly one correct choice, found {len(correct)}")
    elif kind == "single_choice" and answer["value"] != correct[0]["id"]:
        problems.append("answer value is not the id of the correct choice")
    elif kind in NUMERIC_KINDS + ("true_false",) and correct[0].get("value") != answer["value"]:
        problems.append("the correct choice's value differs from the answer value")
    for choice in choices:
        problems += _check_one_choice(choice, answer)
    return problems


def _check_one_choice(choice: dict[str, Any], answer: dict[str, Any]) -> list[str]:
    label = f"choice {choice.get('id')!r}"
    if not isinstance(choice.get("text"), str) or not choice["text"].strip():
        return [f"{label} has no text"]
    if choice.get("correct") is True:
        return [] if choice.get("misconception") is None else [f"{label} is correct but names a misconception"]
    problems = []
    ref = choice.get("misconception")
    if not isinstance(ref, dict) or ref.get("id") not in MISCONCEPTIONS:
        problems.append(f"{label} is a distractor without a catalogued misconception: {ref!r}")
    if not isinstance(choice.get("feedback"), str) or not choice["feedback"].strip():
        problems.append(f"{label} is a distractor without feedback")
    if answer["kind"] in NUMERIC_KINDS and answer_matches(answer, choice.get("value")):
        problems.append(f"{label} ({choice.get('value')!r}) would be accepted as the answer")
    if answer["kind"] == "true_false" and choice.get("value") == answer["value"]:
        problems.append(f"{label} is marked wrong but equals the answer")
    return problems

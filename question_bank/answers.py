"""Reading typed answers and judging them against a variant's answer key.

People type numbers, shapes and choices in many forms (``1.2e-3``,
``0.0012``, ``1.2 x 10^-3``; ``(4, 8, 24)``, ``4x8x24``; ``B``; ``yes``).
:func:`parse_response` reads them for one answer kind and raises
:class:`ResponseError`, whose message says what was expected, when it cannot.
:func:`judge` compares a parsed response with an answer key made by
:func:`answer_key` and names the misconception a wrong answer matches.

This module uses the standard library only, on purpose: the practice
notebook embeds its source so that it runs without the grader installed,
and the self-check page's script implements the same rules (the tests hold
both to the same table of inputs). The acceptance rule is the one of
:func:`question_bank.variant.answer_matches`; a test keeps them in step.

Why one module of this size: the practice notebook embeds this file's source as it is, and
the notebook has no package to import a sibling from, so every answer kind's reader and
judge must live in this one file.
"""
from __future__ import annotations

import math
import numbers
import re
from dataclasses import dataclass
from typing import Any, Callable, Sequence

NUMERIC_KINDS = ("float", "integer", "shape")
#: Answered with one choice letter per slot (see :mod:`question_bank.variant`).
ARRANGEMENT_KINDS = ("ordering", "matching")
#: Wrong pairs or broken dependencies named in one verdict; the rest are counted.
MAX_NOTES = 3


class ResponseError(ValueError):
    """A typed answer that cannot be read; the message tells how to type it."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of judging one response.

    Attributes:
        correct: whether the response is accepted.
        feedback: Markdown to show: the correct choice's note, the matched
            misconception's feedback, or a generic hint.
        misconception: name of the misconception the response matches, if any.
    """

    correct: bool
    feedback: str
    misconception: str | None = None


# --- parsing ---------------------------------------------------------------------

_NUMBER = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_PLAIN_NUMBER = re.compile(rf"^{_NUMBER}$")
# 1.2 x 10^-3, 1.2×10^{-3}, 1.2*10**-3, 1.2 \times 10^{-3}; the sign is required so
# that "110^3" is not read as 1 x 10^3.
_POWER = r"10\s*(?:\^|\*\*)\s*\{?\s*([+-]?\d+)\s*\}?"
_TIMES_TEN = re.compile(rf"^({_NUMBER})\s*(?:[x×*·]|\\times)\s*{_POWER}$")
_TEN_TO = re.compile(rf"^{_POWER}$")
_GROUPED = re.compile(r"^[+-]?\d{1,3}(?:([, _])\d{3})(?:\1\d{3})*(?:\.\d+)?$")
_FRACTION = re.compile(rf"^({_NUMBER})\s*/\s*({_NUMBER})$")
_DASHES = {"\u2212": "-", "\u2013": "-", "\u2012": "-", "\u00a0": " ", "\u202f": " ", "\u2009": " "}

NUMBER_HINT = "Type a number like 0.0012, 1.2e-3 or 1.2 x 10^-3."
INTEGER_HINT = "Type a whole number like 116534784 or 116,534,784."
SHAPE_HINT = "Type a shape like (4, 8, 24), [4, 8, 24] or 4x8x24."
TRUE_FALSE_HINT = "Answer true or false (t/f, yes/no)."


def _normalise(text: str) -> str:
    """Trim and replace typographic minus signs and spaces by ASCII ones."""
    for old, new in _DASHES.items():
        text = text.replace(old, new)
    return text.strip()


def _strip_unit(text: str, unit: str) -> str:
    """``text`` without a trailing unit that matches ``unit`` ("2.78 nats", "2.78 nat")."""
    if not unit:
        return text
    singular = unit[:-1] if unit.endswith("s") else unit
    for word in (unit, singular):
        if text.lower().endswith(word.lower()) and len(text) > len(word):
            return text[: -len(word)].strip()
    return text


def parse_number(text: str, unit: str = "") -> float:
    """A real number typed as ``1.2e-3``, ``0.0012``, ``1.2 x 10^-3``, ``-3/4`` or ``1,234.5``.

    A trailing unit equal to ``unit`` is ignored. Raises :class:`ResponseError`.
    """
    raw = text
    text = _strip_unit(_normalise(text), unit)
    if not text:
        raise ResponseError("Type an answer first. " + NUMBER_HINT)
    value = _number_or_none(text)
    if value is None or not math.isfinite(value):
        where = f" (in {unit})" if unit else ""
        raise ResponseError(f"Could not read {raw.strip()!r} as a number{where}. {NUMBER_HINT}")
    return value


def _number_or_none(text: str) -> float | None:
    if _PLAIN_NUMBER.match(text):
        return float(text)
    if _GROUPED.match(text):
        return float(re.sub(r"[, _]", "", text))
    match = _TIMES_TEN.match(text)
    if match:
        return float(match.group(1)) * 10.0 ** int(match.group(2))
    match = _TEN_TO.match(text)
    if match:
        return 10.0 ** int(match.group(1))
    match = _FRACTION.match(text)
    if match and float(match.group(2)) != 0:
        return float(match.group(1)) / float(match.group(2))
    return None


def parse_integer(text: str, unit: str = "") -> int:
    """A whole number typed as ``116534784``, ``116,534,784``, ``116 534 784`` or ``1.2e3``."""
    raw = text
    text = _strip_unit(_normalise(text), unit)
    if not text:
        raise ResponseError("Type an answer first. " + INTEGER_HINT)
    digits = re.sub(r"[, _]", "", text) if _GROUPED.match(text) else text
    if re.match(r"^[+-]?\d+$", digits):
        return int(digits)  # exact, even beyond the 2**53 a float holds
    value = _number_or_none(text)
    if value is None or not math.isfinite(value):
        raise ResponseError(f"Could not read {raw.strip()!r} as a whole number. {INTEGER_HINT}")
    if not value.is_integer():
        raise ResponseError(f"{raw.strip()!r} is not a whole number; this answer is a count. {INTEGER_HINT}")
    return int(value)


def parse_shape(text: str) -> list[int]:
    """A shape typed as ``(4, 8, 24)``, ``[4,8,24]``, ``4x8x24``, ``4 × 8 × 24`` or ``(24,)``."""
    raw = text
    text = _normalise(text)
    inner = re.sub(r"^[(\[{]\s*|\s*[)\]}]$", "", text)
    parts = [p for p in re.split(r"\s*(?:,|[x×X*]|\s)\s*", inner) if p]
    if not text or not parts or not all(re.match(r"^\d+$", p) for p in parts):
        raise ResponseError(f"Could not read {raw.strip()!r} as a shape. {SHAPE_HINT}")
    return [int(p) for p in parts]


def parse_choice(text: str, ids: Sequence[str]) -> str:
    """One choice letter typed as ``b``, ``B``, ``(b)``, ``b)`` or ``b.``."""
    letter = re.sub(r"^[(\[]\s*|\s*[)\].]$", "", _normalise(text)).lower()
    if letter not in ids:
        raise ResponseError(f"Could not read {text.strip()!r} as a choice. Pick one of {', '.join(ids)}.")
    return letter


def parse_choice_set(text: str, ids: Sequence[str]) -> list[str]:
    """Several choice letters typed as ``a, c``, ``a c``, ``(a)(c)``, ``a and c`` or ``AC``; sorted."""
    cleaned = re.sub(r"[()\[\].]", " ", _normalise(text).lower())
    tokens = [t for t in re.split(r"[\s,;&+/]+|\band\b", cleaned) if t]
    if len(tokens) == 1 and len(tokens[0]) > 1:
        tokens = list(tokens[0])  # "ac"
    if not tokens or not all(t in ids for t in tokens):
        raise ResponseError(f"Could not read {text.strip()!r} as choices. Type every letter that "
                            f"applies, like {ids[0]}, {ids[-1]} (from {', '.join(ids)}).")
    return sorted(set(tokens))


_TRUE = ("t", "true", "yes", "y", "1")
_FALSE = ("f", "false", "no", "n", "0")


def parse_true_false(text: str, choices: dict[str, bool] | None = None) -> bool:
    """``t``/``true``/``yes``/``y``/``1`` or ``f``/``false``/``no``/``n``/``0``, or a choice letter."""
    word = re.sub(r"[.!]$", "", _normalise(text).lower())
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    if choices:
        letter = re.sub(r"^[(\[]\s*|\s*[)\]]$", "", word)
        if letter in choices:
            return choices[letter]
    raise ResponseError(f"Could not read {text.strip()!r} as true or false. {TRUE_FALSE_HINT}")


def parse_arrangement(text: str, ids: Sequence[str], n_slots: int, distinct: bool) -> list[str]:
    """One choice letter per slot, in slot order, typed as ``c a d b``, ``c, a, d, b``, ``c-a-d-b`` or ``cadb``.

    ``distinct``: each letter at most once (an ordering uses a step once).
    """
    cleaned = re.sub(r"[()\[\].]", " ", _normalise(text).lower())
    tokens = [t for t in re.split(r"[\s,;>/-]+", cleaned) if t]
    if len(tokens) == 1 and len(tokens[0]) > 1:
        tokens = list(tokens[0])  # "cadb"
    example = ", ".join(ids[:n_slots])
    if len(tokens) != n_slots or not all(t in ids for t in tokens):
        raise ResponseError(f"Could not read {text.strip()!r} as {n_slots} letters, one per "
                            f"{'position' if distinct else 'item'} in order (like {example}), "
                            f"from {', '.join(ids)}.")
    if distinct and len(set(tokens)) != len(tokens):
        twice = sorted({t for t in tokens if tokens.count(t) > 1})
        raise ResponseError(f"{', '.join(twice)} is given twice; each step runs once. Give {n_slots} "
                            f"different letters in order (like {example}).")
    return tokens


def parse_response(text: str, key: dict[str, Any]) -> Any:
    """Read ``text`` as an answer of the kind ``key`` (see :func:`answer_key`) expects.

    Returns a float, int, list of ints, choice id, sorted list of ids or bool.
    Raises :class:`ResponseError` with a message saying how to type it.
    """
    kind = key["kind"]
    ids = [c["id"] for c in key["choices"]]
    if kind == "float":
        return parse_number(text, key.get("unit", ""))
    if kind == "integer":
        return parse_integer(text, key.get("unit", ""))
    if kind == "shape":
        return parse_shape(text)
    if kind == "single_choice":
        return parse_choice(text, ids)
    if kind == "multiple_choice":
        return parse_choice_set(text, ids)
    if kind == "true_false":
        return parse_true_false(text, {c["id"]: c["value"] for c in key["choices"]})
    if kind in ARRANGEMENT_KINDS:
        return parse_arrangement(text, ids, len(key["slots"]), kind == "ordering")
    raise ValueError(f"unknown answer kind {kind!r}")


# --- the answer key and judging ----------------------------------------------------

def answer_key(variant: dict[str, Any], inline: Callable[[str], str] = str,
               block: Callable[[str], str] = str) -> dict[str, Any]:
    """What judging needs from a variant, with its texts rendered for the consumer.

    ``inline`` renders one-paragraph feedback and ``block`` the worked
    solution (HTML for the self-check page; unchanged Markdown for the
    terminal and notebooks). The key holds the answer, tolerances, every
    choice with its value, correctness, misconception name and feedback, and
    the worked solution.
    """
    answer = variant["answer"]
    key = {
        "kind": answer["kind"],
        "value": answer["value"],
        "display": answer["display"],
        "rtol": answer["rtol"],
        "atol": answer["atol"],
        "unit": answer["unit"],
        "choices": [{
            "id": c["id"],
            "value": c["value"],
            "correct": c["correct"],
            "misconception": None if c["misconception"] is None else c["misconception"]["name"],
            "feedback": inline(c["feedback"]),
        } for c in variant["choices"]],
        "mistakes": [{
            "value": m["value"],
            "misconception": m["misconception"]["name"],
            "feedback": inline(m["feedback"]),
        } for m in variant.get("mistakes", [])],
        "solution": block(variant["solution"]),
    }
    part = variant.get("part")
    if part is not None:
        key["part"] = {"label": part["label"], "index": part["index"], "count": part["count"],
                       "item": part["item"], "carry": part["carry"]}
    if answer["kind"] in ARRANGEMENT_KINDS:
        # a verdict names the steps or options it is about, so it needs their texts
        for entry, choice in zip(key["choices"], variant["choices"]):
            entry["text"] = inline(choice["text"])
        key["slots"] = [{"text": inline(slot["text"]),
                         "wrong": {cid: {"misconception": None if note["misconception"] is None
                                         else note["misconception"]["name"],
                                         "feedback": inline(note["feedback"])}
                                   for cid, note in slot.get("wrong", {}).items()}}
                        for slot in answer["slots"]]
        key["rules"] = [{"before": r["before"], "after": r["after"], "feedback": inline(r["feedback"])}
                        for r in answer.get("rules", [])]
    return key


def matches(kind: str, reference: Any, response: Any, rtol: float | None, atol: float | None) -> bool:
    """Whether ``response`` equals ``reference`` under the rule for ``kind``.

    Floats agree within ``atol + rtol * |reference|``; integers, shapes,
    choice ids and booleans must be equal; choice sets are compared as sets.
    """
    if kind == "float":
        return is_number(response) and abs(response - reference) <= atol + rtol * abs(reference)
    if kind == "integer":
        return is_number(response) and response == reference
    if kind == "shape":
        return isinstance(response, (list, tuple)) and list(response) == list(reference)
    if kind == "multiple_choice":
        return isinstance(response, (list, tuple)) and sorted(response) == sorted(reference)
    return response == reference


def judge(key: dict[str, Any], response: Any) -> Verdict:
    """Judge a parsed ``response`` against ``key`` and explain the outcome.

    A numeric response that equals a distractor's value (under the answer's
    tolerance) gets that misconception's feedback, and so does one that
    equals any other mistake the family knows for the variant; a picked
    choice gets its own feedback; anything else gets a pointer to the
    worked solution.
    """
    kind = key["kind"]
    if kind == "multiple_choice":
        return _judge_choice_set(key, response)
    if kind == "ordering":
        return _judge_ordering(key, response)
    if kind == "matching":
        return _judge_matching(key, response)
    if kind in NUMERIC_KINDS:
        for choice in key["choices"]:
            if matches(kind, choice["value"], response, key["rtol"], key["atol"]):
                return _verdict_for(choice)
        if matches(kind, key["value"], response, key["rtol"], key["atol"]):
            return Verdict(True, "Correct.")
        for mistake in key.get("mistakes", []):
            if matches(kind, mistake["value"], response, key["rtol"], key["atol"]):
                return Verdict(False, mistake["feedback"], mistake["misconception"])
        return Verdict(False, _unknown_mistake(key))
    field = "id" if kind == "single_choice" else "value"
    for choice in key["choices"]:
        if choice[field] == response:
            return _verdict_for(choice)
    return Verdict(False, _unknown_mistake(key))


# --- multi-part items: an error carried from an earlier part --------------------------------

#: The misconception a carried error is reported under.
CARRIED_ERROR = "Carried error from an earlier part"


def carried_value(carry: dict[str, Any], earlier: Any) -> float | None:
    """What a part's key becomes when the earlier part it reads is answered ``earlier``.

    Operations: ``softmax_with`` puts ``earlier`` at ``row[index]`` and returns
    the softmax (max-shifted) at ``index``; ``affine`` is ``offset + scale * x``;
    ``affine_log`` is ``offset + scale * ln(x)`` (``None`` for ``x <= 0``).
    ``None`` too when ``earlier`` is no number or the result is not finite.
    """
    if not is_number(earlier):
        return None
    x = float(earlier)
    op = carry["op"]
    try:
        if op == "softmax_with":
            row = [float(z) for z in carry["row"]]
            row[carry["index"]] = x
            top = max(row)
            value = math.exp(row[carry["index"]] - top) / math.fsum(math.exp(z - top) for z in row)
        elif op == "affine":
            value = carry["offset"] + carry["scale"] * x
        elif op == "affine_log":
            if x <= 0:
                return None
            value = carry["offset"] + carry["scale"] * math.log(x)
        else:
            raise ValueError(f"unknown carry operation {op!r}")
    except OverflowError:
        return None
    return value if math.isfinite(value) else None


def judge_part(key: dict[str, Any], response: Any, earlier_key: dict[str, Any] | None = None,
               earlier_response: Any = None) -> Verdict:
    """:func:`judge`, and for a part of a multi-part item a note when a wrong answer is right given
    the student's own wrong answer ``earlier_response`` to the part its key is computed from.

    The note is given only when the earlier answer is wrong, the value it carries to this part is
    apart from this part's key (else the answer is just wrong) and ``response`` matches that value
    and no named mistake or choice of this part: a value two explanations fit names neither.
    """
    verdict = judge(key, response)
    carry = (key.get("part") or {}).get("carry")
    if verdict.correct or carry is None or earlier_key is None or earlier_response is None:
        return verdict
    if _accepted(earlier_key, earlier_response):
        return verdict
    carried = carried_value(carry, earlier_response)
    if carried is None or matches("float", key["value"], carried, key["rtol"], key["atol"]):
        return verdict
    if not matches("float", carried, response, key["rtol"] or 0.0, key["atol"] or 0.0):
        return verdict
    others = [c["value"] for c in key["choices"]] + [m["value"] for m in key.get("mistakes", [])]
    if any(matches("float", other, response, key["rtol"] or 0.0, key["atol"] or 0.0) for other in others):
        return verdict
    label = earlier_key["part"]["label"]
    return Verdict(False, f"Carried error: this is right for your answer to part ({label}), which is not "
                          f"right. Fix part ({label}) first; the method of this part holds.", CARRIED_ERROR)


def _accepted(key: dict[str, Any], response: Any) -> bool:
    return matches(key["kind"], key["value"], response, key["rtol"], key["atol"])


def _verdict_for(choice: dict[str, Any]) -> Verdict:
    return Verdict(bool(choice["correct"]), choice["feedback"] or ("Correct." if choice["correct"] else ""),
                   choice["misconception"])


def _judge_choice_set(key: dict[str, Any], response: list[str]) -> Verdict:
    picked = set(response)
    correct = {c["id"] for c in key["choices"] if c["correct"]}
    if picked == correct:
        return Verdict(True, "Correct: you picked exactly the right choices.")
    wrong = [c for c in key["choices"] if c["id"] in picked and not c["correct"]]
    notes = [f"({c['id']}) {c['feedback']}" for c in wrong]
    missed = len(correct - picked)
    if missed:
        notes.append(f"You left out {missed} correct choice{'s' if missed > 1 else ''}.")
    return Verdict(False, " ".join(notes), wrong[0]["misconception"] if wrong else None)


def _step(key: dict[str, Any], choice_id: str) -> str:
    """A choice as a verdict names it: ``(c) text``."""
    text = next(c["text"] for c in key["choices"] if c["id"] == choice_id)
    return f"({choice_id}) {text}"


def _capped(notes: list[str]) -> list[str]:
    if len(notes) <= MAX_NOTES:
        return notes
    return notes[:MAX_NOTES] + [f"({len(notes) - MAX_NOTES} more like these.)"]


def _judge_ordering(key: dict[str, Any], response: list[str]) -> Verdict:
    """Right when the steps are the key's in the key's order; else name each step that does not
    belong, each step left out, and each step placed before a step it reads from (and what it reads)."""
    if list(response) == list(key["value"]):
        return Verdict(True, "Correct: every step comes after the steps whose results it reads.")
    choices = {c["id"]: c for c in key["choices"]}
    notes, misconception = [], None
    for cid in response:
        if not choices[cid]["correct"]:
            notes.append(f"{_step(key, cid)} does not belong: {choices[cid]['feedback']}")
            misconception = misconception or choices[cid]["misconception"]
    for cid in key["value"]:
        if cid not in response:
            notes.append(f"You left out {_step(key, cid)}.")
    rules = {(r["before"], r["after"]): r["feedback"] for r in key["rules"]}
    # nearest first: a step's direct input says more than one several lines back
    distance = {step: k for k, step in enumerate(key["value"])}
    pairs = sorted(((earlier, later) for i, later in enumerate(response) for earlier in response[i + 1:]
                    if (earlier, later) in rules), key=lambda pair: distance[pair[1]] - distance[pair[0]])
    broken = [f"{_step(key, later)} is placed before {_step(key, earlier)}, but it must come after it: "
              f"{rules[(earlier, later)]}" for earlier, later in pairs]
    if broken:
        misconception = misconception or "A step placed before the step it uses"
    return Verdict(False, " ".join(_capped(notes + broken)), misconception)


def _judge_matching(key: dict[str, Any], response: list[str]) -> Verdict:
    """Right when every item has its option; else name each wrong pair and why it is wrong."""
    if list(response) == list(key["value"]):
        return Verdict(True, "Correct: every item has its own option.")
    notes, misconception = [], None
    for slot, picked, right in zip(key["slots"], response, key["value"]):
        if picked != right:
            note = slot["wrong"].get(picked, {"misconception": None, "feedback": "not this one."})
            notes.append(f"{slot['text']} is not {_step(key, picked)}: {note['feedback']}")
            misconception = misconception or note["misconception"]
    return Verdict(False, " ".join(_capped(notes)), misconception)


def _unknown_mistake(key: dict[str, Any]) -> str:
    if key["kind"] == "float":
        return (f"That is not the answer (accepted within {key['rtol']:.1%}). "
                "Compare your steps with the worked solution.")
    return "That is not the answer. Compare your steps with the worked solution."


def is_number(x: Any) -> bool:
    """Whether ``x`` is a real number: Python or NumPy ints and floats, never a bool.

    The question bank's one definition; it uses ``numbers.Real`` (NumPy
    registers its scalar types there) so this module stays standard-library only.
    """
    return isinstance(x, numbers.Real) and not isinstance(x, bool)

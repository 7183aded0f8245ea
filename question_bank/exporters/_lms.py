"""Helpers shared by the LMS exporters (Canvas QTI and Moodle XML).

Both LMSs typeset LaTeX with their own MathJax, so their HTML keeps math as
``\\(...\\)``; both get the same question HTML, instructions and numbers.
"""
from __future__ import annotations

import hashlib
import html
from typing import Any, Callable

from question_bank import formatting as fmt
from question_bank.errors import QuestionBankError
from question_bank.exporters._markup import inline, tex_delimited, to_html

#: Title of the quiz and the root category an LMS import creates.
QUIZ_TITLE = "LM-head practice questions"


def stable_id(prefix: str, *parts: str) -> str:
    """A short identifier derived from ``parts``: the same inputs always give the same id,
    and the seed inside a variant id is not readable from it."""
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:20]
    return f"{prefix}{digest}"


def xml_number(x: float | int) -> str:
    """A number as LMS XML expects it: integers without a decimal point, floats to 12 digits."""
    if isinstance(x, int) and not isinstance(x, bool):
        return str(x)
    value = float(f"{float(x):.12g}")
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def group_title(variant: dict[str, Any]) -> str:
    """The title of the LMS group or category a variant is filed in: its exam slot, else its family."""
    title = variant["title"]
    if "part" in variant:
        # each part of a multi-part item is filed on its own, under its item and letter
        title += f", {variant['part']['item']} part ({variant['part']['label']})"
    if "slot" not in variant:
        return title
    return f"Slot {variant['slot']:02d} ({variant['points']:g} points): {title}"


def absolute_tolerance(answer: dict[str, Any], value: float) -> float:
    """The absolute tolerance around ``value`` equivalent to the answer's rtol/atol
    (``atol + rtol * |value|``); 0 for an integer answer, which must be exact."""
    if answer["kind"] == "integer":
        return 0.0
    return answer["atol"] + answer["rtol"] * abs(value)


def md_html(markdown: str) -> str:
    """Markdown blocks -> LMS HTML with ``\\(...\\)`` math."""
    return to_html(markdown, tex_delimited)


def md_inline(markdown: str) -> str:
    """One line of Markdown -> LMS HTML with ``\\(...\\)`` math."""
    return inline(markdown, tex_delimited)


def question_html(variant: dict[str, Any], instruction: str = "") -> str:
    """The stem as HTML, followed by an italic instruction line (Markdown) if given."""
    text = md_html(variant["stem"])
    if instruction:
        text += f'\n<p><em>{md_inline(instruction)}</em></p>'
    return text


def common_mistakes_html(variant: dict[str, Any],
                         as_asked: Callable[[float], float | None] = lambda x: x) -> str:
    """Every known mistake's value with its misconception and feedback, for numeric items
    whose LMS question type cannot attach feedback to a wrong value.

    ``as_asked`` maps a value to the scale the student types (a natural log or a
    rescaled number on Canvas); ``None`` means that scale cannot show it.
    """
    rows = []
    for mistake in variant["mistakes"]:
        shown = as_asked(mistake["value"])
        number = "(no value on this scale)" if shown is None else md_inline(_number_text(shown))
        rows.append(f"<li>{number}: <em>{html.escape(mistake['misconception']['name'])}</em>. "
                    f"{md_inline(mistake['feedback'])}</li>")
    return f"<p>Common mistakes:</p><ul>{''.join(rows)}</ul>"


def _number_text(x: float | int) -> str:
    """A value as the student would type it: integers exact and grouped, floats to 4 figures."""
    if isinstance(x, int) and not isinstance(x, bool):
        return fmt.integer(x)
    return fmt.num_tex(x).replace(",", "{,}")


def correct_feedback(variant: dict[str, Any]) -> str:
    """The correct choice's feedback as HTML (the first one, for multiple correct choices)."""
    correct = [c for c in variant["choices"] if c["correct"]]
    return md_inline(correct[0]["feedback"]) if correct and correct[0]["feedback"] else "Correct."


def numeric_instruction(answer: dict[str, Any]) -> str:
    """How to type a numeric answer (Markdown)."""
    if answer["kind"] == "integer":
        text = "Give the exact whole number, digits only."
    else:
        text = "Give a number; 4 significant figures are enough."
    if answer["log_space"]:
        text += " The answer is a natural logarithm."
    if answer["unit"]:
        text += f" Unit: {answer['unit']} (type the number only)."
    return text


def refuse_roster(bundle: dict[str, Any], fmt: str) -> None:
    """LMS formats make one question bank for a class, not one file per student.

    Raises:
        QuestionBankError: for a personalised bundle, saying what to do instead.
    """
    if bundle["personalised"]:
        raise QuestionBankError(
            f"--format {fmt} makes one importable bank for the whole class; the LMS gives each student "
            "their own draw. Drop --students and use -n N: each family becomes a group that draws one of "
            "its N variants per student.")


def arrangement_notes_html(variant: dict[str, Any]) -> str:
    """What an LMS shows after a wrong ordering or matching, which cannot attach a note to one pair:
    why each step follows the one before it, or each item's shape rule, and why each left-over
    option is wrong."""
    answer = variant["answer"]
    texts = {c["id"]: c["text"] for c in variant["choices"]}
    rows = []
    if answer["kind"] == "ordering":
        rules = {(r["before"], r["after"]): r["feedback"] for r in answer["rules"]}
        rows += [f"<li>{md_inline(texts[b])} comes after {md_inline(texts[a])}: {md_inline(rules[(a, b)])}</li>"
                 for a, b in zip(answer["value"], answer["value"][1:])]
    else:
        rows += [f"<li>{md_inline(slot['text'])}: {md_inline(texts[cid])}</li>"
                 for slot, cid in zip(answer["slots"], answer["value"])]
    # letters are left out: an LMS offers the choices in menus of its own order
    rows += [f"<li>{md_inline(c['text'])} is left over (<em>{html.escape(c['misconception']['name'])}</em>): "
             f"{md_inline(c['feedback'])}</li>" for c in variant["choices"] if not c["correct"]]
    return f"<ul>{''.join(rows)}</ul>"

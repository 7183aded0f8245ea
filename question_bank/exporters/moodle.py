"""Moodle XML export: a question-bank file for Moodle's "Import questions" page.

Question types:

* float and integer answers -> ``numerical``: the answer with its absolute
  tolerance (Moodle's tolerance is absolute, so rtol is turned into one),
  then every mistake the family knows for the variant (the distractors and
  the candidates not drawn) as a 0% answer carrying its misconception's
  feedback, then a ``*`` answer for any other number;
* shapes -> ``shortanswer``: the usual ways of typing the shape are accepted
  ((4, 8, 24), 4x8x24, ...), distractor shapes get their feedback;
* single and multiple choices -> ``multichoice`` with feedback on every
  answer; true/false -> ``truefalse`` with feedback on both answers;
* orderings and matchings -> ``matching`` (what Moodle's XML format imports
  as its match type): one subquestion per slot (a position "Step k" for an
  ordering, an item for a matching) with its answer, and a subquestion with
  empty text for each choice no slot takes, which Moodle offers as an extra
  wrong answer. Answers are plain text there. Moodle has no feedback per
  pair, so the partly-correct and incorrect feedback say why each step
  follows the one before it (or each item's shape) and why each left-over
  option is wrong.

Each family goes into its own category under "LM-head practice questions",
so a quiz can draw one random question per category. Math stays LaTeX in
``\\(...\\)`` for Moodle's MathJax filter; the worked solution is the general
feedback.
"""
from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from itertools import groupby
from typing import Any

from question_bank.exporters import Files, register_exporter
from question_bank.exporters._markup import to_text
from question_bank.exporters._lms import (
    QUIZ_TITLE,
    absolute_tolerance,
    arrangement_notes_html,
    correct_feedback,
    group_title,
    md_html,
    md_inline,
    numeric_instruction,
    question_html,
    refuse_roster,
    xml_number,
)

#: Grades Moodle accepts for an answer, in percent (its import rejects others).
MOODLE_FRACTIONS = ("100", "90", "83.33333", "80", "75", "70", "66.66667", "60", "50", "40", "33.33333",
                    "30", "25", "20", "16.66667", "14.28571", "12.5", "11.11111", "10", "5", "0")

PENALTY = "0.3333333"
_CDATA_TOKEN = "@@cdata{}@@"


@register_exporter("moodle", ".xml", "Moodle XML question bank (numerical, multichoice, shortanswer)")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> ``questions.xml``: one category per family, then its questions."""
    refuse_roster(bundle, "moodle")
    quiz = ET.Element("quiz")
    html_parts: list[str] = []
    number = 0
    # An exam files each slot in its own category (a quiz draws one random question from
    # it); a practice bank files each family.
    # a multi-part item's parts get a category each, so a quiz draws none of them in place of another
    for _, group in groupby(bundle["sheets"][0]["variants"],
                            key=lambda v: (v.get("slot", v["family"]), v.get("part", {}).get("item"),
                                           v.get("part", {}).get("label"))):
        members = list(group)
        quiz.append(category_element(group_title(members[0])))
        for variant in members:
            number += 1
            quiz.append(question_element(number, variant, html_parts))
    return {"questions.xml": _serialise(quiz, html_parts)}


def _serialise(root: ET.Element, html_parts: list[str]) -> str:
    """XML text with every HTML field in a CDATA section, as Moodle's own exports have them."""
    ET.indent(root, space="  ")
    text = ET.tostring(root, encoding="unicode")
    for index, part in enumerate(html_parts):
        text = text.replace(_CDATA_TOKEN.format(index), cdata(part), 1)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + text + "\n"


def cdata(text: str) -> str:
    """``text`` in a CDATA section; a ``]]>`` inside is split across two sections."""
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def _text(parent: ET.Element, tag: str, value: str, html_parts: list[str] | None = None,
          fmt: str | None = None) -> ET.Element:
    """``<tag [format=fmt]><text>value</text></tag>``; HTML values are kept for CDATA."""
    element = ET.SubElement(parent, tag, {"format": fmt} if fmt else {})
    text = ET.SubElement(element, "text")
    if html_parts is None:
        text.text = value
    else:
        html_parts.append(value)
        text.text = _CDATA_TOKEN.format(len(html_parts) - 1)
    return element


def category_element(title: str) -> ET.Element:
    """The pseudo-question that files the following questions under a category."""
    question = ET.Element("question", {"type": "category"})
    category = ET.SubElement(question, "category")
    ET.SubElement(category, "text").text = f"$course$/top/{QUIZ_TITLE}/{title}"
    return question


def _header(number: int, variant: dict[str, Any], qtype: str, instruction: str,
            html_parts: list[str]) -> ET.Element:
    question = ET.Element("question", {"type": qtype})
    _text(question, "name", f"{number:02d} {variant['title']}")
    _text(question, "questiontext", question_html(variant, instruction), html_parts, "html")
    _text(question, "generalfeedback", md_html(variant["solution"]), html_parts, "html")
    ET.SubElement(question, "defaultgrade").text = xml_number(float(variant.get("points", 1)))
    ET.SubElement(question, "penalty").text = PENALTY
    ET.SubElement(question, "hidden").text = "0"
    return question


def _answer(question: ET.Element, fraction: str, text: str, feedback: str, html_parts: list[str],
            answer_format: str = "moodle_auto_format", tolerance: str | None = None) -> None:
    answer = ET.SubElement(question, "answer", {"fraction": fraction, "format": answer_format})
    if answer_format == "html":
        html_parts.append(text)
        ET.SubElement(answer, "text").text = _CDATA_TOKEN.format(len(html_parts) - 1)
    else:
        ET.SubElement(answer, "text").text = text
    _text(answer, "feedback", feedback, html_parts, "html")
    if tolerance is not None:
        ET.SubElement(answer, "tolerance").text = tolerance


def question_element(number: int, variant: dict[str, Any], html_parts: list[str]) -> ET.Element:
    """One ``<question>`` of the type that fits the answer kind."""
    kind = variant["answer"]["kind"]
    if kind in ("float", "integer"):
        return numerical_question(number, variant, html_parts)
    if kind == "shape":
        return shape_question(number, variant, html_parts)
    if kind == "true_false":
        return true_false_question(number, variant, html_parts)
    if kind in ("ordering", "matching"):
        return matching_question(number, variant, html_parts)
    return multichoice_question(number, variant, html_parts)


def numerical_question(number: int, variant: dict[str, Any], html_parts: list[str]) -> ET.Element:
    """A ``numerical`` question: the answer, each distractor with its feedback, then anything else."""
    answer = variant["answer"]
    question = _header(number, variant, "numerical", numeric_instruction(answer), html_parts)
    _answer(question, "100", xml_number(answer["value"]), correct_feedback(variant), html_parts,
            tolerance=xml_number(absolute_tolerance(answer, answer["value"])))
    for mistake in variant["mistakes"]:
        _answer(question, "0", xml_number(mistake["value"]), _mistake_html(mistake), html_parts,
                tolerance=xml_number(absolute_tolerance(answer, mistake["value"])))
    _answer(question, "0", "*", "Not right; compare your steps with the worked solution.", html_parts,
            tolerance="0")
    # Units are named in the question text; Moodle should not ask for them.
    ET.SubElement(question, "unitgradingtype").text = "0"
    ET.SubElement(question, "unitpenalty").text = "0.1000000"
    ET.SubElement(question, "showunits").text = "3"
    ET.SubElement(question, "unitsleft").text = "0"
    return question


def shape_spellings(dims: list[int]) -> list[str]:
    """Ways people type a shape, all of which Moodle's exact matching should accept."""
    comma, tight = ", ".join(map(str, dims)), ",".join(map(str, dims))
    if len(dims) == 1:
        comma, tight = f"{dims[0]},", f"{dims[0]},"
    forms = [f"({comma})", f"({tight})", comma, tight, f"[{comma}]", f"[{tight}]"]
    forms += [sep.join(map(str, dims)) for sep in ("x", " x ", "×", " × ")]
    if len(dims) == 1:
        # A one-axis shape is also typed without the tuple comma: 3218, (3218), [3218].
        forms += [str(dims[0]), f"({dims[0]})", f"[{dims[0]}]"]
    return list(dict.fromkeys(forms))


def shape_question(number: int, variant: dict[str, Any], html_parts: list[str]) -> ET.Element:
    """A ``shortanswer`` question accepting the usual spellings of the shape."""
    instruction = "Type the shape like (4, 8, 24)."
    question = _header(number, variant, "shortanswer", instruction, html_parts)
    ET.SubElement(question, "usecase").text = "0"
    feedback = correct_feedback(variant)
    for form in shape_spellings(variant["answer"]["value"]):
        _answer(question, "100", form, feedback, html_parts)
    taken = set(shape_spellings(variant["answer"]["value"]))
    for mistake in variant["mistakes"]:
        for form in shape_spellings(mistake["value"]):
            if form not in taken:          # Moodle uses the first answer a response matches
                taken.add(form)
                _answer(question, "0", form, _mistake_html(mistake), html_parts)
    _answer(question, "0", "*", "Not right; compare your steps with the worked solution.", html_parts)
    return question


def true_false_question(number: int, variant: dict[str, Any], html_parts: list[str]) -> ET.Element:
    """A ``truefalse`` question with feedback on both answers."""
    question = _header(number, variant, "truefalse", "", html_parts)
    for choice in variant["choices"]:
        fraction = "100" if choice["correct"] else "0"
        text = "true" if choice["value"] else "false"
        feedback = md_inline(choice["feedback"]) if choice["correct"] else _mistake_html(choice)
        _answer(question, fraction, text, feedback, html_parts)
    return question


def choice_fractions(variant: dict[str, Any]) -> list[str]:
    """Grade of each choice: correct ones share 100%, wrong ones share -100% when several may be picked.

    Raises:
        ValueError: if a share is not one of :data:`MOODLE_FRACTIONS`.
    """
    choices = variant["choices"]
    if variant["answer"]["kind"] != "multiple_choice":
        return ["100" if c["correct"] else "0" for c in choices]
    n_correct = sum(c["correct"] for c in choices)
    n_wrong = len(choices) - n_correct
    right, wrong = _fraction(100 / n_correct), _fraction(100 / n_wrong) if n_wrong else "0"
    return [right if c["correct"] else ("-" + wrong if wrong != "0" else "0") for c in choices]


def _fraction(percent: float) -> str:
    for allowed in MOODLE_FRACTIONS:
        if abs(float(allowed) - percent) < 1e-4:
            return allowed
    raise ValueError(f"{percent:.5f}% is not a grade Moodle accepts; "
                     "use a number of choices it divides evenly")


def multichoice_question(number: int, variant: dict[str, Any], html_parts: list[str]) -> ET.Element:
    """A ``multichoice`` question (one or several answers) with feedback on every answer."""
    single = variant["answer"]["kind"] != "multiple_choice"
    question = _header(number, variant, "multichoice", "", html_parts)  # checkboxes already say "several"
    ET.SubElement(question, "single").text = "true" if single else "false"
    ET.SubElement(question, "shuffleanswers").text = "true"
    ET.SubElement(question, "answernumbering").text = "abc"
    _text(question, "correctfeedback", "Your answer is correct.", html_parts, "html")
    _text(question, "partiallycorrectfeedback", "Your answer is partially correct.", html_parts, "html")
    _text(question, "incorrectfeedback", "Your answer is incorrect.", html_parts, "html")
    for fraction, choice in zip(choice_fractions(variant), variant["choices"]):
        feedback = md_inline(choice["feedback"]) if choice["correct"] else _mistake_html(choice)
        _answer(question, fraction, md_inline(choice["text"]), feedback, html_parts, answer_format="html")
    return question


def _mistake_html(choice: dict[str, Any]) -> str:
    """A distractor's (or known mistake's) feedback, led by the name of its misconception."""
    return f"<em>{html.escape(choice['misconception']['name'])}</em>. {md_inline(choice['feedback'])}"


def matching_question(number: int, variant: dict[str, Any], html_parts: list[str]) -> ET.Element:
    """A ``matching`` question: a subquestion per slot, an empty one per left-over choice."""
    answer = variant["answer"]
    how = ("Pick the line that runs at each step; one line is left out." if answer["kind"] == "ordering"
           else "Pick each item's shape; some shapes are left over.")
    question = _header(number, variant, "matching", how, html_parts)
    ET.SubElement(question, "shuffleanswers").text = "true"
    notes = arrangement_notes_html(variant)
    _text(question, "correctfeedback", "Your answer is correct.", html_parts, "html")
    _text(question, "partiallycorrectfeedback", "Your answer is partially correct. " + notes, html_parts, "html")
    _text(question, "incorrectfeedback", "Your answer is incorrect. " + notes, html_parts, "html")
    ET.SubElement(question, "shownumcorrect")
    texts = {c["id"]: to_text(c["text"]) for c in variant["choices"]}
    for slot, cid in zip(answer["slots"], answer["value"]):
        sub = _text(question, "subquestion", md_inline(slot["text"]), html_parts, "html")
        ET.SubElement(ET.SubElement(sub, "answer"), "text").text = texts[cid]
    for choice in variant["choices"]:
        if choice["id"] not in answer["value"]:
            sub = _text(question, "subquestion", "", html_parts, "html")  # empty text: a distractor
            ET.SubElement(ET.SubElement(sub, "answer"), "text").text = texts[choice["id"]]
    return question

"""Canvas QTI export: a QTI 1.2 zip (``imsmanifest.xml`` + one assessment) for Canvas quizzes.

Item types, as Canvas names them in ``itemmetadata``:

* float and integer answers -> ``numerical_question``: the exact value with
  a ``<vargte>``/``<varlte>`` range for the tolerance. Canvas keeps four
  decimal places, so an answer whose tolerance is finer than 1e-4 is asked
  differently (see :func:`canvas_number`): tiny positive quantities such as
  probabilities are asked as their natural log, others in scaled units.
  Canvas cannot attach feedback to a wrong number, so the incorrect-answer
  feedback lists the common mistakes;
* shapes and single choices -> ``multiple_choice_question`` with feedback on
  every choice (Canvas has no shape type, and a typed shape would be matched
  as an exact string);
* multiple choices -> ``multiple_answers_question``; true/false ->
  ``true_false_question``;
* orderings and matchings -> ``matching_question``: one ``response_lid`` per
  slot (a position "Step k" for an ordering, an item for a matching), every
  choice offered in each, one condition adding the slot's share of the score
  per correct pair; a choice no slot takes is a distractor, as Canvas's own
  matching exports have them (its importer reads the options of the first
  slot as the right-hand side and a scored condition as a pair). Canvas
  attaches no feedback to one pair, so the incorrect-answer feedback says why
  each step follows the one before it (or each item's shape) and why each
  left-over option is wrong.

Every item's general feedback is the worked solution. When a family has
several variants they form a question group that draws one per student.
"""
from __future__ import annotations

import io
import math
import xml.etree.ElementTree as ET
import zipfile
from dataclasses import dataclass
from itertools import groupby
from typing import Any

from question_bank.exporters import Files, register_exporter
from question_bank.exporters._markup import to_text
from question_bank.exporters._lms import (
    QUIZ_TITLE,
    absolute_tolerance,
    arrangement_notes_html,
    common_mistakes_html,
    correct_feedback,
    group_title,
    md_html,
    md_inline,
    numeric_instruction,
    question_html,
    refuse_roster,
    stable_id,
    xml_number,
)

QTI_NAMESPACE = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2"
QTI_SCHEMA = "http://www.imsglobal.org/xsd/ims_qtiasiv1p2p1.xsd"
MANIFEST_NAMESPACE = "http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1"
XSI_NAMESPACE = "http://www.w3.org/2001/XMLSchema-instance"

#: Canvas stores numeric answers to this many decimal places.
CANVAS_DECIMALS = 4
#: The smallest tolerance Canvas can hold.
CANVAS_MIN_MARGIN = 10.0 ** -CANVAS_DECIMALS
#: Positive answers below this are asked as natural logs, like the bank's tiny probabilities.
CANVAS_LOG_BELOW = 1e-3

RESPONSE = "response1"
#: Points of every item, written the way Canvas writes them.
POINTS = "1.0"
#: Fixed zip entry time, so the same seed gives the same bytes.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class CanvasNumber:
    """A numeric answer as Canvas will grade it.

    Attributes:
        value: the number to type.
        margin: half-width of the accepted range.
        instruction: Markdown telling the student how to type it, when it
            differs from the plain answer (log or scaled units); else "".
    """

    value: float | int
    margin: float
    instruction: str = ""


def canvas_number(answer: dict[str, Any]) -> CanvasNumber:
    """The number Canvas should expect for a float or integer ``answer``.

    A tolerance of at least 1e-4 is kept as it is. Below that, a positive
    answer under :data:`CANVAS_LOG_BELOW` is asked as its natural log (the
    relative tolerance becomes an absolute one on ln x), and any other
    answer is asked multiplied by the power of ten that lifts its
    tolerance to 1e-4.
    """
    value = answer["value"]
    if answer["kind"] == "integer":
        return CanvasNumber(value, 0.0)
    margin = absolute_tolerance(answer, value)
    if margin >= CANVAS_MIN_MARGIN:
        return CanvasNumber(value, margin)
    if 0 < value < CANVAS_LOG_BELOW:
        return CanvasNumber(math.log(value), answer["rtol"] + answer["atol"] / value,
                            "Canvas cannot take numbers this small: type the natural log of your "
                            "answer, $\\ln x$ (for $x = 0.0012$ type $-6.725$).")
    scale = _scale(margin)
    return CanvasNumber(value * scale, margin * scale,
                        f"Canvas keeps 4 decimal places: type your answer multiplied by "
                        f"{scale:,} (for $x = 0.0012$ type ${xml_number(0.0012 * scale)}$).")


def _scale(margin: float) -> int:
    """The power of ten that lifts an absolute tolerance ``margin`` to Canvas's 1e-4."""
    return 10 ** math.ceil(math.log10(CANVAS_MIN_MARGIN / margin))


def as_asked(answer: dict[str, Any], x: float | int) -> float | int | None:
    """``x`` on the scale Canvas asks ``answer`` in (see :func:`canvas_number`).

    ``None`` when that scale cannot show ``x``: a non-positive number has no
    natural log.
    """
    if answer["kind"] == "integer":
        return x
    margin = absolute_tolerance(answer, answer["value"])
    if margin >= CANVAS_MIN_MARGIN:
        return x
    if 0 < answer["value"] < CANVAS_LOG_BELOW:
        return math.log(x) if x > 0 else None
    return x * _scale(margin)


@register_exporter("qti", ".zip", "Canvas QTI 1.2 zip (numerical with tolerance, choices with feedback)")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> ``questions.zip`` holding ``imsmanifest.xml`` and the assessment XML."""
    refuse_roster(bundle, "qti")
    variants = bundle["sheets"][0]["variants"]
    assessment_id = stable_id("a", *(v["id"] for v in variants))
    members = {
        "imsmanifest.xml": manifest_xml(assessment_id),
        f"{assessment_id}/{assessment_id}.xml": assessment_xml(assessment_id, variants),
    }
    return {"questions.zip": deterministic_zip(members)}


def deterministic_zip(members: dict[str, str]) -> bytes:
    """A zip whose bytes depend on the members only (fixed times, order and attributes)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in members.items():
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3          # the default depends on the platform
            info.external_attr = 0o644 << 16
            archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


def _serialise(root: ET.Element) -> str:
    ET.indent(root, space="  ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def manifest_xml(assessment_id: str) -> str:
    """``imsmanifest.xml``: one resource of type ``imsqti_xmlv1p2`` pointing at the assessment."""
    root = ET.Element("manifest", {"identifier": f"{assessment_id}-manifest", "xmlns": MANIFEST_NAMESPACE})
    metadata = ET.SubElement(root, "metadata")
    ET.SubElement(metadata, "schema").text = "IMS Content"
    ET.SubElement(metadata, "schemaversion").text = "1.1.3"
    ET.SubElement(root, "organizations")
    resources = ET.SubElement(root, "resources")
    resource = ET.SubElement(resources, "resource", {"identifier": assessment_id, "type": "imsqti_xmlv1p2"})
    ET.SubElement(resource, "file", {"href": f"{assessment_id}/{assessment_id}.xml"})
    return _serialise(root)


def assessment_xml(assessment_id: str, variants: list[dict[str, Any]]) -> str:
    """The QTI assessment: a root section, with one question group per family that has several variants."""
    root = ET.Element("questestinterop", {"xmlns": QTI_NAMESPACE, "xmlns:xsi": XSI_NAMESPACE,
                                          "xsi:schemaLocation": f"{QTI_NAMESPACE} {QTI_SCHEMA}"})
    assessment = ET.SubElement(root, "assessment", {"ident": assessment_id, "title": QUIZ_TITLE})
    _metadata(assessment, {"cc_maxattempts": "1"})
    section = ET.SubElement(assessment, "section", {"ident": "root_section"})
    number = 0
    # An exam groups by slot (every member the same task, drawn once per student); a
    # practice bank by family.
    # a multi-part item's parts are consecutive questions, never drawn from a pool: each is its own group key
    for _, group in groupby(variants, key=lambda v: (v.get("slot", v["family"]), v.get("part", {}).get("item"),
                                                     v.get("part", {}).get("label"))):
        members = list(group)
        parent = section if len(members) == 1 and "slot" not in members[0] else _group(section, members[0])
        for variant in members:
            number += 1
            parent.append(item_element(number, variant))
    return _serialise(root)


def _group(section: ET.Element, first: dict[str, Any]) -> ET.Element:
    """A Canvas question group that draws one of its items for each student."""
    group = ET.SubElement(section, "section",
                          {"ident": stable_id("g", "group", first["id"]), "title": group_title(first)})
    selection = ET.SubElement(ET.SubElement(group, "selection_ordering"), "selection")
    ET.SubElement(selection, "selection_number").text = "1"
    extension = ET.SubElement(selection, "selection_extension")
    ET.SubElement(extension, "points_per_item").text = item_points(first)
    return group


def _metadata(parent: ET.Element, fields: dict[str, str]) -> None:
    block = ET.SubElement(parent, "qtimetadata")
    for label, entry in fields.items():
        field = ET.SubElement(block, "qtimetadatafield")
        ET.SubElement(field, "fieldlabel").text = label
        ET.SubElement(field, "fieldentry").text = entry


def _mattext(parent: ET.Element, html_text: str, texttype: str = "text/html") -> None:
    material = ET.SubElement(parent, "material")
    ET.SubElement(material, "mattext", {"texttype": texttype}).text = html_text


def item_points(variant: dict[str, Any]) -> str:
    """An exam slot's points, else the practice default."""
    return xml_number(float(variant["points"])) if "points" in variant else POINTS


def item_element(number: int, variant: dict[str, Any]) -> ET.Element:
    """One ``<item>`` of the Canvas type that fits the answer kind."""
    kind = variant["answer"]["kind"]
    if kind in ("float", "integer"):
        return numerical_item(number, variant)
    if kind in ("ordering", "matching"):
        return matching_item(number, variant)
    return choice_item(number, variant)


def _item_shell(number: int, variant: dict[str, Any], question_type: str,
                answer_ids: list[str]) -> ET.Element:
    item = ET.Element("item", {"ident": stable_id("i", variant["id"]),
                               "title": f"{number}. {variant['title']}"})
    fields = {"question_type": question_type, "points_possible": item_points(variant)}
    if answer_ids:
        fields["original_answer_ids"] = ",".join(answer_ids)
    _metadata(ET.SubElement(item, "itemmetadata"), fields)
    return item


def _feedback(item: ET.Element, ident: str, html_text: str) -> None:
    feedback = ET.SubElement(item, "itemfeedback", {"ident": ident})
    _mattext(ET.SubElement(feedback, "flow_mat"), html_text)


def _condition(resprocessing: ET.Element, cont: str, test: ET.Element, feedback: str | None = None,
               score: str | None = None) -> None:
    condition = ET.SubElement(resprocessing, "respcondition", {"continue": cont})
    ET.SubElement(condition, "conditionvar").append(test)
    if score is not None:
        ET.SubElement(condition, "setvar", {"action": "Set", "varname": "SCORE"}).text = score
    if feedback is not None:
        ET.SubElement(condition, "displayfeedback", {"feedbacktype": "Response", "linkrefid": feedback})


def _var(tag: str, text: str) -> ET.Element:
    element = ET.Element(tag, {"respident": RESPONSE})
    element.text = text
    return element


def _resprocessing(item: ET.Element) -> ET.Element:
    resprocessing = ET.SubElement(item, "resprocessing")
    outcomes = ET.SubElement(resprocessing, "outcomes")
    ET.SubElement(outcomes, "decvar", {"maxvalue": "100", "minvalue": "0", "varname": "SCORE",
                                       "vartype": "Decimal"})
    _condition(resprocessing, "Yes", ET.Element("other"), feedback="general_fb")
    return resprocessing


def numerical_item(number: int, variant: dict[str, Any]) -> ET.Element:
    """A ``numerical_question``: exact value or range, worked solution and common mistakes."""
    answer = variant["answer"]
    target = canvas_number(answer)
    instruction = target.instruction or numeric_instruction(answer)
    item = _item_shell(number, variant, "numerical_question", [])
    presentation = ET.SubElement(item, "presentation")
    _mattext(presentation, question_html(variant, instruction))
    response = ET.SubElement(presentation, "response_str", {"ident": RESPONSE, "rcardinality": "Single"})
    ET.SubElement(ET.SubElement(response, "render_fib", {"fibtype": "Decimal"}), "response_label",
                  {"ident": "answer1"})
    resprocessing = _resprocessing(item)
    either = ET.Element("or")
    either.append(_var("varequal", xml_number(target.value)))
    both = ET.SubElement(either, "and")
    both.append(_var("vargte", xml_number(target.value - target.margin)))
    both.append(_var("varlte", xml_number(target.value + target.margin)))
    _condition(resprocessing, "No", either, feedback="correct_fb", score="100")
    _condition(resprocessing, "Yes", ET.Element("other"), feedback="general_incorrect_fb")
    _feedback(item, "general_fb", md_html(variant["solution"]))
    _feedback(item, "correct_fb", correct_feedback(variant))
    _feedback(item, "general_incorrect_fb", common_mistakes_html(variant, lambda x: as_asked(answer, x)))
    return item


_CHOICE_TYPES = {"shape": "multiple_choice_question", "single_choice": "multiple_choice_question",
                 "multiple_choice": "multiple_answers_question", "true_false": "true_false_question"}


def choice_item(number: int, variant: dict[str, Any]) -> ET.Element:
    """A multiple-choice, multiple-answers or true/false item with feedback on every choice."""
    kind = variant["answer"]["kind"]
    labels = [str(100 * number + index + 1) for index in range(len(variant["choices"]))]
    item = _item_shell(number, variant, _CHOICE_TYPES[kind], labels)
    presentation = ET.SubElement(item, "presentation")
    _mattext(presentation, question_html(variant))  # checkboxes already say "several"
    cardinality = "Multiple" if kind == "multiple_choice" else "Single"
    response = ET.SubElement(presentation, "response_lid", {"ident": RESPONSE, "rcardinality": cardinality})
    render = ET.SubElement(response, "render_choice")
    for label, choice in zip(labels, variant["choices"]):
        option = ET.SubElement(render, "response_label", {"ident": label})
        _mattext(option, md_inline(choice["text"]))
    resprocessing = _resprocessing(item)
    for label, choice in zip(labels, variant["choices"]):
        if choice["feedback"]:
            _condition(resprocessing, "Yes", _var("varequal", label), feedback=f"{label}_fb")
    correct = [label for label, c in zip(labels, variant["choices"]) if c["correct"]]
    if kind == "multiple_choice":
        test = ET.Element("and")
        for label, choice in zip(labels, variant["choices"]):
            if choice["correct"]:
                test.append(_var("varequal", label))
            else:
                ET.SubElement(test, "not").append(_var("varequal", label))
    else:
        test = _var("varequal", correct[0])
    _condition(resprocessing, "No", test, score="100")
    _feedback(item, "general_fb", md_html(variant["solution"]))
    for label, choice in zip(labels, variant["choices"]):
        if choice["feedback"]:
            _feedback(item, f"{label}_fb", md_inline(choice["feedback"]))
    return item


def matching_item(number: int, variant: dict[str, Any]) -> ET.Element:
    """A ``matching_question``: a dropdown of every choice per slot, each correct pair worth its share."""
    answer = variant["answer"]
    slot_labels = [str(100 * number + k + 1) for k in range(len(answer["slots"]))]
    choice_labels = {c["id"]: str(1000 * number + k + 1) for k, c in enumerate(variant["choices"])}
    item = _item_shell(number, variant, "matching_question", slot_labels)
    presentation = ET.SubElement(item, "presentation")
    how = ("Pick the line that runs at each step; one line is left out." if answer["kind"] == "ordering"
           else "Pick each item's shape; some shapes are left over.")
    _mattext(presentation, question_html(variant, how))
    for label, slot in zip(slot_labels, answer["slots"]):
        response = ET.SubElement(presentation, "response_lid", {"ident": f"response_{label}", "rcardinality": "Single"})
        # both sides plain text, as Canvas's matching questions hold them (its menus show no markup)
        _mattext(response, to_text(slot["text"]), "text/plain")
        render = ET.SubElement(response, "render_choice")
        for choice in variant["choices"]:
            option = ET.SubElement(render, "response_label", {"ident": choice_labels[choice["id"]]})
            _mattext(option, to_text(choice["text"]), "text/plain")
    resprocessing = _resprocessing(item)
    share = xml_number(round(100 / len(slot_labels), 4))
    for label, cid in zip(slot_labels, answer["value"]):
        condition = ET.SubElement(resprocessing, "respcondition", {"continue": "Yes"})  # every pair adds its share
        test = ET.Element("varequal", {"respident": f"response_{label}"})
        test.text = choice_labels[cid]
        ET.SubElement(condition, "conditionvar").append(test)
        ET.SubElement(condition, "setvar", {"varname": "SCORE", "action": "Add"}).text = share
    _feedback(item, "general_fb", md_html(variant["solution"]))
    _feedback(item, "general_incorrect_fb", arrangement_notes_html(variant))
    return item

"""Does every exporter turn every family into valid, deterministic output of its format?

Structure tests check each LMS format against the elements and attributes
its importer documents; golden files pin the exact output. Regenerate the
golden files with ``UPDATE_GOLDEN=1 python -m pytest tests/test_exports.py``
and review the diff; they are never rewritten silently.
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import shutil
import xml.etree.ElementTree as ET
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
from click.testing import CliRunner

from autograder.cli_questions import questions
from question_bank import build_bundle, family_names
from question_bank.answers import answer_key, judge
from question_bank.errors import QuestionBankError
from question_bank.exporters import companion_path, exporters, get_exporter, write_files
from question_bank.exporters._markup import inline, mathml, tex_delimited, tex_to_text, to_html
from question_bank.exporters._payload import decode_payload, encode_payload
from question_bank.exporters.moodle import MOODLE_FRACTIONS, cdata, shape_spellings
from question_bank.exporters.qti import CANVAS_MIN_MARGIN, canvas_number
from question_bank.registry import get_family

GOLDEN = Path(__file__).parent / "golden" / "question_bank"
FORMATS = ("html", "json", "md", "moodle", "notebook", "qti", "selfcheck")

#: Families whose variants cover every answer kind (float, ln-probability,
#: integer, shape, single, multiple and true/false choice) at GOLDEN_SEED.
GOLDEN_FAMILIES = ["perplexity-from-probs", "chain-rule-joint", "causal-mask", "tied-weights",
                   "greedy-next-token", "misconceptions-true-false"]
GOLDEN_SEED = 1


@pytest.fixture(scope="module")
def every_family() -> dict:
    """One variant of every family."""
    return build_bundle(n=1, seed=3)


@pytest.fixture(scope="module")
def golden_bundle() -> dict:
    return build_bundle(GOLDEN_FAMILIES, n=2, seed=GOLDEN_SEED)


@pytest.fixture(scope="module")
def outputs(every_family) -> dict:
    """Every format's files for the every-family bundle, made once."""
    return {fmt: get_exporter(fmt).transform(every_family) for fmt in FORMATS}


def variants_of(bundle: dict) -> list[dict]:
    return bundle["sheets"][0]["variants"]


def zip_members(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode("utf-8") for name in archive.namelist()}


# --- the registry ----------------------------------------------------------------------

def test_registry_holds_every_format_with_a_description():
    registry = exporters()
    assert set(FORMATS) <= set(registry)
    for name, exporter in registry.items():
        assert exporter.name == name and exporter.description and exporter.suffix.startswith(".")


@pytest.mark.parametrize("fmt", FORMATS)
def test_same_seed_same_bytes_other_seed_other_bytes(fmt):
    exporter = get_exporter(fmt)
    bundle = build_bundle(["uniform-baseline", "tied-weights"], n=2, seed=4)
    first = exporter.transform(bundle)
    assert exporter.transform(build_bundle(["uniform-baseline", "tied-weights"], n=2, seed=4)) == first
    assert exporter.transform(build_bundle(["uniform-baseline", "tied-weights"], n=2, seed=5)) != first


# --- every format renders every family ---------------------------------------------------

class BalanceChecker(HTMLParser):
    """Records unclosed or stray tags of an HTML document."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track",
            "wbr"}

    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()


def assert_balanced_html(text: str) -> None:
    checker = BalanceChecker()
    checker.feed(text)
    checker.close()
    assert not checker.problems and not checker.stack, (checker.problems[:3], checker.stack[-3:])


def visible_text(page: str) -> str:
    """Page text outside code spans, scripts and MathML (where a `$` would be unrendered math)."""
    page = re.sub(r"<script>.*?</script>|<code>.*?</code>|<math.*?</math>", "", page, flags=re.S)
    return re.sub(r'data-key="[^"]*"', "", page)


def test_md_worksheet_and_separate_key_hold_every_family(outputs, every_family):
    files = outputs["md"]
    assert list(files) == ["questions.md", "answer-key.md"]
    for variant in variants_of(every_family):
        assert variant["stem"].splitlines()[0] in files["questions.md"]
        assert variant["id"] in files["answer-key.md"] and variant["id"] not in files["questions.md"]
    assert "**Answer:**" not in files["questions.md"]


def test_html_worksheet_and_key_are_balanced_with_all_math_rendered(outputs, every_family):
    files = outputs["html"]
    assert list(files) == ["questions.html", "answer-key.html"]
    for page in files.values():
        assert_balanced_html(page)
        assert "$" not in visible_text(page).replace("<code>$</code>", "")
        assert "<math" in page and "src=" not in page and "href=" not in page
    for number, variant in enumerate(variants_of(every_family), start=1):
        assert f"<h2>{number}. {variant['title']}</h2>".replace("'", "&#x27;") in files["questions.html"]
        assert variant["id"] in files["answer-key.html"]
    assert "Answer:" not in files["questions.html"] and "Worked solution" not in files["questions.html"]


def test_selfcheck_page_hides_answers_but_decodes_every_key(outputs, every_family):
    page = outputs["selfcheck"]["questions.html"]
    assert_balanced_html(page)
    assert "default-src 'none'" in page and "src=" not in page and "href=" not in page
    # a part that reads an earlier part names it in data-carry-from, between its id and its key
    sections = re.findall(r'<section class="item" id="(q\d+)"(?: data-carry-from="q\d+")? data-key="([^"]+)"', page)
    assert len(sections) == len(variants_of(every_family))
    for (ident, payload), variant in zip(sections, variants_of(every_family)):
        key = decode_payload(payload, ident)
        assert key["kind"] == variant["answer"]["kind"] and key["value"] == variant["answer"]["value"]
        hidden = [variant["solution"].split(".")[0]] + [c["feedback"] for c in variant["choices"]]
        if variant["answer"]["kind"] in ("float", "integer", "shape"):
            hidden += [variant["answer"]["display"], repr(variant["answer"]["value"])]
        readable = re.sub(r'data-key="[^"]*"', "", page)
        for secret in hidden:
            if secret not in variant["stem"]:       # a stem may show a number that is also the answer
                assert secret not in readable, (variant["id"], secret)
        assert variant["id"] not in page, "the seed must not be readable"


def run_notebook_checker(notebook_text: str) -> tuple[dict, list[str]]:
    """Execute the checker cell as Jupyter would; collect what ``check`` shows."""
    nb = nbformat.reads(notebook_text, as_version=4)
    shown: list[str] = []
    namespace: dict = {}
    exec(compile(nb.cells[1].source, "checker", "exec"), namespace)
    namespace["_show"] = shown.append
    return namespace, shown


def test_notebook_checks_right_wrong_and_malformed_answers(outputs, every_family):
    text = outputs["notebook"]["questions.ipynb"]
    nb = nbformat.reads(text, as_version=4)
    nbformat.validate(nb)
    variants = variants_of(every_family)
    assert len(nb.cells) == 2 + 3 * len(variants)
    assert [c.id for c in nb.cells[:5]] == ["intro", "checker", "q1-question", "q1-answer", "q1-check"]
    namespace, shown = run_notebook_checker(text)
    for number, variant in enumerate(variants, start=1):
        assert nb.cells[3 * number].source.startswith(f"answer_{number} = ...")
        assert nb.cells[3 * number + 1].source == f"check({number}, answer_{number})"
        key = answer_key(variant)
        correct = key["value"]
        if key["kind"] == "shape":
            correct = tuple(correct)                    # students write shapes as tuples
        namespace["check"](number, correct)
        assert shown[-1].startswith("**Right.**"), (variant["id"], shown[-1])
        assert "**Worked solution.**" in shown[-1]
        wrong = next(c for c in variant["choices"] if not c["correct"])
        if key["kind"] in ("ordering", "matching"):
            # the left-over choice in the first slot: the notebook names what the judge names
            response = [wrong["id"]] + key["value"][1:]
            verdict = judge(key, response)
            namespace["check"](number, response)
            assert shown[-1].startswith(f"**Not right: {verdict.misconception}.**" if verdict.misconception
                                        else "**Not right.**"), variant["id"]
            continue
        by_id = key["kind"] in ("single_choice", "multiple_choice")
        wrong_response = wrong["id"] if by_id else wrong["value"]
        namespace["check"](number, wrong_response)
        assert shown[-1].startswith(f"**Not right: {wrong['misconception']['name']}.**"), variant["id"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        namespace["check"](1, ...)
        namespace["check"](1, "not an answer")
    assert "Replace the ... in the answer cell of question 1" in printed.getvalue()
    assert "Could not read 'not an answer'" in printed.getvalue()


def test_notebook_runs_in_a_jupyter_kernel():
    """The checker cell works in a real kernel, not only under exec()."""
    from nbclient import NotebookClient

    bundle = build_bundle(["perplexity-from-probs", "lm-head-shapes"], n=1, seed=2)
    first, second = variants_of(bundle)
    assert second["answer"]["kind"] == "shape"
    nb = nbformat.reads(get_exporter("notebook").transform(bundle)["questions.ipynb"], as_version=4)
    nb.cells[3].source = f"answer_1 = {first['answer']['value']:.4g}"
    nb.cells[6].source = f"answer_2 = {tuple(second['answer']['value'])!r}"   # a shape as a tuple
    NotebookClient(nb, timeout=60, kernel_name="python3").execute()
    shown = [o["data"]["text/markdown"] for c in nb.cells if c.id.endswith("-check") for o in c.outputs]
    assert len(shown) == 2 and all(text.startswith("**Right.**") for text in shown)


def test_notebook_hides_answers(outputs, every_family):
    text = outputs["notebook"]["questions.ipynb"]
    for variant in variants_of(every_family):
        assert variant["solution"].split(".")[0] not in text
        assert variant["id"] not in text


# --- Canvas QTI ---------------------------------------------------------------------------

QTI_NS = "{http://www.imsglobal.org/xsd/ims_qtiasiv1p2}"
MANIFEST_NS = "{http://www.imsglobal.org/xsd/imsccv1p1/imscp_v1p1}"
CONDITIONS = {"varequal", "vargte", "varlte", "and", "or", "not", "other"}

#: QTI 1.2 as Canvas imports it: allowed children (in order groups) and required attributes.
QTI_STRUCTURE = {
    "questestinterop": ({"assessment"}, set()),
    "assessment": ({"qtimetadata", "section"}, {"ident", "title"}),
    "section": ({"section", "item", "selection_ordering"}, {"ident"}),
    "selection_ordering": ({"selection"}, set()),
    "selection": ({"selection_number", "selection_extension"}, set()),
    "selection_extension": ({"points_per_item"}, set()),
    "item": ({"itemmetadata", "presentation", "resprocessing", "itemfeedback"}, {"ident", "title"}),
    "itemmetadata": ({"qtimetadata"}, set()),
    "qtimetadata": ({"qtimetadatafield"}, set()),
    "qtimetadatafield": ({"fieldlabel", "fieldentry"}, set()),
    "presentation": ({"material", "response_lid", "response_str"}, set()),
    "material": ({"mattext"}, set()),
    "mattext": (set(), {"texttype"}),
    # a matching question's response_lid carries its left-hand text (Canvas's own matching exports)
    "response_lid": ({"render_choice", "material"}, {"ident", "rcardinality"}),
    "response_str": ({"render_fib"}, {"ident", "rcardinality"}),
    "render_choice": ({"response_label"}, set()),
    "render_fib": ({"response_label"}, {"fibtype"}),
    "response_label": ({"material"}, {"ident"}),
    "resprocessing": ({"outcomes", "respcondition"}, set()),
    "outcomes": ({"decvar"}, set()),
    "decvar": (set(), {"varname", "vartype", "minvalue", "maxvalue"}),
    "respcondition": ({"conditionvar", "setvar", "displayfeedback"}, {"continue"}),
    "conditionvar": (CONDITIONS, set()),
    "and": (CONDITIONS, set()), "or": (CONDITIONS, set()), "not": (CONDITIONS, set()),
    "varequal": (set(), {"respident"}), "vargte": (set(), {"respident"}), "varlte": (set(), {"respident"}),
    "other": (set(), set()),
    "setvar": (set(), {"action", "varname"}),
    "displayfeedback": (set(), {"feedbacktype", "linkrefid"}),
    "itemfeedback": ({"flow_mat"}, {"ident"}),
    "flow_mat": ({"material"}, set()),
    "fieldlabel": (set(), set()), "fieldentry": (set(), set()),
    "selection_number": (set(), set()), "points_per_item": (set(), set()),
}
ITEM_ORDER = ["itemmetadata", "presentation", "resprocessing", "itemfeedback"]
CANVAS_TYPES = {"numerical_question", "multiple_choice_question", "multiple_answers_question",
                "true_false_question", "matching_question"}


def local(tag: str) -> str:
    return tag.split("}")[-1]


def check_structure(root: ET.Element, structure: dict) -> list[str]:
    """Problems with element names, children and required attributes under ``root``."""
    problems = []
    for element in root.iter():
        name = local(element.tag)
        if name not in structure:
            problems.append(f"unexpected element <{name}>")
            continue
        children, required = structure[name]
        problems += [f"<{name}> may not hold <{local(c.tag)}>" for c in element
                     if local(c.tag) not in children]
        problems += [f"<{name}> lacks @{a}" for a in required if a not in element.attrib]
    return problems


def qti_items(zip_bytes: bytes) -> tuple[ET.Element, ET.Element, dict[str, str]]:
    members = zip_members(zip_bytes)
    manifest = ET.fromstring(members["imsmanifest.xml"])
    (href,) = [f.get("href") for f in manifest.iter(f"{MANIFEST_NS}file")]
    return manifest, ET.fromstring(members[href]), members


def item_fields(item: ET.Element) -> dict[str, str]:
    return {f.findtext(f"{QTI_NS}fieldlabel"): f.findtext(f"{QTI_NS}fieldentry")
            for f in item.iter(f"{QTI_NS}qtimetadatafield")}


def check_qti_item(item: ET.Element) -> list[str]:
    """Cross-references inside one item, as Canvas resolves them."""
    problems = []
    order = [local(c.tag) for c in item]
    if order != sorted(order, key=ITEM_ORDER.index):
        problems.append(f"item children out of order: {order}")
    fields = item_fields(item)
    if fields.get("question_type") not in CANVAS_TYPES:
        problems.append(f"question_type {fields.get('question_type')!r}")
    if float(fields.get("points_possible", "nan")) <= 0:
        problems.append("points_possible must be positive")
    responses = {r.get("ident") for r in item.iter() if local(r.tag) in ("response_lid", "response_str")}
    labels = {lab.get("ident") for lab in item.iter(f"{QTI_NS}response_label")}
    feedback_ids = {f.get("ident") for f in item.iter(f"{QTI_NS}itemfeedback")}
    for var in item.iter():
        if local(var.tag) in ("varequal", "vargte", "varlte") and var.get("respident") not in responses:
            problems.append(f"{local(var.tag)} refers to unknown response {var.get('respident')}")
    for shown in item.iter(f"{QTI_NS}displayfeedback"):
        if shown.get("linkrefid") not in feedback_ids:
            problems.append(f"displayfeedback {shown.get('linkrefid')} has no itemfeedback")
    for condition in item.iter(f"{QTI_NS}conditionvar"):
        if len(condition) != 1:
            problems.append("a conditionvar holds exactly one test")
    if fields.get("question_type") == "matching_question":
        return problems + _matching_item_problems(item)
    scores = [s for s in item.iter(f"{QTI_NS}setvar") if s.get("varname") == "SCORE" and s.text == "100"]
    if len(scores) != 1:
        problems.append(f"{len(scores)} conditions give full marks")
    if fields.get("question_type") == "numerical_question":
        equal = float(item.find(f".//{QTI_NS}varequal").text)
        low, high = float(item.find(f".//{QTI_NS}vargte").text), float(item.find(f".//{QTI_NS}varlte").text)
        if not low <= equal <= high:
            problems.append("the range does not hold the answer")
        if high > low and (high - low) / 2 < CANVAS_MIN_MARGIN * (1 - 1e-9):
            problems.append(f"margin {(high - low) / 2} is finer than Canvas keeps")
    else:
        for var in item.iter(f"{QTI_NS}varequal"):
            if var.text not in labels:
                problems.append(f"varequal {var.text} is not a choice")
    return problems


def _matching_item_problems(item: ET.Element) -> list[str]:
    """A matching item as Canvas's importer reads it: every left side offers the same options with numeric
    idents (its match ids), one scored condition per left side adds a share, and the shares make 100."""
    problems = []
    lids = list(item.iter(f"{QTI_NS}response_lid"))
    options = [[lab.get("ident") for lab in lid.iter(f"{QTI_NS}response_label")] for lid in lids]
    if any(o != options[0] for o in options) or not all(i.isdigit() for i in options[0]):
        problems.append("every left side must offer the same options, with numeric idents")
    if len(options[0]) <= len(lids):
        problems.append("no option is left over: the last pair is free")
    adds = [s for s in item.iter(f"{QTI_NS}setvar") if s.get("action") == "Add"]
    if len(adds) != len(lids) or abs(sum(float(s.text) for s in adds) - 100) > 0.01:
        problems.append(f"{len(adds)} scored pairs for {len(lids)} left sides")
    return problems


def test_qti_zip_is_a_canvas_package_with_one_item_per_variant(outputs, every_family):
    assert list(outputs["qti"]) == ["questions.zip"]
    manifest, root, members = qti_items(outputs["qti"]["questions.zip"])
    assert local(manifest.tag) == "manifest" and manifest.get("identifier")
    (resource,) = manifest.iter(f"{MANIFEST_NS}resource")
    assert resource.get("type") == "imsqti_xmlv1p2" and resource.get("identifier")
    assert set(members) == {"imsmanifest.xml", resource.find(f"{MANIFEST_NS}file").get("href")}
    assert root.tag == f"{QTI_NS}questestinterop"
    assert check_structure(root, QTI_STRUCTURE) == []
    items = list(root.iter(f"{QTI_NS}item"))
    assert len(items) == len(variants_of(every_family))
    for item, variant in zip(items, variants_of(every_family)):
        assert check_qti_item(item) == [], variant["id"]
        expected = {"float": "numerical_question", "integer": "numerical_question",
                    "shape": "multiple_choice_question", "single_choice": "multiple_choice_question",
                    "multiple_choice": "multiple_answers_question", "true_false": "true_false_question",
                    "ordering": "matching_question", "matching": "matching_question"}
        assert item_fields(item)["question_type"] == expected[variant["answer"]["kind"]]
        assert variant["seed"] is not None and str(variant["seed"]) not in item.get("ident")
    idents = [e.get("ident") for e in root.iter() if e.get("ident") and local(e.tag) in ("item", "section")]
    assert len(idents) == len(set(idents)), "item and section idents must be unique"


def test_qti_groups_several_variants_of_a_family(golden_bundle):
    _, root, _ = qti_items(get_exporter("qti").transform(golden_bundle)["questions.zip"])
    groups = [s for s in root.iter(f"{QTI_NS}section") if s.get("ident") != "root_section"]
    assert len(groups) == len(GOLDEN_FAMILIES)
    for group in groups:
        assert group.findtext(f".//{QTI_NS}selection_number") == "1"
        assert len(group.findall(f"{QTI_NS}item")) == 2


def test_qti_choice_feedback_reaches_every_distractor(every_family):
    variant = next(v for v in variants_of(every_family) if v["answer"]["kind"] == "single_choice")
    bundle = dict(every_family, sheets=[dict(every_family["sheets"][0], variants=[variant])])
    _, root, _ = qti_items(get_exporter("qti").transform(bundle)["questions.zip"])
    texts = [ET.tostring(f, encoding="unicode") for f in root.iter(f"{QTI_NS}itemfeedback")]
    for choice in variant["choices"]:
        assert any(choice["feedback"].split("`")[0] in t for t in texts), choice["id"]


def float_answer(value: float, log_space: bool = False) -> dict:
    return {"kind": "float", "value": value, "rtol": 1e-3, "atol": 1e-9, "log_space": log_space}


def test_canvas_number_keeps_answers_canvas_can_hold():
    plain = canvas_number(float_answer(2.119))
    assert plain.value == 2.119 and plain.margin == pytest.approx(2.119e-3 + 1e-9) and not plain.instruction
    assert canvas_number({"kind": "integer", "value": 116534784}).margin == 0


def test_canvas_number_asks_tiny_probabilities_in_log_space():
    tiny = canvas_number(float_answer(2.5e-6))
    assert tiny.value == pytest.approx(math.log(2.5e-6))
    assert tiny.margin >= 1e-3 and "natural log" in tiny.instruction


def test_canvas_number_scales_small_or_negative_answers():
    small = canvas_number(float_answer(0.04481))
    assert small.value == pytest.approx(0.4481) and small.margin >= CANVAS_MIN_MARGIN
    assert "multiplied by 10" in small.instruction
    negative = canvas_number(float_answer(-0.0004))
    assert negative.value == pytest.approx(-0.4) and negative.margin >= CANVAS_MIN_MARGIN


def test_qti_item_of_a_tiny_probability_asks_for_its_log(every_family):
    variant = json.loads(json.dumps(variants_of(every_family)[0]))
    variant["answer"].update(kind="float", value=3.2e-7, display="3.2e-07", rtol=1e-3, atol=1e-9)
    for choice in variant["choices"]:
        choice["value"] = 3.2e-7 if choice["correct"] else 1.0
    bundle = dict(every_family, sheets=[dict(every_family["sheets"][0], variants=[variant])])
    _, root, _ = qti_items(get_exporter("qti").transform(bundle)["questions.zip"])
    (item,) = root.iter(f"{QTI_NS}item")
    assert check_qti_item(item) == []
    assert float(item.find(f".//{QTI_NS}varequal").text) == pytest.approx(math.log(3.2e-7))
    assert "natural log" in item.find(f".//{QTI_NS}presentation").findtext(f".//{QTI_NS}mattext")


def test_lms_formats_refuse_a_roster_and_say_why():
    bundle = build_bundle(["tied-weights"], n=1, seed=1, students=["s1", "s2"], salt="x")
    for fmt in ("qti", "moodle"):
        with pytest.raises(QuestionBankError, match="Drop --students and use -n N"):
            get_exporter(fmt).transform(bundle)


# --- Moodle XML ----------------------------------------------------------------------------

MOODLE_TYPES = {"category", "numerical", "multichoice", "shortanswer", "truefalse", "matching"}
MOODLE_COMMON = ["name", "questiontext", "generalfeedback", "defaultgrade", "penalty", "hidden"]
MOODLE_EXTRA = {
    "numerical": {"answer", "unitgradingtype", "unitpenalty", "showunits", "unitsleft"},
    "multichoice": {"answer", "single", "shuffleanswers", "answernumbering", "correctfeedback",
                    "partiallycorrectfeedback", "incorrectfeedback"},
    "shortanswer": {"answer", "usecase"},
    "truefalse": {"answer"},
    # qformat_xml's import_match: subquestions (an empty text is an extra wrong answer), shuffleanswers,
    # combined feedback with shownumcorrect
    "matching": {"subquestion", "shuffleanswers", "correctfeedback", "partiallycorrectfeedback",
                 "incorrectfeedback", "shownumcorrect"},
}
ALLOWED_FRACTIONS = set(MOODLE_FRACTIONS) | {"-" + f for f in MOODLE_FRACTIONS if f != "0"}


def check_moodle_question(question: ET.Element) -> list[str]:
    """Problems with one <question>, per Moodle's XML import format."""
    qtype = question.get("type")
    if qtype not in MOODLE_TYPES:
        return [f"question type {qtype!r}"]
    if qtype == "category":
        text = question.findtext("category/text") or ""
        return [] if text.startswith("$course$/top/") else [f"category {text!r}"]
    problems = []
    tags = [c.tag for c in question]
    if tags[:len(MOODLE_COMMON)] != MOODLE_COMMON:
        problems.append(f"question starts with {tags[:6]}")
    problems += [f"<{t}> is not part of a {qtype} question" for t in set(tags) - set(MOODLE_COMMON)
                 - MOODLE_EXTRA[qtype]]
    if not (question.findtext("name/text") or "").strip():
        problems.append("empty name")
    for tag in ("questiontext", "generalfeedback"):
        if question.find(tag).get("format") != "html" or not question.findtext(f"{tag}/text"):
            problems.append(f"{tag} must be non-empty html")
    if qtype == "matching":
        return problems + _matching_problems(question)
    answers = question.findall("answer")
    if not answers:
        problems.append("no answers")
    for answer in answers:
        if answer.get("fraction") not in ALLOWED_FRACTIONS:
            problems.append(f"fraction {answer.get('fraction')} is not a Moodle grade")
        if answer.findtext("text") is None or answer.find("feedback/text") is None:
            problems.append("answer without text or feedback")
    fractions = [float(a.get("fraction")) for a in answers]
    if qtype == "numerical":
        for answer in answers:
            if answer.findtext("text") != "*":
                float(answer.findtext("text"))
            if float(answer.findtext("tolerance")) < 0:
                problems.append("negative tolerance")
        correct = [a for a in answers if a.get("fraction") == "100"]
        value, tol = float(correct[0].findtext("text")), float(correct[0].findtext("tolerance"))
        for other in answers:
            if other.get("fraction") == "0" and other.findtext("text") != "*":
                if abs(float(other.findtext("text")) - value) <= tol + float(other.findtext("tolerance")):
                    problems.append("a distractor's range overlaps the answer's")
    if qtype == "multichoice":
        single = question.findtext("single")
        if single not in ("true", "false"):
            problems.append(f"single is {single!r}")
        positive = sum(f for f in fractions if f > 0)
        if single == "true" and sorted(fractions)[-1] != 100:
            problems.append("no 100% answer")
        if single == "false" and abs(positive - 100) > 0.01:
            problems.append(f"correct answers add up to {positive}%")
    if qtype == "truefalse" and sorted(a.findtext("text") for a in answers) != ["false", "true"]:
        problems.append("truefalse needs the answers true and false")
    if qtype in ("shortanswer", "truefalse") and 100 not in fractions:
        problems.append("no 100% answer")
    return problems


def _matching_problems(question: ET.Element) -> list[str]:
    """A Moodle match question: at least two subquestions with text, three answers, each answer distinct."""
    subs = question.findall("subquestion")
    asked = [s for s in subs if (s.findtext("text") or "").strip()]
    answers = [s.findtext("answer/text") for s in subs]
    problems = []
    if len(asked) < 2 or len(answers) < 3:
        problems.append(f"{len(asked)} subquestions and {len(answers)} answers (Moodle needs 2 and 3)")
    if any(not a for a in answers) or len(set(answers)) != len(answers):
        problems.append(f"answers must be distinct and non-empty: {answers}")
    if any(s.get("format") != "html" for s in subs):
        problems.append("subquestion text must be html")
    return problems


def test_moodle_xml_is_well_formed_and_follows_the_import_format(outputs, every_family):
    text = outputs["moodle"]["questions.xml"]
    root = ET.fromstring(text)
    assert root.tag == "quiz"
    questions_ = [q for q in root if q.get("type") != "category"]
    assert len(questions_) == len(variants_of(every_family))
    # a category per family, and one per part for a multi-part family (no part is drawn in place of another)
    categories = sum(max(len(get_family(name).parts), 1) for name in family_names())
    assert len([q for q in root if q.get("type") == "category"]) == categories
    for question, variant in zip(questions_, variants_of(every_family)):
        assert check_moodle_question(question) == [], variant["id"]
        expected = {"float": "numerical", "integer": "numerical", "shape": "shortanswer",
                    "single_choice": "multichoice", "multiple_choice": "multichoice",
                    "true_false": "truefalse", "ordering": "matching", "matching": "matching"}[variant["answer"]["kind"]]
        assert question.get("type") == expected
    assert text.count("<![CDATA[") >= 2 * len(questions_)


def test_moodle_numerical_distractors_carry_their_misconception(every_family):
    variant = next(v for v in variants_of(every_family) if v["answer"]["kind"] == "float")
    root = ET.fromstring(get_exporter("moodle").transform(
        dict(every_family, sheets=[dict(every_family["sheets"][0], variants=[variant])]))["questions.xml"])
    answers = root.findall("question[@type='numerical']/answer")
    feedback = {a.findtext("text"): a.findtext("feedback/text") for a in answers}
    for choice in variant["choices"]:
        if not choice["correct"]:
            matching = [f for t, f in feedback.items()
                        if t != "*" and math.isclose(float(t), choice["value"])]
            assert matching and choice["misconception"]["name"] in matching[0]
    assert "*" in feedback


def test_moodle_shape_question_accepts_the_usual_spellings():
    assert shape_spellings([4, 8, 24])[:3] == ["(4, 8, 24)", "(4,8,24)", "4, 8, 24"]
    assert {"4x8x24", "4 × 8 × 24", "[4, 8, 24]"} <= set(shape_spellings([4, 8, 24]))
    assert {"(24,)", "24", "(24)", "[24]", "[24,]"} <= set(shape_spellings([24]))


def test_cdata_survives_a_closing_marker():
    wrapped = cdata("a ]]> b")
    assert ET.fromstring(f"<t>{wrapped}</t>").text == "a ]]> b"


# --- rendering helpers -----------------------------------------------------------------------

def test_code_spans_keep_dollars_and_angle_brackets_literal():
    out = inline("delimiter `$` and `<e>`, cost $x^2$ **big**", tex_delimited)
    assert out == "delimiter <code>$</code> and <code>&lt;e&gt;</code>, cost \\(x^2\\) <strong>big</strong>"


def test_tables_and_display_math_become_html_blocks():
    out = to_html("Intro\n\n| a | $p \\mid q$ |\n|---|---|\n| 1 | `x|y` |\n\n$$y = 1$$", tex_delimited)
    assert out.splitlines()[0] == "<p>Intro</p>"
    assert "<th>\\(p \\mid q\\)</th>" in out and "<td><code>x|y</code></td>" in out
    assert out.splitlines()[-1] == '<div class="display-math">$$y = 1$$</div>'


def test_mathml_escapes_text_arguments_and_is_well_formed():
    markup = mathml("P(w \\mid \\texttt{<s>})")
    ET.fromstring(markup)
    assert "&lt;s&gt;" in markup


def test_tex_to_text_reads_well_in_a_terminal():
    assert tex_to_text("\\frac{1}{6}\\sum_i \\ln p_i \\times 2") == "(1/6)Σ_i ln p_i × 2"
    assert tex_to_text("-\\frac{1}{3}\\sum_i \\ln p_i") == "-(1/3)Σ_i ln p_i"
    assert tex_to_text("\\frac{x + 1}{2}") == "((x + 1)/2)"
    assert tex_to_text("88{,}821") == "88,821"
    assert tex_to_text("\\text{full}") == "full"


def test_payload_round_trips_unicode():
    data = {"feedback": "ln 2 ≈ 0.693 — <b>nats</b>", "value": [4, 8, 24]}
    encoded = encode_payload(data, "q7")
    assert decode_payload(encoded, "q7") == data
    assert "nats" not in encoded and decode_payload(encode_payload(1.5, "k"), "k") == 1.5


# --- writing and the command line --------------------------------------------------------------

def test_companion_files_go_beside_the_output(tmp_path):
    out = tmp_path / "week3.html"
    written = write_files({"questions.html": "a", "answer-key.html": "b"}, out, per_student=False)
    assert written == [out, tmp_path / "week3-answer-key.html"]
    assert companion_path(out, "answer-key.html").read_text() == "b"


@pytest.mark.parametrize("fmt, names", [
    ("html", ["sheet-answer-key.html", "sheet.html"]),
    ("md", ["sheet-answer-key.md", "sheet.md"]),
    ("selfcheck", ["sheet.html"]),
    ("notebook", ["sheet.ipynb"]),
    ("qti", ["sheet.zip"]),
    ("moodle", ["sheet.xml"]),
])
def test_generate_writes_each_format(tmp_path, fmt, names):
    suffix = get_exporter(fmt).suffix
    result = CliRunner().invoke(questions, ["generate", "-f", "tied-weights", "-n", "2", "--format", fmt,
                                            "-o", str(tmp_path / f"sheet{suffix}")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == names


@pytest.mark.parametrize("fmt, message", [
    ("qti", "--format qti writes a binary file; pass -o FILE.zip"),
    ("html", "--format html writes 2 files (questions.html, answer-key.html); pass -o FILE.html"),
])
def test_generate_to_stdout_explains_when_it_cannot(fmt, message):
    result = CliRunner().invoke(questions, ["generate", "-f", "tied-weights", "--format", fmt])
    assert result.exit_code == 1 and message in result.output


def test_generate_prints_single_file_formats_and_markdown_to_stdout():
    moodle = CliRunner().invoke(questions, ["generate", "-f", "tied-weights", "--format", "moodle"])
    assert moodle.exit_code == 0 and moodle.output.startswith('<?xml version="1.0"')
    md = CliRunner().invoke(questions, ["generate", "-f", "tied-weights", "--format", "md"])
    assert md.output.index("# Practice questions") < md.output.index("# Answer key")


@pytest.mark.parametrize("fmt, names", [
    ("html", ["answer-key.html", "s1.html", "s2.html"]),
    ("selfcheck", ["s1.html", "s2.html"]),
    ("notebook", ["s1.ipynb", "s2.ipynb"]),
])
def test_roster_gives_one_file_per_student(fmt, names):
    bundle = build_bundle(["tied-weights"], n=1, seed=1, students=["s1", "s2"], salt="x")
    files = get_exporter(fmt).transform(bundle)
    assert sorted(files) == names
    assert "s1" in files["s1" + get_exporter(fmt).suffix]


# --- golden files ------------------------------------------------------------------------------

def normalise_math(text: str) -> str:
    """Replace MathML by its element count, so a new converter release does not break the goldens.

    The math itself is checked for well-formedness above and rendered in a browser
    in tests/test_exports_browser.py.
    """
    return re.sub(r"<math\b.*?</math>", "<math/>", text, flags=re.S)


def normalise_selfcheck(page: str) -> str:
    """Decode each obfuscated key so the comparison sees (and diffs) its content."""
    def decode(match: re.Match) -> str:
        key = decode_payload(match.group(2), match.group(1))
        return f'id="{match.group(1)}" data-key="{normalise_math(json.dumps(key, sort_keys=True))}"'
    return normalise_math(re.sub(r'id="(q\d+)" data-key="([^"]+)"', decode, page))


def golden_texts(fmt: str, files: dict) -> dict[str, str]:
    """The files of an export as text, zips unpacked into their members."""
    texts = {}
    for name, content in files.items():
        if isinstance(content, bytes):
            texts.update(zip_members(content))
        else:
            texts[name] = content
    return texts


NORMALISE = {"html": normalise_math, "selfcheck": normalise_selfcheck}


@pytest.mark.parametrize("fmt", FORMATS)
def test_output_matches_its_golden_files(fmt, golden_bundle):
    texts = golden_texts(fmt, get_exporter(fmt).transform(golden_bundle))
    folder = GOLDEN / fmt
    if os.environ.get("UPDATE_GOLDEN") == "1":
        shutil.rmtree(folder, ignore_errors=True)
        for name, text in texts.items():
            (folder / name).parent.mkdir(parents=True, exist_ok=True)
            (folder / name).write_text(text, encoding="utf-8")
        pytest.skip(f"rewrote {len(texts)} golden file(s) under {folder}; review the diff")
    stored = {p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
              for p in folder.rglob("*") if p.is_file()}
    assert sorted(stored) == sorted(texts), f"{fmt}: files differ; rerun with UPDATE_GOLDEN=1 if intended"
    normalise = NORMALISE.get(fmt, lambda text: text)
    for name, text in texts.items():
        assert normalise(text) == normalise(stored[name]), \
            f"{fmt}/{name} differs from its golden file; if intended, rerun with UPDATE_GOLDEN=1"


def test_qti_zip_bytes_are_reproducible(golden_bundle):
    first = get_exporter("qti").transform(golden_bundle)["questions.zip"]
    with zipfile.ZipFile(io.BytesIO(first)) as archive:
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
    assert get_exporter("qti").transform(golden_bundle)["questions.zip"] == first

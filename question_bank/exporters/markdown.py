"""Markdown export: a printable worksheet and a separate answer key (LaTeX in ``$...$``)."""
from __future__ import annotations

from typing import Any

from question_bank.exporters import ANSWER_KEY_STEM, Files, points_note, register_exporter, sheet_file_names

_HOW_TO_ANSWER = {
    "float": "Give a number to 4 significant figures, or pick a letter.",
    "integer": "Give an exact integer, or pick a letter.",
    "shape": "Give a shape such as (2, 3), or pick a letter.",
    "single_choice": "Pick one letter.",
    "multiple_choice": "Pick every letter that applies.",
    "true_false": "True or false?",
    "ordering": "Write the letters of the lines that belong, in the order they run; one line is left out.",
    "matching": "Write the letter of each item's shape; some shapes are left over.",
}

#: Kinds answered with one choice letter per slot.
ARRANGEMENT_KINDS = ("ordering", "matching")


@register_exporter("md", ".md", "Printable Markdown worksheet and a separate answer key", joinable=True)
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> Markdown files.

    One anonymous sheet gives the worksheet and its answer key as two files
    (printed one after the other on standard output). A roster gives each
    student a worksheet and one combined answer key.
    """
    names = sheet_file_names(bundle, ".md")
    if not bundle["personalised"]:
        sheet = bundle["sheets"][0]
        return {names[0]: render_sheet(sheet), ANSWER_KEY_STEM + ".md": render_key(sheet, heading_level=1)}
    files: Files = {name: render_sheet(sheet) for name, sheet in zip(names, bundle["sheets"])}
    key = ["# Answer key", ""]
    for sheet in bundle["sheets"]:
        key += [f"## Student `{sheet['student_id']}`", "", render_key(sheet, heading_level=3, title=False)]
    files[ANSWER_KEY_STEM + ".md"] = "\n".join(key)
    return files


def render_sheet(sheet: dict[str, Any]) -> str:
    """The questions of one sheet, without answers."""
    lines = ["# Practice questions", ""]
    if sheet["student_id"] is not None:
        lines += [f"Student: `{sheet['student_id']}`", ""]
    for number, variant in enumerate(sheet["variants"], start=1):
        lines += [f"## {number}. {variant['title']}{points_note(variant)}", "", variant["stem"].strip(), ""]
        lines += [f"- **({c['id']})** {c['text']}" for c in variant["choices"]]
        if variant["answer"]["kind"] in ARRANGEMENT_KINDS:
            lines += [""] + [f"{slot['text']}: ____  " for slot in variant["answer"]["slots"]]
        lines += ["", f"*{how_to_answer(variant['answer'])}*", ""]
    return "\n".join(lines)


def render_key(sheet: dict[str, Any], heading_level: int = 1, title: bool = True) -> str:
    """Answers, worked solutions and why each distractor is wrong."""
    hashes = "#" * heading_level
    lines = [f"{hashes} Answer key", ""] if title else []
    sub = "#" * (heading_level + 1) if title else hashes
    for number, variant in enumerate(sheet["variants"], start=1):
        correct = key_letters(variant)
        lines += [f"{sub} {number}. {variant['title']}{points_note(variant)} (`{variant['id']}`)", "",
                  f"**Answer:** {correct} {answer_text(variant['answer'])}", "",
                  f"**Worked solution.** {variant['solution'].strip()}", "",
                  "**Why the other choices are wrong:**", ""]
        for choice in variant["choices"]:
            if not choice["correct"]:
                name = choice["misconception"]["name"]
                lines.append(f"- ({choice['id']}) *{name}*: {choice['feedback']}")
        others = undrawn_mistakes(variant)
        if others:
            lines += ["", "**Other mistakes a typed answer is checked against:**", ""]
            lines += [f"- {m['text']} *{m['misconception']['name']}*: {m['feedback']}" for m in others]
        lines.append("")
    return "\n".join(lines)


def key_letters(variant: dict[str, Any]) -> str:
    """The correct letters as a key prints them: ``(a), (c)``, or per slot ``Step 1: (e); Step 2: (a)``."""
    answer = variant["answer"]
    if answer["kind"] in ARRANGEMENT_KINDS:
        return "; ".join(f"{slot['text']}: ({cid})" for slot, cid in zip(answer["slots"], answer["value"])) + "."
    return ", ".join(f"({c['id']})" for c in variant["choices"] if c["correct"])


def undrawn_mistakes(variant: dict[str, Any]) -> list[dict[str, Any]]:
    """The variant's known mistakes whose value is not among its choices."""
    drawn = [c["value"] for c in variant["choices"]]
    return [m for m in variant["mistakes"] if m["value"] not in drawn]


def how_to_answer(answer: dict[str, Any]) -> str:
    """One line telling a worksheet reader how to answer (Markdown)."""
    text = _HOW_TO_ANSWER[answer["kind"]]
    if answer["log_space"]:
        text += " The answer is a natural logarithm."
    if answer["unit"]:
        text += f" Unit: {answer['unit']}."
    return text


def answer_text(answer: dict[str, Any]) -> str:
    """The answer as the key prints it: display, unit and the accepted tolerance."""
    if answer["kind"] in ARRANGEMENT_KINDS:
        return ""   # the letters per slot say it all
    text = answer["display"]
    if answer["unit"]:
        text += f" {answer['unit']}"
    if answer["kind"] == "float":
        text += f" (accepted within {answer['rtol']:.1%} relative"
        # A widened absolute tolerance (an exam's, or one covering the worked solution's rounded
        # steps) is part of what is accepted; the tiny default guard is not worth printing.
        text += f" or {answer['atol']:.2g} absolute)" if answer["atol"] >= 1e-6 else ")"
    return text

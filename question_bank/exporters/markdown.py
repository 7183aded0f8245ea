"""Markdown export: a printable worksheet and its answer key (LaTeX in ``$...$``)."""
from __future__ import annotations

from typing import Any

from question_bank.exporters import ANSWER_KEY_STEM, Files, register_exporter, sheet_file_names

_HOW_TO_ANSWER = {
    "float": "Give a number to 4 significant figures, or pick a letter.",
    "integer": "Give an exact integer, or pick a letter.",
    "shape": "Give a shape such as (2, 3), or pick a letter.",
    "single_choice": "Pick one letter.",
    "multiple_choice": "Pick every letter that applies.",
    "true_false": "True or false?",
}


@register_exporter("md", ".md", "Printable Markdown worksheet with answer key")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> Markdown files.

    One anonymous sheet gives one file: the questions, then the key. A
    roster gives each student a worksheet and one combined answer key.
    """
    names = sheet_file_names(bundle, ".md")
    if not bundle["personalised"]:
        sheet = bundle["sheets"][0]
        return {names[0]: render_sheet(sheet) + "\n" + render_key(sheet, heading_level=1)}
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
        lines += [f"## {number}. {variant['title']}", "", variant["stem"].strip(), ""]
        lines += [f"- **({c['id']})** {c['text']}" for c in variant["choices"]]
        lines += ["", f"*{_how_to_answer(variant['answer'])}*", ""]
    return "\n".join(lines)


def render_key(sheet: dict[str, Any], heading_level: int = 1, title: bool = True) -> str:
    """Answers, worked solutions and why each distractor is wrong."""
    hashes = "#" * heading_level
    lines = [f"{hashes} Answer key", ""] if title else []
    sub = "#" * (heading_level + 1) if title else hashes
    for number, variant in enumerate(sheet["variants"], start=1):
        correct = ", ".join(f"({c['id']})" for c in variant["choices"] if c["correct"])
        lines += [f"{sub} {number}. {variant['title']} (`{variant['id']}`)", "",
                  f"**Answer:** {correct} {_answer_text(variant['answer'])}", "",
                  f"**Worked solution.** {variant['solution'].strip()}", "",
                  "**Why the other choices are wrong:**", ""]
        for choice in variant["choices"]:
            if not choice["correct"]:
                name = choice["misconception"]["name"]
                lines.append(f"- ({choice['id']}) *{name}*: {choice['feedback']}")
        lines.append("")
    return "\n".join(lines)


def _how_to_answer(answer: dict[str, Any]) -> str:
    text = _HOW_TO_ANSWER[answer["kind"]]
    if answer["log_space"]:
        text += " The answer is a natural logarithm."
    if answer["unit"]:
        text += f" Unit: {answer['unit']}."
    return text


def _answer_text(answer: dict[str, Any]) -> str:
    text = answer["display"]
    if answer["unit"]:
        text += f" {answer['unit']}"
    if answer["kind"] == "float":
        text += f" (accepted within {answer['rtol']:.1%} relative)"
    return text

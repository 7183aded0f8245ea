"""JSON export: the bundle itself, or per-student sheets without answers plus a key."""
from __future__ import annotations

from typing import Any

from question_bank.exporters import (
    ANSWER_KEY_STEM,
    Files,
    register_exporter,
    sheet_file_names,
    student_view,
)
from question_bank.variant import to_json


@register_exporter("json", ".json", "Variant data as JSON (full data; per-student files omit answers)")
def transform(bundle: dict[str, Any]) -> Files:
    """Bundle -> JSON files.

    One anonymous sheet gives the whole bundle (answers included). A roster
    gives each student their questions without answers, and the bundle as
    the combined answer key.
    """
    if not bundle["personalised"]:
        return {sheet_file_names(bundle, ".json")[0]: to_json(bundle)}
    files: Files = {}
    for name, sheet in zip(sheet_file_names(bundle, ".json"), bundle["sheets"]):
        files[name] = to_json({
            "schema": bundle["schema"],
            "student_id": sheet["student_id"],
            "questions": [student_view(v) for v in sheet["variants"]],
        })
    files[ANSWER_KEY_STEM + ".json"] = to_json(bundle)
    return files

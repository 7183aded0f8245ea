"""Files that run or render outside Python (the self-check page's script and styles),
shipped as package data in ``question_bank/exporters/static/`` and read on use."""
from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=None)
def static_text(name: str) -> str:
    """The text of ``static/<name>``; a missing file is an installation fault, so it raises."""
    return resources.files("question_bank.exporters").joinpath("static", name).read_text(encoding="utf-8")

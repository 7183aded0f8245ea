"""Make text that came from a submission inert wherever it is shown.

Output, exception messages, file and function names and notebook metadata
are written by the student. Feedback is Markdown (feedback.md, and
results.json, which Gradescope renders as Markdown), so a message that
quotes student text could otherwise close a code fence, start a link, or
carry raw HTML (``<script>``, ``<img onerror>``) into the page. The rule:
every piece of student text enters a message through :func:`code` (inline)
or :func:`block` (multi-line), after :func:`clean`. In CommonMark the
content of a code span or fenced block is literal text: no Markdown, no
HTML, no entity is interpreted there, and the fence is made longer than
any run of backticks inside, so the text cannot close it.
"""
from __future__ import annotations

import re

#: ANSI escape sequences: CSI (``ESC [ ... final``), OSC (``ESC ] ... BEL/ST``) and two-byte ones.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
#: Control characters (C0 but tab and newline, DEL, C1) and the bidirectional
#: overrides that can make text read differently from what it is.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_BACKTICKS = re.compile(r"`+")


def clean(text: object, limit: int | None = None) -> str:
    """``text`` as a string without escape sequences or control characters, at most ``limit`` characters.

    Carriage returns become newlines, so a ``\\r`` cannot hide what comes before it.
    """
    value = str(text).replace("\r\n", "\n").replace("\r", "\n")
    value = _CONTROL.sub("", _ANSI.sub("", value))
    if limit is not None and len(value) > limit:
        value = value[:limit] + " ...[truncated]"
    return value


def _fence(text: str, minimum: int) -> str:
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    return "`" * max(minimum, longest + 1)


def code(text: object, limit: int = 300) -> str:
    """An inline code span holding ``text`` literally, on one line."""
    value = " ".join(clean(text, limit).split()) or " "
    fence = _fence(value, 1)
    # A span whose content starts or ends with a backtick needs a space inside the fence.
    pad = " " if value.startswith("`") or value.endswith("`") else ""
    return f"{fence}{pad}{value}{pad}{fence}"


def block(text: object, limit: int | None = None) -> str:
    """A fenced code block holding ``text`` literally (its own lines)."""
    value = clean(text, limit).rstrip("\n")
    fence = _fence(value, 3)
    return f"{fence}text\n{value}\n{fence}"


def plain(text: object, limit: int = 300) -> str:
    """``text`` for a Markdown sentence where code formatting would read oddly (a person's name):
    every character that Markdown or HTML could act on is escaped."""
    value = " ".join(clean(text, limit).split())
    value = value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|~\"'])", r"\\\1", value)

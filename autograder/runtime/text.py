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
from typing import Any

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


class WorkerText:
    """Text the sandboxed worker sent (an exception's type and message, a traceback): data, never Markdown.

    The worker runs the student's code, which can rewrite it or write replies of its own, so every
    string in a reply is the student's. Decoding a reply wraps each one in this type, which is not a
    ``str``: it cannot be concatenated or joined into a message, and formatting it (``f"{text}"``,
    ``str(text)``) gives the inline code span :func:`code` makes of it, so a message that names it
    quotes it whether or not its author thought of it. ``raw`` is the text itself, for reading it
    (matching NumPy's wording, comparing), never for writing it anywhere.
    """

    __slots__ = ("raw",)

    def __init__(self, raw: str = "") -> None:
        object.__setattr__(self, "raw", raw)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("WorkerText is immutable")

    def __str__(self) -> str:
        return code(self.raw) if self.raw else ""

    def __repr__(self) -> str:
        return f"WorkerText({self.raw!r})"

    def __bool__(self) -> bool:
        return bool(self.raw)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, WorkerText):
            return self.raw == other.raw
        return self.raw == other if isinstance(other, str) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.raw)


#: What a terminal acts on besides printing: ESC (so every escape sequence: colours, cursor moves,
#: OSC 52 clipboard writes, window titles), the other C0 controls, DEL, C1 controls (CSI and OSC have
#: one-byte forms there), bidirectional controls, and lone surrogates (a file name that is not UTF-8).
_TERMINAL_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                              "\u2066-\u2069\ud800-\udfff]")
_TERMINAL_UNSAFE_LINE = re.compile(_TERMINAL_UNSAFE.pattern[:-1] + "\n\t]")


def terminal(text: object, multiline: bool = False) -> str:
    """``text`` safe to print on a terminal: every control character shown as a visible escape.

    ``ESC ] 52 ; c ; ... BEL`` in a file name prints as ``\\x1b]52;c;...\\x07``, so the name is
    still recognisable and nothing reaches the terminal's parser. Tabs and newlines are escaped
    too, so a name cannot start a line of its own, unless ``multiline`` (a message of several lines).
    """
    pattern = _TERMINAL_UNSAFE if multiline else _TERMINAL_UNSAFE_LINE
    return pattern.sub(_visible, str(text))


def _visible(found: re.Match) -> str:
    return found.group().encode("unicode_escape", "backslashreplace").decode("ascii")

"""The Markdown that variants are written in, turned into HTML or plain text.

Stems, choices, feedback and solutions use a small Markdown subset:
paragraphs, pipe tables, fenced code blocks (three backticks on a line of
their own, for code-reading items), ``**bold**``, ``*italic*``, code spans,
inline ``$...$`` and display ``$$...$$`` LaTeX. Supporting exactly that subset here
keeps every exporter's output predictable (a general Markdown library would
also interpret ``_`` in ``W_head`` or ``$`` inside code spans).

Math goes through a :data:`MathRenderer`:

* :func:`mathml` renders LaTeX to MathML on the server side, which browsers
  draw natively, so pages read correctly offline with no script or CDN;
* :func:`tex_delimited` keeps the LaTeX between ``\\(...\\)`` / ``$$...$$``,
  which Canvas and Moodle typeset with their own MathJax (their HTML
  filters do not reliably keep MathML).
"""
from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from functools import lru_cache
from typing import Callable

from question_bank.errors import QuestionBankError

MathRenderer = Callable[[str, bool], str]

# Code spans win over math: `$` inside code is literal (the task-transformation
# family prints a `$` delimiter token in code).
_INLINE_TOKEN = re.compile(r"(`+)(.+?)\1|\$\$(.+?)\$\$|\$(.+?)\$", re.S)
_PLACEHOLDER = "\x00{}\x00"
_PLACEHOLDER_RE = re.compile("\x00(\\d+)\x00")
# A fenced code block: its lines are kept verbatim (indentation, `$`, `*` and `_` included).
_FENCE = re.compile(r"^```[\w-]*[ \t]*\n(.*?)\n```[ \t]*$", re.S | re.M)
_FENCE_PLACEHOLDER = "\x00fence{}\x00"
_FENCE_PLACEHOLDER_RE = re.compile("^\x00fence(\\d+)\x00$")
_TEXT_COMMAND = re.compile(r"\\(text|texttt|textbf|textit|mathrm|operatorname)\s*\{([^{}]*)\}")


@lru_cache(maxsize=4096)
def mathml(tex: str, display: bool = False) -> str:
    """LaTeX -> a ``<math>`` element (MathML Core), checked to be well-formed XML.

    Raises:
        QuestionBankError: if the converter produces malformed markup, so a
            new stem cannot silently break a page.
    """
    from latex2mathml.converter import convert

    # The converter copies text arguments verbatim, so `\texttt{<s>}` would
    # become a stray <s> tag; escape them first.
    safe = _TEXT_COMMAND.sub(lambda m: f"\\{m.group(1)}{{{html.escape(m.group(2), quote=False)}}}", tex)
    markup = convert(safe, display="block" if display else "inline")
    try:
        ET.fromstring(markup)
    except ET.ParseError as exc:
        raise QuestionBankError(f"LaTeX {tex!r} gave malformed MathML ({exc}); "
                                "simplify the formula.") from exc
    return markup


def tex_delimited(tex: str, display: bool = False) -> str:
    """LaTeX kept for an LMS's MathJax: ``\\(tex\\)`` inline, ``$$tex$$`` on its own line."""
    return html.escape(f"$${tex}$$" if display else f"\\({tex}\\)", quote=False)


def inline(text: str, math: MathRenderer) -> str:
    """One line of Markdown -> HTML (no enclosing block element)."""
    protected: list[str] = []

    def protect(match: re.Match[str]) -> str:
        code, display_tex, inline_tex = match.group(2), match.group(3), match.group(4)
        if code is not None:
            rendered = f"<code>{html.escape(code.strip(), quote=False)}</code>"
        elif display_tex is not None:
            rendered = math(display_tex.strip(), False)
        else:
            rendered = math(inline_tex.strip(), False)
        protected.append(rendered)
        return _PLACEHOLDER.format(len(protected) - 1)

    text = html.escape(_INLINE_TOKEN.sub(protect, text), quote=False)
    text = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", r"<strong>\1</strong>", text)
    text = re.sub(r"\*(?=[^\s*])(.+?)(?<=[^\s*])\*", r"<em>\1</em>", text)
    return _PLACEHOLDER_RE.sub(lambda m: protected[int(m.group(1))], text)


def split_fences(markdown: str) -> tuple[str, list[str]]:
    """``markdown`` with each fenced code block replaced by a placeholder paragraph, and the blocks' code.

    The code is taken out before paragraphs are split and lines stripped, so its
    indentation and blank lines survive.
    """
    codes: list[str] = []

    def take(match: re.Match[str]) -> str:
        codes.append(match.group(1))
        return "\n\n" + _FENCE_PLACEHOLDER.format(len(codes) - 1) + "\n\n"

    return _FENCE.sub(take, markdown), codes


def to_html(markdown: str, math: MathRenderer) -> str:
    """Markdown (paragraphs, tables, display math, fenced code) -> HTML blocks, one per line."""
    blocks = []
    markdown, codes = split_fences(markdown)
    for block in re.split(r"\n\s*\n", markdown.strip()):
        lines = [line.strip() for line in block.strip().splitlines()]
        if not lines or not lines[0]:
            continue
        joined = " ".join(lines)
        fence = _FENCE_PLACEHOLDER_RE.match(joined)
        if fence:
            code = html.escape(codes[int(fence.group(1))], quote=False)
            blocks.append(f'<pre class="code"><code>{code}</code></pre>')
        elif all(line.startswith("|") for line in lines) and len(lines) >= 2:
            blocks.append(_table(lines, math))
        elif joined.startswith("$$") and joined.endswith("$$") and joined.count("$$") == 2:
            blocks.append(f'<div class="display-math">{math(joined[2:-2].strip(), True)}</div>')
        else:
            blocks.append(f"<p>{inline(joined, math)}</p>")
    return "\n".join(blocks)


def _table(lines: list[str], math: MathRenderer) -> str:
    """A pipe table; the second line is the ``|---|`` separator."""
    header, rows = _cells(lines[0]), [_cells(line) for line in lines[2:]]
    head = "".join(f"<th>{inline(cell, math)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{inline(cell, math)}</td>" for cell in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cells(line: str) -> list[str]:
    """Cells of one table row; pipes inside code spans or math do not split."""
    protected: list[str] = []

    def protect(match: re.Match[str]) -> str:
        protected.append(match.group(0))
        return _PLACEHOLDER.format(len(protected) - 1)

    masked = _INLINE_TOKEN.sub(protect, line.strip().strip("|"))
    return [_PLACEHOLDER_RE.sub(lambda m: protected[int(m.group(1))], cell).strip()
            for cell in masked.split("|")]


# --- plain text for the terminal -------------------------------------------------

_TEX_SYMBOLS = {
    r"\times": "×", r"\cdot": "·", r"\mid": "∣", r"\dots": "…", r"\ldots": "…", r"\cdots": "⋯",
    r"\lambda": "λ", r"\ell": "ℓ", r"\partial": "∂", r"\sum": "Σ", r"\prod": "Π", r"\le": "≤",
    r"\ge": "≥", r"\leq": "≤", r"\geq": "≥", r"\neq": "≠", r"\approx": "≈", r"\infty": "∞",
    r"\sigma": "σ", r"\theta": "θ", r"\alpha": "α", r"\beta": "β", r"\to": "→", r"\quad": " ",
    r"\,": " ", r"\;": " ", r"\!": "", r"\ln": "ln", r"\log": "log", r"\exp": "exp",
}


def _fraction_text(match: re.Match[str]) -> str:
    """``\\frac{a}{b}`` as ``(a/b)``; a compound part keeps its own brackets: ``((x+1)/2)``."""
    parts = [p.strip() for p in match.groups()]
    shown = [p if re.fullmatch(r"[\w.]+", p) else f"({p})" for p in parts]
    return f"({shown[0]}/{shown[1]})"


def tex_to_text(tex: str) -> str:
    """LaTeX -> readable plain text (``\\frac{1}{6}`` -> ``(1/6)``, ``\\times`` -> ``×``)."""
    text = re.sub(r"\\(?:text|texttt|textbf|textit|mathrm|operatorname)\s*\{([^{}]*)\}", r"\1", tex)
    for _ in range(3):  # nested fractions
        text = re.sub(r"\\frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", _fraction_text, text)
    for command in sorted(_TEX_SYMBOLS, key=len, reverse=True):
        text = re.sub(re.escape(command) + r"(?![A-Za-z])", _TEX_SYMBOLS[command], text)
    text = re.sub(r"\\bar\s*(\w)", "\\1\u0304", text)  # combining macron: ℓ̄
    text = re.sub(r"([_^])\{([^{}]*)\}", r"\1\2", text)
    return re.sub(r"\\([A-Za-z]+)", r"\1", text).replace("{", "").replace("}", "")


def to_text(markdown: str) -> str:
    """Markdown -> plain text for a terminal: math as readable text, code and emphasis unmarked.

    A fenced code block keeps its lines, indented by four spaces.
    """
    markdown, codes = split_fences(markdown)
    if codes:
        parts = []
        for part in re.split(r"\n\n(\x00fence\d+\x00)\n\n", markdown):
            fence = _FENCE_PLACEHOLDER_RE.match(part)
            parts.append("\n".join("    " + line for line in codes[int(fence.group(1))].splitlines())
                         if fence else to_text(part))
        return "\n\n".join(p for p in parts if p)

    def replace(match: re.Match[str]) -> str:
        code, display_tex, inline_tex = match.group(2), match.group(3), match.group(4)
        if code is not None:
            return code.strip()
        return tex_to_text((display_tex if display_tex is not None else inline_tex).strip())

    text = _INLINE_TOKEN.sub(replace, markdown.strip())
    text = re.sub(r"\*\*(?=\S)(.+?)(?<=\S)\*\*", lambda m: m.group(1).upper(), text)
    return re.sub(r"\*(?=[^\s*])(.+?)(?<=[^\s*])\*", r"\1", text)

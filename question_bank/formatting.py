"""Printing numbers, shapes and tables in stems and choices (Markdown + LaTeX).

Numbers of 1,000 and more carry thousands separators everywhere. Inside math
a bare comma is punctuation (LaTeX puts a space after it), so a grouping
comma is written ``{,}``: :func:`group_math_commas` does that for every math
segment of a text, and the generator applies it to every text of a variant.
"""
from __future__ import annotations

import math
import re
from typing import Any, Sequence

#: Significant figures of printed answers and choices. The acceptance
#: tolerance (QUESTION_RTOL = 1e-3) accepts any answer given this precisely.
SIG_FIGS = 4


def num(x: float, sig: int = SIG_FIGS) -> str:
    """``x`` to ``sig`` significant figures as plain text (``2.154``, ``1.2e-05``).

    Fixed-point between 1e-4 and 1e6, scientific otherwise; trailing zeros of
    the fixed-point form are kept so all choices print alike.
    """
    x = float(x)
    if x == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(x)))
    if -4 <= magnitude < 6:
        decimals = max(sig - 1 - magnitude, 0)
        return f"{x:,.{decimals}f}"
    return f"{x:.{sig - 1}e}"


def fixed_to_width(x: float, width: int, sig: int = SIG_FIGS) -> str:
    """``x`` in fixed point with at least ``sig`` significant figures, given more decimals until it
    is ``width`` characters long (its sign, digits and point; grouping commas do not count).

    The choices of a question printed this way all have one length, so the length of a text
    tells nothing of which is the key (see :func:`question_bank.choices.at_common_width`). A
    number whose figures alone are wider than ``width`` comes back wider; so does one with no
    decimals that one more character cannot reach (a point needs a digit after it).
    """
    x = float(x)
    if x == 0:
        decimals = 1
    else:
        decimals = max(sig - 1 - math.floor(math.log10(abs(x))), 0)
    text = f"{x:,.{decimals}f}"
    while len(text.replace(",", "")) < width:
        decimals += 1
        text = f"{x:,.{decimals}f}"
    return text


def fixed_width(x: float, sig: int = SIG_FIGS) -> int:
    """The length of ``x`` printed by :func:`fixed_to_width` at its narrowest."""
    return len(fixed_to_width(x, 0, sig).replace(",", ""))


def printed_error(x: float, sig: int = SIG_FIGS) -> float:
    """The largest error of ``x`` as :func:`num` prints it: half a unit in its last printed digit."""
    x = float(x)
    if x == 0:
        return 0.0
    magnitude = math.floor(math.log10(abs(x)))
    if -4 <= magnitude < 6:                 # fixed point, as num prints it
        return 0.5 * 10.0 ** -max(sig - 1 - magnitude, 0)
    return 0.5 * 10.0 ** (magnitude - (sig - 1))


def num_tex(x: float, sig: int = SIG_FIGS) -> str:
    """``x`` as inline LaTeX: ``$2.154$`` or ``$1.200 \\times 10^{-5}$``."""
    text = num(x, sig)
    if "e" in text:
        mantissa, exponent = text.split("e")
        return f"${mantissa} \\times 10^{{{int(exponent)}}}$"
    return f"${text}$"


def integer(n: int) -> str:
    """An integer with thousands separators: ``116,534,784``."""
    return f"{int(n):,}"


def integer_tex(n: int) -> str:
    """An integer for use inside math, grouped with ``{,}``: ``116{,}534{,}784``."""
    return integer(n).replace(",", "{,}")


# A math segment (display first, so `$$` is not read as two empty inline segments),
# or a code span, whose text stays literal.
_MATH_OR_CODE = re.compile(r"(`+).+?\1|\$\$.+?\$\$|\$.+?\$", re.S)
_GROUPING_COMMA = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def group_math_commas(text: str) -> str:
    """``text`` with each grouping comma inside ``$...$``/``$$...$$`` written ``{,}``."""
    def fix(match: re.Match[str]) -> str:
        segment = match.group(0)
        return segment if segment.startswith("`") else _GROUPING_COMMA.sub("{,}", segment)
    return _MATH_OR_CODE.sub(fix, text)


def shape(dims: Sequence[int]) -> str:
    """A shape as code: ``(4, 8, 24)``; one-axis shapes keep the comma ``(24,)``."""
    dims = [int(d) for d in dims]
    inner = f"{dims[0]}," if len(dims) == 1 else ", ".join(str(d) for d in dims)
    return f"`({inner})`"


def exact(x: float) -> str:
    """A parameter printed exactly as stored (``0.4``, ``0.25``), without float noise."""
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


def table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """A Markdown table."""
    lines = ["| " + " | ".join(str(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def quoted(text: str) -> str:
    """A string shown in a code span with visible quotes, so spaces stay visible."""
    return f"`{text!r}`"

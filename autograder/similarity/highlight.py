"""Which characters of a student's cell to mark, given which of its normalised tokens matched.

The comparison sees normalised tokens (names replaced, comments and layout
gone, each token knowing only its statement's first line); the instructor
reads the cell as the student wrote it. Marking whole lines would also mark
the tokens of a line that differ (``i + 2`` against ``i + 1``) and the
starter's own text on it, so each cell's own tokens are aligned with its
normalised tokens (longest matching blocks, names the student bound standing
for the placeholder) and only the original tokens aligned with a matched
normalised token are marked. A token that has no counterpart (a docstring,
an annotation, a loop the normaliser wrote as a comprehension) is never
marked: the marks can miss matched code, never invent it.
"""
from __future__ import annotations

import html
import tokenize
from difflib import SequenceMatcher
from functools import lru_cache

from autograder.similarity.normalize import RENAMED, Token, _literal, _raw_tokens

_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT,
            tokenize.ENCODING, tokenize.ENDMARKER}
_STRUCTURE = {"NEWLINE", "INDENT", "DEDENT"}
#: The alignment compares every original token with every normalised one, and worse where the
#: normaliser reordered tokens (a loop rewritten as a comprehension, repeated): about 10 s at this
#: many; past it a cell is shown unmarked, and the page as a whole has a time budget besides.
MAX_ALIGNED_TOKENS = 1500


def marked_ranges(source: str, tokens: list[Token], matched: list[bool]) -> list[tuple[int, int]] | None:
    """Character ranges ``[start, end)`` of ``source`` to mark: the original tokens aligned with the
    normalised ``tokens`` (this cell's, in order) whose ``matched`` flag is set; neighbours on one
    line separated only by spaces are joined. ``None`` for a cell too long to align (see
    ``MAX_ALIGNED_TOKENS``): its pair is still scored and listed, only not marked."""
    pairs = [(t.text, m) for t, m in zip(tokens, matched) if t.text not in _STRUCTURE]
    if not any(m for _, m in pairs):
        return []
    if len(pairs) > MAX_ALIGNED_TOKENS:
        return None
    aligned = _aligned(source, tuple(text for text, _ in pairs))
    if aligned is None:
        return None
    ranges = sorted((start, end) for index, start, end in aligned if pairs[index][1])
    joined: list[tuple[int, int]] = []
    for start, end in ranges:
        if joined and source[joined[-1][1]:start].strip(" \t") == "" and "\n" not in source[joined[-1][1]:start]:
            joined[-1] = (joined[-1][0], max(end, joined[-1][1]))
        else:
            joined.append((start, end))
    return joined


@lru_cache(maxsize=256)
def _aligned(source: str, texts: tuple[str, ...]) -> tuple[tuple[int, int, int], ...] | None:
    """(index in ``texts``, start, end) of each original token of ``source`` aligned with a normalised one.

    The alignment does not depend on which tokens matched, and the page shows
    one submission in many pairs (each member of a group with every other):
    it is computed once per cell."""
    names = set(texts)
    raw = [t for t in _raw_tokens(source) if t.type not in _SKIPPED]
    if len(raw) > MAX_ALIGNED_TOKENS:
        return None
    keys = []
    for t in raw:
        if t.type == tokenize.NAME:
            keys.append(t.string if t.string in names else RENAMED)
        elif t.type in (tokenize.NUMBER, tokenize.STRING):
            keys.append(_literal(t.string))
        else:
            keys.append(t.string)
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(row: int, col: int) -> int:
        return starts[row - 1] + col if row - 1 < len(starts) else len(source)

    out = []
    matcher = SequenceMatcher(None, keys, list(texts), autojunk=False)
    for block in matcher.get_matching_blocks():
        for n in range(block.size):
            t = raw[block.a + n]
            out.append((block.b + n, offset(*t.start), offset(*t.end)))
    return tuple(out)


def marked_html(source: str, ranges: list[tuple[int, int]]) -> str:
    """``source`` escaped, each range in ``<mark>``."""
    out, at = [], 0
    for start, end in ranges:
        out.append(html.escape(source[at:start]))
        out.append(f"<mark>{html.escape(source[start:end])}</mark>")
        at = end
    out.append(html.escape(source[at:]))
    return "".join(out)

"""An instructor's group note as HTML, for the pages and LMS fields that show HTML (the report's
groups section, Moodle's feedback comments).

The note is Markdown the instructor wrote (``notes.yaml``), so it is rendered: emphasis, code
spans and blocks, lists, links. Raw HTML in it is not passed through (CommonMark with ``html``
off shows a tag as text), and links to ``javascript:`` and the like are not made links: a note
copied from elsewhere cannot put a script on the instructor's page or in Moodle. Nothing of a
student's ever enters a note.
"""
from __future__ import annotations

from functools import lru_cache

from markupsafe import Markup


@lru_cache(maxsize=1)
def _renderer():
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark", {"html": False})


def note_html(markdown: str) -> Markup:
    """``markdown`` rendered to HTML blocks (raw HTML in it escaped)."""
    return Markup(_renderer().render(markdown).strip())

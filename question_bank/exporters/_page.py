"""The HTML document shell shared by the worksheet, answer key and self-check page.

Every page is one self-contained file: styles inline, math as MathML, no
external resource. The Content-Security-Policy forbids loading anything
from anywhere, so a page cannot reach the network even by accident.
"""
from __future__ import annotations

import html

#: Blocks every fetch; only the page's own inline style and script may run.
CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"

BASE_CSS = """\
body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d1d1f;
       max-width: 50rem; margin: 2rem auto; padding: 0 1rem; }
h1 { font-size: 1.6rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
code { font: 0.92em ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
       background: #f2f2f4; padding: 0 0.2em; border-radius: 3px; }
pre.code { background: #f2f2f4; padding: 0.5rem 0.8rem; border-radius: 3px; overflow-x: auto; }
pre.code code { padding: 0; background: none; }
table { border-collapse: collapse; margin: 0.8rem 0; }
th, td { border: 1px solid #c9c9cf; padding: 0.2rem 0.6rem; text-align: left; }
th { background: #f2f2f4; }
math { font-size: 1.1em; }
.display-math { margin: 0.8rem 0; overflow-x: auto; }
.choices { list-style: none; padding-left: 0.5rem; }
.choices li { margin: 0.25rem 0; }
.how { color: #55555b; font-style: italic; }
.meta { color: #55555b; }
section.item { break-inside: avoid; }
@media print { body { margin: 0; max-width: none; } section.item { page-break-inside: avoid; } }
"""


def document(title: str, body: str, css: str = BASE_CSS, script: str = "") -> str:
    """A complete HTML5 document; ``title`` is plain text, ``body`` and ``script`` are markup."""
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>",
        f"<style>\n{css}</style>",
        "</head>",
        "<body>",
        body,
    ]
    if script:
        parts.append(f"<script>\n{script}</script>")
    parts += ["</body>", "</html>", ""]
    return "\n".join(parts)

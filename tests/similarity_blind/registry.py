"""Registry of implementation styles: STYLES[function] -> list of Style."""
from dataclasses import dataclass
from typing import Callable, Optional

@dataclass
class Style:
    func: str
    name: str
    kind: str            # "vec" or "loop" (loop <-> vectorised disguise swaps between them)
    build: Callable
    wrong: Optional[str] = None   # None: correct; else what is wrong
    obvious: bool = False         # the short form nearly every student writes

STYLES: dict = {}

def style(func, name, kind, wrong=None, obvious=False):
    def deco(fn):
        STYLES.setdefault(func, []).append(Style(func, name, kind, fn, wrong, obvious))
        return fn
    return deco

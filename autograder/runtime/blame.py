"""Which of the student's functions an error belongs to.

A student's loss that calls the student's own softmax raises where the softmax breaks; naming
the loss sends the student searching the wrong function. The traceback's frames say where the
error was raised: the sandbox worker reports the chain of the student's own top-level functions
the exception passed through (``raised_in``), and a call run in the same process reads it from
the exception itself. The sentence here moves the blame to the innermost of them.

(The notebook's public checks cannot import this module: ``build/in_kernel.py`` carries the same
sentence for them, and a test holds the two to the same words.)
"""
from __future__ import annotations

from typing import Any, Callable, Sequence


def own_functions(function: Callable) -> dict[Any, str]:
    """``{code object: name}`` of the functions defined where ``function`` was (same namespace,
    same module): the student's own cells, not a library imported into them."""
    namespace = getattr(function, "__globals__", None) or {}
    module = getattr(function, "__module__", None)
    found: dict[Any, str] = {}
    for name, value in list(namespace.items()):
        code = getattr(value, "__code__", None)
        if isinstance(name, str) and hasattr(code, "co_code") and getattr(value, "__module__", None) == module:
            found.setdefault(code, name)
    return found


def raised_inside(exc: BaseException, function: Callable) -> list[str]:
    """The student's own functions ``exc`` passed through, outermost first."""
    own, names, tb = own_functions(function), [], exc.__traceback__
    while tb is not None:
        name = own.get(tb.tb_frame.f_code)
        if name is not None and (not names or names[-1] != name):
            names.append(name)
        tb = tb.tb_next
    return names


def blame_sentence(name: str, chain: Sequence[str]) -> str:
    """'' or the sentence that lays an exception raised by a call of ``name`` on the student's
    function that raised it, when that is another one; ``chain`` is ``raised_inside``'s list."""
    if not chain or chain[-1] == name:
        return ""
    inner = chain[-1]
    between = [c for c in chain[chain.index(name) + 1 if name in chain else 0:-1] if c != name]
    through = f" (through {', '.join(f'`{c}`' for c in between)})" if between else ""
    # Where the error is raised is known; whether `inner` is wrong or was handed inputs it cannot
    # take is not, so the sentence says both.
    return (f"The error is raised inside your `{inner}`, which `{name}` calls{through}: the fault is in "
            f"`{inner}` or in what `{name}` passes to it. If `{inner}`'s own tests pass, look at the call.")

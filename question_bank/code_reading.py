"""Code-reading items: a correct NumPy function, and the same function with one catalogued mistake made.

The mistakes themselves are not described here: each buggy listing is keyed by
the slug of an entry in an assignment's mistake catalogue
(``assignments/<name>/mistakes.py``, read through
:func:`autograder.build.spec.load_spec`), whose title and explanation are what
students read. This module holds only what the catalogue does not: the
listing students see (:class:`Listing`), the line edits that put each mistake
into it, and the probes that tie a printed listing to the catalogue entry it
reproduces (:func:`reproducing_entries`), so a key is computed by running the
code students read rather than by trusting the edit table.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

#: The assignment whose catalogue the listings below draw on.
ASSIGNMENT = "lm-head"


@dataclass(frozen=True)
class Listing:
    """A function as students read it: named lines, and per catalogue slug the lines that slug changes.

    Attributes:
        function: the student function's name (a key of the catalogue).
        contract: one Markdown sentence saying what the function must return.
        lines: ``(line id, source line)`` of the correct function, in order.
        edits: catalogue slug -> ``{line id: replacement line}``; a replacement
            of ``None`` deletes the line.
        probes: argument tuples the listing is run on to identify its mistake;
            together they must tell every slug of ``edits`` apart from every
            other and from the correct function.
    """

    function: str
    contract: str
    lines: tuple[tuple[str, str], ...]
    edits: dict[str, dict[str, str | None]]
    probes: Callable[[], list[tuple[Any, ...]]] = field(compare=False)

    def source(self, slug: str | None = None) -> str:
        """The listing with the mistake ``slug`` made (the correct function for ``None``)."""
        edit = self.edits[slug] if slug is not None else {}
        unknown = set(edit) - {line_id for line_id, _ in self.lines}
        if unknown:
            raise KeyError(f"edit {slug!r} names lines {sorted(unknown)} that {self.function} does not have")
        out = []
        for line_id, text in self.lines:
            replaced = edit.get(line_id, text)
            if replaced is not None:
                out.append(replaced)
        return "\n".join(out)

    def changed_lines(self, slug: str) -> list[tuple[str, str | None]]:
        """``(correct line, printed line)`` for each line the mistake ``slug`` changes."""
        original = dict(self.lines)
        return [(original[line_id], text) for line_id, text in self.edits[slug].items()]


def run_source(source: str, function: str, args: tuple[Any, ...]) -> Any:
    """Define ``source`` with NumPy as ``np`` and call ``function`` on copies of ``args``.

    The result is what the printed code returns; an exception is returned as its
    class name, so two listings that fail alike agree. Only listings of this
    module are run (never student or worker text).
    """
    namespace: dict[str, Any] = {"np": np}
    exec(compile(source, f"<listing {function}>", "exec"), namespace)  # noqa: S102 - our own listings
    copies = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    with np.errstate(all="ignore"):
        try:
            return namespace[function](*copies)
        except Exception as exc:  # a listing that raises is identified by how it raises
            return type(exc).__name__


def same_result(a: Any, b: Any) -> bool:
    """Whether two results agree: equal shapes and values (nan equal to nan, inf to inf), tuples entrywise."""
    if isinstance(a, tuple) or isinstance(b, tuple):
        return (isinstance(a, tuple) and isinstance(b, tuple) and len(a) == len(b)
                and all(same_result(x, y) for x, y in zip(a, b)))
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return x.shape == y.shape and bool(np.allclose(x, y, rtol=1e-9, atol=1e-12, equal_nan=True))


def call_quietly(implementation: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """``implementation`` on copies of ``args``, with floating-point warnings silenced and errors as names."""
    copies = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    with np.errstate(all="ignore"):
        try:
            result = implementation(*copies)
        except Exception as exc:
            return type(exc).__name__
    return tuple(result) if isinstance(result, (tuple, list)) else result


@functools.lru_cache(maxsize=None)
def catalogue_entries(function: str) -> dict[str, Any]:
    """The catalogue's mistakes of ``function`` by slug (:class:`autograder.runtime.catalogue.Mistake`)."""
    from autograder.build.spec import load_spec

    return {m.name: m for m in load_spec(ASSIGNMENT).catalogue().for_function(function)}


def reproducing_entries(listing: Listing, source: str) -> list[str]:
    """The slugs (of ``listing.edits``) whose catalogue implementation returns what ``source`` returns on every probe."""
    return list(_reproducing(listing.function, source))


@functools.lru_cache(maxsize=256)
def _reproducing(function: str, source: str) -> tuple[str, ...]:
    """:func:`reproducing_entries`, remembered: a family prints a few dozen listings, each drawn many times."""
    listing = LISTINGS[function]
    entries = catalogue_entries(listing.function)
    probes = listing.probes()
    printed = [run_source(source, listing.function, args) for args in probes]
    return tuple(slug for slug in listing.edits
            if all(same_result(call_quietly(entries[slug].implementation, args), out)
                   for args, out in zip(probes, printed)))


# --- the listings -------------------------------------------------------------------------


def _softmax_probes() -> list[tuple[Any, ...]]:
    rng = np.random.default_rng(20240611)
    x = rng.normal(size=(3, 5))
    far_apart = x + np.array([[900.0], [0.0], [-900.0]])   # one maximum for all rows underflows the low rows
    wide = x.copy()
    wide[:, 0] += 800.0                                     # a spread above 709 overflows a minimum shift
    return [(x, -1), (x, 0), (rng.normal(size=(2, 3, 4)), 1), (x + 1000.0, -1), (far_apart, -1), (wide, -1)]


def _loss_probes() -> list[tuple[Any, ...]]:
    rng = np.random.default_rng(20240612)
    logits = rng.normal(size=(2, 3, 5)) * 2.0
    targets = np.array([[1, 4, 1], [0, 3, 3]])             # repeated ids, B != T != V
    far_apart = logits + np.array([0.0, 1000.0, 0.0])[None, :, None]
    return [(logits, targets), (logits + 1000.0, targets), (far_apart, targets)]


SOFTMAX = Listing(
    function="softmax",
    contract=("`softmax(x, axis=-1)` should return probabilities that sum to 1 along `axis`, "
              "finite for every finite input."),
    lines=(
        ("def", "def softmax(x, axis=-1):"),
        ("shift", "    shifted = x - x.max(axis=axis, keepdims=True)"),
        ("exp", "    e = np.exp(shifted)"),
        ("norm", "    return e / e.sum(axis=axis, keepdims=True)"),
    ),
    edits={
        "softmax-without-max-subtraction": {"shift": "    shifted = x"},
        "softmax-global-max": {"shift": "    shifted = x - x.max()"},
        "softmax-minimum-subtracted": {"shift": "    shifted = x - x.min(axis=axis, keepdims=True)"},
        "softmax-over-first-axis": {"shift": "    shifted = x - x.max(axis=0, keepdims=True)",
                                    "norm": "    return e / e.sum(axis=0, keepdims=True)"},
        "softmax-axis-argument-ignored": {"shift": "    shifted = x - x.max(axis=-1, keepdims=True)",
                                          "norm": "    return e / e.sum(axis=-1, keepdims=True)"},
        "softmax-over-whole-array": {"shift": "    shifted = x - x.max()", "norm": "    return e / e.sum()"},
    },
    probes=_softmax_probes,
)

CROSS_ENTROPY = Listing(
    function="cross_entropy_loss",
    contract=("`cross_entropy_loss(logits, targets)` takes (B, T, V) logits and (B, T) integer targets and "
              "should return the mean cross-entropy over the N = B*T positions, in nats, and `dlogits`, "
              "its gradient with respect to the logits, in the logits' shape; both finite for every "
              "finite input."),
    lines=(
        ("def", "def cross_entropy_loss(logits, targets):"),
        ("sizes", "    B, T, V = logits.shape"),
        ("n", "    N = B * T"),
        ("flat", "    flat = logits.reshape(N, V)"),
        ("tgt", "    tgt = targets.reshape(N)"),
        ("rows", "    rows = np.arange(N)"),
        ("shift", "    shifted = flat - flat.max(axis=1, keepdims=True)"),
        ("exp", "    e = np.exp(shifted)"),
        ("norm", "    probs = e / e.sum(axis=1, keepdims=True)"),
        ("zeros", "    onehot = np.zeros_like(probs)"),
        ("onehot", "    onehot[rows, tgt] = 1.0"),
        ("loss", "    loss = -np.mean(np.log(probs[rows, tgt]))"),
        ("grad", "    dlogits = (probs - onehot) / N"),
        ("return", "    return loss, dlogits.reshape(B, T, V)"),
    ),
    edits={
        "loss-summed": {"loss": "    loss = -np.sum(np.log(probs[rows, tgt]))",
                        "grad": "    dlogits = probs - onehot"},
        "gradient-missing-one-over-n": {"grad": "    dlogits = probs - onehot"},
        "divided-by-batch-only": {"loss": "    loss = -np.sum(np.log(probs[rows, tgt])) / B",
                                  "grad": "    dlogits = (probs - onehot) / B"},
        "loss-averages-all-vocabulary": {"loss": "    loss = -np.mean(np.log(probs))"},
        "loss-onehot-mean-over-vocabulary": {"loss": "    loss = -np.mean(onehot * np.log(probs))"},
        "loss-without-max-subtraction": {"shift": "    shifted = flat"},
        "loss-global-max": {"shift": "    shifted = flat - flat.max()"},
        "loss-softmax-wrong-axis": {"shift": "    shifted = flat - flat.max(axis=0, keepdims=True)",
                                    "norm": "    probs = e / e.sum(axis=0, keepdims=True)"},
        "onehot-not-subtracted": {"grad": "    dlogits = probs / N"},
        "gradient-sign-flipped": {"grad": "    dlogits = (onehot - probs) / N"},
        "loss-sign-flipped": {"loss": "    loss = np.mean(np.log(probs[rows, tgt]))"},
        "loss-log-base-2": {"loss": "    loss = -np.mean(np.log2(probs[rows, tgt]))"},
        "loss-log-base-10": {"loss": "    loss = -np.mean(np.log10(probs[rows, tgt]))"},
        "target-index-without-row-index": {"onehot": "    onehot[:, tgt] = 1.0",
                                           "loss": "    loss = -np.mean(np.log(probs[:, tgt]))"},
        "dlogits-left-flat": {"return": "    return loss, dlogits"},
    },
    probes=_loss_probes,
)

#: Every listing by the student function it shows.
LISTINGS: dict[str, Listing] = {listing.function: listing for listing in (SOFTMAX, CROSS_ENTROPY)}

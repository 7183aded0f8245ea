"""What a student's result must show before a test's built-in hint about a cause is shown.

A hidden test that probes one thing (512 positions, probabilities of 1e-87) explains that thing
when it fails. But it fails for any mistake, and a hint about an underflow beside a loss that is
exactly 512 times too large sends the student after a product they never wrote. Each predicate
here is the evidence one kind of hint needs; it reads only the student's and the right result.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def non_finite_where_right_is_finite(got: Any, right: Any) -> bool:
    """Whether some entry of ``got`` is nan or inf where ``right`` is finite (an underflow to 0
    before a log, an overflow): what an underflow or overflow hint is about."""
    g, r = np.asarray(got, dtype=np.float64), np.asarray(right, dtype=np.float64)
    if g.shape != r.shape:
        return False
    return bool((~np.isfinite(g) & np.isfinite(r)).any())


def within_what_tiny_terms_allow(got: Any, right: float, sign: int, tiny_total: float) -> bool:
    """Whether ``got`` differs from ``right`` in the direction ``sign`` (+1 above, -1 below) by no
    more than ``tiny_total``: what an epsilon inside a log (or a clip) does, raising each tiny
    probability's log towards 0, so it can move the result only that way and at most by the
    tiny terms' whole size."""
    g = float(np.asarray(got, dtype=np.float64))
    gap = sign * (g - float(right))
    return bool(np.isfinite(g)) and 0.0 < gap <= tiny_total * (1 + 1e-9)


def differs_only_in_rows(got: Any, right: Any, rows: np.ndarray, *, rtol: float = 1e-6,
                         atol: float = 1e-9) -> bool:
    """Whether ``got`` differs from ``right`` somewhere, and only in the rows (positions along
    the leading axes) ``rows`` marks: a hint about those positions applies."""
    g, r = np.asarray(got, dtype=np.float64), np.asarray(right, dtype=np.float64)
    if g.shape != r.shape:
        return False
    off = ~np.isclose(g, r, rtol=rtol, atol=atol)
    off_rows = off.reshape(*rows.shape, -1).any(axis=-1)
    return bool(off_rows.any()) and not bool((off_rows & ~rows).any())


def right_without_the_feature(again: Callable[[], Any], right: Any, *, rtol: float = 1e-3,
                              atol: float = 1e-9) -> bool:
    """Whether the student's function, called once more on the same inputs with the feature a hint is
    about taken out (the tiny probabilities raised to ordinary ones), gives the right result there.
    Only then does the failure lie in that feature: a loss divided by the wrong count is also below
    the right one, and wrong without any tiny probability too. ``again`` makes that call; any error
    in it is no evidence. The tolerance is loose on purpose: an epsilon inside a log moves an ordinary
    result by about the epsilon, far less than a wrong count or formula does."""
    try:
        got = again()
        g, r = np.asarray(got, dtype=np.float64), np.asarray(right, dtype=np.float64)
    except Exception:               # the student's error, or a result that is no number: no evidence
        return False
    return g.shape == r.shape and bool(np.isfinite(g).all()) and bool(np.allclose(g, r, rtol=rtol, atol=atol))

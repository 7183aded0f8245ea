"""The random-projection (directional) gradient check: two evaluations at any size.

For a scalar ``f`` with claimed gradient ``g``, ``<g, u>`` along a random unit
direction ``u`` must match the central difference of ``f`` along ``u``; for an
array-valued ``f`` a random output weighting ``v`` reduces it to a scalar
first (the vector-Jacobian product check torch's gradcheck calls fast mode).
The relative error uses the course's definition (seed lesson 4) with its guard.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder.runtime.tolerances import PROJECTION_EPS, PROJECTION_REL_TOL, REL_ERR_GUARD

__all__ = ["ProjectionCheck", "projection_check", "random_unit_like"]


@dataclass(frozen=True)
class ProjectionCheck:
    """Outcome of a random-projection check: vᵀJu computed two ways."""

    analytic: float
    numerical: float
    rel_err: float
    passed: bool


def random_unit_like(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A float64 direction of ``x``'s shape drawn from a Gaussian and scaled to unit norm."""
    u = rng.standard_normal(x.shape)
    return u / np.linalg.norm(u)


def projection_check(
    f: Callable[[np.ndarray], object],
    x: np.ndarray,
    rng: np.random.Generator,
    *,
    grad: np.ndarray | None = None,
    vjp: Callable[[np.ndarray], np.ndarray] | None = None,
    eps: float = PROJECTION_EPS,
    tol: float = PROJECTION_REL_TOL,
    direction: np.ndarray | None = None,
) -> ProjectionCheck:
    """Compare an analytic directional derivative with central differences along it.

    For scalar ``f`` pass ``grad`` (df/dx, shape of x): the analytic side is
    ``<grad, u>`` for a random unit direction ``u``. For array-valued ``f``
    pass ``vjp`` (v -> vᵀJ, shape of x): a random output weighting ``v``
    reduces f to the scalar ``<v, f(x)>`` and the analytic side is
    ``<vjp(v), u>``. Either way the numerical side is
    ``(g(x + eps u) - g(x - eps u)) / (2 eps)``: two evaluations of ``f``
    whatever the size of ``x``. ``x`` itself is never modified. ``direction``
    (a unit array of x's shape) replaces the random direction.
    """
    if (grad is None) == (vjp is None):
        raise ValueError("projection_check needs exactly one of grad= (scalar f) or vjp= (array f)")
    x = np.asarray(x, dtype=np.float64)
    u = random_unit_like(x, rng) if direction is None else np.asarray(direction, dtype=np.float64)
    f_plus = np.asarray(f(x + eps * u), dtype=np.float64)
    f_minus = np.asarray(f(x - eps * u), dtype=np.float64)
    if grad is not None:
        numerical = float((f_plus - f_minus).sum() / (2 * eps))
        analytic = float(np.vdot(np.asarray(grad, dtype=np.float64), u))
    else:
        v = rng.standard_normal(f_plus.shape)
        numerical = float(np.vdot(v, f_plus - f_minus) / (2 * eps))
        analytic = float(np.vdot(np.asarray(vjp(v), dtype=np.float64), u))
    rel_err = abs(analytic - numerical) / (max(abs(analytic), abs(numerical)) + REL_ERR_GUARD)
    return ProjectionCheck(analytic, numerical, rel_err, rel_err < tol)


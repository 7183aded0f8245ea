"""Gradient checks in float64: elementwise central differences and a
random-projection (directional) check that costs two evaluations at any size.

The elementwise pair is the course's own definition (seed lesson 4): the
reference implementations in ``solutions`` are the ones used here, so the
judge and the lesson can never disagree about what "relative error" means.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from autograder.runtime.tolerances import (
    FD_EPS,
    PROJECTION_EPS,
    PROJECTION_REL_TOL,
    REL_ERR_GUARD,
)
from solutions.head_and_loss import max_rel_err
from solutions.head_and_loss import numerical_gradient as _central_differences

__all__ = [
    "ProjectionCheck",
    "gradient_check",
    "max_rel_err",
    "numerical_gradient",
    "projection_check",
    "random_unit_like",
]


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = FD_EPS) -> np.ndarray:
    """Central-difference gradient of scalar ``f`` at float64 ``x`` (any shape).

    ``x`` is perturbed in place one entry at a time and holds its original
    values on return, even if ``f`` raises. Float64 is required because at
    eps = 1e-6 float32 round-off (~1e-7 / 1e-6) would swamp the signal.
    """
    if not isinstance(x, np.ndarray) or x.dtype != np.float64:
        raise TypeError(f"numerical_gradient needs a float64 ndarray, got {type(x).__name__} "
                        f"of dtype {getattr(x, 'dtype', None)}; convert with x.astype(np.float64)")
    return _central_differences(f, x, eps)


def gradient_check(f: Callable[[np.ndarray], float], x: np.ndarray, analytic: np.ndarray,
                   eps: float = FD_EPS) -> float:
    """Max relative error of ``analytic`` against the numerical gradient of ``f`` at ``x``."""
    return max_rel_err(analytic, numerical_gradient(f, x, eps))


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
) -> ProjectionCheck:
    """Compare an analytic directional derivative with central differences along it.

    For scalar ``f`` pass ``grad`` (df/dx, shape of x): the analytic side is
    ``<grad, u>`` for a random unit direction ``u``. For array-valued ``f``
    pass ``vjp`` (v -> vᵀJ, shape of x): a random output weighting ``v``
    reduces f to the scalar ``<v, f(x)>`` and the analytic side is
    ``<vjp(v), u>``. Either way the numerical side is
    ``(g(x + eps u) - g(x - eps u)) / (2 eps)``: two evaluations of ``f``
    whatever the size of ``x``. ``x`` itself is never modified.
    """
    if (grad is None) == (vjp is None):
        raise ValueError("projection_check needs exactly one of grad= (scalar f) or vjp= (array f)")
    x = np.asarray(x, dtype=np.float64)
    u = random_unit_like(x, rng)
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


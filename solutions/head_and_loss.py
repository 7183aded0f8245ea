"""Reference solutions for the ``lm-head`` assignment.

Shapes use B (batch), T (positions), C (model width), V (vocabulary size) and
N = B * T (scored positions). All functions are pure: inputs are never
modified, except that ``numerical_gradient`` perturbs ``x`` temporarily and
restores it before returning.
"""
from __future__ import annotations

from typing import Callable

import numpy as np


def next_token_batch(data: np.ndarray, ix, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Input rows and their next-token targets.

    Args:
        data: (L,) integer token ids.
        ix: (B,) start offsets, each at most ``L - block_size - 1``.
        block_size: T, the context length.

    Returns:
        xb: (B, T) ``data[i : i+T]`` per offset, same dtype as ``data``.
        yb: (B, T) ``data[i+1 : i+T+1]``: the input shifted left by one.
    """
    offsets = np.asarray(ix, dtype=np.int64).reshape(-1)
    cols = np.arange(block_size)
    xb = data[offsets[:, None] + cols]          # (B, T)
    yb = data[offsets[:, None] + cols + 1]      # (B, T)
    return xb, yb


def lm_head(hidden: np.ndarray, W_head: np.ndarray, b_head: np.ndarray) -> np.ndarray:
    """Linear language-modelling head: (B, T, C) @ (C, V) + (V,) -> (B, T, V)."""
    return hidden @ W_head + b_head


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``; same shape and float dtype as ``x``.

    Subtracting the maximum first keeps ``exp`` finite for logits of any size.
    """
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_loss(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy over all positions, and its gradient.

    Args:
        logits: (B, T, V) float scores.
        targets: (B, T) integer token ids in ``[0, V)``.

    Returns:
        loss: float, ``-mean(log softmax(logits)[target])`` over N = B*T positions.
        dlogits: (B, T, V) float64, ``(softmax(logits) - onehot(targets)) / N``.
    """
    B, T, V = logits.shape
    N = B * T
    flat = np.asarray(logits, dtype=np.float64).reshape(N, V)      # (N, V)
    tgt = np.asarray(targets).reshape(N)                           # (N,)
    shifted = flat - flat.max(axis=1, keepdims=True)
    log_z = np.log(np.exp(shifted).sum(axis=1))                    # (N,)
    log_p_target = shifted[np.arange(N), tgt] - log_z              # (N,)
    loss = float(-np.mean(log_p_target))
    dflat = np.exp(shifted - log_z[:, None])                       # softmax, (N, V)
    dflat[np.arange(N), tgt] -= 1.0
    dflat /= N
    return loss, dflat.reshape(B, T, V)


def lm_head_backward(
    hidden: np.ndarray, W_head: np.ndarray, dlogits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Backward pass of ``lm_head``.

    Args:
        hidden: (B, T, C); W_head: (C, V); dlogits: (B, T, V).

    Returns:
        dW_head: (C, V) = hidden_flatᵀ @ dlogits_flat, summed over the N rows.
        db_head: (V,) = dlogits summed over the N rows.
        dhidden: (B, T, C) = dlogits @ W_headᵀ.
    """
    C, V = W_head.shape
    h_flat = hidden.reshape(-1, C)          # (N, C)
    d_flat = dlogits.reshape(-1, V)         # (N, V)
    dW_head = h_flat.T @ d_flat             # (C, V)
    db_head = d_flat.sum(axis=0)            # (V,)
    dhidden = dlogits @ W_head.T            # (B, T, C)
    return dW_head, db_head, dhidden


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of a scalar function, entry by entry.

    ``x`` (any shape, float64) is perturbed in place one entry at a time and
    restored exactly before the next, so it holds its original values on
    return. Returns an array of ``x``'s shape with ``(f(x+eps) - f(x-eps)) / 2eps``.
    """
    grad = np.zeros(x.shape, dtype=np.float64)
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        try:
            x[idx] = orig + eps
            f_plus = float(f(x))
            x[idx] = orig - eps
            f_minus = float(f(x))
        finally:
            x[idx] = orig
        grad[idx] = (f_plus - f_minus) / (2 * eps)
    return grad


def max_rel_err(a: np.ndarray, n: np.ndarray) -> float:
    """Largest elementwise relative error between analytic ``a`` and numerical ``n``.

    ``|a - n| / (max(|a|, |n|) + 1e-12)``: the 1e-12 guard keeps entries where
    both are zero from dividing by zero.
    """
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    denom = np.maximum(np.abs(a), np.abs(n)) + 1e-12
    return float(np.max(np.abs(a - n) / denom))

"""Correct baseline for the lm-head assignment."""
import numpy as np
from typing import Callable

# The course's character-level corpus: the lamp-keeper text, repeated 20 times.
CORPUS = (
    "the lamp keeper walks the shore at dusk. "
    "the lamp keeper lights the lantern when the fog rolls in. "
    "the boats come home when the lantern glows. "
    "the boats wait outside the bay when the fog is thick. "
    "a small boat drifts near the rocks at dawn. "
    "the keeper rings the bell when a boat drifts near the rocks. "
    "the tide rises at dusk and falls at dawn. "
    "the gulls call over the bay when the tide is low. "
    "the keeper counts the boats and writes the count in a book. "
    "the lantern burns all night and rests at dawn. "
) * 20

chars = sorted(set(CORPUS))
vocab_size = len(chars)
stoi = {c: i for i, c in enumerate(chars)}
itos = {i: c for i, c in enumerate(chars)}
encode = lambda s: [stoi[c] for c in s]
decode = lambda ids: "".join(itos[int(i)] for i in ids)
data = np.array(encode(CORPUS), dtype=np.int64)

B, T, C = 4, 8, 16
rng = np.random.default_rng(42)


def next_token_batch(data: np.ndarray, ix, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Input rows and their next-token targets."""
    ix = np.asarray(ix, dtype=np.int64).reshape(-1)
    cols = np.arange(block_size)
    xb = data[ix[:, None] + cols]
    yb = data[ix[:, None] + cols + 1]
    return xb, yb


def lm_head(hidden: np.ndarray, W_head: np.ndarray, b_head: np.ndarray) -> np.ndarray:
    """Linear language-modelling head: (B, T, C) @ (C, V) + (V,) -> (B, T, V)."""
    return hidden @ W_head + b_head


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along ``axis``; same shape and float dtype as ``x``."""
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_loss(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean softmax cross-entropy over all positions, and its gradient."""
    V = logits.shape[-1]
    z = np.asarray(logits, dtype=np.float64).reshape(-1, V)
    t = np.asarray(targets).reshape(-1).astype(np.int64)
    N = z.shape[0]
    shifted = z - z.max(axis=1, keepdims=True)
    logsum = np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    logp = shifted - logsum
    loss = float(-logp[np.arange(N), t].mean())
    d = np.exp(logp)
    d[np.arange(N), t] -= 1.0
    d /= N
    return loss, d.reshape(logits.shape)


def lm_head_backward(hidden, W_head, dlogits):
    """Backward pass of ``lm_head``."""
    Cw = hidden.shape[-1]
    V = dlogits.shape[-1]
    h = hidden.reshape(-1, Cw)
    d = dlogits.reshape(-1, V)
    dW_head = h.T @ d
    db_head = d.sum(axis=0)
    dhidden = dlogits @ W_head.T
    return dW_head, db_head, dhidden


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central-difference gradient of a scalar function, entry by entry."""
    grad = np.zeros(x.shape, dtype=np.float64)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + eps
        fp = f(x)
        x[idx] = old - eps
        fm = f(x)
        x[idx] = old
        grad[idx] = (fp - fm) / (2 * eps)
    return grad


def max_rel_err(a: np.ndarray, n: np.ndarray) -> float:
    """Adapted from MrCadagon/py_proj intel_code/intel上交/normal.py rel_error (CS231n helper)."""
    x, y = a, n
    return float(np.max(np.abs(x - y) / (np.maximum(1e-8, np.abs(x) + np.abs(y)))))

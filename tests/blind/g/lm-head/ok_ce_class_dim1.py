import numpy as np
from typing import Callable


def next_token_batch(data: np.ndarray, ix, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    ix = np.asarray(ix, dtype=np.int64).reshape(-1)
    offsets = np.arange(block_size)
    xb = data[ix[:, None] + offsets[None, :]]
    yb = data[ix[:, None] + offsets[None, :] + 1]
    return xb, yb


def lm_head(hidden: np.ndarray, W_head: np.ndarray, b_head: np.ndarray) -> np.ndarray:
    return hidden @ W_head + b_head


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    x = np.asarray(x)
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_loss(logits, targets):
    z = np.asarray(logits, dtype=np.float64).transpose(0, 2, 1)   # (B, V, T) like F.cross_entropy
    y = np.asarray(targets)
    N = y.size
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    picked = np.take_along_axis(logp, y[:, None, :], axis=1)
    loss = -picked.sum() / N
    g = np.exp(logp)
    np.put_along_axis(g, y[:, None, :], np.take_along_axis(g, y[:, None, :], axis=1) - 1.0, axis=1)
    dlogits = (g / N).transpose(0, 2, 1).copy()
    return float(loss), dlogits


def lm_head_backward(
    hidden: np.ndarray, W_head: np.ndarray, dlogits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    C = hidden.shape[-1]
    V = dlogits.shape[-1]
    h = hidden.reshape(-1, C)
    d = dlogits.reshape(-1, V)
    dW_head = h.T @ d
    db_head = d.sum(axis=0)
    dhidden = dlogits @ W_head.T
    return dW_head, db_head, dhidden


def numerical_gradient(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros(x.shape, dtype=np.float64)
    it = np.nditer(x, flags=["multi_index"])
    while not it.finished:
        idx = it.multi_index
        old = x[idx]
        x[idx] = old + eps
        fp = f(x)
        x[idx] = old - eps
        fm = f(x)
        x[idx] = old
        grad[idx] = (fp - fm) / (2 * eps)
        it.iternext()
    return grad


def max_rel_err(a: np.ndarray, n: np.ndarray) -> float:
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))

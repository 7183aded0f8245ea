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


def softmax(x, axis=-1):
    x -= np.max(x, axis=axis, keepdims=True)
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_loss(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    V = logits.shape[-1]
    flat = np.asarray(logits, dtype=np.float64).reshape(-1, V)
    y = np.asarray(targets).reshape(-1)
    N = flat.shape[0]
    z = flat - flat.max(axis=1, keepdims=True)
    logsumexp = np.log(np.exp(z).sum(axis=1, keepdims=True))
    logp = z - logsumexp
    rows = np.arange(N)
    loss = -logp[rows, y].mean()
    probs = np.exp(logp)
    probs[rows, y] -= 1.0
    dlogits = (probs / N).reshape(logits.shape)
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

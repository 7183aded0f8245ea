import numpy as np
from typing import Callable


def next_token_batch(data, ix, block_size):
    ix = np.asarray(ix, dtype=np.int64)
    offs = ix[:, None] + np.arange(block_size)[None, :]
    xb = data[offs]
    yb = data[offs + 1]
    return xb, yb


def lm_head(hidden, W_head, b_head):
    return hidden @ W_head + b_head


def softmax(x, axis=-1):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    z = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(z)
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_loss(logits, targets):
    B, T, V = logits.shape
    z = logits.reshape(-1, V).astype(np.float64)
    y = targets.reshape(-1)
    N = z.shape[0]
    z = z - z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    loss = float(-(z[np.arange(N), y] - lse).sum() / B)
    p = np.exp(z - lse[:, None])
    p[np.arange(N), y] -= 1.0
    return loss, (p / B).reshape(logits.shape)


def lm_head_backward(hidden, W_head, dlogits):
    C = hidden.shape[-1]
    V = W_head.shape[1]
    h = hidden.reshape(-1, C)
    g = dlogits.reshape(-1, V)
    dW_head = h.T @ g
    db_head = g.sum(axis=0)
    dhidden = dlogits @ W_head.T
    return dW_head, db_head, dhidden


def numerical_gradient(f, x, eps=1e-6):
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


def max_rel_err(a, n):
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))

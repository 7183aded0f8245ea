import numpy as np
from typing import Callable

B, T, C = 4, 8, 16


def next_token_batch(data, ix, block_size):
    xb = [data[i:i + block_size] for i in ix]
    yb = [data[i + 1:i + block_size + 1] for i in ix]
    return xb, yb


def lm_head(hidden, W_head, b_head):
    return hidden @ W_head + b_head


def softmax(x, axis=-1):
    x = np.asarray(x)
    if not np.issubdtype(x.dtype, np.floating):
        x = x.astype(np.float64)
    shifted = x - np.max(x, axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_loss(logits, targets):
    z = np.asarray(logits, dtype=np.float64)
    V = z.shape[-1]
    z2 = z.reshape(-1, V)
    y = np.asarray(targets).reshape(-1)
    N = z2.shape[0]
    shifted = z2 - z2.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -logp[np.arange(N), y].mean()
    p = np.exp(logp)
    p[np.arange(N), y] -= 1.0
    dlogits = (p / N).reshape(z.shape)
    return float(loss), dlogits


def lm_head_backward(hidden, W_head, dlogits):
    C = hidden.shape[-1]
    V = dlogits.shape[-1]
    h = hidden.reshape(-1, C)
    d = dlogits.reshape(-1, V)
    dW_head = h.T @ d
    db_head = d.sum(axis=0)
    dhidden = dlogits @ W_head.T
    return dW_head, db_head, dhidden


def numerical_gradient(f, x, eps=1e-6):
    grad = np.zeros(x.shape, dtype=np.float64)
    for idx in np.ndindex(*x.shape):
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
    rel = np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)
    return float(np.max(rel))

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
    ix = np.asarray(ix)
    xb = np.stack([data[i:i + block_size] for i in ix])
    yb = np.stack([data[i + 1:i + block_size + 1] for i in ix])
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
    Bv, Tv, V = logits.shape
    N = Bv * Tv
    flat = logits.reshape(N, V).astype(np.float64)
    tgt = np.asarray(targets).reshape(N).astype(np.int64)
    z = flat - flat.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    loss = float(-logp[np.arange(N), tgt].mean())
    d = np.exp(logp)
    d[np.arange(N), tgt] -= 1.0
    d /= N
    return loss, d.reshape(Bv, Tv, V)


def lm_head_backward(hidden, W_head, dlogits):
    """Perform a backward pass, calculating the gradients."""
    grads = dlogits
    dW = np.einsum("bsm, bsd -> md", hidden, grads)
    db = grads.sum(axis=(0, 1), keepdims=True)
    return dW, db, grads @ W_head.T


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
    """Largest elementwise relative error between analytic ``a`` and numerical ``n``."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))

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


def next_token_batch(data, ix, block_size):
    ix = np.asarray(ix)
    xb = np.stack([data[i:i + block_size] for i in ix])
    yb = np.stack([data[i + 1:i + block_size + 1] for i in ix])
    return xb, yb


def lm_head(hidden, W_head, b_head):
    return hidden @ W_head + b_head


def softmax(x, axis=-1):
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


def cross_entropy_loss(logits, targets):
    V = logits.shape[-1]
    flat = logits.reshape(-1, V).astype(np.float64)
    t = np.asarray(targets).reshape(-1)
    N = flat.shape[0]
    z = flat - flat.max(axis=1, keepdims=True)
    logsum = np.log(np.exp(z).sum(axis=1, keepdims=True))
    logp = z - logsum
    loss = -logp[np.arange(N), t].mean()
    probs = np.exp(logp)
    probs[np.arange(N), t] -= 1.0
    dlogits = (probs / N).reshape(logits.shape)
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
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        idx = it.multi_index
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

import numpy as np

rng = np.random.default_rng(3)
B, T, C, V = 2, 5, 8, 12


def sequence_log_prob(cond_probs) -> float:
    """Log-probability of a sequence from its chain-rule conditionals.

    ``cond_probs``: (T,) values p(w_i | w_<i). Returns ``sum(log p)``; the
    sum of logs avoids the underflow of multiplying many small factors.
    """
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs) -> float:
    """Perplexity ``exp(mean NLL)`` of (N,) probabilities given to the scored tokens."""
    p = np.asarray(token_probs, dtype=np.float64).ravel()
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll: float) -> float:
    """Perplexity from a mean negative log-likelihood in nats: ``exp(mean_nll)``."""
    return float(np.exp(np.float64(mean_nll)))


def masked_cross_entropy(logits, targets, mask):
    # jwen307/MLBase ops/losses.py MaskedSoftmaxCELoss (d2l): (unweighted_loss * weights).mean(dim=1);
    # torch -> numpy; per-sequence vector reduced with .mean() to a scalar, autograd gradient written out.
    pred = np.asarray(logits, dtype=np.float64)
    B, T, V = pred.shape
    weights = np.asarray(mask).astype(np.float64)
    label = np.where(weights > 0, targets, 0).astype(np.int64)  # CrossEntropyLoss needs valid ids
    z = pred - pred.max(axis=-1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=-1))
    unweighted_loss = lse - np.take_along_axis(z, label[..., None], axis=-1)[..., 0]
    weighted_loss = (unweighted_loss * weights).mean(axis=1)
    loss = float(weighted_loss.mean())
    g = np.exp(z - lse[..., None])
    np.put_along_axis(g, label[..., None], np.take_along_axis(g, label[..., None], -1) - 1.0, -1)
    dlogits = g * weights[..., None] / (B * T)
    return loss, dlogits


def tied_lm_head(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Logits from a head tied to the token embedding: (..., C) @ (V, C)ᵀ -> (..., V)."""
    return np.asarray(hidden) @ np.asarray(E).T


def greedy_next_token(h_last: np.ndarray, W_head: np.ndarray) -> int:
    """Greedy decoding step: ``argmax(h_last @ W_head)`` for (C,) and (C, V).

    Softmax is monotonic, so the argmax of the logits is the argmax of the
    probabilities. Ties go to the lowest token id, as ``np.argmax`` does.
    """
    return int(np.argmax(np.asarray(h_last) @ np.asarray(W_head)))


def causal_mask(T: int) -> np.ndarray:
    """(T, T) bool mask, True where query j must not see key k (k > j)."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(
    vocab_size: int,
    block_size: int,
    n_embd: int,
    n_layer: int,
    ffn_dim: int,
    tied: bool = True,
) -> dict[str, int]:
    """Parameters of a GPT-1-style decoder under the course's counting convention."""
    V, T, d, L, f = (int(vocab_size), int(block_size), int(n_embd), int(n_layer), int(ffn_dim))
    emb = V * d + T * d
    attn = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    ln = L * (4 * d)
    head = 0 if tied else V * d
    return {"embeddings": emb, "attention": attn, "ffn": ffn, "layernorm": ln,
            "lm_head": head, "total": emb + attn + ffn + ln + head}

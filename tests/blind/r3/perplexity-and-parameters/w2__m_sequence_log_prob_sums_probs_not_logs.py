import numpy as np

rng = np.random.default_rng(3)
B, T, C, V = 2, 5, 8, 12


def sequence_log_prob(cond_probs) -> float:
    # CS5740NLP/Project1 perplexity.py, bigram branch: total += i (the probability, no log)
    total = 0.0
    for i in cond_probs:
        total += i
    return total


def perplexity(token_probs) -> float:
    """Perplexity ``exp(mean NLL)`` of (N,) probabilities given to the scored tokens."""
    p = np.asarray(token_probs, dtype=np.float64).ravel()
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll: float) -> float:
    """Perplexity from a mean negative log-likelihood in nats: ``exp(mean_nll)``."""
    return float(np.exp(np.float64(mean_nll)))


def masked_cross_entropy(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """Cross-entropy averaged over the scored positions only.

    Args:
        logits: (B, T, V) float scores.
        targets: (B, T) integer ids; values at unscored positions are ignored.
        mask: (B, T) bool (or 0/1), True where the position is scored.

    Returns:
        loss: mean NLL over the M = mask.sum() scored positions (0.0 if M == 0).
        dlogits: (B, T, V) float64, ``(softmax - onehot) / M`` at scored
        positions and exactly 0 at padding.
    """
    x = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    dlogits = np.zeros(x.shape, dtype=np.float64)
    M = int(m.sum())
    if M == 0:
        return 0.0, dlogits
    xs = x[m]                                   # (M, V)
    y = np.asarray(targets)[m].astype(np.int64)  # (M,)
    z = xs - xs.max(axis=1, keepdims=True)
    logsum = np.log(np.exp(z).sum(axis=1))
    logp_y = z[np.arange(M), y] - logsum
    loss = float(-logp_y.mean())
    g = np.exp(z - logsum[:, None])
    g[np.arange(M), y] -= 1.0
    dlogits[m] = g / M
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

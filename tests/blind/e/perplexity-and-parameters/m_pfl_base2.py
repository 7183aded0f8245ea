import numpy as np

rng = np.random.default_rng(3)
B, T, C, V = 2, 5, 8, 12


def sequence_log_prob(cond_probs) -> float:
    """Log-probability of a sequence from its chain-rule conditionals."""
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs) -> float:
    """Perplexity ``exp(mean NLL)`` of (N,) probabilities given to the scored tokens."""
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll):
    return float(2 ** mean_nll)


def masked_cross_entropy(logits, targets, mask):
    """Cross-entropy averaged over the scored positions only."""
    logits = np.asarray(logits, dtype=np.float64)
    Bq, Tq, Vq = logits.shape
    m = np.asarray(mask).astype(bool).reshape(-1)
    M = int(m.sum())
    dlogits = np.zeros((Bq * Tq, Vq), dtype=np.float64)
    if M == 0:
        return 0.0, dlogits.reshape(Bq, Tq, Vq)
    flat = logits.reshape(-1, Vq)[m]
    y = np.asarray(targets).reshape(-1)[m].astype(np.int64)
    z = flat - flat.max(axis=1, keepdims=True)
    logsum = np.log(np.exp(z).sum(axis=1))
    rows = np.arange(M)
    loss = float(-(z[rows, y] - logsum).mean())
    probs = np.exp(z - logsum[:, None])
    probs[rows, y] -= 1.0
    dlogits[m] = probs / M
    return loss, dlogits.reshape(Bq, Tq, Vq)


def tied_lm_head(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Logits from a head tied to the token embedding: (..., C) @ (V, C)ᵀ -> (..., V)."""
    return hidden @ E.T


def greedy_next_token(h_last: np.ndarray, W_head: np.ndarray) -> int:
    """Greedy decoding step: ``argmax(h_last @ W_head)`` for (C,) and (C, V)."""
    return int(np.argmax(h_last @ W_head))


def causal_mask(T: int) -> np.ndarray:
    """(T, T) bool mask, True where query j must not see key k (k > j)."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    """Parameters of a GPT-1-style decoder under the course's counting convention."""
    V, Tq, d, L, f = int(vocab_size), int(block_size), int(n_embd), int(n_layer), int(ffn_dim)
    emb = V * d + Tq * d
    attn = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    ln = L * (4 * d)
    head = 0 if tied else V * d
    return {
        "embeddings": emb,
        "attention": attn,
        "ffn": ffn,
        "layernorm": ln,
        "lm_head": head,
        "total": emb + attn + ffn + ln + head,
    }

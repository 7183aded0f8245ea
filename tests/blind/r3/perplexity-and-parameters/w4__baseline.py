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


def masked_cross_entropy(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """Cross-entropy averaged over the scored positions only."""
    x = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    Vv = x.shape[-1]
    flat = x.reshape(-1, Vv)
    mflat = m.reshape(-1)
    tflat = np.asarray(targets).reshape(-1)
    dlogits = np.zeros(flat.shape, dtype=np.float64)
    M = int(mflat.sum())
    if M == 0:
        return 0.0, dlogits.reshape(x.shape)
    rows = flat[mflat]
    t = tflat[mflat].astype(np.int64)
    shifted = rows - rows.max(axis=1, keepdims=True)
    logsum = np.log(np.exp(shifted).sum(axis=1))
    logp = shifted[np.arange(M), t] - logsum
    loss = float(-logp.mean())
    probs = np.exp(shifted - logsum[:, None])
    probs[np.arange(M), t] -= 1.0
    dlogits[mflat] = probs / M
    return loss, dlogits.reshape(x.shape)


def tied_lm_head(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Logits from a head tied to the token embedding: (..., C) @ (V, C)ᵀ -> (..., V)."""
    return hidden @ E.T


def greedy_next_token(h_last: np.ndarray, W_head: np.ndarray) -> int:
    """Greedy decoding step: ``argmax(h_last @ W_head)`` for (C,) and (C, V)."""
    return int(np.argmax(h_last @ W_head))


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
    V_, T_, d, L, f = (int(vocab_size), int(block_size), int(n_embd), int(n_layer), int(ffn_dim))
    embeddings = V_ * d + T_ * d
    attention = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    layernorm = L * (4 * d)
    lm_head = 0 if tied else V_ * d
    total = embeddings + attention + ffn + layernorm + lm_head
    return {"embeddings": embeddings, "attention": attention, "ffn": ffn,
            "layernorm": layernorm, "lm_head": lm_head, "total": total}

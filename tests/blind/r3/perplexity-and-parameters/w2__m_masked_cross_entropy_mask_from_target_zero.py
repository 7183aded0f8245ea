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
    # jonas7654/MIDI-Transformer-from-scratch CUPY/models/GoePT/loss.py cross_entropy_loss (cupy -> numpy).
    # Its clip bug is removed here; the padding mask is derived from the target id, as the author does.
    x = np.asarray(logits, dtype=np.float64)
    B, T, V = x.shape
    x = x.reshape(-1, V)
    t = np.asarray(targets).reshape(-1).astype(np.int64)
    z = x - x.max(axis=1, keepdims=True)
    y_pred = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    y_true = np.zeros_like(y_pred)
    y_true[np.arange(len(t)), t] = 1.0
    loss = -np.sum(y_true * (z - np.log(np.exp(z).sum(axis=1, keepdims=True))), axis=1)
    # Create a mask for non-padding tokens
    mask_ = (np.argmax(y_true, axis=1) != 0).astype(np.float32)
    loss = loss * mask_
    out = np.sum(loss) / np.sum(mask_)
    g = (y_pred - y_true) * mask_[:, None] / np.sum(mask_)
    return float(out), g.reshape(B, T, V)


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

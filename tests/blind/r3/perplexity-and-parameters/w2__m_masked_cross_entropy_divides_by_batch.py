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
    # 0suh/cs231n_2021 assignment3/cs231n/rnn_layers.py temporal_softmax_loss
    x, y = logits, targets
    N, T, V = x.shape

    x_flat = x.reshape(N * T, V)
    y_flat = y.reshape(N * T)
    mask_flat = mask.reshape(N * T)

    probs = np.exp(x_flat - np.max(x_flat, axis=1, keepdims=True))
    probs /= np.sum(probs, axis=1, keepdims=True)
    loss = -np.sum(mask_flat * np.log(probs[np.arange(N * T), y_flat])) / N
    dx_flat = probs.copy()
    dx_flat[np.arange(N * T), y_flat] -= 1
    dx_flat /= N
    dx_flat *= mask_flat[:, None]

    dx = dx_flat.reshape(N, T, V)

    return loss, dx


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

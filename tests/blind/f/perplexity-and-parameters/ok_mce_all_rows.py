import numpy as np


def sequence_log_prob(cond_probs) -> float:
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs) -> float:
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll: float) -> float:
    return float(np.exp(mean_nll))


def masked_cross_entropy(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    w = np.asarray(mask).astype(np.float64)
    M = w.sum()
    z = logits.astype(np.float64)
    if M == 0:
        return 0.0, np.zeros_like(z)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    t = np.where(w > 0, targets, 0).astype(np.int64)[..., None]
    nll = -np.take_along_axis(logp, t, axis=-1)[..., 0]
    loss = (nll * w).sum() / M
    g = np.exp(logp)
    np.put_along_axis(g, t, np.take_along_axis(g, t, axis=-1) - 1.0, axis=-1)
    g = g * (w / M)[..., None]
    return float(loss), g


def tied_lm_head(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    return hidden @ E.T


def greedy_next_token(h_last: np.ndarray, W_head: np.ndarray) -> int:
    return int(np.argmax(h_last @ W_head))


def causal_mask(T: int) -> np.ndarray:
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(
    vocab_size: int,
    block_size: int,
    n_embd: int,
    n_layer: int,
    ffn_dim: int,
    tied: bool = True,
) -> dict[str, int]:
    V, T, d, L, f = int(vocab_size), int(block_size), int(n_embd), int(n_layer), int(ffn_dim)
    emb = V * d + T * d
    attn = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    ln = L * (4 * d)
    head = 0 if tied else V * d
    total = emb + attn + ffn + ln + head
    return {"embeddings": emb, "attention": attn, "ffn": ffn,
            "layernorm": ln, "lm_head": head, "total": total}

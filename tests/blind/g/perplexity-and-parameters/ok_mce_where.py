import numpy as np


def sequence_log_prob(cond_probs) -> float:
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs) -> float:
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll: float) -> float:
    return float(np.exp(mean_nll))


def masked_cross_entropy(logits, targets, mask):
    x = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    M = int(m.sum())
    if M == 0:
        return 0.0, np.zeros(x.shape, dtype=np.float64)
    safe_t = np.where(m, targets, 0).astype(np.int64)
    z = x - x.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(logp, safe_t[..., None], axis=-1)[..., 0]
    loss = -np.where(m, picked, 0.0).sum() / M
    g = np.exp(logp)
    np.put_along_axis(g, safe_t[..., None], np.take_along_axis(g, safe_t[..., None], axis=-1) - 1.0, axis=-1)
    dlogits = np.where(m[..., None], g / M, 0.0)
    return float(loss), dlogits


def tied_lm_head(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    return hidden @ E.T


def greedy_next_token(h_last: np.ndarray, W_head: np.ndarray) -> int:
    logits = h_last @ W_head
    return int(np.argmax(logits))


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
    embeddings = V * d + T * d
    attention = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    layernorm = L * (4 * d)
    lm_head = 0 if tied else V * d
    total = embeddings + attention + ffn + layernorm + lm_head
    return {
        "embeddings": int(embeddings),
        "attention": int(attention),
        "ffn": int(ffn),
        "layernorm": int(layernorm),
        "lm_head": int(lm_head),
        "total": int(total),
    }

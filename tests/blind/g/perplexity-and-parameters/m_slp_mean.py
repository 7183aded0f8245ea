import numpy as np


def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.mean(np.log(p)))


def perplexity(token_probs) -> float:
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll: float) -> float:
    return float(np.exp(mean_nll))


def masked_cross_entropy(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    V = logits.shape[-1]
    flat = np.asarray(logits, dtype=np.float64).reshape(-1, V)
    m = np.asarray(mask).astype(bool).reshape(-1)
    y = np.asarray(targets).reshape(-1)
    M = int(m.sum())
    dlogits = np.zeros(flat.shape, dtype=np.float64)
    if M == 0:
        return 0.0, dlogits.reshape(logits.shape)
    rows = np.nonzero(m)[0]
    sel = flat[rows]
    ys = y[rows]
    z = sel - sel.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    r = np.arange(M)
    loss = -logp[r, ys].sum() / M
    g = np.exp(logp)
    g[r, ys] -= 1.0
    dlogits[rows] = g / M
    return float(loss), dlogits.reshape(logits.shape)


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

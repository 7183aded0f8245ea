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
    logits = np.asarray(logits, dtype=np.float64)
    shape = logits.shape
    Vn = shape[-1]
    flat = logits.reshape(-1, Vn)
    m = np.asarray(mask).reshape(-1).astype(bool)
    y = np.asarray(targets).reshape(-1)
    N = flat.shape[0]
    M = int(m.sum())

    if M == 0:
        return 0.0, np.zeros_like(logits)
    z = flat - flat.max(axis=1, keepdims=True)
    lse = np.log(np.exp(z).sum(axis=1))
    nll = -(z[np.arange(N), y] - lse)
    loss = float((nll * m).sum() / M)
    p = np.exp(z - lse[:, None]); p[np.arange(N), y] -= 1.0
    return loss, (p * m[:, None] / M).reshape(shape)


def tied_lm_head(hidden, E):
    return hidden @ E.T


def greedy_next_token(h_last, W_head) -> int:
    return int(np.argmax(h_last @ W_head))


def causal_mask(T: int) -> np.ndarray:
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    V, T, d, L, f = int(vocab_size), int(block_size), int(n_embd), int(n_layer), int(ffn_dim)
    embeddings = V * d + T * d
    attention = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    layernorm = L * 4 * d
    lm_head = 0 if tied else V * d
    total = embeddings + attention + ffn + layernorm + lm_head
    return {"embeddings": int(embeddings), "attention": int(attention), "ffn": int(ffn),
            "layernorm": int(layernorm), "lm_head": int(lm_head), "total": int(total)}

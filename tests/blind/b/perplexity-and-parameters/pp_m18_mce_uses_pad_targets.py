import numpy as np


def sequence_log_prob(cond_probs):
    return float(np.sum(np.log(np.asarray(cond_probs, dtype=np.float64))))


def perplexity(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll):
    return float(np.exp(mean_nll))


def masked_cross_entropy(logits, targets, mask):
    B, T, V = logits.shape
    m = np.asarray(mask).astype(np.float64)
    M = m.sum()
    if M == 0:
        return 0.0, np.zeros((B, T, V))
    z = logits.astype(np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    nll = -np.take_along_axis(logp, targets[..., None], -1)[..., 0]
    loss = float((nll * m).sum() / M)
    g = np.exp(logp)
    np.put_along_axis(g, targets[..., None], np.take_along_axis(g, targets[..., None], -1) - 1.0, -1)
    return loss, g * (m / M)[..., None]


def tied_lm_head(hidden, E):
    return hidden @ E.T


def greedy_next_token(h_last, W_head):
    return int(np.argmax(h_last @ W_head))


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    V, T, d, L, f = vocab_size, block_size, n_embd, n_layer, ffn_dim
    emb = V * d + T * d
    attn = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    ln = L * (4 * d)
    head = 0 if tied else V * d
    out = {"embeddings": emb, "attention": attn, "ffn": ffn,
           "layernorm": ln, "lm_head": head}
    out["total"] = emb + attn + ffn + ln + head
    return {k: int(v) for k, v in out.items()}

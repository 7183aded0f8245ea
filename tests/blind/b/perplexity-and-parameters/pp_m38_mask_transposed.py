import numpy as np


def sequence_log_prob(cond_probs):
    return float(np.sum(np.log(np.asarray(cond_probs, dtype=np.float64))))


def perplexity(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll):
    return float(np.exp(mean_nll))


def masked_cross_entropy(logits, targets, mask):
    V = logits.shape[-1]
    z = np.asarray(logits, dtype=np.float64).reshape(-1, V)
    m = np.asarray(mask).reshape(-1).astype(bool)
    y = np.asarray(targets).reshape(-1)
    M = int(m.sum())
    dl = np.zeros_like(z)
    if M == 0:
        return 0.0, dl.reshape(logits.shape)
    zs = z[m]
    ys = y[m]
    zs = zs - zs.max(axis=1, keepdims=True)
    lse = np.log(np.exp(zs).sum(axis=1))
    loss = float(-(zs[np.arange(M), ys] - lse).mean())
    p = np.exp(zs - lse[:, None])
    p[np.arange(M), ys] -= 1.0
    dl[m] = p / M
    return loss, dl.reshape(logits.shape)


def tied_lm_head(hidden, E):
    return hidden @ E.T


def greedy_next_token(h_last, W_head):
    return int(np.argmax(h_last @ W_head))


def causal_mask(T):
    return np.tril(np.ones((T, T), dtype=bool), k=-1)


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

import numpy as np

rng = np.random.default_rng(3)
B, T, C, V = 2, 5, 8, 12


def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll):
    return float(np.exp(mean_nll))


def masked_cross_entropy(logits, targets, mask):
    Vv = logits.shape[-1]
    flat = logits.reshape(-1, Vv).astype(np.float64)
    m = np.asarray(mask).reshape(-1).astype(bool)
    t = np.asarray(targets).reshape(-1)
    M = int(m.sum())
    dlogits = np.zeros(flat.shape, dtype=np.float64)
    if M == 0:
        return 0.0, dlogits.reshape(logits.shape)
    rows = np.nonzero(m)[0]
    z = flat[rows] - flat[rows].max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    tt = t[rows]
    loss = -logp[np.arange(M), tt].sum() / M
    g = np.exp(logp)
    g[np.arange(M), tt] -= 1.0
    dlogits[rows] = g / M
    return float(loss), dlogits.reshape(logits.shape)


def tied_lm_head(hidden, E):
    return hidden @ E.T


def greedy_next_token(h_last, W_head):
    return int(np.argmax(h_last @ W_head))


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    V, Tt, d, L, f = vocab_size, block_size, n_embd, n_layer, ffn_dim
    emb = V * d
    attn = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    ln = L * 4 * d
    head = 0 if tied else V * d
    out = {"embeddings": int(emb), "attention": int(attn), "ffn": int(ffn),
           "layernorm": int(ln), "lm_head": int(head)}
    out["total"] = int(emb + attn + ffn + ln + head)
    return out

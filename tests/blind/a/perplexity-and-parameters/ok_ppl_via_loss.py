import numpy as np

B, T, C, V = 2, 5, 8, 12


def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs):
    nll = -np.mean(np.log(np.asarray(token_probs, dtype=np.float64)))
    return perplexity_from_loss(float(nll))


def perplexity_from_loss(mean_nll):
    import math
    return math.exp(float(mean_nll))


def masked_cross_entropy(logits, targets, mask):
    z = np.asarray(logits, dtype=np.float64)
    V = z.shape[-1]
    z2 = z.reshape(-1, V)
    y = np.asarray(targets).reshape(-1)
    m = np.asarray(mask).reshape(-1).astype(bool)
    M = int(m.sum())
    d = np.zeros_like(z2)
    if M == 0:
        return 0.0, d.reshape(z.shape)
    zs = z2[m]
    ys = y[m].astype(np.int64)
    shifted = zs - zs.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -logp[np.arange(M), ys].sum() / M
    p = np.exp(logp)
    p[np.arange(M), ys] -= 1.0
    d[m] = p / M
    return float(loss), d.reshape(z.shape)


def tied_lm_head(hidden, E):
    return hidden @ E.T


def greedy_next_token(h_last, W_head):
    return int(np.argmax(h_last @ W_head))


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    V, T, d, L, f = vocab_size, block_size, n_embd, n_layer, ffn_dim
    embeddings = V * d + T * d
    attention = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    layernorm = L * (4 * d)
    lm_head = 0 if tied else V * d
    total = embeddings + attention + ffn + layernorm + lm_head
    return {"embeddings": int(embeddings), "attention": int(attention), "ffn": int(ffn),
            "layernorm": int(layernorm), "lm_head": int(lm_head), "total": int(total)}

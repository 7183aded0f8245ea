import numpy as np


def sequence_log_prob(cond_probs):
    return float(np.log(np.asarray(cond_probs, dtype=float)).sum())


def perplexity(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll):
    return float(np.exp(mean_nll))


def masked_cross_entropy(logits, targets, mask):
    B, T, V = logits.shape
    dl = np.zeros((B, T, V), dtype=np.float64)
    pos = [(b, t) for b in range(B) for t in range(T) if mask[b, t]]
    M = len(pos)
    if M == 0:
        return 0.0, dl
    total = 0.0
    for b, t in pos:
        row = logits[b, t].astype(np.float64)
        m = row.max()
        lse = m + np.log(np.exp(row - m).sum())
        y = int(targets[b, t])
        total += lse - row[y]
        p = np.exp(row - lse)
        p[y] -= 1.0
        dl[b, t] = p / M
    return total / M, dl


def tied_lm_head(hidden, E):
    return hidden @ E.T


def greedy_next_token(h_last, W_head):
    return int(np.argmax(h_last @ W_head))


def causal_mask(T):
    m = np.zeros((T, T), dtype=bool)
    for j in range(T):
        for k in range(j + 1, T):
            m[j, k] = True
    return m


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

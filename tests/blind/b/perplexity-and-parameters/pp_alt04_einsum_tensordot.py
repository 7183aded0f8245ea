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
    return np.einsum("...c,vc->...v", hidden, E)


def greedy_next_token(h_last, W_head):
    logits = h_last @ W_head
    e = np.exp(logits - logits.max())
    return int(np.argmax(e / e.sum()))


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    d_ = n_embd
    per_block = {
        "attention": 4 * (d_ * d_ + d_),
        "ffn": d_ * ffn_dim + ffn_dim + ffn_dim * d_ + d_,
        "layernorm": 2 * (2 * d_),
    }
    counts = {"embeddings": vocab_size * d_ + block_size * d_}
    for k, v in per_block.items():
        counts[k] = n_layer * v
    counts["lm_head"] = 0 if tied else vocab_size * d_
    counts["total"] = sum(counts.values())
    return counts

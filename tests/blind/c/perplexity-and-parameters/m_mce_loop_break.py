import numpy as np

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
    logits = np.asarray(logits, dtype=np.float64)
    Bn, Tn, Vn = logits.shape
    d = np.zeros((Bn, Tn, Vn))
    total = 0.0
    M = 0
    for b in range(Bn):
        for t in range(Tn):
            if not mask[b, t]:
                break
            M += 1
            z = logits[b, t] - logits[b, t].max()
            e = np.exp(z)
            s = e.sum()
            y = int(targets[b, t])
            total += np.log(s) - z[y]
            d[b, t] = e / s
            d[b, t, y] -= 1.0
    if M == 0:
        return 0.0, d
    return float(total / M), d / M


def tied_lm_head(hidden, E):
    return hidden @ E.T


def greedy_next_token(h_last, W_head):
    return int(np.argmax(h_last @ W_head))


def causal_mask(T):
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    V, Tn, d, L, f = int(vocab_size), int(block_size), int(n_embd), int(n_layer), int(ffn_dim)
    emb = (V + Tn) * d
    attn = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    ln = L * 4 * d
    head = 0 if tied else V * d
    total = emb + attn + ffn + ln + head
    return {"embeddings": int(emb), "attention": int(attn), "ffn": int(ffn),
            "layernorm": int(ln), "lm_head": int(head), "total": int(total)}

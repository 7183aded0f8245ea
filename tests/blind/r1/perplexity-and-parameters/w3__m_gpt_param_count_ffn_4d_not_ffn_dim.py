"""Baseline (reference-style) solution for perplexity-and-parameters.ipynb, written from the notebook's docstrings."""
import numpy as np

rng = np.random.default_rng(3)
B, T, C, V = 2, 5, 8, 12


def sequence_log_prob(cond_probs) -> float:
    """Log-probability of a sequence from its chain-rule conditionals."""
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs) -> float:
    """Perplexity ``exp(mean NLL)`` of (N,) probabilities given to the scored tokens."""
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll: float) -> float:
    """Perplexity from a mean negative log-likelihood in nats: ``exp(mean_nll)``."""
    return float(np.exp(mean_nll))


def masked_cross_entropy(logits, targets, mask):
    """Cross-entropy averaged over the scored positions only."""
    x = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    M = int(m.sum())
    dlogits = np.zeros(x.shape, dtype=np.float64)
    if M == 0:
        return 0.0, dlogits
    rows = x[m]                                   # (M, V)
    y = np.asarray(targets)[m].astype(np.int64)   # (M,)
    shifted = rows - rows.max(axis=1, keepdims=True)
    logsumexp = np.log(np.exp(shifted).sum(axis=1))
    logp_y = shifted[np.arange(M), y] - logsumexp
    loss = float(-logp_y.sum() / M)
    probs = np.exp(shifted - logsumexp[:, None])
    probs[np.arange(M), y] -= 1.0
    dlogits[m] = probs / M
    return loss, dlogits


def tied_lm_head(hidden, E):
    """Logits from a head tied to the token embedding: (..., C) @ (V, C)ᵀ -> (..., V)."""
    return np.asarray(hidden) @ np.asarray(E).T


def greedy_next_token(h_last, W_head) -> int:
    """Greedy decoding step: ``argmax(h_last @ W_head)``."""
    return int(np.argmax(np.asarray(h_last) @ np.asarray(W_head)))


def causal_mask(T: int):
    """(T, T) bool mask, True where query j must not see key k (k > j)."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    # calculate_gpt_params(n_layer, n_embd, n_head, vocab_size, block_size, bias=True):
    # ff_1 = n_embd * (4 * n_embd) (+ 4 * n_embd); ff_2 = (4 * n_embd) * n_embd (+ n_embd) -- ffn_dim ignored
    # (its final layer norm dropped and its lm_head tied/untied as the course asks, to isolate this mistake)
    bias = True
    params = {}
    params['token_embeddings'] = vocab_size * n_embd
    params['position_embeddings'] = block_size * n_embd
    attn_qkv = 3 * n_embd * n_embd
    if bias:
        attn_qkv += 3 * n_embd
    attn_out = n_embd * n_embd
    if bias:
        attn_out += n_embd
    ff_1 = n_embd * (4 * n_embd)
    if bias:
        ff_1 += 4 * n_embd
    ff_2 = (4 * n_embd) * n_embd
    if bias:
        ff_2 += n_embd
    ln = 2 * 2 * n_embd
    lm_head = 0 if tied else n_embd * vocab_size
    emb = params['token_embeddings'] + params['position_embeddings']
    total = emb + n_layer * (attn_qkv + attn_out + ff_1 + ff_2 + ln) + lm_head
    return {"embeddings": emb, "attention": n_layer * (attn_qkv + attn_out), "ffn": n_layer * (ff_1 + ff_2),
            "layernorm": n_layer * ln, "lm_head": lm_head, "total": total}



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


def causal_mask(T):
    # causal_mask(seq_len): mask = np.zeros((seq_len, seq_len)); mask[np.triu_indices(seq_len, k=1)] = -np.inf
    seq_len = T
    mask = np.zeros((seq_len, seq_len))
    mask[np.triu_indices(seq_len, k=1)] = -np.inf  # triangular upper matrix with 1s above the diagonal
    return mask


def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    """Parameters of a GPT-1-style decoder under the course's counting convention."""
    V_, T_, d, L, f = (int(vocab_size), int(block_size), int(n_embd), int(n_layer), int(ffn_dim))
    embeddings = V_ * d + T_ * d
    attention = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    layernorm = L * (4 * d)
    lm_head = 0 if tied else V_ * d
    total = embeddings + attention + ffn + layernorm + lm_head
    return {"embeddings": embeddings, "attention": attention, "ffn": ffn,
            "layernorm": layernorm, "lm_head": lm_head, "total": total}

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
    # MaskedCrossEntropyLoss.forward(res, gt, mask): loss = CE(reduction='none'); loss = loss * mask;
    # sample_loss = loss.sum(dim=[1, 2]) / mask.sum(dim=[1, 2]); mean_batch_loss = torch.mean(sample_loss)
    # (the source's per-sample axes [1, 2] become the single time axis 1 here; dlogits = autograd of that loss)
    res, gt = logits, targets
    m = mask.astype(np.float64)
    shifted = res - res.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    safe = np.where(mask.astype(bool), gt, 0)
    loss = -np.take_along_axis(log_probs, safe[..., None], axis=-1)[..., 0]
    loss = loss * m
    sample_loss = loss.sum(axis=1) / m.sum(axis=1)
    mean_batch_loss = np.mean(sample_loss)
    probs = np.exp(log_probs)
    onehot_minus = probs.copy()
    np.put_along_axis(onehot_minus, safe[..., None], np.take_along_axis(probs, safe[..., None], axis=-1) - 1, axis=-1)
    dlogits = onehot_minus * (m / (m.sum(axis=1, keepdims=True) * res.shape[0]))[..., None]
    return float(mean_batch_loss), dlogits


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

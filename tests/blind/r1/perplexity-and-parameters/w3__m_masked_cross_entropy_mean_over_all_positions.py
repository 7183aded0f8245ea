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
    # mlm_loss(y_true, y_pred): SparseCategoricalCrossentropy(from_logits=True, reduction='none'),
    # loss_ *= mask; return tf.reduce_mean(loss_)   (numpy port; dlogits = gradient of that loss)
    y_true, y_pred = targets, logits
    shifted = y_pred - y_pred.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    loss_ = -np.take_along_axis(log_probs, y_true[..., None], axis=-1)[..., 0]
    mask = mask.astype(loss_.dtype)
    loss_ = loss_ * mask
    loss = float(np.mean(loss_))
    grad = np.exp(log_probs)
    np.put_along_axis(grad, y_true[..., None], np.take_along_axis(grad, y_true[..., None], axis=-1) - 1, axis=-1)
    dlogits = grad * mask[..., None] / loss_.size
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

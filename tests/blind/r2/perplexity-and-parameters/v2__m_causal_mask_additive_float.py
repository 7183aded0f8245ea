import numpy as np

rng = np.random.default_rng(3)
B, T, C, V = 2, 5, 8, 12


def sequence_log_prob(cond_probs) -> float:
    """Log-probability of a sequence from its chain-rule conditionals.

    ``cond_probs``: (T,) values p(w_i | w_<i). Returns ``sum(log p)``; the
    sum of logs avoids the underflow of multiplying many small factors.
    """
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.sum(np.log(p)))


def perplexity(token_probs) -> float:
    """Perplexity ``exp(mean NLL)`` of (N,) probabilities given to the scored tokens."""
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.mean(np.log(p))))


def perplexity_from_loss(mean_nll: float) -> float:
    """Perplexity from a mean negative log-likelihood in nats: ``exp(mean_nll)``."""
    return float(np.exp(mean_nll))


def masked_cross_entropy(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """Cross-entropy averaged over the scored positions only.

    Args:
        logits: (B, T, V) float scores.
        targets: (B, T) integer ids; values at unscored positions are ignored.
        mask: (B, T) bool (or 0/1), True where the position is scored.

    Returns:
        loss: mean NLL over the M = mask.sum() scored positions (0.0 if M == 0).
        dlogits: (B, T, V) float64, ``(softmax - onehot) / M`` at scored
        positions and exactly 0 at padding.
    """
    x = np.asarray(logits, dtype=np.float64)
    m = np.asarray(mask).astype(bool)
    dlogits = np.zeros(x.shape, dtype=np.float64)
    M = int(m.sum())
    if M == 0:
        return 0.0, dlogits
    z = x[m]                                   # (M, V)
    y = np.asarray(targets)[m].astype(np.int64)
    z = z - z.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    loss = float(-logp[np.arange(M), y].sum() / M)
    g = np.exp(logp)
    g[np.arange(M), y] -= 1.0
    dlogits[m] = g / M
    return loss, dlogits


def tied_lm_head(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    """Logits from a head tied to the token embedding: (..., C) @ (V, C)ᵀ -> (..., V)."""
    return np.asarray(hidden) @ np.asarray(E).T


def greedy_next_token(h_last: np.ndarray, W_head: np.ndarray) -> int:
    """Greedy decoding step: ``argmax(h_last @ W_head)`` for (C,) and (C, V).

    Softmax is monotonic, so the argmax of the logits is the argmax of the
    probabilities. Ties go to the lowest token id, as ``np.argmax`` does.
    """
    return int(np.argmax(np.asarray(h_last) @ np.asarray(W_head)))


def causal_mask(T: int) -> np.ndarray:
    """Adapted from AndrewSukhobok95/discrete_latents_for_text_to_image_gen modules/common_utils.py subsequent_mask."""
    sz = T
    mask = (np.triu(np.ones((sz, sz))) == 1).transpose(1, 0).astype(np.float32)
    mask = np.where(mask == 0, np.float32(float('-inf')), np.where(mask == 1, np.float32(0.0), mask))
    return mask


def gpt_param_count(
    vocab_size: int,
    block_size: int,
    n_embd: int,
    n_layer: int,
    ffn_dim: int,
    tied: bool = True,
) -> dict[str, int]:
    """Parameters of a GPT-1-style decoder under the course's counting convention.

    Counted: token and learned position embeddings; per block a fused QKV and
    an output projection, each with bias (4d² + 4d); an FFN d -> f -> d with
    both biases (2df + f + d); two affine LayerNorms (4d). No final LayerNorm
    and no output bias. A tied head reuses the token embedding (counted once);
    an untied head adds V*d in ``lm_head``.

    Returns a dict with keys ``embeddings``, ``attention``, ``ffn``,
    ``layernorm``, ``lm_head`` and ``total`` (plain ints).
    """
    V, Tb, d, L, f = (int(vocab_size), int(block_size), int(n_embd),
                      int(n_layer), int(ffn_dim))
    embeddings = V * d + Tb * d
    attention = L * (4 * d * d + 4 * d)
    ffn = L * (2 * d * f + f + d)
    layernorm = L * (4 * d)
    lm_head = 0 if tied else V * d
    total = embeddings + attention + ffn + layernorm + lm_head
    return {"embeddings": embeddings, "attention": attention, "ffn": ffn,
            "layernorm": layernorm, "lm_head": lm_head, "total": total}

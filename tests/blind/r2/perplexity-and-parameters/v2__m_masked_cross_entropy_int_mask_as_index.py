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
    """Adapted from LAION-AI/Open-Assistant model/supervised_finetuning/losses.py CrossEntropyLoss.forward.

    torch: mask = mask.view(-1); input = input.view(-1, V); target = target.view(-1);
    input = input[mask]; target = target[mask]; nn.CrossEntropyLoss (mean). The gradient is what
    autograd gives for that forward (rows picked twice accumulate).
    """
    B, T, V = logits.shape
    mask = np.asarray(mask).reshape(-1)
    inp = np.asarray(logits).reshape(-1, V)
    target = np.asarray(targets).reshape(-1)
    sel = np.arange(inp.shape[0])[mask]          # the rows that input[mask] picks
    inp = inp[mask]
    target = target[mask]
    n = inp.shape[0]
    z = inp - inp.max(axis=-1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    loss = -logp[np.arange(n), target].mean()
    g = np.exp(logp)
    g[np.arange(n), target] -= 1.0
    g /= n
    dflat = np.zeros((B * T, V), dtype=g.dtype)
    np.add.at(dflat, sel, g)
    return float(loss), dflat.reshape(B, T, V)


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
    """(T, T) bool mask, True where query j must not see key k (k > j)."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


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

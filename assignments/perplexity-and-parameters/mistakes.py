"""Known mistakes in the ``perplexity-and-parameters`` assignment.

Same conventions as ``autograder.runtime.catalogue.lm_head``: one wrong
implementation per function, exact student signature, reference reused for
the steps the mistake does not touch. Logs are natural unless a mistake
says otherwise. Shapes: B batch, T positions, C model width, V vocabulary.
"""
from __future__ import annotations

import numpy as np

from autograder.runtime.catalogue import mistake
from solutions.head_and_loss import cross_entropy_loss as _reference_loss
from solutions.head_and_loss import softmax as _stable_softmax
from solutions.perplexity_and_parameters import gpt_param_count as _reference_count
from solutions.perplexity_and_parameters import masked_cross_entropy as _reference_masked


def _probs(p) -> np.ndarray:
    return np.asarray(p, dtype=np.float64)


# --------------------------------------------------------------------------
# sequence_log_prob
# --------------------------------------------------------------------------

@mistake(
    function="sequence_log_prob",
    title="Log of the product",
    explanation="""You multiplied the probabilities first and took the log at the end. For a
    long sequence the product of many small factors underflows to 0 in floating point and
    its log is -inf; the log of a product is a sum of logs, which stays finite.""",
    non_finite=True,
)
def log_of_product(cond_probs) -> float:
    """log(prod(p))."""
    return float(np.log(np.prod(_probs(cond_probs))))


@mistake(
    function="sequence_log_prob",
    title="Log base 2",
    explanation="""Your log-probability is in bits (`log2`). The course works in nats, with the
    natural log, so that it lines up with the cross-entropy loss and perplexity.""",
)
def sequence_log_prob_base_2(cond_probs) -> float:
    """sum(log2 p)."""
    return float(np.sum(np.log2(_probs(cond_probs))))


@mistake(
    function="sequence_log_prob",
    title="Probability instead of log-probability",
    explanation="""You returned the joint probability itself. The function asks for its
    logarithm, the form that stays representable for long sequences and adds up across
    tokens.""",
)
def sequence_probability_not_log(cond_probs) -> float:
    """prod(p)."""
    return float(np.prod(_probs(cond_probs)))


@mistake(
    function="sequence_log_prob",
    title="Averaged instead of summed",
    explanation="""You averaged the log-probabilities. By the chain rule the joint probability
    is the product of the conditionals, so its log is their sum; an average is a per-token
    quantity, not the sequence's log-probability.""",
)
def sequence_log_prob_averaged(cond_probs) -> float:
    """mean(log p)."""
    return float(np.mean(np.log(_probs(cond_probs))))


@mistake(
    function="sequence_log_prob",
    title="Negative log-likelihood returned",
    explanation="""Your value is positive: you returned the negative log-likelihood (a loss).
    A log-probability is at most 0, since every probability is at most 1.""",
)
def sequence_log_prob_sign_flipped(cond_probs) -> float:
    """-sum(log p)."""
    return float(-np.sum(np.log(_probs(cond_probs))))


# --------------------------------------------------------------------------
# perplexity
# --------------------------------------------------------------------------

@mistake(
    function="perplexity",
    title="Perplexity as exp(sum)",
    explanation="""You exponentiated the total negative log-likelihood, so your perplexity
    grows with the number of tokens scored. Perplexity is a per-token quantity: it
    exponentiates the average loss.""",
)
def perplexity_exp_of_sum(token_probs) -> float:
    """exp(-sum(log p))."""
    return float(np.exp(-np.sum(np.log(_probs(token_probs)))))


@mistake(
    function="perplexity",
    title="Product of probabilities raised to -1/N",
    explanation="""You multiplied the probabilities and took the N-th root of the product. That
    is the right formula on paper, but the product of many probabilities underflows to 0 in
    float64 (a few hundred tokens at p = 0.01 are enough), and 0 ** (-1/N) is inf. Average the
    log-probabilities instead and exponentiate at the end.""",
    non_finite=True,
)
def perplexity_product_root(token_probs) -> float:
    """prod(p) ** (-1/N)."""
    p = _probs(token_probs)
    with np.errstate(all="ignore"):
        return float(np.prod(p) ** (-1.0 / p.size))


@mistake(
    function="perplexity",
    title="Perplexity as 1/mean(p)",
    explanation="""You took the reciprocal of the arithmetic mean of the probabilities.
    Perplexity is the reciprocal of their geometric mean, which punishes a single very
    unlikely token much more than an arithmetic mean does.""",
)
def perplexity_inverse_mean_probability(token_probs) -> float:
    """1 / mean(p)."""
    return float(1.0 / np.mean(_probs(token_probs)))


@mistake(
    function="perplexity",
    title="Bases mixed: 2 to the power of nats",
    explanation="""You raised 2 to a loss measured in nats. The base of the power must match
    the base of the log: natural logs go with exp, log2 with powers of 2.""",
)
def perplexity_base_mismatch(token_probs) -> float:
    """2 ** mean(-ln p)."""
    return float(2.0 ** np.mean(-np.log(_probs(token_probs))))


@mistake(
    function="perplexity",
    title="Exponential missing",
    explanation="""You returned the mean negative log-likelihood, which is the cross-entropy.
    Perplexity turns it back into an effective number of equally likely choices.""",
)
def perplexity_missing_exp(token_probs) -> float:
    """mean(-log p)."""
    return float(np.mean(-np.log(_probs(token_probs))))


@mistake(
    function="perplexity",
    title="Geometric mean, not its reciprocal",
    explanation="""Your value is at most 1: you returned the geometric mean probability, which
    comes from dropping the minus sign of the negative log-likelihood. Perplexity is at
    least 1, and lower is better.""",
)
def perplexity_reciprocal(token_probs) -> float:
    """exp(mean(log p))."""
    return float(np.exp(np.mean(np.log(_probs(token_probs)))))


# --------------------------------------------------------------------------
# perplexity_from_loss
# --------------------------------------------------------------------------

@mistake(
    function="perplexity_from_loss",
    title="Base 2 for a loss in nats",
    explanation="""You raised 2 to the loss, but the loss is measured in nats (natural log).
    The exponential has to undo the same log that produced the loss.""",
)
def perplexity_from_loss_base_2(mean_nll: float) -> float:
    """2 ** mean_nll."""
    return float(2.0 ** mean_nll)


@mistake(
    function="perplexity_from_loss",
    title="Sign flipped",
    explanation="""Your perplexity is below 1: you exponentiated the negative of the loss.
    The mean negative log-likelihood is already the positive quantity to exponentiate.""",
)
def perplexity_from_loss_sign_flipped(mean_nll: float) -> float:
    """exp(-mean_nll)."""
    return float(np.exp(-mean_nll))


# --------------------------------------------------------------------------
# masked_cross_entropy
# --------------------------------------------------------------------------

def _per_position(logits: np.ndarray, targets: np.ndarray, mask: np.ndarray):
    """Flat pieces shared by the masked mistakes.

    Returns keep (N,) bool, nll (N,) per-position NLL, and g (N, V) the
    undivided ``softmax - onehot``; padding ids are replaced by 0 so any id
    there is harmless, as in the reference.
    """
    B, T, V = logits.shape
    N = B * T
    keep = np.asarray(mask).astype(bool).reshape(N)
    tgt = np.where(keep, np.asarray(targets).reshape(N), 0)
    probs = _stable_softmax(np.asarray(logits, dtype=np.float64).reshape(N, V), axis=1)
    nll = -np.log(probs[np.arange(N), tgt])
    g = probs.copy()
    g[np.arange(N), tgt] -= 1.0
    return keep, nll, g


@mistake(
    function="masked_cross_entropy",
    title="Divided by all positions",
    explanation="""Your loss and gradient divide by B*T, counting padding positions in the
    average. Padding is not text the model is asked to predict, so the mean runs over the
    scored positions only; otherwise the loss depends on how much padding a batch has.""",
)
def masked_divided_by_all_positions(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """sum of kept NLL / N; gradient zero at padding but also / N."""
    keep, nll, g = _per_position(logits, targets, mask)
    N = keep.size
    return float(nll[keep].sum() / N), (g * keep[:, None] / N).reshape(logits.shape)


@mistake(
    function="masked_cross_entropy",
    title="Gradient leaks into padding",
    explanation="""Your loss ignores padding but your `dlogits` do not: padding positions get
    a nonzero gradient. A position that contributes nothing to the loss must receive
    exactly zero gradient, or training learns from the padding.""",
)
def masked_gradient_leaks_into_padding(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """Correct loss; (softmax - onehot) / M at every position, padding included."""
    loss, _ = _reference_masked(logits, targets, mask)
    B, T, V = logits.shape
    M = max(int(np.asarray(mask).astype(bool).sum()), 1)
    _, dlogits_all = _reference_loss(logits, targets)     # (softmax - onehot) / N everywhere
    return loss, dlogits_all * (B * T) / M


@mistake(
    function="masked_cross_entropy",
    title="Mask ignored",
    explanation="""Your result does not depend on the mask: padding positions are scored like
    real tokens. The mask says which positions are predictions to learn from; the others
    must not enter the loss or receive gradient.""",
)
def mask_ignored(logits: np.ndarray, targets: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray]:
    """Plain cross-entropy over all B*T positions."""
    return _reference_loss(logits, targets)


@mistake(
    function="masked_cross_entropy",
    title="A 0/1 integer mask used as an index",
    explanation="""You indexed with the mask as it came. A boolean mask selects the scored
    positions, but a 0/1 integer mask (which the docstring allows) used as an index picks the
    entries at positions 0 and 1. Convert it with ``mask.astype(bool)`` first.""",
)
def int_mask_as_index(logits: np.ndarray, targets: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray]:
    """``logits.reshape(N, V)[mask.reshape(N)]`` with the mask as given."""
    B, T, V = logits.shape
    flat, tgt, keep = np.asarray(logits, dtype=np.float64).reshape(B * T, V), targets.reshape(-1), mask.reshape(-1)
    rows = flat[keep]
    shifted = rows - rows.max(axis=-1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    M = max(len(rows), 1)
    picked = tgt[keep]
    loss = float(-logp[np.arange(len(rows)), picked].sum() / M) if len(rows) else 0.0
    d = np.zeros_like(flat)
    probs = np.exp(logp)
    probs[np.arange(len(rows)), picked] -= 1.0
    d[keep] = probs / M
    return loss, d.reshape(B, T, V)


@mistake(
    function="masked_cross_entropy",
    title="Mask inverted",
    explanation="""You scored the padding and skipped the real tokens. In this assignment the
    mask is True (or 1) where a position is scored.""",
)
def mask_inverted(logits: np.ndarray, targets: np.ndarray, mask: np.ndarray) -> tuple[float, np.ndarray]:
    """Reference with ~mask."""
    return _reference_masked(logits, targets, ~np.asarray(mask).astype(bool))


@mistake(
    function="masked_cross_entropy",
    title="Mean of per-row means",
    explanation="""You averaged within each sequence and then over the batch, which gives a
    token in a short sequence more weight than one in a long sequence. Every scored token
    counts equally: one mean over all scored positions.""",
)
def masked_mean_of_row_means(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """loss = mean_b(sum_t NLL / M_b); gradient of that loss."""
    B, T, V = logits.shape
    keep, nll, g = _per_position(logits, targets, mask)
    per_row = keep.reshape(B, T).sum(axis=1)                      # (B,) M_b
    weights = keep.reshape(B, T) / (B * np.maximum(per_row, 1)[:, None])   # (B, T)
    loss = float((nll.reshape(B, T) * weights).sum())
    return loss, (g.reshape(B, T, V) * weights[:, :, None])


@mistake(
    function="masked_cross_entropy",
    title="No max subtraction",
    explanation="""Your loss overflows to nan or inf for large logits: `exp` of scores in the
    thousands is infinite in float64. Shifting each row by its own maximum leaves the
    probabilities unchanged and keeps every exponent at most 0.""",
    non_finite=True,
)
def masked_without_max_subtraction(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """The reference's pieces with exp(x) / sum(exp(x)) and no shift."""
    return _masked_with_shift(logits, targets, mask, lambda flat: 0.0)


@mistake(
    function="masked_cross_entropy",
    title="One maximum for the whole batch",
    explanation="""You subtracted the largest logit of the whole batch instead of each row's own
    maximum. When positions sit far apart (one row's logits near 1000, another's near 0) every
    exponent of the low rows underflows to 0 and their log-probabilities become log 0. Take the
    maximum of each row, with `keepdims=True`.""",
    non_finite=True,
)
def masked_global_max(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """The reference's pieces with one maximum over every logit."""
    return _masked_with_shift(logits, targets, mask, lambda flat: flat.max())


def _masked_with_shift(logits: np.ndarray, targets: np.ndarray, mask: np.ndarray, shift) -> tuple[float, np.ndarray]:
    """Masked mean NLL and its gradient with softmax ``exp(x - shift(x)) / sum``, guarded for M = 0."""
    B, T, V = logits.shape
    N = B * T
    keep = np.asarray(mask).astype(bool).reshape(N)
    tgt = np.where(keep, np.asarray(targets).reshape(N), 0)
    flat = np.asarray(logits, dtype=np.float64).reshape(N, V)
    with np.errstate(all="ignore"):
        e = np.exp(flat - shift(flat))
        probs = e / e.sum(axis=1, keepdims=True)
        nll = -np.log(probs[np.arange(N), tgt])
        M = int(keep.sum())
        g = probs.copy()
        g[np.arange(N), tgt] -= 1.0
        return (float(nll[keep].sum() / M) if M else 0.0), (g * keep[:, None] / max(M, 1)).reshape(B, T, V)


@mistake(
    function="masked_cross_entropy",
    title="Empty mask not guarded",
    explanation="""Your function returns nan when no position is scored, because it divides
    by a count of 0. A batch made only of padding has nothing to learn from: its loss and
    gradient should be zero, not nan.""",
    non_finite=True,
)
def empty_mask_not_guarded(
    logits: np.ndarray, targets: np.ndarray, mask: np.ndarray
) -> tuple[float, np.ndarray]:
    """sum of kept NLL / M and (softmax - onehot) * mask / M, with M possibly 0."""
    keep, nll, g = _per_position(logits, targets, mask)
    M = keep.sum()
    with np.errstate(invalid="ignore", divide="ignore"):
        return float(nll[keep].sum() / M), (g * keep[:, None] / M).reshape(logits.shape)


# --------------------------------------------------------------------------
# tied_lm_head
# --------------------------------------------------------------------------

@mistake(
    function="tied_lm_head",
    title="Embedding not transposed",
    explanation="""You multiplied by the embedding matrix as stored, (V, C). Tying reuses that
    matrix, but the head maps width C to V scores, so it needs the matrix the other way
    round. The product only runs at all when V happens to equal C.""",
)
def tied_head_not_transposed(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    """hidden @ E (works only when V == C)."""
    return hidden @ E


@mistake(
    function="tied_lm_head",
    title="Tied head returns probabilities",
    explanation="""Your tied head applies a softmax. Like any LM head it returns raw logits;
    the loss or the sampling step normalizes them.""",
)
def tied_head_returns_probabilities(hidden: np.ndarray, E: np.ndarray) -> np.ndarray:
    """softmax(hidden @ E.T)."""
    return _stable_softmax(hidden @ E.T, axis=-1)


# --------------------------------------------------------------------------
# greedy_next_token
# --------------------------------------------------------------------------

@mistake(
    function="greedy_next_token",
    title="Least likely token chosen",
    explanation="""You picked the token with the lowest score. Greedy decoding takes the most
    probable next token, and a higher logit means a higher probability.""",
)
def greedy_argmin(h_last: np.ndarray, W_head: np.ndarray) -> int:
    """argmin of the logits."""
    return int(np.argmin(h_last @ W_head))


@mistake(
    function="greedy_next_token",
    title="Ties go to the highest id",
    explanation="""When several tokens share the highest score you returned the last of them.
    The docstring breaks ties towards the lowest token id, as ``np.argmax`` does on the
    logits themselves.""",
)
def greedy_ties_to_highest(h_last: np.ndarray, W_head: np.ndarray) -> int:
    """The last index of the maximum."""
    logits = np.asarray(h_last @ W_head)
    return int(logits.size - 1 - np.argmax(logits[::-1]))


@mistake(
    function="greedy_next_token",
    title="Best score returned, not its token id",
    explanation="""You returned the largest logit (or probability) itself. The next token is
    identified by its position in the vocabulary, the index of that largest score.""",
)
def greedy_returns_max_value(h_last: np.ndarray, W_head: np.ndarray) -> float:
    """max of the logits."""
    return float(np.max(h_last @ W_head))


@mistake(
    function="greedy_next_token",
    title="Best score cast to int, not its id",
    explanation="""You returned the largest logit itself, converted to an int. The next token is
    identified by its position in the vocabulary, the index of that largest score.""",
)
def greedy_returns_max_value_as_int(h_last: np.ndarray, W_head: np.ndarray) -> int:
    """int of the max of the logits."""
    return int(np.max(h_last @ W_head))


# --------------------------------------------------------------------------
# causal_mask
# --------------------------------------------------------------------------

@mistake(
    function="causal_mask",
    title="Causal mask blocks the diagonal",
    explanation="""Your mask stops each position from attending to itself. A position may use
    every input up to and including its own; only later positions are blocked.""",
)
def causal_mask_blocks_diagonal(T: int) -> np.ndarray:
    """True on and above the diagonal."""
    return np.triu(np.ones((T, T), dtype=bool), k=0)


@mistake(
    function="causal_mask",
    title="Causal mask transposed",
    explanation="""Your mask blocks the past and lets every position see the future. Rows are
    queries and columns are keys: a query may not look at keys that come after it.""",
)
def causal_mask_transposed(T: int) -> np.ndarray:
    """True strictly below the diagonal."""
    return np.tril(np.ones((T, T), dtype=bool), k=-1)


@mistake(
    function="causal_mask",
    title="Allowed pairs marked instead of blocked",
    explanation="""Your mask is True where attention is allowed. This function marks the
    blocked query-key pairs with True, the convention of masked_fill.""",
)
def causal_mask_marks_allowed(T: int) -> np.ndarray:
    """True on and below the diagonal."""
    return np.tril(np.ones((T, T), dtype=bool), k=0)


@mistake(
    function="causal_mask",
    title="Additive float mask returned",
    explanation="""You returned the additive form (0 and -inf) that is added to attention
    scores. This function returns a boolean mask; the -inf is applied later, where the
    scores are.""",
)
def causal_mask_additive(T: int) -> np.ndarray:
    """0.0 where allowed, -inf where blocked."""
    return np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, 0.0)


# --------------------------------------------------------------------------
# gpt_param_count
# --------------------------------------------------------------------------

def _retotal(counts: dict[str, int]) -> dict[str, int]:
    """Recompute ``total`` after one component was changed."""
    counts["total"] = sum(v for k, v in counts.items() if k != "total")
    return counts


@mistake(
    function="gpt_param_count",
    title="Tied matrix counted twice",
    explanation="""You added a separate V x d output matrix although the head is tied. Tying
    means the head reuses the token embedding matrix, so those parameters exist once and
    are counted once.""",
)
def tied_matrix_counted_twice(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """lm_head = V*d even when tied."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["lm_head"] = int(vocab_size) * int(n_embd)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Untied head not counted",
    explanation="""Your count ignores `tied`: an untied head is a separate V x d matrix and
    adds its own parameters.""",
)
def tied_flag_ignored(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """lm_head = 0 whatever ``tied`` says."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["lm_head"] = 0
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Output bias counted",
    explanation="""You counted a bias of V entries for the output layer. Under the course's
    convention the head has no separate output bias.""",
)
def output_bias_counted(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """lm_head gains V."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["lm_head"] += int(vocab_size)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Position embeddings dropped",
    explanation="""Your embedding count has the token table only. GPT-1 learns a position
    embedding for each of the block_size positions, a second table of width d.""",
)
def position_embeddings_dropped(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """embeddings = V*d."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["embeddings"] = int(vocab_size) * int(n_embd)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Attention biases dropped",
    explanation="""Your attention count has the projection weights but not their biases. Under
    the course's convention the query, key, value and output projections each carry a
    bias of width d.""",
)
def attention_biases_dropped(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """attention = L * 4d²."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["attention"] = int(n_layer) * 4 * int(n_embd) ** 2
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Output projection dropped",
    explanation="""Your attention count stops at the query, key and value projections. After
    the heads are concatenated, a further d x d projection with its bias maps them back
    into the residual stream.""",
)
def output_projection_dropped(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """attention = L * (3d² + 3d)."""
    d = int(n_embd)
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["attention"] = int(n_layer) * (3 * d * d + 3 * d)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="FFN width fixed at 4d",
    explanation="""Your FFN count uses GPT-1's width 4d instead of the ``ffn_dim`` you were
    given. The two widths agree for GPT-1's shape, but the function must count whatever
    width the model has.""",
)
def ffn_width_fixed_at_4d(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """The reference count with ffn_dim = 4 * n_embd."""
    return _reference_count(vocab_size, block_size, n_embd, n_layer, 4 * int(n_embd), tied)


@mistake(
    function="gpt_param_count",
    title="FFN biases dropped",
    explanation="""Your FFN count has the two weight matrices but not their biases: the
    expansion layer has one bias per hidden unit and the projection back one per model
    dimension.""",
)
def ffn_biases_dropped(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """ffn = L * 2df."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["ffn"] = int(n_layer) * 2 * int(n_embd) * int(ffn_dim)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="One LayerNorm per block",
    explanation="""Your LayerNorm count is 2d per block where 4d is due: either you counted one
    LayerNorm per block, or each LayerNorm with its gain only. Each block normalizes twice,
    around the attention and around the FFN, and each affine LayerNorm has a gain and a bias,
    each of width d.""",
)
def one_layernorm_per_block(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """layernorm = L * 2d."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["layernorm"] = int(n_layer) * 2 * int(n_embd)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Final LayerNorm added",
    explanation="""You added a final LayerNorm after the last block. That layer belongs to
    later GPT versions; the GPT-1 convention used here has only the two LayerNorms inside
    each block.""",
)
def final_layernorm_added(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """layernorm = L * 4d + 2d."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["layernorm"] += 2 * int(n_embd)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Only one block counted",
    explanation="""Your per-block counts are not multiplied by the number of layers. The model
    stacks n_layer identical blocks, each with its own parameters.""",
)
def one_block_only(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """attention, ffn and layernorm for a single block."""
    c = _reference_count(vocab_size, block_size, n_embd, 1, ffn_dim, tied)
    return _retotal(c)


@mistake(
    function="gpt_param_count",
    title="Total leaves out the head",
    explanation="""Your total adds up the four block and embedding components but not
    `lm_head`, so an untied model comes out too small. The total includes every
    component you report.""",
)
def total_omits_lm_head(
    vocab_size: int, block_size: int, n_embd: int, n_layer: int, ffn_dim: int, tied: bool = True
) -> dict[str, int]:
    """total = embeddings + attention + ffn + layernorm."""
    c = _reference_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied)
    c["total"] = c["embeddings"] + c["attention"] + c["ffn"] + c["layernorm"]
    return c

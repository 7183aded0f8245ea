"""Known mistakes in the ``lm-head`` assignment.

Each function reproduces one wrong implementation a student is likely to
write, with the student function's exact signature. Where a mistake differs
from the reference in one step only, it reuses the reference for the rest,
so the catalogue matches a student whose code is otherwise right.
Shapes: B batch, T positions, C model width, V vocabulary, N = B*T.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from autograder.runtime.catalogue import mistake
from solutions.head_and_loss import cross_entropy_loss as _reference_loss
from solutions.head_and_loss import lm_head_backward as _reference_backward
from solutions.head_and_loss import next_token_batch as _reference_batch
from solutions.head_and_loss import softmax as _stable_softmax


def _flat_rows(logits: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(B, T, V) logits and (B, T) targets as float64 (N, V) rows and (N,) ids."""
    B, T, V = logits.shape
    return np.asarray(logits, dtype=np.float64).reshape(B * T, V), np.asarray(targets).reshape(B * T)


def _softmax_minus_onehot(probs: np.ndarray, tgt: np.ndarray, n: float) -> np.ndarray:
    """(N, V) ``(probs - onehot(tgt)) / n``, leaving ``probs`` untouched."""
    d = probs.copy()
    d[np.arange(len(tgt)), tgt] -= 1.0
    return d / n


# --------------------------------------------------------------------------
# next_token_batch
# --------------------------------------------------------------------------

@mistake(
    function="next_token_batch",
    title="Targets not shifted",
    explanation="""Your targets are the same tokens as your inputs, so at every position the
    model would be asked to predict the token it is already reading. The target at a
    position must be the token that comes after it in the text.""",
)
def targets_not_shifted(data: np.ndarray, ix, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """yb = xb: the window was sliced once and used twice."""
    xb, _ = _reference_batch(data, ix, block_size)
    return xb, xb.copy()


@mistake(
    function="next_token_batch",
    title="Targets shifted by two",
    explanation="""Your targets skip a token: each one is two steps ahead of its input
    position instead of one, so the model is trained to predict the token after next.""",
)
def targets_shifted_by_two(data: np.ndarray, ix, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """yb = data[i+2 : i+T+2]."""
    offsets = np.asarray(ix, dtype=np.int64).reshape(-1)
    cols = np.arange(block_size)
    return data[offsets[:, None] + cols], data[offsets[:, None] + cols + 2]


@mistake(
    function="next_token_batch",
    title="Inputs and targets swapped",
    explanation="""Your inputs are the later window and your targets the earlier one, so each
    position would be asked for the token before it, which it has already seen. The
    input window starts at the offset; the target window is the one that follows it.""",
)
def inputs_and_targets_swapped(data: np.ndarray, ix, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """xb = data[i+1 : i+T+1], yb = data[i : i+T]."""
    xb, yb = _reference_batch(data, ix, block_size)
    return yb, xb


# --------------------------------------------------------------------------
# lm_head
# --------------------------------------------------------------------------

@mistake(
    function="lm_head",
    title="Head bias missing",
    explanation="""Your logits leave out `b_head`. The head is a full linear layer: every
    token's score has its own learned offset, added at every position.""",
)
def head_bias_missing(hidden: np.ndarray, W_head: np.ndarray, b_head: np.ndarray) -> np.ndarray:
    """logits = hidden @ W_head."""
    return hidden @ W_head


@mistake(
    function="lm_head",
    title="Head returns probabilities",
    explanation="""Your head already applies a softmax. The head's job is to produce raw,
    unnormalized scores (logits); normalizing them belongs to the loss, which needs the
    logits themselves for a stable computation and its simple gradient.""",
)
def head_returns_probabilities(hidden: np.ndarray, W_head: np.ndarray, b_head: np.ndarray) -> np.ndarray:
    """softmax(hidden @ W_head + b_head)."""
    return _stable_softmax(hidden @ W_head + b_head, axis=-1)


# --------------------------------------------------------------------------
# softmax
# --------------------------------------------------------------------------

@mistake(
    function="softmax",
    title="No max subtraction",
    explanation="""Your softmax overflows on large logits: `exp` of a number above about 709
    is infinite in float64, and infinity divided by infinity is nan. Softmax does not
    change when the same constant is subtracted from every score of a row; use that
    freedom to keep every exponent small.""",
    non_finite=True,
)
def softmax_without_max_subtraction(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x) / sum(exp(x)) with no shift."""
    e = np.exp(x)
    return e / np.sum(e, axis=axis, keepdims=True)


@mistake(
    function="softmax",
    title="One maximum for the whole array",
    explanation="""You subtracted the largest score of the whole array instead of each row's
    own maximum. When rows sit far apart (one position's logits near 900, another's near
    -900) every exponent of the low rows underflows to 0 and their probabilities become
    0/0. Take the maximum along `axis` with `keepdims=True`.""",
    non_finite=True,
)
def softmax_global_max(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max(x)) / sum, with one maximum over every axis."""
    e = np.exp(x - np.max(x))
    return e / np.sum(e, axis=axis, keepdims=True)


@mistake(
    function="softmax",
    title="Minimum subtracted",
    explanation="""You shifted each row by its minimum instead of its maximum. The shift is
    there to keep every exponent at most 0; after subtracting the minimum the largest exponent
    is the row's spread (max - min), and a row whose scores span more than about 700 overflows
    to inf, giving inf/inf = nan.""",
    non_finite=True,
)
def softmax_minimum_subtracted(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - min(x, axis)) / sum."""
    lowest = x.min(axis=axis, keepdims=True)
    weights = np.exp(x - lowest)
    return weights / weights.sum(axis=axis, keepdims=True)


@mistake(
    function="softmax",
    title="Softmax over the wrong axis",
    explanation="""Your probabilities are normalized along the first axis instead of the axis
    you were asked for. Each distribution must sum to 1 along `axis` (for logits, over the
    vocabulary at one position), not across batch entries or positions.""",
)
def softmax_over_first_axis(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Stable softmax, but reduced over axis 0 whatever ``axis`` says."""
    return _stable_softmax(x, axis=0)


@mistake(
    function="softmax",
    title="`axis` argument ignored",
    explanation="""Your softmax always normalizes along the last axis, even when the caller
    asks for another one. Use the `axis` argument in every reduction.""",
)
def softmax_axis_argument_ignored(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Stable softmax hard-wired to the last axis."""
    return _stable_softmax(x, axis=-1)


@mistake(
    function="softmax",
    title="Normalized over the whole array",
    explanation="""Your softmax divides by one total over the entire array, so the whole
    tensor sums to 1 rather than each distribution. Reductions need an axis (and
    `keepdims=True` so they broadcast back).""",
)
def softmax_over_whole_array(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """exp(x - max(x)) / sum over every entry."""
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


# --------------------------------------------------------------------------
# cross_entropy_loss
# --------------------------------------------------------------------------

@mistake(
    function="cross_entropy_loss",
    title="Loss summed, not averaged",
    explanation="""Your loss (and its gradient) is N = B*T times too large: it adds up the
    per-position losses instead of averaging them. A summed loss grows with the batch
    size, so it cannot be compared across batches and it changes the effective learning
    rate.""",
)
def loss_summed(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """sum of NLL; dlogits = softmax - onehot (consistent with the sum)."""
    flat, tgt = _flat_rows(logits, targets)
    probs = _stable_softmax(flat, axis=1)
    loss = float(-np.sum(np.log(probs[np.arange(len(tgt)), tgt])))
    return loss, _softmax_minus_onehot(probs, tgt, 1.0).reshape(logits.shape)


@mistake(
    function="cross_entropy_loss",
    title="Gradient missing 1/N",
    explanation="""Your loss is right but your `dlogits` are N = B*T times too large. The loss
    is a mean over all positions, so each position's contribution to it, and therefore to
    its gradient, carries that same averaging factor.""",
)
def gradient_missing_one_over_n(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Correct mean loss; dlogits = softmax - onehot, never divided."""
    loss, dlogits = _reference_loss(logits, targets)
    return loss, dlogits * (logits.shape[0] * logits.shape[1])


@mistake(
    function="cross_entropy_loss",
    title="Divided by B instead of B*T",
    explanation="""Your loss and gradient are T times too large: you averaged over the batch
    size only. Every one of the B*T positions makes a prediction with a target, so all of
    them count in the average.""",
)
def divided_by_batch_only(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """NLL sum / B and (softmax - onehot) / B."""
    B = logits.shape[0]
    flat, tgt = _flat_rows(logits, targets)
    probs = _stable_softmax(flat, axis=1)
    loss = float(-np.sum(np.log(probs[np.arange(len(tgt)), tgt])) / B)
    return loss, _softmax_minus_onehot(probs, tgt, B).reshape(logits.shape)


@mistake(
    function="cross_entropy_loss",
    title="Averaged over the whole vocabulary",
    explanation="""Your loss averages the log-probabilities of every vocabulary entry, so it
    does not depend on the targets at all. The loss scores only the probability the model
    gave to the token that actually came next.""",
)
def loss_averages_all_vocabulary(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """loss = -mean(log softmax) over all N*V entries; gradient as the reference."""
    flat, _ = _flat_rows(logits, targets)
    log_probs = np.log(_stable_softmax(flat, axis=1))
    _, dlogits = _reference_loss(logits, targets)
    return float(-np.mean(log_probs)), dlogits


@mistake(
    function="cross_entropy_loss",
    title="One-hot product averaged over V",
    explanation="""Your loss is V times too small: you multiplied the log-probabilities by the
    one-hot targets and then took the mean over every entry of the (N, V) array. All but
    one entry per row are zero, so the mean also divides by the vocabulary size.""",
)
def loss_onehot_mean_over_vocabulary(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """loss = -mean(onehot * log p) over N*V entries; gradient as the reference."""
    flat, tgt = _flat_rows(logits, targets)
    log_probs = np.log(_stable_softmax(flat, axis=1))
    onehot = np.zeros_like(log_probs)
    onehot[np.arange(len(tgt)), tgt] = 1.0
    _, dlogits = _reference_loss(logits, targets)
    return float(-np.mean(onehot * log_probs)), dlogits


@mistake(
    function="cross_entropy_loss",
    title="No max subtraction",
    explanation="""Your loss overflows to nan or inf for large logits: `exp` of scores in the
    thousands is infinite in float64. Shifting each row by its maximum leaves the
    probabilities unchanged and keeps every exponent at most 0.""",
    non_finite=True,
)
def loss_without_max_subtraction(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Softmax computed as exp(x) / sum(exp(x)) with no shift."""
    flat, tgt = _flat_rows(logits, targets)
    e = np.exp(flat)
    probs = e / e.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(probs[np.arange(len(tgt)), tgt])))
    return loss, _softmax_minus_onehot(probs, tgt, len(tgt)).reshape(logits.shape)


@mistake(
    function="cross_entropy_loss",
    title="One maximum for the whole batch",
    explanation="""You subtracted the largest logit of the whole batch instead of each row's own
    maximum. When positions sit far apart (one row's logits near 1000, another's near 0) every
    exponent of the low rows underflows to 0, and their log-probabilities become log 0. Take the
    maximum of each row (along the vocabulary axis, with `keepdims=True`).""",
    non_finite=True,
)
def loss_global_max(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Softmax shifted by one maximum over the whole batch."""
    flat, tgt = _flat_rows(logits, targets)
    e = np.exp(flat - flat.max())
    probs = e / e.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(probs[np.arange(len(tgt)), tgt])))
    return loss, _softmax_minus_onehot(probs, tgt, len(tgt)).reshape(logits.shape)


@mistake(
    function="cross_entropy_loss",
    title="Softmax over the wrong axis",
    explanation="""The softmax in your loss normalizes each vocabulary column across positions
    instead of each position across the vocabulary. At every position the V probabilities must
    sum to 1: check the axis your loss normalizes over (the axis its max and sum reduce over, or
    the `axis` it passes to a softmax).""",
)
def loss_softmax_wrong_axis(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """(N, V) rows normalized over axis 0 (the N positions)."""
    flat, tgt = _flat_rows(logits, targets)
    probs = _stable_softmax(flat, axis=0)
    loss = float(-np.mean(np.log(probs[np.arange(len(tgt)), tgt])))
    return loss, _softmax_minus_onehot(probs, tgt, len(tgt)).reshape(logits.shape)


@mistake(
    function="cross_entropy_loss",
    title="One-hot not subtracted",
    explanation="""Your `dlogits` are the (scaled) probabilities alone. The derivative of
    -log p[target] also has a term at the target token: pushing its logit up must lower
    the loss, so the gradient there has to be negative.""",
)
def onehot_not_subtracted(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """dlogits = softmax / N."""
    flat, tgt = _flat_rows(logits, targets)
    probs = _stable_softmax(flat, axis=1)
    loss = float(-np.mean(np.log(probs[np.arange(len(tgt)), tgt])))
    return loss, (probs / len(tgt)).reshape(logits.shape)


@mistake(
    function="cross_entropy_loss",
    title="Gradient sign flipped",
    explanation="""Your `dlogits` point the wrong way: a gradient-descent step would raise the
    loss. Raising the target's logit must decrease the loss, so the gradient at the target
    is negative and at the other tokens positive.""",
)
def gradient_sign_flipped(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """dlogits = (onehot - softmax) / N."""
    loss, dlogits = _reference_loss(logits, targets)
    return loss, -dlogits


@mistake(
    function="cross_entropy_loss",
    title="Loss sign flipped",
    explanation="""Your loss is negative: the log of a probability is at most 0, so the loss
    needs the minus sign of the negative log-likelihood to be a positive quantity that
    training decreases.""",
)
def loss_sign_flipped(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """loss = mean(log p[target]); gradient as the reference."""
    loss, dlogits = _reference_loss(logits, targets)
    return -loss, dlogits


@mistake(
    function="cross_entropy_loss",
    title="Log base 2",
    explanation="""Your loss is in bits: you used `log2`. The course measures the loss in
    nats (natural log), which is what the uniform baseline log(V) and the gradient
    formula assume.""",
)
def loss_log_base_2(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """loss = -mean(log2 p[target]); gradient as the reference."""
    loss, dlogits = _reference_loss(logits, targets)
    return loss / np.log(2.0), dlogits


@mistake(
    function="cross_entropy_loss",
    title="Log base 10",
    explanation="""Your loss uses `log10`. Cross-entropy here is measured with the natural log
    (nats); other bases rescale the loss by a constant and no longer match log(V) for a
    uniform model.""",
)
def loss_log_base_10(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """loss = -mean(log10 p[target]); gradient as the reference."""
    loss, dlogits = _reference_loss(logits, targets)
    return loss / np.log(10.0), dlogits


@mistake(
    function="cross_entropy_loss",
    title="Input logits changed in place",
    explanation="""Your function modifies the `logits` array it was given (for example with
    `-=` or `out=`), so the caller's data is corrupted. A loss function must treat its
    inputs as read-only: compute the shifted values into a new array.""",
)
def logits_changed_in_place(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Stable, correct values, but the max is subtracted from the caller's array."""
    logits -= logits.max(axis=-1, keepdims=True)   # mutates the argument on purpose
    return _reference_loss(logits, targets)


@mistake(
    function="cross_entropy_loss",
    title="Target picked with `[:, targets]`",
    explanation="""You indexed the probabilities with `[:, targets]`, which picks every target
    column for every row (an N x N block) instead of one entry per row. Pairing row n with
    its own target needs an index for the rows as well.""",
)
def target_index_without_row_index(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """probs[:, tgt] is (N, N); the one-hot subtraction hits whole columns."""
    flat, tgt = _flat_rows(logits, targets)
    probs = _stable_softmax(flat, axis=1)
    loss = float(-np.mean(np.log(probs[:, tgt])))
    d = probs.copy()
    d[:, tgt] -= 1.0
    return loss, (d / len(tgt)).reshape(logits.shape)


@mistake(
    function="cross_entropy_loss",
    title="Targets shifted again inside the loss",
    explanation="""Your loss drops the last position and compares logits with the targets one
    step further on. The targets you receive are already aligned with the logits (target
    t is the token after input t), so shifting again trains each position on the token
    two steps ahead.""",
)
def targets_shifted_inside_loss(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Loss on logits[:, :-1] against targets[:, 1:]; zero gradient at the last position."""
    loss, d_kept = _reference_loss(logits[:, :-1], np.asarray(targets)[:, 1:])
    dlogits = np.zeros(logits.shape, dtype=np.float64)
    dlogits[:, :-1] = d_kept
    return loss, dlogits


@mistake(
    function="cross_entropy_loss",
    title="`dlogits` left flat",
    explanation="""Your `dlogits` has the flattened (B*T, V) shape you computed it in. A
    gradient must have the shape of the array it belongs to, so the head's backward pass
    can use it directly.""",
)
def dlogits_left_flat(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    """Correct values, returned as (N, V)."""
    loss, dlogits = _reference_loss(logits, targets)
    return loss, dlogits.reshape(-1, logits.shape[-1])


# --------------------------------------------------------------------------
# lm_head_backward
# --------------------------------------------------------------------------

@mistake(
    function="lm_head_backward",
    title="`dW_head` transposed",
    explanation="""Your `dW_head` has the transposed shape (V, C). A parameter's gradient has
    the parameter's own shape; check the order of the two factors in the product.""",
)
def dw_transposed(
    hidden: np.ndarray, W_head: np.ndarray, dlogits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dW_head = dlogits_flatᵀ @ hidden_flat, (V, C)."""
    C, V = W_head.shape
    dW, db, dhidden = _reference_backward(hidden, W_head, dlogits)
    return dlogits.reshape(-1, V).T @ hidden.reshape(-1, C), db, dhidden


@mistake(
    function="lm_head_backward",
    title="`db_head` summed over one axis only",
    explanation="""Your `db_head` still has a position axis: you summed over the batch axis
    only. The bias is added at every one of the B*T positions, so its gradient collects
    the contributions of all of them.""",
)
def db_summed_over_one_axis(
    hidden: np.ndarray, W_head: np.ndarray, dlogits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """db_head = dlogits.sum(axis=0), shape (T, V)."""
    dW, _, dhidden = _reference_backward(hidden, W_head, dlogits)
    return dW, dlogits.sum(axis=0), dhidden


@mistake(
    function="lm_head_backward",
    title="`dhidden` reshaped in the wrong order",
    explanation="""Your `dhidden` has the right shape but its entries are scrambled: you
    reshaped a (C, N) product straight to (B, T, C). A reshape keeps memory order, so the
    axes must already be in (N, C) order before reshaping.""",
)
def dhidden_reshaped_wrong_order(
    hidden: np.ndarray, W_head: np.ndarray, dlogits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dhidden = (W_head @ dlogits_flatᵀ).reshape(B, T, C)."""
    V = W_head.shape[1]
    dW, db, _ = _reference_backward(hidden, W_head, dlogits)
    return dW, db, (W_head @ dlogits.reshape(-1, V).T).reshape(hidden.shape)


@mistake(
    function="lm_head_backward",
    title="Parameter gradients averaged again",
    explanation="""Your `dW_head` and `db_head` are N = B*T times too small. The averaging
    factor of the mean loss is already inside `dlogits`; the head's backward pass only
    sums the per-position contributions.""",
)
def head_gradients_averaged_again(
    hidden: np.ndarray, W_head: np.ndarray, dlogits: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """dW_head and db_head divided by N a second time."""
    dW, db, dhidden = _reference_backward(hidden, W_head, dlogits)
    n = dlogits.shape[0] * dlogits.shape[1]
    return dW / n, db / n, dhidden


# --------------------------------------------------------------------------
# numerical_gradient
# --------------------------------------------------------------------------

@mistake(
    function="numerical_gradient",
    title="Perturbed a copy made by reshape",
    explanation="""Your gradient is 0 where `x` is not laid out row by row (a transposed or
    sliced array): `x.reshape(-1)` and `x.ravel()` return a view only for a C-ordered array,
    otherwise a copy, and nudging the copy never changes what `f` sees. Index `x` itself,
    e.g. with `np.ndindex(x.shape)`.""",
)
def perturbs_a_reshaped_copy(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences through ``x.reshape(-1)``, a copy for a non-C-ordered ``x``."""
    flat = x.reshape(-1)
    grad = np.zeros(x.size)
    for i in range(x.size):
        old = flat[i]
        flat[i] = old + eps
        plus = f(x)
        flat[i] = old - eps
        minus = f(x)
        flat[i] = old
        grad[i] = (plus - minus) / (2 * eps)
    return grad.reshape(x.shape)


@mistake(
    function="numerical_gradient",
    title="Perturbed a copy of x",
    explanation="""Your gradient is 0 everywhere: the entries you nudged belong to a copy of `x`
    (`x.flatten()`, `x.copy()`, `np.array(x)`), while `f` is evaluated on `x` itself, which
    never changes. Nudge `x` in place, entry by entry, and put each entry back afterwards.""",
)
def perturbs_a_copy(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences on ``x.flatten()`` while ``f`` sees ``x``: all zeros."""
    flat = x.flatten()
    grad = np.zeros(x.size)
    for i in range(x.size):
        old = flat[i]
        flat[i] = old + eps
        plus = f(x)
        flat[i] = old - eps
        minus = f(x)
        flat[i] = old
        grad[i] = (plus - minus) / (2 * eps)
    return grad.reshape(x.shape)


@mistake(
    function="numerical_gradient",
    title="Forward differences",
    explanation="""Your numerical gradient uses a one-sided difference, whose error shrinks
    only in proportion to eps. The centered difference, evaluating on both sides of x,
    cancels that first error term and is far more accurate at the same eps.""",
)
def forward_differences(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """(f(x + eps e_i) - f(x)) / eps, with x restored."""
    grad = np.zeros(x.shape, dtype=np.float64)
    f_0 = float(f(x))
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        x[idx] = orig + eps
        grad[idx] = (float(f(x)) - f_0) / eps
        x[idx] = orig
    return grad


@mistake(
    function="numerical_gradient",
    title="Input not restored",
    explanation="""Your numerical gradient leaves each entry of `x` perturbed after using it,
    so later entries are measured at a shifted point and the caller gets back a changed
    array. Put every entry back to its original value before moving on.""",
)
def input_not_restored(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """Central differences that leave x[idx] at orig - eps."""
    grad = np.zeros(x.shape, dtype=np.float64)
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        x[idx] = orig + eps
        f_plus = float(f(x))
        x[idx] = orig - eps                 # never put back: mutates the argument on purpose
        f_minus = float(f(x))
        grad[idx] = (f_plus - f_minus) / (2 * eps)
    return grad


@mistake(
    function="numerical_gradient",
    title="Central difference divided by eps",
    explanation="""Your numerical gradient is twice the true one. The two evaluation points
    x + eps and x - eps are 2*eps apart, and the slope is the change in f over that
    distance.""",
)
def central_difference_over_eps(
    f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6
) -> np.ndarray:
    """(f(x + eps) - f(x - eps)) / eps."""
    grad = np.zeros(x.shape, dtype=np.float64)
    for idx in np.ndindex(x.shape):
        orig = x[idx]
        x[idx] = orig + eps
        f_plus = float(f(x))
        x[idx] = orig - eps
        f_minus = float(f(x))
        x[idx] = orig
        grad[idx] = (f_plus - f_minus) / eps
    return grad


@mistake(
    function="numerical_gradient",
    title="All entries perturbed at once",
    explanation="""Your numerical gradient has the same value in every entry: you moved all of
    `x` by eps at the same time, which measures the slope along one diagonal direction.
    Each partial derivative needs its own evaluation with only that entry moved.""",
)
def all_entries_perturbed_at_once(
    f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6
) -> np.ndarray:
    """(f(x + eps) - f(x - eps)) / 2eps broadcast into every entry."""
    slope = (float(f(x + eps)) - float(f(x - eps))) / (2 * eps)
    return np.full(x.shape, slope, dtype=np.float64)


# --------------------------------------------------------------------------
# max_rel_err
# --------------------------------------------------------------------------

@mistake(
    function="max_rel_err",
    title="Relative error without its guard",
    explanation="""Your relative error is nan where both gradients are exactly 0, because 0/0
    is undefined. The course's definition adds a tiny constant to the denominator so that
    such entries count as agreeing.""",
    non_finite=True,
)
def rel_err_without_guard(a: np.ndarray, n: np.ndarray) -> float:
    """max(|a - n| / max(|a|, |n|)) with no guard."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n) / np.maximum(np.abs(a), np.abs(n))))


@mistake(
    function="max_rel_err",
    title="One magnitude for every entry",
    explanation="""You divided every entry's difference by one number, the largest magnitude in
    either gradient, instead of by each entry's own max(|a|, |n|). The relative error of a small
    entry then shrinks to almost nothing, and a wrong small gradient passes the check. Divide
    elementwise, then take the maximum.""",
)
def rel_err_one_denominator(a: np.ndarray, n: np.ndarray) -> float:
    """max |a - n| / (max(max |a|, max |n|) + 1e-12)."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n)) / (max(np.max(np.abs(a)), np.max(np.abs(n))) + 1e-12))


@mistake(
    function="max_rel_err",
    title="Mean instead of max",
    explanation="""You averaged the elementwise relative errors. A single wrong gradient entry
    is a bug, and averaging hides it among the correct ones; the check reports the worst
    entry.""",
)
def rel_err_mean_not_max(a: np.ndarray, n: np.ndarray) -> float:
    """mean of the guarded elementwise relative errors."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.mean(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))


@mistake(
    function="max_rel_err",
    title="Relative to the numerical gradient only",
    explanation="""Your relative error divides by the size of the numerical gradient alone.
    The course's definition divides by the larger of the two magnitudes, so the measure
    treats both gradients alike and stays bounded where the numerical value is near 0.""",
)
def rel_err_relative_to_numerical(a: np.ndarray, n: np.ndarray) -> float:
    """max(|a - n| / (|n| + 1e-12))."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n) / (np.abs(n) + 1e-12)))


@mistake(
    function="max_rel_err",
    title="Relative to the analytic gradient only",
    explanation="""Your relative error divides by the size of the analytic gradient alone.
    The course's definition divides by the larger of the two magnitudes, so swapping the
    two gradients gives the same number and an analytic value near 0 cannot blow it up.""",
)
def rel_err_relative_to_analytic(a: np.ndarray, n: np.ndarray) -> float:
    """max(|a - n| / (|a| + 1e-12))."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n) / (np.abs(a) + 1e-12)))


@mistake(
    function="max_rel_err",
    title="Signed difference in the numerator",
    explanation="""You divided a - n rather than |a - n|, so entries where the analytic value is
    below the numerical one count as negative and the largest error can hide. The error of an
    entry is the size of the difference, whichever gradient is larger.""",
)
def rel_err_signed(a: np.ndarray, n: np.ndarray) -> float:
    """max((a - n) / (max(|a|, |n|) + 1e-12))."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max((a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))


@mistake(
    function="max_rel_err",
    title="Absolute instead of relative error",
    explanation="""You returned the largest absolute difference. Gradients vary in size by
    orders of magnitude, so the check compares each difference with the size of the
    values involved.""",
)
def absolute_error_instead_of_relative(a: np.ndarray, n: np.ndarray) -> float:
    """max |a - n|."""
    return float(np.max(np.abs(np.asarray(a, dtype=np.float64) - np.asarray(n, dtype=np.float64))))


@mistake(
    function="max_rel_err",
    title="Sum of magnitudes in the denominator",
    explanation="""Your denominator adds the two magnitudes, which roughly halves every error.
    The course's definition uses the larger of the two magnitudes (plus the small guard),
    so its thresholds such as 1e-4 keep their meaning.""",
)
def rel_err_sum_denominator(a: np.ndarray, n: np.ndarray) -> float:
    """max(|a - n| / (|a| + |n| + 1e-12))."""
    a = np.asarray(a, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    return float(np.max(np.abs(a - n) / (np.abs(a) + np.abs(n) + 1e-12)))

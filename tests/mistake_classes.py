"""Classes of mistakes real students make that the feedback must name, each written several ways.

Written from descriptions of real students' code (issue 29), not copied from any corpus: each
class is a kind of slip (a column gather where one entry per row is due, a reduced axis kept,
a denominator off by one), and each entry is one idiom of it, so a rule keyed to one wording
of a class fails the others. ``CLASSES[name] = (function, [(idiom, implementation), ...])``.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

import solutions

Impl = Callable[..., object]


def _log_softmax(z: np.ndarray) -> np.ndarray:
    shifted = z - z.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


# -- a loss from a column gather: logp[:, y] picks an N x N block, averaged ---------------------

def ce_column_gather(logits, targets):
    B, T, V = logits.shape
    logp = _log_softmax(logits.reshape(-1, V))
    y = targets.reshape(-1)
    loss = -np.mean(logp[:, y])
    return float(loss), solutions.cross_entropy_loss(logits, targets)[1]


def ce_column_gather_sum(logits, targets):
    B, T, V = logits.shape
    N = B * T
    probs = np.exp(_log_softmax(logits)).reshape(N, V)
    loss = -np.sum(np.log(probs[:, targets.reshape(-1)])) / N ** 2
    return float(loss), solutions.cross_entropy_loss(logits, targets)[1]


# -- a reduced axis kept (keepdims) or missing -----------------------------------------------------

def backward_db_keepdims(hidden, W_head, dlogits):
    dW, _, dh = solutions.lm_head_backward(hidden, W_head, dlogits)
    return dW, dlogits.reshape(-1, W_head.shape[1]).sum(axis=0, keepdims=True), dh


def backward_db_keepdims_3d(hidden, W_head, dlogits):
    dW, _, dh = solutions.lm_head_backward(hidden, W_head, dlogits)
    return dW, np.sum(dlogits, axis=(0, 1), keepdims=True), dh


def backward_db_summed_over_t_only(hidden, W_head, dlogits):
    dW, _, dh = solutions.lm_head_backward(hidden, W_head, dlogits)
    return dW, dlogits.sum(axis=1), dh


# -- a sum where a max is due in a denominator; one global ratio ------------------------------------

def rel_err_sum_denominator(a, n):
    return float(np.max(np.abs(a - n) / (np.abs(a) + np.abs(n) + 1e-12)))


def rel_err_sum_denominator_maximum_guard(a, n):
    return float(np.max(np.abs(a - n) / np.maximum(1e-12, np.abs(a) + np.abs(n))))


def rel_err_global_norm(a, n):
    return float(np.linalg.norm(a - n) / (np.linalg.norm(a) + np.linalg.norm(n) + 1e-12))


def rel_err_global_norm_max(a, n):
    return float(np.linalg.norm(a - n) / max(np.linalg.norm(a), np.linalg.norm(n), 1e-12))


# -- numerical gradient: flat loop, double step, minus point built from the plus point -------------

def grad_flat_index(f, x, eps=1e-6):
    grad = np.zeros_like(x, dtype=np.float64)
    for i in range(x.size):
        old = x[i]
        x[i] = old + eps
        fp = f(x)
        x[i] = old - eps
        fm = f(x)
        x[i] = old
        grad[i] = (fp - fm) / (2 * eps)
    return grad


def grad_double_iternext(f, x, eps=1e-6):
    grad = np.zeros_like(x, dtype=np.float64)
    it = np.nditer(x, flags=["multi_index"], op_flags=["readwrite"])
    while not it.finished:
        ix = it.multi_index
        old = x[ix]
        x[ix] = old + eps
        fp = f(x)
        x[ix] = old - eps
        fm = f(x)
        x[ix] = old
        grad[ix] = (fp - fm) / (2 * eps)
        it.iternext()
        it.iternext()
    return grad


def grad_minus_from_plus(f, x, eps=1e-6):
    grad = np.zeros_like(x, dtype=np.float64)
    for ix in np.ndindex(x.shape):
        old = x[ix]
        x[ix] = old + eps
        fp = f(x)
        x[ix] -= eps                      # meant old - eps: this is old again
        fm = f(x)
        x[ix] = old
        grad[ix] = (fp - fm) / (2 * eps)
    return grad


# -- masked cross-entropy gradient without the one-hot, or with 1 subtracted everywhere -----------

def _masked_parts(logits, targets, mask):
    B, T, V = logits.shape
    keep = np.asarray(mask).astype(bool)
    M = max(int(keep.sum()), 1)
    p = np.exp(_log_softmax(logits.astype(np.float64)))
    return solutions.masked_cross_entropy(logits, targets, mask)[0], p, keep[..., None], M


def masked_grad_no_onehot(logits, targets, mask):
    loss, p, keep, M = _masked_parts(logits, targets, mask)
    return loss, p * keep / M


def masked_grad_minus_one_everywhere(logits, targets, mask):
    loss, p, keep, M = _masked_parts(logits, targets, mask)
    return loss, (p - 1) * keep / M


def masked_loss_counts_padding(logits, targets, mask):
    B, T, V = logits.shape
    keep = np.asarray(mask).astype(bool)
    logp = _log_softmax(logits.astype(np.float64))
    tgt = np.where(keep, targets, 0)
    nll = -np.take_along_axis(logp, tgt[..., None], axis=-1)[..., 0]
    return float(nll.sum() / keep.sum()), solutions.masked_cross_entropy(logits, targets, mask)[1]


# -- perplexity: denominators, transforms in the wrong order, other formulas ------------------------

def ppl_n_plus_one(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.sum(np.log(p)) / (len(p) + 1)))


def ppl_n_minus_one(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-np.sum(np.log(p)) / (p.size - 1)))


def ppl_mean_inverse(token_probs):
    return float(np.mean(1.0 / np.asarray(token_probs, dtype=np.float64)))


def ppl_mean_of_exp(token_probs):
    return float(np.mean(np.exp(-np.log(np.asarray(token_probs, dtype=np.float64)))))


def ppl_product_of_losses(token_probs):
    return float(np.prod(-np.log(np.asarray(token_probs, dtype=np.float64))))


def ppl_from_loss_sqrt(mean_nll):
    return float(np.sqrt(mean_nll))


def ppl_from_loss_base2(mean_nll):
    return float(2 ** mean_nll)


def seq_prod_over_n(cond_probs):
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.prod(p) / len(p))


def seq_log_of_product(cond_probs):
    return math.log(math.prod(float(v) for v in cond_probs))


# -- the tied head at the last position only ---------------------------------------------------------

def tied_last_position(hidden, E):
    return hidden[:, -1] @ E.T


def tied_last_row(hidden, E):
    return hidden[-1] @ E.T


def tied_last_position_kept(hidden, E):
    return hidden[:, -1:, :] @ E.T


# -- an epsilon inside log-sum-exp; a last target wrapped to the row's first token -------------------

def ce_eps_in_logsumexp(logits, targets):
    B, T, V = logits.shape
    z = logits.reshape(-1, V).astype(np.float64)
    m = z.max(axis=1, keepdims=True)
    lse = m[:, 0] + np.log(np.exp(z - m).sum(axis=1) + 1e-3)
    loss = float(np.mean(lse - z[np.arange(z.shape[0]), targets.reshape(-1)]))
    return loss, solutions.cross_entropy_loss(logits, targets)[1]


def batch_wrapped_target(data, ix, block_size):
    xb = np.stack([data[i:i + block_size] for i in ix])
    return xb, np.roll(xb, -1, axis=1)


CLASSES: dict[str, tuple[str, list[tuple[str, Impl]]]] = {
    "column gather": ("cross_entropy_loss", [("logp[:, y]", ce_column_gather),
                                             ("probs[:, y] summed / N**2", ce_column_gather_sum)]),
    "reduced axis kept": ("lm_head_backward", [("keepdims=True", backward_db_keepdims),
                                               ("axis=(0, 1), keepdims", backward_db_keepdims_3d),
                                               ("one axis of two summed", backward_db_summed_over_t_only)]),
    "sum for max": ("max_rel_err", [("|a|+|b|", rel_err_sum_denominator),
                                    ("maximum(guard, |a|+|b|)", rel_err_sum_denominator_maximum_guard),
                                    ("global norm ratio", rel_err_global_norm),
                                    ("global norm over max norm", rel_err_global_norm_max)]),
    "numerical gradient": ("numerical_gradient", [("x[i] over range(x.size)", grad_flat_index),
                                                  ("iternext twice", grad_double_iternext),
                                                  ("minus from plus", grad_minus_from_plus)]),
    "masked gradient": ("masked_cross_entropy", [("no one-hot", masked_grad_no_onehot),
                                                 ("1 subtracted everywhere", masked_grad_minus_one_everywhere),
                                                 ("padding counted", masked_loss_counts_padding)]),
    "perplexity": ("perplexity", [("N+1", ppl_n_plus_one), ("N-1", ppl_n_minus_one),
                                  ("mean of 1/p", ppl_mean_inverse), ("mean of exp", ppl_mean_of_exp),
                                  ("product of losses", ppl_product_of_losses)]),
    "perplexity from loss": ("perplexity_from_loss", [("sqrt", ppl_from_loss_sqrt), ("2**", ppl_from_loss_base2)]),
    "sequence log prob": ("sequence_log_prob", [("prod/n", seq_prod_over_n), ("log of product", seq_log_of_product)]),
    "one position": ("tied_lm_head", [("hidden[:, -1]", tied_last_position), ("hidden[-1]", tied_last_row),
                                      ("hidden[:, -1:]", tied_last_position_kept)]),
    "eps in lse": ("cross_entropy_loss", [("+1e-3 inside the log", ce_eps_in_logsumexp)]),
    "wrapped target": ("next_token_batch", [("np.roll", batch_wrapped_target)]),
}

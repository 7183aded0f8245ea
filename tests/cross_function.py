"""Submissions whose correct function calls a broken one of the student's own, written as students
write them: the loss reuses the student's softmax (or a log-softmax helper), the perplexity reuses
the student's log-probability or perplexity-from-loss, the greedy token reuses the tied head.

Each case: (assignment, the function that is right in itself, the broken function it calls, the
source defining every function of the assignment the case needs).
"""
from __future__ import annotations

_SOFTMAX_NO_KEEPDIMS = '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis, keepdims=True)
'''
_SOFTMAX_NO_MAX = '''
def softmax(x, axis=-1):
    e = np.exp(x)
    return e / e.sum(axis=axis, keepdims=True)
'''
_SOFTMAX_AXIS_0 = '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=0, keepdims=True))
    return e / e.sum(axis=0, keepdims=True)
'''
_LOSS_VIA_SOFTMAX = '''
def cross_entropy_loss(logits, targets):
    B, T, V = logits.shape
    p = softmax(logits, axis=-1)
    rows = np.arange(B * T)
    flat = p.reshape(B * T, V)
    t = targets.reshape(-1)
    loss = float(-np.mean(np.log(flat[rows, t])))
    d = flat.copy()
    d[rows, t] -= 1.0
    return loss, (d / (B * T)).reshape(B, T, V)
'''
_LOSS_VIA_LOG_SOFTMAX = '''
def log_softmax(x):
    return np.log(softmax(x, axis=-1))

def cross_entropy_loss(logits, targets):
    B, T, V = logits.shape
    logp = log_softmax(logits).reshape(B * T, V)
    rows, t = np.arange(B * T), targets.reshape(-1)
    d = np.exp(logp)
    d[rows, t] -= 1.0
    return float(-logp[rows, t].mean()), (d / (B * T)).reshape(B, T, V)
'''
_LOSS_VIA_BROKEN_ONEHOT = '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)

def onehot(targets, V):
    out = np.zeros(targets.shape + (V,))
    out[targets] = 1.0          # indexes the wrong axis
    return out

def cross_entropy_loss(logits, targets):
    N = targets.size
    p = softmax(logits)
    y = onehot(targets, logits.shape[-1])
    return float(-(y * np.log(p)).sum() / N), (p - y) / N
'''
_LOG_PROB_PRODUCT = '''
def sequence_log_prob(cond_probs):
    return float(np.log(np.prod(np.asarray(cond_probs, dtype=np.float64))))
'''
_LOG_PROB_NO_KEEPDIMS = '''
def sequence_log_prob(cond_probs):
    p = np.asarray(cond_probs, dtype=np.float64)
    return float(np.log(p).sum(axis=1))
'''
_PERPLEXITY_VIA_LOG_PROB = '''
def perplexity(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-sequence_log_prob(p) / p.size))
'''
_PERPLEXITY_VIA_FROM_LOSS = '''
def perplexity_from_loss(mean_nll):
    return float(2.0 ** mean_nll)

def perplexity(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return perplexity_from_loss(float(-np.mean(np.log(p))))
'''
_TIED_HEAD_UNTRANSPOSED = '''
def tied_lm_head(hidden, E):
    return hidden @ E
'''
_GREEDY_VIA_TIED_HEAD = '''
def greedy_next_token(h_last, W_head):
    return int(np.argmax(tied_lm_head(h_last, W_head.T)))
'''
_MASKED_VIA_LOG_SOFTMAX = '''
def log_softmax(x):
    z = x - x.max(axis=-1)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))

def masked_cross_entropy(logits, targets, mask):
    B, T, V = logits.shape
    keep = np.asarray(mask).astype(bool)
    logp = log_softmax(logits)
    n = int(keep.sum())
    d = np.zeros_like(logits, dtype=np.float64)
    if n == 0:
        return 0.0, d
    b, t = np.nonzero(keep)
    y = targets[b, t]
    d[b, t] = np.exp(logp[b, t])
    d[b, t, y] -= 1.0
    return float(-logp[b, t, y].sum() / n), d / n
'''

#: (assignment, caller, broken function, source)
CASES = [
    ("lm-head", "cross_entropy_loss", "softmax", _SOFTMAX_NO_KEEPDIMS + _LOSS_VIA_SOFTMAX),
    ("lm-head", "cross_entropy_loss", "softmax", _SOFTMAX_NO_MAX + _LOSS_VIA_SOFTMAX),
    ("lm-head", "cross_entropy_loss", "softmax", _SOFTMAX_AXIS_0 + _LOSS_VIA_SOFTMAX),
    ("lm-head", "cross_entropy_loss", "softmax", _SOFTMAX_NO_KEEPDIMS + _LOSS_VIA_LOG_SOFTMAX),
    ("lm-head", "cross_entropy_loss", "softmax", _SOFTMAX_NO_MAX + _LOSS_VIA_LOG_SOFTMAX),
    ("lm-head", "cross_entropy_loss", "onehot", _LOSS_VIA_BROKEN_ONEHOT),
    ("perplexity-and-parameters", "perplexity", "sequence_log_prob", _LOG_PROB_PRODUCT + _PERPLEXITY_VIA_LOG_PROB),
    ("perplexity-and-parameters", "perplexity", "sequence_log_prob",
     _LOG_PROB_NO_KEEPDIMS + _PERPLEXITY_VIA_LOG_PROB),
    ("perplexity-and-parameters", "perplexity", "perplexity_from_loss", _PERPLEXITY_VIA_FROM_LOSS),
    ("perplexity-and-parameters", "greedy_next_token", "tied_lm_head",
     _TIED_HEAD_UNTRANSPOSED + _GREEDY_VIA_TIED_HEAD),
    ("perplexity-and-parameters", "masked_cross_entropy", "log_softmax", _MASKED_VIA_LOG_SOFTMAX),
]

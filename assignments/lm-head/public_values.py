"""Expected values for the lm-head public tests, computed from the references.

The build calls ``values(sizes, public_seed)`` and renders the result into the
public test cells, so changing the public seed or sizes never leaves a stale
expectation behind.
"""
import numpy as np

import solutions as S


def values(sizes: dict, public_seed: int) -> dict:
    B, T, C = sizes["B"], sizes["T"], sizes["C"]
    stoi, itos = S.build_vocab()
    data = S.encode(S.CORPUS, stoi)
    V = len(stoi)
    rng = np.random.default_rng(public_seed)
    ix = rng.integers(0, len(data) - T - 1, size=B)
    xb, yb = S.next_token_batch(data, ix, T)
    hidden = rng.standard_normal((B, T, C))
    W_head = rng.standard_normal((C, V)) * 0.02
    b_head = np.zeros(V)
    logits = S.lm_head(hidden, W_head, b_head)
    loss, dlogits = S.cross_entropy_loss(logits, yb)
    dW, db, dh = S.lm_head_backward(hidden, W_head, dlogits)
    return {
        "ix": [int(i) for i in ix],
        "x0": S.decode(xb[0], itos),
        "y0": S.decode(yb[0], itos),
        "V": V,
        "logits_sum": float(logits.sum()),
        "loss": float(loss),
        "dW_abs_sum": float(np.abs(dW).sum()),
        "dhidden_abs_sum": float(np.abs(dh).sum()),
    }

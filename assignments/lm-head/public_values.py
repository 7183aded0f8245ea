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
    # Question 5's check: a fixed upstream gradient, so it tests lm_head_backward alone.
    rng5 = np.random.default_rng(public_seed + 5)
    hidden5 = rng5.standard_normal((B, T, C))
    W5 = rng5.standard_normal((C, V)) * 0.02
    dlogits5 = rng5.standard_normal((B, T, V)) / (B * T)
    dW5, db5, dh5 = S.lm_head_backward(hidden5, W5, dlogits5)
    # Question 4's small batch: small enough to ship its whole gradient.
    rng4 = np.random.default_rng(public_seed + 4)
    logits4 = np.round(rng4.standard_normal((2, 3, 4)) * 2, 3)
    targets4 = rng4.integers(0, 4, size=(2, 3))
    _, dlogits4 = S.cross_entropy_loss(logits4, targets4)
    return {
        "q5_dW_abs_sum": float(np.abs(dW5).sum()),
        "q5_db_abs_sum": float(np.abs(db5).sum()),
        "q5_dhidden_abs_sum": float(np.abs(dh5).sum()),
        "q4_logits": logits4.tolist(),
        "q4_targets": targets4.tolist(),
        "q4_dlogits": dlogits4.tolist(),
        "ix": [int(i) for i in ix],
        "x0": S.decode(xb[0], itos),
        "y0": S.decode(yb[0], itos),
        "V": V,
        "logits_sum": float(logits.sum()),
        "loss": float(loss),
        "dW_abs_sum": float(np.abs(dW).sum()),
        "dhidden_abs_sum": float(np.abs(dh).sum()),
    }

"""Expected values for the lm-head public tests, computed from the references.

The build calls ``values(sizes, public_seed)`` and renders the result into the
public test cells, so changing the public seed or sizes never leaves a stale
expectation behind.
"""
import numpy as np

import solutions as S
from autograder.build.public_diagnosis import Probe, PublicCallable


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


def probes(sizes: dict, public_seed: int) -> dict:
    """Fixed public inputs for the in-kernel checks: small, with the features the catalogued
    mistakes trip on (non-square shapes, a bias, rows of very different scale, an axis other
    than the last, a non-C-ordered array, an exact zero in a relative error)."""
    rng = np.random.default_rng(public_seed + 100)

    def rounded(*shape: int, scale: float = 1.0) -> np.ndarray:
        return np.round(rng.standard_normal(shape) * scale, 3)

    data = np.arange(40, 70, dtype=np.int32)
    logits = rounded(2, 3, 4, scale=2.0)
    targets = np.array([[0, 3, 1], [2, 2, 0]])
    far_apart = np.array([[[1000.0, 1001.0, 998.0, 1000.5], [0.0, 1.0, -2.0, 0.5], [3.0, 3.0, 3.0, 3.0]]])
    # Rows 800 apart and a row spanning 800: one maximum for all rows, or each row's minimum,
    # underflows or overflows there, while exp of the raw scores still fits in float64.
    spread = np.array([[400.0, -400.0, 0.0, 10.0], [400.0, 399.0, 398.0, 397.0], [-400.0, -401.0, -399.0, -398.5]])
    # numerical_gradient on a cubic: forward differences and a missing 1/2 differ there.
    cubic = PublicCallable("lambda x: float(np.sum(x ** 3) + np.sum(x[..., :1]))")
    x_f = np.asfortranarray(rounded(3, 2))
    a = np.array([[1.0, 0.0, -2.0], [1e-3, 4.0, 0.5]])
    n = np.array([[1.1, 0.0, -2.0], [3e-3, 4.0, 0.25]])
    return {
        "next_token_batch": [Probe.of(data, np.array([3, 0, 11]), 4)],
        "lm_head": [Probe.of(rounded(2, 3, 4), rounded(4, 5), rounded(5))],
        "softmax": [Probe.of(rounded(2, 3, 4, scale=2.0)), Probe.of(rounded(3, 2, 4), axis=0),
                    Probe.of(far_apart[0]), Probe.of(spread)],
        "cross_entropy_loss": [Probe.of(logits, targets), Probe.of(far_apart, np.array([[1, 2, 0]])),
                               Probe.of(spread[None], np.array([[0, 0, 3]]))],
        "lm_head_backward": [Probe.of(rounded(2, 3, 4), rounded(4, 5), rounded(2, 3, 5, scale=0.1))],
        "numerical_gradient": [Probe.of(cubic, x_f, 1e-3)],
        "max_rel_err": [Probe.of(a, n), Probe.of(n, a)],
    }

"""Expected values for the perplexity-and-parameters public tests, from the references."""
import numpy as np

import solutions as S


def values(sizes: dict, public_seed: int) -> dict:
    B, T, V = sizes["B"], sizes["T"], sizes["V"]
    rng = np.random.default_rng(public_seed)
    logits = rng.standard_normal((B, T, V))
    targets = rng.integers(0, V, size=(B, T))
    lengths = rng.integers(1, T + 1, size=B)
    mask = np.arange(T)[None, :] < lengths[:, None]
    loss, _ = S.masked_cross_entropy(logits, targets, mask)
    return {"lengths": [int(n) for n in lengths], "masked_loss": float(loss)}

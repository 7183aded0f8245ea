"""Expected values for the perplexity-and-parameters public tests, from the references."""
import numpy as np

import solutions as S
from autograder.build.public_diagnosis import Probe


def values(sizes: dict, public_seed: int) -> dict:
    B, T, V = sizes["B"], sizes["T"], sizes["V"]
    rng = np.random.default_rng(public_seed)
    logits = rng.standard_normal((B, T, V))
    targets = rng.integers(0, V, size=(B, T))
    lengths = rng.integers(1, T + 1, size=B)
    mask = np.arange(T)[None, :] < lengths[:, None]
    loss, _ = S.masked_cross_entropy(logits, targets, mask)
    return {"lengths": [int(n) for n in lengths], "masked_loss": float(loss)}


def probes(sizes: dict, public_seed: int) -> dict:
    """Fixed public inputs for the in-kernel checks, each with a feature some catalogued mistake
    trips on: a long run of small probabilities, padding targets outside the vocabulary, a
    sequence with no kept position, a tie for the largest logit, an FFN width other than 4d."""
    rng = np.random.default_rng(public_seed + 100)
    probs = [0.5, 0.25, 0.1, 0.8]
    logits = np.round(rng.standard_normal((2, 4, 3)), 3)
    targets = np.array([[0, 2, 1, 1], [2, 0, 1, 0]])
    mask = np.array([[True, True, True, False], [True, True, False, False]])
    padded = np.array([[0, 2, 1, -100], [2, 0, 3, 3]])
    w_tie = np.zeros((3, 6))
    w_tie[0] = [1.0, 5.0, 2.0, -1.0, 5.0, 0.0]      # with h[0] = 1 and the rest of h on zero rows
    hidden = np.round(rng.standard_normal((2, 3, 4)), 3)
    return {
        "sequence_log_prob": [Probe.of(probs), Probe.of([1e-3] * 200)],
        "perplexity": [Probe.of(probs), Probe.of([1e-3] * 200)],
        "perplexity_from_loss": [Probe.of(1.3)],
        "masked_cross_entropy": [Probe.of(logits, targets, mask),
                                 Probe.of(logits, padded, mask),
                                 Probe.of(logits, targets, np.zeros_like(mask)),
                                 Probe.of(logits + 1000.0, targets, mask),
                                 Probe.of(logits + np.array([[[400.0]] * 4, [[-400.0]] * 4]), targets, mask)],
        "tied_lm_head": [Probe.of(hidden, np.round(rng.standard_normal((4, 4)), 3)),
                         Probe.of(hidden, np.round(rng.standard_normal((5, 4)), 3))],
        "greedy_next_token": [Probe.of(np.array([1.0, 2.0, 0.5]), w_tie),
                              Probe.of(np.array([0.5, -1.0]), np.array([[-2.0, -1.0, -3.0], [1.0, 0.5, 2.0]]))],
        "causal_mask": [Probe.of(4), Probe.of(1)],
        "gpt_param_count": [Probe.of(vocab_size=10, block_size=6, n_embd=4, n_layer=2, ffn_dim=12, tied=True),
                            Probe.of(vocab_size=10, block_size=6, n_embd=4, n_layer=2, ffn_dim=12, tied=False)],
    }

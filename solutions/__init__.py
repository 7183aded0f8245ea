"""NumPy reference solutions: the single source of truth for every correct answer.

Each module mirrors one assignment of the student API (see the project's
DESIGN); question-bank answers and hidden tests import from here too.
"""
from solutions.corpus import CORPUS, build_vocab, decode, encode
from solutions.head_and_loss import (
    cross_entropy_loss,
    lm_head,
    lm_head_backward,
    max_rel_err,
    next_token_batch,
    numerical_gradient,
    softmax,
)
from solutions.perplexity_and_parameters import (
    causal_mask,
    gpt_param_count,
    greedy_next_token,
    masked_cross_entropy,
    perplexity,
    perplexity_from_loss,
    sequence_log_prob,
    tied_lm_head,
)

__all__ = [
    "CORPUS", "build_vocab", "decode", "encode",
    "causal_mask", "cross_entropy_loss", "gpt_param_count", "greedy_next_token",
    "lm_head", "lm_head_backward", "masked_cross_entropy", "max_rel_err",
    "next_token_batch", "numerical_gradient", "perplexity", "perplexity_from_loss",
    "sequence_log_prob", "softmax", "tied_lm_head",
]

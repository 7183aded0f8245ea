"""Does the feedback name the cause of each class of real students' mistakes, in every idiom of it?

Each idiom of ``tests/mistake_classes.py`` is graded by its function's hidden module, in-process,
and some failed test's feedback must say the cause (the fragment below); and formulas outside the
families the feedback knows must get no formula sentence at all, rather than a wrong one.
"""
from __future__ import annotations

import types

import numpy as np
import pytest

from tests.mistake_classes import CLASSES
from tests.suites import reference_namespace, run_for

#: What the feedback must say for each idiom: the cause, in the feedback's words.
SAYS = {
    "logp[:, y]": "the mean of the N × N block `-logp[:, targets]`",
    "probs[:, y] summed / N**2": "the mean of the N × N block `-logp[:, targets]`",
    "keepdims=True": "with 1 axis of size 1 more than the right result",
    "axis=(0, 1), keepdims": "with 2 axes of size 1 more than the right result",
    "one axis of two summed": "summed over that axis it gives the right values",
    "|a|+|b|": "Sum of magnitudes in the denominator",
    "maximum(guard, |a|+|b|)": "`np.max(np.abs(a - n) / (np.abs(a) + np.abs(n)))`",
    "global norm ratio": "`np.linalg.norm(a - n) / (np.linalg.norm(a) + np.linalg.norm(n))`",
    "global norm over max norm": "`np.linalg.norm(a - n) / max(np.linalg.norm(a), np.linalg.norm(n))`",
    "x[i] over range(x.size)": "but returns on the same values flattened to shape",
    "iternext twice": "every second entry was skipped",
    "minus from plus": "the minus point is x itself",
    "no one-hot": "`p * mask / M` at every entry: the softmax alone, without the one-hot",
    "1 subtracted everywhere": "`(p - 1) * mask / M` at every entry: 1 subtracted at every entry",
    "padding counted": "the sum over all N positions of `-logp[i, targets[i]]` (padded ones too",
    "N+1": "`np.exp(-np.sum(np.log(token_probs)) / (N + 1))`",
    "N-1": "`np.exp(-np.sum(np.log(token_probs)) / (N - 1))`",
    "mean of 1/p": "`np.mean(np.exp(-np.log(token_probs)))`",
    "mean of exp": "`np.mean(np.exp(-np.log(token_probs)))`",
    "product of losses": "`np.prod(-np.log(token_probs))`",
    "sqrt": "`np.sqrt(mean_nll)`",
    "2**": "Base 2 for a loss in nats",
    "prod/n": "`np.prod(cond_probs) / N`",
    "log of product": "A product of many probabilities is exactly 0",
    "hidden[:, -1]": "is the right result at the last index of axis 1 only",
    "hidden[-1]": "is the right result at the last index of axis 0 only",
    "hidden[:, -1:]": "with the right values of the last position only",
    "+1e-3 inside the log": "an epsilon of 0.001 inside the log-sum-exp",
    "np.roll": "moved one place back along axis 1, with value 1's first entries at the end",
}

IDIOMS = [(cls, fn, idiom, impl) for cls, (fn, idioms) in CLASSES.items() for idiom, impl in idioms]


def _as(fn: str, impl):
    """``impl`` under the name the notebook gives it, as a student's function has."""
    return types.FunctionType(impl.__code__.replace(co_name=fn, co_qualname=fn), impl.__globals__, fn,
                              impl.__defaults__)


def _feedback(fn: str, impl) -> list[str]:
    return [o.message for o in run_for(fn, reference_namespace({fn: _as(fn, impl)})).values() if not o.passed]


@pytest.mark.parametrize("cls, fn, idiom, impl", IDIOMS, ids=[f"{c}/{i}" for c, _, i, _ in IDIOMS])
def test_each_idiom_of_each_class_gets_its_cause_named(cls, fn, idiom, impl):
    failed = _feedback(fn, impl)
    assert failed, f"{idiom}: no test failed"
    assert any(SAYS[idiom] in message for message in failed), "\n\n".join(failed)


def _perplexity_by_median(token_probs):
    return float(np.exp(-np.median(np.log(np.asarray(token_probs, dtype=np.float64)))))


def _rel_err_by_median(a, n):
    return float(np.median(np.abs(a - n) / (np.maximum(np.abs(a), np.abs(n)) + 1e-12)))


def _loss_by_median(logits, targets):
    import solutions
    B, T, V = logits.shape
    z = logits.reshape(-1, V).astype(np.float64)
    z = z - z.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-np.median(logp[np.arange(B * T), targets.reshape(-1)])), solutions.cross_entropy_loss(logits, targets)[1]


@pytest.mark.parametrize("fn, impl", [("perplexity", _perplexity_by_median), ("max_rel_err", _rel_err_by_median),
                                      ("cross_entropy_loss", _loss_by_median)])
def test_a_formula_outside_the_families_gets_no_formula_named(fn, impl):
    failed = _feedback(fn, impl)
    assert failed
    assert not any("where the definition is" in message for message in failed), "\n\n".join(failed)

"""Do the hidden suites accept every correct solution and reject every known mistake?

Each hidden module runs in-process against a namespace: the reference, the
reference with one function swapped for a catalogued mistake (it must lose
points, and the feedback should name it), or an alternative correct
implementation (it must keep full marks).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pytest

import solutions
from tests.alternatives import ALTERNATIVES
from tests.suites import FUNCTIONS as STUDENT_FUNCTIONS
from tests.suites import MISTAKES, reference_namespace as _namespace, run_for as _run, suite_for


def test_every_student_function_has_a_hidden_module():
    assert all(suite_for(f).cases for f in STUDENT_FUNCTIONS)


@pytest.mark.parametrize("function", sorted(STUDENT_FUNCTIONS))
def test_reference_keeps_full_marks(function):
    results = _run(function, _namespace())
    assert results and all(r.passed for r in results.values()), \
        {k: r.message for k, r in results.items() if not r.passed}


@pytest.mark.parametrize("name", sorted(ALTERNATIVES))
def test_alternatives_keep_full_marks(name):
    for function, implementation in ALTERNATIVES[name].items():
        results = _run(function, _namespace({function: implementation}))
        failed = {k: r.message for k, r in results.items() if not r.passed}
        assert not failed, f"{name} / {function}: {failed}"


@lru_cache(maxsize=None)
def _mistake_outcome(slug: str) -> tuple[bool, bool]:
    """(loses points, named in the feedback of at least one failing test)."""
    m = MISTAKES[slug]
    results = _run(m.function, _namespace({m.function: m.implementation}))
    failed = [r for r in results.values() if not r.passed]
    return bool(failed), any(m.title in r.message for r in failed)


@pytest.mark.parametrize("slug", sorted(MISTAKES))
def test_every_mistake_loses_points(slug):
    loses, _ = _mistake_outcome(slug)
    assert loses, f"{slug} keeps full marks on the hidden suite"


def test_mistakes_are_named_in_at_least_90_percent_of_cases():
    named = {slug: _mistake_outcome(slug)[1] for slug in MISTAKES}
    rate = sum(named.values()) / len(named)
    missed = sorted(slug for slug, ok in named.items() if not ok)
    assert rate >= 0.9, f"diagnosis rate {rate:.0%}; not named: {missed}"


def test_feedback_never_shows_hidden_values():
    """A wrong loss's feedback holds no number from the hidden inputs or the reference."""
    import re
    m = MISTAKES["loss-summed"]
    results = _run(m.function, _namespace({m.function: m.implementation}))
    for r in results.values():
        if not r.passed:
            numbers = re.findall(r"\d+\.\d{3,}", r.message)
            assert numbers == [], r.message


def _zeros_like(value):
    import numpy as np
    if isinstance(value, np.ndarray):
        return np.zeros_like(value)
    if isinstance(value, tuple):
        return tuple(_zeros_like(v) for v in value)
    if isinstance(value, dict):
        return {k: _zeros_like(v) for k, v in value.items()}
    return type(value)(0)


@pytest.mark.parametrize("function", sorted(STUDENT_FUNCTIONS))
def test_constant_zeros_of_the_right_shape_earn_nothing(function):
    """Zeros shaped like the answer pass no test: where the answer is zero (an empty mask, a
    one-position causal mask) the test also checks inputs drawn from the seed, whose answer is
    not (tests/test_secret_inputs.py tries many more constants, memorisers and guesses)."""
    results = _run(function, _namespace({f: (lambda f=f: lambda *a: _zeros_like(getattr(solutions, f)(*a)))()
                                         for f in STUDENT_FUNCTIONS}))
    passed = [name for name, r in results.items() if r.passed]
    assert passed == [], passed


def _loss_by_sequential_logsumexp(logits, targets):
    """A correct loss whose log-sum-exp is a sequential reduction (not NumPy's pairwise sum):
    its rounding over 50,000 logits is far larger than the reference's."""
    B, T, V = logits.shape
    z = np.asarray(logits, dtype=np.float64).reshape(-1, V)
    lse = np.logaddexp.reduce(z, axis=1)
    rows = np.arange(z.shape[0])
    loss = float(np.mean(lse - z[rows, np.asarray(targets).reshape(-1)]))
    p = np.exp(z - lse[:, None])
    p[rows, np.asarray(targets).reshape(-1)] -= 1.0
    return loss, (p / z.shape[0]).reshape(B, T, V)


def test_a_correct_loss_summed_in_another_order_passes_on_every_seed():
    """The gradient-consistency check must not mistake rounding for a wrong gradient: it once
    failed this correct loss on 5 of 40 submission seeds at V = 50,000."""
    student = _namespace({"cross_entropy_loss": _loss_by_sequential_logsumexp})
    failed = {seed: [t for t, o in _run("cross_entropy_loss", student, seed).items() if not o.passed]
              for seed in range(1, 41)}
    assert not any(failed.values()), {s: t for s, t in failed.items() if t}


def test_suites_run_side_by_side_in_threads_leave_the_standard_streams_as_they_were():
    # The build verifies its assignments in threads; a run swaps sys.stdout for a buffer, and two
    # runs interleaving used to restore each other's buffers, so `grader build` printed nothing.
    import sys
    from concurrent.futures import ThreadPoolExecutor

    def noisy(*args, **kwargs):
        print("student output " * 50)
        return getattr(solutions, "softmax")(*args, **kwargs)

    before = sys.stdout, sys.stderr
    with ThreadPoolExecutor(max_workers=4) as pool:
        runs = list(pool.map(lambda seed: _run("softmax", _namespace({"softmax": noisy}), seed), range(8)))
    assert (sys.stdout, sys.stderr) == before
    assert all(r.passed for results in runs for r in results.values())


def test_a_mistake_another_test_of_the_function_rules_out_is_not_named():
    # A 0/1 float mask equals the additive mask (0 and -inf) at T = 1 only: every larger T shows
    # it is not that mistake, so no test may name it, and the run lists no mistake.
    def float_mask(T):
        return np.triu(np.ones((T, T)), 1)

    run = suite_for("causal_mask").run(_namespace({"causal_mask": float_mask}), 0)
    assert not all(item.passed for item in run.items)
    assert all("Additive" not in item.message for item in run.items), [i.message for i in run.items]
    assert run.diagnoses == ()


def test_a_mistake_that_is_right_where_the_student_is_wrong_is_not_named():
    """exp of the summed NLL overflows on long inputs, as a product of probabilities raised to -1/N
    does; but on short inputs the product is right and the student is not, so only one is named."""
    import numpy as np
    from tests.suites import reference_namespace, suite_for

    def perplexity(token_probs):
        return float(np.exp(-np.sum(np.log(np.asarray(token_probs, dtype=np.float64)))))
    run = suite_for("perplexity").run(reference_namespace({"perplexity": perplexity}), 3)
    named = {d.slug for d in run.diagnoses if d.function == "perplexity"}
    assert named == {"perplexity-exp-of-sum"}, named
    assert all("Product of probabilities" not in item.message for item in run.items if not item.passed)

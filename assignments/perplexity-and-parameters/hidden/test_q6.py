"""Hidden tests for question 6: gpt_param_count."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_number, check_plain
from autograder.runtime.judge import Feedback, call, expect

KEYS = ("embeddings", "attention", "ffn", "layernorm", "lm_head", "total")


def _config(rng):
    d = int(rng.choice([64, 128, 256, 384]))
    return (int(rng.integers(100, 60000)), int(rng.choice([128, 256, 1024])), d,
            int(rng.integers(1, 25)), int(4 * d))


@pytest.mark.contract()
@pytest.mark.points(1)
@pytest.mark.parametrize("tied", [True, False])
def test_counts_match_reference(student, rng, tied):
    args = (*_config(rng), tied)
    out = call(student, "gpt_param_count", *args)
    if not isinstance(out, dict):
        raise Feedback(f"`gpt_param_count` should return a dict, got a {type(out).__name__}.")
    want = ref.gpt_param_count(*args)
    for key in KEYS:
        if key not in out:
            raise Feedback(f"the dict returned by `gpt_param_count` has no key {key!r}; "
                           f"expected keys: {', '.join(KEYS)}.")
        expect(check_number(key, out[key], want[key], integer=True), function="gpt_param_count",
               make_args=lambda: args, output=out)


def _checked_dict(student, args) -> dict:
    out = call(student, "gpt_param_count", *args)
    if not isinstance(out, dict):
        raise Feedback(f"`gpt_param_count` should return a dict, got a {type(out).__name__}.")
    missing = [k for k in KEYS if k not in out]
    if missing:
        raise Feedback(f"the dict returned by `gpt_param_count` has no key {missing[0]!r}; "
                       f"expected keys: {', '.join(KEYS)}.")
    return out


@pytest.mark.contract("ffn_dim")
@pytest.mark.points(1)
def test_ffn_width_is_its_own_parameter(student, rng):
    """Widths other than GPT-1's 4d: the count must use ``ffn_dim`` as given."""
    for ratio in (3, 2.5):
        d = int(rng.choice([64, 128]))
        args = (int(rng.integers(100, 60000)), 256, d, int(rng.integers(1, 13)), int(ratio * d), False)
        out = _checked_dict(student, args)
        want = ref.gpt_param_count(*args)
        for key in ("ffn", "total"):
            expect(check_number(key, out[key], want[key], integer=True), function="gpt_param_count",
                   make_args=lambda: args, output=out)


@pytest.mark.contract("plain_ints")
@pytest.mark.points(1)
def test_counts_are_plain_ints(student, rng):
    args = (*_config(rng), True)
    out = _checked_dict(student, args)
    want = ref.gpt_param_count(*args)
    for key in KEYS:
        expect(check_plain(key, out[key], int, "the docstring promises plain ints"), function="gpt_param_count",
               make_args=lambda: args, output=out)
        expect(check_number(key, out[key], want[key], integer=True), function="gpt_param_count",
               make_args=lambda: args, output=out)

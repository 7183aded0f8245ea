"""Hidden tests for question 1: next_token_batch."""
import numpy as np
import pytest

import solutions as ref
from autograder.runtime.compare import check_array, check_dtype
from autograder.runtime.judge import call, expect, unpack

#: Every call goes through ``judge.call``, which fails a test whose function changed an array
#: argument in place: each test here enforces the question's ``inputs_unchanged``.
pytestmark = pytest.mark.contract("inputs_unchanged")


def _inputs(rng, length, B, T, dtype):
    data = rng.integers(0, 50, size=length).astype(dtype)
    ix = rng.integers(0, length - T - 1, size=B)
    return data, ix, T


#: Draws of a one-row, one-token batch: it is guessed right, from a random offset, about once in 260
#: times, so three draws together about once in 18 million (larger batches: one draw is enough).
TINY_BATCH_DRAWS = 3


@pytest.mark.contract("keep_dtype", "small_sizes")
@pytest.mark.points(2)
@pytest.mark.parametrize("B, T, dtype", [(4, 8, np.int64), (1, 1, np.int32), (3, 17, np.int16)])
def test_batch_matches_reference(student, rng, B, T, dtype):
    for _ in range(TINY_BATCH_DRAWS if B * T == 1 else 1):
        args = _inputs(rng, 300, B, T, dtype)
        out = call(student, "next_token_batch", *args)
        xb, yb = unpack(out, "next_token_batch", ("xb", "yb"))
        want_x, want_y = ref.next_token_batch(*args)
        make_args = lambda args=args: args
        expect(check_array("xb", xb, want_x, exact=True), function="next_token_batch", make_args=make_args,
               output=out)
        expect(check_array("yb", yb, want_y, exact=True), function="next_token_batch", make_args=make_args,
               output=out)


@pytest.mark.contract("last_offset")
@pytest.mark.points(1)
def test_last_valid_offset(student, rng):
    """Offsets 0 and the last valid one, ``len(data) - block_size - 1``, whose targets end at the
    data's last token. The data's length, its tokens (all different, so every slip of an index
    shows) and the block size are drawn: fixed ones could be answered from memory."""
    T = int(rng.integers(2, 20))
    # At least 20 valid offsets, and four drawn rows beside the two edges: offsets drawn at
    # random (a guess) match all six less than once in 60 million times.
    length = int(rng.integers(T + 21, 200))
    data = rng.choice(10_000, size=length, replace=False).astype(np.int64)
    offsets = np.concatenate([[0, length - T - 1], rng.integers(0, length - T, size=4)])
    args = (data, rng.permutation(offsets), T)
    out = call(student, "next_token_batch", *args)
    xb, yb = unpack(out, "next_token_batch", ("xb", "yb"))
    want_x, want_y = ref.next_token_batch(*args)
    expect(check_array("yb", yb, want_y, exact=True), function="next_token_batch",
           make_args=lambda: args, output=out)


@pytest.mark.contract("keep_dtype")
@pytest.mark.points(1)
def test_inputs_keep_the_data_dtype(student, rng):
    args = _inputs(rng, 120, 3, 6, np.int16)
    out = call(student, "next_token_batch", *args)
    xb, yb = unpack(out, "next_token_batch", ("xb", "yb"))
    expect(check_dtype("xb", xb, np.int16, "the docstring promises the same dtype as `data`"),
           function="next_token_batch", make_args=lambda: args, output=out)
    expect(check_array("xb", xb, ref.next_token_batch(*args)[0], exact=True), function="next_token_batch",
           make_args=lambda: args, output=out)

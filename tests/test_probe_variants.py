"""Do the class probes part two causes that a test's fixed order or layout makes alike (its largest
row first, its only view transposed), while one cause written in two round-off styles stays one
group? Every probe call goes through the channel as into the worker, so a view keeps its layout."""
from __future__ import annotations

import copy

import numpy as np

from autograder.runtime.class_probes import (PROBES_PER_FUNCTION, VARIANTS_PER_PROBE, capture_class_probes,
                                             probe_variants)
from autograder.runtime.hidden_suite import Case
from autograder.runtime.probe_edges import at_the_edge
from autograder.runtime.sandbox import channel
from autograder.runtime.sandbox.channel import Named

import solutions


def _as_in_the_worker(args: tuple) -> tuple:
    """``args`` as the worker decodes them from a call request."""
    data = channel.pack({}, {"args": args}, max_bytes=1 << 24, views=True)
    return channel.unpack(data[channel.FRAME.size:], allow_named=True)[1]["args"]


def _digest(probes, function: str, student) -> str:
    def call(name, args):
        given = _as_in_the_worker(args)
        with np.errstate(all="ignore"):
            value = student(*(a.function() if isinstance(a, Named) else a for a in given))
        changed = {i: a for i, a in enumerate(given) if isinstance(a, np.ndarray)
                   and not np.array_equal(a, args[i], equal_nan=True)}
        return True, value, changed
    return probes.behaviour(call, [function])[function]


# -- softmax: a row's maximum taken from the first row, or from the whole array ----------------------

def _far_rows_largest_first(student, rng):
    """As the hidden rows-far-apart tests build them: the largest offset in the first row."""
    offsets = rng.uniform(-400.0, 400.0, size=(3, 4, 1))
    offsets[0, 0, 0], offsets[-1, -1, 0] = 400.0, -400.0
    student.softmax(offsets + rng.standard_normal((3, 4, 10)) * 2)


def _global_max(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


def _first_row_max(x):
    rows = x.reshape(-1, x.shape[-1])
    e = np.exp(x - rows[0].max())
    return e / e.sum(axis=-1, keepdims=True)


def _first_row_max_by_reciprocal(x):
    rows = x.reshape(-1, x.shape[-1])
    e = np.exp(x - rows[0].max())
    return e * (1.0 / e.sum(axis=-1, keepdims=True))


def _softmax_probes():
    cases = [Case("q3", "test_far_rows", _far_rows_largest_first, {}, ("student", "rng"), 1.0)]
    return capture_class_probes("softmax-order-demo", cases, {"q3": ("softmax",)}, lambda f: solutions.softmax)


def test_the_first_rows_maximum_and_the_arrays_maximum_are_two_groups_where_the_test_puts_the_largest_row_first():
    probes = _softmax_probes()
    (test_args,) = [args for args in probes.inputs["softmax"] if args[0].reshape(-1, 10)[0].max()
                    == args[0].max()]
    # Premise: on the test's own order the two mistakes return the same bits.
    with np.errstate(all="ignore"):
        assert np.array_equal(_global_max(test_args[0]), _first_row_max(test_args[0]), equal_nan=True)
    digests = {name: _digest(probes, "softmax", f) for name, f in
               (("global", _global_max), ("first", _first_row_max), ("first_by_reciprocal", _first_row_max_by_reciprocal))}
    assert digests["global"] != digests["first"]
    assert digests["first"] == digests["first_by_reciprocal"]       # one cause, two round-offs
    assert "=" not in digests.values()


def test_a_sum_shifted_by_one_rows_maximum_counts_at_the_edge():
    """The first row's maximum puts the last row's sum of exponentials in the subnormal range (720
    below it), where no shift by nothing, the array's maximum or a per-row maximum does."""
    x = np.array([[-100.0, -101.0], [0.0, -1.0], [-820.0, -821.0]])
    assert at_the_edge((x,))
    x[2] = -600.0
    assert not at_the_edge((x,))


def test_a_row_order_variant_keeps_a_batch_and_its_targets_paired_and_is_left_out_where_it_changes_nothing():
    logits, targets = np.arange(24.0).reshape(2, 3, 4), np.array([[0, 1, 2], [3, 0, 1]])
    _, turned = probe_variants((logits, targets))
    assert np.array_equal(turned[0], logits[::-1]) and np.array_equal(turned[1], targets[::-1])
    assert turned[0].flags.c_contiguous
    assert len(probe_variants((np.ones((1, 5)),))) == 1 and len(probe_variants((3, 4))) == 1


# -- numerical_gradient: a copy keeping x's order, or x.ravel() nudged ------------------------------

def _strided_view_test(student, rng):
    """As the hidden test builds it: a transposed (Fortran-ordered) x."""
    f = Named("weighted_softplus", weights=rng.standard_normal((3, 4)))
    student.numerical_gradient(f, np.ascontiguousarray(rng.standard_normal((4, 3))).T)


def _plain_test(student, rng):
    student.numerical_gradient(Named("cubic"), rng.standard_normal((2, 3)), 1e-3)


def _copy_keeping_order(f, x, eps=1e-6):
    xc = np.array(x, dtype=np.float64, copy=True)          # order "K": Fortran stays Fortran
    grad = np.zeros_like(xc)
    flat, gflat = xc.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        fp = f(xc)
        flat[i] = old - eps
        fm = f(xc)
        flat[i] = old
        gflat[i] = (fp - fm) / (2 * eps)
    return grad


def _ravel_nudged(f, x, eps=1e-6):
    grad = np.zeros(x.shape)
    xf, gf = x.ravel(), grad.ravel()                        # a copy unless x is C-contiguous
    for i in range(xf.size):
        old = xf[i]
        xf[i] = old + eps
        fp = f(x)
        xf[i] = old - eps
        fm = f(x)
        xf[i] = old
        gf[i] = (fp - fm) / (2 * eps)
    return grad


def test_a_copy_keeping_xs_order_and_a_nudged_ravel_are_two_groups_where_the_only_view_is_transposed():
    cases = [Case("q6", "test_strided", _strided_view_test, {}, ("student", "rng"), 1.0),
             Case("q6", "test_plain", _plain_test, {}, ("student", "rng"), 1.0)]
    probes = capture_class_probes("ng-layout-demo", cases, {"q6": ("numerical_gradient",)},
                                  lambda f: solutions.numerical_gradient)
    assert len(probes.inputs["numerical_gradient"]) <= PROBES_PER_FUNCTION * VARIANTS_PER_PROBE
    # Premise: on C- and Fortran-ordered x (all the test's own layouts) the two return the same bits.
    for args in probes.inputs["numerical_gradient"]:
        x = args[1]
        if x.flags.c_contiguous or x.flags.f_contiguous:
            f = args[0].function()
            assert np.array_equal(_copy_keeping_order(f, copy.deepcopy(x), *args[2:]),
                                  _ravel_nudged(f, copy.deepcopy(x), *args[2:]))
    assert _digest(probes, "numerical_gradient", _copy_keeping_order) != \
        _digest(probes, "numerical_gradient", _ravel_nudged)

"""Does one mistake written in two round-off styles stay one mistake group where a probe's inputs
reach the edge of the float range, while two mistakes that fail the same tests stay two? Which
arguments count as at the edge (``probe_edges``)?"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from autograder.groups.class_groups import class_groups
from autograder.runtime.class_probes import ClassProbes, capture_class_probes, probe_seed
from autograder.runtime.grading.outcome import Entry, GradeOutcome, GradeRecord, ItemOutcome
from autograder.runtime.hidden_suite import Case, rng_for_test
from autograder.runtime.probe_edges import EDGE_MARGIN_BITS, at_the_edge

ASSIGNMENT = "softmax-demo"
#: A test whose first draw from the class seed puts a row's sum of exponentials, shifted by the
#: whole array's maximum, in the subnormal range (checked below, so the premise cannot go stale).
FAR_TEST = "test_far_rows"
TESTS = (FAR_TEST, "test_small_rows")


def _far_rows(student, rng):
    """Rows whose offsets spread over 800, as a hidden test that catches one maximum for the whole
    array builds them: the last row sits 800 below the first."""
    offsets = rng.uniform(-400.0, 400.0, size=(3, 4, 1))
    offsets[0, 0, 0], offsets[-1, -1, 0] = 400.0, -400.0
    student.softmax(offsets + rng.standard_normal((3, 4, 10)) * 2)


def _small_rows(student, rng):
    student.softmax(rng.standard_normal((2, 5)) * 3)


def _right(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _one_max_divided(x):
    e = np.exp(x - x.max())
    return e / e.sum(axis=-1, keepdims=True)


def _one_max_by_reciprocal(x):
    e = np.exp(x - x.max())
    return e * (1.0 / e.sum(axis=-1, keepdims=True))


def _one_max_guarded(x):
    """Another mistake: one maximum too, and a guard that turns a row of zeros into zeros."""
    e = np.exp(x - x.max())
    return e / (e.sum(axis=-1, keepdims=True) + 1e-300)


def _probes() -> ClassProbes:
    cases = [Case("q3", FAR_TEST, _far_rows, {}, ("student", "rng"), 1.0),
             Case("q3", "test_small_rows", _small_rows, {}, ("student", "rng"), 1.0)]
    return capture_class_probes(ASSIGNMENT, cases, {"q3": ("softmax",)}, lambda f: _right)


def _call(function):
    def call(name, args):
        with np.errstate(all="ignore"):
            return True, function(*copy.deepcopy(args)), {}
    return call


def _record(student: str, digest: str) -> GradeRecord:
    """A submission that failed both tests (as all three mistakes do on their own hidden inputs)."""
    items = tuple(ItemOutcome("q3", t, 1.0, False, "wrong") for t in TESTS)
    outcome = GradeOutcome(student, ASSIGNMENT, "graded", "bwrap", items, float(len(TESTS)),
                           behaviour=(("q3", "softmax", digest),))
    return GradeRecord(Entry(student, Path(f"{student}.py")), outcome)


def test_two_round_off_styles_of_one_mistake_are_one_group_and_another_mistake_is_not():
    first = rng_for_test(probe_seed(ASSIGNMENT), FAR_TEST)
    captured = {}

    class Capture:
        def softmax(self, x):
            captured["x"] = x
    _far_rows(Capture(), first)
    assert at_the_edge((captured["x"],)), "premise: the test's first draw reaches the edge"

    probes = _probes()
    assert not any(at_the_edge(args) for args in probes.inputs["softmax"])
    styles = {"divided": _one_max_divided, "by_reciprocal": _one_max_by_reciprocal, "guarded": _one_max_guarded}
    records = [_record(name, probes.behaviour(_call(f), ["softmax"])["softmax"]) for name, f in styles.items()]
    found = class_groups(records)
    assert sorted(sorted(r.entry.student for r in g.members) for g in found.groups) == [
        ["by_reciprocal", "divided"], ["guarded"]]
    # The probes still tell the mistake: one maximum is not right on them.
    assert all(m != "=" for _, _, m in records[0].outcome.behaviour)


def test_a_probe_whose_arguments_draw_clear_of_the_edge_keeps_its_first_draw():
    """Only a test whose arguments reach the edge is drawn again: the others' probes (and the group
    ids made from them) are as before."""
    probes = _probes()
    small = [args for args in probes.inputs["softmax"] if args[0].shape == (2, 5)]
    expected = rng_for_test(probe_seed(ASSIGNMENT), "test_small_rows").standard_normal((2, 5)) * 3
    # As drawn, and in reverse row order (``probe_variants``).
    assert len(small) == 2 and np.array_equal(small[0][0], expected) and np.array_equal(small[1][0], expected[::-1])


def test_a_sum_of_exponentials_is_at_the_edge_only_between_zero_and_the_normal_range():
    rows = np.zeros((2, 4))
    assert not at_the_edge((rows,))
    rows[1] = -720.0                       # exp(-720) is subnormal: 1 / its sum overflows
    assert at_the_edge((rows,))
    rows[1] = -800.0                       # exp(-800) is 0 in every order: no edge
    assert not at_the_edge((rows,))
    rows[1] = -600.0                       # normal with room to spare
    assert not at_the_edge((rows,))
    # Within one row, the row's own maximum keeps the sum at 1 or more, but no shift, or the max
    # along the other axis, lands the lower entries' sums at the edge.
    row = np.array([[0.0, -720.0]])
    assert at_the_edge((row,))
    # float32 arrays are judged against float32's own range, integers never.
    assert at_the_edge((np.array([0.0, -95.0], dtype=np.float32)[:, None],))
    assert not at_the_edge((np.array([0, -720]),))
    assert not at_the_edge((np.array([np.inf, np.nan]),))
    assert EDGE_MARGIN_BITS >= 1

"""What makes two wrong submissions one mistake group, without grading anything: the probe digest
where it tells the behaviour (failed tests and named mistakes vary with each student's hidden
inputs), a function that changes its input is never "right" on the probes, and every test of a
question gives the probes one of its argument sets."""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from autograder.groups.class_groups import class_groups
from autograder.groups.membership import memberships
from autograder.runtime.class_probes import (PROBES_PER_FUNCTION, RIGHT, VARIANTS_PER_PROBE, ClassProbes,
                                             capture_class_probes)
from autograder.runtime.grading.outcome import Diagnosis, Entry, GradeOutcome, GradeRecord, ItemOutcome
from autograder.runtime.hidden_suite import Case

TESTS = ("test_definition", "test_both_orders", "test_guard")


def _record(student: str, failed: tuple[str, ...], digest: str, named: str = "") -> GradeRecord:
    items = tuple(ItemOutcome("q6", t, 1.0, t not in failed, "wrong" if t in failed else "",
                              (named,) if named and t in failed else ()) for t in TESTS)
    diagnoses = (Diagnosis(named, "max_rel_err", "One denominator", "..."),) if named else ()
    outcome = GradeOutcome(student, "lm-head", "graded", "bwrap", items, float(len(TESTS)),
                           diagnoses=diagnoses, behaviour=(("q6", "max_rel_err", digest),))
    return GradeRecord(Entry(student, Path(f"{student}.py")), outcome)


def test_one_probe_digest_is_one_group_whatever_tests_each_students_inputs_tripped():
    """Five students with one cause: the shared probes give one digest; their own hidden inputs
    tripped different tests, and named the mistake for some of them only. Where the probes say
    nothing, the failed tests still tell groups apart."""
    records = [_record("s1", TESTS[:2], "d1", "rel-err-one-denominator"), _record("s2", TESTS[:2], "d1"),
               _record("s3", TESTS, "d1"), _record("s4", TESTS[1:2], "d1", "rel-err-one-denominator"),
               _record("s5", TESTS[:2], "d2")]
    found = class_groups(records)
    assert sorted(sorted(r.entry.student for r in g.members) for g in found.groups) == [
        ["s1", "s2", "s3", "s4"], ["s5"]]
    group = next(g for g in found.groups if g.size == 4)
    assert group.failed_tests == tuple(sorted(TESTS)) and group.failed_by_all == ("test_both_orders",)
    assert group.mistakes == ("rel-err-one-denominator",) and group.named
    assert group.said == ("One denominator",)
    # A function right on every probe (its mistake is outside what they reach): only the tests it
    # failed tell one behaviour from another.
    a, b = _record("a", TESTS[:1], RIGHT), _record("b", TESTS[1:2], RIGHT)
    assert memberships(a)[0].group != memberships(b)[0].group
    assert memberships(a)[0].group == memberships(_record("c", TESTS[:1], RIGHT))[0].group


def _probes() -> ClassProbes:
    x = np.linspace(-1.0, 1.0, 6)
    return ClassProbes("lm-head", {"g": ((x,),)}, {"g": (x * 2,)})


def test_a_right_value_from_a_function_that_changed_its_input_is_not_right():
    """Restoring a nudged entry by arithmetic returns the right gradient and leaves x off by
    round-off: every hidden call fails it, so the probes must not call it right."""
    probes = _probes()
    x, right = probes.inputs["g"][0][0], probes.reference["g"][0]

    def digest(value, changed):
        return probes.behaviour(lambda f, args: (True, value, changed), ["g"])["g"]
    assert digest(right, {}) == RIGHT
    rounded = digest(right, {0: x * (1 + 1e-15) + 1e-17})
    assert rounded not in (RIGHT, digest(right * 3, {}))
    # Another round-off (another style of putting the step back) is the same behaviour; a step
    # left in x is another, whatever the gradient.
    assert rounded == digest(right * (1 + 1e-14), {0: x - 1e-16})
    assert digest(right, {0: x - 1e-2}) not in (rounded, RIGHT)
    assert digest(right, {0: x - 1e-2}) == digest(right, {0: (x - 1e-2) * (1 + 1e-15)})


def _test_calling(shape: tuple[int, ...]):
    def run(student, rng):
        student.g(rng.standard_normal(shape))
    return run


def test_every_test_of_a_question_gives_the_probes_an_argument_set():
    """Three large parametrised cases of one test and one small test: the small test's inputs are
    probed too (they reach what it was written for), not only the largest sets."""
    cases = [Case("q1", f"test_large[{n}]", _test_calling((40 + n,)), {}, ("student", "rng"), 1.0) for n in range(3)]
    cases.append(Case("q1", "test_small_step", _test_calling((3,)), {}, ("student", "rng"), 1.0))
    probes = capture_class_probes("lm-head", cases, {"q1": ("g",)}, lambda f: (lambda x: x * 2))
    sizes = [args[0].size for args in probes.inputs["g"]]
    # Each argument set is probed as drawn and in reverse order (``probe_variants``).
    assert 3 in sizes and 42 in sizes and len(set(sizes)) <= PROBES_PER_FUNCTION
    assert len(sizes) <= PROBES_PER_FUNCTION * VARIANTS_PER_PROBE
    assert [o.tolist() for o in probes.reference["g"]] == [(a[0] * 2).tolist() for a in probes.inputs["g"]]


def test_a_question_of_more_tests_than_probes_per_function_gives_each_test_a_probe():
    """Five tests of one function: the smallest (a rows-far-apart test, say: it exists for what its
    inputs reach) is probed too, not cut to keep the four largest."""
    cases = [Case("q1", f"test_{n}", _test_calling((40 + n,)), {}, ("student", "rng"), 1.0) for n in range(4)]
    cases.append(Case("q1", "test_far_rows", _test_calling((3,)), {}, ("student", "rng"), 1.0))
    probes = capture_class_probes("lm-head", cases, {"q1": ("g",)}, lambda f: (lambda x: x * 2))
    assert PROBES_PER_FUNCTION < 5
    assert {args[0].size for args in probes.inputs["g"]} == {40, 41, 42, 43, 3}


def _count_record(student: str, digest: str) -> GradeRecord:
    """A submission that lost the plain-ints test of ``gpt_param_count`` and passed the others."""
    tests = ("test_counts_match_reference", "test_counts_are_plain_ints")
    items = tuple(ItemOutcome("q6", t, 1.0, t != tests[1], "wrong" if t == tests[1] else "") for t in tests)
    outcome = GradeOutcome(student, "perplexity-and-parameters", "graded", "bwrap", items, float(len(tests)),
                           behaviour=(("q6", "gpt_param_count", digest),))
    return GradeRecord(Entry(student, Path(f"{student}.py")), outcome)


def test_equal_values_of_kinds_the_tests_tell_apart_are_two_groups_and_one_kind_in_two_styles_one():
    """Right counts as NumPy integers and right counts as floats fail the same tests, yet are two
    causes: the digest keeps a number's kind where the tests judge it (the reference returns Python
    ints). The same kind written in two styles (``float(n)`` or ``n * 1.0``; ``np.prod`` or
    ``np.int64(a) * b``) is one group, and where the reference returns a float, a whole number of
    the right value in any real kind is right."""
    from solutions.perplexity_and_parameters import gpt_param_count, perplexity_from_loss

    counts = ((10, 6, 4, 2, 12, True), (50257, 1024, 768, 12, 3072, False))
    losses = ((0.0,), (np.log(7.0),))
    probes = ClassProbes("perplexity-and-parameters",
                         {"gpt_param_count": counts, "perplexity_from_loss": losses},
                         {"gpt_param_count": tuple(gpt_param_count(*a) for a in counts),
                          "perplexity_from_loss": tuple(perplexity_from_loss(*a) for a in losses)})

    def styled(kind):
        return lambda *args: {k: kind(v) for k, v in gpt_param_count(*args).items()}
    styles = {"numpy_prod": styled(lambda v: np.prod([v, 1])), "numpy_times": styled(lambda v: np.int64(v) * 1),
              "float_call": styled(float), "float_times": styled(lambda v: v * 1.0),
              "float64": styled(np.float64), "item": styled(lambda v: np.int64(v).item())}

    def digest(function, name="gpt_param_count"):
        def call(_, args):
            return True, function(*copy.deepcopy(args)), {}
        return probes.behaviour(call, [name])[name]
    digests = {name: digest(f) for name, f in styles.items()}
    assert digests["item"] == RIGHT and RIGHT not in [d for n, d in digests.items() if n != "item"]
    found = class_groups([_count_record(name, d) for name, d in digests.items() if name != "item"])
    assert sorted(sorted(r.entry.student for r in g.members) for g in found.groups) == [
        ["float64", "float_call", "float_times"], ["numpy_prod", "numpy_times"]]
    # A float32 count is refused wherever a number is checked: another kind again.
    assert digest(styled(np.float32)) not in (RIGHT, *digests.values())
    # Where the reference returns a float, a whole number is judged by its value, whatever its kind.
    for kind in (int, np.int64, float, np.float64):
        assert digest(lambda m: kind(round(perplexity_from_loss(m))), "perplexity_from_loss") == RIGHT
    # A 0-d array where the reference returns a number is not one (no test takes it).
    assert digest(lambda m: np.array(perplexity_from_loss(m)), "perplexity_from_loss") != RIGHT

"""The mistake catalogue, its diagnosis, and the alternative correct implementations.

Every catalogued mistake must lose points (differ from the reference on at
least one standard input set) and be recognized by name from its own output;
the reference and every alternative in ``alternatives.py`` must never be
blamed and must agree with the reference everywhere.
"""
from __future__ import annotations

import inspect
import re
from typing import Any, Callable

import numpy as np
import pytest

import solutions
from alternatives import ALTERNATIVES
from autograder.runtime.compare import check_array, check_number
from autograder.runtime.catalogue import Catalogue, CatalogueError, load_catalogue
from autograder.runtime.diagnosis import (ARGS_ATOL, ARGS_RTOL, diagnose, feedback_for, nothing_finite,
                                          using_catalogue, values_match)
from tests.suites import FUNCTIONS as STUDENT_FUNCTIONS
from tests.suites import MISTAKES

#: Both built-in catalogues as one, so diagnose() can be asked about any student function.
ALL = Catalogue("all", tuple(STUDENT_FUNCTIONS), dict(MISTAKES))


def mistakes_for(function: str):
    return ALL.for_function(function)


@pytest.fixture(autouse=True)
def _both_catalogues():
    with using_catalogue(ALL):
        yield

MakeArgs = Callable[[], tuple]


# --------------------------------------------------------------------------
# standard input sets: every call of a factory returns fresh, identical arrays
# --------------------------------------------------------------------------

def _logits_and_targets(shape, seed, *, offset=0.0, scale=1.0, target_dtype=np.int64) -> MakeArgs:
    def make():
        rng = np.random.default_rng(seed)
        logits = rng.normal(size=shape) * scale + offset                      # (B, T, V)
        targets = rng.integers(0, shape[-1], size=shape[:2]).astype(target_dtype)   # (B, T)
        return logits, targets
    return make


def _masked(shape, seed, mask_rows, *, pad_id=0, int_mask=False) -> MakeArgs:
    def make():
        logits, targets = _logits_and_targets(shape, seed)()
        mask = np.array(mask_rows, dtype=np.int64 if int_mask else bool)       # (B, T)
        targets = np.where(mask.astype(bool), targets, pad_id)
        return logits, targets, mask
    return make


def _head(B, T, C, V, seed) -> MakeArgs:
    def make():
        rng = np.random.default_rng(seed)
        return rng.normal(size=(B, T, C)), rng.normal(size=(C, V)), rng.normal(size=V)
    return make


def _backward(B, T, C, V, seed) -> MakeArgs:
    def make():
        rng = np.random.default_rng(seed)
        return rng.normal(size=(B, T, C)), rng.normal(size=(C, V)), rng.normal(size=(B, T, V))
    return make


def _batch(data_len, ix, block_size, dtype, seed) -> MakeArgs:
    def make():
        data = np.random.default_rng(seed).integers(0, 24, size=data_len).astype(dtype)
        return data, np.array(ix), block_size
    return make


def _numgrad_quadratic() -> tuple:
    # Near 0 the gradient 2x is tiny while the curvature is 2, so a one-sided
    # difference is off by far more than the comparison tolerance.
    x = np.random.default_rng(11).normal(scale=0.01, size=(3, 4))
    return (lambda z: float(np.sum(z ** 2))), x


def _numgrad_cross_entropy() -> tuple:
    logits, targets = _logits_and_targets((2, 3, 4), 12)()
    return (lambda z: solutions.cross_entropy_loss(z, targets)[0]), logits


def _numgrad_transposed_view() -> tuple:
    # A non-contiguous x: flat-index implementations must still perturb it.
    x = np.random.default_rng(13).normal(size=(4, 3)).T
    return (lambda z: float(np.sum(np.exp(2 * z) * np.cos(z)))), x


def _rel_err_random() -> tuple:
    rng = np.random.default_rng(21)
    a = rng.normal(size=(5, 4))
    return a, a + 1e-3 * rng.normal(size=(5, 4))


def _rel_err_with_zeros() -> tuple:
    # Entries that are exactly 0 in both gradients are where the guard matters.
    rng = np.random.default_rng(22)
    a = rng.normal(size=(4, 4))
    n = a * (1 + 1e-7 * rng.normal(size=(4, 4)))
    a[0, :2] = n[0, :2] = 0.0
    return a, n


def _rel_err_buggy_gradient() -> tuple:
    # What a real bug looks like: one entry missing, one with the wrong sign.
    rng = np.random.default_rng(23)
    a = rng.normal(size=(3, 5))
    n = a * (1 + 1e-8 * rng.normal(size=(3, 5)))
    n[1, 2] = 0.0
    n[2, 4] = -a[2, 4]
    return a, n


INPUTS: dict[str, dict[str, MakeArgs]] = {
    "next_token_batch": {
        "int64": _batch(60, [0, 17, 40], 8, np.int64, 1),
        "int32": _batch(40, np.array([3, 9, 20], dtype=np.int32), 5, np.int32, 2),
        "one-row": _batch(20, [4], 3, np.int64, 3),
    },
    "lm_head": {
        "small": _head(2, 3, 4, 5, 4),
        "wide-vocab": _head(1, 5, 3, 7, 5),
    },
    "softmax": {
        "3d-last-axis": lambda: (np.random.default_rng(6).normal(size=(2, 3, 5)), -1),
        "large-offset": lambda: (np.random.default_rng(7).normal(size=(2, 3, 6)) * 3 + 1e4, -1),
        "2d-axis-0": lambda: (np.random.default_rng(8).normal(size=(4, 6)), 0),
        "2d-default-axis": lambda: (np.random.default_rng(9).normal(size=(3, 7)),),
        "rows-far-apart": lambda: (np.random.default_rng(10).normal(size=(3, 6)) + np.array([[400.0], [0.0], [-400.0]]), -1),
        "wide-rows": lambda: (np.random.default_rng(11).uniform(-400.0, 400.0, size=(3, 6)), -1),
    },
    "cross_entropy_loss": {
        "small": _logits_and_targets((2, 3, 5), 31),
        "int32-targets": _logits_and_targets((3, 4, 7), 32, target_dtype=np.int32),
        "large-offset": _logits_and_targets((2, 4, 6), 33, offset=1e4, scale=2.0),
        "one-sequence": _logits_and_targets((1, 6, 4), 34),
        "rows-far-apart": lambda: (np.random.default_rng(35).normal(size=(2, 2, 5)) + np.array([[[400.0], [0.0]], [[-400.0], [100.0]]]),
                                   np.random.default_rng(36).integers(0, 5, size=(2, 2))),
    },
    "lm_head_backward": {
        "small": _backward(2, 3, 4, 5, 41),
        "tall": _backward(3, 2, 6, 4, 42),
    },
    "numerical_gradient": {
        "quadratic-near-zero": _numgrad_quadratic,
        "cross-entropy": _numgrad_cross_entropy,
        "transposed-view": _numgrad_transposed_view,
    },
    "max_rel_err": {
        "random": _rel_err_random,
        "with-zeros": _rel_err_with_zeros,
        "buggy-gradient": _rel_err_buggy_gradient,
    },
    "sequence_log_prob": {
        "seed-conditionals": lambda: ([0.4, 0.6, 0.5],),
        "long-sequence": lambda: (np.random.default_rng(51).uniform(0.01, 0.1, size=400),),
    },
    "perplexity": {
        "seed-probs": lambda: (np.array([0.8, 0.5, 0.25]),),
        "random-50": lambda: (np.random.default_rng(52).uniform(0.05, 1.0, size=50),),
        "long-20000": lambda: (np.random.default_rng(53).uniform(5e-4, 2e-3, size=20_000),),
    },
    "perplexity_from_loss": {
        "seed-loss": lambda: (0.767528,),
        "uniform-24": lambda: (float(np.log(24)),),
    },
    "masked_cross_entropy": {
        "ragged": _masked((2, 4, 5), 61, [[1, 1, 1, 0], [1, 1, 0, 0]]),
        "int-mask-pad-minus-100": _masked((3, 3, 6), 62, [[1, 0, 1], [1, 1, 1], [0, 0, 1]],
                                          pad_id=-100, int_mask=True),
        "int-mask-pad-minus-1": _masked((3, 4, 6), 67, [[0, 1, 1, 0], [0, 1, 0, 1], [0, 0, 1, 1]],
                                        pad_id=-1, int_mask=True),
        "all-scored": _masked((2, 2, 4), 63, [[1, 1], [1, 1]]),
        "empty": _masked((2, 2, 4), 64, [[0, 0], [0, 0]]),
        "large-offset": lambda: (_masked((2, 3, 5), 65, [[1, 1, 0], [1, 1, 1]])()[0] + 1e4,
                                 *_masked((2, 3, 5), 65, [[1, 1, 0], [1, 1, 1]])()[1:]),
        "rows-far-apart": lambda: (_masked((2, 2, 5), 66, [[1, 1], [1, 0]])()[0]
                                   + np.array([[[400.0], [0.0]], [[-400.0], [9.0]]]),
                                   *_masked((2, 2, 5), 66, [[1, 1], [1, 0]])()[1:]),
    },
    "tied_lm_head": {
        "rectangular": lambda: (np.random.default_rng(71).normal(size=(2, 3, 4)),
                                np.random.default_rng(72).normal(size=(6, 4))),
        "square": lambda: (np.random.default_rng(73).normal(size=(2, 3, 4)),
                           np.random.default_rng(74).normal(size=(4, 4))),
    },
    "greedy_next_token": {
        "small": lambda: (np.random.default_rng(81).normal(size=4),
                          np.random.default_rng(82).normal(size=(4, 7))),
        "wider": lambda: (np.random.default_rng(83).normal(size=6),
                          np.random.default_rng(84).normal(size=(6, 10))),
        "tie": lambda: (np.ones(3), np.array([[1.0, 2.0, 0.5, 2.0], [0.0, 1.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0]])),
    },
    "causal_mask": {
        "five": lambda: (5,),
        "one": lambda: (1,),
        "three": lambda: (3,),
    },
    "gpt_param_count": {
        "gpt1-tied": lambda: (40478, 512, 768, 12, 3072, True),
        "gpt1-untied": lambda: (40478, 512, 768, 12, 3072, False),
        "small-default-tied": lambda: (30, 8, 6, 3, 24),
        "small-untied": lambda: (50, 16, 8, 2, 20, False),
    },
}

#: The mistakes the issue names explicitly; each must be in the catalogue.
REQUIRED_SLUGS = (
    "loss-summed", "gradient-missing-one-over-n", "divided-by-batch-only",
    "softmax-without-max-subtraction", "loss-without-max-subtraction",
    "softmax-over-first-axis", "loss-softmax-wrong-axis",
    "targets-not-shifted", "targets-shifted-by-two", "onehot-not-subtracted",
    "gradient-sign-flipped", "loss-log-base-2", "loss-log-base-10",
    "loss-averages-all-vocabulary", "logits-changed-in-place", "dw-transposed",
    "db-summed-over-one-axis", "dhidden-reshaped-wrong-order", "forward-differences",
    "input-not-restored", "rel-err-without-guard", "perplexity-exp-of-sum",
    "perplexity-inverse-mean-probability", "masked-divided-by-all-positions",
    "masked-gradient-leaks-into-padding", "causal-mask-blocks-diagonal",
    "causal-mask-transposed", "tied-matrix-counted-twice", "ffn-biases-dropped",
    "position-embeddings-dropped", "one-layernorm-per-block", "final-layernorm-added",
)


def _run(implementation: Callable, make_args: MakeArgs) -> tuple[Any, tuple]:
    """(output, arguments after the call); numpy warnings of overflowing mistakes silenced."""
    args = make_args()
    with np.errstate(all="ignore"):
        return implementation(*args), args


def _same(run_a: tuple[Any, tuple], run_b: tuple[Any, tuple]) -> bool:
    """Same output (value tolerance) and same arguments afterwards (tight tolerance)."""
    return (values_match(run_a[0], run_b[0])
            and values_match(run_a[1], run_b[1], rtol=ARGS_RTOL, atol=ARGS_ATOL))


def _exposing_sets(m) -> list[str]:
    """Input sets on which m runs and its result differs from the reference's.

    Sets where m raises are left out: they would fail a hidden test too, but
    the point here is a wrong *result* the diagnosis can recognize.
    """
    reference = getattr(solutions, m.function)
    exposing = []
    for label, make in INPUTS[m.function].items():
        try:
            result = _run(m.implementation, make)
        except Exception:
            continue
        if not _same(result, _run(reference, make)):
            exposing.append(label)
    return exposing


MISTAKE_IDS = list(MISTAKES)
FUNCTION_SETS = [(f, label) for f, sets in INPUTS.items() for label in sets]
ALTERNATIVE_CASES = [(alt, f, label) for alt, funcs in ALTERNATIVES.items()
                     for f in funcs for label in INPUTS[f]]


# --------------------------------------------------------------------------
# the catalogue itself
# --------------------------------------------------------------------------

def test_catalogue_is_large_and_covers_every_function():
    """Are there at least 36 mistakes, with every student function represented?"""
    assert len(MISTAKES) >= 36
    missing = [f for f in STUDENT_FUNCTIONS if not mistakes_for(f)]
    assert not missing, f"no mistakes catalogued for {missing}"
    assert set(INPUTS) == set(STUDENT_FUNCTIONS)


def test_catalogue_contains_the_issues_examples():
    """Is every mistake the issue names catalogued under its slug?"""
    assert [s for s in REQUIRED_SLUGS if s not in MISTAKES] == []


@pytest.mark.parametrize("slug", MISTAKE_IDS)
def test_mistake_metadata(slug):
    """Does each mistake have a kebab slug, a known function, a short title and a 1-3 sentence explanation?"""
    m = MISTAKES[slug]
    assert m.name == slug and re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", slug)
    assert m.function in STUDENT_FUNCTIONS
    assert 0 < len(m.title) <= 60 and len(m.title.split()) <= 8
    assert 60 <= len(m.explanation) <= 450
    sentences = re.findall(r"[.!?](?=\s|$)", m.explanation)
    assert 1 <= len(sentences) <= 3, m.explanation


@pytest.mark.parametrize("slug", MISTAKE_IDS)
def test_mistake_has_the_student_signature(slug):
    """Can a mistake stand in for the student's function (same parameters and defaults)?"""
    m = MISTAKES[slug]

    def shape(fn):
        return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]

    assert shape(m.implementation) == shape(getattr(solutions, m.function))


_HEADER = "from autograder.runtime.catalogue import mistake\n"


@pytest.mark.parametrize("body, error", [
    ('@mistake(function="softmax", title="t", explanation="e", name="twice")\ndef a(x, axis=-1): return x\n'
     '@mistake(function="softmax", title="t", explanation="e", name="twice")\ndef b(x, axis=-1): return x\n',
     "used twice"),
    ('@mistake(function="soft_max", title="t", explanation="e")\ndef a(x, axis=-1): return x\n',
     "not a function of"),
    ('@mistake(function="softmax", title="t", explanation="e", name="Bad_Slug")\ndef a(x, axis=-1): return x\n',
     "kebab"),
    ('@mistake(function="softmax", title=" ", explanation="e")\ndef a(x, axis=-1): return x\n', "title"),
])
def test_loading_rejects_bad_entries(tmp_path, body, error):
    """Are duplicate slugs, unknown functions, malformed slugs and empty titles refused when a catalogue loads?"""
    (tmp_path / "mistakes.py").write_text(_HEADER + body)
    with pytest.raises(CatalogueError, match=error):
        load_catalogue(tmp_path, f"bad-{len(body)}", ("softmax",))


def test_an_assignment_without_a_catalogue_has_an_empty_one(tmp_path):
    assert load_catalogue(tmp_path, "none", ("softmax",)).for_function("softmax") == []


# --------------------------------------------------------------------------
# every mistake loses points and is recognized
# --------------------------------------------------------------------------

@pytest.mark.parametrize("slug", MISTAKE_IDS)
def test_mistake_differs_from_reference(slug):
    """Does at least one standard input set expose the mistake (so a hidden test can fail it)?"""
    assert _exposing_sets(MISTAKES[slug]), f"{slug} agrees with the reference on every input set"


@pytest.mark.parametrize("slug", MISTAKE_IDS)
def test_diagnose_recognizes_mistake(slug):
    """Is the mistake named wherever it shows, and alone on at least one input set?"""
    m = MISTAKES[slug]
    diagnoses = {}
    for label in _exposing_sets(m):
        output, args_after = _run(m.implementation, INPUTS[m.function][label])
        diagnoses[label] = [d.name for d in diagnose(m.function, INPUTS[m.function][label], output,
                                                     student_args_after=args_after)]
        if nothing_finite(output) and not m.non_finite:
            # A result with no finite value is no evidence for a mistake that is not itself
            # an overflow: it must not be named there (it is, where its values are finite).
            assert slug not in diagnoses[label], f"{slug} named on {label} from a non-finite result alone"
            continue
        assert slug in diagnoses[label], f"{slug} not recognized on {label}: {diagnoses[label]}"
    assert any(set(names) - _ruled_out_beside(m) == {slug} for names in diagnoses.values()), \
        f"{slug} is never told apart from other mistakes: {diagnoses}"


def _ruled_out_beside(m) -> set[str]:
    """Mistakes a student who made ``m`` would have ruled out in a whole suite: on some input set
    ``m`` gives the right result (that test passes) while they do not."""
    reference = getattr(solutions, m.function)
    quiet = set(INPUTS[m.function]) - set(_exposing_sets(m))
    ruled = set()
    for other in MISTAKES.values():
        if other.function != m.function or other is m:
            continue
        for label in quiet:
            make = INPUTS[m.function][label]
            try:
                theirs = _run(other.implementation, make)
            except Exception:
                continue
            if not _same(theirs, _run(reference, make)):
                ruled.add(other.name)
                break
    return ruled


@pytest.mark.parametrize("function,label", FUNCTION_SETS)
def test_reference_is_never_diagnosed(function, label):
    """Does the reference's own result produce no diagnosis, with or without its arguments?"""
    make = INPUTS[function][label]
    output, args_after = _run(getattr(solutions, function), make)
    assert diagnose(function, make, output, student_args_after=args_after) == []
    assert diagnose(function, make, output) == []


def test_nan_result_is_recognized_as_overflow():
    """Is an overflowing softmax, whose result is nan, still matched (nan counts as equal)?"""
    make = INPUTS["softmax"]["large-offset"]
    output, _ = _run(MISTAKES["softmax-without-max-subtraction"].implementation, make)
    assert np.isnan(output).any()
    assert [m.name for m in diagnose("softmax", make, output)] == ["softmax-without-max-subtraction"]


def test_in_place_change_needs_the_arguments():
    """Is changing the logits in place recognized from the arguments, and only from them?"""
    make = INPUTS["cross_entropy_loss"]["small"]
    m = MISTAKES["logits-changed-in-place"]
    output, args_after = _run(m.implementation, make)
    assert not np.allclose(args_after[0], make()[0]), "the mistake must really change its argument"
    assert diagnose("cross_entropy_loss", make, output) == []   # output alone is correct
    found = diagnose("cross_entropy_loss", make, output, student_args_after=args_after)
    assert [d.name for d in found] == ["logits-changed-in-place"]
    # A different in-place change with the same (correct) output has the same cause.
    logits, targets = make()
    other = (2.0 * logits, targets)
    found = diagnose("cross_entropy_loss", make, output, student_args_after=other)
    assert [d.name for d in found] == ["logits-changed-in-place"]


def test_unrestored_input_is_recognized():
    """Does a numerical gradient that leaves x perturbed get named, including its changed x?"""
    make = INPUTS["numerical_gradient"]["cross-entropy"]
    output, args_after = _run(MISTAKES["input-not-restored"].implementation, make)
    assert not np.array_equal(args_after[1], make()[1])
    found = diagnose("numerical_gradient", make, output, student_args_after=args_after)
    assert "input-not-restored" in [d.name for d in found]


def test_diagnose_survives_crashing_mistakes_and_odd_outputs():
    """Do mistakes that raise on these inputs simply not match, and do odd outputs give no match?"""
    make = INPUTS["tied_lm_head"]["rectangular"]        # hidden @ E raises here
    output, _ = _run(MISTAKES["tied-head-returns-probabilities"].implementation, make)
    assert [m.name for m in diagnose("tied_lm_head", make, output)] == ["tied-head-returns-probabilities"]
    for odd in (None, "logits", object(), [1, 2, 3]):
        assert diagnose("tied_lm_head", make, odd) == []


def test_unknown_function_is_refused():
    """Is a misspelled function name an error rather than a silent empty diagnosis?"""
    with pytest.raises(ValueError):
        mistakes_for("cross_entropy")
    with pytest.raises(ValueError):
        diagnose("cross_entropy", INPUTS["cross_entropy_loss"]["small"], 0.0)


# --------------------------------------------------------------------------
# feedback
# --------------------------------------------------------------------------

def test_feedback_names_title_and_explanation():
    """Does the Markdown name each mistake's title with its explanation, and say nothing when none matched?"""
    assert feedback_for([]) == ""
    one = MISTAKES["loss-summed"]
    text = feedback_for([one])
    assert f"**{one.title}.**" in text and one.explanation in text
    two = [one, MISTAKES["gradient-missing-one-over-n"]]
    text = feedback_for(two)
    assert "several" in text and all(m.title in text for m in two)


def test_feedback_never_reveals_inputs_or_expected_values():
    """Is the feedback for a diagnosis the same whatever the inputs, and free of their numbers?"""
    texts = set()
    for label in ("small", "int32-targets"):
        make = INPUTS["cross_entropy_loss"][label]
        output, _ = _run(MISTAKES["loss-summed"].implementation, make)
        text = feedback_for(diagnose("cross_entropy_loss", make, output))
        expected_loss, _ = solutions.cross_entropy_loss(*make())
        assert f"{expected_loss:.3f}" not in text and f"{output[0]:.3f}" not in text
        texts.add(text)
    assert len(texts) == 1 and "Loss summed" in texts.pop()


# --------------------------------------------------------------------------
# the structural comparison
# --------------------------------------------------------------------------

@pytest.mark.parametrize("a,b,same", [
    ((1.0, np.array([1.0, np.nan])), [1.0 + 1e-9, np.array([1.0, np.nan])], True),
    (np.array([np.inf, 1.0]), np.array([np.nan, 1.0]), True),           # both overflowed
    (np.array([np.inf, 1.0]), np.array([1.0, np.inf]), False),          # at different places
    (np.array([True, False]), np.array([1.0, 0.0]), False),             # bool mask vs float
    (np.zeros((2, 3)), np.zeros((3, 2)), False),
    ({"a": 1, "b": 2}, {"a": 1, "b": 2}, True),
    ({"a": 1, "b": 2}, {"a": 1, "b": 3}, False),
    ({"a": 1}, {"a": 1, "b": 0}, False),
    (116534784, 116534785, False),                                      # integers are exact
    (np.float64(2.0), 2.0 * (1 + 1e-8), True),
    (float("nan"), 1.0, False),
    (print, len, True),                                                 # callables: not comparable
    (None, 0.0, False),
])
def test_values_match(a, b, same):
    """Does the structural comparison treat containers, non-finite values, bools and integers as intended?"""
    assert values_match(a, b) is same


# --------------------------------------------------------------------------
# alternative correct implementations keep full marks
# --------------------------------------------------------------------------

def _assert_like_reference(name: str, value: Any, expected: Any) -> None:
    """Judge with the hidden tests' own helpers: exact type, shape, dtype kind, then values."""
    if isinstance(expected, tuple):
        assert isinstance(value, tuple) and len(value) == len(expected), f"{name}: {type(value)}"
        for i, (v, e) in enumerate(zip(value, expected)):
            _assert_like_reference(f"{name}[{i}]", v, e)
    elif isinstance(expected, dict):
        assert isinstance(value, dict) and value.keys() == expected.keys(), name
        for k in expected:
            _assert_like_reference(f"{name}[{k!r}]", value[k], expected[k])
    elif isinstance(expected, np.ndarray):
        verdict = check_array(name, value, expected, exact=expected.dtype.kind in "biu")
        assert verdict.ok, verdict.message
    else:
        verdict = check_number(name, value, expected, integer=isinstance(expected, int))
        assert verdict.ok, verdict.message


def test_at_least_eight_alternatives():
    """Are there at least eight alternatives, each overriding real student functions?"""
    assert len(ALTERNATIVES) >= 8
    for funcs in ALTERNATIVES.values():
        assert funcs and set(funcs) <= set(STUDENT_FUNCTIONS)


@pytest.mark.parametrize("alternative,function,label", ALTERNATIVE_CASES)
def test_alternative_matches_reference(alternative, function, label):
    """Does the alternative give the reference's answer, leave its inputs alone, and escape diagnosis?"""
    make = INPUTS[function][label]
    implementation = ALTERNATIVES[alternative][function]
    output, args_after = _run(implementation, make)
    expected, _ = _run(getattr(solutions, function), make)
    _assert_like_reference(function, output, expected)
    assert values_match(args_after, make(), rtol=ARGS_RTOL, atol=ARGS_ATOL), "inputs were changed"
    assert diagnose(function, make, output, student_args_after=args_after) == []


def test_diagnose_copies_arguments_it_is_given():
    """With a make_args that returns the same arrays each time, do in-place mistakes leave them intact?"""
    args = INPUTS["cross_entropy_loss"]["small"]()
    before = [a.copy() for a in args]
    output, _ = _run(MISTAKES["loss-summed"].implementation, lambda: tuple(a.copy() for a in args))
    found = diagnose("cross_entropy_loss", lambda: args, output)
    assert [m.name for m in found] == ["loss-summed"]
    assert all(np.array_equal(a, b) for a, b in zip(args, before))

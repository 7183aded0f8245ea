"""No hidden test pays a submission that ignores its inputs, memorises answers or guesses.

Hidden inputs are drawn from the submission's seed, a keyed hash of its code, so a
resubmission with one comment changed meets new inputs. Here each student function of both
assignments is replaced, one at a time, by code that does not compute it, the other functions
staying right:

- constants of the right type and shape: 0, 1, other small numbers, typical values (a uniform
  softmax, a loss of log V) and the published answer (GPT-1's parameter counts);
- memorisers: the reference's answers to the inputs that are the same under every seed (what a
  student reads in the hidden tests' source), looked up by the exact input, by its shapes and
  sizes, or by its first element; and a classmate's answers (the reference's, under another seed)
  returned call by call, in order;
- coin flips: a random answer from a small set of valid ones (a random id below V, a random
  boolean mask, random offsets into the data).

Each is graded in-process over ``RESUBMISSIONS`` seeds, one per resubmission, and must pass no
test that the untouched stub (a function that raises) fails: it earns what the stub earns.
"""
from __future__ import annotations

import copy
import hashlib
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import pytest

import solutions
from autograder.build.spec import available_assignments, load_spec
from autograder.runtime.hidden_suite import HiddenSuite, hidden_test_path, rng_for_test
from autograder.runtime.judge import counting_evidence
from autograder.runtime.sandbox.channel import Named
from tests.suites import FUNCTIONS as STUDENT_FUNCTIONS
from tests.suites import reference_namespace

#: How many times each submission is resubmitted (each time with other hidden inputs).
RESUBMISSIONS = 20

Impl = Callable[..., Any]
#: Builds a fresh submission of one function for one resubmission: ``(function, seed) -> impl``
#: (fresh, since memorisers and coin flips keep state across the calls of one run).
Attacker = Callable[[str, int], Impl]


def _seed(label: str) -> int:
    """A submission seed as the grader makes them: 128 bits of a hash."""
    return int.from_bytes(hashlib.blake2b(label.encode(), digest_size=16).digest(), "big")


SEEDS = tuple(_seed(f"resubmission {i}") for i in range(RESUBMISSIONS))
#: Other submissions' seeds: the hidden inputs under them are what a memoriser may know.
RECORDED = (_seed("a classmate"), _seed("another classmate"))


@lru_cache(maxsize=None)
def _suite(function: str) -> HiddenSuite:
    """The hidden module of ``function``'s question, without the catalogue: naming mistakes
    changes feedback, never a verdict, and would make this test many times slower."""
    for name in available_assignments():
        spec = load_spec(name)
        for q in spec.questions:
            if function in q.functions:
                return HiddenSuite([hidden_test_path(spec.folder, q.name)])
    raise KeyError(function)


def _passed(function: str, impl: Impl, seed: int) -> frozenset[str]:
    run = _suite(function).run(reference_namespace({function: impl}), seed)
    return frozenset(o.test for o in run.items if o.passed)


def _stub(*args: Any) -> Any:
    raise NotImplementedError("the untouched stub")


@lru_cache(maxsize=None)
def _stub_passes(function: str, seed: int) -> frozenset[str]:
    """The tests the stub passes: those of the question's other function, which stays right."""
    return _passed(function, _stub, seed)


# ----------------------------------------------------------------- answers of the right type

def _reference(function: str) -> Impl:
    return getattr(solutions, function)


def _like(template: Any, leaf: Callable[[Any], Any]) -> Any:
    """``template`` (an answer of the reference) with every number replaced by ``leaf(number)``."""
    if isinstance(template, np.ndarray):
        return np.asarray(leaf(template)).astype(template.dtype)
    if isinstance(template, (tuple, list)):
        return type(template)(_like(t, leaf) for t in template)
    if isinstance(template, dict):
        return {k: _like(v, leaf) for k, v in template.items()}
    return type(template)(leaf(template))


def _constant(value: float) -> Callable[[Any], Any]:
    return lambda t: np.full(np.shape(t), value) if isinstance(t, np.ndarray) else value


def _constant_attacker(value: float) -> Attacker:
    """Every number of the answer is ``value``; only the answer's shape is read off the input."""
    def make(function: str, seed: int) -> Impl:
        reference = _reference(function)
        return lambda *args: _like(reference(*args), _constant(value))
    return make


#: Answers a student would guess without computing anything: the typical value of each function
#: on inputs of this shape, or the published one.
TYPICAL: dict[str, tuple[Impl, ...]] = {
    "softmax": (lambda x, axis=-1: np.full(np.shape(x), 1.0 / np.shape(x)[axis]),
                # All the mass on each row's largest score: right whenever the true answer is
                # one-hot to the tolerance, as it was for rows spanning -400 to 400.
                lambda x, axis=-1: (np.asarray(x) == np.max(x, axis=axis, keepdims=True)).astype(float)),
    "cross_entropy_loss": (lambda z, t: (float(np.log(np.shape(z)[-1])), np.zeros(np.shape(z))),),
    "masked_cross_entropy": (lambda z, t, m: (float(np.log(np.shape(z)[-1])), np.zeros(np.shape(z))),
                             lambda z, t, m: (0.0, np.zeros(np.shape(z)))),
    "greedy_next_token": (lambda h, W: 0, lambda h, W: 1, lambda h, W: 2, lambda h, W: 3,
                          lambda h, W: int(np.shape(W)[1]) - 1),
    "causal_mask": (lambda T: np.ones((T, T), dtype=bool), lambda T: np.eye(T, dtype=bool),
                    lambda T: np.zeros((T, T), dtype=bool), lambda T: np.triu(np.ones((T, T), dtype=bool))),
    "gpt_param_count": (lambda *a: solutions.gpt_param_count(40478, 512, 768, 12, 3072, True),
                        lambda *a: solutions.gpt_param_count(40478, 512, 768, 12, 3072, False)),
    "perplexity": (lambda p: 1.0, lambda p: float(np.e)),
    "max_rel_err": (lambda a, n: 1e-12, lambda a, n: 1.0),
}


def _typical_attacker(index: int) -> Attacker:
    def make(function: str, seed: int) -> Impl:
        return TYPICAL[function][index]
    return make


# ----------------------------------------------------------------- memorisers

def _exact_key(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, Named):
        return ("named", value.name, tuple(sorted((k, _exact_key(v)) for k, v in value.params.items())))
    if isinstance(value, (tuple, list)):
        return tuple(_exact_key(v) for v in value)
    return (type(value).__name__, repr(value))


def _size_key(value: Any) -> Any:
    """What the input's sizes say: array shapes and dtypes, whole numbers (T, V), names."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape)
    if isinstance(value, Named):
        return ("named", value.name)
    if isinstance(value, (tuple, list)):
        return tuple(_size_key(v) for v in value)
    if isinstance(value, (bool, int, np.integer)):
        return int(value)
    return type(value).__name__


def _first_element_key(args: tuple) -> Any:
    first = next((a.flat[0].item() for a in args if isinstance(a, np.ndarray) and a.size), None)
    return (_size_key(args), first)


KEYS: dict[str, Callable[[tuple], Any]] = {
    "exact input": _exact_key,
    "sizes": _size_key,
    "sizes and first element": _first_element_key,
}


@lru_cache(maxsize=None)
def _recorded(function: str) -> tuple[tuple[tuple[tuple, Any], ...], ...]:
    """Every call the hidden tests make of ``function`` under each of the ``RECORDED`` seeds,
    with the reference's answer, in order."""
    runs = []
    for seed in RECORDED:
        calls: list[tuple[tuple, Any]] = []
        reference = _reference(function)

        def recording(*args: Any) -> Any:
            out = reference(*args)
            calls.append((copy.deepcopy(args), copy.deepcopy(out)))
            return out
        _passed(function, recording, seed)
        runs.append(tuple(calls))
    return tuple(runs)


def _fallback(function: str, args: tuple) -> Any:
    """What a memoriser answers to an input it never saw: zeros of the right shape."""
    return _like(_reference(function)(*args), _constant(0))


@lru_cache(maxsize=None)
def _fixed_calls(function: str) -> tuple[tuple[tuple, Any], ...]:
    """The calls whose input is the same under both recorded seeds: inputs that do not depend on
    the seed, which a student can read off the hidden tests' source."""
    first, *others = _recorded(function)
    shared = set.intersection(*({_exact_key(args) for args, _ in calls} for calls in others))
    return tuple((args, out) for args, out in first if _exact_key(args) in shared)


def _table_attacker(key_name: str) -> Attacker:
    def make(function: str, seed: int) -> Impl:
        key = KEYS[key_name]
        table: dict[Any, Any] = {}
        for args, out in _fixed_calls(function):
            table.setdefault(key(args), out)

        def answer(*args: Any) -> Any:
            k = key(args)
            return copy.deepcopy(table[k]) if k in table else _fallback(function, args)
        return answer
    return make


def _replay_attacker(function: str, seed: int) -> Impl:
    """The n-th call gets the reference's answer to the n-th call under another seed: a classmate's
    answers, right wherever the hidden input does not depend on the seed, or barely varies."""
    answers = [out for _, out in _recorded(function)[0]]
    count = [0]

    def answer(*args: Any) -> Any:
        count[0] += 1
        n = count[0] - 1
        return copy.deepcopy(answers[n]) if n < len(answers) else _fallback(function, args)
    return answer


# ----------------------------------------------------------------- coin flips

def _coin_rng(function: str, seed: int) -> np.random.Generator:
    return np.random.default_rng([seed, len(function)])


def _coin_attacker(function: str, seed: int) -> Impl:
    """Every number of the answer drawn from {0, 1}; a boolean answer drawn entry by entry."""
    rng, reference = _coin_rng(function, seed), _reference(function)

    def flip(t: Any) -> Any:
        if isinstance(t, np.ndarray):
            return rng.integers(0, 2, size=t.shape)
        return rng.integers(0, 2).item()
    return lambda *args: _like(reference(*args), flip)


def _guess_attacker(function: str, seed: int) -> Impl:
    """A random answer among the few the function's input allows, where they are few."""
    rng = _coin_rng(function, seed)
    if function == "greedy_next_token":
        return lambda h, W: int(rng.integers(0, np.shape(W)[1]))
    if function == "causal_mask":
        shapes = (lambda T: np.ones((T, T), bool), lambda T: np.eye(T, dtype=bool),
                  lambda T: np.triu(np.ones((T, T), bool)), lambda T: np.zeros((T, T), bool))
        return lambda T: shapes[rng.integers(0, len(shapes))](T)
    if function == "next_token_batch":
        def offsets(data, ix, block_size):
            starts = rng.integers(0, len(data) - block_size, size=len(ix))
            xb = np.stack([data[s:s + block_size] for s in starts])
            return xb, np.stack([data[s + 1:s + block_size + 1] for s in starts])
        return offsets
    return _coin_attacker(function, seed)


ATTACKERS: dict[str, Attacker] = {
    **{f"constant {v:g}": _constant_attacker(v) for v in (0, 1, -1, 0.5)},
    **{f"memorised by {k}": _table_attacker(k) for k in KEYS},
    "memorised by call order": _replay_attacker,
    "coin flip": _coin_attacker,
    "random guess": _guess_attacker,
}


def _attackers_of(function: str) -> dict[str, Attacker]:
    typical = {f"typical answer {i}": _typical_attacker(i) for i in range(len(TYPICAL.get(function, ())))}
    return {**ATTACKERS, **typical}


@pytest.mark.parametrize("function", sorted(STUDENT_FUNCTIONS))
def test_no_submission_that_ignores_its_input_earns_a_point(function):
    won: dict[tuple[str, str], int] = {}
    for name, attacker in _attackers_of(function).items():
        for seed in SEEDS:
            for test in _passed(function, attacker(function, seed), seed) - _stub_passes(function, seed):
                won[name, test] = won.get((name, test), 0) + 1
    assert not won, f"{function}: tests passed without computing it:\n" + "\n".join(
        f"{name}: {test} in {n} of {RESUBMISSIONS} resubmissions" for (name, test), n in sorted(won.items()))


# ----------------------------------------------------------------- every test's answers move with the seed

QUESTIONS = tuple((name, q.name) for name in available_assignments() for q in load_spec(name).questions)


def _answers(suite: HiddenSuite, functions: tuple[str, ...], seed: int) -> dict[str, tuple]:
    """The reference's answers to every call each test of ``suite`` makes, under ``seed``."""
    answers: dict[str, tuple] = {}
    for case in suite.cases:
        seen: list = []

        def recording(name: str) -> Impl:
            reference = _reference(name)

            def answer(*args: Any) -> Any:
                out = reference(*args)
                seen.append((name, _exact_key(out)))
                return out
            return answer
        values = {"student": reference_namespace({f: recording(f) for f in functions}),
                  "rng": rng_for_test(seed, case.name)}
        with counting_evidence() as evidence:
            case.function(**{f: values[f] for f in case.fixtures}, **case.params)
        assert evidence[0], f"{case.name} passed no check with the reference"
        answers[case.name] = tuple(seen)
    return answers


@pytest.mark.parametrize("assignment, question", QUESTIONS)
def test_every_hidden_test_checks_an_answer_drawn_from_the_seed(assignment, question):
    """A test whose answers are the same for every submission can be passed from memory: each test
    must check at least one answer that changes with the seed (tests of a fixed case, such as an
    empty mask, check a drawn one beside it)."""
    spec = load_spec(assignment)
    suite = HiddenSuite([hidden_test_path(spec.folder, question)])
    functions = spec.question(question).functions
    first, second = (_answers(suite, functions, seed) for seed in RECORDED)
    assert all(first.values()), [t for t, calls in first.items() if not calls]
    fixed = [test for test in first if first[test] == second[test]]
    assert not fixed, f"{assignment} {question}: the same answers under two seeds: {fixed}"


# ----------------------------------------------------------------- the same, graded as submissions

#: Submissions as a student who reads the hidden tests' source would write them. Each defines only
#: the functions it attacks: the others are missing, as in an untouched notebook (which scores 0).
GRADED_ATTACKS: dict[str, dict[str, str]] = {
    "perplexity-and-parameters": {
        # The answers the hidden tests' source shows: masks for the T it names, zeros for an empty
        # mask, and the ids of the tied tokens in the order the test asks for them.
        "memorised": '''
import numpy as np
_MASKS = {T: np.triu(np.ones((T, T), dtype=bool), k=1) for T in (1, 2, 7, 64)}
_CALLS = []

def causal_mask(T):
    return _MASKS.get(T, np.zeros((T, T), dtype=bool)).copy()

def masked_cross_entropy(logits, targets, mask):
    return 0.0, np.zeros(np.shape(logits))

def greedy_next_token(h_last, W_head):
    _CALLS.append(1)
    return {5: 3, 6: 2}.get(len(_CALLS), 0)

def gpt_param_count(vocab_size, block_size, n_embd, n_layer, ffn_dim, tied=True):
    return {"embeddings": 31480320, "attention": 28348416, "ffn": 56669184, "layernorm": 36864,
            "lm_head": 0, "total": 116534784}
''',
        "constant": '''
import numpy as np

def greedy_next_token(h_last, W_head):
    return 0

def causal_mask(T):
    return np.zeros((T, T), dtype=bool)

def perplexity_from_loss(mean_nll):
    return 1.0
''',
        "guessed": '''
import numpy as np

def greedy_next_token(h_last, W_head):
    return int(np.random.randint(np.shape(W_head)[1]))

def causal_mask(T):
    return np.random.random((T, T)) < 0.5
''',
    },
    "lm-head": {
        # The one input the hidden tests' source showed: data = arange(40), block 9, offsets 0 and 30.
        "memorised": '''
import numpy as np

def next_token_batch(data, ix, block_size):
    if len(data) == 40 and block_size == 9 and list(ix) == [0, 30]:
        xb = np.array([np.arange(0, 9), np.arange(30, 39)]).astype(data.dtype)
        return xb, xb + 1
    return np.zeros((len(ix), block_size), data.dtype), np.zeros((len(ix), block_size), data.dtype)
''',
        "guessed": '''
import numpy as np

def next_token_batch(data, ix, block_size):
    starts = np.random.randint(0, len(data) - block_size, size=len(ix))
    xb = np.stack([data[s:s + block_size] for s in starts])
    return xb, np.stack([data[s + 1:s + block_size + 1] for s in starts])

def max_rel_err(a, n):
    return float(np.random.choice([0.0, 0.5, 0.7, 1.0]))
''',
    },
}
#: Resubmissions of each graded attack (one comment changed each time, so the seed changes).
GRADED_RESUBMISSIONS = 8


@pytest.fixture(scope="module")
def zips(tmp_path_factory):
    from autograder.build import build
    out = tmp_path_factory.mktemp("dist")
    return {r.name: r.autograder_zip for r in build(list(GRADED_ATTACKS), out, None, verify=False)}


@pytest.mark.slow
@pytest.mark.parametrize("assignment", sorted(GRADED_ATTACKS))
def test_graded_constants_memorisers_and_guesses_score_zero(zips, assignment, tmp_path):
    """Through ``grader grade`` (sandboxed workers, seeds from each submission's code), every
    resubmission of every attack scores what the untouched notebook scores: 0."""
    import csv

    from autograder.runtime.grading.bulk import grade_batch
    folder = tmp_path / "class"
    folder.mkdir()
    for name, source in GRADED_ATTACKS[assignment].items():
        for i in range(GRADED_RESUBMISSIONS):
            (folder / f"{name}_{i}.py").write_text(f"# resubmission {i}\n{source}", encoding="utf-8")
    grade_batch([folder], zips[assignment], tmp_path / "out", timeout=60)
    with open(tmp_path / "out" / "gradebook.csv", newline="", encoding="utf-8") as handle:
        book = {row["student"]: float(row["total"]) for row in csv.DictReader(handle)}
    assert len(book) == len(GRADED_ATTACKS[assignment]) * GRADED_RESUBMISSIONS, sorted(book)
    scored = {student: total for student, total in book.items() if total > 0}
    assert not scored, f"{assignment}: submissions that compute nothing scored points: {scored}"

"""Does a pair that shares whole functions score on that evidence, and is a pair sharing little still scored?

Synthetic classes of their own: every student writes each function with constants and library calls of
their own (so no two students' own code shares a k-gram), and the cases add, by construction, a partial
copy (two functions taken whole), students who wrote one long function alike, and a copy of one function
of eight."""
from __future__ import annotations

import random

import numpy as np

from autograder.similarity.compare import Settings, compare_class, document, function_floor, whole_function_evidence

OPS = ("exp", "log1p", "tanh", "sqrt", "abs", "sin", "cos", "arctan", "sinh", "cbrt", "square", "expm1")


def own_function(name: str, rng: random.Random) -> str:
    """A function of about forty tokens in a student's own words: their constants and their library calls."""
    c = [rng.randint(2, 10**6) for _ in range(4)]
    op1, op2 = rng.sample(OPS, 2)
    return (f"def {name}(x):\n    a = x * {c[0]} + {c[1]}\n    b = np.{op1}(a) - {c[2]}\n"
            f"    return float(np.sum(np.{op2}(b) * {c[3]}))\n")


def long_function(name: str, seed: int) -> str:
    """A function of about ninety tokens, the same for every student given the same seed."""
    rng = random.Random(seed)
    body = "".join(f"    t{i} = np.{rng.choice(OPS)}(x * {rng.randint(2, 10**6)}) + {rng.randint(2, 10**6)}\n"
                   for i in range(6))
    return f"def {name}(x):\n{body}    return t0 + t1 + t2 + t3 + t4 + t5\n"


def student(seed: int, functions: int = 6) -> dict[str, str]:
    rng = random.Random(seed)
    return {f"f{j}": own_function(f"f{j}", rng) for j in range(functions)}


def _compare(codes: dict[str, dict[str, str]]):
    docs = [document(name, ["import numpy as np\n", *fs.values()]) for name, fs in sorted(codes.items())]
    compared = compare_class(docs)
    return {(p.a, p.b): p.score for p in compared.pairs}


def test_a_partial_copy_of_two_whole_functions_ranks_above_students_who_wrote_one_long_function_alike():
    """B took two of A's six functions whole and wrote the rest; C, D and E wrote alone but one long
    function alike (held by three of the twenty). The copy's share of its unusual code is a third, less
    than C and D's share; what tells it is two whole functions of code no one else holds."""
    codes = {f"s{i:02d}": student(i) for i in range(20)}
    codes["b"] = {**student(100), "f0": codes["s00"]["f0"], "f1": codes["s00"]["f1"]}
    for seed, name in enumerate(("c", "d", "e"), start=200):
        codes[name] = {**student(seed, 4), "g": long_function("g", 7)}
    scores = _compare(codes)
    copy = scores[("b", "s00")]
    alike = max(scores[("c", "d")], scores[("c", "e")], scores[("d", "e")])
    assert copy > alike, (copy, alike)
    assert copy >= 0.6                     # flagged at the default threshold, as two whole functions are


def test_a_function_held_whole_weighs_its_rarest_code_and_only_when_held_whole():
    unusual = np.array([40.0, 40.0, 40.0, 8.0])            # (functions,) the last too short to count
    matched = np.array([[40.0, 39.0, 20.0, 8.0]])          # (partners, functions): held whole, whole, half, whole
    peaks = np.array([[1.0, 0.25, 1.0, 1.0]])              # the rarest code held in each
    assert whole_function_evidence(matched, peaks, unusual, Settings()).tolist() == [1.25]


def test_a_pair_sharing_one_function_of_eight_whole_is_scored():
    """B copied one of A's eight functions, an eighth of its code: the pair is scored (in the CSV), and on
    the function's evidence, above every pair of students who share nothing of their own."""
    codes = {f"s{i:02d}": student(i, 8) for i in range(20)}
    codes["b"] = {**student(100, 8), "f3": codes["s05"]["f3"]}
    scores = _compare(codes)
    assert ("b", "s05") in scores
    assert scores[("b", "s05")] == max(scores.values())


SHORT = "def g(x):\n    return np.tanh(x * 3) + np.exp(x) * 2\n"


def test_a_small_submission_sharing_one_short_function_takes_no_floor_from_it():
    """L wrote one short function and nothing else, alike with C and D (three of twenty-three hold it): the
    function is held whole, but it is a line of code, under the evidence every score rests on. The pair
    scores on what it shares, not at the floor of a function held whole (0.45 before the floor was scaled),
    while a partial copy of two whole functions stays flagged."""
    codes = {f"s{i:02d}": student(i) for i in range(20)}
    codes["b"] = {**student(100), "f0": codes["s00"]["f0"], "f1": codes["s00"]["f1"]}
    codes["lo"] = {"g": SHORT}
    for seed, name in enumerate(("c", "d"), start=300):
        codes[name] = {**student(seed, 5), "g": SHORT}
    scores = _compare(codes)
    assert max(scores[("c", "lo")], scores[("d", "lo")]) < 0.3, scores
    assert scores[("b", "s00")] >= 0.6


def test_the_function_floor_rests_on_the_evidence_tokens():
    settings = Settings()
    evidence = np.array([1.0, 1.0, 2.0])
    matched = np.array([settings.evidence_tokens, settings.evidence_tokens / 4, 3 * settings.evidence_tokens])
    assert function_floor(evidence, matched, settings).tolist() == [0.5, 0.2, 2 / 3]

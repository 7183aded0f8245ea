"""Do the question families produce sound, reproducible variants with correct answers?

Every family-level test is parametrized over the registry, so a new family is
tested the moment its module exists.
"""
from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import solutions
from autograder.runtime.tolerances import QUESTION_DISTRACTOR_GAP
from question_bank import families, generate_variant, get_family
from question_bank.choices import separated
from question_bank.errors import UnknownFamilyError
from question_bank.misconceptions import MISCONCEPTIONS
from question_bank.seeding import SEED_BITS, student_seed, variant_seed
from question_bank.shape_probe import ShapeProbe
from question_bank.variant import CHOICE_KINDS, answer_matches, canonical, to_json, validate_variant

ROOT = Path(__file__).resolve().parents[1]
FAMILY_NAMES = list(families())
SEEDS = [variant_seed(0, "tests", i) for i in range(40)]


@pytest.fixture(scope="module")
def variants() -> dict[str, list[dict]]:
    """40 variants of every family, generated once for the whole module."""
    return {name: [generate_variant(name, s) for s in SEEDS] for name in FAMILY_NAMES}


# --- the registry -------------------------------------------------------------

def test_registry_holds_at_least_18_families_with_one_line_summaries():
    assert len(FAMILY_NAMES) >= 18
    for name, fam in families().items():
        assert fam.name == name
        assert fam.summary.strip() and "\n" not in fam.summary
        assert fam.title.strip()


def test_every_family_lives_in_its_own_module():
    modules = [type(fam).__module__ for fam in families().values()]
    assert len(set(modules)) == len(modules)
    assert all(m.startswith("question_bank.families.") for m in modules)


def test_unknown_family_error_names_the_known_ones():
    with pytest.raises(UnknownFamilyError, match="chain-rule-joint"):
        get_family("no-such-family")


# --- per family, over the registry ---------------------------------------------

@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_same_seed_gives_identical_bytes(name):
    for seed in SEEDS[:5]:
        assert to_json(generate_variant(name, seed)) == to_json(generate_variant(name, seed))


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_different_seeds_give_different_variants(name, variants):
    stems = {to_json([v["parameters"], v["stem"]]) for v in variants[name]}
    assert len(stems) >= 10, f"{name}: only {len(stems)} distinct variants in {len(SEEDS)} seeds"


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_variant_records_family_version_and_seed(name, variants):
    for seed, variant in zip(SEEDS, variants[name]):
        assert variant["family"] == name
        assert variant["seed"] == seed
        assert variant["version"] == get_family(name).version
        # a part of a multi-part item adds its letter to the item's id
        suffix = f"-{variant['part']['label']}" if "part" in variant else ""
        assert variant["id"] == f"{name}-v{variant['version']}-{seed}{suffix}"


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_json_round_trip_and_canonical_form(name, variants):
    for variant in variants[name]:
        text = to_json(variant)
        assert json.loads(text) == variant
        assert canonical(variant) == variant
        assert to_json(json.loads(text)) == text


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_structure_is_valid(name, variants):
    for variant in variants[name]:
        assert validate_variant(variant) == [], variant["id"]


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_answer_verified_independently(name, variants):
    fam = get_family(name)
    for variant in variants[name]:
        assert fam.check(variant) == [], variant["id"]


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_independent_check_catches_a_wrong_answer(name, variants):
    """The check must be able to fail: a tampered answer is reported."""
    fam = get_family(name)
    for variant in variants[name][:10]:
        assert fam.check(_tamper(variant)) != [], f"{variant['id']}: tampered answer passed the check"


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_independent_check_does_not_use_solutions(name, variants, monkeypatch):
    """With every reference function replaced by one that raises, the checks still pass."""
    _poison_reference(monkeypatch)
    fam = get_family(name)
    for variant in variants[name][:10]:
        assert fam.check(variant) == [], variant["id"]


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_no_distractor_equals_the_answer(name, variants):
    for variant in variants[name]:
        answer = variant["answer"]
        correct_values = [c["value"] for c in variant["choices"] if c["correct"]]
        for choice in variant["choices"]:
            if choice["correct"]:
                continue
            if answer["kind"] in CHOICE_KINDS:
                assert choice["value"] not in correct_values, variant["id"]
            else:
                assert not answer_matches(answer, choice["value"]), variant["id"]
                assert separated(choice["value"], answer["value"], QUESTION_DISTRACTOR_GAP), variant["id"]


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_every_distractor_names_a_misconception_with_feedback(name, variants):
    for variant in variants[name]:
        for choice in variant["choices"]:
            if choice["correct"]:
                assert choice["misconception"] is None
            else:
                assert choice["misconception"]["id"] in MISCONCEPTIONS
                assert choice["misconception"]["name"] == MISCONCEPTIONS[choice["misconception"]["id"]].name
                assert choice["feedback"].strip()


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_correct_choice_lands_in_every_position(name, variants):
    seen = {i for v in variants[name] for i, c in enumerate(v["choices"]) if c["correct"]}
    width = min(len(v["choices"]) for v in variants[name])
    assert set(range(width)) <= seen, f"{name}: correct choice never at some of {width} positions"


@pytest.mark.parametrize("name", FAMILY_NAMES)
def test_generators_use_no_global_randomness(name):
    """Reseeding numpy's global generator between calls changes nothing."""
    np.random.seed(1)
    first = to_json(generate_variant(name, 11))
    np.random.seed(2)
    assert to_json(generate_variant(name, 11)) == first


def test_generation_is_identical_in_a_fresh_process():
    """Seeds must not depend on per-process state such as Python's salted hash()."""
    code = ("from question_bank import generate_variant, family_names; "
            "from question_bank.seeding import variant_seed; from question_bank.variant import to_json; "
            "import sys; sys.stdout.write(''.join(to_json(generate_variant(n, variant_seed(5, n, 0))) "
            "for n in family_names()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         env={"PYTHONHASHSEED": "123", "PATH": "", "PYTHONPATH": str(ROOT)})
    here = "".join(to_json(generate_variant(n, variant_seed(5, n, 0))) for n in FAMILY_NAMES)
    assert out.stdout == here


# --- the independent checks reproduce the course's printed numbers ----------------

def _check(name, parameters, value):
    return get_family(name).check({"parameters": parameters, "answer": {"value": value}, "choices": []})


def test_checks_reproduce_the_course_numbers():
    assert _check("chain-rule-joint", {"probs": [0.4, 0.6, 0.5], "ask": "probability"}, 0.12) == []
    assert _check("chain-rule-joint", {"probs": [0.4, 0.6, 0.5], "ask": "log"}, -2.1202635362) == []
    assert _check("bigram-vs-full", {"full": [0.4, 0.6, 0.5], "bigram": [0.4, 0.3, 0.2],
                                     "ask": "bigram_probability"}, 0.024) == []
    assert _check("perplexity-from-probs", {"probs": [0.8, 0.5, 0.25]}, 2.15443469003) == []
    assert _check("uniform-baseline", {"vocab_size": 24, "ask": "loss_nats"}, 3.17805383035) == []
    seed_logits = [[2, 0, -1], [0, 1, 2], [1, 0, 2]]
    ce = _check("shifted-cross-entropy", {"logits": seed_logits, "tokens": [0, 1, 2]}, 1.288725992)
    assert ce == []
    assert _check("causal-mask", {"ask": "blocked_count", "T": 5}, 10) == []
    gpt1 = {"vocab_size": 40478, "block_size": 512, "n_embd": 768, "n_layer": 12, "ffn_dim": 3072, "tied": True}
    for component, count in {"embeddings": 31_480_320, "attention": 28_348_416, "ffn": 56_669_184,
                             "layernorm": 36_864, "total": 116_534_784}.items():
        assert _check("param-count", {**gpt1, "component": component}, count) == []
    assert _check("param-count", {**gpt1, "tied": False, "component": "lm_head"}, 31_087_104) == []


def test_checks_reject_a_course_number_that_is_off():
    assert _check("perplexity-from-probs", {"probs": [0.8, 0.5, 0.25]}, 2.1544) != []
    assert _check("causal-mask", {"ask": "blocked_count", "T": 5}, 15) != []


# --- building blocks --------------------------------------------------------------

@pytest.mark.parametrize("B,T,C,V", [(2, 3, 4, 5), (1, 7, 3, 2), (3, 1, 6, 4)])
def test_shape_probe_agrees_with_real_arrays(B, T, C, V):
    rng = np.random.default_rng(0)
    hidden, W, b = rng.standard_normal((B, T, C)), rng.standard_normal((C, V)), rng.standard_normal(V)
    dlogits = rng.standard_normal((B, T, V))
    real = [solutions.lm_head(hidden, W, b), *solutions.lm_head_backward(hidden, W, dlogits),
            solutions.tied_lm_head(hidden, W.T)]
    probes = [ShapeProbe(hidden.shape), ShapeProbe(W.shape), ShapeProbe(b.shape), ShapeProbe(dlogits.shape)]
    fake = [solutions.lm_head(*probes[:3]), *solutions.lm_head_backward(probes[0], probes[1], probes[3]),
            solutions.tied_lm_head(probes[0], probes[1].T)]
    assert [r.shape for r in real] == [f.shape for f in fake]


def test_shape_probe_rejects_mismatched_products():
    with pytest.raises(ValueError, match="mismatch"):
        ShapeProbe((2, 3, 4)) @ ShapeProbe((5, 4))


def test_seeds_are_stable_bounded_and_separate_families():
    seeds = {variant_seed(0, name, i) for name in FAMILY_NAMES for i in range(50)}
    assert len(seeds) == 50 * len(FAMILY_NAMES)
    assert all(0 <= s < 2 ** SEED_BITS for s in seeds)
    assert variant_seed(3, "x", 1) == variant_seed(3, "x", 1) != variant_seed(4, "x", 1)


def test_student_seed_depends_on_id_salt_and_seed():
    base = student_seed("s1", "salt")
    assert base == student_seed("s1", "salt")
    assert len({base, student_seed("s2", "salt"), student_seed("s1", "pepper"), student_seed("s1", "salt", 1)}) == 4


def test_canonical_rounds_floats_and_rejects_non_finite():
    assert canonical({"x": np.float64(0.1) + np.float64(0.2), "t": (1, np.int64(2))}) == {"x": 0.3, "t": [1, 2]}
    with pytest.raises(ValueError):
        canonical(float("nan"))


def test_validate_variant_reports_a_distractor_equal_to_the_answer():
    variant = generate_variant("perplexity-from-probs", 1)
    broken = copy.deepcopy(variant)
    wrong = next(c for c in broken["choices"] if not c["correct"])
    wrong["value"] = broken["answer"]["value"] * (1 + 1e-4)
    assert any("accepted as the answer" in p for p in validate_variant(broken))


def test_validate_variant_reports_a_distractor_without_misconception():
    broken = copy.deepcopy(generate_variant("causal-mask", 2))
    next(c for c in broken["choices"] if not c["correct"])["misconception"] = None
    assert any("misconception" in p for p in validate_variant(broken))


def test_answer_matches_uses_the_tolerance():
    answer = generate_variant("perplexity-from-probs", 3)["answer"]
    assert answer_matches(answer, answer["value"] * (1 + 0.5 * answer["rtol"]))
    assert not answer_matches(answer, answer["value"] * (1 + 2 * answer["rtol"]))


# --- helpers ----------------------------------------------------------------------

def _tamper(variant: dict) -> dict:
    """A copy of ``variant`` whose answer is wrong but still well-typed."""
    bad = copy.deepcopy(variant)
    answer = bad["answer"]
    kind = answer["kind"]
    if kind == "float":
        answer["value"] = answer["value"] * 1.5 + 1.0
    elif kind == "integer":
        answer["value"] += 1
    elif kind == "shape":
        answer["value"] = answer["value"] + [1]
    elif kind == "true_false":
        answer["value"] = not answer["value"]
        for choice in bad["choices"]:
            choice["correct"] = not choice["correct"]
    elif kind in ("ordering", "matching"):
        # two steps (or two items' options) swapped: every choice keeps its mark
        answer["value"][0], answer["value"][1] = answer["value"][1], answer["value"][0]
    else:
        # move the "correct" mark from the first correct choice to the first wrong one
        right = next(c for c in bad["choices"] if c["correct"])
        wrong = next(c for c in bad["choices"] if not c["correct"])
        right["correct"], wrong["correct"] = False, True
        ids = sorted(c["id"] for c in bad["choices"] if c["correct"])
        answer["value"] = ids if kind == "multiple_choice" else ids[0]
    return bad


def _poison_reference(monkeypatch) -> None:
    """Replace every function of ``solutions`` (and any alias imported from it) with one that raises."""
    def boom(*args, **kwargs):
        raise AssertionError("an independent check called the reference solutions")

    for module in [m for name, m in sys.modules.items() if name == "solutions" or name.startswith("solutions.")]:
        for attr, value in list(vars(module).items()):
            if callable(value) and getattr(value, "__module__", "").startswith("solutions"):
                monkeypatch.setattr(module, attr, boom)
    for name, module in list(sys.modules.items()):
        if name.startswith("question_bank"):
            for attr, value in list(vars(module).items()):
                if callable(value) and getattr(value, "__module__", "").startswith("solutions"):
                    monkeypatch.setattr(module, attr, boom)

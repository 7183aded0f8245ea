"""The blind similarity benchmark's metrics (benchmarks/similarity_vs_peers.py), checked on one class
of the blind corpus (tests/similarity_blind/) generated afresh: scorers whose figures are known
exactly, so a broken metric cannot pass off a tool's ranking as better or worse than it is."""
from __future__ import annotations

import hashlib
import itertools
import random

import pytest

from benchmarks.similarity_vs_peers import (Truth, copies_above_every_other, generate_class, group_pairs_above_every_other,
                                            precision_at_k, roc_auc, starter_below_copies)

# sha256 over the sorted (name, content) of every file of lmhead-a-20 as the generator first wrote it.
LMHEAD_A_20 = "1fd61bcea4a1e002c56259ad15a4355de1ed18b2cdf07a6b92908af55651ab12"


@pytest.fixture(scope="module")
def small_class(tmp_path_factory):
    return generate_class("lmhead-a-20", tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def truth(small_class):
    return Truth.read(small_class / "truth.json")


def test_the_class_is_generated_as_the_generator_first_wrote_it(small_class, truth):
    digest = hashlib.sha256()
    for f in sorted(small_class.iterdir()):
        digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    assert digest.hexdigest() == LMHEAD_A_20
    assert len(truth.students) == 20 and len(truth.pairs()) == 190
    assert truth.groups and all(len(g) == 3 for g in truth.groups) and truth.starter_only


def brute_auc(scores, positives, pairs):
    """AUC by comparing every positive with every negative, ties counting half."""
    pos = [scores.get(p, 0.0) for p in pairs if p in positives]
    neg = [scores.get(p, 0.0) for p in pairs if p not in positives]
    return sum((a > b) + 0.5 * (a == b) for a, b in itertools.product(pos, neg)) / (len(pos) * len(neg))


def test_a_perfect_scorer_gets_every_figure_right(truth):
    pairs = truth.pairs()
    perfect = {p: 1.0 for p in truth.copies}              # every other pair left out: score 0
    assert roc_auc(perfect, truth.copies, pairs) == 1.0
    assert precision_at_k(perfect, truth.copies, pairs) == 1.0
    assert copies_above_every_other(perfect, truth.copies, pairs) == len(truth.copies)
    assert all(group_pairs_above_every_other(perfect, truth, g) for g in truth.groups)
    assert starter_below_copies(perfect, truth) is True


def test_an_inverted_scorer_gets_every_figure_wrong(truth):
    pairs = truth.pairs()
    inverted = {p: 0.0 if p in truth.copies else 1.0 for p in pairs}
    assert roc_auc(inverted, truth.copies, pairs) == 0.0
    assert precision_at_k(inverted, truth.copies, pairs) == 0.0
    assert copies_above_every_other(inverted, truth.copies, pairs) == 0
    assert not any(group_pairs_above_every_other(inverted, truth, g) for g in truth.groups)
    assert starter_below_copies(inverted, truth) is False


def test_a_random_scorer_averages_half_and_ties_count_half(truth):
    pairs = truth.pairs()
    aucs = []
    for seed in range(300):
        r = random.Random(seed)
        scores = {p: r.choice([0.0, 0.25, 0.5, 0.75, 1.0]) for p in pairs}   # many ties
        auc = roc_auc(scores, truth.copies, pairs)
        assert auc == pytest.approx(brute_auc(scores, truth.copies, pairs), abs=1e-12)
        aucs.append(auc)
    assert sum(aucs) / len(aucs) == pytest.approx(0.5, abs=0.02)
    assert roc_auc({}, truth.copies, pairs) == 0.5                        # every pair tied at 0


def test_precision_at_k_counts_the_k_best_and_shares_ties(truth):
    pairs = truth.pairs()
    k = len(truth.copies)
    copies = sorted(truth.copies)
    others = [p for p in pairs if p not in truth.copies]
    half = k // 2
    # the best k: `half` copies and k - half others, each pair with its own score
    scores = {p: 2.0 + i for i, p in enumerate(copies[:half] + others[:k - half])}
    scores.update({p: 1.0 for p in copies[half:]})
    assert precision_at_k(scores, truth.copies, pairs) == pytest.approx(half / k)
    # nothing scored: the k places are drawn from all pairs, so they hold k * k / N copies
    assert precision_at_k({}, truth.copies, pairs) == pytest.approx(k / len(pairs))

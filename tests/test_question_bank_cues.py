"""Answer cues: content-blind players over the printed choices find the key no more often than chance.

A file of its own (the full stress run is another): the test processes each take whole files, so
the two long parts of the question bank's checks run side by side.
"""
from __future__ import annotations

from functools import lru_cache

import pytest

from question_bank.cues import PLAYERS, CueTally, choice_number, plain
from question_bank.registry import families as _families
from question_bank.stress import stress_family

#: Variants per family in the cue test, and its seed (the issue's measurement used these).
CUE_N, CUE_SEED = 200, 99

#: Sub-questions whose choices still give the key away. Each is an expected failure, strict, so
#: fixing one turns its test into an error until it leaves this list. None is left: the last, the
#: uniform baseline's perplexity (its key V, a whole number, was the shortest printed choice), now
#: prints every choice in one scientific form.
STILL_CUED: set[str] = set()


@lru_cache(maxsize=None)
def _cue_row(family: str):
    return stress_family(family, CUE_N, CUE_SEED)


def _cue_cases():
    for name, fam in _families().items():
        for sub in fam.subquestions():
            label = f"{name}/{sub}" if sub else name
            marks = [pytest.mark.xfail(strict=True, reason="choices still cue the key")] if label in STILL_CUED else []
            yield pytest.param(name, sub, id=label, marks=marks)


@pytest.mark.parametrize("family, sub", list(_cue_cases()))
def test_no_content_blind_player_beats_chance(family, sub):
    row = _cue_row(family)
    cued = [(player, f"{s.hits:.0f}/{s.applied}") for cue_sub, player, s in row.cues.cues() if cue_sub == sub]
    assert not cued, f"{family}/{sub}: players finding the key from the choices alone: {cued}"


def test_players_find_a_key_that_is_always_the_smallest_or_the_most_alike():
    tally = CueTally()
    for k in range(60):
        key = 10 + k
        texts = [f"${key}$", f"${key + 7}$", f"${2 * key}$", f"${3 * key}$"]
        tally.add("", {"choices": [{"text": t, "correct": i == 0} for i, t in enumerate(texts)]})
        alike = ["(4, 8, 24)", "(8, 4, 24)", "(4, 8, 12)", "(4, 24, 8)"]
        tally.add("shape", {"choices": [{"text": t, "correct": i == 0} for i, t in enumerate(alike)]})
    found = {(sub, player) for sub, player, _ in tally.cues()}
    assert ("", "smallest") in found and ("shape", "alike-text") in found
    assert ("", "largest") not in found


def test_players_read_printed_numbers():
    assert choice_number("$116{,}534{,}784$") == 116534784
    assert choice_number("$1.200 \\times 10^{-5}$") == pytest.approx(1.2e-5)
    assert choice_number("$-0.0552$") == -0.0552
    assert choice_number("`(4, 8, 24)`") == 768
    assert choice_number("query 2, key 3") is None
    assert set(PLAYERS) >= {"smallest", "largest", "sign-pair", "central-value", "alike-text", "longest", "all-none"}


def test_a_played_place_gets_no_more_than_chance_when_some_place_is_out_of_reach():
    """No set makes the key the longest: the shortest place still gets a quarter, not a third."""
    import numpy as np

    from question_bank.choice_balance import PLAYED_PLACES, place_target
    reached = np.array([True, True, True, False])
    target = place_target(reached, PLAYED_PLACES[1])        # the length order: shortest and longest played
    assert target[0] == pytest.approx(0.25) and target[3] == 0
    assert target.sum() == pytest.approx(1.0) and target[1] == target[2] == pytest.approx(0.375)
    # the value order plays every rank, so the reached ranks share evenly
    assert place_target(reached, PLAYED_PLACES[0]) == pytest.approx([1 / 3, 1 / 3, 1 / 3, 0])


def _tally(texts_per_variant, sub=""):
    tally = CueTally()
    for texts in texts_per_variant:
        tally.add(sub, {"choices": [{"text": t, "correct": i == 0} for i, t in enumerate(texts)]})
    return {(s, player) for s, player, _ in tally.cues()}


def test_the_hub_player_finds_a_key_every_distractor_is_one_slip_of():
    """Each distractor the key with one slip (sign, bits, per-token): the key is the one value linked
    to all; with a wrong value's own slips among the choices, it is not."""
    import math
    hub_sets, mixed_sets = [], []
    for k in range(40):
        x = 0.3 + 0.037 * k
        hub_sets.append([f"${x:.4g}$", f"${-x:.4g}$", f"${x / math.log(2):.4g}$", f"${x / 4:.4g}$"])
        # per-token in bits: one slip from the per-token value and from the bits value, not from the key
        mixed_sets.append([f"${x:.4g}$", f"${x / 4:.4g}$", f"${x / (4 * math.log(2)):.4g}$",
                           f"${-x / (4 * math.log(2)):.4g}$"])
    assert ("", "hub") in _tally(hub_sets)
    assert ("", "hub") not in _tally(mixed_sets)


def test_group_players_find_the_half_the_larger_and_the_complete_text():
    halves = [[f"${n * 10}$", f"${n * 20}$", f"${n * 7 + 3}$", f"${n * 13 + 1}$"] for n in range(1, 41)]
    close = [[f"${n * 1000 + 64}$", f"${n * 1000}$", f"${n * 3000}$", f"${n * 7}$"] for n in range(1, 41)]
    texts = [[f"`'abc{n}x'`", f"`'abc{n}'`", f"`'zq{n}yy'`", f"`'kk{n}pp'`"] for n in range(40)]
    signs = [[f"${n + 1.5}$", f"${-(n + 1.5)}$", f"${n + 7.25}$", f"${n + 9.75}$"] for n in range(40)]
    assert ("", "half-of-double") in _tally(halves)
    assert ("", "close-larger") in _tally(close)
    assert ("", "completed-text") in _tally(texts)
    assert ("", "sign-majority") in _tally(signs)


def test_the_draw_sees_the_group_players_as_the_cue_players_play_them():
    """The balance's group-player hits, computed for every candidate set at once, equal the share
    the same-named player of cues puts on the key."""
    import numpy as np

    from question_bank.choice_balance import _Features, candidate_sets
    from question_bank.cues import (close_larger_player, completed_text_player, half_of_double_player,
                                    sign_majority_player, sign_pair_player)
    numeric = ["$120$", "$-120$", "$240$", "$60$", "$-60$", "$124$", "$7$", "$-240$", "$118$"]
    textual = ["`'the bay'`", "`'the ba'`", "`' the ba'`", "`'he bay'`", "`'he ba'`", "`'e bay w'`"]
    for texts, players in ((numeric, (sign_pair_player, half_of_double_player, close_larger_player,
                                      sign_majority_player)),
                           (textual, (completed_text_player,))):
        features = _Features(texts)
        sets = candidate_sets(len(texts) - 1, 3, lambda a, b: True)
        members = np.array([[0, *(i + 1 for i in s)] for s in sets])
        hits = features.pick_hits(members)
        order = {sign_pair_player: 0, half_of_double_player: 1, close_larger_player: 2,
                 completed_text_player: 3, sign_majority_player: 4}
        for player in players:
            hit, applies = hits[order[player]]
            for row, m in enumerate(members):
                pick = player([texts[i] for i in m])
                assert applies[row] == (sum(pick) > 0), (player.__name__, [texts[i] for i in m])
                assert hit[row] == pytest.approx(pick[0]), (player.__name__, [texts[i] for i in m])


def test_choices_printed_at_one_length_tie_and_keep_their_values():
    """A small negative key among positive and larger mistakes prints longest at four figures;
    at one length every text ties, x and -x print the same figures, and each reads back as its value."""
    from question_bank.choices import at_common_width
    from question_bank.cues import choice_number, longest_player, shortest_player
    from question_bank.formatting import num_tex, printed_error
    from question_bank.variant import Option

    key = -0.052283
    values = [0.052283, 0.94772, -1.8951, 4.0, 0.0006068, -0.1568]
    wrong = [Option(value=v, text=num_tex(v), correct=False) for v in values]
    before = [num_tex(key), *(o.text for o in wrong)]
    assert longest_player(before[:4])[0] == 1.0          # the cue: -0.05228 is the longest text
    key_text, reprinted = at_common_width(key, wrong)
    texts = [key_text, *(o.text for o in reprinted)]
    assert len({len(plain(t)) for t in texts}) == 1
    assert longest_player(texts[:4]) == shortest_player(texts[:4]) == [0.0] * 4
    assert plain(texts[0]).lstrip("-") == plain(texts[1]).lstrip("+")
    for text, value in zip(texts, [key, *values]):
        assert choice_number(text) == pytest.approx(value, abs=printed_error(value))
    assert at_common_width(1.0, [Option(value=1e-11, text=num_tex(1e-11), correct=False)]) is None


def test_choices_at_one_length_carry_a_sign_only_where_a_shown_choice_is_negative():
    """The pool holds a negative mistake, so every value is printed signed; a drawn set of positive
    choices drops the signs (a zero among them too keeps the common length), a set with the negative
    keeps them."""
    import numpy as np

    from question_bank.choices import at_common_width, numeric_options
    from question_bank.formatting import num_tex
    from question_bank.variant import Option

    key = 2.3456
    values = [-2.3456, 0.0, 3.384, 1.0187, 10.43, 0.4263, 5.5]
    key_text, wrong = at_common_width(key, [Option(value=v, text=num_tex(v), correct=False) for v in values])
    assert key_text.startswith("$+")
    seen = set()
    for seed in range(60):
        shown = numeric_options(np.random.default_rng(seed), key, key_text, wrong, "Correct.")
        texts = [o.text for o in shown]
        negative = any(float(o.value) < 0 for o in shown)
        seen.add(negative)
        assert len({len(plain(t)) for t in texts}) == 1, texts
        assert any(t.startswith("$+") for t in texts) == negative, texts
        for option in shown:
            assert choice_number(option.text) == pytest.approx(float(option.value), abs=1e-3)
    assert seen == {True, False}


#: Families whose numeric choices print at one length (:func:`question_bank.choices.at_common_width`, or the
#: uniform baseline's perplexity in one scientific form): printed at four figures, a value's place
#: (below 1, from 1 to 999, a whole number, negative) set its length, and the shortest or longest text
#: found the key at 1,000 variants (the practice guide's figures).
ONE_LENGTH_FAMILIES = ("perplexity-from-probs", "shifted-cross-entropy", "perplexity-cross-entropy",
                       "softmax-values", "uniform-baseline")


@pytest.mark.parametrize("family", ONE_LENGTH_FAMILIES)
def test_numeric_choices_print_at_one_length(family):
    """Nearly every variant's choices have one printed length (a few cannot: a whole number short of
    the width by one place, a mistake too small for a dozen characters)."""
    from question_bank.generate import generate_variant
    from question_bank.seeding import variant_seed

    variants = [generate_variant(family, variant_seed(7, "one-length", i)) for i in range(80)]
    tied = [len({len(plain(c["text"])) for c in v["choices"]}) == 1 for v in variants]
    assert sum(tied) >= 0.8 * len(tied), (family, sum(tied))


def test_mistake_parts_read_single_and_double_formulas():
    from question_bank.cues import mistake_parts
    assert mistake_parts(None) is None
    assert mistake_parts("teacher-forcing/training/predicted-input") == {"predicted-input"}
    assert mistake_parts("teacher-forcing/training/predicted-input+input-as-target") == {
        "predicted-input", "input-as-target"}


def _tally_of_sets(sets):
    """A tally over variants whose choices are the key and wrong choices carrying the given mistakes."""
    tally = CueTally()
    for k, wrong in enumerate(sets):
        texts = [f"${100 + k}$", *(f"${200 + 10 * k + j}$" for j in range(len(wrong)))]
        mistakes = [{"text": t, "formula": "fam/" + "+".join(parts)} for t, parts in zip(texts[1:], wrong)]
        choices = [{"text": t, "correct": i == 0} for i, t in enumerate(texts)]
        tally.add("", {"choices": choices, "mistakes": mistakes})
    return {player: score for sub, player, score in tally.cues()}


def test_the_mistake_hub_finds_a_key_every_distractor_is_one_mistake_from():
    # the key with one mistake each: every distractor is one mistake from the key alone
    found = _tally_of_sets([[("a",), ("b",), ("c",)]] * 40)
    assert "mistake-hub" in found and found["mistake-hub"].rate == 1.0


def test_the_mistake_hub_is_at_chance_on_squares_and_decoy_hubs():
    # a square: every choice is one mistake from two others; a decoy: one distractor is the hub
    square = [("a",), ("b",), ("a", "b")]
    decoy = [("a",), ("a", "b"), ("a", "c")]
    assert "mistake-hub" not in _tally_of_sets([square, decoy] * 30)


def test_the_draw_keeps_the_key_off_the_mistake_hub_where_the_pool_allows():
    import numpy as np
    from question_bank.choice_balance import candidate_sets, fitted_weights
    from question_bank.cues import structure_links
    pool = ["$40$", "$61$", "$47$", "$56$", "$73$", "$35$", "$66$"]
    parts = [frozenset(p) for p in ("a", "b", "c", "d", "ab", "ac", "bd")]
    sets = candidate_sets(len(pool), 3, lambda a, b: True)

    def key_on_hub(weights):
        share = 0.0
        for weight, chosen in zip(weights, sets):
            degrees = structure_links([(frozenset(),), *((parts[i],) for i in chosen)]).sum(axis=1)
            top = np.flatnonzero(degrees == degrees.max())
            share += weight * (0 in top) / len(top)
        return share

    blind = key_on_hub(fitted_weights("$50$", pool, sets))
    seeing = key_on_hub(fitted_weights("$50$", pool, sets, [(p,) for p in parts]))
    # chance is a quarter; a uniform draw of these sets gives 0.43, a draw blind to the mistakes 0.31
    assert seeing < blind - 0.03 and seeing < 0.25 + 0.02


def test_a_choice_two_pairs_of_mistakes_reach_is_one_mistake_from_the_singles_of_both():
    from question_bank.cues import structure_links
    key, a, b = (frozenset(),), (frozenset({"a"}),), (frozenset({"b"}),)
    both_ways = (frozenset({"a", "c"}), frozenset({"b", "c"}))
    links = structure_links([key, a, b, both_ways])
    assert links[1, 3] and links[2, 3] and not links[0, 3]
    assert not structure_links([key, a, b, (frozenset({"a", "c"}),)])[2, 3]


#: Families whose key the mistake hub found in every variant, or nearly, while each wrong choice carried
#: one mistake (200 variants, seed 99: greedy-next-token 200/200, lm-head-shapes 22/22 to 30/30 per
#: quantity, scored-positions 156/200, softmax-values masked 44/75, head-gradient-values dlogits_row
#: 25/59); their choices with two or three mistakes keep it at chance (the cue test above).
HUB_FAMILIES = ("greedy-next-token", "lm-head-shapes", "scored-positions", "softmax-values", "head-gradient-values")


@pytest.mark.parametrize("family", HUB_FAMILIES)
def test_the_mistake_hub_reads_the_choices_where_it_once_found_the_key(family):
    # the cue test passes a player that abstains everywhere: it must have had choices to pick from
    hub = [scores["mistake-hub"] for scores in _cue_row(family).cues.scores.values()]
    assert sum(score.applied for score in hub) >= CUE_N // 2, [score.applied for score in hub]


def test_the_mistake_hub_matches_a_choice_reprinted_at_one_length_by_its_value():
    # a family printing every choice at one length lists its mistakes in their ordinary printing
    from question_bank.cues import choice_parts
    variant = {"choices": [{"text": "$0.2500$", "value": 0.25, "correct": True},
                           {"text": "$0.5000$", "value": 0.5, "correct": False},
                           {"text": "$1.0000$", "value": 1.0, "correct": False}],
               "mistakes": [{"text": "$0.5$", "value": 0.5, "formula": "fam/q/double", "also": ["fam/q/half+twice"]},
                            {"text": "$1$", "value": 1.0, "formula": "fam/q/double+twice"}]}
    assert choice_parts(variant) == [(frozenset(),), (frozenset({"double"}), frozenset({"half", "twice"})),
                                     (frozenset({"double", "twice"}),)]
    variant["choices"][2]["value"] = 2.0
    assert choice_parts(variant)[2] is None


#: Families that print every choice at one length while listing their mistakes in ordinary printing:
#: the mistake hub read their choices as unknown and abstained (chain-rule-joint's probability, where
#: it finds the key 84 times in 104 at 300 variants, seed 99, was read in 20 of 1,000 variants).
ONE_LENGTH_FAMILIES = ("chain-rule-joint", "bigram-vs-full", "perplexity-cross-entropy", "perplexity-from-probs")


@pytest.mark.parametrize("family", ONE_LENGTH_FAMILIES)
def test_the_mistake_hub_reads_choices_printed_at_one_length(family):
    hub = [scores["mistake-hub"] for scores in _cue_row(family).cues.scores.values()]
    assert sum(score.applied for score in hub) >= CUE_N // 2, [score.applied for score in hub]

"""Greedy decoding: the next word from the last position's hidden state."""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import N_DISTRACTORS, known_mistakes, numeric_options, reaching_paths
from question_bank.cues import structure_links
from question_bank.errors import Redraw
from question_bank.families._common import WORDS, check_equal, correct_choices
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft, Option
from solutions import greedy_next_token


def _unique_top(scores: np.ndarray, largest: bool = True) -> int:
    """Index of the single largest (or smallest) score; a tie makes the question ambiguous."""
    target = scores.max() if largest else scores.min()
    winners = np.flatnonzero(scores == target)
    if len(winners) != 1:
        raise Redraw("tied scores")
    return int(winners[0])


def _word(f: dict, scores: np.ndarray, largest: bool = True) -> str:
    return f["vocab"][_unique_top(scores, largest)]


#: Every wrong word this family knows; ``h`` and ``W`` are the hidden states and head as arrays.
MISTAKES = register_mistakes("greedy-next-token", [
    ("first-state", "first-position-state", "argmax h[0] W", lambda f: _word(f, f["h"][0] @ f["W"]),
     "That uses the first position's state; the next token after the sequence comes from the last one."),
    ("second-to-last-state", "off-by-one-alignment", "argmax h[-2] W", lambda f: _word(f, f["h"][-2] @ f["W"]),
     "The state before the last predicts the token that is already at the last position."),
    ("mean-state", "mean-of-states", "argmax mean(h) W", lambda f: _word(f, f["h"].mean(axis=0) @ f["W"]),
     "That averages the states; greedy decoding reads the last position only."),
    ("argmin", "lowest-logit-wins", "argmin h[-1] W", lambda f: _word(f, f["h"][-1] @ f["W"], largest=False),
     "That is the lowest logit; greedy decoding takes the highest."),
])
#: The hidden state read as if it were the logits (no head applied): its largest entry's index c taken
#: as the token. Only the first C words can come out, so it is offered where that entry is unique.
HIDDEN_AS_LOGITS = register_mistakes("greedy-next-token", [
    ("hidden-as-logits", "hidden-is-logits", "vocab[argmax h[-1]]", lambda f: _word(f, f["h"][-1]),
     "That takes the largest entry of the hidden state itself; the hidden state is not a score per word, "
     "the logits are h W_head, one per word."),
])
MISTAKES.update(HIDDEN_AS_LOGITS)
#: Two mistakes at once: a wrong state with the lowest score, or with no head. With single mistakes
#: only, the key is one mistake from every other choice and each of them from the key alone, so
#: the reader who spots the one-slip relations finds it every time (200 in 200, stress -n 200
#: --seed 99); a word two mistakes away shares a mistake with a single, and some sets then have
#: another choice as linked as the key, or more.
register_double_mistakes("greedy-next-token", MISTAKES, [
    ("first-state", "argmin", "argmin h[0] W", lambda f: _word(f, f["h"][0] @ f["W"], largest=False)),
    ("second-to-last-state", "argmin", "argmin h[-2] W", lambda f: _word(f, f["h"][-2] @ f["W"], largest=False)),
    ("mean-state", "argmin", "argmin mean(h) W", lambda f: _word(f, f["h"].mean(axis=0) @ f["W"], largest=False)),
    ("first-state", "hidden-as-logits", "vocab[argmax h[0]]", lambda f: _word(f, f["h"][0])),
    ("second-to-last-state", "hidden-as-logits", "vocab[argmax h[-2]]", lambda f: _word(f, f["h"][-2])),
    ("mean-state", "hidden-as-logits", "vocab[argmax mean(h)]", lambda f: _word(f, f["h"].mean(axis=0))),
    ("hidden-as-logits", "argmin", "vocab[argmin h[-1]]", lambda f: _word(f, f["h"][-1], largest=False)),
])
#: The mistakes a tie leaves undefined are left out of a variant rather than redrawing it (the four
#: first ones still redraw: every variant offers them).
OPTIONAL = [name for name in MISTAKES if "+" in name or name == "hidden-as-logits"]


def hub_can_miss_key(key_text: str, wrong: list[Option], k: int = N_DISTRACTORS) -> bool:
    """Whether some set of ``k`` distinct wrong words leaves the key off the mistake hub: the choices one
    mistake from the most others (:func:`question_bank.cues.structure_links`) do not include it. The draw fits the key's place in that
    order over the sets a variant offers; with three to five distinct words it often offers one set,
    or only sets where the key is the hub, and no fit then brings the reader back to chance.
    """
    usable = [option for option in known_mistakes(key_text, wrong) if option.text != key_text]
    parts = reaching_paths(usable, wrong)
    if any(p is None for p in parts):
        return True
    for chosen in itertools.combinations(range(len(parts)), k):
        members = [(frozenset(),), *(parts[i] for i in chosen)]
        degrees = structure_links(members).sum(axis=1)
        top = degrees == degrees.max()
        # a set where every choice ties (a square, or no links) shows the reader nothing: the fit
        # cannot use it to bring the sets that do show back to chance
        if not top[0]:
            return True
    return False


def _defined(names: list[str], facts: dict[str, Any]) -> list[str]:
    """``names`` without the optional mistakes whose scores tie in this variant (no single word comes out)."""
    kept = []
    for name in names:
        try:
            MISTAKES[name].compute(facts)
        except Redraw:
            if name not in OPTIONAL:
                raise
            continue
        kept.append(name)
    return kept


@register_family
class GreedyNextToken(Family):
    name = "greedy-next-token"
    version = 6  # v6: two-mistake words, the hidden state read as logits, V of 6 to 8, and only variants whose words can leave the key off the mistake hub; v5: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Greedy next token"
    summary = "Pick the greedy next word from hidden states and W_head: argmax of the last position's logits."
    tags = ("decoding", "lm-head")

    def build(self, rng: np.random.Generator) -> Draft:
        T = int(rng.integers(2, 6))
        C = int(rng.integers(2, 5))
        V = int(rng.integers(6, 9))
        hidden = rng.integers(-3, 4, size=(T, C))                  # (T, C)
        W_head = rng.integers(-2, 3, size=(C, V))                  # (C, V)
        vocab = [WORDS[int(k)] for k in rng.choice(len(WORDS), size=V, replace=False)]
        last_logits = hidden[-1] @ W_head                          # (V,)
        _unique_top(last_logits)
        chosen = vocab[greedy_next_token(hidden[-1], W_head)]
        parameters = {"hidden": hidden.tolist(), "W_head": W_head.tolist(), "vocab": vocab}
        facts = self.facts(parameters)
        wrong = wrong_options(MISTAKES, _defined(list(MISTAKES), facts), facts, lambda word: f"`{word}`")
        if not hub_can_miss_key(f"`{chosen}`", wrong):
            raise Redraw("every set of these wrong words has the key as the choice one mistake from the most others")
        options = numeric_options(rng, chosen, f"`{chosen}`", wrong, "Correct: argmax of the last position's logits.")
        h_rows = [[t] + [int(v) for v in hidden[t]] for t in range(T)]
        w_rows = [[f"$c = {c}$"] + [int(v) for v in W_head[c]] for c in range(C)]
        h_header = ["position"] + [f"$h_{{\\cdot,{c}}}$" for c in range(C)]
        stem = (f"The final transformer block returns these hidden states for a prompt of T = {T} tokens "
                f"(width C = {C}):\n\n{fmt.table(h_header, h_rows)}"
                f"\n\nThe head has no bias and `W_head` (C x V) is\n\n"
                f"{fmt.table([''] + [f'`{w}`' for w in vocab], w_rows)}\n\n"
                "Which word does greedy decoding produce next?")
        logits_text = ", ".join(f"`{w}`: {int(z)}" for w, z in zip(vocab, last_logits))
        solution = (f"Only the last position's state predicts the token after the prompt: "
                    f"$h_{{{T - 1}}}$ = {[int(v) for v in hidden[-1]]}. "
                    f"Its logits $h_{{{T - 1}}} W_\\text{{head}}$ are "
                    f"{logits_text}. The largest is `{chosen}`; softmax would not change the winner, because it "
                    "is monotonic.")
        answer = Answer(kind="single_choice", value=None, display=f"`{chosen}`")
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The hidden states and head weights as arrays."""
        return {**parameters, "h": np.asarray(parameters["hidden"]), "W": np.asarray(parameters["W_head"])}

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        h_last, W, vocab = p["hidden"][-1], p["W_head"], p["vocab"]
        scores = [sum(h_last[c] * W[c][v] for c in range(len(h_last))) for v in range(len(vocab))]
        (correct,) = correct_choices(variant)
        return check_equal(correct["value"], vocab[scores.index(max(scores))], "correct choice")

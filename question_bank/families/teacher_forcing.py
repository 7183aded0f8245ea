"""Teacher forcing in training against feeding back outputs in generation."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from question_bank.choices import numeric_options
from question_bank.families._common import WORDS, check_equal, correct_choices, word_run
from question_bank.errors import Redraw
from question_bank.mistakes import mistake_formula, register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft, Option

START = "<s>"


def _code(tokens: list[str]) -> str:
    return "`" + " ".join(tokens) + "`"


def _pair_text(value: list[str]) -> str:
    """An (input, target) pair as a choice."""
    return f"input `{value[0]}`, target `{value[1]}`"


def _other_word(rng: np.random.Generator, avoid: str) -> str:
    """A corpus word different from ``avoid`` (a wrong prediction)."""
    while True:
        word = WORDS[int(rng.integers(len(WORDS)))]
        if word != avoid:
            return word



def _wrong_word_as_long(rng: np.random.Generator, avoid: str) -> str:
    """A corpus word different from ``avoid`` and as long, where the corpus has one (a wrong generated token).

    A generated token prints where the reference token would; of two sequences that differ only there,
    the longer text would otherwise be the one with the longer words, whichever is the key.
    """
    alike = [word for word in WORDS if len(word) == len(avoid) and word != avoid]
    return alike[int(rng.integers(len(alike)))] if alike else _other_word(rng, avoid)


#: Every wrong value this family knows. Training: ``t`` the position, ``x`` the inputs,
#: ``predicted`` the model's argmax; generation: ``prompt`` and ``generated`` so far.
MISTAKES = register_mistakes("teacher-forcing", [
    ("training/predicted-input", "teacher-forcing-feeds-predictions", "(predicted[t-1], w[t])",
     lambda f: [f["predicted"][f["position"] - 1], f["tokens"][f["position"]]],
     "Teacher forcing feeds the observed token, not the model's previous prediction."),
    ("training/target-as-input", "target-leak", "(w[t], w[t])",
     lambda f: [f["tokens"][f["position"]], f["tokens"][f["position"]]],
     "The position would be given the token it must predict."),
    ("training/input-as-target", "targets-equal-inputs", "(x[t], x[t])",
     lambda f: [f["inputs"][f["position"]], f["inputs"][f["position"]]],
     "The target is the next token, not the input token itself."),
    ("generation/reference-fed", "generation-uses-ground-truth", "prompt + reference[:k]",
     lambda f: f["prompt"] + f["tokens"][f["prompt_length"]:f["prompt_length"] + len(f["generated"])],
     "At generation there is no reference text; the model reads its own outputs."),
    ("generation/prompt-only", "generation-ignores-own-output", "prompt", lambda f: list(f["prompt"]),
     "Each generated token is appended to the input."),
    ("generation/next-reference-fed", "target-leak", "prompt + generated + reference[k]",
     lambda f: f["prompt"] + f["generated"] + [f["tokens"][f["prompt_length"] + len(f["generated"])]],
     "The next reference token is what would be predicted; it is not available as input."),
    ("generation/newest-not-fed", "generation-ignores-own-output", "prompt + generated[:k-1]",
     lambda f: f["prompt"] + f["generated"][:-1],
     "The newest generated token is appended to the input before the next step, like every one before it."),
    ("generation/reference-then-newest", "generation-uses-ground-truth", "prompt + reference[:k-1] + generated[k-1]",
     lambda f: f["prompt"] + f["tokens"][f["prompt_length"]:f["prompt_length"] + len(f["generated"]) - 1]
     + f["generated"][-1:],
     "The earlier generated tokens are swapped for the reference; at generation there is no reference text, so "
     "every input after the prompt is the model's own output."),
])

# Two mistakes at once: with one-mistake distractors only, the key shares its input with one
# choice and its target with the others, so it is the choice most alike to the rest.
register_double_mistakes("teacher-forcing", MISTAKES, [
    ("training/predicted-input", "training/input-as-target", "(predicted[t-1], x[t])",
     lambda f: [f["predicted"][f["position"] - 1], f["inputs"][f["position"]]]),
    ("training/target-as-input", "training/input-as-target", "(w[t], x[t])",
     lambda f: [f["tokens"][f["position"]], f["inputs"][f["position"]]]),
    ("generation/reference-fed", "generation/next-reference-fed", "prompt + reference[:k+1]",
     lambda f: f["prompt"] + f["tokens"][f["prompt_length"]:f["prompt_length"] + len(f["generated"]) + 1]),
    ("generation/prompt-only", "generation/next-reference-fed", "prompt + reference[k]",
     lambda f: f["prompt"] + [f["tokens"][f["prompt_length"] + len(f["generated"])]]),
    ("generation/reference-fed", "generation/newest-not-fed", "prompt + reference[:k-1]",
     lambda f: f["prompt"] + f["tokens"][f["prompt_length"]:f["prompt_length"] + len(f["generated"]) - 1]),
    # the same sequence reached from the other corner of the third square: the earlier generated tokens
    # swapped for the reference, and the newest not fed back (one mistake from each of those two)
    ("generation/reference-then-newest", "generation/newest-not-fed", "prompt + reference[:k-1]",
     lambda f: f["prompt"] + f["tokens"][f["prompt_length"]:f["prompt_length"] + len(f["generated"]) - 1]),
])

#: How far from the asked position a miscounted position lies, and the words for it in feedback.
_NEIGHBOURS = {-3: "three before", -2: "two before", -1: "one before", 1: "one after", 2: "two after",
               3: "three after"}


def _position_pair(d: int) -> Callable[[dict[str, Any]], list[str]]:
    """The (input, target) pair of position t+d."""
    return lambda f: [f["inputs"][f["position"] + d], f["tokens"][f["position"] + d]]


# Another position's (input, target): a real indexing slip, and, like the key, two neighbouring words
# of the sentence. Every other training mistake pairs words the sentence never puts side by side
# (a word with itself, a prediction before a word), so a reader who knows the language picks the one
# natural pair; shown beside three neighbours' pairs the key is one of four.
def _position_name(d: int) -> str:
    """The formula name of position t+d's pair: one step per position counted wrong, so the pair two
    positions after is one step from the pair one after (``after1+after2``), as a reader lining the
    pairs up sees it (:func:`question_bank.cues.structure_links`)."""
    side = "after" if d > 0 else "before"
    return "training/" + "+".join(f"{side}{k}" for k in range(1, abs(d) + 1))


register_mistakes("teacher-forcing", [
    (_position_name(d), "another-position", f"(x[t{d:+d}], w[t{d:+d}])", _position_pair(d),
     f"That is the pair of the position {words} ({{position}}{d:+d}); position {{position}} reads token "
     "{position} of the input row, `<s>` at position 0, and is scored on the token after it.")
    for d, words in _NEIGHBOURS.items()
])

#: The positions shown: four neighbours in a row, the asked one at each place alike. A reader who
#: lines the pairs up sees one chain of four (each target the next pair's input) every time, so no
#: place in it (an end, the middle, the pair linked to both sides) is the key's more than one time in four.
CHAIN = 4


#: The choice sets of generation, as the mistakes shown beside the key, and how often each is drawn.
#: Each is a square in mistake space, {key, m1(key), m2(key), m1(m2(key))}: m1 feeds the reference
#: instead of the generated tokens (all of them, or all but the newest), m2 is one token more (the next
#: reference token leaked) or one fewer (the newest generated token not fed back). Every choice is one
#: token from one other and shares its length with one other, so no choice is the centre. The key is
#: the short corner of the first square and the long corner of the other two, drawn as often, so the
#: longest and the shortest text are the key one time in four.
SQUARES: tuple[tuple[float, tuple[str, ...]], ...] = (
    (0.5, ("generation/next-reference-fed", "generation/reference-fed",
           "generation/reference-fed+next-reference-fed")),
    (0.25, ("generation/newest-not-fed", "generation/reference-fed", "generation/reference-fed+newest-not-fed")),
    (0.25, ("generation/newest-not-fed", "generation/reference-then-newest",
            "generation/reference-fed+newest-not-fed")),
)


#: Tokens generated so far. Three, so that the two squares look alike: with two, the second square's
#: short sequences (prompt + one generated token, prompt + one reference token) differ in one token
#: while the first square's differ in none that way, and the key's corner could be told by that.
GENERATED = 3


@register_family
class TeacherForcing(Family):
    name = "teacher-forcing"
    version = 8  # v8: a miscounted position is one step per position from its neighbour (the mistake hub reads the chain), and the third square's far corner is reached from both its sides; v7: the key is no longer the centre of its choices: training shows four neighbouring positions' pairs, generation a square of mistakes
    title = "Teacher forcing and generation"
    summary = "What the model reads at a position in teacher-forced training, or at a step of generation."
    tags = ("training", "decoding", "alignment")
    subquestion_key = "mode"
    subquestion_values = ("training", "generation")

    def build(self, rng: np.random.Generator) -> Draft:
        if rng.random() < 0.5:
            return self._training(rng, word_run(rng, int(rng.integers(5, 9))))
        return self._generation(rng, word_run(rng, int(rng.integers(GENERATED + 3, 9))))

    def _training(self, rng: np.random.Generator, words: list[str]) -> Draft:
        n = len(words)
        first = int(rng.integers(1, n - CHAIN + 1))       # the chain of shown positions, each with a real input
        t = first + int(rng.integers(CHAIN))              # the asked position, at a random place in it
        inputs = [START] + words[:-1]                     # x
        # The model's argmax prediction at each position; wrong at t-1 so the trap is visible.
        predicted = [w if rng.random() < 0.5 else _other_word(rng, w) for w in words]
        predicted[t - 1] = _other_word(rng, words[t - 1])
        text = _pair_text
        correct_value = [inputs[t], words[t]]                # (input, target) of position t
        parameters = {"mode": "training", "tokens": words, "predicted": predicted, "position": t}
        wrong = self._wrong(parameters, text)
        shown = {f"teacher-forcing/{_position_name(j - t)}" for j in range(first, first + CHAIN) if j != t}
        drawn = [option for option in wrong if option.formula in shown]
        if len({tuple(correct_value), *(tuple(option.value) for option in drawn)}) < CHAIN:
            raise Redraw("two positions hold the same pair of words")
        options = numeric_options(rng, correct_value, text(correct_value), drawn,
                                  "Correct: observed input, next observed token as target.")
        stem = (f"A GPT is trained with teacher forcing on the sequence {_code([START] + words)}. In one "
                f"forward pass its argmax predictions at positions 0..{n - 1} were {_code(predicted)}. "
                f"Position 0 holds `{START}`. What input does position {t} receive, and what is its target?")
        solution = (f"Teacher forcing feeds the observed sequence, shifted: inputs {_code(inputs)}, targets "
                    f"{_code(words)}. Position {t} therefore reads `{inputs[t]}` and is scored against "
                    f"`{words[t]}`, whatever the model predicted before. All positions are scored in one "
                    "masked, parallel pass.")
        return Draft(parameters=parameters,
                     stem=stem, answer=Answer(kind="single_choice", value=None, display=text(correct_value)),
                     options=options, solution=solution, mistakes=wrong)

    def _generation(self, rng: np.random.Generator, words: list[str]) -> Draft:
        n = len(words)
        p = int(rng.integers(2, n - GENERATED))           # prompt length; leaves k + 1 reference tokens
        k = GENERATED                                     # tokens generated so far
        prompt = [START] + words[:p]
        generated = [_wrong_word_as_long(rng, w) for w in words[p:p + k]]
        correct_value = prompt + generated
        parameters = {"mode": "generation", "tokens": words, "prompt_length": p, "generated": generated}
        wrong = self._wrong(parameters, _code)
        square = SQUARES[int(rng.choice(len(SQUARES), p=[weight for weight, _ in SQUARES]))][1]
        shown = {f"teacher-forcing/{name}" for name in square}
        drawn = [option for option in wrong if option.formula in shown]
        options = numeric_options(rng, correct_value, _code(correct_value), drawn,
                                  "Correct: the prompt followed by everything generated so far.")
        stem = (f"A trained GPT generates from the prompt {_code(prompt)}. The reference text "
                f"continues {_code(words[p:])}, but greedy decoding has produced {_code(generated)} so far. "
                f"Which sequence does the model read to produce its next token?")
        solution = (f"Generation is autoregressive: every chosen token is appended and fed back, so the input "
                    f"is {_code(correct_value)}. The reference continuation is used only in training (teacher "
                    "forcing), where it supplies both inputs and targets.")
        return Draft(parameters=parameters,
                     stem=stem, answer=Answer(kind="single_choice", value=None, display=_code(correct_value)),
                     options=options, solution=solution, mistakes=wrong)

    def _wrong(self, parameters: dict[str, Any], render: Callable[[Any], str]) -> list[Option]:
        names = [k for k in MISTAKES if k.startswith(parameters["mode"] + "/")]
        options = wrong_options(MISTAKES, names, self.facts(parameters), render)
        if parameters["mode"] == "training":
            t, n = parameters["position"], len(parameters["tokens"])
            options += [mistake_formula(f"teacher-forcing/{_position_name(d)}").option(
                self.facts(parameters), render) for d in _NEIGHBOURS if 1 <= t + d < n]
        return options

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The inputs of teacher forcing, or the prompt of generation."""
        words = parameters["tokens"]
        if parameters["mode"] == "training":
            return {**parameters, "inputs": [START] + words[:-1]}
        return {**parameters, "prompt": [START] + words[:parameters["prompt_length"]]}

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        (correct,) = correct_choices(variant)
        words = p["tokens"]
        if p["mode"] == "training":
            t = p["position"]
            expected = [(START if t == 0 else words[t - 1]), words[t]]
        else:
            expected = [START] + words[:p["prompt_length"]] + p["generated"]
        problems = check_equal(correct["value"], expected, "correct choice")
        if p["mode"] == "generation" and any(g == r for g, r in zip(p["generated"], words[p["prompt_length"]:])):
            problems.append("a generated token equals the reference, so the question is ambiguous")
        return problems


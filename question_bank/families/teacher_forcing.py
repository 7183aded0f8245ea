"""Teacher forcing in training against feeding back outputs in generation."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from question_bank.choices import numeric_options
from question_bank.families._common import WORDS, check_equal, correct_choices, word_run
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
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
])


@register_family
class TeacherForcing(Family):
    name = "teacher-forcing"
    version = 6  # v6: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Teacher forcing and generation"
    summary = "What the model reads at a position in teacher-forced training, or at a step of generation."
    tags = ("training", "decoding", "alignment")
    subquestion_key = "mode"
    subquestion_values = ("training", "generation")

    def build(self, rng: np.random.Generator) -> Draft:
        words = word_run(rng, int(rng.integers(5, 9)))
        if rng.random() < 0.5:
            return self._training(rng, words)
        return self._generation(rng, words)

    def _training(self, rng: np.random.Generator, words: list[str]) -> Draft:
        n = len(words)
        t = int(rng.integers(1, n))                       # a position with a real previous token
        inputs = [START] + words[:-1]                     # x
        # The model's argmax prediction at each position; wrong at t-1 so the trap is visible.
        predicted = [w if rng.random() < 0.5 else _other_word(rng, w) for w in words]
        predicted[t - 1] = _other_word(rng, words[t - 1])
        text = _pair_text
        correct_value = [inputs[t], words[t]]                # (input, target) of position t
        parameters = {"mode": "training", "tokens": words, "predicted": predicted, "position": t}
        wrong = self._wrong(parameters, text)
        options = numeric_options(rng, correct_value, text(correct_value), wrong,
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
        p = int(rng.integers(2, n - 2))                   # prompt length; leaves >= 2 reference tokens
        k = int(rng.integers(1, min(3, n - p - 1) + 1))   # tokens generated so far
        prompt = [START] + words[:p]
        generated = [_other_word(rng, w) for w in words[p:p + k]]
        correct_value = prompt + generated
        parameters = {"mode": "generation", "tokens": words, "prompt_length": p, "generated": generated}
        wrong = self._wrong(parameters, _code)
        options = numeric_options(rng, correct_value, _code(correct_value), wrong,
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
        return wrong_options(MISTAKES, names, self.facts(parameters), render)

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


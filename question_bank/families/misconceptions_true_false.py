"""True or false: statements built around the course's dangerous misconceptions."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft, Option


@dataclass(frozen=True)
class Statement:
    """A claim in a correct and an incorrect phrasing.

    Attributes:
        misconception: catalogue id of the belief the false phrasing states.
        true_text: a correct statement.
        false_text: the misconception stated as a fact.
        explanation: why the false phrasing is wrong.
    """

    misconception: str
    true_text: str
    false_text: str
    explanation: str


STATEMENTS = (
    Statement("chain-rule-assumes-independence",
              "The chain rule $p(w_{1:T}) = \\prod_i p(w_i \\mid w_{<i})$ holds exactly for any sequence, "
              "with no independence assumption.",
              "The chain rule of probability only holds when the words of a sentence are independent.",
              "The chain rule follows from the definition of conditional probability. Independence would "
              "replace each $p(w_i \\mid w_{<i})$ by $p(w_i)$: a different, extra assumption."),
    Statement("probability-is-truth",
              "A language model can assign a false sentence a higher probability than a true one.",
              "If a language model gives a sentence a high probability, the sentence is true.",
              "Probability measures how well a sentence fits what the model learned, not whether it is a fact."),
    Statement("last-state-sees-future",
              "In a causal decoder, the hidden state at the last position depends only on tokens at or before it.",
              "The hidden state at the last position of a causal decoder has also seen the tokens after it.",
              "The mask lets position j see keys k <= j only; nothing after the last input exists for it to see."),
    Statement("tied-counted-twice",
              "With tied weights, the output projection adds no parameters beyond the token embedding table.",
              "With tied weights, the output projection still adds another V x d parameters to the count.",
              "Tied means the same matrix is used twice, so it is counted once."),
    Statement("merges-equal-vocab",
              "A BPE tokenizer's number of merges and its vocabulary size are different numbers.",
              "A BPE tokenizer trained with 40,000 merges has exactly 40,000 vocabulary entries.",
              "The vocabulary holds the base alphabet and special tokens besides one token per merge "
              "(GPT-1: 40,000 merges, 40,478 entries)."),
    Statement("l1-l2-are-norms",
              "In GPT-1's objective $L_3 = L_2 + \\lambda L_1$, both $L_1$ and $L_2$ are log-likelihoods.",
              "In GPT-1's objective $L_3 = L_2 + \\lambda L_1$, $L_1$ and $L_2$ are weight-norm penalties.",
              "$L_2$ is the supervised log-likelihood of the labels and $L_1$ the language-model "
              "log-likelihood; the names only look like norm penalties."),
    Statement("decoder-cannot-classify",
              "A decoder-only model can be fine-tuned to classify by putting a classifier on its final position.",
              "A decoder-only model cannot be used for classification.",
              "The final position has attended to every input token, so its state can feed a classifier."),
    Statement("perplexity-across-tokenizers",
              "Perplexities of models with different tokenizers are not directly comparable.",
              "A lower perplexity means a better model even when the two models use different tokenizers.",
              "Perplexity is per token; changing the tokenizer changes what is being predicted."),
    Statement("mask-alone-prevents-leakage",
              "If the labels are not shifted by one, a causal mask cannot stop a position from seeing its target.",
              "A causal mask prevents leakage of the answer even when the labels are not shifted by one.",
              "Without the shift, the target is the current token, which sits in the position's own "
              "residual stream; the mask only hides later positions."),
    Statement("training-is-sequential",
              "With teacher forcing, a transformer scores every position of a training sequence in one "
              "parallel pass.",
              "Because generation is sequential, transformer training must also run one position at a time.",
              "The observed tokens are all known in training, so one masked pass computes every prediction."),
    Statement("fine-tuning-drops-lm-objective",
              "During fine-tuning, GPT-1 keeps its language-modelling log-likelihood in the objective, "
              "weighted by $\\lambda$.",
              "During fine-tuning, GPT-1 drops the language-modelling objective and maximises only the "
              "supervised log-likelihood.",
              "GPT-1 fine-tunes on $L_3 = L_2 + \\lambda L_1$: the supervised log-likelihood plus $\\lambda$ "
              "times the language-model log-likelihood, which the paper reports improves generalisation "
              "and speeds up convergence."),
    Statement("softmax-changes-argmax",
              "Greedy decoding picks the same token from the logits as from the softmax probabilities.",
              "Greedy decoding can pick a different token from the probabilities than from the logits.",
              "Softmax is strictly increasing in each logit, so it never changes which entry is largest."),
    Statement("missing-1-over-n",
              "When the loss is the mean over N positions, every entry of dlogits carries a factor 1/N.",
              "The gradient of the mean cross-entropy with respect to the logits is softmax minus one-hot, "
              "with no factor that depends on N.",
              "Each position contributes 1/N of the mean, so its gradient is (softmax - onehot)/N."),
    Statement("off-by-one-alignment",
              "The hidden state at position i is trained to predict the token at position i+1.",
              "The hidden state at position i is trained to predict the token at position i.",
              "Position i has already seen token i; predicting it would be copying. Targets are shifted by one."),
    Statement("sum-vs-mean",
              "Perplexity is the exponential of the mean negative log-likelihood per token.",
              "Perplexity is the exponential of the total negative log-likelihood of the text.",
              "Using the total makes perplexity grow with the length of the text; the mean is per token."),
    Statement("softmax-without-onehot",
              "Each position's row of dlogits sums to zero over the vocabulary.",
              "Each position's row of dlogits sums to one, like a probability distribution.",
              "softmax sums to 1 and the one-hot sums to 1, so their difference sums to 0."),
)


def _row_sums_zero() -> bool:
    """Numerical witness: softmax minus one-hot rows sum to zero (plain Python)."""
    z, target = [0.3, -1.2, 2.0, 0.5], 2
    e = [math.exp(v) for v in z]
    row = [v / math.fsum(e) - (1.0 if i == target else 0.0) for i, v in enumerate(e)]
    return abs(math.fsum(row)) < 1e-12


def _argmax_unchanged() -> bool:
    """Numerical witness: the largest logit is the most probable token."""
    rng = np.random.default_rng(0)
    z = rng.standard_normal((50, 7))
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return bool((np.argmax(z, axis=1) == np.argmax(e / e.sum(axis=1, keepdims=True), axis=1)).all())


#: Statements whose truth the check also confirms numerically.
WITNESSES: dict[str, Callable[[], bool]] = {
    "softmax-without-onehot": _row_sums_zero,
    "softmax-changes-argmax": _argmax_unchanged,
}


@register_family
class MisconceptionsTrueFalse(Family):
    name = "misconceptions-true-false"
    version = 3  # v3: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "True or false?"
    summary = "Decide whether a statement about LM heads, losses or GPT-1 is true; each explains a misconception."
    tags = ("misconceptions", "concepts")
    distinct_target = 2 * len(STATEMENTS)
    distinct_items = 2 * len(STATEMENTS)     # each statement, phrased true or false

    def build(self, rng: np.random.Generator) -> Draft:
        index = int(rng.integers(len(STATEMENTS)))
        statement = STATEMENTS[index]
        is_true = bool(rng.random() < 0.5)
        text = statement.true_text if is_true else statement.false_text
        why = f"The statement is {'true' if is_true else 'false'}. {statement.explanation}"
        options = [
            Option(value=True, text="True", correct=is_true,
                   misconception=None if is_true else statement.misconception,
                   feedback=f"Correct. {statement.explanation}" if is_true else why),
            Option(value=False, text="False", correct=not is_true,
                   misconception=statement.misconception if is_true else None,
                   feedback=why if is_true else f"Correct. {statement.explanation}"),
        ]
        return Draft(parameters={"statement": index, "phrasing": "true" if is_true else "false"},
                     stem=f"True or false? {text}",
                     answer=Answer(kind="true_false", value=is_true, display="True" if is_true else "False"),
                     options=options, solution=why, tags=(statement.misconception,))

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Look the stem up in the pool and, where one exists, run a numerical witness."""
        stem = variant["stem"].removeprefix("True or false? ")
        for statement in STATEMENTS:
            if stem in (statement.true_text, statement.false_text):
                expected = stem == statement.true_text
                if statement.misconception in WITNESSES and not WITNESSES[statement.misconception]():
                    return [f"the numerical witness for {statement.misconception!r} fails"]
                if variant["answer"]["value"] != expected:
                    return [f"answer {variant['answer']['value']} but the statement is {expected}"]
                return []
        return ["stem is not a statement of the pool"]

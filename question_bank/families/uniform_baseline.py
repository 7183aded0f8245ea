"""The loss (and perplexity) of a model that predicts uniformly: ln V."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import at_common_width, numeric_options
from question_bank.families._common import LN2, check_close, float_answer
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import build_vocab, cross_entropy_loss, perplexity_from_loss

ASKS = ("loss_nats", "loss_bits", "perplexity")

#: Vocabulary sizes of well-known tokenizers; the rest are drawn at random.
KNOWN_VOCABS = {50257: "GPT-2's BPE vocabulary", 40478: "GPT-1's vocabulary", 256: "a byte-level vocabulary"}
MAX_VOCAB = 100_000

#: Every wrong value this family knows, by the quantity asked: (name, misconception, formula, compute, feedback).
MISTAKES = register_mistakes("uniform-baseline", [
    ("loss_nats/log2", "wrong-log-base", "log2 V", lambda f: math.log2(f["vocab_size"]),
     "That is log base 2 (bits); the loss is in nats."),
    ("loss_nats/log10", "wrong-log-base", "log10 V", lambda f: math.log10(f["vocab_size"]),
     "That takes the log in base 10; the loss is in nats."),
    ("loss_nats/probability", "uniform-probability-not-loss", "1/V", lambda f: 1 / f["vocab_size"],
     "That is the probability of each token; the loss is its negative log."),
    ("loss_nats/perplexity", "perplexity-for-loss", "V", lambda f: float(f["vocab_size"]),
     "That is the perplexity of the uniform model; the loss is its natural log."),
    ("loss_nats/unweighted-sum", "sum-vs-mean", "V ln V", lambda f: f["vocab_size"] * math.log(f["vocab_size"]),
     "That sums -ln(1/V) over all V tokens; the expected loss weights each term by its probability 1/V."),
    ("loss_nats/one-term", "sum-vs-mean", "(ln V)/V", lambda f: math.log(f["vocab_size"]) / f["vocab_size"],
     "That is one token's term (1/V) ln V; the V equal terms add up to ln V."),
    ("loss_bits/nats", "bits-vs-nats", "ln V", lambda f: math.log(f["vocab_size"]),
     "That is the loss in nats; in bits it is log base 2 of V."),
    ("loss_bits/log10", "wrong-log-base", "log10 V", lambda f: math.log10(f["vocab_size"]),
     "That takes the log in base 10; bits use base 2."),
    ("loss_bits/probability", "uniform-probability-not-loss", "1/V", lambda f: 1 / f["vocab_size"],
     "That is the probability of each token; the loss is its negative log."),
    ("loss_bits/perplexity", "perplexity-for-loss", "V", lambda f: float(f["vocab_size"]),
     "That is the perplexity; the loss is its logarithm."),
    ("loss_bits/unweighted-sum", "sum-vs-mean", "V log2 V", lambda f: f["vocab_size"] * math.log2(f["vocab_size"]),
     "That sums -log2(1/V) over all V tokens; the expected loss weights each term by its probability 1/V."),
    ("loss_bits/converted-twice", "bits-vs-nats", "log2(V) / ln 2", lambda f: math.log2(f["vocab_size"]) / LN2,
     "That divides by ln 2 twice; log2 V already is the loss in bits."),
    ("loss_bits/one-term", "sum-vs-mean", "(log2 V)/V", lambda f: math.log2(f["vocab_size"]) / f["vocab_size"],
     "That is one token's term (1/V) log2 V; the V equal terms add up to log2 V."),
    ("perplexity/loss-nats", "perplexity-is-loss", "ln V", lambda f: math.log(f["vocab_size"]),
     "That stops at the loss without exponentiating it; perplexity is the exponential of the loss."),
    ("perplexity/probability", "perplexity-reciprocal", "1/V", lambda f: 1 / f["vocab_size"],
     "That flips the sign of the exponent, which gives a probability (e^(-ln V) = 1/V, each token's "
     "probability); perplexity is its reciprocal."),
    ("perplexity/expected-guesses", "perplexity-is-expected-guesses", "(V + 1)/2",
     lambda f: (f["vocab_size"] + 1) / 2,
     "That is how many guesses, on average, find a uniformly drawn token; perplexity is the number "
     "of equally likely choices, V."),
    ("perplexity/base-2", "wrong-log-base", "2^(ln V)", lambda f: 2 ** math.log(f["vocab_size"]),
     "A loss in nats is exponentiated with base e, not 2."),
    ("perplexity/bits-base-e", "wrong-log-base", "e^(log2 V)", lambda f: math.exp(math.log2(f["vocab_size"])),
     "That takes the loss in bits, log2 V, where base e needs it in nats: a loss in bits is exponentiated "
     "with base 2."),
    ("perplexity/base-10", "wrong-log-base", "10^(ln V)", lambda f: 10 ** math.log(f["vocab_size"]),
     "That exponentiates with base 10; a loss in nats takes base e (one in bits, base 2)."),
])


#: What a right pick is told, in the unit the question asked for.
_CORRECT = {
    "loss_nats": "Correct: a uniform model pays ln V nats per token.",
    "loss_bits": "Correct: a uniform model pays log2 V bits per token.",
    "perplexity": "Correct: a uniform model has perplexity V, as unsure as a choice among V equal tokens.",
}


#: Wrong values in the other unit too: each is one slip from a wrong value as well as from the key, so the
#: key (log2 V or ln V) is not the one choice every other is one slip away from (the hub player).
register_double_mistakes("uniform-baseline", MISTAKES, [
    ("loss_bits/one-term", "loss_bits/nats", "(ln V)/V", lambda f: math.log(f["vocab_size"]) / f["vocab_size"]),
    ("loss_bits/unweighted-sum", "loss_bits/nats", "V ln V",
     lambda f: f["vocab_size"] * math.log(f["vocab_size"])),
    # and the same for the loss in nats: wrong values in bits
    ("loss_nats/one-term", "loss_nats/log2", "(log2 V)/V", lambda f: math.log2(f["vocab_size"]) / f["vocab_size"]),
    ("loss_nats/unweighted-sum", "loss_nats/log2", "V log2 V",
     lambda f: f["vocab_size"] * math.log2(f["vocab_size"])),
    # and in base 10, for both losses, and divided by ln 2 twice for bits: with one other-unit double
    # per sum slip the mistake hub still found the key 44 times in 110 (loss_bits, seed 99, 400 variants)
    ("loss_nats/one-term", "loss_nats/log10", "(log10 V)/V", lambda f: math.log10(f["vocab_size"]) / f["vocab_size"]),
    ("loss_nats/unweighted-sum", "loss_nats/log10", "V log10 V",
     lambda f: f["vocab_size"] * math.log10(f["vocab_size"])),
    ("loss_bits/one-term", "loss_bits/log10", "(log10 V)/V", lambda f: math.log10(f["vocab_size"]) / f["vocab_size"]),
    ("loss_bits/unweighted-sum", "loss_bits/log10", "V log10 V",
     lambda f: f["vocab_size"] * math.log10(f["vocab_size"])),
    ("loss_bits/one-term", "loss_bits/converted-twice", "(log2 V)/(V ln 2)",
     lambda f: math.log2(f["vocab_size"]) / (f["vocab_size"] * LN2)),
    ("loss_bits/unweighted-sum", "loss_bits/converted-twice", "V log2(V) / ln 2",
     lambda f: f["vocab_size"] * math.log2(f["vocab_size"]) / LN2),
    ("loss_bits/perplexity", "loss_bits/converted-twice", "V / ln 2", lambda f: f["vocab_size"] / LN2),
])
#: The perplexity's wrong values with two slips at once, each sharing a slip with a single mistake: with
#: single slips only the key V was one slip from every wrong choice and each of them from V alone, so the
#: reader who spots every one-slip relation (the mistake hub) found it every time (67 in 67 at seed 99,
#: 200 variants). The loss in bits and base 10 of it are the two doubles they always were.
register_double_mistakes("uniform-baseline", MISTAKES, [
    ("perplexity/loss-nats", "perplexity/bits-base-e", "log2 V", lambda f: math.log2(f["vocab_size"])),
    ("perplexity/base-10", "perplexity/bits-base-e", "10^(log2 V)", lambda f: 10 ** math.log2(f["vocab_size"])),
    ("perplexity/probability", "perplexity/base-2", "2^(-ln V)", lambda f: 2 ** -math.log(f["vocab_size"])),
    ("perplexity/probability", "perplexity/bits-base-e", "e^(-log2 V)", lambda f: math.exp(-math.log2(f["vocab_size"]))),
])

def _scientific(x: float) -> str:
    """``x`` to four significant figures in NumPy's scientific form, ``5.026e+04``: every number of
    this family's range prints at the same length, so no length points at the key."""
    return f"`{float(x):.3e}`"


@register_family
class UniformBaseline(Family):
    name = "uniform-baseline"
    version = 9  # v9: the losses' and the perplexity's wrong values with two slips at once sharing a slip with the single ones, so the key is not the mistake hub; v8: the perplexity prints every choice in one scientific form (5.026e+04); v7: the losses print every choice at one length; v6: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "The uniform baseline"
    summary = "Loss (nats or bits) or perplexity of a model whose logits are all equal: ln V and V."
    tags = ("cross-entropy", "baseline", "perplexity")
    subquestion_key = "ask"
    subquestion_values = ASKS

    def build(self, rng: np.random.Generator) -> Draft:
        vocab, where = self._vocabulary(rng)
        ask = ASKS[int(rng.integers(len(ASKS)))]
        # All-equal logits make the softmax exactly uniform, whatever the target.
        target = np.array([[int(rng.integers(vocab))]])
        loss, _ = cross_entropy_loss(np.zeros((1, 1, vocab)), target)
        intro = (f"An untrained model over {where} of V = {fmt.integer(vocab)} tokens outputs the same logit "
                 "for every token.")
        ln_v, log2_v = math.log(vocab), math.log2(vocab)
        if ask == "loss_nats":
            question = "What cross-entropy loss per token should it score, in nats?"
            value, unit = loss, "nats"
        elif ask == "loss_bits":
            question = "What cross-entropy loss per token should it score, in **bits**?"
            value, unit = loss / LN2, "bits"
        else:
            question = "What is its perplexity?"
            value, unit = perplexity_from_loss(loss), ""
        answer = float_answer(value, unit=unit)
        stem = f"{intro} {question}"
        solution = (f"Equal logits give a uniform softmax, $p = 1/V$ for every token, so each position's loss "
                    f"is $-\\ln(1/V) = \\ln V = \\ln {fmt.integer_tex(vocab)} = {fmt.num(ln_v)}$ nats "
                    f"(= $\\log_2 V = {fmt.num(log2_v)}$ bits), and the perplexity is $e^{{\\ln V}} = V = {fmt.integer_tex(vocab)}$. "
                    "A freshly initialised model should start near this value; falling below it is the first "
                    "sign of learning.")
        parameters = {"vocab_size": vocab, "ask": ask}
        if ask == "perplexity":
            # The key V is a whole number and printed exactly it was the shortest choice (124 keys in
            # 303 at seed 0 with 1,000 variants, limit 32%): its mistakes above it are powers of
            # ten digits and more, those below it print in four figures. No fixed-point printing
            # at one length fits the powers, so every choice prints in one scientific form.
            wrong = wrong_options(MISTAKES, [n for n in MISTAKES if n.startswith(ask + "/")], parameters, _scientific)
            key_text = _scientific(value)
        else:
            wrong = wrong_options(MISTAKES, [n for n in MISTAKES if n.startswith(ask + "/")], parameters, fmt.num_tex)
            # The losses print every choice at one length: the key ln V or log2 V otherwise ties for
            # the shortest text with the other four-figure logs.
            key_text, wrong = at_common_width(value, wrong) or (fmt.num_tex(value), wrong)
        options = numeric_options(rng, answer.value, key_text, wrong, _CORRECT[ask])
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    @staticmethod
    def _vocabulary(rng: np.random.Generator) -> tuple[int, str]:
        """A vocabulary size and how the stem names it (course corpus, a known tokenizer, or generic)."""
        pick = rng.random()
        if pick < 0.1:
            return len(build_vocab()[0]), "the course's character vocabulary"
        if pick < 0.2:
            vocab = list(KNOWN_VOCABS)[int(rng.integers(len(KNOWN_VOCABS)))]
            return vocab, KNOWN_VOCABS[vocab]
        return int(rng.integers(2, MAX_VOCAB + 1)), "a vocabulary"

    def check(self, variant: dict[str, Any]) -> list[str]:
        params = variant["parameters"]
        vocab = params["vocab_size"]
        expected = {"loss_nats": math.log(vocab), "loss_bits": math.log2(vocab),
                    "perplexity": float(vocab)}[params["ask"]]
        return check_close(variant["answer"]["value"], expected)

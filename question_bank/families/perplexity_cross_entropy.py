"""Perplexity from mean cross-entropy and back, in nats or bits."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import at_common_width
from question_bank.families._common import LN2, check_close, float_answer
from question_bank.families._hub_pool import least_cued_options
from question_bank.mistakes import register_double_mistakes, register_mistakes, register_sign_slips, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Draft, Option
from solutions import perplexity_from_loss, sequence_log_prob

ASKS = ("ppl_from_nats", "ppl_from_bits", "nats_from_ppl", "bits_from_ppl")


def _log_perplexity(ppl: float) -> float:
    """Mean NLL in nats of a model with perplexity ``ppl``.

    Such a model's geometric-mean token probability is 1/ppl, so its mean
    NLL is the negative log-probability of that one factor.
    """
    return -sequence_log_prob([1.0 / ppl])


#: Every wrong value this family knows, by what is asked. ``nats`` is the loss (given or
#: asked) in nats, ``loss`` the loss as the stem prints it, ``ppl`` the perplexity.
MISTAKES = register_mistakes("perplexity-cross-entropy", [
    ("ppl_from_bits/as-nats", "bits-vs-nats", "e^loss", lambda f: math.exp(f["loss"]),
     "That reads the bits as nats; with bits the base is 2."),
    ("ppl_from_bits/base-10", "wrong-log-base", "10^loss", lambda f: 10 ** f["loss"],
     "Bits are base-2 logarithms, so the base is 2, not 10."),
    ("ppl_from_bits/loss", "perplexity-is-loss", "loss", lambda f: f["loss"],
     "That is the cross-entropy itself; perplexity exponentiates it."),
    ("ppl_from_bits/reciprocal", "perplexity-reciprocal", "2^-loss", lambda f: 1 / f["ppl"],
     "That flips the sign of the exponent, which gives a probability (2^-loss is the geometric-mean "
     "probability), the reciprocal of the perplexity."),
    ("ppl_from_nats/base-2", "wrong-log-base", "2^loss", lambda f: 2 ** f["loss"],
     "A loss in nats is exponentiated with base e, not 2."),
    ("ppl_from_nats/base-10", "wrong-log-base", "10^loss", lambda f: 10 ** f["loss"],
     "A loss in nats is exponentiated with base e, not 10."),
    ("ppl_from_nats/loss", "perplexity-is-loss", "loss", lambda f: f["loss"],
     "That is the cross-entropy itself; perplexity exponentiates it."),
    ("ppl_from_nats/reciprocal", "perplexity-reciprocal", "e^-loss", lambda f: 1 / f["ppl"],
     "That flips the sign of the exponent, which gives a probability (e^-loss is the geometric-mean "
     "probability), the reciprocal of the perplexity."),
    ("ppl_from_nats/as-bits", "bits-vs-nats", "e^(loss / ln 2)", lambda f: math.exp(f["loss"] / LN2),
     "That converts the loss to bits (divided by ln 2); the loss is in nats, and perplexity is e^loss "
     "with the loss as given."),
    ("bits_from_ppl/nats", "bits-vs-nats", "ln ppl", lambda f: f["nats"],
     "That leaves out the division by ln 2 that turns nats into bits."),
    ("bits_from_ppl/log10", "wrong-log-base", "log10 ppl", lambda f: math.log10(f["perplexity"]),
     "Bits are base-2 logarithms, not base 10."),
    ("bits_from_ppl/reciprocal", "perplexity-reciprocal", "1/ppl", lambda f: 1 / f["perplexity"],
     "That is the geometric-mean probability, not a cross-entropy."),
    ("bits_from_ppl/times-ln2", "bits-vs-nats", "ln ppl * ln 2", lambda f: f["nats"] * LN2,
     "Converting nats to bits divides by ln 2; it does not multiply."),
    ("bits_from_ppl/converted-twice", "bits-vs-nats", "log2(ppl) / ln 2",
     lambda f: math.log2(f["perplexity"]) / LN2,
     "That divides by ln 2 once too often: one division turns nats into bits, and a log already in base 2 takes none."),
    ("nats_from_ppl/log2", "wrong-log-base", "log2 ppl", lambda f: math.log2(f["perplexity"]),
     "That is log base 2 (bits); the question asks for nats."),
    ("nats_from_ppl/log10", "wrong-log-base", "log10 ppl", lambda f: math.log10(f["perplexity"]),
     "That is log base 10; the question asks for nats."),
    ("nats_from_ppl/reciprocal", "perplexity-reciprocal", "1/ppl", lambda f: 1 / f["perplexity"],
     "That is the geometric-mean probability, not a cross-entropy."),
    ("nats_from_ppl/perplexity", "perplexity-is-loss", "ppl", lambda f: f["perplexity"],
     "That is the perplexity itself; the cross-entropy is its logarithm."),
    ("nats_from_ppl/negated", "log-sign", "-ln ppl", lambda f: -f["nats"],
     "That is ln(1/ppl), the log of the geometric-mean probability; the loss is its negative."),
    ("nats_from_ppl/bits-converted", "bits-vs-nats", "log2(ppl) / ln 2", lambda f: math.log2(f["perplexity"]) / LN2,
     "That takes bits and divides by ln 2 again; the loss in nats is ln ppl."),
    ("bits_from_ppl/perplexity-converted", "perplexity-is-loss", "ppl / ln 2", lambda f: f["perplexity"] / LN2,
     "That leaves out the logarithm: the cross-entropy is the logarithm of the perplexity, not the perplexity."),
    ("ppl_from_bits/over-ln2", "bits-vs-nats", "2^(loss / ln 2)", lambda f: 2 ** (f["loss"] / LN2),
     "That divides the loss by ln 2, which turns nats into bits; the loss is already in bits, and perplexity "
     "is 2^loss with the loss as given."),
    ("nats_from_ppl/times-ln2", "bits-vs-nats", "ln ppl * ln 2", lambda f: f["nats"] * LN2,
     "That multiplies by ln 2, as if converting bits to nats; ln ppl is already the loss in nats."),
    ("ppl_from_bits/base-2-nats", "bits-vs-nats", "2^(loss * ln 2)", lambda f: 2 ** (f["loss"] * LN2),
     "That converts the loss to nats (times ln 2); with a loss in bits, perplexity is 2^loss with the loss "
     "as given (a loss in nats would take e^loss)."),
])
#: Each wrong base with the sign slip on top, so x / -x pairs appear around wrong values too.
register_sign_slips("perplexity-cross-entropy", MISTAKES, "nats_from_ppl/negated",
                    ["nats_from_ppl/log2", "nats_from_ppl/log10", "nats_from_ppl/times-ln2"])
#: Wrong values one slip from another wrong value and not from the key: with single slips only, the key
#: 2^loss was the value linked to the most others (2^ of the loss, e^ of it in nats, its reciprocal),
#: and the hub player found it 72 times in 186 (seed 0, 1,000 variants, chance 46).
register_double_mistakes("perplexity-cross-entropy", MISTAKES, [
    ("ppl_from_bits/reciprocal", "ppl_from_bits/as-nats", "e^-loss", lambda f: math.exp(-f["loss"])),
])
#: Two slips at once that share a slip with a single mistake: with single slips only, the key was one
#: slip from every wrong choice and each of them from the key alone, so the reader who spots every
#: one-slip relation (the mistake hub) found it every time (seed 99, 200 variants: bits_from_ppl 56 in 56,
#: ppl_from_nats 49 in 49, ppl_from_bits 34 in 48). A double beside both its singles makes a square,
#: beside one of them a rival hub.
register_double_mistakes("perplexity-cross-entropy", MISTAKES, [
    # the loss converted to nats and left there, or exponentiated with base 10
    ("ppl_from_bits/loss", "ppl_from_bits/base-2-nats", "loss * ln 2", lambda f: f["loss"] * LN2),
    ("ppl_from_bits/base-10", "ppl_from_bits/base-2-nats", "10^(loss * ln 2)", lambda f: 10 ** (f["loss"] * LN2)),
    ("ppl_from_bits/reciprocal", "ppl_from_bits/base-2-nats", "2^-(loss * ln 2)", lambda f: 2 ** -(f["loss"] * LN2)),
    # the loss divided by ln 2 as if it were nats, then each slip of the base: above the key, where only
    # the wrong bases were
    ("ppl_from_bits/as-nats", "ppl_from_bits/over-ln2", "e^(loss / ln 2)", lambda f: math.exp(f["loss"] / LN2)),
    ("ppl_from_bits/base-10", "ppl_from_bits/over-ln2", "10^(loss / ln 2)", lambda f: 10 ** (f["loss"] / LN2)),
    ("ppl_from_bits/loss", "ppl_from_bits/over-ln2", "loss / ln 2", lambda f: f["loss"] / LN2),
    ("ppl_from_bits/reciprocal", "ppl_from_bits/over-ln2", "2^-(loss / ln 2)", lambda f: 2 ** -(f["loss"] / LN2)),
    # the loss converted to bits and left there, or exponentiated with base 10; the sign slip with a wrong base
    ("ppl_from_nats/loss", "ppl_from_nats/as-bits", "loss / ln 2", lambda f: f["loss"] / LN2),
    ("ppl_from_nats/base-10", "ppl_from_nats/as-bits", "10^(loss / ln 2)", lambda f: 10 ** (f["loss"] / LN2)),
    ("ppl_from_nats/reciprocal", "ppl_from_nats/base-2", "2^-loss", lambda f: 2 ** -f["loss"]),
    ("ppl_from_nats/reciprocal", "ppl_from_nats/as-bits", "e^-(loss / ln 2)", lambda f: math.exp(-f["loss"] / LN2)),
    # no logarithm, with each slip of the conversion to bits
    ("bits_from_ppl/perplexity-converted", "bits_from_ppl/nats", "ppl", lambda f: f["perplexity"]),
    ("bits_from_ppl/perplexity-converted", "bits_from_ppl/times-ln2", "ppl * ln 2", lambda f: f["perplexity"] * LN2),
    ("bits_from_ppl/perplexity-converted", "bits_from_ppl/converted-twice", "ppl / (ln 2)^2",
     lambda f: f["perplexity"] / LN2 ** 2),
    # a base-10 log, then a wrong conversion: below the key, as the no-logarithm doubles are above it
    ("nats_from_ppl/log10", "nats_from_ppl/times-ln2", "log10 ppl * ln 2", lambda f: math.log10(f["perplexity"]) * LN2),
    ("nats_from_ppl/perplexity", "nats_from_ppl/times-ln2", "ppl * ln 2", lambda f: f["perplexity"] * LN2),
    ("nats_from_ppl/perplexity", "nats_from_ppl/log2", "ppl / ln 2", lambda f: f["perplexity"] / LN2),
    ("nats_from_ppl/perplexity", "nats_from_ppl/bits-converted", "ppl / (ln 2)^2", lambda f: f["perplexity"] / LN2 ** 2),
    ("bits_from_ppl/log10", "bits_from_ppl/times-ln2", "log10 ppl * ln 2", lambda f: math.log10(f["perplexity"]) * LN2),
    ("bits_from_ppl/log10", "bits_from_ppl/converted-twice", "log10 ppl / ln 2",
     lambda f: math.log10(f["perplexity"]) / LN2),
])


@register_family
class PerplexityCrossEntropy(Family):
    name = "perplexity-cross-entropy"
    version = 9  # v9: the ln 2 slips of nats_from_ppl and ppl_from_bits alone and with the other slips, and a pool the draw can fit, so the key is not the mistake hub where every choice prints at one length; v8: wrong values with two slips at once sharing a slip with the single ones, so the key is not the mistake hub; v7: every choice printed at one length, two more mistakes of the perplexity from bits; v6: the draw also keeps the hub, sign-majority, half/double, close-pair and cut-text players at chance
    title = "Perplexity and mean cross-entropy"
    summary = "Convert a mean cross-entropy (nats or bits) into a perplexity, or a perplexity into one."
    tags = ("perplexity", "cross-entropy", "units")
    subquestion_key = "ask"
    subquestion_values = ASKS

    def build(self, rng: np.random.Generator) -> Draft:
        ask = ASKS[int(rng.integers(len(ASKS)))]
        if ask in ("ppl_from_nats", "ppl_from_bits"):
            return self._to_perplexity(rng, ask)
        return self._to_loss(rng, ask)

    def _to_perplexity(self, rng: np.random.Generator, ask: str) -> Draft:
        in_bits = ask == "ppl_from_bits"
        loss = int(rng.integers(300, 8001 if in_bits else 6001)) / 1000
        unit = "bits" if in_bits else "nats"
        nats = loss * LN2 if in_bits else loss
        ppl = perplexity_from_loss(nats)
        stem = (f"A language model's mean cross-entropy on a validation set is {fmt.exact(loss)} {unit} per "
                "token. What is its perplexity?")
        answer = float_answer(ppl)
        if in_bits:
            how = f"$2^{{{fmt.exact(loss)}}} = e^{{{fmt.num(nats)}}} = {fmt.num(ppl)}$"
        else:
            how = f"$e^{{{fmt.exact(loss)}}} = {fmt.num(ppl)}$"
        solution = (f"Perplexity is the exponential of the mean negative log-likelihood in the base of its "
                    f"unit: {how}.")
        parameters = {"ask": ask, "loss": loss, "unit": unit}
        key_text, wrong = self._printed(ppl, self._wrong(parameters))
        options = least_cued_options(rng, answer.value, key_text, wrong,
                                     "Correct: exponentiate in the base that matches the unit.", tries=3)
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    def _to_loss(self, rng: np.random.Generator, ask: str) -> Draft:
        in_bits = ask == "bits_from_ppl"
        ppl = int(rng.integers(120, 50001)) / 100
        nats = _log_perplexity(ppl)
        value = nats / LN2 if in_bits else nats
        unit = "bits" if in_bits else "nats"
        stem = (f"A language model has perplexity {fmt.exact(ppl)} on a test set. What is its mean "
                f"cross-entropy per token, in **{unit}**?")
        answer = float_answer(value, unit=unit)
        solution = (f"Cross-entropy is the logarithm of the perplexity: $\\ln {fmt.exact(ppl)} = {fmt.num(nats)}$ "
                    f"nats" + (f", and $\\log_2 {fmt.exact(ppl)} = {fmt.num(nats)} / \\ln 2 = {fmt.num(value)}$ bits."
                               if in_bits else "."))
        parameters = {"ask": ask, "perplexity": ppl, "unit": unit}
        key_text, wrong = self._printed(value, self._wrong(parameters))
        options = least_cued_options(rng, answer.value, key_text, wrong,
                                     "Correct: take the logarithm in the base of the unit.", tries=3)
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution,
                     mistakes=wrong)

    @staticmethod
    def _printed(value: float, wrong: list[Option]) -> tuple[str, list[Option]]:
        """The key's text and the wrong options, every one printed at one length where that fits.

        At four figures a value from 1 to 999 prints shorter than one below 1 and than a negative
        one, so the length of a text follows from where the value lies: the key ln(ppl) was the
        shortest text in 76 of 193 variants (seed 0, 1,000 variants, limit 34%), never the longest.
        """
        return at_common_width(value, wrong) or (fmt.num_tex(value), wrong)

    def _wrong(self, parameters: dict[str, Any]) -> list[Option]:
        names = [k for k in MISTAKES if k.startswith(parameters["ask"] + "/")]
        return wrong_options(MISTAKES, names, self.facts(parameters), fmt.num_tex)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The loss in nats and the perplexity, whichever of them the stem gives."""
        if "loss" in parameters:
            nats = parameters["loss"] * (LN2 if parameters["unit"] == "bits" else 1.0)
            return {**parameters, "nats": nats, "ppl": perplexity_from_loss(nats)}
        return {**parameters, "nats": _log_perplexity(parameters["perplexity"])}

    def check(self, variant: dict[str, Any]) -> list[str]:
        params = variant["parameters"]
        ask = params["ask"]
        if ask == "ppl_from_nats":
            expected = math.exp(params["loss"])
        elif ask == "ppl_from_bits":
            expected = 2.0 ** params["loss"]
        elif ask == "nats_from_ppl":
            expected = math.log(params["perplexity"])
        else:
            expected = math.log2(params["perplexity"])
        return check_close(variant["answer"]["value"], expected)

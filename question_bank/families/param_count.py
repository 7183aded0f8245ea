"""GPT parameter counts under the course convention, per component, tied or untied."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import check_equal, enumerate_param_counts, int_answer
from question_bank.registry import Family, register_family
from question_bank.variant import Draft
from solutions import gpt_param_count

#: GPT-1's shape as the course states it; drawn now and then so the known total appears.
GPT1 = {"vocab_size": 40478, "block_size": 512, "n_embd": 768, "n_layer": 12, "ffn_dim": 3072}

_COMPONENT_TEXT = {
    "embeddings": "the token and position embedding tables together",
    "attention": "all attention layers together (projections with their biases)",
    "ffn": "all feed-forward (FFN) layers together, biases included",
    "layernorm": "all LayerNorms together",
    "lm_head": "the output head",
    "total": "the whole model",
}


def draw_config(rng: np.random.Generator) -> dict[str, int]:
    """A GPT configuration: GPT-1 one time in twenty, otherwise random but plausible."""
    if rng.random() < 0.05:
        return dict(GPT1)
    d = 64 * int(rng.integers(1, 17))
    ffn = 4 * d if rng.random() < 0.75 else 64 * int(rng.integers(2, 65))
    return {"vocab_size": int(rng.integers(1000, 60001)),
            "block_size": int(rng.choice([128, 256, 512, 1024, 2048])),
            "n_embd": d, "n_layer": int(rng.integers(1, 25)), "ffn_dim": ffn}


def wrong_counts(component: str, cfg: dict[str, int], tied: bool,
                 counts: dict[str, int]) -> list[tuple[str, int, str]]:
    """Counts a student gets by a named mistake, for ``component``."""
    V, T, d, L, f = (cfg[k] for k in ("vocab_size", "block_size", "n_embd", "n_layer", "ffn_dim"))
    total = counts["total"]
    if component == "embeddings":
        return [("forgot-position-embeddings", V * d, "Learned position embeddings add T*d."),
                ("tied-counted-twice", (2 * V + T) * d, "The output matrix is not part of the embeddings; "
                 "tied, it is the token table itself."),
                ("embeddings-per-layer", L * (V + T) * d, "The tables exist once, at the input.")]
    if component == "attention":
        return [("forgot-biases", L * 4 * d * d, "Each of the four projections has a bias of size d."),
                ("forgot-output-projection", L * (3 * d * d + 3 * d), "The output projection (d x d + d) counts too."),
                ("one-block-only", 4 * d * d + 4 * d, f"Each of the {L} blocks has its own attention.")]
    if component == "ffn":
        return [("forgot-biases", L * 2 * d * f, "Both FFN layers have biases: f + d per block."),
                ("one-block-only", 2 * d * f + f + d, f"Each of the {L} blocks has its own FFN."),
                ("ffn-width-is-model-width", L * (2 * d * d + 2 * d), f"The FFN expands to its own width f = {f}.")]
    if component == "layernorm":
        return [("one-layernorm-per-block", L * 2 * d, "There are two LayerNorms per block."),
                ("counts-final-layernorm", L * 4 * d + 2 * d, "The convention has no final LayerNorm."),
                ("one-block-only", 4 * d, f"Each of the {L} blocks has two LayerNorms."),
                ("forgot-biases", L * 2 * d, "Each affine LayerNorm has a gain and a bias.")]
    if component == "lm_head":
        return [("untied-not-counted", 0, "An untied head is a separate V x d matrix."),
                ("counts-output-bias", V * d + V, "The convention has no output bias."),
                ("forgot-position-embeddings", (V + T) * d, "The head maps d to the V tokens only; the "
                 "position table is not copied.")]
    mistakes = [("forgot-position-embeddings", total - T * d, "The position table adds T*d."),
                ("forgot-biases", total - L * (4 * d + f + d), "Attention and FFN biases count too."),
                ("one-layernorm-per-block", total - L * 2 * d, "Each block has two LayerNorms.")]
    if tied:
        mistakes.append(("tied-counted-twice", total + V * d, "With tying the output matrix is the token "
                         "table; count it once."))
    else:
        mistakes.append(("untied-not-counted", total - V * d, "The untied head adds V*d."))
    return mistakes


@register_family
class ParamCount(Family):
    name = "param-count"
    title = "GPT parameter count"
    summary = "Count a GPT's parameters (total or one component) for a random configuration, tied or untied."
    tags = ("parameters", "gpt-1")

    def build(self, rng: np.random.Generator) -> Draft:
        cfg = draw_config(rng)
        tied = bool(rng.random() < 0.5)
        components = ["embeddings", "attention", "ffn", "layernorm", "total"] + ([] if tied else ["lm_head"])
        component = components[int(rng.integers(len(components)))]
        counts = gpt_param_count(**cfg, tied=tied)
        value = counts[component]
        V, T, d, L, f = (cfg[k] for k in ("vocab_size", "block_size", "n_embd", "n_layer", "ffn_dim"))
        head = ("**tied** to the token embedding (counted once)" if tied
                else "**untied** (a separate V x d matrix, no bias)")
        stem = (f"A decoder-only GPT has vocabulary V = {fmt.integer(V)}, context length T = {fmt.integer(T)}, "
                f"width d = {d}, L = {L} blocks and FFN width f = {fmt.integer(f)}. Count learned token and "
                "position embeddings; per block a fused QKV projection and an output projection with biases, "
                "an FFN d -> f -> d with biases, and two affine LayerNorms; no final LayerNorm. The output "
                f"head is {head}. How many parameters are in {_COMPONENT_TEXT[component]}?")
        solution = (f"Embeddings $(V+T)d$ = {fmt.integer(counts['embeddings'])}; attention $L(4d^2+4d)$ = "
                    f"{fmt.integer(counts['attention'])}; FFN $L(2df+f+d)$ = {fmt.integer(counts['ffn'])}; "
                    f"LayerNorm $4dL$ = {fmt.integer(counts['layernorm'])}; head "
                    f"{fmt.integer(counts['lm_head'])} ({'tied: no new parameters' if tied else 'untied: $Vd$'}). "
                    f"Total {fmt.integer(counts['total'])}. The asked count is {fmt.integer(value)}.")
        options = numeric_options(rng, value, fmt.integer(value), wrong_counts(component, cfg, tied, counts),
                                  fmt.integer, "Correct under the stated convention.")
        return Draft(parameters={**cfg, "tied": tied, "component": component}, stem=stem,
                     answer=int_answer(value), options=options, solution=solution)

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        sizes = (p["vocab_size"], p["block_size"], p["n_embd"], p["n_layer"], p["ffn_dim"])
        expected = enumerate_param_counts(*sizes, tied=p["tied"])
        return check_equal(variant["answer"]["value"], expected[p["component"]])

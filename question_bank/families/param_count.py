"""GPT parameter counts under the course convention, per component, tied or untied."""
from __future__ import annotations

from typing import Any

import numpy as np

from question_bank import formatting as fmt
from question_bank.choices import numeric_options
from question_bank.families._common import check_equal, enumerate_param_counts, int_answer
from question_bank.mistakes import register_double_mistakes, register_mistakes, wrong_options
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


#: Every wrong count this family knows: (name, misconception, formula, compute, feedback).
#: Names start with the component they miscount.
MISTAKES = register_mistakes("param-count", [
    ("embeddings/no-position-table", "forgot-position-embeddings", "V*d",
     lambda f: f["V"] * f["d"], "Learned position embeddings add T*d."),
    ("embeddings/token-table-twice", "tied-counted-twice", "(2V + T)*d",
     lambda f: (2 * f["V"] + f["T"]) * f["d"],
     "The output matrix is not part of the embeddings; tied, it is the token table itself."),
    ("embeddings/per-block", "embeddings-per-layer", "L*(V + T)*d",
     lambda f: f["L"] * (f["V"] + f["T"]) * f["d"], "The tables exist once, at the input."),
    ("embeddings/position-per-block", "embeddings-per-layer", "(V + L*T)*d",
     lambda f: (f["V"] + f["L"] * f["T"]) * f["d"], "The position table exists once, at the input, not once per block."),
    ("embeddings/rows-only", "rows-not-parameters", "V + T",
     lambda f: f["V"] + f["T"], "Each of the V + T rows holds d = {d:,} parameters."),
    ("attention/no-biases", "forgot-biases", "L*4d^2",
     lambda f: f["L"] * 4 * f["d"] ** 2, "Each of the four projections has a bias of size d."),
    ("attention/no-output-projection", "forgot-output-projection", "L*(3d^2 + 3d)",
     lambda f: f["L"] * (3 * f["d"] ** 2 + 3 * f["d"]), "The output projection (d x d + d) counts too."),
    ("attention/one-block", "one-block-only", "4d^2 + 4d",
     lambda f: 4 * f["d"] ** 2 + 4 * f["d"], "Each of the {L} blocks has its own attention."),
    ("attention/biases-per-position", "parameters-per-position", "L*(4d^2 + 4Td)",
     lambda f: f["L"] * (4 * f["d"] ** 2 + 4 * f["T"] * f["d"]), "The four biases of size d are shared by all T positions."),
    ("attention/whole-block", "whole-block-counted", "L*(4d^2 + 4d + 2df + f + d + 4d)",
     lambda f: f["L"] * (4 * f["d"] ** 2 + 4 * f["d"] + 2 * f["d"] * f["f"] + f["f"] + f["d"] + 4 * f["d"]),
     "That is the whole block; attention is the QKV and output projections with their biases."),
    ("ffn/no-biases", "forgot-biases", "L*2df",
     lambda f: f["L"] * 2 * f["d"] * f["f"], "Both FFN layers have biases: f + d per block."),
    ("ffn/one-block", "one-block-only", "2df + f + d",
     lambda f: 2 * f["d"] * f["f"] + f["f"] + f["d"], "Each of the {L} blocks has its own FFN."),
    ("ffn/width-d", "ffn-width-is-model-width", "L*(2d^2 + 2d)",
     lambda f: f["L"] * (2 * f["d"] ** 2 + 2 * f["d"]), "The FFN expands to its own width f = {f_text}."),
    ("ffn/biases-per-position", "parameters-per-position", "L*(2df + T(f + d))",
     lambda f: f["L"] * (2 * f["d"] * f["f"] + f["T"] * (f["f"] + f["d"])),
     "The FFN biases (f + d per block) are shared by all T positions."),
    ("ffn/whole-block", "whole-block-counted", "L*(4d^2 + 4d + 2df + f + d + 4d)",
     lambda f: f["L"] * (4 * f["d"] ** 2 + 4 * f["d"] + 2 * f["d"] * f["f"] + f["f"] + f["d"] + 4 * f["d"]),
     "That is the whole block; the FFN is its two layers with their biases."),
    # One LayerNorm per block and LayerNorms without biases both give 2Ld; the
    # question cannot tell them apart, so only the first is offered.
    ("layernorm/one-per-block", "one-layernorm-per-block", "L*2d",
     lambda f: f["L"] * 2 * f["d"], "There are two LayerNorms per block, each with a gain and a bias."),
    ("layernorm/final-counted", "counts-final-layernorm", "4Ld + 2d",
     lambda f: 4 * f["L"] * f["d"] + 2 * f["d"], "The convention has no final LayerNorm."),
    ("layernorm/one-block", "one-block-only", "4d",
     lambda f: 4 * f["d"], "Each of the {L} blocks has two LayerNorms."),
    ("layernorm/as-matrix", "layernorm-as-matrix", "L*2*(d^2 + d)",
     lambda f: f["L"] * 2 * (f["d"] ** 2 + f["d"]), "A LayerNorm has a gain and a bias of size d, no d x d matrix."),
    ("layernorm/per-position", "parameters-per-position", "4LdT",
     lambda f: 4 * f["L"] * f["d"] * f["T"], "Gains and biases are shared by all T = {T:,} positions."),
    ("lm_head/not-counted", "untied-not-counted", "0",
     lambda f: 0, "An untied head is a separate V x d matrix."),
    ("lm_head/output-bias", "counts-output-bias", "V*d + V",
     lambda f: f["V"] * f["d"] + f["V"], "The convention has no output bias."),
    ("lm_head/position-table-added", "position-table-in-head", "(V + T)*d",
     lambda f: (f["V"] + f["T"]) * f["d"],
     "The head maps d to the V token scores only; the position table is not copied."),
    ("total/no-position-table", "forgot-position-embeddings", "total - T*d",
     lambda f: f["total"] - f["T"] * f["d"], "The position table adds T*d."),
    ("total/no-biases", "forgot-biases", "total - L*(4d + f + d)",
     lambda f: f["total"] - f["L"] * (4 * f["d"] + f["f"] + f["d"]), "Attention and FFN biases count too."),
    ("total/one-layernorm-per-block", "one-layernorm-per-block", "total - 2Ld",
     lambda f: f["total"] - 2 * f["L"] * f["d"], "Each block has two LayerNorms."),
    ("total/tied-counted-twice", "tied-counted-twice", "total + V*d (tied)",
     lambda f: f["total"] + f["V"] * f["d"], "With tying the output matrix is the token table; count it once."),
    ("total/untied-not-counted", "untied-not-counted", "total - V*d (untied)",
     lambda f: f["total"] - f["V"] * f["d"], "The untied head adds V*d."),
    ("total/final-layernorm", "counts-final-layernorm", "total + 2d",
     lambda f: f["total"] + 2 * f["d"], "The convention has no final LayerNorm."),
    ("total/output-bias", "counts-output-bias", "total + V",
     lambda f: f["total"] + f["V"], "The convention has no output bias."),
    ("total/embeddings-per-block", "embeddings-per-layer", "total + (L-1)(V + T)d",
     lambda f: f["total"] + (f["L"] - 1) * (f["V"] + f["T"]) * f["d"], "The tables exist once, at the input."),
    ("embeddings/position-only", "token-table-forgotten", "T*d",
     lambda f: f["T"] * f["d"], "The token table adds V*d = {V} x {d}."),
    # Mistakes on the side of the key that had too few: with only "not counted" below V*d and two
    # additions above it, the head's count was the 2nd smallest choice in every variant.
    ("lm_head/rows-only", "rows-not-parameters", "V",
     lambda f: f["V"], "Each of the V = {V:,} output scores has its own d = {d:,} weights: V*d."),
    ("lm_head/context-for-vocab", "confuses-context-with-vocab", "T*d",
     lambda f: f["T"] * f["d"], "The head scores the V = {V:,} vocabulary entries, not the T = {T:,} positions."),
    ("lm_head/keeps-width", "head-keeps-width", "d*d",
     lambda f: f["d"] * f["d"], "The head maps the width d to V scores (d x V), not back to d."),
    ("lm_head/bias-sized-by-width", "counts-output-bias", "V*d + d",
     lambda f: f["V"] * f["d"] + f["d"],
     "The convention has no output bias (and a bias would add one entry per score, V, not d)."),
    ("lm_head/ffn-width", "ffn-width-is-model-width", "V*f",
     lambda f: f["V"] * f["f"], "The head reads the d-wide output of the last block, not the f = {f_text} "
     "units inside its FFN: V*d."),
    ("lm_head/per-position", "parameters-per-position", "T*V*d",
     lambda f: f["T"] * f["V"] * f["d"], "The head's matrix is shared by all T = {T:,} positions."),
    # Attention, the FFN and the LayerNorms had mistakes mostly below the key (parts left out),
    # so the key was rarely the smallest choice (attention, FFN) or the largest (LayerNorm).
    ("attention/with-layernorms", "whole-block-counted", "L*(4d^2 + 8d)",
     lambda f: f["L"] * (4 * f["d"] ** 2 + 8 * f["d"]),
     "The block's two LayerNorms (4d) are counted with the LayerNorms, not with attention."),
    ("attention/scores-as-parameters", "parameters-per-position", "L*(4d^2 + 4d + T^2)",
     lambda f: f["L"] * (4 * f["d"] ** 2 + 4 * f["d"] + f["T"] ** 2),
     "The T x T attention weights are computed from each input, not learned; they are not parameters."),
    ("ffn/with-layernorm", "whole-block-counted", "L*(2df + f + 3d)",
     lambda f: f["L"] * (2 * f["d"] * f["f"] + f["f"] + 3 * f["d"]),
     "The LayerNorm in front of the FFN (2d) is counted with the LayerNorms, not with the FFN."),
    ("ffn/square-width", "ffn-width-is-model-width", "L*(2f^2 + 2f)",
     lambda f: f["L"] * (2 * f["f"] ** 2 + 2 * f["f"]),
     "Only the hidden layer has width f = {f_text}; the FFN maps d -> f -> d, so its matrices are d x f "
     "and f x d, not f x f."),
    ("layernorm/scalar-gain-and-bias", "rows-not-parameters", "4L",
     lambda f: 4 * f["L"], "Each gain and each bias is a vector of d = {d:,} entries, not one number."),
])


def mistake_names(component: str, tied: bool) -> list[str]:
    """The formulas that miscount ``component`` (the head's formulas depend on tying for the total:
    a mistake about the other head, alone or with a second mistake, is not offered)."""
    names = [name for name in MISTAKES if name.startswith(component + "/")]
    if component == "total":
        drop = "untied-not-counted" if tied else "tied-counted-twice"
        names = [name for name in names if drop not in name.split("/", 1)[1].split("+")]
    return names


#: Wrong counts that also leave out a small part (the biases, the position table): each sits just
#: below another wrong count, so the key is not the only choice a little above another one (the
#: close-larger player, who reads the smaller of two close counts as the one missing a part).
register_double_mistakes("param-count", MISTAKES, [
    ("attention/one-block", "attention/no-biases", "4d^2", lambda f: 4 * f["d"] ** 2),
    ("attention/no-output-projection", "attention/no-biases", "L*3d^2", lambda f: f["L"] * 3 * f["d"] ** 2),
    ("ffn/one-block", "ffn/no-biases", "2df", lambda f: 2 * f["d"] * f["f"]),
    ("ffn/width-d", "ffn/no-biases", "L*2d^2", lambda f: f["L"] * 2 * f["d"] ** 2),
    ("embeddings/per-block", "embeddings/no-position-table", "L*V*d", lambda f: f["L"] * f["V"] * f["d"]),
    ("embeddings/token-table-twice", "embeddings/no-position-table", "2V*d", lambda f: 2 * f["V"] * f["d"]),
    ("layernorm/one-per-block", "layernorm/one-block", "2d", lambda f: 2 * f["d"]),
    ("layernorm/one-per-block", "layernorm/final-counted", "2Ld + 2d", lambda f: 2 * f["L"] * f["d"] + 2 * f["d"]),
    ("attention/with-layernorms", "attention/biases-per-position", "L*(4d^2 + 4Td + 4d)",
     lambda f: f["L"] * (4 * f["d"] ** 2 + 4 * f["T"] * f["d"] + 4 * f["d"])),
])

#: Two mistakes at once that share a mistake with a single one, several on the same one (the position
#: table left out, the final LayerNorm or the output bias counted, one block only, ...). With single
#: mistakes only, the key is the one choice a mistake away from every other, and a reader who spots
#: the one-mistake relations finds it every time (the total 39 times in 39 at seed 99); a set such as
#: {m1, m1+m2, m1+m3} makes m1 that choice, {m1, m1+m2, m3} ties it with the key.
register_double_mistakes("param-count", MISTAKES, [
    ("total/no-position-table", "total/no-biases", "total - T*d - L*(4d + f + d)",
     lambda f: f["total"] - f["T"] * f["d"] - f["L"] * (5 * f["d"] + f["f"])),
    ("total/no-position-table", "total/one-layernorm-per-block", "total - T*d - 2Ld",
     lambda f: f["total"] - f["T"] * f["d"] - 2 * f["L"] * f["d"]),
    ("total/no-position-table", "total/final-layernorm", "total - T*d + 2d",
     lambda f: f["total"] - f["T"] * f["d"] + 2 * f["d"]),
    ("total/no-position-table", "total/untied-not-counted", "total - T*d - V*d (untied)",
     lambda f: f["total"] - f["T"] * f["d"] - f["V"] * f["d"]),
    ("total/tied-counted-twice", "total/no-position-table", "total - T*d + V*d (tied)",
     lambda f: f["total"] - f["T"] * f["d"] + f["V"] * f["d"]),
    ("total/no-biases", "total/one-layernorm-per-block", "total - L*(4d + f + d) - 2Ld",
     lambda f: f["total"] - f["L"] * (7 * f["d"] + f["f"])),
    ("total/final-layernorm", "total/output-bias", "total + 2d + V",
     lambda f: f["total"] + 2 * f["d"] + f["V"]),
    ("total/tied-counted-twice", "total/final-layernorm", "total + V*d + 2d (tied)",
     lambda f: f["total"] + f["V"] * f["d"] + 2 * f["d"]),
    ("total/tied-counted-twice", "total/output-bias", "total + V*d + V (tied)",
     lambda f: f["total"] + f["V"] * f["d"] + f["V"]),
    ("total/untied-not-counted", "total/final-layernorm", "total - V*d + 2d (untied)",
     lambda f: f["total"] - f["V"] * f["d"] + 2 * f["d"]),
    ("total/untied-not-counted", "total/output-bias", "total - V*d + V (untied: the bias alone)",
     lambda f: f["total"] - f["V"] * f["d"] + f["V"]),
    ("total/embeddings-per-block", "total/no-position-table", "total - T*d + (L-1)V*d",
     lambda f: f["total"] - f["T"] * f["d"] + (f["L"] - 1) * f["V"] * f["d"]),
    ("total/one-layernorm-per-block", "total/final-layernorm", "total - 2Ld + 2d",
     lambda f: f["total"] - 2 * f["L"] * f["d"] + 2 * f["d"]),
    ("embeddings/rows-only", "embeddings/no-position-table", "V",
     lambda f: f["V"]),
    ("embeddings/rows-only", "embeddings/per-block", "L*(V + T)",
     lambda f: f["L"] * (f["V"] + f["T"])),
    ("embeddings/rows-only", "embeddings/token-table-twice", "2V + T",
     lambda f: 2 * f["V"] + f["T"]),
    ("embeddings/token-table-twice", "embeddings/position-per-block", "(2V + L*T)*d",
     lambda f: (2 * f["V"] + f["L"] * f["T"]) * f["d"]),
    ("embeddings/per-block", "embeddings/token-table-twice", "L*(2V + T)*d",
     lambda f: f["L"] * (2 * f["V"] + f["T"]) * f["d"]),
    ("ffn/one-block", "ffn/width-d", "2d^2 + 2d", lambda f: 2 * f["d"] ** 2 + 2 * f["d"]),
    ("ffn/one-block", "ffn/with-layernorm", "2df + f + 3d", lambda f: 2 * f["d"] * f["f"] + f["f"] + 3 * f["d"]),
    ("ffn/square-width", "ffn/one-block", "2f^2 + 2f", lambda f: 2 * f["f"] ** 2 + 2 * f["f"]),
    ("ffn/square-width", "ffn/no-biases", "L*2f^2", lambda f: f["L"] * 2 * f["f"] ** 2),
    ("ffn/width-d", "ffn/biases-per-position", "L*(2d^2 + 2Td)",
     lambda f: f["L"] * (2 * f["d"] ** 2 + 2 * f["T"] * f["d"])),
    ("ffn/width-d", "ffn/with-layernorm", "L*(2d^2 + 4d)", lambda f: f["L"] * (2 * f["d"] ** 2 + 4 * f["d"])),
    ("ffn/square-width", "ffn/biases-per-position", "L*(2f^2 + 2Tf)",
     lambda f: f["L"] * (2 * f["f"] ** 2 + 2 * f["T"] * f["f"])),
    ("ffn/with-layernorm", "ffn/biases-per-position", "L*(2df + T(f + d) + 2d)",
     lambda f: f["L"] * (2 * f["d"] * f["f"] + f["T"] * (f["f"] + f["d"]) + 2 * f["d"])),
    ("ffn/square-width", "ffn/with-layernorm", "L*(2f^2 + 2f + 2d)",
     lambda f: f["L"] * (2 * f["f"] ** 2 + 2 * f["f"] + 2 * f["d"])),
    ("layernorm/one-block", "layernorm/final-counted", "6d", lambda f: 6 * f["d"]),
    ("layernorm/per-position", "layernorm/one-block", "4dT", lambda f: 4 * f["d"] * f["T"]),
    ("layernorm/as-matrix", "layernorm/one-block", "2*(d^2 + d)", lambda f: 2 * (f["d"] ** 2 + f["d"])),
    ("layernorm/per-position", "layernorm/one-per-block", "2LdT", lambda f: 2 * f["L"] * f["d"] * f["T"]),
    ("layernorm/as-matrix", "layernorm/one-per-block", "L*(d^2 + d)", lambda f: f["L"] * (f["d"] ** 2 + f["d"])),
    ("layernorm/one-per-block", "layernorm/scalar-gain-and-bias", "2L", lambda f: 2 * f["L"]),
    ("layernorm/as-matrix", "layernorm/final-counted", "L*2*(d^2 + d) + 2d",
     lambda f: f["L"] * 2 * (f["d"] ** 2 + f["d"]) + 2 * f["d"]),
    ("lm_head/output-bias", "lm_head/per-position", "T*(V*d + V)", lambda f: f["T"] * (f["V"] * f["d"] + f["V"])),
    ("lm_head/output-bias", "lm_head/position-table-added", "(V + T)*d + V",
     lambda f: (f["V"] + f["T"]) * f["d"] + f["V"]),
    ("lm_head/ffn-width", "lm_head/output-bias", "V*f + V", lambda f: f["V"] * f["f"] + f["V"]),
    ("lm_head/per-position", "lm_head/ffn-width", "T*V*f", lambda f: f["T"] * f["V"] * f["f"]),
    ("lm_head/ffn-width", "lm_head/position-table-added", "(V + T)*f", lambda f: (f["V"] + f["T"]) * f["f"]),
    ("lm_head/rows-only", "lm_head/position-table-added", "V + T", lambda f: f["V"] + f["T"]),
    ("lm_head/context-for-vocab", "lm_head/output-bias", "T*d + T", lambda f: f["T"] * f["d"] + f["T"]),
    ("lm_head/keeps-width", "lm_head/output-bias", "d*d + d", lambda f: f["d"] * f["d"] + f["d"]),
    ("lm_head/keeps-width", "lm_head/per-position", "T*d*d", lambda f: f["T"] * f["d"] * f["d"]),
    ("lm_head/context-for-vocab", "lm_head/per-position", "T*T*d", lambda f: f["T"] * f["T"] * f["d"]),
    ("lm_head/ffn-width", "lm_head/rows-only", "V + f", lambda f: f["V"] + f["f"]),
    ("lm_head/rows-only", "lm_head/per-position", "T*V", lambda f: f["T"] * f["V"]),
    ("lm_head/keeps-width", "lm_head/ffn-width", "d*f", lambda f: f["d"] * f["f"]),
    ("attention/one-block", "attention/no-output-projection", "3d^2 + 3d", lambda f: 3 * f["d"] ** 2 + 3 * f["d"]),
    ("attention/one-block", "attention/with-layernorms", "4d^2 + 8d", lambda f: 4 * f["d"] ** 2 + 8 * f["d"]),
    ("attention/scores-as-parameters", "attention/no-biases", "L*(4d^2 + T^2)",
     lambda f: f["L"] * (4 * f["d"] ** 2 + f["T"] ** 2)),
])

@register_family
class ParamCount(Family):
    name = "param-count"
    version = 8  # v8: two-mistake counts sharing a mistake with the single ones, so the key is not the mistake hub
    title = "GPT parameter count"
    summary = "Count a GPT's parameters (total or one component) for a random configuration, tied or untied."
    tags = ("parameters", "gpt-1")
    subquestion_key = "component"
    subquestion_values = ("embeddings", "attention", "ffn", "layernorm", "lm_head", "total")

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
                f"width d = {fmt.integer(d)}, L = {L} blocks and FFN width f = {fmt.integer(f)}. Count learned token and "
                "position embeddings; per block a fused QKV projection and an output projection with biases, "
                "an FFN d -> f -> d with biases, and two affine LayerNorms; no final LayerNorm. The output "
                f"head is {head}. How many parameters are in {_COMPONENT_TEXT[component]}?")
        solution = (f"Embeddings $(V+T)d$ = {fmt.integer(counts['embeddings'])}; attention $L(4d^2+4d)$ = "
                    f"{fmt.integer(counts['attention'])}; FFN $L(2df+f+d)$ = {fmt.integer(counts['ffn'])}; "
                    f"LayerNorm $4dL$ = {fmt.integer(counts['layernorm'])}; head "
                    f"{fmt.integer(counts['lm_head'])} ({'tied: no new parameters' if tied else 'untied: $Vd$'}). "
                    f"Total {fmt.integer(counts['total'])}. The asked count is {fmt.integer(value)}.")
        parameters = {**cfg, "tied": tied, "component": component}
        wrong = wrong_options(MISTAKES, mistake_names(component, tied), self.facts(parameters), fmt.integer)
        options = numeric_options(rng, value, fmt.integer(value), wrong, "Correct under the stated convention.")
        return Draft(parameters=parameters, stem=stem, answer=int_answer(value), options=options,
                     solution=solution, mistakes=wrong)

    def facts(self, parameters: dict[str, Any]) -> dict[str, Any]:
        """The sizes under short names and every component's count."""
        V, T, d, L, f = (parameters[k] for k in ("vocab_size", "block_size", "n_embd", "n_layer", "ffn_dim"))
        counts = gpt_param_count(V, T, d, L, f, tied=parameters["tied"])
        return {**parameters, **counts, "V": V, "T": T, "d": d, "L": L, "f": f, "f_text": fmt.integer(f)}

    def check(self, variant: dict[str, Any]) -> list[str]:
        p = variant["parameters"]
        sizes = (p["vocab_size"], p["block_size"], p["n_embd"], p["n_layer"], p["ffn_dim"])
        expected = enumerate_param_counts(*sizes, tied=p["tied"])
        return check_equal(variant["answer"]["value"], expected[p["component"]])

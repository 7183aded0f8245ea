"""Seeded exam-practice questions on the LM head, its loss, perplexity and parameter counts.

Public API:

* :func:`families` / :func:`get_family` — the family registry;
* :func:`generate_variant` — one variant as JSON-serializable data;
* :func:`build_bundle` / :func:`run_generate` — question sets and their export;
* :func:`run_stress` — the stress test behind ``grader questions stress``.

Adding a family is adding one module to :mod:`question_bank.families`; see
``docs/authoring-guide.md``.
"""
from question_bank.generate import (
    GenerateRequest,
    GenerateResult,
    build_bundle,
    generate_sheet,
    generate_item,
    generate_variant,
    run_generate,
)
# The subpackage of the same name is imported first: importing it later (as any family module
# does) would otherwise rebind ``question_bank.families`` from the function to the package.
import importlib as _importlib  # noqa: E402
_importlib.import_module("question_bank.families")
from question_bank.registry import Family, families, family_names, get_family, register_family  # noqa: E402
from question_bank.stress import StressReport, run_stress

__all__ = [
    "Family", "GenerateRequest", "GenerateResult", "StressReport",
    "build_bundle", "families", "family_names", "generate_item", "generate_sheet", "generate_variant",
    "get_family", "register_family", "run_generate", "run_stress",
]

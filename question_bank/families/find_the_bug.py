"""Code reading: which catalogued mistake is in this NumPy softmax or cross-entropy?

The listing is the course function with one mistake of the ``lm-head``
assignment's catalogue made in it (see :mod:`question_bank.code_reading`); the
choices are catalogue titles and each choice's feedback is the catalogue's
explanation, so the bank and the grader's diagnosis name a mistake alike.
The key is the catalogue entry whose implementation returns what the printed
listing returns on every probe; generation refuses a listing that reproduces
no entry or several.

The four titles shown are drawn first and the key is one of them at random
(:func:`choice_set`), so a title's being shown says nothing of whether it is
the key. Drawing the key first and then its distractors let a sheet give keys
away: the two axis mistakes of softmax are never shown beside each other, so
each was shown less often and was the key when shown in 0.32 and 0.37 of
variants (chance 0.25), and a reader picking the title seen least on the
sheet beat chance.
"""
from __future__ import annotations

import functools
import itertools
import math
from typing import Any, Callable

import numpy as np

from question_bank.choices import N_DISTRACTORS
from question_bank.code_reading import LISTINGS, catalogue_entries, reproducing_entries, run_source, same_result
from question_bank.errors import GenerationError
from question_bank.exporters._markup import split_fences
from question_bank.families._common import correct_choices
from question_bank.mistakes import register_mistakes, wrong_options
from question_bank.registry import Family, register_family
from question_bank.variant import Answer, Draft, Option

#: The catalogued misconception each catalogue slug is an instance of.
MISCONCEPTION_OF = {
    "softmax-without-max-subtraction": "softmax-no-max-shift",
    "softmax-global-max": "softmax-global-max",
    "softmax-minimum-subtracted": "softmax-min-shift",
    "softmax-over-first-axis": "softmax-wrong-axis",
    "softmax-axis-argument-ignored": "softmax-wrong-axis",
    "softmax-over-whole-array": "softmax-whole-array",
    "loss-summed": "sum-vs-mean",
    "gradient-missing-one-over-n": "missing-1-over-n",
    "divided-by-batch-only": "mean-over-batch-only",
    "loss-averages-all-vocabulary": "divide-by-vocab",
    "loss-onehot-mean-over-vocabulary": "divide-by-vocab",
    "loss-without-max-subtraction": "softmax-no-max-shift",
    "loss-global-max": "softmax-global-max",
    "loss-softmax-wrong-axis": "softmax-wrong-axis",
    "onehot-not-subtracted": "softmax-without-onehot",
    "gradient-sign-flipped": "gradient-sign",
    "loss-sign-flipped": "log-sign",
    "loss-log-base-2": "wrong-log-base",
    "loss-log-base-10": "wrong-log-base",
    "target-index-without-row-index": "target-column-indexing",
    "dlogits-left-flat": "flattened-batch",
}


def _braces(text: str) -> str:
    """``text`` safe as a ``str.format`` template (the mistake registry formats feedback)."""
    return text.replace("{", "{{").replace("}", "}}")


def _register() -> dict[str, Any]:
    """One mistake formula per catalogue slug: its value is the slug, its feedback the catalogue's explanation."""
    entries = []
    for function, listing in LISTINGS.items():
        catalogue = catalogue_entries(function)
        for slug in listing.edits:
            entries.append((f"{function}/{slug}", MISCONCEPTION_OF[slug], f"catalogue entry {slug}",
                            (lambda s: lambda facts: s)(slug),
                            "Running the listing does not give what this mistake gives, so it is not the one "
                            "here. What it looks like in code: " + _braces(catalogue[slug].explanation)))
    return register_mistakes("find-the-bug", entries)


MISTAKES = _register()


@functools.lru_cache(maxsize=None)
def allowed_sets(function: str) -> tuple[tuple[str, ...], ...]:
    """Every set of ``N_DISTRACTORS + 1`` of ``function``'s catalogue slugs with no two of one misconception.

    Two mistakes of one misconception ("`axis` argument ignored" and "Softmax over the wrong
    axis") would both describe a listing showing either, so they are never shown together.
    """
    slugs = list(LISTINGS[function].edits)
    return tuple(combo for combo in itertools.combinations(slugs, N_DISTRACTORS + 1)
                 if len({MISCONCEPTION_OF[s] for s in combo}) == len(combo))


def choice_set(rng: np.random.Generator, function: str) -> tuple[tuple[str, ...], str]:
    """The slugs shown as choices (uniform over :func:`allowed_sets`) and the key, uniform among them.

    Drawn in this order, a shown title is the key with probability one in four whatever else a
    reader sees: which titles a sheet repeats, which title is the only one of its kind in an item,
    or its length or likeness to the others. A slug that fits fewer sets (one of a misconception
    pair) is shown and is the key less often, in the same proportion.
    """
    sets = allowed_sets(function)
    shown = sets[int(rng.integers(len(sets)))]
    return shown, shown[int(rng.integers(len(shown)))]


def _code_block(source: str) -> str:
    return f"```python\n{source}\n```"


@register_family
class FindTheBug(Family):
    name = "find-the-bug"
    title = "Find the bug"
    summary = "Which catalogued mistake is in a printed NumPy softmax or cross-entropy (code reading)."
    tags = ("code-reading", "softmax", "loss", "gradient")
    subquestion_key = "function"
    subquestion_values = tuple(LISTINGS)
    distinct_items = sum(len(listing.edits) for listing in LISTINGS.values())
    distinct_target = distinct_items
    version = 2  # v2: the four titles are drawn first and the key among them, so how often a title is shown says nothing
    # the choices name mistakes (the key is one too); none is another with a mistake applied
    mistake_structure = False

    def build(self, rng: np.random.Generator) -> Draft:
        function = self.subquestion_values[int(rng.integers(len(self.subquestion_values)))]
        listing = LISTINGS[function]
        shown, slug = choice_set(rng, function)
        source = listing.source(slug)
        found = reproducing_entries(listing, source)
        if found != [slug]:
            raise GenerationError(f"the {function} listing of {slug!r} reproduces the catalogue entries {found}; "
                                  "its probes must single out exactly that one")
        catalogue = catalogue_entries(function)
        title = catalogue[slug].title
        parameters = {"function": function, "mistake": slug}
        # A mistake of the key's own misconception ("`axis` argument ignored" beside "Softmax over the
        # wrong axis") would describe the listing too: no allowed set shows it, nor is it a listed mistake.
        others = [s for s in listing.edits if MISCONCEPTION_OF[s] != MISCONCEPTION_OF[slug]]
        wrong = wrong_options(MISTAKES, [f"{function}/{s}" for s in others], parameters,
                              lambda s: catalogue[s].title)
        correct = Option(value=slug, text=title, correct=True, feedback=f"Correct: {catalogue[slug].explanation}")
        options = [correct, *(option for option in wrong if option.value in shown)]
        stem = (f"{listing.contract} A student wrote:\n\n{_code_block(source)}\n\n"
                "Running it shows exactly one of the mistakes below. Which one?")
        fixes = "; ".join(f"`{printed.strip()}` should read `{correct.strip()}`" if printed is not None
                          else f"the line `{correct.strip()}` is missing"
                          for correct, printed in listing.changed_lines(slug))
        solution = (f"**{title}.** {catalogue[slug].explanation} In the listing, {fixes}. "
                    "Run on test inputs, the listing returns exactly what this catalogued mistake returns, "
                    "and differs from each of the other choices.")
        return Draft(parameters=parameters, stem=stem,
                     answer=Answer(kind="single_choice", value=None, display=title),
                     options=options, solution=solution, mistakes=wrong)

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Undo the key's edit in the printed listing: the result must match an independent reference, the listing must not."""
        params = variant["parameters"]
        listing = LISTINGS[params["function"]]
        _, codes = split_fences(variant["stem"])
        if len(codes) != 1:
            return [f"the stem holds {len(codes)} code listings, expected 1"]
        printed = codes[0]
        (correct,) = correct_choices(variant)
        key = correct["value"]
        if key not in listing.edits:
            return [f"the correct choice {key!r} is not a mistake of {listing.function}"]
        fixed = printed
        for right, wrong in listing.changed_lines(key):
            if wrong is None or wrong not in fixed.splitlines():
                return [f"the printed listing does not contain the line {wrong!r} of the mistake {key!r}"]
            fixed = fixed.replace(wrong, right, 1)
        reference = _independent_reference(listing.function)
        probes = listing.probes()
        problems = []
        if not all(same_result(run_source(fixed, listing.function, args), reference(*args)) for args in probes):
            problems.append(f"undoing {key!r} does not give a correct {listing.function}")
        if all(same_result(run_source(printed, listing.function, args), reference(*args)) for args in probes):
            problems.append(f"the printed {listing.function} is correct on every probe, so it shows no mistake")
        return problems


def _independent_reference(function: str) -> Callable[..., Any]:
    """A plain-Python softmax or loss (loops over rows, math.exp/log), independent of ``solutions/`` and the listing."""
    if function == "softmax":
        return _plain_softmax
    return _plain_cross_entropy


def _plain_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    moved = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.empty_like(moved)
    for index in np.ndindex(moved.shape[:-1]):
        row = [float(v) for v in moved[index]]
        top = max(row)
        weights = [math.exp(v - top) for v in row]
        total = math.fsum(weights)
        out[index] = [w / total for w in weights]
    return np.moveaxis(out, -1, axis)


def _plain_cross_entropy(logits: np.ndarray, targets: np.ndarray) -> tuple[float, np.ndarray]:
    B, T, V = logits.shape
    N = B * T
    grad = np.empty((B, T, V))
    terms = []
    for b in range(B):
        for t in range(T):
            row = [float(v) for v in logits[b, t]]
            top = max(row)
            total = math.fsum(math.exp(v - top) for v in row)
            target = int(targets[b, t])
            terms.append(top + math.log(total) - row[target])
            for v in range(V):
                grad[b, t, v] = (math.exp(row[v] - top) / total - (1.0 if v == target else 0.0)) / N
    return math.fsum(terms) / N, grad

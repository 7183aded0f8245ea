"""Stress test of the question families: many seeds, every answer checked twice.

For each family, :func:`run_stress` draws ``n`` variants and, for each one:

* validates its structure (:func:`question_bank.variant.validate_variant`,
  run inside :func:`question_bank.generate.generate_variant`: no distractor
  accepted as the answer, every distractor naming a catalogued
  misconception, canonical JSON);
* recomputes the answer by the family's independent ``check`` (exact
  fractions, brute force or a second formula; never ``solutions/``);
* regenerates every :data:`DETERMINISM_EVERY`-th seed and compares the JSON
  bytes, and for a multi-part family builds that seed's whole item and checks
  its parts (:func:`item_problems`: one scenario, every key recomputed, each
  carry giving the key from the earlier part's key).

It then counts distinct variants (by parameters and stem), tallies where the
correct choice lands, tests that spread for uniformity with a chi-square
test, lets the content-blind players of :mod:`question_bank.cues` answer
every choice question from its rendered choices alone (per sub-question:
value ranks, sign pairs, likeness, length, the hub of one-slip links and
the other players of :mod:`question_bank.cues`), and times generation. A family fails when any player finds the key more
often than chance plus the margin.
"""
from __future__ import annotations

import itertools
import math
import random
import re
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable

from question_bank.answers import ARRANGEMENT_KINDS, answer_key, carried_value, judge, matches, parse_response
from question_bank.cues import CueTally, cue_table
from question_bank.errors import QuestionBankError, require_at_least_one
from question_bank.generate import generate_item, generate_variant
from question_bank.registry import get_family, resolve_families
from question_bank.seeding import variant_seed
from question_bank.variant import json_key

#: Every this many seeds the variant is generated twice and compared byte for byte.
DETERMINISM_EVERY = 10

#: The correct-position spread fails when a chi-square test of uniformity
#: gives a p-value below this. The stress seeds are fixed, so the result is
#: reproducible; the level is strict enough that a fair shuffle almost never fails.
UNIFORMITY_P_MIN = 1e-4

#: The chi-square approximation needs this many expected hits per position.
MIN_EXPECTED_PER_POSITION = 5

#: Failure messages kept per family (the count is always exact).
MAX_MESSAGES = 5


@dataclass
class FamilyStress:
    """Stress result of one family.

    Attributes:
        family: family name.
        n: variants drawn.
        failed: variants with at least one problem.
        messages: the first problems found, prefixed by the seed.
        distinct: distinct variants by parameters and stem.
        distinct_target: distinct variants required for this n.
        positions: how often the correct choice sat at each position (a, b, ...).
        uniform_p: smallest chi-square p-value over groups of equal choice count
            (``None`` when too few draws to test).
        ms_per_variant: mean generation time in milliseconds.
    """

    family: str
    n: int
    failed: int = 0
    messages: list[str] = field(default_factory=list)
    distinct: int = 0
    distinct_target: int = 0
    positions: list[int] = field(default_factory=list)
    uniform_p: float | None = None
    ms_per_variant: float = 0.0
    cues: CueTally = field(default_factory=CueTally)

    @property
    def ok(self) -> bool:
        """No failed variant, enough distinct variants, a uniform spread, no answer cue."""
        return (self.failed == 0 and self.distinct >= self.distinct_target
                and (self.uniform_p is None or self.uniform_p >= UNIFORMITY_P_MIN)
                and not self.cues.cues())


@dataclass
class StressReport:
    """All families' stress results and the wall time of the run."""

    rows: list[FamilyStress]
    seconds: float

    @property
    def ok(self) -> bool:
        return all(row.ok for row in self.rows)

    def table(self) -> str:
        """The report as a fixed-width text table, followed by any failure messages."""
        return format_table(self)

    def cue_table(self) -> str:
        """Each content-blind player's hits per family and sub-question."""
        return format_cue_table(self)


def run_stress(families: list[str] | tuple[str, ...] = (), n: int = 1000, seed: int = 0,
               on_family_done: Callable[[FamilyStress], None] | None = None) -> StressReport:
    """Stress-test ``families`` (all when empty) with ``n`` seeds each.

    Raises:
        QuestionBankError: for n < 1 or an unknown family.
    """
    require_at_least_one(n)
    start = time.perf_counter()
    rows = []
    for name in resolve_families(list(families)):
        row = stress_family(name, n, seed)
        rows.append(row)
        if on_family_done is not None:
            on_family_done(row)
    return StressReport(rows=rows, seconds=time.perf_counter() - start)


def stress_family(name: str, n: int, seed: int = 0) -> FamilyStress:
    """Stress one family; see the module docstring."""
    family = get_family(name)
    row = FamilyStress(family=name, n=n)
    keys: set[str] = set()
    # correct positions per number of choices, since the uniform law depends on it
    hits: dict[int, Counter[int]] = defaultdict(Counter)
    generation_seconds = 0.0
    for index in range(n):
        s = variant_seed(seed, name, index)
        t0 = time.perf_counter()
        try:
            variant = generate_variant(name, s)
        except QuestionBankError as exc:
            _fail(row, s, [str(exc)])
            continue
        generation_seconds += time.perf_counter() - t0
        # generate_variant has already validated the structure (it raises otherwise).
        problems = _safe_check(family.check, variant)
        if variant["answer"]["kind"] in ARRANGEMENT_KINDS:
            problems += arrangement_problems(family, variant, thorough=index % DETERMINISM_EVERY == 0)
        if family.parts and index % DETERMINISM_EVERY == 0:
            problems += item_problems(name, s, variant)
        if index % DETERMINISM_EVERY == 0 and json_key(generate_variant(name, s)) != json_key(variant):
            problems.append("the same seed gave different JSON")
        if problems:
            _fail(row, s, problems)
        keys.add(json_key([variant["parameters"], variant["stem"]]))
        row.cues.add(family.subquestion(variant["parameters"]), variant)
        for position, choice in enumerate(variant["choices"]):
            if choice["correct"]:
                hits[len(variant["choices"])][position] += 1
    row.distinct = len(keys)
    row.distinct_target = math.ceil(family.distinct_target * min(n, 1000) / 1000)
    width = max(hits, default=0)
    row.positions = [sum(counter[p] for counter in hits.values()) for p in range(width)]
    row.uniform_p = _uniformity_p(hits)
    row.ms_per_variant = 1000 * generation_seconds / n
    return row


def item_problems(family: str, seed: int, variant: dict[str, Any]) -> list[str]:
    """A multi-part item's parts agree: the seed's variant is its own part of the item, every part
    prints the same scenario, each part's family check passes, and each carry, fed the earlier part's
    key, gives this part's key (so a carried-error note reproduces the key's own computation)."""
    item = generate_item(family, seed)
    fam = get_family(family)
    problems = []
    if item[variant["part"]["index"]] != variant:
        problems.append("the seed's variant differs from the same part of its item")
    scenario = [{k: v for k, v in part["parameters"].items() if k != fam.subquestion_key} for part in item]
    if any(other != scenario[0] for other in scenario[1:]):
        problems.append("the parts of one item print different scenarios")
    for part in item:
        problems += [f"part ({part['part']['label']}): {p}" for p in _safe_check(fam.check, part)]
        carry = part["part"]["carry"]
        if carry is None:
            continue
        carried = carried_value(carry, item[carry["from"]]["answer"]["value"])
        answer = part["answer"]
        if carried is None or not matches("float", answer["value"], carried, answer["rtol"], answer["atol"]):
            problems.append(f"part ({part['part']['label']})'s carry gives {carried!r} from part "
                            f"({item[carry['from']]['part']['label']})'s key, not its key {answer['value']!r}")
    return problems


#: Arrangements judged per ordering or matching variant (all of them when there are fewer).
ARRANGEMENTS_TRIED = 120


def arrangement_problems(family: Any, variant: dict[str, Any], thorough: bool = False) -> list[str]:
    """An ordering's or matching's key and answer space, checked by the judge against the family.

    The key typed as printed is accepted; the printed order of an ordering's steps is neither the key
    nor its reverse; no key of a matching is the only option with its number of axes; and on up to
    :data:`ARRANGEMENTS_TRIED` other arrangements (every arrangement when ``thorough`` and they are
    few enough), the judge accepts exactly those the family's ``arrangement_holds`` (running the
    lines, or a table of shapes) finds right, and nothing but the key.
    """
    answer = variant["answer"]
    key = answer_key(variant)
    problems = []
    if not judge(key, parse_response(answer["display"], key)).correct:
        problems.append(f"the key typed as printed ({answer['display']}) is not accepted")
    ids = [c["id"] for c in variant["choices"]]
    if answer["kind"] == "ordering":
        printed = [cid for cid in ids if cid in answer["value"]]
        if printed in (answer["value"], answer["value"][::-1]):
            problems.append("the steps are printed in the key's order (or its reverse)")
    else:
        axes = Counter(len(_NUMBER.findall(c["text"])) for c in variant["choices"])
        lonely = [slot["text"] for slot, cid in zip(answer["slots"], answer["value"])
                  if axes[len(_NUMBER.findall(next(c["text"] for c in variant["choices"] if c["id"] == cid)))] < 2]
        if lonely:
            problems.append(f"the options of {lonely} are the only ones with their number of axes")
    for arrangement in _arrangements(ids, len(answer["slots"]), variant["seed"], thorough):
        accepted = judge(key, arrangement).correct
        if accepted != (arrangement == answer["value"]) or accepted != family.arrangement_holds(variant, arrangement):
            problems.append(f"the judge {'accepts' if accepted else 'rejects'} {','.join(arrangement)}, "
                            f"which {'holds' if family.arrangement_holds(variant, arrangement) else 'fails'} "
                            "when the family checks it")
            break
    return problems


def _arrangements(ids: list[str], n_slots: int, seed: int, thorough: bool) -> list[list[str]]:
    """Arrangements of ``n_slots`` of ``ids`` to try: all of them when thorough and few enough, else a sample."""
    every = math.perm(len(ids), n_slots)
    if thorough and every <= 2 * ARRANGEMENTS_TRIED * 10:
        return [list(p) for p in itertools.permutations(ids, n_slots)]
    rng = random.Random(seed)
    return [rng.sample(ids, n_slots) for _ in range(min(ARRANGEMENTS_TRIED, every))]


_NUMBER = re.compile(r"\d+")


def _safe_check(check: Callable[[dict[str, Any]], list[str]], variant: dict[str, Any]) -> list[str]:
    """Run a family's check; an exception in it is a failure, not a crash."""
    try:
        return list(check(variant))
    except Exception as exc:  # noqa: BLE001 - any crash of a checker is reported as a failure
        return [f"independent check raised {type(exc).__name__}: {exc}"]


def _fail(row: FamilyStress, seed: int, problems: list[str]) -> None:
    row.failed += 1
    for problem in problems:
        if len(row.messages) < MAX_MESSAGES:
            row.messages.append(f"seed {seed}: {problem}")


def _uniformity_p(hits: dict[int, Counter[int]]) -> float | None:
    """Smallest chi-square p-value of "every position equally likely" over the groups."""
    p_values = []
    for n_choices, counter in hits.items():
        total = sum(counter.values())
        expected = total / n_choices
        if n_choices < 2 or expected < MIN_EXPECTED_PER_POSITION:
            continue
        statistic = sum((counter[p] - expected) ** 2 / expected for p in range(n_choices))
        p_values.append(chi2_sf(statistic, n_choices - 1))
    return min(p_values) if p_values else None


def chi2_sf(x: float, df: int) -> float:
    """Upper tail P(X > x) of a chi-square law with integer ``df`` degrees of freedom.

    Closed forms: for even df a Poisson sum, for odd df the normal tail plus
    a finite series, so no special-function library is needed.
    """
    if x <= 0:
        return 1.0
    half = x / 2
    if df % 2 == 0:
        term, total = 1.0, 1.0
        for i in range(1, df // 2):
            term *= half / i
            total += term
        return min(1.0, math.exp(-half) * total)
    tail = math.erfc(math.sqrt(half))
    term = math.sqrt(2 * x / math.pi) * math.exp(-half)
    for i in range(1, (df - 1) // 2 + 1):
        tail += term
        term *= x / (2 * i + 1)
    return min(1.0, tail)


def format_table(report: StressReport) -> str:
    """Fixed-width table of a stress report (see ``grader questions stress``)."""
    name_width = max([len("family")] + [len(r.family) for r in report.rows])
    header = (f"{'family':<{name_width}}  {'n':>5}  {'fail':>4}  {'distinct':>8}  {'target':>6}  "
              f"{'correct position a/b/c/d/e':<28}  {'p(unif)':>7}  {'ms/var':>6}  status")
    lines = [header, "-" * len(header)]
    for r in report.rows:
        spread = "/".join(str(c) for c in r.positions)
        p = "-" if r.uniform_p is None else f"{r.uniform_p:.3f}"
        lines.append(f"{r.family:<{name_width}}  {r.n:>5}  {r.failed:>4}  {r.distinct:>8}  "
                     f"{r.distinct_target:>6}  {spread:<28}  {p:>7}  {r.ms_per_variant:>6.2f}  "
                     f"{'ok' if r.ok else 'FAIL'}")
    total = sum(r.n for r in report.rows)
    failed = sum(r.failed for r in report.rows)
    bad = [r.family for r in report.rows if not r.ok]
    lines.append("-" * len(header))
    lines.append(f"{len(report.rows)} families, {total} variants, {failed} failed variants, "
                 f"{report.seconds:.1f} s; {'all ok' if not bad else 'FAILED: ' + ', '.join(bad)}")
    for r in report.rows:
        for message in r.messages:
            lines.append(f"  {r.family}: {message}")
        if r.distinct < r.distinct_target:
            lines.append(f"  {r.family}: only {r.distinct} distinct variants, target {r.distinct_target}")
        if r.uniform_p is not None and r.uniform_p < UNIFORMITY_P_MIN:
            lines.append(f"  {r.family}: correct positions {r.positions} are not uniform (p = {r.uniform_p:.2g})")
        for sub, player, score in r.cues.cues():
            lines.append(f"  {r.family}{'/' + sub if sub else ''}: the {player} player finds the key "
                         f"{score.hits:.0f} times in {score.applied} (chance {score.chance:.0f}, "
                         f"limit {score.limit:.0%})")
    return "\n".join(lines)


def format_cue_table(report: StressReport) -> str:
    """Each content-blind player's hits per family and sub-question (see :func:`question_bank.cues.cue_table`)."""
    return cue_table({r.family: r.cues for r in report.rows})


__all__ = ["FamilyStress", "StressReport", "chi2_sf", "format_cue_table", "run_stress", "stress_family"]

"""Measure mistake groups on a class built from a blind corpus (issue 31).

The class is made of the cases of ``tests/blind/<corpus>/<assignment>`` in one of two compositions:

- ``--composition uniform`` (the default): each case repeated ``--copies`` times;
- ``--composition zipf``: ``--class-size`` submissions (by default as many as the uniform class,
  and at least 300, the class issue 31 asks for), each drawn independently from the cases with
  probability proportional to ``1 / rank ** --zipf-exponent``, the ranks a random order of the cases
  (``--seed``). Kim and Piech (LAK 2023, "The Student Zipf Theory: Inferring Latent Structures in
  Open-Ended Student Work To Help Educators") find that the distribution of student work across
  many subjects and assignment types is close to Zipf's law, whose own exponent is 1 (the default):
  a real class repeats a few mistakes often and many rarely. The exponent and the seed are fixed
  here, before any measurement, and are not chosen to meet a target.

Every copy of a case differs from the others in its comments and in its spelling of the NumPy
module (``np.`` or ``numpy.``), and two copies of every four divide by multiplying with the
reciprocal (``a * (1.0 / b)`` for ``a / b``): the case's computation with another round-off (and,
where a divisor underflows, inf where the quotient is finite), as students who make one mistake
write it each their own way. Round-off is all a copy may change: where ``b`` is a Python number
that is 0, ``1.0 / b`` raises where ``a / b`` with a NumPy ``a`` gives inf or nan. So before
grading, every style of every case is run on the class probes beside the case itself
(``same_behaviour``); a division whose reciprocal changes what the case does there is left a
division (``kept_divisions``), and any style that still behaves otherwise is reported: its copies
would be another cause, and a split they make the benchmark's, not the grouping's.
The class is graded (with the class probes), grouped, and measured against the corpus truth (each
mistake case is one cause, of its ``function``):

- purity: no group of a case's own function holds two causes; groups of another function (a
  right ``lm_head_backward`` failing only the test that uses the student's own ``lm_head``) are
  counted apart, as they gather every cause of the function they depend on;
- splits: causes with 3 or more submissions in the class whose copies landed in more than one group;
- reads: how many unnamed groups, largest loss first, cover 90% of the points lost in unnamed
  groups, against the number of submissions in unnamed groups; and beside it the reads a grouping
  exactly by the corpus truth would need on the same class (each group of a case's own function cut
  into one group per cause): the reads per submission no pure grouping goes below, which is set by
  how often the class repeats each mistake, not by the grouping;
- time: grouping the graded records (reading excluded), scaled up to 1,000 submissions by
  repeating the records.

    python benchmarks/mistake_groups.py --corpus a --assignment lm-head --copies 5
    python benchmarks/mistake_groups.py --corpus a --assignment lm-head --composition zipf
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import signal
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.build import build  # noqa: E402
from autograder.groups.class_groups import class_groups  # noqa: E402
from autograder.runtime.grading.bulk import grade_batch  # noqa: E402
from autograder.runtime.class_probes import ClassProbes, ProbeResult  # noqa: E402
from autograder.runtime.grading.outcome import read_record, record_folders  # noqa: E402
from autograder.runtime.grading.support import load_autograder  # noqa: E402


class _ByReciprocal(ast.NodeTransformer):
    """``a / b`` as ``a * (1.0 / b)`` (and ``a /= b`` as ``a *= 1.0 / b``): the same quotient up to
    the last bit, as ``x.mean()`` and ``x.sum() / n`` are, except where ``b`` is so small that its
    reciprocal overflows (below about 5.6e-309): there ``a / b`` may be finite and the product is
    inf, as two students' styles differ at the edge of the float range. The reciprocal is Python's,
    so the product keeps the quotient's dtype (a Python float does not widen a float32 array, where
    a NumPy float64 from ``np.divide`` would); where ``b`` is a Python 0 it raises, so the
    divisions numbered in ``kept`` (in the order the tree is walked) stay divisions."""

    def __init__(self, kept: frozenset[int] = frozenset()) -> None:
        self.kept, self.seen = kept, 0

    def _rewritten(self) -> bool:
        number, self.seen = self.seen, self.seen + 1
        return number not in self.kept

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        if not isinstance(node.op, ast.Div) or not self._rewritten():
            return node
        return ast.BinOp(node.left, ast.Mult(), ast.BinOp(ast.Constant(1.0), ast.Div(), node.right))

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.op, ast.Div) and self._rewritten():
            node.op, node.value = ast.Mult(), ast.BinOp(ast.Constant(1.0), ast.Div(), node.value)
        return node


def by_reciprocal(text: str, kept: frozenset[int] = frozenset()) -> str:
    """``text`` with every true division but those numbered in ``kept`` written as a product with
    the reciprocal (comments go)."""
    return ast.unparse(ast.fix_missing_locations(_ByReciprocal(kept).visit(ast.parse(text))))


def divisions(text: str) -> int:
    """How many true divisions (``a / b`` and ``a /= b``) ``text`` holds."""
    return sum(isinstance(node, (ast.BinOp, ast.AugAssign)) and isinstance(node.op, ast.Div)
               for node in ast.walk(ast.parse(text)))


def variant(text: str, number: int, kept: frozenset[int] = frozenset()) -> str:
    """The case's code in another style: copies 2 and 3 of every 4 divide by multiplying with the
    reciprocal (another round-off; the divisions numbered in ``kept`` stay divisions), odd copies
    spell ``numpy.`` for ``np.``, and each has its own comments."""
    if number % 4 in (2, 3):
        text = by_reciprocal(text, kept)
    lines = [f"# submission variant {number}", *text.splitlines()]
    if number % 2:
        lines.insert(1, "import numpy")
        lines = [line.replace("np.", "numpy.") if not line.lstrip().startswith(("import", "from")) else line
                 for line in lines]
    return "\n".join(f"{line}  # v{number}" if line.strip().startswith("return") else line for line in lines) + "\n"


#: The styles a copy can have: its number modulo 4 decides it (``variant``).
STYLES = 4
#: Seconds one function of a case may take on one probe in the behaviour check (a case that hangs
#: there is reported, not waited for).
CHECK_SECONDS = 5


class _TooLong(Exception):
    """A case's function ran past ``CHECK_SECONDS`` on a probe."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _TooLong()


def _in_process(text: str) -> Callable[[str, tuple], ProbeResult]:
    """A probe call into ``text``'s functions run here (the corpus is the project's own code): what
    ``ClassProbes.behaviour`` gets from the sandbox, an error named by its type."""
    namespace: dict[str, Any] = {"__name__": "case"}
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        exec(compile(text, "case.py", "exec"), namespace)

    def call(name: str, args: tuple) -> ProbeResult:
        given, before = copy.deepcopy(args), copy.deepcopy(args)
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, CHECK_SECONDS)
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                value = namespace[name](*given)
        except Exception as error:            # noqa: BLE001 - the case's own error is its behaviour
            return False, type(error).__name__, {}
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        changed = {i: a for i, (a, b) in enumerate(zip(given, before))
                   if isinstance(a, np.ndarray) and not np.array_equal(a, b, equal_nan=True)}
        return True, value, changed
    return call


def behaviour_of(text: str, probes: ClassProbes) -> dict[str, str]:
    """The digest of each probed function of ``text`` on the class probes (``"="`` where right), or
    ``{"": <error>}`` where the text does not load."""
    try:
        call = _in_process(text)
    except Exception as error:                # noqa: BLE001 - a case that does not load is its behaviour
        return {"": type(error).__name__}
    return probes.behaviour(call, sorted(probes.inputs))


def kept_divisions(text: str, probes: ClassProbes) -> frozenset[int]:
    """The divisions of ``text`` whose reciprocal changes what it does on the class probes (each
    rewritten alone, beside the text as it is); none where rewriting every division changes
    nothing."""
    original = behaviour_of(text, probes)
    if behaviour_of(by_reciprocal(text), probes) == original:
        return frozenset()
    count = divisions(text)
    return frozenset(n for n in range(count)
                     if behaviour_of(by_reciprocal(text, frozenset(range(count)) - {n}), probes) != original)


def same_behaviour(texts: dict[str, str], probes: ClassProbes) -> tuple[dict[str, frozenset[int]], list[str]]:
    """Per case, the divisions its reciprocal copies keep (``kept_divisions``), and every case and
    style whose copies, so written, still behave otherwise than the case on the class probes."""
    kept = {name: kept_divisions(text, probes) for name, text in texts.items()}
    differ = []
    for name, text in texts.items():
        original = behaviour_of(text, probes)
        differ += [f"{name} (style {number})" for number in range(STYLES)
                   if behaviour_of(variant(text, number, kept[name]), probes) != original]
    return kept, differ


#: Zipf's law in its own form (frequency proportional to 1 / rank), as Kim and Piech (LAK 2023) find
#: student work to be distributed; fixed before measuring.
ZIPF_EXPONENT = 1.0
#: The seed of the Zipf class's draw (the cases' ranks and the submissions); fixed before measuring.
ZIPF_SEED = 0
#: Seeds of the Zipf classes whose floor is estimated from a uniform class (``zipf_floor_spread``).
SPREAD_SEEDS = 100
#: The least class the issue's figures are measured on.
LEAST_CLASS = 300


def uniform_class(names: list[str], copies: int) -> list[str]:
    """Each case ``copies`` times."""
    return [name for name in names for _ in range(copies)]


def zipf_class(names: list[str], size: int, exponent: float, seed: int) -> list[str]:
    """``size`` submissions drawn independently from ``names`` with probability proportional to
    ``1 / rank ** exponent``, the ranks a random order of the cases (which mistake is common is
    not chosen here): a class that repeats a few mistakes often and many once or not at all."""
    rng = np.random.default_rng(seed)
    ranked = [names[i] for i in rng.permutation(len(names))]
    weights = 1.0 / np.arange(1, len(ranked) + 1, dtype=np.float64) ** exponent
    drawn = rng.choice(len(ranked), size=size, p=weights / weights.sum())
    return [ranked[i] for i in sorted(drawn)]


def reads_to_cover(losses: Iterable[float], share: float = 0.9) -> int:
    """How many groups, largest loss first, an instructor reads before ``share`` of the points lost
    in all of them is covered."""
    ordered = sorted(losses, reverse=True)
    total, reads, covered = sum(ordered), 0, 0.0
    for lost in ordered:
        if covered >= share * total:
            break
        reads, covered = reads + 1, covered + lost
    return reads


def truth_losses(groups: Iterable, cause_of: dict[str, str], function_of: dict[str, str],
                 weight: dict[str, float] | None = None) -> list[float]:
    """The points lost per group of a grouping exactly by the corpus truth, made from ``groups``
    (unnamed ones): the members of groups of their case's own function go by cause (a group holding
    two causes is cut, a cause over two groups joined); a group of another function (a right
    function failing through the one it calls) stays whole, as its members' code for it behaves
    alike and one note answers them all. ``weight`` counts a member as that many submissions (a
    class that repeats its case more or less often; 1 where not given)."""
    losses: dict[tuple[str, ...], float] = defaultdict(float)
    for g in groups:
        for record in g.members:
            student = record.entry.student
            own = function_of[student] in g.unit.split("+")
            lost = sum(i.points for i in record.outcome.items if i.question == g.question and not i.passed)
            key = (g.unit, cause_of[student]) if own else (g.id,)
            losses[key] += lost * (1.0 if weight is None else weight[student])
    return [lost for lost in losses.values() if lost > 0]


def zipf_floor_spread(groups: list, cause_of: dict[str, str], function_of: dict[str, str],
                      copies: dict[str, int], size: int, exponent: float, seeds: range) -> list[float]:
    """For each seed, the reads per unnamed submission a grouping exactly by the corpus truth needs
    on the Zipf class of that seed, estimated from this class's unnamed ``groups`` without grading
    it: each member stands for its case's copies in that class (the mean of this class's copies'
    losses). Shows how much the one seed measured depends on which cases its draw makes common."""
    ratios = []
    names = sorted(copies)
    for seed in seeds:
        drawn: dict[str, int] = defaultdict(int)
        for name in zipf_class(names, size, exponent, seed):
            drawn[name] += 1
        weight = {s: drawn[c] / copies[c] for s, c in cause_of.items()}
        unnamed = sum(weight[s] for s in {r.entry.student for g in groups for r in g.members})
        ratios.append(reads_to_cover(truth_losses(groups, cause_of, function_of, weight)) / max(unnamed, 1e-9))
    return ratios


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default="a")
    parser.add_argument("--assignment", default="lm-head")
    parser.add_argument("--copies", type=int, default=5)
    parser.add_argument("--composition", choices=("uniform", "zipf"), default="uniform")
    parser.add_argument("--class-size", type=int, default=0,
                        help="zipf: submissions in the class (default: as many as the uniform class, at least 300)")
    parser.add_argument("--zipf-exponent", type=float, default=ZIPF_EXPONENT)
    parser.add_argument("--seed", type=int, default=ZIPF_SEED)
    parser.add_argument("--dump", type=Path, default=None,
                        help="write the groups (id, unit, named, points lost, members) to this JSON file, to "
                             "compare the groups of two versions")
    args = parser.parse_args()
    corpus = ROOT / "tests" / "blind" / args.corpus
    cases = {c["case"]: c for c in json.loads((corpus / "cases.json").read_text()) if c["assignment"] == args.assignment}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        zip_path = build([args.assignment], tmp / "dist", None, verify=False)[0].autograder_zip
        (tmp / "class").mkdir()
        names = sorted(cases)
        if args.composition == "uniform":
            chosen = uniform_class(names, args.copies)
        else:
            size = args.class_size or max(LEAST_CLASS, len(names) * args.copies)
            chosen = zipf_class(names, size, args.zipf_exponent, args.seed)
        texts = {name: (corpus / args.assignment / f"{name}.py").read_text(encoding="utf-8") for name in names}
        began = time.perf_counter()
        probes = load_autograder(zip_path, tmp / "support").class_probes
        kept, differ = same_behaviour(texts, probes)
        checked = time.perf_counter() - began
        cause, made = {}, defaultdict(int)
        for name in chosen:
            number, made[name] = made[name], made[name] + 1
            student = f"{name}__{number}"
            (tmp / "class" / f"{student}.py").write_text(variant(texts[name], number, kept[name]), encoding="utf-8")
            cause[student] = cases[name]
        made = dict(made)                 # a case no draw chose is not in the class
        began = time.perf_counter()
        grade_batch([tmp / "class"], zip_path, tmp / "out", timeout=60)
        graded = time.perf_counter() - began
        records = [read_record(f) for f in record_folders(tmp / "out")]
    began = time.perf_counter()
    found = class_groups(records)
    grouping = time.perf_counter() - began
    scaled = [replace(r, entry=replace(r.entry, student=f"{r.entry.student}~{k}"))
              for k in range(-(-1000 // len(records))) for r in records][:1000]
    began = time.perf_counter()
    class_groups(scaled)
    grouping_1000 = time.perf_counter() - began

    if args.dump is not None:
        args.dump.write_text(json.dumps([{"id": g.id, "unit": g.unit, "named": g.named, "points_lost": g.points_lost,
                                          "members": sorted(r.entry.student for r in g.members)}
                                         for g in found.groups], indent=1), encoding="utf-8")
    mixed_own, mixed_other, own_groups = [], [], 0
    group_of: dict[str, set[str]] = defaultdict(set)       # a cause -> the groups of its own function
    for g in found.groups:
        causes = {cause[r.entry.student]["case"] for r in g.members}
        own = [r for r in g.members if cause[r.entry.student]["function"] in g.unit.split("+")]
        if own:
            own_groups += 1
            for r in own:
                group_of[cause[r.entry.student]["case"]].add(g.id)
            if len({cause[r.entry.student]["case"] for r in own}) > 1 or len(own) != g.size:
                mixed_own.append((g.id, sorted(causes)))
        elif len(causes) > 1:
            mixed_other.append((g.id, g.size, len(causes)))
    wrong = [c for c in cases.values() if c["kind"] == "mistake" and c["case"] in made]
    repeated = [c for c in wrong if made[c["case"]] >= 3]        # the "at least 3 submissions"
    split = [c["case"] for c in repeated if len(group_of.get(c["case"], ())) > 1]
    missing = [c["case"] for c in wrong if c["case"] not in group_of]
    unnamed = sorted((g for g in found.groups if not g.named), key=lambda g: -g.points_lost)
    total = sum(g.points_lost for g in unnamed)
    reads = reads_to_cover(g.points_lost for g in unnamed)
    truth = truth_losses(unnamed, {s: c["case"] for s, c in cause.items()},
                         {s: c["function"] for s, c in cause.items()})
    truth_reads = reads_to_cover(truth)
    unnamed_students = len({r.entry.student for g in unnamed for r in g.members})
    correct_in_groups = sorted({r.entry.student for g in found.groups for r in g.members
                                if cause[r.entry.student]["kind"] == "correct"})
    if args.composition == "uniform":
        print(f"class: {len(records)} submissions ({len(cases)} cases x {args.copies}), graded in {graded:.1f} s")
    else:
        counts = sorted(made.values(), reverse=True)
        print(f"class: {len(records)} submissions drawn by Zipf's law (exponent {args.zipf_exponent:g}, seed "
              f"{args.seed}) from {len(cases)} cases: {len(counts)} cases present, copies per case "
              f"{counts[:8]}...{counts[-3:]}, {sum(c == 1 for c in counts)} once; graded in {graded:.1f} s")
    kept_in = sorted(f"{name} ({len(k)} of {divisions(texts[name])})" for name, k in kept.items() if k)
    print(f"styles: every style of the {len(texts)} cases run on the class probes beside the case ({checked:.1f} s): "
          f"{len(kept_in)} cases keep divisions whose reciprocal changes their behaviour {kept_in[:10]}; "
          f"{len(differ)} styles still behave otherwise {differ[:10]}")
    print(f"groups: {len(found.groups)} ({len(unnamed)} unnamed); {own_groups} of a case's own function")
    print(f"purity: {len(mixed_own)} groups of a case's own function mix causes {mixed_own[:5]}")
    print(f"        {len(mixed_other)} groups of another function gather several causes {mixed_other[:5]}")
    print(f"splits: {len(split)} of {len(repeated)} mistake causes with 3 or more submissions split over groups "
          f"{split[:10]} ({len(wrong)} mistake causes in the class)")
    print(f"        {len(missing)} mistake causes in no group of their function (not caught, or blamed elsewhere) {missing[:10]}")
    print(f"correct submissions in a group: {len(correct_in_groups)} {correct_in_groups[:5]}")
    print(f"reads: {reads} unnamed groups cover 90% of the {total:g} points lost in unnamed groups; "
          f"{unnamed_students} submissions are in unnamed groups (ratio {reads / max(unnamed_students, 1):.3f})")
    print(f"       a grouping exactly by cause: {len(truth)} unnamed groups, {truth_reads} reads "
          f"(ratio {truth_reads / max(unnamed_students, 1):.3f}); unnamed groups of 1 or 2 submissions: "
          f"{sum(g.size <= 2 for g in unnamed)}")
    if args.composition == "uniform":
        spread = sorted(zipf_floor_spread(unnamed, {s: c["case"] for s, c in cause.items()},
                                          {s: c["function"] for s, c in cause.items()}, made,
                                          max(LEAST_CLASS, len(cases) * args.copies), args.zipf_exponent,
                                          range(SPREAD_SEEDS)))
        print(f"       Zipf classes (exponent {args.zipf_exponent:g}) of seeds 0-{SPREAD_SEEDS - 1}, estimated from this "
              f"class: a grouping exactly by cause needs {np.median(spread):.3f} reads per unnamed submission "
              f"(median; {spread[0]:.3f} to {spread[-1]:.3f}; at most 0.1 for {sum(r <= 0.1 for r in spread)} "
              f"of {SPREAD_SEEDS})")
    print(f"time: grouping {len(records)} records {grouping * 1000:.0f} ms; 1,000 records {grouping_1000 * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

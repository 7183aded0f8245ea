"""Content-blind players: strategies that answer a choice question without reading its stem.

A fair choice question is one where a player who only sees the rendered
choices (their texts) finds the key no more often than chance. Each player
here looks at the printed choices only and spreads its pick over the
choices it prefers (uniformly over ties); its expected hit on a variant is
the share of that pick that lands on a correct choice. A player *applies*
to a variant when it has a preference at all (a sign pair exists, the
choices are numbers, ...); its hit rate is measured over those variants
and compared with the chance rate over the same variants.

The players model the cues an exam-wise student uses: the value rank of
the key (smallest, largest, k-th smallest), a pair x / -x, the option most
alike to the others (by value and by text), the longest and shortest text,
and "all/none of the above" options. The rest model what a reader who never
saw the questions did to score 55% against 26% chance on a printed sheet:
the *hub* (the value one slip away from the most others: a sign flip, a
small factor, a log in another base, a reciprocal, exp of it), the member
of an x / -x pair whose sign most others share, the half of a value whose
double is shown, the larger of two close counts, and for texts the one a
truncation or one-step shift away from the most others and the complete
form of a text another choice cuts short. One more, the *mistake hub*
(:data:`STRUCTURE_PLAYERS`), reads the variant's own record of which
mistakes each wrong choice carries and picks the choice one mistake from
the most others: the reader who spots every one-slip relation, not only
those the printed arithmetic shows (a second reader, shown 180 choice-only
items, scored 51% against 26% chance mostly this way). The draw
(:mod:`question_bank.choice_balance`) uses the same relations, so what is
measured here is what it balances.

Why one module of this size: every player and the relations between printed choices it
reads (a slip, a sign pair, a double, a truncation) are one definition shared by the
measurement and the draw; split, the two could drift apart and the draw would balance
cues the measurement no longer sees.
"""
from __future__ import annotations

import difflib
import functools
import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

#: A player fails a family's sub-question when its hit rate exceeds chance by
#: more than this many binomial standard deviations of the chance rate ...
CUE_Z = 3.0
#: ... and by more than this absolute margin (so large samples tolerate a
#: few points of drift that no student could exploit).
CUE_MARGIN = 0.05
#: Fewer applicable variants than this are too few to judge a player.
CUE_MIN_APPLIED = 20

_NUMBER = re.compile(r"[-\u2212]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_TIMES_TEN = re.compile(r"([-\u2212]?\d+(?:\.\d+)?)\s*\\times\s*10\^\{?([-\u2212]?\d+)\}?")
_ALL_NONE = re.compile(r"\b(all|none|both|neither) of (the )?(above|these|them)\b", re.I)

Pick = list[float]  # one weight per choice, summing to 1 (or all zero: the player abstains)


#: Texts read at once: the players, the draw and the pickers each read the same few printed choices
#: again and again (every player of every candidate set of a variant), and reading them is pure.
TEXTS_REMEMBERED = 1 << 16


@functools.lru_cache(maxsize=TEXTS_REMEMBERED)
def plain(text: str) -> str:
    """A choice text without Markdown/LaTeX decoration: ``$1{,}024$`` -> ``1024``."""
    text = text.replace("{,}", "").replace("\\,", "").replace("\\!", "")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return text.replace("$", "").replace("`", "").replace("**", "").strip()


@functools.lru_cache(maxsize=TEXTS_REMEMBERED)
def choice_number(text: str) -> float | None:
    """The number a rendered choice stands for: one number, ``a \\times 10^{b}``, or a shape's size.

    A choice naming several numbers in brackets (a shape ``(4, 8, 24)``) counts
    as their product, the size a student would compare. Text with words in it
    is not a number.
    """
    body = plain(text)
    match = _TIMES_TEN.fullmatch(body)
    if match:
        return float(match.group(1).replace("\u2212", "-")) * 10 ** int(match.group(2).replace("\u2212", "-"))
    if re.search(r"[A-Za-z]{2,}", body.replace("e-", "").replace("e+", "")):
        return None
    numbers = [float(n.replace("\u2212", "-")) for n in _NUMBER.findall(body)]
    if len(numbers) == 1:
        return numbers[0]
    if len(numbers) > 1 and body[:1] in "([":
        return float(math.prod(numbers))
    return None


def _uniform_over(indices: Sequence[int], n: int) -> Pick:
    if not indices:
        return [0.0] * n
    return [1.0 / len(indices) if i in indices else 0.0 for i in range(n)]


def _numbers(texts: Sequence[str]) -> list[float] | None:
    values = [choice_number(t) for t in texts]
    if any(v is None for v in values) or len(set(values)) < len(values):
        return None
    return [float(v) for v in values if v is not None]


def rank_player(k: int) -> Callable[[Sequence[str]], Pick]:
    """Pick the k-th smallest number (k = 1 the smallest; k = -1 the largest)."""
    def play(texts: Sequence[str]) -> Pick:
        values = _numbers(texts)
        if values is None or len(values) < max(k, -k):
            return [0.0] * len(texts)
        order = sorted(range(len(values)), key=lambda i: values[i])
        return _uniform_over([order[k - 1 if k > 0 else k]], len(texts))
    return play


def sign_pair_player(texts: Sequence[str]) -> Pick:
    """When some choices are x and -x, pick one of those."""
    values = _numbers(texts)
    if values is None:
        return [0.0] * len(texts)
    paired = [i for i, v in enumerate(values) if v != 0 and any(abs(w + v) <= 1e-9 * abs(v) for w in values)]
    return _uniform_over(paired, len(texts))


def _magnitude(v: float) -> float:
    """Signed log magnitude, so 10 vs 20 is as far apart as 1000 vs 2000."""
    return math.copysign(math.log10(1 + abs(v)), v)


def central_value_player(texts: Sequence[str]) -> Pick:
    """Pick the number closest to all the others (smallest summed distance on a log scale)."""
    values = _numbers(texts)
    if values is None:
        return [0.0] * len(texts)
    scaled = [_magnitude(v) for v in values]
    return _argbest(texts, [-sum(abs(a - b) for b in scaled) for a in scaled])


@functools.lru_cache(maxsize=TEXTS_REMEMBERED)
def likeness(a: str, b: str) -> float:
    """How alike two printed texts are (``difflib``'s ratio), the measure the "most alike" player
    uses and the draw balances against. Remembered: the same choice texts recur across the
    variants of a family, and each ratio costs about a millisecond."""
    return difflib.SequenceMatcher(None, a, b).ratio()


def alike_text_player(texts: Sequence[str]) -> Pick:
    """Pick the text most alike to the others (summed character-sequence similarity)."""
    bodies = [plain(t) for t in texts]
    scores = [sum(likeness(a, b) for j, b in enumerate(bodies) if j != i)
              for i, a in enumerate(bodies)]
    return _argbest(texts, scores)


def longest_player(texts: Sequence[str]) -> Pick:
    """Pick the longest printed choice."""
    return _argbest(texts, [len(plain(t)) for t in texts])


def shortest_player(texts: Sequence[str]) -> Pick:
    """Pick the shortest printed choice."""
    return _argbest(texts, [-len(plain(t)) for t in texts])


def all_none_player(texts: Sequence[str]) -> Pick:
    """Pick an "all/none/both of the above" option when there is one."""
    return _uniform_over([i for i, t in enumerate(texts) if _ALL_NONE.search(plain(t))], len(texts))


#: Relative tolerance of a printed link: choices are printed to four significant figures, so a
#: ratio of two printed values is off by up to about 1e-3 from the exact one.
LINK_RTOL = 2e-3

#: Factors a single slip multiplies a value by: a count doubled or tripled, a per-token value
#: against a total over a few tokens, a log in another base (x ln 2, x ln 10, x log2 10).
LINK_FACTORS: tuple[float, ...] = (2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, math.e, 1 / math.log(2),
                                   math.log(10), math.log2(10))


#: The tolerance between two numbers both printed exactly (integers): a reader compares their digits.
EXACT_RTOL = 1e-12


@functools.lru_cache(maxsize=TEXTS_REMEMBERED)
def printed_exactly(text: str) -> bool:
    """Whether a choice prints its number exactly (an integer: no decimals, no power of ten).

    A reader checks "exactly twice" on such numbers digit by digit, so 94,301 is not twice 47,057;
    numbers rounded to four figures are compared to within their rounding.
    """
    body = plain(text)
    return not re.search(r"[.eE]|\\times", body)


def _near(a: float, b: float, exact: bool = False) -> bool:
    return abs(a - b) <= (EXACT_RTOL if exact else LINK_RTOL) * max(abs(a), abs(b))


def _near_array(a: np.ndarray, b: np.ndarray, rtol: Any = LINK_RTOL) -> np.ndarray:
    return np.abs(a - b) <= rtol * np.maximum(np.abs(a), np.abs(b))


def link_matrix(values: Sequence[float], exact: Sequence[bool] | None = None) -> np.ndarray:
    """Which printed values are one simple slip apart, a reader can spot without the stem: (n, n) booleans.

    The slips: a sign flip, a product with one of :data:`LINK_FACTORS` (either
    way, either sign), a reciprocal, and exp / 2^ / 10^ of the value (a log
    taken or undone). These are the transforms a reader who never saw the
    question looks for to find the value every other choice derives from.
    Computed for all pairs at once: the draw asks for it on every variant.
    ``exact`` marks the values printed exactly (:func:`printed_exactly`): a
    pair of them is linked only by an exact sign flip or factor.
    """
    v = np.asarray(values, dtype=float)
    a, b = v[:, None], v[None, :]
    both = np.zeros((len(v), len(v)), dtype=bool) if exact is None else np.outer(exact, exact)
    rtol = np.where(both, EXACT_RTOL, LINK_RTOL)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        links = _near_array(a, -b, rtol) | _near_array(np.abs(a * b), np.ones_like(a * b), rtol)
        ratio = np.abs(a / b)
        for f in LINK_FACTORS:
            links |= (_near_array(ratio, np.full_like(ratio, f), rtol)
                      | _near_array(ratio, np.full_like(ratio, 1 / f), rtol))
        small = np.abs(v) < 300
        for base in (math.e, 2.0, 10.0):
            raised = np.where(small, base ** np.where(small, v, 0.0), np.nan)   # base ** each value
            up = _near_array(raised[:, None], np.broadcast_to(b, links.shape)) & (b > 0) & small[:, None]
            links |= up | up.T
    links &= (a != 0) & (b != 0) & ~_near_array(a, b, rtol)
    return links


def linked(a: float, b: float, exact: bool = False) -> bool:
    """Whether two printed values are one simple slip apart (see :func:`link_matrix`)."""
    return bool(link_matrix([a, b], [exact, exact])[0, 1])


def _exactness(texts: Sequence[str]) -> list[bool]:
    return [printed_exactly(t) for t in texts]


def hub_player(texts: Sequence[str]) -> Pick:
    """Pick the number linked to the most others by one slip (:func:`linked`): the "root" of the rest.

    When every distractor is the key with one mistake applied, the key is
    the one value all the others are simple transforms of.
    """
    values = _numbers(texts)
    if values is None:
        return [0.0] * len(texts)
    degrees = [int(d) for d in link_matrix(values, _exactness(texts)).sum(axis=1)]
    if max(degrees) == 0:
        return [0.0] * len(texts)
    return _argbest(texts, [float(d) for d in degrees])


def negated(a: float, b: float, exact: bool = False) -> bool:
    """Whether ``b`` is ``-a`` as printed (``a`` nonzero; ``exact``: both printed exactly)."""
    return a != 0 and _near(a, -b, exact)


def sign_majority_player(texts: Sequence[str]) -> Pick:
    """In a pair x / -x, pick the member whose sign most of the other choices share."""
    values = _numbers(texts)
    if values is None:
        return [0.0] * len(texts)
    scores: dict[int, float] = {}
    exact = _exactness(texts)
    for i, v in enumerate(values):
        partners = [j for j, w in enumerate(values) if j != i and negated(v, w, exact[i] and exact[j])]
        if not partners:
            continue
        others = [w for j, w in enumerate(values) if j != i and j not in partners]
        scores[i] = sum(1 for w in others if w * v > 0) - sum(1 for w in others if w * v < 0)
    if not scores:
        return [0.0] * len(texts)
    best = max(scores.values())
    top = [i for i, s in scores.items() if s == best]
    return [0.0] * len(texts) if len(top) == len(scores) else _uniform_over(top, len(texts))


def doubled(a: float, b: float, exact: bool = False) -> bool:
    """Whether ``b`` is ``a`` counted twice (``a`` nonzero; ``exact``: both printed exactly)."""
    return a != 0 and _near(b, 2 * a, exact)


def half_of_double_player(texts: Sequence[str]) -> Pick:
    """When one number is exactly twice another, pick the smaller (the double reads as counted twice)."""
    values = _numbers(texts)
    if values is None:
        return [0.0] * len(texts)
    exact = _exactness(texts)
    return _uniform_over([i for i, v in enumerate(values)
                          if any(doubled(v, w, exact[i] and exact[j]) for j, w in enumerate(values))], len(texts))


#: Two numbers closer than this (relative) read as "the same count, one part missing".
CLOSE_RTOL = 0.05


def just_above(a: float, b: float) -> bool:
    """Whether ``a`` is larger than ``b`` by at most :data:`CLOSE_RTOL` of itself (a part added)."""
    return a > b and a - b <= CLOSE_RTOL * abs(a)


def close_larger_player(texts: Sequence[str]) -> Pick:
    """When two numbers are within :data:`CLOSE_RTOL` of each other, pick the larger (the complete count)."""
    values = _numbers(texts)
    if values is None:
        return [0.0] * len(texts)
    return _uniform_over([i for i, v in enumerate(values) if any(just_above(v, w) for w in values)], len(texts))


@functools.lru_cache(maxsize=TEXTS_REMEMBERED)
def text_body(text: str) -> str:
    """The quoted or code body of a choice, as a reader compares texts (quotes and marks dropped)."""
    body = plain(text)
    if len(body) >= 2 and body[0] == body[-1] and body[0] in "'\"":
        body = body[1:-1]
    return body


def text_linked(a: str, b: str) -> bool:
    """One text is the other cut short or extended at one end, or the other shifted by one character
    or word: the windows a reader lines up to find the one the others were made from."""
    if a == b or not a or not b:
        return False
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    if long_.startswith(short) or long_.endswith(short):
        return True
    if len(a) == len(b) and (a[1:] == b[:-1] or b[1:] == a[:-1]):
        return True
    wa, wb = a.split(), b.split()
    return len(wa) == len(wb) > 2 and (wa[1:] == wb[:-1] or wb[1:] == wa[:-1])


def text_hub_player(texts: Sequence[str]) -> Pick:
    """Pick the text linked to the most others by a truncation, extension or one-step shift."""
    if _numbers(texts) is not None:
        return [0.0] * len(texts)
    bodies = [text_body(t) for t in texts]
    degrees = [sum(1 for j, b in enumerate(bodies) if j != i and text_linked(a, b)) for i, a in enumerate(bodies)]
    if max(degrees) == 0:
        return [0.0] * len(texts)
    return _argbest(texts, [float(d) for d in degrees])


def completes(a: str, b: str) -> bool:
    """Whether text body ``b`` is ``a`` cut short at one end (``a`` is the complete form)."""
    return bool(b) and len(b) < len(a) and (a.startswith(b) or a.endswith(b))


def completed_text_player(texts: Sequence[str]) -> Pick:
    """When one text is another cut short, pick the complete one (the cut one reads as a slip)."""
    if _numbers(texts) is not None:
        return [0.0] * len(texts)
    bodies = [text_body(t) for t in texts]
    return _uniform_over([i for i, a in enumerate(bodies) if any(completes(a, b) for b in bodies)], len(texts))

def _argbest(texts: Sequence[str], scores: Sequence[float]) -> Pick:
    """Uniform over the best-scoring choices; abstain when every choice ties (no cue)."""
    best = max(scores)
    top = [i for i, s in enumerate(scores) if math.isclose(s, best, rel_tol=1e-12, abs_tol=1e-12)]
    return [0.0] * len(texts) if len(top) == len(texts) else _uniform_over(top, len(texts))


#: Every player by the name printed in the cue table.
PLAYERS: dict[str, Callable[[Sequence[str]], Pick]] = {
    "smallest": rank_player(1),
    "2nd-smallest": rank_player(2),
    "3rd-smallest": rank_player(3),
    "largest": rank_player(-1),
    "sign-pair": sign_pair_player,
    "central-value": central_value_player,
    "alike-text": alike_text_player,
    "longest": longest_player,
    "shortest": shortest_player,
    "all-none": all_none_player,
    "hub": hub_player,
    "sign-majority": sign_majority_player,
    "half-of-double": half_of_double_player,
    "close-larger": close_larger_player,
    "text-hub": text_hub_player,
    "completed-text": completed_text_player,
}


def mistake_parts(formula: str | None) -> frozenset[str] | None:
    """The mistakes a wrong choice carries, read from its formula key (``family/name``, with
    ``first+second`` for two mistakes at once); ``None`` for a choice no formula made."""
    if formula is None:
        return None
    name = formula.split("/", 1)[-1]
    return frozenset(part.rsplit("/", 1)[-1] for part in name.split("+"))


#: The ways one printed choice is reached: one set of mistakes per formula that prints it (a value two
#: different pairs of mistakes both give is one mistake from the singles of either pair).
Paths = tuple[frozenset[str], ...]


def structure_links(paths: Sequence[Paths]) -> np.ndarray:
    """Which choices are one mistake apart, (n, n) booleans: some way of reaching one differs from some
    way of reaching the other by exactly one mistake (the key is reached with none). This is every
    one-slip relation there is between the choices, whether or not its arithmetic shows in the
    printed values: the reader who spots them all."""
    n = len(paths)
    links = np.zeros((n, n), dtype=bool)
    for i, j in itertools.combinations(range(n), 2):
        links[i, j] = links[j, i] = any(len(a ^ b) == 1 for a in paths[i] for b in paths[j])
    return links


def structure_hub_player(texts: Sequence[str], paths: Sequence[Paths | None]) -> Pick:
    """Pick the choice one mistake away from the most others (:func:`structure_links`).

    When the distractors are the key with one mistake each, the key is linked to all of them and
    each of them to the key alone; a set with two mistakes at once, or a square (two mistakes each
    alone and together), gives other choices as many links. Abstains where a choice's mistakes are
    unknown (a fixed choice of a conceptual family).
    """
    known = [p for p in paths if p is not None]
    if len(known) < len(paths):
        return [0.0] * len(texts)
    degrees = structure_links(known).sum(axis=1)
    if degrees.max() == 0:
        return [0.0] * len(texts)
    return _argbest(texts, [float(d) for d in degrees])


def choice_parts(variant: dict[str, Any]) -> list[Paths | None]:
    """Each rendered choice's ways of being reached: none for a correct choice, one per known mistake
    of the variant printed as the choice is, ``None`` where no known mistake prints it (unknown).

    A mistake is matched by its text, else by its value: a family that prints every choice at one
    length (:func:`question_bank.choices.at_common_width`) lists its mistakes in their ordinary
    printing, and matched by text alone those choices read as unknown, so the reader of mistakes
    was blind to them."""
    by_text: dict[str, list[frozenset[str]]] = {}
    by_value: list[tuple[Any, frozenset[str]]] = []
    for mistake in variant.get("mistakes") or []:
        for formula in [mistake.get("formula"), *mistake.get("also", [])]:
            parts = mistake_parts(formula)
            if parts is not None:
                by_text.setdefault(mistake.get("text"), []).append(parts)
                by_value.append((mistake.get("value"), parts))

    def ways(choice: dict[str, Any]) -> Paths | None:
        if choice["correct"]:
            return (frozenset(),)
        if choice["text"] in by_text:
            return tuple(by_text[choice["text"]])
        found = tuple(parts for value, parts in by_value if _same_value(value, choice.get("value")))
        return found or None

    return [ways(c) for c in variant["choices"]]


def _same_value(a: Any, b: Any) -> bool:
    """Whether a listed mistake's value is a choice's value: the same number up to float rounding
    (its value is stored once, printed two ways), or equal otherwise."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    return a is not None and a == b


def _mistake_structure(variant: dict[str, Any]) -> bool:
    """Whether the variant's family makes its wrong choices by applying mistakes to the answer."""
    from question_bank.registry import families   # the registry imports the families, which import this
    family = families().get(variant.get("family", ""))
    return family is None or family.mistake_structure


#: Players that also read which mistakes each choice carries (the variant's own record of them):
#: a model of a reader who spots every one-slip relation, not only those the printed values show.
STRUCTURE_PLAYERS: dict[str, Callable[[Sequence[str], Sequence[Paths | None]], Pick]] = {
    "mistake-hub": structure_hub_player,
}


def excess_over_chance(texts: Sequence[str], correct: Sequence[bool],
                       weights: Sequence[float] | None = None) -> float:
    """How far the players' picks land on correct choices beyond chance, summed over the players
    (a player at or below chance adds nothing; ``weights`` per player of :data:`PLAYERS`), on one set.

    Families whose choices several keys share (an ordering's lines, a matching's shapes) draw their
    wrong options among the sets where this is least, so no printed order points at the used ones.
    Random weights, drawn per variant, spread the players a set cannot all keep at chance.
    """
    chance = sum(correct) / len(correct)
    weights = weights if weights is not None else [1.0] * len(PLAYERS)
    total = 0.0
    for weight, player in zip(weights, PLAYERS.values()):
        pick = player(texts)
        if sum(pick):
            total += weight * max(0.0, sum(w for w, c in zip(pick, correct) if c) - chance)
    return total


def least_cued(rng: Any, candidates: Sequence[Any], score: Callable[[Any], float]) -> Any:
    """One of the ``candidates`` with the least ``score`` (up to rounding), drawn with ``rng``."""
    scores = [round(score(c), 9) for c in candidates]
    best = [c for c, s in zip(candidates, scores) if s == min(scores)]
    return best[int(rng.integers(len(best)))]


@dataclass
class PlayerScore:
    """One player on one family's sub-question: where it applied, its hits and the chance hits."""

    applied: int = 0
    hits: float = 0.0
    chance: float = 0.0

    def add(self, pick: Pick, correct: Sequence[bool]) -> None:
        if sum(pick) == 0:
            return
        self.applied += 1
        self.hits += sum(w for w, c in zip(pick, correct) if c)
        self.chance += sum(correct) / len(correct)

    @property
    def rate(self) -> float:
        return self.hits / self.applied if self.applied else 0.0

    @property
    def chance_rate(self) -> float:
        return self.chance / self.applied if self.applied else 0.0

    @property
    def limit(self) -> float:
        """The highest fair hit rate: chance plus the larger of the margin and CUE_Z deviations."""
        c = self.chance_rate
        spread = CUE_Z * math.sqrt(c * (1 - c) / self.applied) if self.applied else 0.0
        return c + max(CUE_MARGIN, spread)

    @property
    def cue(self) -> bool:
        """Whether the player finds the key clearly more often than chance."""
        return self.applied >= CUE_MIN_APPLIED and self.rate > self.limit


@dataclass
class CueTally:
    """Every player's score per sub-question of one family."""

    scores: dict[str, dict[str, PlayerScore]] = field(default_factory=dict)

    def add(self, subquestion: str, variant: dict[str, Any]) -> None:
        """Let every player answer one variant's rendered choices."""
        choices = variant["choices"]
        if len(choices) < 3:   # two-choice (true/false) items: the position test covers them
            return
        texts = [c["text"] for c in choices]
        correct = [bool(c["correct"]) for c in choices]
        row = self.scores.setdefault(subquestion, {name: PlayerScore() for name in (*PLAYERS, *STRUCTURE_PLAYERS)})
        for name, player in PLAYERS.items():
            row[name].add(player(texts), correct)
        parts = choice_parts(variant) if _mistake_structure(variant) else [None] * len(texts)
        for name, structure_player in STRUCTURE_PLAYERS.items():
            row[name].add(structure_player(texts, parts), correct)

    def cues(self) -> list[tuple[str, str, PlayerScore]]:
        """``(sub-question, player, score)`` of every player that beats chance."""
        return [(sub, name, score) for sub, row in sorted(self.scores.items())
                for name, score in row.items() if score.cue]


def cue_table(tallies: dict[str, CueTally]) -> str:
    """Per family and sub-question, each player's hits/applied (``-`` where it never applied).

    A trailing ``!`` marks a player beating chance (see :attr:`PlayerScore.cue`).
    """
    names = [*PLAYERS, *STRUCTURE_PLAYERS]
    rows = [(f"{fam}{'/' + sub if sub else ''}", score_row)
            for fam, tally in tallies.items() for sub, score_row in sorted(tally.scores.items())]
    if not rows:
        return "no choice questions with three or more choices"
    width = max(len("family/sub-question"), *(len(label) for label, _ in rows))
    cell = 12
    lines = [f"{'family/sub-question':<{width}}  " + "  ".join(f"{n:>{cell}}" for n in names)]
    lines.append("-" * len(lines[0]))
    for label, score_row in rows:
        cells = []
        for n in names:
            s = score_row[n]
            text = "-" if not s.applied else f"{s.hits:.0f}/{s.applied}{'!' if s.cue else ''}"
            cells.append(f"{text:>{cell}}")
        lines.append(f"{label:<{width}}  " + "  ".join(cells))
    return "\n".join(lines)


__all__ = ["CUE_MARGIN", "CUE_MIN_APPLIED", "CUE_Z", "CueTally", "PLAYERS", "PlayerScore", "STRUCTURE_PLAYERS",
           "Paths", "choice_parts", "mistake_parts", "structure_links",
           "choice_number", "cue_table", "excess_over_chance", "least_cued", "plain"]

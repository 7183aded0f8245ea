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
and "all/none of the above" options.
"""
from __future__ import annotations

import difflib
import functools
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

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


def plain(text: str) -> str:
    """A choice text without Markdown/LaTeX decoration: ``$1{,}024$`` -> ``1024``."""
    text = text.replace("{,}", "").replace("\\,", "").replace("\\!", "")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return text.replace("$", "").replace("`", "").replace("**", "").strip()


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


@functools.lru_cache(maxsize=1 << 16)
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
        row = self.scores.setdefault(subquestion, {name: PlayerScore() for name in PLAYERS})
        for name, player in PLAYERS.items():
            row[name].add(player(texts), correct)

    def cues(self) -> list[tuple[str, str, PlayerScore]]:
        """``(sub-question, player, score)`` of every player that beats chance."""
        return [(sub, name, score) for sub, row in sorted(self.scores.items())
                for name, score in row.items() if score.cue]


def cue_table(tallies: dict[str, CueTally]) -> str:
    """Per family and sub-question, each player's hits/applied (``-`` where it never applied).

    A trailing ``!`` marks a player beating chance (see :attr:`PlayerScore.cue`).
    """
    names = list(PLAYERS)
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


__all__ = ["CUE_MARGIN", "CUE_MIN_APPLIED", "CUE_Z", "CueTally", "PLAYERS", "PlayerScore",
           "choice_number", "cue_table", "excess_over_chance", "least_cued", "plain"]

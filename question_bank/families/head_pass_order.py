"""Ordering: the lines of the LM head's forward and backward pass, put in the order they must run.

Each step is one NumPy line. What a line reads and writes is read from the
line itself (its Python syntax tree), so the order is computed from the data
flow, never typed: a line comes after every line whose result it reads,
directly or through lines not shown. A variant shows four or five of the
lines that compute one target (the loss, dW_head, db_head or dhidden) with
one wrong line that does not belong (a catalogued mistake), printed in an
order that is never the key. The independent check runs the lines.
"""
from __future__ import annotations

import ast
import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from question_bank.code_reading import same_result
from question_bank.cues import PLAYERS, excess_over_chance, least_cued
from question_bank.errors import GenerationError, Redraw
from question_bank.registry import Family, register_family
from question_bank.variant import CHOICE_IDS, Answer, Draft, Option

#: What the stem gives: the names every line may read without a line computing them.
INPUTS = ("np", "hidden", "W_head", "b_head", "targets", "onehot", "N")

#: The correct lines, by step name.
STEPS: dict[str, str] = {
    "logits": "logits = hidden @ W_head + b_head",
    "shift": "shifted = logits - logits.max(axis=1, keepdims=True)",
    "exp": "e = np.exp(shifted)",
    "normalise": "probs = e / e.sum(axis=1, keepdims=True)",
    "pick": "picked = probs[np.arange(N), targets]",
    "loss": "loss = -np.mean(np.log(picked))",
    "dlogits": "dlogits = (probs - onehot) / N",
    "dW_head": "dW_head = hidden.T @ dlogits",
    "db_head": "db_head = dlogits.sum(axis=0)",
    "dhidden": "dhidden = dlogits @ W_head.T",
}

#: The quantity a variant asks the lines of (a sub-question each).
TARGETS = ("loss", "dW_head", "db_head", "dhidden")


@dataclass(frozen=True)
class WrongLine:
    """A line that does not belong: a catalogued mistake made in one step's line."""

    step: str
    code: str
    misconception: str
    feedback: str


#: The wrong lines by ``step/misconception`` (one line per pair, so the key names the line).
_WRONG = (
    WrongLine("logits", "logits = hidden @ W_head", "logit-bias-dropped",
              "it leaves out the bias `b_head`, so every logit lacks its bias term."),
    WrongLine("logits", "logits = hidden @ W_head.T + b_head", "weight-transposed",
              "W_head is (C, V) and maps the width C to V; its transpose (V, C) does not multiply (N, C) rows."),
    WrongLine("shift", "shifted = logits - logits.max(axis=0, keepdims=True)", "softmax-wrong-axis",
              "it subtracts each column's maximum, a different number in each entry of a row, which changes "
              "that row's probabilities; the shift must be one number per row."),
    WrongLine("normalise", "probs = e / e.sum()", "softmax-whole-array",
              "it divides by the sum over the whole array, so a row of probabilities no longer sums to 1."),
    WrongLine("normalise", "probs = e / e.sum(axis=0, keepdims=True)", "softmax-wrong-axis",
              "it normalises each column over the positions; each row, one position's distribution over "
              "the vocabulary, must sum to 1."),
    WrongLine("pick", "picked = probs[:, targets]", "target-column-indexing",
              "it takes every row's entries at all N targets, an (N, N) array, instead of one entry per row."),
    WrongLine("loss", "loss = -np.sum(np.log(picked))", "sum-vs-mean",
              "it sums the N terms; the loss is their mean."),
    WrongLine("loss", "loss = -np.mean(np.log(probs))", "divide-by-vocab",
              "it averages the log of every probability, not only the targets' ones."),
    WrongLine("loss", "loss = -np.mean(np.log(picked)) / np.log(2)", "wrong-log-base",
              "dividing by ln 2 gives the loss in bits; the course's loss is in nats."),
    WrongLine("dlogits", "dlogits = probs - onehot", "missing-1-over-n",
              "it leaves out the 1/N of the mean, so the gradient is N times too large."),
    WrongLine("dlogits", "dlogits = (onehot - probs) / N", "gradient-sign",
              "its sign is flipped: the gradient of the loss is probs minus onehot."),
    WrongLine("dlogits", "dlogits = probs / N", "softmax-without-onehot",
              "it forgets to subtract the one-hot targets."),
    WrongLine("dlogits", "dlogits = (probs - onehot) / onehot.shape[1]", "divide-by-vocab",
              "it divides by the vocabulary size V; the loss is a mean over the N positions, so the "
              "gradient divides by N."),
    WrongLine("dW_head", "dW_head = dlogits.T @ hidden", "weight-transposed",
              "it gives a (V, C) array; dW_head has W_head's shape (C, V), which hidden.T @ dlogits gives."),
    WrongLine("db_head", "db_head = dlogits.sum(axis=1)", "bias-per-position",
              "it sums over the vocabulary, giving one number per position; db_head sums over the positions."),
    WrongLine("db_head", "db_head = dlogits.sum(axis=0) / onehot.shape[1]", "divide-by-vocab",
              "it divides by the vocabulary size V; dlogits already holds the mean's 1/N, and db_head is "
              "its plain sum over the positions."),
    WrongLine("dhidden", "dhidden = dlogits @ W_head", "weight-transposed",
              "(N, V) @ (C, V) does not multiply; dhidden = dlogits @ W_head.T is (N, C)."),
)
WRONG_LINES: dict[str, WrongLine] = {w.step + "/" + w.misconception: w for w in _WRONG}
if len(WRONG_LINES) != len(_WRONG):  # pragma: no cover - guards a copy-paste slip (two lines under one key)
    raise RuntimeError("two wrong lines of head-pass-order share a step and misconception")


def _names(code: str) -> tuple[frozenset[str], str]:
    """``(names the line reads, the name it writes)``, from its syntax tree."""
    (statement,) = ast.parse(code).body
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1 \
            or not isinstance(statement.targets[0], ast.Name):
        raise GenerationError(f"the line {code!r} must assign one name")
    reads = frozenset(node.id for node in ast.walk(statement.value)
                      if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load))
    return reads, statement.targets[0].id


@functools.lru_cache(maxsize=None)
def data_flow() -> dict[str, tuple[frozenset[str], str]]:
    """Each step's read and written names; every read name is an input or written by one step."""
    flow = {step: _names(code) for step, code in STEPS.items()}
    writers = {written: step for step, (_, written) in flow.items()}
    for step, (reads, _) in flow.items():
        unknown = reads - set(INPUTS) - set(writers)
        if unknown:
            raise GenerationError(f"step {step!r} reads {sorted(unknown)}, which no step computes")
    return flow


@functools.lru_cache(maxsize=None)
def writer_of(name: str) -> str | None:
    """The step that computes ``name`` (``None`` for an input)."""
    return next((step for step, (_, written) in data_flow().items() if written == name), None)


def needed_steps(target: str) -> list[str]:
    """Every step the target step reads from, directly or not, and the target itself, in table order."""
    needed, todo = {target}, [target]
    while todo:
        for name in data_flow()[todo.pop()][0]:
            step = writer_of(name)
            if step is not None and step not in needed:
                needed.add(step)
                todo.append(step)
    return [step for step in STEPS if step in needed]


@functools.lru_cache(maxsize=None)
def dependency_path(earlier: str, later: str, shown: frozenset[str]) -> tuple[str, ...] | None:
    """The names through which ``later`` reads ``earlier``'s result (``[read by later, ..., written by
    earlier]``), going only through steps not shown; ``None`` when it does not."""
    for name in sorted(data_flow()[later][0]):
        step = writer_of(name)
        if step == earlier:
            return (name,)
        if step is not None and step not in shown:
            rest = dependency_path(earlier, step, shown)
            if rest is not None:
                return (name,) + rest
    return None


def depends(earlier: str, later: str) -> bool:
    """Whether ``later`` reads ``earlier``'s result, through any steps."""
    return dependency_path(earlier, later, frozenset()) is not None


def key_order(shown: list[str]) -> list[str]:
    """The shown steps in the only order the data flow allows.

    Raises:
        GenerationError: when two shown steps do not depend on each other (more than one order runs).
    """
    order = sorted(shown, key=lambda step: sum(depends(other, step) for other in shown))
    for earlier, later in zip(order, order[1:]):
        if not depends(earlier, later):
            raise GenerationError(f"steps {earlier!r} and {later!r} may run in either order")
    return order


def rule_feedback(earlier: str, later: str, key: list[str]) -> str:
    """Why ``later`` must come after ``earlier``: the name it reads, and the lines not shown in between."""
    path = dependency_path(earlier, later, frozenset(key))
    if path is None:  # through a shown step: the nearest such step is named
        middle = next(s for s in key if s not in (earlier, later) and depends(earlier, s) and depends(s, later))
        return (f"it reads what `{STEPS[middle]}` computes, which needs "
                f"`{data_flow()[earlier][1]}` from that line first.")
    text = f"it reads `{path[0]}`"
    for name in path[1:]:
        text += f", which a line not shown computes from `{name}`"
    return text + ", which that line computes."


def _code(line: str) -> str:
    return f"`{line}`"


@register_family
class HeadPassOrder(Family):
    name = "head-pass-order"
    title = "Order the steps of the LM head's pass"
    summary = "Put the NumPy lines of the head's forward and backward pass in the order they must run (ordering)."
    tags = ("ordering", "lm-head", "softmax", "loss", "gradient")
    subquestion_key = "target"
    subquestion_values = TARGETS
    #: 4 targets x 15 sets of shown lines x the wrong lines the draw favours: about 150 in 1000 seeds
    distinct_target = 120

    def build(self, rng: np.random.Generator) -> Draft:
        target = TARGETS[int(rng.integers(len(TARGETS)))]
        needed = needed_steps(target)
        n_shown = int(rng.integers(4, 6))
        others = [s for s in needed if s != target]
        picked = [others[int(i)] for i in rng.choice(len(others), n_shown - 1, replace=False)]
        shown = [s for s in needed if s in picked or s == target]
        key = key_order(shown)
        wrong_key = self._wrong_line(rng, key)
        wrong = WRONG_LINES[wrong_key]
        printed = self._printed_order(rng, key, wrong_key)
        ids = dict(zip(printed, CHOICE_IDS))
        options = [Option(value=item, text=_code(STEPS[item] if item in STEPS else WRONG_LINES[item].code),
                          correct=item in STEPS,
                          misconception=None if item in STEPS else WRONG_LINES[item].misconception,
                          feedback="" if item in STEPS else WRONG_LINES[item].feedback)
                   for item in printed]
        rules = tuple({"before": ids[a], "after": ids[b], "feedback": rule_feedback(a, b, key)}
                      for i, a in enumerate(key) for b in key[i + 1:])
        value = [ids[step] for step in key]
        answer = Answer(kind="ordering", value=value, display=", ".join(value),
                        slots=tuple({"text": f"Step {k}", "value": str(k), "wrong": {}}
                                    for k in range(1, len(key) + 1)),
                        rules=rules)
        target_name = data_flow()[target][1]
        stem = (f"A NumPy pass through the LM head works on the N = B·T positions as rows: `hidden` is (N, C), "
                f"`W_head` (C, V), `b_head` (V,), `targets` (N,) and `onehot` (N, V), the targets one-hot. "
                f"The lines below compute `{target_name}`; the lines between them that are not shown run "
                "wherever their inputs are ready. One line below does not belong in a correct computation. "
                f"Put the {len(key)} lines that belong in the order they must run, and leave the other out.")
        # no letters: an LMS shows the lines in menus of its own order
        steps_text = "; ".join(f"{k}. `{STEPS[step]}`" for k, step in enumerate(key, start=1))
        solution = (f"Each line reads what earlier lines computed, so the order follows the data: {steps_text}. "
                    f"`{wrong.code}` does not belong: {wrong.feedback}")
        parameters = {"target": target, "shown": key, "wrong": wrong_key}
        return Draft(parameters=parameters, stem=stem, answer=answer, options=options, solution=solution)

    @staticmethod
    def _wrong_line(rng: np.random.Generator, key: list[str]) -> str:
        """A wrong line for one of the shown steps, drawn among those with which the content-blind players
        of :mod:`question_bank.cues` (longest line, most alike, ...) find the lines that belong least
        beyond chance."""
        pool = [name for name, w in WRONG_LINES.items() if w.step in key]
        if not pool:
            raise Redraw("no wrong line competes with a shown line")
        texts = [_code(STEPS[s]) for s in key]
        weights = list(rng.exponential(size=len(PLAYERS)))
        return least_cued(rng, pool, lambda name: excess_over_chance(
            texts + [_code(WRONG_LINES[name].code)], [True] * len(key) + [False], weights))

    @staticmethod
    def _printed_order(rng: np.random.Generator, key: list[str], wrong: str) -> list[str]:
        """The lines in a drawn order whose steps are neither in the key's order nor its reverse."""
        items = key + [wrong]
        for _ in range(100):
            printed = [items[int(i)] for i in rng.permutation(len(items))]
            steps = [s for s in printed if s in STEPS]
            if steps != key and steps != key[::-1]:
                return printed
        raise Redraw("no printed order apart from the key")

    def check(self, variant: dict[str, Any]) -> list[str]:
        """Run the key's lines (the steps not shown where their inputs are ready) against a plain-Python
        reference; the wrong line in its step's place must not give the reference."""
        problems = []
        if not self.arrangement_holds(variant, variant["answer"]["value"]):
            problems.append("running the key's lines in order does not give the reference value")
        choices = {c["id"]: c for c in variant["choices"]}
        (wrong_id,) = [cid for cid, c in choices.items() if not c["correct"]]
        if choices[wrong_id]["value"] not in WRONG_LINES:
            return problems + [f"the line left out, {choices[wrong_id]['text']}, is not a wrong line"]
        step = WRONG_LINES[choices[wrong_id]["value"]].step
        swapped = [wrong_id if choices[cid]["value"] == step else cid for cid in variant["answer"]["value"]]
        if self.arrangement_holds(variant, swapped):
            problems.append(f"the line {choices[wrong_id]['text']} gives the reference value, so it belongs")
        return problems

    def arrangement_holds(self, variant: dict[str, Any], response: list[str]) -> bool:
        """Whether running the chosen lines in the chosen order computes the target right, on probes."""
        target = variant["parameters"]["target"]
        values = {c["id"]: c["value"] for c in variant["choices"]}
        lines = [STEPS[values[cid]] if values[cid] in STEPS else WRONG_LINES[values[cid]].code for cid in response]
        hidden = [STEPS[s] for s in needed_steps(target) if s not in variant["parameters"]["shown"]]
        name = data_flow()[target][1]
        results = (_run(lines, hidden, probe, name) for probe in _probes())
        return all(result is not None and same_result(result, reference[name])
                   for result, reference in zip(results, _references()))


@functools.lru_cache(maxsize=None)
def _compiled(line: str) -> Any:
    return compile(line, "<step>", "exec")


def _run(lines: list[str], hidden: list[str], probe: dict[str, Any], name: str) -> Any:
    """Run ``lines`` in order; before each, every hidden line whose inputs are ready. A line that
    reads a name not computed yet (or fails) makes the result ``None``."""
    namespace = {"np": np, **{k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in probe.items()}}
    pending = list(hidden)

    def run_ready() -> None:
        progress = True
        while progress:
            progress = False
            for line in list(pending):
                try:
                    exec(_compiled(line), namespace)  # noqa: S102 - the bank's own lines
                except NameError:
                    continue
                pending.remove(line)
                progress = True

    with np.errstate(all="ignore"):
        try:
            for line in lines:
                run_ready()
                exec(_compiled(line), namespace)  # noqa: S102 - the bank's own lines
            run_ready()
        except Exception:  # noqa: BLE001 - a line before its input, or a shape that does not multiply
            return None
    return namespace.get(name)


@functools.lru_cache(maxsize=1)
def _probe_data() -> tuple[tuple[tuple[str, Any], ...], ...]:
    rng = np.random.default_rng(20241203)
    probes = []
    for N, C, V in ((6, 3, 5), (4, 5, 7)):
        targets = rng.integers(0, V, size=N)
        onehot = np.zeros((N, V))
        onehot[np.arange(N), targets] = 1.0
        probes.append((("hidden", rng.normal(size=(N, C))), ("W_head", rng.normal(size=(C, V))),
                       ("b_head", rng.normal(size=V)), ("targets", targets), ("onehot", onehot), ("N", N)))
    return tuple(probes)


def _probes() -> list[dict[str, Any]]:
    return [dict(probe) for probe in _probe_data()]


@functools.lru_cache(maxsize=1)
def _references() -> tuple[dict[str, Any], ...]:
    return tuple(_plain_reference(probe) for probe in _probes())


def _plain_reference(probe: dict[str, Any]) -> dict[str, Any]:
    """Loss and gradients with loops over rows and math.exp/log, independent of the lines and of ``solutions/``."""
    hidden, W, b, targets, N = probe["hidden"], probe["W_head"], probe["b_head"], probe["targets"], probe["N"]
    C, V = W.shape
    logits = [[math.fsum(hidden[n, c] * W[c, v] for c in range(C)) + b[v] for v in range(V)] for n in range(N)]
    terms, grad = [], np.zeros((N, V))
    for n, row in enumerate(logits):
        top = max(row)
        total = math.fsum(math.exp(z - top) for z in row)
        terms.append(top + math.log(total) - row[int(targets[n])])
        for v in range(V):
            grad[n, v] = (math.exp(row[v] - top) / total - (1.0 if v == targets[n] else 0.0)) / N
    dW = np.array([[math.fsum(hidden[n, c] * grad[n, v] for n in range(N)) for v in range(V)] for c in range(C)])
    db = np.array([math.fsum(grad[n, v] for n in range(N)) for v in range(V)])
    dh = np.array([[math.fsum(grad[n, v] * W[c, v] for v in range(V)) for c in range(C)] for n in range(N)])
    return {"loss": math.fsum(terms) / N, "dW_head": dW, "db_head": db, "dhidden": dh}

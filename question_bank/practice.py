"""The terminal quiz behind ``grader practice``: one question at a time, with feedback.

:func:`draw_quiz` picks the questions; :func:`run_quiz` asks them on the
given input and output streams (the command passes the terminal, tests pass
``io.StringIO``). Answers are read with :mod:`question_bank.answers`, so the
quiz accepts what the self-check page and the notebook accept. After each
answer the quiz shows the matched misconception's feedback and the worked
solution; at the end, or at end of input or Ctrl-C, it prints the score.
"""
from __future__ import annotations

import secrets
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from question_bank.answers import ResponseError, answer_key, judge_part, parse_response
from question_bank.errors import QuestionBankError, require_at_least_one
from question_bank.exporters import points_note
from question_bank.exporters._markup import to_text
from question_bank.generate import distinct_variants
from question_bank.registry import resolve_families

#: Width the quiz wraps prose to (tables are left as they are).
WIDTH = 78

#: Typing one of these ends the quiz (with the score so far).
QUIT_WORDS = ("q", "quit", "exit")
#: Typing one of these gives up on the question (it counts as wrong).
SKIP_WORDS = ("s", "skip")

_PROMPT = {
    "float": "a number, e.g. 0.0012 or 1.2e-3",
    "integer": "a whole number, e.g. 116534784",
    "shape": "a shape, e.g. (4, 8, 24) or 4x8x24",
    "single_choice": "one letter",
    "multiple_choice": "every letter that applies, e.g. a, c",
    "true_false": "true or false",
    "ordering": "the letters of the lines that belong, in order, e.g. c a d b",
    "matching": "one letter per item, in the items' order, e.g. c a f d",
}


@dataclass(frozen=True)
class QuizResult:
    """How a quiz went.

    Attributes:
        right: questions answered correctly.
        answered: questions answered or skipped.
        total: questions in the quiz.
        completed: False when the quiz ended early (quit, end of input, Ctrl-C).
    """

    right: int
    answered: int
    total: int
    completed: bool


def fresh_seed() -> int:
    """A new seed for a quiz nobody has seen, from the operating system's entropy."""
    return secrets.randbelow(10**6)


def draw_quiz(families: tuple[str, ...] | list[str], n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` variants cycling through ``families`` (all when empty) in a seeded order.

    With at least ``n`` families every question comes from a different
    family, and a family asked twice never repeats a stem; the same
    arguments always give the same quiz.

    Raises:
        QuestionBankError: if ``n < 1`` or a family is unknown.
    """
    require_at_least_one(n)
    names = resolve_families(list(families))
    order = [names[int(i)] for i in np.random.default_rng(seed).permutation(len(names))]
    picks = [(order[i % len(order)], i // len(order)) for i in range(n)]
    per_family = {name: distinct_variants(name, sum(1 for p, _ in picks if p == name), seed)
                  for name in dict.fromkeys(name for name, _ in picks)}
    return [per_family[name][index] for name, index in picks]


def draw_exam_quiz(spec: Path, families: tuple[str, ...] | list[str], seed: int) -> list[dict[str, Any]]:
    """One variant per slot of the exam spec file ``spec``, in slot order.

    Raises:
        QuestionBankError: for an invalid spec, or families given besides it.
    """
    from question_bank.exam import exam_sheet, load_exam_spec

    if families:
        raise QuestionBankError("--exam fixes the families slot by slot; drop -f.")
    return exam_sheet(load_exam_spec(spec), seed)["variants"]


def run_quiz(variants: list[dict[str, Any]], stdin: TextIO, stdout: TextIO,
             seed: int | None = None) -> QuizResult:
    """Ask each variant on ``stdout``, read answers from ``stdin``, and print the score.

    A malformed answer is explained and asked again. End of input, a quit
    word or Ctrl-C ends the quiz cleanly with the score so far.
    """
    right = answered = 0
    total = len(variants)
    # a multi-part item's earlier answers, by (item id, part index), for the carried-error note
    earlier: dict[tuple[str, int], tuple[dict[str, Any], Any]] = {}
    header = f"Practice quiz: {total} question{'s' if total != 1 else ''}"
    if seed is not None:
        header += f" (seed {seed}; `grader practice --seed {seed}` repeats it)"
    _say(stdout, header + f". Type {'/'.join(QUIT_WORDS[:2])} to stop, skip to see the solution.\n")
    try:
        for number, variant in enumerate(variants, start=1):
            outcome = ask(number, total, variant, stdin, stdout, earlier)
            if outcome is None:
                return _finish(stdout, QuizResult(right, answered, total, completed=False))
            answered += 1
            right += outcome
    except KeyboardInterrupt:
        return _finish(stdout, QuizResult(right, answered, total, completed=False))
    return _finish(stdout, QuizResult(right, answered, total, completed=True))


def ask(number: int, total: int, variant: dict[str, Any], stdin: TextIO, stdout: TextIO,
        earlier: dict[tuple[str, int], tuple[dict[str, Any], Any]] | None = None) -> bool | None:
    """Ask one question until it gets a readable answer.

    ``earlier`` holds the keys and answers of the multi-part items' parts asked so far (this
    part's answer is added); a part that reads one of them is judged with :func:`judge_part`.
    Returns whether the answer was right (a skip is wrong), or ``None`` when
    the student quits or the input ends.
    """
    earlier = {} if earlier is None else earlier
    key = answer_key(variant)
    part = variant.get("part")
    carry = part["carry"] if part else None
    before = earlier.get((part["item"], carry["from"])) if carry else None
    _say(stdout, render_question(number, total, variant))
    while True:
        stdout.write(f"Your answer ({_prompt(variant['answer'])}): ")
        stdout.flush()
        line = stdin.readline()
        if not line:                       # end of input (Ctrl-D, or a script ran out)
            stdout.write("\n")
            return None
        text = line.strip()
        if text.lower() in QUIT_WORDS:
            return None
        if text.lower() in SKIP_WORDS:
            _say(stdout, "Skipped. " + _solution(key))
            return False
        try:
            response = parse_response(text, key)
        except ResponseError as exc:
            _say(stdout, str(exc))
            continue
        verdict = judge_part(key, response, *(before or (None, None)))
        if part:
            earlier[(part["item"], part["index"])] = (key, response)
        if verdict.correct:
            head = "Right."
        else:
            head = "Not right" + (f": {verdict.misconception}" if verdict.misconception else "") + "."
        _say(stdout, f"{head} {to_text(verdict.feedback)}\n\n{_solution(key)}")
        return verdict.correct


def render_question(number: int, total: int, variant: dict[str, Any]) -> str:
    """A question as terminal text: heading, stem and, for choice questions, the lettered choices."""
    lines = ["", f"Question {number} of {total}: {variant['title']}{points_note(variant)}", "", _wrap(to_text(variant["stem"]))]
    answer = variant["answer"]
    if answer["kind"] not in ("float", "integer", "shape"):
        lines.append("")
        lines += [_wrap(f"  ({c['id']}) {to_text(c['text'])}", indent="      ") for c in variant["choices"]]
    if answer["kind"] == "ordering":
        lines += ["", f"Give the letters of the {len(answer['slots'])} lines that belong, in the order they run."]
    elif answer["kind"] == "matching":
        lines += ["", "Give a letter for each of these, in this order:"]
        lines += [_wrap(f"  {k}. {to_text(slot['text'])}", indent="     ")
                  for k, slot in enumerate(answer["slots"], start=1)]
    if answer["unit"]:
        lines += ["", f"(in {answer['unit']})"]
    return "\n".join(lines) + "\n"


def _prompt(answer: dict[str, Any]) -> str:
    text = _PROMPT[answer["kind"]]
    return text + ", as a natural log" if answer["log_space"] else text


def _solution(key: dict[str, Any]) -> str:
    return "Worked solution: " + to_text(key["solution"])


def _finish(stdout: TextIO, result: QuizResult) -> QuizResult:
    if result.completed:
        _say(stdout, f"\nScore: {result.right}/{result.total}.")
    else:
        _say(stdout, f"\nStopped. Score so far: {result.right}/{result.answered} "
                     f"({result.answered} of {result.total} questions answered).")
    return result


def _wrap(text: str, indent: str = "") -> str:
    """Wrap prose paragraphs; keep table rows and other lines starting with '|' intact."""
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith("|") or len(line) <= WIDTH:
            out.append(line)
        else:
            out.append(textwrap.fill(line, WIDTH, subsequent_indent=indent))
    return "\n".join(out)


def _say(stdout: TextIO, text: str) -> None:
    stdout.write(_wrap(text) + "\n")
    stdout.flush()

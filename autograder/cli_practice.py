"""``grader practice``: a terminal quiz drawn from the question bank.

The command only parses its options and calls the ``question_bank.practice``
core with the terminal's streams; ``GraderError`` becomes a one-line error.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from autograder.cli_support import reports_errors
from question_bank.practice import draw_exam_quiz, draw_quiz, fresh_seed, run_quiz


@click.command("practice")
@click.option("-f", "--family", "families", multiple=True, metavar="FAMILY",
              help="Question family (repeatable); default: every family. See `grader questions list`.")
@click.option("-n", "n", type=int, default=5, show_default=True, help="Number of questions.")
@click.option("--seed", type=int, default=None,
              help="Seed of the quiz; default: a fresh one, printed so the quiz can be repeated.")
@click.option("--exam", "exam", type=click.Path(path_type=Path), default=None,
              help="Exam spec (YAML): practise its slots in order, one question each, instead of -f/-n.")
@reports_errors
def practice(families: tuple[str, ...], n: int, seed: int | None, exam: Path | None) -> None:
    """Practise exam questions in the terminal, one at a time.

    Type answers the way you would write them (0.0012, 1.2e-3, (4, 8, 24),
    4x8x24, b, true). A wrong answer that matches a common mistake is named
    and explained; the worked solution follows every question and the score
    comes at the end. Type q to stop early (Ctrl-D and Ctrl-C work too).

    \b
    Examples:
      grader practice
      grader practice -f perplexity-from-probs -f uniform-baseline -n 4
      grader practice -n 10 --seed 42
      grader practice --exam midterm.yaml
    """
    seed = fresh_seed() if seed is None else seed
    variants = draw_exam_quiz(exam, families, seed) if exam is not None else draw_quiz(families, n, seed)
    run_quiz(variants, sys.stdin, sys.stdout, seed=seed)

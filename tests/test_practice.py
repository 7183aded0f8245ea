"""Are typed answers read in the forms people type, judged with tolerance and
misconception feedback, and does `grader practice` run a clean quiz on scripted input?"""
from __future__ import annotations

import io
import math

import pytest
from click.testing import CliRunner

from autograder.cli_practice import practice
from question_bank import build_bundle, family_names, generate_variant
from question_bank.answers import (
    ResponseError,
    answer_key,
    judge,
    matches,
    parse_choice,
    parse_choice_set,
    parse_integer,
    parse_number,
    parse_response,
    parse_shape,
    parse_true_false,
)
from question_bank.practice import draw_quiz, run_quiz
from question_bank.variant import answer_matches

ERROR = "error"

#: (kind, unit, typed text, expected value or ERROR). The self-check page's
#: script is held to the same table in tests/test_exports_browser.py.
PARSE_CASES = [
    ("float", "", "1.2e-3", 0.0012),
    ("float", "", "1.2E-3", 0.0012),
    ("float", "", "0.0012", 0.0012),
    ("float", "", ".0012", 0.0012),
    ("float", "", "  -0.0012 ", -0.0012),
    ("float", "", "\u22120.5", -0.5),
    ("float", "", "+2", 2.0),
    ("float", "", "1.2 x 10^-3", 0.0012),
    ("float", "", "1.2×10^{-3}", 0.0012),
    ("float", "", "1.2 * 10**-3", 0.0012),
    ("float", "", "1.2 \\times 10^{-3}", 0.0012),
    ("float", "", "10^-3", 0.001),
    ("float", "", "3/4", 0.75),
    ("float", "", "1,234.5", 1234.5),
    ("float", "nats", "2.78 nats", 2.78),
    ("float", "nats", "2.78 nat", 2.78),
    ("float", "nats", "2.78 bits", ERROR),
    ("float", "", "110^3", ERROR),
    ("float", "", "1/0", ERROR),
    ("float", "", "abc", ERROR),
    ("float", "", "", ERROR),
    ("float", "", "1e999", ERROR),
    ("float", "", "0,0012", ERROR),
    ("integer", "", "116534784", 116534784),
    ("integer", "", "116,534,784", 116534784),
    ("integer", "", "116 534 784", 116534784),
    ("integer", "", "1.2e3", 1200),
    ("integer", "pairs", "11476 pairs", 11476),
    ("integer", "", "12.5", ERROR),
    ("integer", "", "12,34", ERROR),
    ("shape", "", "(4, 8, 24)", [4, 8, 24]),
    ("shape", "", "(4,8,24)", [4, 8, 24]),
    ("shape", "", "[4,8,24]", [4, 8, 24]),
    ("shape", "", "4x8x24", [4, 8, 24]),
    ("shape", "", "4 × 8 × 24", [4, 8, 24]),
    ("shape", "", "4 X 8 X 24", [4, 8, 24]),
    ("shape", "", "4, 8, 24", [4, 8, 24]),
    ("shape", "", "(24,)", [24]),
    ("shape", "", "24", [24]),
    ("shape", "", "(4, 8.5)", ERROR),
    ("shape", "", "(a, b)", ERROR),
    ("shape", "", "()", ERROR),
    ("single_choice", "", "b", "b"),
    ("single_choice", "", "B", "b"),
    ("single_choice", "", "(c)", "c"),
    ("single_choice", "", "d)", "d"),
    ("single_choice", "", "a.", "a"),
    ("single_choice", "", "e", ERROR),
    ("single_choice", "", "bc", ERROR),
    ("multiple_choice", "", "a, c", ["a", "c"]),
    ("multiple_choice", "", "c a", ["a", "c"]),
    ("multiple_choice", "", "AC", ["a", "c"]),
    ("multiple_choice", "", "(a) (d)", ["a", "d"]),
    ("multiple_choice", "", "a and b", ["a", "b"]),
    ("multiple_choice", "", "b", ["b"]),
    ("multiple_choice", "", "a, z", ERROR),
    ("multiple_choice", "", "", ERROR),
    ("true_false", "", "t", True),
    ("true_false", "", "True", True),
    ("true_false", "", "yes", True),
    ("true_false", "", "Y", True),
    ("true_false", "", "f", False),
    ("true_false", "", "false", False),
    ("true_false", "", "No.", False),
    ("true_false", "", "a", True),
    ("true_false", "", "(b)", False),
    ("true_false", "", "maybe", ERROR),
]


def case_key(kind: str, unit: str) -> dict:
    """A minimal answer key for parsing: choices a-d (a = True, b = False for true/false)."""
    if kind == "true_false":
        choices = [{"id": "a", "value": True}, {"id": "b", "value": False}]
    else:
        choices = [{"id": i, "value": None} for i in "abcd"]
    return {"kind": kind, "unit": unit, "choices": choices}


@pytest.mark.parametrize("kind, unit, text, expected", PARSE_CASES)
def test_parse_response_reads_the_forms_people_type(kind, unit, text, expected):
    key = case_key(kind, unit)
    if expected == ERROR:
        with pytest.raises(ResponseError):
            parse_response(text, key)
        return
    value = parse_response(text, key)
    if kind == "float":
        assert value == pytest.approx(expected, rel=1e-12)
    else:
        assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("call, message", [
    (lambda: parse_number("abc"), "Could not read 'abc' as a number. Type a number like 0.0012"),
    (lambda: parse_number("1.2", unit="nats") and parse_number("x", unit="nats"), "(in nats)"),
    (lambda: parse_number(""), "Type an answer first"),
    (lambda: parse_integer("12.5"), "not a whole number; this answer is a count"),
    (lambda: parse_shape("4 by 8"), "Type a shape like (4, 8, 24)"),
    (lambda: parse_choice("z", ["a", "b", "c"]), "Pick one of a, b, c"),
    (lambda: parse_choice_set("q", ["a", "b"]), "every letter that applies"),
    (lambda: parse_true_false("perhaps"), "Answer true or false"),
])
def test_parse_errors_say_what_was_expected(call, message):
    with pytest.raises(ResponseError) as info:
        call()
    assert message in str(info.value)


def test_integers_beyond_float_precision_stay_exact():
    assert parse_integer("9,007,199,254,740,993") == 9007199254740993


# --- judging ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def bank() -> list[dict]:
    """Three variants of every family."""
    return build_bundle(n=3, seed=12)["sheets"][0]["variants"]


def typed(value) -> str:
    """How a student might type a stored value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "x".join(map(str, value)) if all(isinstance(v, int) for v in value) else ", ".join(value)
    if isinstance(value, float):
        return f"{value:.4g}"          # four significant figures, as the key prints
    return str(value)


def test_every_correct_answer_typed_to_four_figures_is_right(bank):
    for variant in bank:
        key = answer_key(variant)
        verdict = judge(key, parse_response(typed(key["value"]), key))
        assert verdict.correct, (variant["id"], verdict)


def test_every_distractor_is_wrong_and_names_its_misconception(bank):
    for variant in bank:
        key = answer_key(variant)
        for choice in variant["choices"]:
            if choice["correct"]:
                continue
            if key["kind"] in ("ordering", "matching"):
                # the left-over choice put in each slot in turn: never right, and in some slot
                # (the step it competes with, the item whose mistake it is) named for its mistake
                verdicts = [judge(key, key["value"][:k] + [choice["id"]] + key["value"][k + 1:])
                            for k in range(len(key["value"]))]
                assert not any(v.correct for v in verdicts), variant["id"]
                assert choice["misconception"]["name"] in [v.misconception for v in verdicts], variant["id"]
                continue
            by_id = key["kind"] in ("single_choice", "multiple_choice")
            response = choice["id"] if by_id else choice["value"]
            if key["kind"] == "multiple_choice":
                response = [response]
            verdict = judge(key, parse_response(typed(response), key))
            assert not verdict.correct, variant["id"]
            assert verdict.misconception == choice["misconception"]["name"], variant["id"]
            assert choice["feedback"] in verdict.feedback


def test_judging_agrees_with_the_variant_acceptance_rule(bank):
    """answers.matches (standard library, embedded in notebooks) == variant.answer_matches."""
    for variant in bank:
        answer = variant["answer"]
        if answer["kind"] != "float":
            continue
        for factor in (1.0, 1.0009, 0.9991, 1.0011, 0.9989, -1.0, 10.0):
            response = answer["value"] * factor
            assert matches("float", answer["value"], response, answer["rtol"], answer["atol"]) \
                == answer_matches(answer, response), (variant["id"], factor)


def test_an_unknown_wrong_number_gets_a_pointer_to_the_solution():
    variant = generate_variant("perplexity-from-probs", 5)
    verdict = judge(answer_key(variant), 12345.0)
    assert not verdict.correct and verdict.misconception is None
    assert "worked solution" in verdict.feedback and "0.1%" in verdict.feedback


def test_multiple_choice_feedback_names_wrong_picks_and_missed_ones():
    variant = next(v for v in (generate_variant("causal-mask", s) for s in range(60))
                   if v["answer"]["kind"] == "multiple_choice")
    key = answer_key(variant)
    wrong = next(c for c in variant["choices"] if not c["correct"])
    verdict = judge(key, [wrong["id"]])
    assert not verdict.correct
    assert wrong["feedback"] in verdict.feedback and "You left out" in verdict.feedback
    assert judge(key, variant["answer"]["value"]).correct


# --- the quiz ----------------------------------------------------------------------

def quiz(variants, script: str):
    out = io.StringIO()
    result = run_quiz(variants, io.StringIO(script), out)
    return result, out.getvalue()


def test_draw_quiz_is_seeded_and_spreads_over_families():
    first = draw_quiz((), 5, seed=3)
    assert [v["id"] for v in first] == [v["id"] for v in draw_quiz((), 5, seed=3)]
    assert len({v["family"] for v in first}) == 5
    assert [v["id"] for v in draw_quiz((), 5, seed=4)] != [v["id"] for v in first]
    two = draw_quiz(("tied-weights", "uniform-baseline"), 5, seed=3)
    assert {v["family"] for v in two} == {"tied-weights", "uniform-baseline"}
    assert len({v["id"] for v in two}) == 5


def test_quiz_scores_right_wrong_and_malformed_answers():
    variants = [generate_variant("perplexity-from-probs", 5), generate_variant("tied-weights", 5),
                generate_variant("greedy-next-token", 5)]
    distractor = next(c for c in variants[0]["choices"] if not c["correct"])
    shape = variants[1]["answer"]["value"]
    script = "\n".join([
        "not a number",                       # malformed: asked again
        f"{distractor['value']:.6g}",         # a known mistake
        " x ".join(map(str, shape)),          # right, typed as 4 x 8 x 24
        variants[2]["answer"]["value"].upper(),  # right, as a capital letter
    ]) + "\n"
    result, output = quiz(variants, script)
    assert (result.right, result.answered, result.total, result.completed) == (2, 3, 3, True)
    assert "Could not read 'not a number' as a number" in output
    assert f"Not right: {distractor['misconception']['name']}." in output
    assert output.count("Right.") == 2
    assert output.count("Worked solution:") == 3
    assert output.rstrip().endswith("Score: 2/3.")


def test_quiz_shows_choices_only_for_choice_questions():
    variants = [generate_variant("greedy-next-token", 1), generate_variant("uniform-baseline", 1)]
    _, output = quiz(variants, "skip\n")
    first_question, second_question = output.split("Question 2 of 2")
    assert all(f"({c['id']}) " in first_question for c in variants[0]["choices"])
    assert "(a) " not in second_question


def test_end_of_input_stops_with_the_score_so_far():
    variants = draw_quiz(("uniform-baseline",), 3, seed=1)
    answer = variants[0]["answer"]["display"]
    result, output = quiz(variants, answer + "\n")
    assert (result.right, result.answered, result.completed) == (1, 1, False)
    assert "Stopped. Score so far: 1/1 (1 of 3 questions answered)." in output


def test_quit_and_skip_words():
    variants = draw_quiz(("uniform-baseline",), 3, seed=1)
    result, output = quiz(variants, "skip\nq\n")
    assert (result.right, result.answered, result.completed) == (0, 1, False)
    assert "Skipped. Worked solution:" in output


class Interrupting(io.StringIO):
    """Standard input that answers one line, then is interrupted like Ctrl-C."""

    def __init__(self, first: str):
        super().__init__(first)
        self.calls = 0

    def readline(self, *args) -> str:
        self.calls += 1
        if self.calls > 1:
            raise KeyboardInterrupt
        return super().readline()


def test_ctrl_c_stops_with_the_score_so_far():
    variants = draw_quiz(("uniform-baseline",), 2, seed=1)
    out = io.StringIO()
    result = run_quiz(variants, Interrupting(variants[0]["answer"]["display"] + "\n"), out)
    assert (result.right, result.answered, result.completed) == (1, 1, False)
    assert "Score so far: 1/1" in out.getvalue()


def test_log_space_questions_say_so_in_the_prompt():
    variant = next(v for v in (generate_variant("chain-rule-joint", s) for s in range(40))
                   if v["answer"]["log_space"])
    _, output = quiz([variant], f"{variant['answer']['value']:.5g}\n")
    assert "as a natural log" in output and "Right." in output


def test_terminal_text_has_no_latex_or_markdown_markup():
    for variant in draw_quiz((), len(family_names()), seed=8):
        _, output = quiz([variant], "")
        assert "$" not in output.replace("`$`", "") or variant["family"] == "task-transformations"
        assert "\\frac" not in output and "\\times" not in output and "**" not in output


# --- the command ---------------------------------------------------------------------

def test_practice_command_runs_a_scripted_quiz():
    variants = draw_quiz(("uniform-baseline", "tied-weights"), 2, seed=9)
    answers = "".join(v["answer"]["display"].strip("`") + "\n" for v in variants)
    result = CliRunner().invoke(practice, ["-f", "uniform-baseline", "-f", "tied-weights", "-n", "2",
                                           "--seed", "9"], input=answers)
    assert result.exit_code == 0, result.output
    assert "(seed 9; `grader practice --seed 9` repeats it)" in result.output
    assert "Score: 2/2." in result.output


def test_practice_command_without_seed_prints_a_fresh_one():
    result = CliRunner().invoke(practice, ["-n", "1"], input="")
    assert result.exit_code == 0
    assert "grader practice --seed " in result.output and "Stopped. Score so far: 0/0" in result.output


@pytest.mark.parametrize("args, message", [
    (["-n", "0"], "-n must be at least 1"),
    (["-f", "nope"], "unknown question family 'nope'"),
])
def test_practice_command_rejects_bad_options(args, message):
    result = CliRunner().invoke(practice, args, input="")
    assert result.exit_code == 1 and message in result.output


def test_practice_command_has_help():
    result = CliRunner().invoke(practice, ["--help"])
    assert result.exit_code == 0 and "4x8x24" in result.output and practice.help.strip()


def test_practice_rounding_stays_inside_the_tolerance():
    """Four significant figures are always accepted: the tolerance is a tenth of a percent."""
    for variant in draw_quiz(("perplexity-from-probs", "uniform-baseline"), 20, seed=2):
        value = variant["answer"]["value"]
        rounded = float(f"{value:.4g}")
        assert math.isclose(rounded, value, rel_tol=variant["answer"]["rtol"])

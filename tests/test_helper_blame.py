"""A wrong value that comes from another of the student's own functions is laid on that function in
the hidden tests' feedback, end to end: the sandbox worker records the helper calls, the grader
judges each recorded output against the reference helper on the recorded inputs, and only a helper
wrong on its own inputs is named. A right helper inside a wrong caller leaves the blame with the
caller, and the sentence shows no hidden input."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder.build import build
from autograder.runtime import helper_blame
from autograder.runtime.grading.extract import Program
from autograder.runtime.grading.runner import grade_program
from autograder.runtime.grading.support import load_autograder
from autograder.runtime.sandbox import Limits, SandboxSession
from autograder.runtime.sandbox.policy import clear
from autograder.runtime.sandbox.results import HelperCall
from tests.cross_function import CASES

pytestmark = pytest.mark.slow

LIMITS = Limits(wall_seconds_total=60.0)

_SOFTMAX_RIGHT = '''
def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)
'''
_LOSS_SUMMED_VIA_SOFTMAX = '''
def cross_entropy_loss(logits, targets):
    B, T, V = logits.shape
    p = softmax(logits, axis=-1).reshape(B * T, V)
    rows, t = np.arange(B * T), targets.reshape(-1)
    d = p.copy()
    d[rows, t] -= 1.0
    return float(-np.log(p[rows, t]).sum()), d.reshape(B, T, V)
'''
_LOG_PROB_RIGHT = '''
def sequence_log_prob(cond_probs):
    return float(np.log(np.asarray(cond_probs, dtype=np.float64)).sum())
'''
_PERPLEXITY_WRONG_VIA_LOG_PROB = '''
def perplexity(token_probs):
    p = np.asarray(token_probs, dtype=np.float64)
    return float(np.exp(-sequence_log_prob(p)))
'''


@pytest.fixture(scope="module")
def graders(tmp_path_factory):
    """Per assignment: the loaded autograder, the solution's code cells, the clearance."""
    root = tmp_path_factory.mktemp("helper-blame")
    found = {}
    for name in ("lm-head", "perplexity-and-parameters"):
        (result,) = build([name], root / "dist", None, verify=False)
        solution = nbformat.read(Path(result.autograder_zip).parent.parent / "solution" / f"{name}.ipynb",
                                 as_version=4)
        cells = [c.source for c in solution.cells if c.cell_type == "code"]
        found[name] = (load_autograder(result.autograder_zip, root / f"ag-{name}"), cells,
                       clear("auto", [root, result.autograder_zip]))
    return found


def _graded(graders, name: str, source: str):
    ag, cells, clearance = graders[name]
    program = Program(tuple(cells) + ("import numpy as np\n" + source,), ())
    return grade_program(program, ag, "student", clearance, limits=LIMITS)


#: The question of each caller of the cases.
QUESTION = {"cross_entropy_loss": "q4", "perplexity": "q2", "greedy_next_token": "q4", "masked_cross_entropy": "q3"}


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[1]}-{c[2]}-{i}" for i, c in enumerate(CASES)])
def test_the_hidden_tests_name_the_broken_helper(graders, case):
    name, caller, broken, source = CASES[case]
    outcome = _graded(graders, name, source)
    question = QUESTION[caller]
    failed = [item for item in outcome.items if item.question == question and not item.passed]
    assert failed, f"the broken `{broken}` cost `{caller}` nothing"
    # A wrong value judged on the helper's own inputs says fix it; an error raised inside it says look there.
    named = [item for item in failed
             if f"fix `{broken}` first" in item.message or f"the fault is in `{broken}` or in what" in item.message]
    assert named, "\n\n".join(item.message for item in failed)
    for item in named:
        # The caller's result was made wrong by the helper: no mistake of the caller's is named.
        assert not item.mistakes, (item.test, item.mistakes)


WRONG_VALUE_CASES = [i for i, (name, caller, broken, source) in enumerate(CASES)
                     if broken in ("softmax", "sequence_log_prob", "perplexity_from_loss")
                     and "x.max(axis=axis))" not in source and "sum(axis=1)" not in source]


@pytest.mark.parametrize("case", WRONG_VALUE_CASES, ids=[f"{CASES[i][1]}-{CASES[i][2]}-{i}" for i in WRONG_VALUE_CASES])
def test_a_wrong_value_of_a_helper_is_laid_on_it(graders, case):
    name, caller, broken, source = CASES[case]
    outcome = _graded(graders, name, source)
    laid = [item.message for item in outcome.items
            if f"Your `{broken}` returned wrong values when `{caller}` called it" in item.message]
    assert laid, "\n\n".join(item.message for item in outcome.items if not item.passed)
    for message in laid:
        lead = message.split("\n\n")[0]
        assert not re.search(r"\d", lead.replace("`", "")), lead    # no hidden value, only names


@pytest.mark.parametrize("name, helper, caller, source, mistake", [
    ("lm-head", "softmax", "cross_entropy_loss", _SOFTMAX_RIGHT + _LOSS_SUMMED_VIA_SOFTMAX, "loss-summed"),
    ("perplexity-and-parameters", "sequence_log_prob", "perplexity",
     _LOG_PROB_RIGHT + _PERPLEXITY_WRONG_VIA_LOG_PROB, None),
])
def test_a_right_helper_leaves_the_blame_with_its_caller(graders, name, helper, caller, source, mistake):
    outcome = _graded(graders, name, source)
    question = QUESTION[caller]
    failed = [item for item in outcome.items if item.question == question and not item.passed]
    assert failed
    for item in failed:
        assert f"`{helper}`" not in item.message, item.message
    if mistake:
        assert any(mistake in item.mistakes for item in failed), [item.mistakes for item in failed]


def test_a_worker_records_only_calls_its_function_reaches_and_small_enough_to_copy():
    source = ("import numpy as np\n" + _SOFTMAX_RIGHT + _LOSS_SUMMED_VIA_SOFTMAX +
              "def lm_head(hidden, W_head, b_head):\n    return hidden @ W_head + b_head\n")
    rng = np.random.default_rng(0)
    small = (rng.standard_normal((2, 3, 5)), rng.integers(0, 5, (2, 3)))
    large = (rng.standard_normal((2, 2, 60_000)), rng.integers(0, 60_000, (2, 2)))
    with SandboxSession(source, LIMITS, record_calls_of=("softmax", "lm_head", "cross_entropy_loss")) as session:
        recorded = session.call("cross_entropy_loss", *small).helper_calls
        unrecorded = session.call("cross_entropy_loss", *large).helper_calls
        alone = session.call("softmax", small[0]).helper_calls
    (call,) = recorded
    assert (call.helper, call.caller, call.recorded) == ("softmax", "cross_entropy_loss", True)
    assert np.array_equal(call.args[0], small[0]) and call.kwargs == {"axis": -1}
    assert not helper_blame.wrong_on_own_inputs(call, _reference("softmax"))
    (call,) = unrecorded
    assert call.helper == "softmax" and not call.recorded      # called, but too large to copy
    assert alone == ()


def test_a_session_without_a_record_list_records_nothing():
    source = "import numpy as np\n" + _SOFTMAX_RIGHT + _LOSS_SUMMED_VIA_SOFTMAX
    with SandboxSession(source, LIMITS) as session:
        result = session.call("cross_entropy_loss", np.zeros((1, 2, 3)), np.zeros((1, 2), dtype=np.int64))
    assert result.ok and result.helper_calls == ()


def _reference(name: str):
    import solutions
    return getattr(solutions, name)


def test_only_a_helper_wrong_on_its_own_inputs_is_blamed():
    x = np.random.default_rng(1).standard_normal((2, 3, 4))
    right = HelperCall("softmax", "cross_entropy_loss", True, (x,), {"axis": -1}, _reference("softmax")(x))
    float32 = HelperCall("softmax", "cross_entropy_loss", True, (x.astype(np.float32),), {},
                         _reference("softmax")(x.astype(np.float32)).astype(np.float32))
    wrong = HelperCall("softmax", "cross_entropy_loss", True, (x,), {"axis": -1}, _reference("softmax")(x) * 2)
    outside = HelperCall("softmax", "cross_entropy_loss", True, (x,), {"temperature": 2}, x)
    by_name = HelperCall("softmax", "cross_entropy_loss")
    judge = helper_blame.HelperJudge(_reference)
    calls = [helper_blame.Called("cross_entropy_loss", c) for c in (right, float32, outside, by_name)]
    assert judge.lay("`loss` is wrong.\n\nLikely cause: yours.", calls) == "`loss` is wrong.\n\nLikely cause: yours."
    said = judge.lay("`loss` is wrong.\n\nLikely cause: yours.",
                     [helper_blame.Called("cross_entropy_loss", wrong)])
    assert said == ("Your `softmax` returned wrong values when `cross_entropy_loss` called it in this test: fix "
                    "`softmax` first. `cross_entropy_loss` itself may be right: its result depends on what it "
                    "calls.\n\n`loss` is wrong.")


def test_a_call_too_large_to_record_to_a_helper_found_wrong_elsewhere_is_said_as_a_suspicion():
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    wrong = HelperCall("softmax", "cross_entropy_loss", True, (x,), {}, _reference("softmax")(x) * 2)
    large = [helper_blame.Called("cross_entropy_loss", HelperCall("softmax", "cross_entropy_loss"))]
    judge = helper_blame.HelperJudge(_reference)
    # Before the helper is found wrong anywhere, a call by name only lays nothing on it.
    assert judge.lay("The loss value is wrong.\n\nMore.", large) == "The loss value is wrong.\n\nMore."
    judge.lay("`loss` is wrong.", [helper_blame.Called("cross_entropy_loss", wrong)])
    said = judge.lay("The loss value is wrong.\n\nMore.", large)
    assert said == ("`cross_entropy_loss` calls your `softmax` in this test, on inputs too large to check again, "
                    "and `softmax` returned wrong values in another test: fix `softmax` first, then see whether "
                    "this test still fails.\n\nThe loss value is wrong.")


def test_a_reference_run_on_the_students_inputs_is_bounded_outside_the_grader():
    import time
    started = time.monotonic()
    # A mask for 200,000 positions is 40 GB: the child runs out of its address space, not the grader.
    huge = HelperCall("causal_mask", "greedy_next_token", True, (200_000,), {}, np.ones((2, 2), dtype=bool))
    assert helper_blame.wrong_on_own_inputs(huge, _reference("causal_mask")) is False
    assert helper_blame.bounded(lambda: [0 for _ in iter(int, 1)]) is None       # endless: abandoned
    assert time.monotonic() - started < helper_blame.CHECK_SECONDS * 3
    assert helper_blame.bounded(lambda: True) is True and helper_blame.bounded(lambda: False) is False


#: The red team's forged records: a student's function reaches the worker's own record list through
#: its caller's frame and adds calls the worker never saw, sized to make the grader's reference run
#: take gigabytes (a batch of 250 windows of a million tokens) or minutes (an int8 product).
_FORGED = '''
import sys as _sys
def lm_head(hidden, W_head, b_head):
    try:
        log = _sys._getframe(1).f_locals.get("log")
        if isinstance(log, list) and not log:
            log.append({{"helper": {helper!r}, "caller": "", "args": {args}, "kwargs": {{}}, "value": 0}})
    except Exception:
        pass
    return np.zeros((1,))
'''


def _peak_rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        return next(int(line.split()[1]) * 1024 for line in handle if line.startswith("VmHWM:"))


@pytest.mark.parametrize("helper, args", [
    ("next_token_batch", "[np.zeros(1_000_002, np.int8), np.zeros(250, np.int64), 1_000_000]"),
    ("lm_head", "[np.ones((3000, 6000), np.int8), np.ones((6000, 3000), np.int8), np.ones(7)]"),
])
def test_a_forged_record_costs_the_grader_neither_memory_nor_time(graders, helper, args):
    import time
    before, started = _peak_rss_bytes(), time.monotonic()
    outcome = _graded(graders, "lm-head", _FORGED.format(helper=helper, args=args))
    assert outcome.items                                          # graded to the end
    assert _peak_rss_bytes() - before < 512 * 2**20               # the reference ran in a bounded child
    assert time.monotonic() - started < 120


_SOFTMAX_IN_PLACE = '''
def softmax(x, axis=-1):
    x -= x.max(axis=axis, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(axis=axis, keepdims=True)
    return x
'''
_LOSS_RIGHT_VIA_SOFTMAX = '''
def cross_entropy_loss(logits, targets):
    B, T, V = logits.shape
    p = softmax(logits.astype(np.float64, copy=False), axis=-1).reshape(B * T, V)
    rows, t = np.arange(B * T), targets.reshape(-1)
    loss = float(-np.log(p[rows, t]).mean())
    d = p.copy()
    d[rows, t] -= 1.0
    return loss, (d / (B * T)).reshape(B, T, V)
'''
_LOSS_IN_PLACE_VIA_RIGHT_SOFTMAX = '''
def cross_entropy_loss(logits, targets):
    B, T, V = logits.shape
    logits -= logits.max(axis=-1, keepdims=True)
    p = softmax(logits, axis=-1).reshape(B * T, V)
    rows, t = np.arange(B * T), targets.reshape(-1)
    loss = float(-np.log(p[rows, t]).mean())
    d = p.copy()
    d[rows, t] -= 1.0
    return loss, (d / (B * T)).reshape(B, T, V)
'''


def test_an_input_changed_in_place_by_a_helper_is_laid_on_the_helper(graders):
    """A right loss whose own softmax does ``x -= ...`` on the loss's float64 logits: the change is the
    softmax's, shown by calling the softmax again on a copy of what it was given."""
    outcome = _graded(graders, "lm-head", _SOFTMAX_IN_PLACE + _LOSS_RIGHT_VIA_SOFTMAX)
    failed = [item for item in outcome.items if item.question == "q4" and not item.passed]
    laid = [item for item in failed if "the change is made inside your `softmax`" in item.message]
    assert laid, "\n\n".join(item.message for item in failed)
    for item in failed:
        assert "did not put it back as it was" not in item.message, item.message
    assert all(not item.mistakes for item in laid), [item.mistakes for item in laid]


def test_an_input_the_caller_itself_changes_stays_the_callers(graders):
    outcome = _graded(graders, "lm-head", _SOFTMAX_RIGHT + _LOSS_IN_PLACE_VIA_RIGHT_SOFTMAX)
    failed = [item for item in outcome.items if item.question == "q4" and not item.passed]
    assert any("`cross_entropy_loss` changed its input `logits` in place and did not put it back" in item.message
               for item in failed), "\n\n".join(item.message for item in failed)
    assert not any("inside your `softmax`" in item.message for item in failed)

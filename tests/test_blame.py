"""An exception raised inside another of the student's functions is laid on that function, in the
hidden tests' feedback as in the notebook's public checks: a correct loss that calls a broken
softmax is not told to look for a dropped axis in itself."""
from __future__ import annotations

import types

import numpy as np
import pytest

import autograder.build.in_kernel as in_kernel
from autograder.build.config import resolve_settings
from autograder.build.master import _public_values_module
from autograder.build.public_diagnosis import encode
from autograder.runtime import blame
from autograder.runtime.grading.runner import SandboxStudent
from autograder.runtime.judge import Feedback, call
from autograder.runtime.sandbox import Limits, SandboxSession
from tests.cross_function import CASES

FAST = Limits(wall_seconds_per_call=5.0, wall_seconds_total=30.0)


def _first_probe(name: str, function: str) -> tuple:
    (settings,) = resolve_settings([name], None)
    probes = _public_values_module(settings).probes(dict(settings.sizes), settings.public_seed)
    return tuple(in_kernel.decode(encode(probes[function][0].args)))


def _raising_cases():
    for name, caller, broken, source in CASES:
        namespace = {"np": np, "__name__": "__main__"}
        exec(compile("import numpy as np\n" + source, "<cells>", "exec"), namespace)
        try:
            namespace[caller](*_first_probe(name, caller))
        except Exception:
            yield name, caller, broken, source


RAISING = list(_raising_cases())


def _feedback(student, caller: str, args: tuple) -> str:
    with pytest.raises(Feedback) as failed:
        call(student, caller, *args)
    return str(failed.value)


@pytest.mark.parametrize("name, caller, broken, source", RAISING, ids=[f"{c[1]}-{c[2]}" for c in RAISING])
def test_a_helpers_error_is_laid_on_the_helper_in_process(name, caller, broken, source):
    namespace = {"__name__": "__main__"}
    exec(compile("import numpy as np\n" + source, "<cells>", "exec"), namespace)
    said = _feedback(types.SimpleNamespace(**namespace), caller, _first_probe(name, caller))
    assert said.startswith(f"The error is raised inside your `{broken}`, which `{caller}` calls"), said
    assert f"the fault is in `{broken}` or in what `{caller}` passes to it" in said, said


@pytest.mark.parametrize("name, caller, broken, source", RAISING, ids=[f"{c[1]}-{c[2]}" for c in RAISING])
def test_a_helpers_error_is_laid_on_the_helper_in_the_sandbox(name, caller, broken, source):
    with SandboxSession("import numpy as np\n" + source, FAST) as session:
        said = _feedback(SandboxStudent(session), caller, _first_probe(name, caller))
    assert said.startswith(f"The error is raised inside your `{broken}`, which `{caller}` calls"), said
    # the caller's own argument names are not the helper's: the cause is read without them
    assert "Likely cause" in said or "What the shapes show" in said or broken == "onehot", said


def test_an_error_in_the_function_itself_is_its_own():
    source = "import numpy as np\ndef softmax(x, axis=-1):\n    return np.exp(x) / np.exp(x).sum(axis=axis)\n"
    x = np.zeros((2, 3))
    with SandboxSession(source, FAST) as session:
        said = _feedback(SandboxStudent(session), "softmax", (x,))
    assert said.startswith("`softmax` raised") and "inside your" not in said, said


def test_a_chain_names_the_functions_between():
    assert "(through `log_softmax`)" in blame.blame_sentence("loss", ["loss", "log_softmax", "softmax"])
    assert blame.blame_sentence("loss", ["loss"]) == "" and blame.blame_sentence("loss", []) == ""


@pytest.mark.parametrize("chain", [["loss", "softmax"], ["loss", "a", "b"], ["softmax"], ["loss"]])
def test_the_notebook_and_the_hidden_tests_say_the_same(chain):
    assert in_kernel.blame_sentence("loss", chain) == blame.blame_sentence("loss", chain)

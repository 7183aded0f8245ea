"""Public checks that name mistakes inside the student's kernel, before anything is submitted.

An assignment's ``public_values.py`` may define ``probes(sizes, public_seed)``: for some of its
student functions, a few fixed public inputs chosen so that the catalogued mistakes give
results that differ from the right one and from each other. For each such function the build
renders one more public check, ``test_<question>_<function>_on_fixed_inputs``. It carries only
values: the inputs, the right result on each and, for every catalogued mistake, the result
that mistake gives there (with its title and explanation). No reference implementation, no
catalogue code and no hidden input goes to the student. In the kernel the check calls the
student's function on each input; ``in_kernel.diagnose`` says what is wrong. When it is wrong
and calls another of the student's functions, the blame goes where the evidence puts it: an
exception raised inside that other function is that function's (read from the traceback's
frames), and a wrong result is laid on it only when it is wrong on its own fixed inputs too
(each check ships the other functions' probes and right results for that). Mistakes the probes cannot tell from the right answer are left out; mistakes the
probes cannot tell from each other are named together.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2
import numpy as np

import autograder.build.in_kernel as in_kernel
import autograder.runtime.error_causes as causes_module
import autograder.runtime.relations as relations_module
from autograder.resources import templates_dir
from autograder.runtime.catalogue import Catalogue
from autograder.runtime.errors import BuildError


class PublicCallable(str):
    """A callable argument of a probe, written as the source of a lambda over ``np``: the check
    carries the source and evaluates it in the kernel, so no function object is shipped."""


@dataclass(frozen=True)
class Probe:
    """One fixed public input: positional and keyword arguments."""
    args: tuple
    kwargs: dict = field(default_factory=dict)

    @staticmethod
    def of(*args: Any, **kwargs: Any) -> "Probe":
        return Probe(tuple(args), dict(kwargs))


def encode(value: Any) -> Any:
    """``value`` as plain literals ``in_kernel.decode`` reads back: arrays keep dtype, shape and layout."""
    if isinstance(value, PublicCallable):
        return ("__callable__", str(value))
    if isinstance(value, np.ndarray):
        fortran = value.ndim > 1 and value.flags.f_contiguous and not value.flags.c_contiguous
        flat = value.ravel(order="F" if fortran else "C")
        return ("__ndarray__", value.dtype.str, list(value.shape), _entries(flat), fortran)
    if isinstance(value, np.generic):
        return ("__scalar__", value.dtype.str, _entries(np.asarray(value).reshape(1))[0])
    if isinstance(value, tuple):
        if in_kernel.raised(value):
            return value[:2]
        return ("__tuple__", [encode(v) for v in value])
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return _entries(np.array([value]))[0] if isinstance(value, float) else value
    raise BuildError(f"a public probe or result holds a {type(value).__name__}, which cannot be shipped as a value")


def _entries(flat: np.ndarray) -> list:
    """Entries as Python numbers; a non-finite float as ``("__float__", "inf")`` since literals have none."""
    return [("__float__", repr(x)) if isinstance(x, float) and not np.isfinite(x) else x for x in flat.tolist()]


def fixed_input_checks(question: str, probes: dict[str, list[Probe]], catalogue: Catalogue,
                       functions: tuple[str, ...]) -> list[str]:
    """The source of one check per function of ``question`` that has probes, in ``functions`` order."""
    template, (kernel_source, relations_source, causes_source) = _template(), _shipped_sources()
    helpers = _helpers(probes, catalogue)
    checks = []
    for function in functions:
        if function not in probes:
            continue
        shipped = [(encode(p.args), encode(p.kwargs)) for p in probes[function]]
        right, right_changed = _results(catalogue.reference(function), shipped)
        if any(map(in_kernel.raised, right)) or any(right_changed):
            raise BuildError(f"the reference {function} raises or changes an argument on one of its public probes")
        groups: list[tuple[list, list, list]] = []
        for m in catalogue.for_function(function):
            outs, changed = _results(m.implementation, shipped)
            if all(map(in_kernel.same, outs, right)) and not any(changed):
                continue                 # the probes cannot tell this mistake from the right answer
            twin = next((g for g in groups if g[1] == changed and all(map(in_kernel.same, outs, g[0]))), None)
            if twin is not None:
                twin[2].append(m)
            else:
                groups.append((outs, changed, [m]))
        slips = [{"titles": [m.title for m in ms],
                  "explanations": [" ".join(m.explanation.split()) for m in ms],
                  "results": [encode(o) for o in outs], "changed": changed} for outs, changed, ms in groups]
        checks.append(template.render(
            question=question, function=function,
            parameters=repr(list(inspect.signature(catalogue.reference(function)).parameters)),
            probes=repr(shipped), right=repr([encode(r) for r in right]), slips=repr(slips),
            kernel=repr(kernel_source), relations=repr(relations_source), causes=repr(causes_source),
            helpers=repr({h: v for h, v in helpers.items() if h != function}),
        ).strip("\n"))
    return checks


def _helpers(probes: dict[str, list[Probe]], catalogue: Catalogue) -> dict[str, tuple]:
    """Every probed function's parameters, encoded probes and right results: a check ships the
    other functions' so that, when its function calls one of them and is wrong, the kernel can run
    that one alone on its own inputs and say which of the two is at fault."""
    found = {}
    for function, its_probes in probes.items():
        shipped = [(encode(p.args), encode(p.kwargs)) for p in its_probes]
        right, _ = _results(catalogue.reference(function), shipped)
        found[function] = (list(inspect.signature(catalogue.reference(function)).parameters), shipped,
                           [encode(r) for r in right])
    return found


@lru_cache(maxsize=None)
def _template() -> jinja2.Template:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())),
                             undefined=jinja2.StrictUndefined, autoescape=False)
    return env.get_template("public/fixed_inputs_check.py.j2")


@lru_cache(maxsize=None)
def _shipped_sources() -> tuple[str, ...]:
    """The compacted sources every check ships (in-kernel comparison, relations, error causes):
    the same for every question and assignment of a build, so made once."""
    return tuple(_compact(Path(inspect.getsourcefile(m)).read_text(encoding="utf-8"))
                 for m in (in_kernel, relations_module, causes_module))


def _compact(source: str) -> str:
    """``source`` without docstrings and comments: it is shipped once per check, run, never read."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def _results(function: Any, shipped: list) -> tuple[list, list[bool]]:
    runs = [in_kernel.call(function, args, kwargs) for args, kwargs in shipped]
    return [out for out, _, _ in runs], [was_changed for _, was_changed, _ in runs]


def probes_of(module: Any, sizes: dict, public_seed: int) -> dict[str, list[Probe]]:
    """The assignment's public probes (``probes`` in its ``public_values.py``, if it has one), or none."""
    make = getattr(module, "probes", None)
    return {} if make is None else dict(make(dict(sizes), public_seed))

"""Every relation the grader can state has a probe that separates it from its alternatives.

A relation ("exactly 6 times too large (6 = B × T)", "right values moved one place forward",
"wrong only where `mask` is False") is a sentence about the student's code, so it may be said
only when the evidence rules out what else could give the same numbers: every entry fits it (not
most), the factor comes from one quantity only, the reading survives inputs on which a
coincidence no longer holds. Each template below is shown stated on evidence that fits, and not
stated on evidence that differs only in what tells it from the alternative. A new template in
``relations.py`` fails ``test_every_template_has_a_row`` until it has its row here.
"""
from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

import autograder.runtime.relations as relations
from autograder.runtime.diagnosis import whole_number_probes
from autograder.runtime.relations import relation

RNG = np.random.default_rng(11)
R = RNG.standard_normal((2, 3, 5))
ARGS = (R, RNG.integers(0, 5, size=(2, 3)))
PARAMS = ["logits", "targets"]


def _one_off(x: np.ndarray) -> np.ndarray:
    """``x`` with one entry moved: evidence that fits a relation everywhere but there."""
    y = x.copy()
    y.flat[-1] += 0.37
    return y


def _first_kept(mask: np.ndarray) -> np.ndarray:
    """0.25 at the first kept position's entries, 0 elsewhere: a wrong value where the mask keeps one."""
    out = np.zeros(mask.shape + (5,))
    out[0, 0] = 0.25
    return out


def _said(student, right, params=PARAMS, args=ARGS, observations=()):
    return relation(student, right, params, args, (), list(observations)) or ""


def _mask_case():
    mask = np.array([[True, True, False], [True, False, False]])
    right = R.copy()
    right[~mask] = 0.0
    wrong = right.copy()
    wrong[~mask] = RNG.random((int((~mask).sum()), 5))
    return wrong, right, ["logits", "targets", "mask"], (R, ARGS[1], mask)


def _count_case(coincidence_only: bool):
    params = ["vocab_size", "block_size", "n_embd", "n_layer", "ffn_dim", "tied"]
    args = (1000, 256, 128, 4, 512, True)

    def right(V, T, d, L, f, tied=True):
        return {"attention": L * (4 * d * d + 4 * d)}

    def student(V, T, d, L, f, tied=True):
        # Missing 4·d·L, or (coincidence only) 2·T·L, which equals it at these settings.
        return {"attention": right(V, T, d, L, f)["attention"] - (2 * T * L if coincidence_only and (V, d) != (1000, 128)
                                                                   else 4 * d * L)}
    seen = [(student(*p), right(*p), p) for p in whole_number_probes(args)]
    return student(*args), right(*args), params, args, seen


#: template -> (how the stated case is made, the sentence's mark, how the refuted case is made)
ROWS = {
    "_factor_phrase": (lambda: _said(R * 6, R), "6 = 2 × 3",
                       lambda: _said(R * 10 / 3, R, ["logits", "targets", "mask"],
                                     (R, ARGS[1], np.array([[1, 1, 1], [1, 1, 1]], dtype=bool)))),
    "_number_relation_on_probes": (lambda: _said(0.3 / 6, 0.3, observations=[(0.7 / 6, 0.7, ARGS)]), "6 times too small",
                                   lambda: _said(0.3 / 6, 0.3, observations=[(0.7 / 4.5, 0.7, ARGS)])),
    "_one_axis_off": (lambda: _said(R[:, :2], R), "stops too early",
                      lambda: _said(RNG.standard_normal((2, 2, 5)), R)),
    "_non_finite_cause": (lambda: _said(np.full_like(R, np.inf), R, PARAMS, (R * 1000, ARGS[1])), "larger than 700",
                          lambda: _said(np.full_like(R, np.inf), R)),
    "_value_not_position": (lambda: _said(R.max(axis=-1), np.argmax(R, axis=-1), ["logits"], (R,)), "`argmax`",
                            lambda: _said(_one_off(R.max(axis=-1)), np.argmax(R, axis=-1), ["logits"], (R,))),
    "_shift": (lambda: _said(np.roll(R, 1, axis=1), R), "moved one place",
               lambda: _said(_one_off(np.roll(R, 1, axis=1)), R)),
    "_rows_moved": (lambda: _said(R[::-1].copy(), R), "right rows along the last axis",
                    lambda: _said(_one_off(R[::-1].copy()), R)),
    "_normalised_elsewhere": (lambda: _said(np.exp(R) / np.exp(R).sum(), np.exp(R) / np.exp(R).sum(-1, keepdims=True)),
                              "over the whole array",
                              lambda: _said(1.01 * np.exp(R) / np.exp(R).sum(), np.exp(R) / np.exp(R).sum(-1, keepdims=True))),
    "_masked_region": (lambda: _said(*_mask_case()), "where `mask` is False",
                       lambda: (lambda w, r, p, a: _said(w + _first_kept(a[2]), r, p, a))(
                           *_mask_case())),
    "_every_other": (lambda: _said(np.where(np.arange(R.size).reshape(R.shape) % 2 == 0, R, 0.0), R), "every second entry",
                     lambda: _said(_one_off(np.where(np.arange(R.size).reshape(R.shape) % 2 == 0, R, 0.0)), R)),
    "_rounding_sized": (lambda: _said(R + 2e-6 * np.abs(R).max() * np.sign(RNG.standard_normal(R.shape)), R),
                        "only a little (at most",
                        lambda: _said(R * (1 + 1e-3 * RNG.standard_normal(R.shape)), R)),
    "_axis_region": (lambda: _said(np.where(np.arange(5) == 2, R + 1, R), R), "wrong only at index 2 of axis 2",
                     lambda: _said(R + RNG.standard_normal(R.shape), R)),
    "count_difference": (lambda: (lambda s, r, p, a, o: _said(s, r, p, a, o))(*_count_case(False)),
                         "4 × `n_embd` × `n_layer` too small",
                         lambda: (lambda s, r, p, a, o: _said(s, r, p, a, o))(*_count_case(True))),
    "_scalar_formula": (lambda: _said(float(np.sqrt(2.7)), float(np.exp(2.7)), ["mean_nll"], (2.7,),
                                      [(float(np.sqrt(p[0])), float(np.exp(p[0])), p) for p in whole_number_probes((2.7,))]),
                        "`np.sqrt(mean_nll)`",
                        lambda: _said(float(np.sqrt(2.7)), float(np.exp(2.7)), ["mean_nll"], (2.7,),
                                      [(float(np.sqrt(p[0])) + 0.1, float(np.exp(p[0])), p)
                                       for p in whole_number_probes((2.7,))])),
    "_axis_of_one": (lambda: _said(R.reshape(1, *R.shape), R), "of size 1 more than the right result",
                     lambda: _said(_one_off(R).reshape(1, *R.shape), R)),
    "_reduced_short": (lambda: _said(np.stack([0.3 * R, 0.7 * R]), R), "summed over that axis",
                       lambda: _said(_one_off(np.stack([0.3 * R, 0.7 * R])), R)),
    # Refuted where two positions hold the same values: which one was taken is then a guess.
    "_one_slice": (lambda: _said(R[:, -1], R), "at the last index of axis 1 only",
                   lambda: (lambda r: _said(r[:, -1], r))(np.concatenate([R[:, -1:], R[:, 1:]], axis=1))),
    "_wrapped_part": (lambda: _said(*_wrapped_case(False)), "moved one place back along axis 1",
                      lambda: _said(*_wrapped_case(True))),
}


def _wrapped_case(off: bool):
    """Rows of ids and their targets, the targets wrapped to each row's first id (``off``: and one
    target wrong elsewhere too, so the roll is not what the result is)."""
    data = RNG.integers(0, 50, size=(3, 7))
    xb, yb = data[:, :6], data[:, 1:]
    wrapped = np.roll(xb, -1, axis=1)
    if off:
        wrapped[0, 0] += 1
    return (xb, wrapped), (xb, yb), ["data", "ix"], (data, np.arange(3))

#: Functions the relation code calls that state nothing themselves.
HELPERS = {"_close", "_sizes", "_ways", "_one_way", "_wrong_entries", "_whole_numbers", "_monomials",
           "_count_readings", "_holds", "_say_reading", "_same_number", "_non_finite_number", "_part_of",
           "_same_result", "_first_part_same", "_reference_on", "_array_relation", "_number_relation", "relation",
           "_varied"}


@pytest.mark.parametrize("template", sorted(ROWS))
def test_each_template_is_stated_on_evidence_that_fits_and_not_on_evidence_that_differs(template):
    stated, mark, refuted = ROWS[template]
    said = stated()
    assert mark in said, f"{template} was not stated where it holds: {said!r}"
    assert mark not in refuted(), f"{template} was stated where the evidence does not separate it: {refuted()!r}"


def _called_from(function) -> set[str]:
    tree = ast.parse(inspect.getsource(function))
    return {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}


def test_every_template_has_a_row():
    called = set()
    for function in (relations.relation, relations._array_relation, relations._number_relation):
        called |= _called_from(function)
    module_functions = {name for name, value in vars(relations).items() if inspect.isfunction(value)}
    templates = {name for name in called if name in module_functions} - HELPERS
    assert templates <= set(ROWS), f"relation templates with no separating-probe row here: {templates - set(ROWS)}"

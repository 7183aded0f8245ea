"""Which mistake groups one graded submission is in, and the group ids.

A group is one behaviour of one function: a submission is in the group of ``function`` when it lost
points on that function's question and the function is the one at fault there (its outputs on the
class's shared probes differ from the reference's, or a named mistake of it was found; a question of
one function always blames that function). Its behaviour signature is its digest on the probes
where that digest says something (the function returned something else than the reference, or
changed its input, on inputs the whole class shares); only where it does not (``=`` or no probes)
is the signature the tests it failed on that question and the mistakes named for the function.
Which tests fail, and which mistakes are named, depend on each student's own hidden inputs: a
test a mistake trips on some inputs only, a mistake ruled out by a test one student's inputs
happened to pass. On the shared probes, the same computation gives the same digest, so students
with one cause are one group. The id is a hash of the signature, so it depends on nothing but the
submission's behaviour: a rerun of the class, a regrade or a late submission that behaves the same
gets the same id.

A question of several functions that lost points while every one of them matched the reference on
the probes (a mistake the probes do not reach) is blamed on all of them together, as one unit
named ``f+g``: the grader cannot tell which one it is.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from autograder.runtime.class_probes import RIGHT
from autograder.runtime.grading.outcome import GradeRecord

#: Digest of a function graded without probes (a record from before them): unknown, not right.
UNPROBED = "?"


@dataclass(frozen=True)
class Membership:
    """One submission's place in one group."""

    group: str                       # the group id, ``<unit>-<16 hex digits>``
    unit: str                        # the function (or ``f+g``) the group is about
    question: str
    failed_tests: tuple[str, ...]
    mistakes: tuple[str, ...]        # slugs named for the unit's functions
    digests: tuple[str, ...]         # the unit's functions' digests on the probes
    points_lost: float


def groupable(record: GradeRecord) -> bool:
    """Whether ``record`` can be in groups: graded, attempted, and short of full marks."""
    o = record.outcome
    return o.status == "graded" and "not-attempted" not in o.flags and o.total < o.possible


def telling(digests: tuple[str, ...]) -> bool:
    """Whether the probes tell this behaviour by themselves: every function's digest is one of a
    wrong result (not ``=``, not unknown)."""
    return bool(digests) and all(d not in (RIGHT, UNPROBED) for d in digests)


def group_id(assignment: str, unit: str, question: str, failed: tuple[str, ...], mistakes: tuple[str, ...],
             digests: tuple[str, ...]) -> str:
    """The id of the group with this signature: the same signature gives the same id on any run.
    Where the digests tell the behaviour, the failed tests and named mistakes (which vary with each
    student's hidden inputs) are not part of it."""
    if telling(digests):
        failed, mistakes = (), ()
    signature = "\n".join([assignment, unit, question, ",".join(failed), ",".join(mistakes), ",".join(digests)])
    return f"{unit}-{hashlib.blake2b(signature.encode(), digest_size=8).hexdigest()}"


def memberships(record: GradeRecord) -> list[Membership]:
    """The groups ``record`` is in: one per question that lost points and function at fault there."""
    if not groupable(record):
        return []
    o = record.outcome
    found: list[Membership] = []
    for question in dict.fromkeys(i.question for i in o.items):
        items = [i for i in o.items if i.question == question]
        failed = tuple(sorted(i.test for i in items if not i.passed))
        if not failed:
            continue
        lost = round(sum(i.points for i in items if not i.passed), 2)
        named = {slug for i in items if not i.passed for slug in i.mistakes}
        digest = {f: d for q, f, d in o.behaviour if q == question}
        functions = tuple(digest) or (question,)
        mistakes_of = {f: tuple(sorted(d.slug for d in o.diagnoses if d.function == f and d.slug in named))
                       for f in functions}
        if len(functions) == 1:
            units = [functions]
        else:
            at_fault = [f for f in functions if digest[f] != RIGHT or mistakes_of[f]]
            units = [(f,) for f in at_fault] or [functions]
        for unit in units:
            name = "+".join(unit)
            mistakes = tuple(sorted({m for f in unit for m in mistakes_of.get(f, ())}))
            digests = tuple(digest.get(f, UNPROBED) for f in unit)
            found.append(Membership(group_id(o.assignment, name, question, failed, mistakes, digests), name,
                                    question, failed, mistakes, digests, lost))
    return found

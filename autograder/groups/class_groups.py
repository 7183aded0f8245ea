"""A class's mistake groups: every group's members, size, share of the points lost, failed tests and
what the grader could say of it, in the order an instructor reads them (per function, in the
assignment's order; in each, the largest group no mistake of the catalogue names first)."""
from __future__ import annotations

from dataclasses import dataclass

from autograder.groups.membership import Membership, memberships
from autograder.runtime.grading.outcome import GradeRecord


@dataclass(frozen=True)
class MistakeGroup:
    """One behaviour of one function, and the submissions that share it (sorted by student id).

    Members grouped by their probe digest may differ in the tests they failed and the mistakes
    named for them (each student's hidden inputs are their own): ``failed_tests`` and ``mistakes``
    are those of any member, ``failed_by_all`` the tests every member failed."""

    id: str
    unit: str
    question: str
    failed_tests: tuple[str, ...]
    mistakes: tuple[str, ...]
    members: tuple[GradeRecord, ...]
    points_lost: float
    #: The titles of the named mistakes, or, for an unnamed group, what the grader told the first
    #: member on the first test it failed (grader text that may quote the student's: escape it).
    said: tuple[str, ...]
    failed_by_all: tuple[str, ...] = ()

    @property
    def named(self) -> bool:
        return bool(self.mistakes)

    @property
    def size(self) -> int:
        return len(self.members)


@dataclass(frozen=True)
class ClassGroups:
    """The groups of a graded class and the points they are measured against."""

    groups: tuple[MistakeGroup, ...]
    points_lost: float                  # by the whole class (graded, attempted submissions)

    def share(self, group: MistakeGroup) -> float:
        """The fraction of the class's lost points that ``group``'s members lost on its question."""
        return group.points_lost / self.points_lost if self.points_lost else 0.0

    def of(self, student: str) -> list[MistakeGroup]:
        return [g for g in self.groups if any(m.entry.student == student for m in g.members)]


def _said(pairs: list[tuple[GradeRecord, Membership]], mistakes: tuple[str, ...]) -> tuple[str, ...]:
    titles = {d.slug: d.title for r, _ in pairs for d in r.outcome.diagnoses}
    if mistakes:
        return tuple(titles.get(slug, slug) for slug in mistakes)
    record, first = pairs[0]
    for item in record.outcome.items:
        if item.question == first.question and item.test in first.failed_tests:
            return (item.message,)
    return ()


def _group(gid: str, pairs: list[tuple[GradeRecord, Membership]]) -> MistakeGroup:
    first = pairs[0][1]
    failed = tuple(sorted({t for _, m in pairs for t in m.failed_tests}))
    by_all = tuple(t for t in failed if all(t in m.failed_tests for _, m in pairs))
    mistakes = tuple(sorted({s for _, m in pairs for s in m.mistakes}))
    return MistakeGroup(gid, first.unit, first.question, failed, mistakes, tuple(r for r, _ in pairs),
                        round(sum(m.points_lost for _, m in pairs), 2), _said(pairs, mistakes), by_all)


def class_groups(records: tuple[GradeRecord, ...] | list[GradeRecord]) -> ClassGroups:
    """Group ``records`` (a graded folder's) by behaviour."""
    members: dict[str, list[tuple[GradeRecord, Membership]]] = {}
    order: dict[str, int] = {}            # a unit's place: the assignment's question order
    questions = list(dict.fromkeys(i.question for r in records for i in r.outcome.items))
    lost = 0.0
    for record in sorted(records, key=lambda r: r.entry.student):
        found = memberships(record)
        if found:
            lost += record.outcome.possible - record.outcome.total
        for m in found:
            members.setdefault(m.group, []).append((record, m))
            order.setdefault(m.unit, questions.index(m.question) if m.question in questions else len(questions))
    groups = [_group(gid, pairs) for gid, pairs in members.items()]
    groups.sort(key=lambda g: (order[g.unit], g.unit, g.named, -g.size, -g.points_lost, g.id))
    return ClassGroups(tuple(groups), round(lost, 2))

"""Time ``grader similarity``'s comparison on a class of 200 submissions.

The class is the similarity cohort of ``lm-head`` (tests/similarity_cohort.py)
repeated with its students' code re-ordered cell by cell, written as
notebooks with their grading records, then compared end to end as
``grader similarity`` does (reading, extracting, normalising, fingerprinting,
ranking, writing the CSV and the page). Prints the seconds taken.

    python benchmarks/similarity_speed.py
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from autograder.runtime.grading.files import write_atomic  # noqa: E402
from autograder.runtime.grading.outcome import RECORD_NAME, Entry, GradeOutcome, GradeRecord  # noqa: E402
from autograder.similarity.section import write_similarity  # noqa: E402
from tests.similarity_cohort import cohort  # noqa: E402

CLASS_SIZE = 200


def main() -> None:
    students = []
    seed = 0
    while len(students) < CLASS_SIZE:
        students += [(f"{s.name[:30]}-{seed}", s.cells) for s in cohort("lm-head", seed=seed).students]
        seed += 1
    students = students[:CLASS_SIZE]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for index, (name, cells) in enumerate(students):
            path = root / "submissions" / f"{index}.ipynb"
            path.parent.mkdir(exist_ok=True)
            nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells]), path)
            record = GradeRecord(Entry(f"s{index}", path), GradeOutcome(f"s{index}", "lm-head", "graded", "bwrap"))
            write_atomic(root / "graded" / f"s{index}" / RECORD_NAME, record.to_json())
        start = time.perf_counter()
        result, _, _ = write_similarity(root / "graded")
        seconds = time.perf_counter() - start
    print(f"{result.compared} submissions, {len(result.pairs)} pairs sharing unusual code, "
          f"{len(result.flagged)} flagged: {seconds:.2f} s")


if __name__ == "__main__":
    main()

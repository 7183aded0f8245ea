"""Time ``grader similarity``'s comparison on a class of 200 submissions.

The class is the similarity cohort of ``lm-head`` (tests/similarity_cohort.py)
repeated with its students' code re-ordered cell by cell, written as
notebooks with their grading records, then compared end to end by running
``grader similarity`` in a fresh interpreter (starting Python, importing,
rendering the starter notebook, reading, extracting, normalising,
fingerprinting, ranking, writing the CSV and the page): nothing is warm from
building the class. Prints the seconds taken, the CPU seconds (steadier on a busy
machine) and the comparing process's peak resident memory.

    python benchmarks/similarity_speed.py
"""
from __future__ import annotations

import csv
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.runtime.grading.files import write_atomic  # noqa: E402
from autograder.runtime.grading.outcome import RECORD_NAME, Entry, GradeOutcome, GradeRecord, student_folder  # noqa: E402
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
            write_atomic(student_folder(root / "graded", f"s{index}") / RECORD_NAME, record.to_json())
        start = time.perf_counter()
        run = subprocess.run([sys.executable, "-c", "from autograder.cli import main; main()",
                              "similarity", str(root / "graded")], cwd=os.environ.get("SIMILARITY_CODE_ROOT", ROOT), capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if run.returncode != 0:
            raise SystemExit(run.stdout + run.stderr)
        with open(root / "graded" / "similarity.csv", encoding="utf-8") as f:
            flagged = sum(row["flagged"] == "yes" for row in csv.DictReader(f))
    # The only child this script waits for is the comparing process, so the children's peak is its own.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime     # what the run cost, whatever else the machine was doing
    print(f"{len(students)} submissions, {flagged} pairs flagged: {seconds:.2f} s, {cpu:.2f} s of CPU, "
          f"peak {usage.ru_maxrss / 1024:.0f} MB (fresh process, end to end)")

if __name__ == "__main__":
    main()

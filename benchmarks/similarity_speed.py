"""Time ``grader similarity`` on a class of 1,000 submissions (or ``--size N``), against its limits.

The class is the similarity cohort of ``lm-head`` (tests/similarity_cohort.py)
drawn again with seed after seed until it has ``N`` students (each seed draws
other own work, other copies and other students writing the obvious code),
written as notebooks with their grading records, then compared end to end by
running ``grader similarity`` in a fresh interpreter (starting Python,
importing, rendering the starter notebook, reading, extracting, normalising,
fingerprinting, ranking, writing the CSV and the page): nothing is warm from
building the class. Prints the seconds taken, the CPU seconds (steadier on a
busy machine), the comparing process's peak resident memory and the size of
``similarity.html``, each beside its limit (issue 30: 30 s and 500 MB for
1,000 submissions, and a page that holds only the flagged pairs and groups),
and exits 1 when one is over.

    python benchmarks/similarity_speed.py              # 1,000 submissions
    python benchmarks/similarity_speed.py --size 200
"""
from __future__ import annotations

import argparse
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

CLASS_SIZE = 1000
#: The limits for 1,000 submissions on the 2-core reference machine (issue 30).
SECONDS_LIMIT = 30.0
MEMORY_LIMIT_MB = 500.0
#: A page of the flagged pairs and groups of 1,000 submissions: a few megabytes at most, never one per pair.
PAGE_LIMIT_MB = 5.0


def class_of(size: int) -> list[tuple[str, tuple[str, ...]]]:
    """``size`` students (name, code cells) from cohorts of successive seeds."""
    students: list[tuple[str, tuple[str, ...]]] = []
    seed = 0
    while len(students) < size:
        students += [(f"{s.name[:30]}-{seed}", tuple(s.cells)) for s in cohort("lm-head", seed=seed).students]
        seed += 1
    return students[:size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size", type=int, default=CLASS_SIZE, help="submissions in the class")
    size = parser.parse_args().size
    students = class_of(size)
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
            rows = list(csv.DictReader(f))
        flagged = sum(row["flagged"] == "yes" for row in rows)
        page_mb = (root / "graded" / "similarity.html").stat().st_size / 1e6
    # The only child this script waits for is the comparing process, so the children's peak is its own.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime     # what the run cost, whatever else the machine was doing
    peak_mb = usage.ru_maxrss / 1024
    scale = size / CLASS_SIZE
    limits = [("time", seconds, SECONDS_LIMIT, "s"), ("peak memory", peak_mb, MEMORY_LIMIT_MB, "MB"),
              ("page", page_mb, PAGE_LIMIT_MB, "MB")]
    print(f"{len(students)} submissions, {flagged} pairs flagged, {len(rows)} pairs in the CSV: {seconds:.2f} s, "
          f"{cpu:.2f} s of CPU, peak {peak_mb:.0f} MB, page {page_mb:.2f} MB (fresh process, end to end)")
    over = [f"{what} {value:.2f} {unit} > {limit:g} {unit}" for what, value, limit, unit in limits
            if size == CLASS_SIZE and value > limit]
    if size != CLASS_SIZE:
        print(f"limits hold for {CLASS_SIZE} submissions only (this class is {scale:.2f} of that): not checked")
    elif over:
        print("over the limit: " + "; ".join(over))
        raise SystemExit(1)
    else:
        print(f"within the limits: {SECONDS_LIMIT:g} s, {MEMORY_LIMIT_MB:g} MB, page {PAGE_LIMIT_MB:g} MB")


if __name__ == "__main__":
    main()

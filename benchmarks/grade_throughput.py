"""Bulk grading throughput against `otter run`, on a synthetic class, in one run.

Builds the lm-head autograder, synthesizes a cohort of varied submissions
(correct, every catalogued lm-head mistake, partial, broken, timing out),
times a sample with plain `otter run` (the zip with its plugin switched off:
otter alone, the baseline) and with `otter run` on the shipped zip, grades
all of them with `grader grade`, checks that the sample's scores agree, and
prints the figures against their targets, with the floor: the hidden suite's
own CPU time on the reference, in-process, divided by the cores; and the
sandbox floor: the same suite on the reference run through a fresh sandbox
worker per submission (its difference from the floor is what isolating a
submission costs).

    python benchmarks/grade_throughput.py [--size 200] [--sample 5] [--workers 2] [--scale 1000]
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from autograder.build import build  # noqa: E402
from autograder.build.otter_steps import otter_run, score_of  # noqa: E402
from autograder.build.spec import load_spec  # noqa: E402
from autograder.runtime.grading.support import load_autograder  # noqa: E402
from tests.cohort import with_extra_cell, with_mistake, with_stubs, write_export_zip  # noqa: E402

LM_HEAD_FUNCTIONS = ["next_token_batch", "lm_head", "softmax", "cross_entropy_loss", "lm_head_backward",
                     "numerical_gradient", "max_rel_err"]
#: Targets: grader grade at least this many times faster per submission than plain otter; the
#: shipped zip under otter run at most this many times slower than plain otter; grader grade
#: within this multiple of the floor (the hidden suite's own CPU time over the cores).
TARGET_RATIO = 50.0
SHIPPED_TARGET = 1.2
FLOOR_TARGET = 2.0
MEMORY_LIMIT_MB = 1024.0
#: A larger class grades at the same per-submission time (within this multiple); its report is this quick.
SCALE_TARGET = 1.15
REPORT_TARGET_S = 5.0


def synthesize_class(solution: nbformat.NotebookNode, folder: Path, size: int, rng: random.Random) -> dict[str, str]:
    """The class the speed targets are stated for: one third correct, two thirds with one
    catalogued mistake each (every mistake in turn), half as export zips."""
    kinds: dict[str, str] = {}
    mistakes = list(load_spec("lm-head").catalogue().mistakes.values())
    for n in range(size):
        student = f"s{n:04d}"
        if n % 3 == 0:
            nb, kind = solution, "correct"
        else:
            m = mistakes[n % len(mistakes)]
            nb, kind = with_mistake(solution, m), f"mistake:{m.name}"
        if rng.random() < 0.5:
            write_export_zip(nb, folder / f"{student}.zip", "lm-head")
        else:
            nbformat.write(nb, folder / f"{student}.ipynb")
        kinds[student] = kind
    return kinds


def synthesize(solution: nbformat.NotebookNode, folder: Path, size: int, rng: random.Random) -> dict[str, str]:
    """A harder mix (``--cohort mixed``): every mistake three times, partial, broken, unreadable
    and endless submissions, the rest correct. Write ``size`` submissions into ``folder``."""
    kinds: dict[str, str] = {}
    mistakes = list(load_spec("lm-head").catalogue().mistakes.values())
    n = 0

    def save(nb, kind: str, as_zip: bool) -> None:
        nonlocal n
        student = f"s{n:04d}"
        if as_zip:
            write_export_zip(nb, folder / f"{student}.zip", "lm-head")
        else:
            nbformat.write(nb, folder / f"{student}.ipynb")
        kinds[student] = kind
        n += 1

    for m in mistakes * 3:                                     # every mistake, three times
        save(with_mistake(solution, m), f"mistake:{m.name}", rng.random() < 0.5)
    for _ in range(30):                                        # partial: some functions left as stubs
        save(with_stubs(solution, rng.sample(LM_HEAD_FUNCTIONS, rng.randint(1, 4))), "partial", rng.random() < 0.5)
    for source in ("def broken(:\n    pass", "import numpy as np\nraise RuntimeError('oops')"):
        for _ in range(3):
            save(with_extra_cell(solution, source, 3), "broken", False)
    for _ in range(3):                                         # not a notebook at all
        student = f"s{n:04d}"
        (folder / f"{student}.ipynb").write_text("{ this is not json")
        kinds[student] = "broken"
        n += 1
    for _ in range(2):                                         # endless loop while loading
        save(with_extra_cell(solution, "while True:\n    pass", 3), "timeout", False)
    while n < size:                                            # the rest: correct
        save(solution, "correct", rng.random() < 0.5)
    return kinds


def _tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and all its descendants, in MB."""
    total, stack = 0, [pid]
    while stack:
        p = stack.pop()
        try:
            with open(f"/proc/{p}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
            with open(f"/proc/{p}/task/{p}/children") as handle:
                stack += [int(c) for c in handle.read().split()]
        except (OSError, ValueError):
            continue
    return total / 2**20


def run_grader(folder: Path, zip_path: Path, out: Path, workers: int, timeout: float) -> tuple[float, float]:
    """Wall seconds and peak memory (MB, whole process tree) of one `grader grade` run."""
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(folder), "-a", str(zip_path), "-o", str(out),
           "--workers", str(workers), "--timeout", str(timeout), "--force"]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0.0
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _tree_rss_mb(proc.pid))
            time.sleep(0.05)

    sampler = threading.Thread(target=sample)
    sampler.start()
    _, err = proc.communicate()
    done.set()
    sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"grader grade failed:\n{err.decode()[-2000:]}")
    return time.perf_counter() - start, peak


def scale_run(solution: nbformat.NotebookNode, zip_path: Path, tmp: Path,
              args: argparse.Namespace) -> tuple[float, float, float]:
    """Grade a class of ``args.scale`` the same way, then time `grader report` on it: (grading wall
    seconds, peak memory in MB, report seconds)."""
    cohort = tmp / "scale-cohort"
    cohort.mkdir()
    synthesize_class(solution, cohort, args.scale, random.Random(args.seed + 1))
    out = tmp / "scale-graded"
    wall, peak = run_grader(cohort, zip_path, out, args.workers, args.timeout)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "autograder.cli", "report", str(out), "-o", str(tmp / "report.html")],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return wall, peak, time.perf_counter() - start


def suite_floor(ag, seconds: float = 3.0) -> float:
    """CPU seconds of one run of the autograder ``ag``'s hidden suite on the reference, in-process,
    no sandbox.

    Measured as grading runs: with one BLAS thread (idle OpenBLAS threads
    spin, and their spinning would count as CPU time the suite never needed:
    it doubled this figure on a 2-core machine), and with the allocator
    keeping freed memory (``autograder.runtime.allocator``).
    """
    from threadpoolctl import threadpool_limits

    from autograder.runtime.allocator import keep_freed_memory
    keep_freed_memory()

    from tests.suites import reference_namespace
    student = reference_namespace()
    with threadpool_limits(1):
        runs, start = 0, time.process_time()
        while time.process_time() - start < seconds or runs < 3:
            ag.suite.run(student, runs + 1)
            runs += 1
        return (time.process_time() - start) / runs


def _machine_busy_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (all processes, all cores)."""
    with open("/proc/stat") as handle:
        # user nice system idle iowait irq softirq steal guest guest_nice: guest time is already
        # in user and nice, and steal is time the host ran something else.
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in handle.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def sandbox_floor(ag, solution_path: Path, seconds: float = 2.0, windows: int = 3) -> float:
    """Machine CPU seconds per submission of the autograder ``ag``'s hidden suite on the reference,
    graded through the sandbox as grading does it, with nothing else.

    Each run is ``grade_program`` on the solution notebook's code (read and extracted once): a
    fresh worker from a fork server, the code loaded, the hidden suite run against it through the
    proxy, the worker ended. There is no intake of a file, no diagnosis (the reference makes no
    mistake) and no files written. The difference from ``suite_floor`` is what isolating a
    submission costs: its own process, loading its code, one round trip per call. The workers'
    CPU is outside this process, so the machine's busy time is read, over ``windows`` spells of
    at least ``seconds`` each, keeping the least: anything else the machine does only adds to it
    (the machine should be otherwise idle, as for the rest of this benchmark).
    """
    from threadpoolctl import threadpool_limits

    from autograder.runtime.grading.extract import extract_program
    from autograder.runtime.grading.intake import read_submission
    from autograder.runtime.grading.runner import grade_program
    from autograder.runtime.sandbox import ForkServer, Limits, WarmStart
    from autograder.runtime.sandbox.policy import clear

    clearance = clear("auto", [solution_path], trusted=False)
    program = extract_program(read_submission(solution_path, ag.assignment))
    limits = Limits()
    server = ForkServer(limits, clearance.level)
    warm = server if server.usable else WarmStart(limits, clearance.level)

    def grade_once() -> None:
        outcome = grade_program(program, ag, "reference", clearance, limits=limits, warm=warm)
        if outcome.total != outcome.possible:
            raise SystemExit(f"the sandbox floor's reference scored {outcome.total}/{outcome.possible}")

    try:
        with threadpool_limits(1):
            grade_once()                          # the fork server's start is not a submission's cost
            spells = []
            for _ in range(windows):
                runs, start, busy = 0, time.perf_counter(), _machine_busy_seconds()
                while time.perf_counter() - start < seconds or runs < 10:
                    grade_once()
                    runs += 1
                spells.append((_machine_busy_seconds() - busy) / runs)
            return min(spells)
    finally:
        warm.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=200)
    parser.add_argument("--sample", type=int, default=5, help="submissions timed through otter run, each way")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cohort", choices=["class", "mixed"], default="class",
                        help="class: 1/3 correct, 2/3 one catalogued mistake (the targets' class); "
                             "mixed: also partial, broken and endless submissions")
    parser.add_argument("--scale", type=int, default=0,
                        help="also grade a class of this size (e.g. 1000) and report it: per-submission time "
                             "against the --size class, peak memory, and `grader report`'s time")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    from tests.adversarial import without_plugin
    with tempfile.TemporaryDirectory(prefix="lmhead-bench-") as tmp:
        tmp = Path(tmp)
        (result,) = build(["lm-head"], tmp / "dist", None, verify=False)
        plain_zip = without_plugin(result.autograder_zip, tmp / "plain.zip")
        solution = nbformat.read(result.solution, as_version=4)
        cohort = tmp / "cohort"
        cohort.mkdir()
        kinds = (synthesize_class if args.cohort == "class" else synthesize)(solution, cohort, args.size, rng)
        files = {p.stem: p for p in cohort.iterdir()}

        # otter can only grade what finishes and parses; it has no timeout.
        gradable = sorted(s for s, k in kinds.items() if k not in ("timeout", "broken"))
        sample = rng.sample(gradable, min(args.sample, len(gradable)))
        plain_seconds, shipped_seconds, otter_scores = [], [], {}
        for student in sample:
            start = time.perf_counter()
            otter_run(plain_zip, files[student])
            plain_seconds.append(time.perf_counter() - start)
            start = time.perf_counter()
            otter_scores[student] = score_of(otter_run(result.autograder_zip, files[student]))[0]
            shipped_seconds.append(time.perf_counter() - start)

        out = tmp / "graded"
        wall, peak_mb = run_grader(cohort, result.autograder_zip, out, args.workers, args.timeout)
        with open(out / "gradebook.csv", newline="") as handle:
            ours = {row["student"]: row for row in csv.DictReader(handle)}
        # Both floors run the shipped autograder's own suite, as grading does.
        ag = load_autograder(result.autograder_zip, tmp / "floor-autograder")
        floor_cpu = suite_floor(ag)
        sandbox_cpu = sandbox_floor(ag, result.solution)
        scaled = scale_run(solution, result.autograder_zip, tmp, args) if args.scale else None

    mismatches = [(s, otter_scores[s], float(ours[s]["total"])) for s in sample
                  if abs(otter_scores[s] - float(ours[s]["total"])) > 1e-6]
    counts: dict[str, int] = {}
    for kind in kinds.values():
        key = kind.split(":")[0]
        counts[key] = counts.get(key, 0) + 1
    statuses: dict[str, int] = {}
    for row in ours.values():
        statuses[row["status"]] = statuses.get(row["status"], 0) + 1
    plain = statistics.median(plain_seconds)
    shipped = statistics.median(shipped_seconds)
    per = wall / len(kinds)
    floor = floor_cpu / (os.cpu_count() or 1)
    print(f"machine: {os.cpu_count()} cores; cohort: {len(kinds)} submissions "
          + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    print("grader grade statuses: " + ", ".join(f"{n} {k}" for k, n in sorted(statuses.items())))
    print(f"plain otter run (plugin off, {len(sample)} sampled): median {plain:.2f} s per submission  [baseline]")
    print(f"otter run on the shipped zip: median {shipped:.2f} s = {shipped / plain:.2f}x plain otter "
          f"(target <= {SHIPPED_TARGET:.1f}x): {'met' if shipped / plain <= SHIPPED_TARGET else 'NOT met'}")
    print(f"grader grade ({args.workers} workers, {len(kinds)} submissions): {wall:.1f} s wall, {per:.3f} s per "
          f"submission = {plain / per:.1f}x faster than plain otter (target >= {TARGET_RATIO:.0f}x): "
          f"{'met' if plain / per >= TARGET_RATIO else 'NOT met'}; peak memory {peak_mb:.0f} MB "
          f"(limit {MEMORY_LIMIT_MB:.0f} MB)")
    print(f"floor: the hidden suite on the reference in-process takes {floor_cpu:.3f} s of CPU, "
          f"{floor:.3f} s per submission over {os.cpu_count()} cores; grader grade is {per / floor:.1f}x the floor "
          f"(goal <= {FLOOR_TARGET:.0f}x)")
    sandboxed = sandbox_cpu / (os.cpu_count() or 1)
    print(f"sandbox floor: the same suite on the reference through a fresh sandbox worker per submission "
          f"(loading its code, one round trip per call; no intake, diagnosis or files) takes "
          f"{sandbox_cpu:.3f} s of CPU, {sandboxed:.3f} s per submission over {os.cpu_count()} cores = "
          f"{sandboxed / floor:.1f}x the floor; grader grade is {per / sandboxed:.1f}x the sandbox floor")
    print(f"scores agree on the sample: {len(sample) - len(mismatches)}/{len(sample)}"
          + (f"; mismatches: {mismatches}" if mismatches else ""))
    if scaled is not None:
        big_wall, big_peak, report_s = scaled
        big_per = big_wall / args.scale
        print(f"scale: {args.scale} submissions in {big_wall:.1f} s, {big_per:.3f} s per submission = "
              f"{big_per / per:.2f}x the {len(kinds)}-submission class's (target <= {SCALE_TARGET:.2f}x): "
              f"{'met' if big_per / per <= SCALE_TARGET else 'NOT met'}; peak memory {big_peak:.0f} MB "
              f"(limit {MEMORY_LIMIT_MB:.0f} MB): {'met' if big_peak <= MEMORY_LIMIT_MB else 'NOT met'}")
        print(f"grader report on {args.scale} students: {report_s:.2f} s (target < {REPORT_TARGET_S:.0f} s): "
              f"{'met' if report_s < REPORT_TARGET_S else 'NOT met'}")
    if mismatches or peak_mb > MEMORY_LIMIT_MB:
        raise SystemExit(1)


if __name__ == "__main__":
    main()

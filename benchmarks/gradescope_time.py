"""How long one submission takes to grade on a Gradescope-like machine, end to end after the container is up.

Builds the lm-head autograder, sets up the Gradescope-like machine of the tests
(``tests/grading_paths.py``: a fresh virtual environment with only the zip's
requirements, ``/autograder`` a folder of its own, bubblewrap hidden as on
Gradescope's image), then times ``otter run`` of one submission there, several
times each for three kinds of submission: the solution (full marks), one
catalogued mistake (so the diagnosis runs) and the untouched student notebook.

What a timed run includes: starting Python and otter, unpacking the autograder
zip and the submission, the grader's plugin grading it in a fresh sandbox
(fresh-uid level, as without bubblewrap on Gradescope), every hidden test, the
diagnosis, and otter writing ``results.json``. What it leaves out: Gradescope's
own part (starting the container, queueing, uploading the results) and the image
build (``setup.sh``, once per autograder upload); the environment set-up here is
timed apart and printed, not counted.

Needs root (the runs use a private mount namespace, as the tests do) and pip's
access to PyPI for the environment.

    python benchmarks/gradescope_time.py [--repeat 3]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import nbformat  # noqa: E402

from autograder.build import build  # noqa: E402
from autograder.build.spec import load_spec  # noqa: E402
from tests.cohort import with_mistake, write_export_zip  # noqa: E402
from tests.grading_paths import GradescopeLike, machine_tmp  # noqa: E402

#: A run longer than this is stopped and reported: something is wrong, not slow.
RUN_TIMEOUT = 600


def submissions(result, folder: Path) -> dict[str, Path]:
    """The export zips of the solution, one catalogued mistake and the untouched notebook."""
    solution = nbformat.read(result.solution, as_version=4)
    mistake = next(iter(load_spec("lm-head").catalogue().mistakes.values()))
    notebooks = {"solution (full marks)": solution,
                 f"one mistake ({mistake.name})": with_mistake(solution, mistake),
                 "untouched notebook": nbformat.read(result.student, as_version=4)}
    return {kind: write_export_zip(nb, folder / f"s{i}.zip", "lm-head")
            for i, (kind, nb) in enumerate(notebooks.items())}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_run(machine: GradescopeLike, submission: Path, folder: Path) -> tuple[float, float, dict]:
    """Wall time and CPU time (user and system, of every process of the run that was waited for) of
    ``otter run`` on ``submission`` in the machine, and its ``results.json``. On a machine shared with
    other work the wall time grows with the load; the CPU time hardly does."""
    folder.mkdir()
    (folder / "out").mkdir()
    (folder / submission.name).write_bytes(submission.read_bytes())
    cmd = machine.command(folder, submission.name)      # built before the clock starts
    with open(folder / "log.txt", "wb") as log:
        cpu, start = _children_cpu(), time.perf_counter()
        proc = subprocess.run(cmd, cwd=folder, env=machine.env, stdout=log, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, timeout=RUN_TIMEOUT)
        seconds, cpu = time.perf_counter() - start, _children_cpu() - cpu
    results_path = folder / "out" / "results.json"
    if proc.returncode != 0 or not results_path.is_file():
        tail = (folder / "log.txt").read_text(errors="replace")[-3000:]
        raise SystemExit(f"otter run failed (exit {proc.returncode}) on {submission.name}:\n{tail}")
    return seconds, cpu, json.loads(results_path.read_text(encoding="utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs of each submission (default 3)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        raise SystemExit("run as root: the Gradescope-like runs use a private mount namespace (unshare --mount)")

    with tempfile.TemporaryDirectory(prefix="gradescope-time-") as tmp:
        lab = Path(tmp)
        lab.chmod(0o700)
        (result,) = build(["lm-head"], lab / "dist", None, verify=False)
        subs = submissions(result, lab)
        (lab / "machine-tmp").mkdir()
        start = time.perf_counter()
        machine = GradescopeLike(result.autograder_zip, lab / "dist", lab / "gradescope", lab,
                                 machine_tmp(lab / "machine-tmp"))
        setup = time.perf_counter() - start
        print(f"environment set-up (fresh venv, pip install of the zip's requirements; not counted): {setup:.1f} s")
        print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} at the start", flush=True)
        print("one submission, `otter run` on the Gradescope-like machine, wall time (CPU time):", flush=True)
        every, every_cpu = [], []
        for n, (kind, path) in enumerate(subs.items()):
            runs, score, isolation = [], None, None
            for r in range(args.repeat):
                seconds, cpu, results = timed_run(machine, path, lab / f"run-{n}-{r}")
                runs.append((seconds, cpu))
                score, isolation = results.get("score"), results.get("extra_data", {}).get("isolation")
            every += [t for t, _ in runs]
            every_cpu += [c for _, c in runs]
            print(f"  {kind:<40} score {score:>5} ({isolation})  "
                  + "  ".join(f"{t:4.1f} s ({c:4.1f})" for t, c in runs)
                  + f"  median {statistics.median(t for t, _ in runs):.1f} s", flush=True)
        print(f"all {len(every)} runs: wall median {statistics.median(every):.1f} s, from {min(every):.1f} to "
              f"{max(every):.1f} s; CPU median {statistics.median(every_cpu):.1f} s; "
              f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()

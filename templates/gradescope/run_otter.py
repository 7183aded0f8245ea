"""Grades one submission on Gradescope: the grader first makes the submitted notebook
one otter can read (otter parses it before any plugin runs), then otter grades."""
from otter.run.run_autograder import main as run_autograder

try:
    from autograder.runtime.otter_plugin import prepare_submission
except ImportError:     # the grading runtime failed to install: otter's plugin loader will say so
    prepare_submission = None


if __name__ == "__main__":
    if prepare_submission is not None:
        prepare_submission("/autograder/submission")
    run_autograder("/autograder")

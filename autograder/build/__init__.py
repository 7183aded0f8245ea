"""``grader build``: render assignments into notebooks and a verified autograder zip.

The pipeline, in order: load and validate the course config (``config``),
load each assignment's spec (``spec``), render the otter master notebook
(``master``), run otter's assign step (``otter_assign``), verify the result
with ``otter run`` (``verify``), and only then publish it (``pipeline``).
"""
from autograder.build.pipeline import BuildResult, build

__all__ = ["BuildResult", "build"]

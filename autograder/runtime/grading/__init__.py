"""Trusted grading: read a submission safely, run it in the sandbox, judge it
from outside, and write Gradescope-format results."""

"""LM-head grader: build, grade and diagnose the language-modelling-head unit."""

__version__ = "0.1.0"

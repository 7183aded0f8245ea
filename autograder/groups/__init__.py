"""Mistake groups: a class's wrong results grouped by what they do, so that an instructor reads one
representative per group and writes one note its members all receive.

Read from the grading records only (``OUT/students/<student>/outcome.json``), like the report and
``similarity``: ``membership`` says which groups one record is in (a function of that record
alone, so a late submission or a regrade with the same behaviour lands in the same group),
``class_groups`` gathers the class's groups, ``function_code`` cuts a function's code out of a
submission, ``notes`` carries the instructor's notes to the members' files, ``groups_csv`` and
``section`` are the instructor's two views.
"""

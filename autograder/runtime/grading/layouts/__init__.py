"""One small reader per LMS layout: who handed in each file, as the LMS's own names say.

- ``canvas``: the flat file names of Canvas's "Download Submissions";
- ``moodle``: the per-participant folders (3.x and 4.1+) and the flat names of
  Moodle's "Download all submissions";
- ``gradescope``: the ``submission_metadata.yml`` of Gradescope's "Export Submissions";
- ``handed_in``: what a handed-in file is (a notebook, a PDF, a text entry ...)
  and what the student and the instructor are told when it cannot be graded;
- ``downloads``: an LMS download zip, or a folder holding a whole class, told
  apart from one student's submission.
"""

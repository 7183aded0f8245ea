"""Grades back into the LMS: one writer per LMS file, named here for the grading loop.

- ``canvas_gradebook``: a filled copy of the instructor's Canvas gradebook export.
- ``gradebook.write_canvas_gradebook``: ``gradebook_canvas.csv``, Canvas's import layout,
  when there is no export to fill.
- ``moodle_worksheet``: Moodle's "Import grades from CSV" file and the offline grading worksheet.
"""
from __future__ import annotations

from autograder.runtime.grading.canvas_gradebook import (CANVAS_KEYS, CanvasExport, CanvasFill, LmsFileError,
                                                         fill_canvas_gradebook, match_canvas_rows,
                                                         read_canvas_export, with_canvas_identity)
from autograder.runtime.grading.moodle_worksheet import (MOODLE_IMPORT_NAME, MOODLE_WORKSHEET_NAME, MoodleFiles,
                                                         write_moodle_files)

__all__ = ["CANVAS_KEYS", "CanvasExport", "CanvasFill", "LmsFileError", "MOODLE_IMPORT_NAME",
           "MOODLE_WORKSHEET_NAME", "MoodleFiles", "fill_canvas_gradebook", "match_canvas_rows",
           "read_canvas_export", "with_canvas_identity", "write_moodle_files"]

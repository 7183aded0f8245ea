"""The real-code blind corpora (``tests/blind/r1`` to ``r3``: real implementations adapted from public
repositories, with provenance): correct code keeps full marks and every mistake caught at the
corpus's first grading stays caught. A file of its own so the test workers grade it beside the other
corpora instead of after them."""
from __future__ import annotations

import pytest

from tests.test_blind_corpora import ASSIGNMENTS, REAL_CODE, held_to_its_first_grading, zips  # noqa: F401


@pytest.mark.slow
@pytest.mark.parametrize("corpus", REAL_CODE)
@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_real_code_keeps_full_marks_and_caught_mistakes_stay_caught(zips, corpus, assignment, tmp_path):  # noqa: F811
    held_to_its_first_grading(zips, corpus, assignment, tmp_path)

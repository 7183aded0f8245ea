"""Half 2 of the families through `grader questions stress -n 1000` (see ``tests/full_stress.py``)."""
import pytest

from tests.full_stress import check_half


@pytest.mark.slow
def test_the_full_stress_command_passes_half_2_of_the_families():
    check_half(2)

"""The otter plugin's own decisions, without running otter: whose submission it is, and
what otter is left to read (otter parses the notebook and starts the kernel its
metadata names before any plugin can act)."""
from __future__ import annotations

import json

import nbformat
import pytest

from autograder.runtime.grading.intake import Rejected, parse_notebook
from autograder.runtime.otter_plugin import (_unreadable_mark, _zips_in_argv, given_autograder_zips,
                                             prepare_submission, student_id)


def _notebook(**metadata) -> dict:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("def softmax(z):\n    return z\n")])
    data = json.loads(nbformat.writes(nb))
    data["metadata"] = metadata
    return data


@pytest.mark.parametrize("metadata, want", [
    ({"users": [{"name": "A", "email": "alice@uni.edu", "sid": "S1"}], "id": 7}, "S1"),
    ({"users": [{"name": "A", "email": "alice@uni.edu", "sid": ""}], "id": 7}, "alice@uni.edu"),
    ({"users": [], "id": 7}, "7"),
    ({}, "alice"),
])
def test_the_student_id_is_the_sid_then_the_full_email_then_the_submission(metadata, want):
    assert student_id(metadata, ["run", "-a", "dist/autograder.zip", "-o", "out", "subs/alice.zip"]) == want


def test_under_otter_run_the_autograder_zip_is_not_mistaken_for_the_submission():
    assert student_id({}, ["run", "subs/bob.ipynb", "-a", "autograder.zip"]) == "bob"
    assert student_id({}, ["run"]) == "submission"


def test_the_zip_otter_run_was_given_is_found_from_inside_its_process(tmp_path, monkeypatch):
    """``otter.run.main``'s ``autograder`` argument, relative to the folder otter started in (it has
    left it for its own by the time the plugin runs); a path that cannot be found is reported."""
    import contextlib
    import os
    import sys
    import types
    start, elsewhere = tmp_path / "start", tmp_path / "otter-folder"
    (start / "dist").mkdir(parents=True)
    elsewhere.mkdir()
    zip_path = start / "dist" / "ag.zip"
    zip_path.write_bytes(b"PK")

    @contextlib.contextmanager
    def chdir(new_dir):          # otter.utils.chdir, as otter 7 writes it
        curr_dir = os.getcwd()
        os.chdir(new_dir)
        try:
            yield
        finally:
            os.chdir(curr_dir)

    def main(submission, *, autograder="./autograder.zip"):   # otter.run.main's signature
        with chdir(elsewhere):
            return given_autograder_zips()

    monkeypatch.setitem(sys.modules, "otter.run", types.SimpleNamespace(main=main))
    monkeypatch.setitem(sys.modules, "otter.utils", types.SimpleNamespace(chdir=chdir))
    monkeypatch.setattr(sys, "argv", ["otter", "run", "sub.zip"])
    monkeypatch.delenv("PWD", raising=False)
    monkeypatch.chdir(start)
    assert main("sub.zip", autograder="dist/ag.zip") == ([zip_path], [])
    assert main("sub.zip", autograder=str(zip_path)) == ([zip_path], [])
    assert main("sub.zip", autograder="dist/other.zip") == ([], ["dist/other.zip"])
    assert main("sub.zip") == ([], ["./autograder.zip"])
    assert given_autograder_zips() == ([], [])        # not under otter run: nothing given


def test_the_zip_is_read_from_an_otter_run_command_line():
    assert _zips_in_argv(["run", "-a", "a.zip", "-o", "out", "s.zip"]) == ["a.zip"]
    assert _zips_in_argv(["run", "--autograder=b.zip", "s.zip"]) == ["b.zip"]
    assert _zips_in_argv(["run", "-ac.zip", "s.zip"]) == ["c.zip"]
    assert _zips_in_argv(["assign", "-a", "a.zip"]) == []


def test_odd_notebook_metadata_is_dropped_not_refused():
    for metadata in ({"kernelspec": "evil"}, {"kernelspec": {"name": "nope"}, "language_info": 3}, {"x": [1]}):
        nb = parse_notebook(json.dumps(_notebook(**metadata)).encode(), "lm-head.ipynb")
        assert nb.cells[0].source.startswith("def softmax") and "kernelspec" not in nb.metadata
    kept = parse_notebook(json.dumps(_notebook(otter={"assignment_name": "lm-head"})).encode(), "lm-head.ipynb")
    assert kept.metadata["otter"]["assignment_name"] == "lm-head"


def test_prepare_submission_leaves_otter_notebooks_it_can_read(tmp_path):
    good = tmp_path / "a" / "lm-head.ipynb"
    bomb = tmp_path / "b" / "lm-head.ipynb"
    good.parent.mkdir()
    bomb.parent.mkdir()
    good.write_text(json.dumps(_notebook(kernelspec="evil", otter={"assignment_name": "lm-head"})))
    text = json.dumps(_notebook())
    bomb.write_text(text.replace('"metadata": {}', '"metadata": {"deep": ' + "[" * 100_000 + "]" * 100_000 + "}", 1))
    with pytest.raises(Rejected):
        parse_notebook(bomb.read_bytes(), "lm-head.ipynb")
    for folder in (good.parent, bomb.parent):
        prepare_submission(folder)
    # What otter does first: read and validate with nbformat.
    read_good = nbformat.read(good, as_version=nbformat.NO_CONVERT)
    read_bomb = nbformat.read(bomb, as_version=nbformat.NO_CONVERT)
    assert read_good.metadata["kernelspec"]["name"] == "python3"
    assert read_good.cells[0].source.startswith("def softmax") and _unreadable_mark(read_good) == ""
    assert read_bomb.metadata["kernelspec"]["name"] == "python3"
    assert "nested too deeply" in _unreadable_mark(read_bomb)


def test_only_an_editable_install_counts_as_a_checkout_of_references(monkeypatch):
    """`pip install .` records its source folder as a file URL too, but grades from its own copy: the
    probe must not refuse a machine over a folder the running grader never reads (it did, in CI-like
    venvs), while an editable install's checkout is guarded."""
    import json
    from autograder.runtime.sandbox import policy

    class Dist:
        def __init__(self, info):
            self.info = info

        def read_text(self, name):
            return json.dumps(self.info) if name == "direct_url.json" else None

    for info, expected in (({"url": "file:///src/grader", "dir_info": {"editable": True}}, "/src/grader"),
                           ({"url": "file:///src/grader", "dir_info": {}}, None),
                           ({"url": "https://example.invalid/x.whl", "archive_info": {}}, None)):
        monkeypatch.setattr(policy.importlib.metadata, "distribution", lambda name, info=info: Dist(info))
        found = policy.editable_checkout()
        assert (str(found) if found else None) == expected, info

"""Mistake groups end to end: does a class built from known mistakes (three students per mistake,
each written in another style, and a few unnamed singles) group exactly by mistake? Are the ids the
same on a rerun? Does a note reach every member's feedback, results.json and gradebook row, and no
one else, a late submission with the same behaviour included? Does student code stay inert on the
report page?"""
from __future__ import annotations

import csv
import io
import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from autograder.build import build
from autograder.cli import main
from autograder.groups.class_groups import class_groups
from autograder.groups.run import run_groups
from autograder.report import build_report
from autograder.runtime.class_probes import output_digest
from autograder.runtime.grading.bulk import grade_batch
from autograder.runtime.grading.gradebook import FORMULA_STARTS
from autograder.runtime.grading.outcome import read_record, record_folders

BASELINE = Path(__file__).parent / "blind" / "a" / "lm-head" / "baseline.py"
RIGHT_HEAD = "def lm_head(hidden, W_head, b_head):\n    return hidden @ W_head + b_head\n"

#: Each mistake of lm_head in three styles: the cause is the key, the code differs.
MISTAKES: dict[str, tuple[str, ...]] = {
    "no_bias": (  # named by the catalogue
        "def lm_head(hidden, W_head, b_head):\n    return hidden @ W_head\n",
        "def lm_head(hidden, W_head, b_head):\n    # logits\n    out = np.matmul(hidden, W_head)\n    return out\n",
        "def lm_head(h, W, b):\n    return np.einsum('btc,cv->btv', h, W)\n",
    ),
    "float32_out": (
        "def lm_head(hidden, W_head, b_head):\n    return (hidden @ W_head + b_head).astype(np.float32)\n",
        "def lm_head(hidden, W_head, b_head):\n    # </pre><script>alert('x')</script> |=1+1\n"
        "    logits = np.matmul(hidden, W_head) + b_head\n    return np.asarray(logits, dtype=np.float32)\n",
        "def lm_head(hidden, W_head, b_head):\n    return np.float32(hidden @ W_head) + np.float32(b_head)\n",
    ),
    "notebook_BT": (
        "def lm_head(hidden, W_head, b_head):\n    out = hidden.reshape(-1, hidden.shape[-1]) @ W_head + b_head\n"
        "    return out.reshape(B, T, -1)\n",
        "def lm_head(hidden, W_head, b_head):\n    flat = hidden.reshape(B * T, -1)\n"
        "    return (flat @ W_head + b_head).reshape(B, T, W_head.shape[1])\n",
        "def lm_head(hidden, W_head, b_head):\n    x = hidden.reshape(-1, C)\n    y = x @ W_head\n"
        "    y = y + b_head\n    return y.reshape(4, 8, -1)\n",
    ),
}
#: Unnamed mistakes made once each: groups of one.
SINGLES: dict[str, str] = {
    "transposed": "def lm_head(hidden, W_head, b_head):\n    return hidden @ W_head.T + b_head\n",
    "doubled_bias": "def lm_head(hidden, W_head, b_head):\n    return hidden @ W_head + 2 * b_head\n",
}
RIGHT_RESTORE = "        x[idx] = old\n"
#: numerical_gradient putting each nudged entry back by arithmetic (x off by round-off), in two
#: styles: its gradient is right, so only the input it changed tells it on the probes.
ARITH_RESTORE: tuple[str, ...] = ("        x[idx] = old + eps - eps\n", "        x[idx] += eps\n")
CORRECT: tuple[str, ...] = (
    RIGHT_HEAD,
    "def lm_head(hidden, W_head, b_head):\n    return np.einsum('btc,cv->btv', hidden, W_head) + b_head[None, None, :]\n",
)


def _with_head(source: str) -> str:
    text = BASELINE.read_text(encoding="utf-8")
    assert RIGHT_HEAD in text
    return text.replace(RIGHT_HEAD, source)


def _write_class(folder: Path) -> dict[str, str]:
    """The class's files, and each student's cause ('' for a correct one)."""
    folder.mkdir(parents=True, exist_ok=True)
    cause = {}
    for name, styles in MISTAKES.items():
        for number, source in enumerate(styles, start=1):
            (folder / f"{name}_{number}.py").write_text(_with_head(source), encoding="utf-8")
            cause[f"{name}_{number}"] = name
    for name, source in SINGLES.items():
        (folder / f"{name}.py").write_text(_with_head(source), encoding="utf-8")
        cause[name] = name
    text = BASELINE.read_text(encoding="utf-8")
    assert RIGHT_RESTORE in text
    for number, restore in enumerate(ARITH_RESTORE, start=1):
        (folder / f"arith_restore_{number}.py").write_text(text.replace(RIGHT_RESTORE, restore), encoding="utf-8")
        cause[f"arith_restore_{number}"] = "arith_restore"
    for number, source in enumerate(CORRECT, start=1):
        (folder / f"correct_{number}.py").write_text(_with_head(source), encoding="utf-8")
        cause[f"correct_{number}"] = ""
    return cause


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("groups")
    zip_path = build(["lm-head"], root / "dist", None, verify=False)[0].autograder_zip
    cause = _write_class(root / "class")
    grade_batch([root / "class"], zip_path, root / "out", timeout=60)
    return root, zip_path, cause


def _records(out: Path):
    return [read_record(f) for f in record_folders(out)]


def _head_groups(out: Path) -> dict[str, set[str]]:
    return {g.id: {r.entry.student for r in g.members} for g in class_groups(_records(out)).groups
            if g.unit == "lm_head"}


def test_each_mistake_forms_one_group_whatever_the_style_and_singles_stay_alone(graded):
    root, _, cause = graded
    groups = _head_groups(root / "out")
    expected = {frozenset(s for s, c in cause.items() if c == name) for name in [*MISTAKES, *SINGLES]}
    assert {frozenset(m) for m in groups.values()} == expected


def test_no_group_mixes_two_causes_and_no_correct_submission_is_in_one(graded):
    root, _, cause = graded
    found = class_groups(_records(root / "out"))
    assert found.groups
    for g in found.groups:
        students = {r.entry.student for r in g.members}
        assert all(cause[s] for s in students), f"a correct submission is in {g.id}"
        if g.unit == "lm_head":
            assert len({cause[s] for s in students}) == 1, g.id
    named = {g.id: g.named for g in found.groups if g.unit == "lm_head"}
    by_cause = {cause[g.members[0].entry.student]: g for g in found.groups if g.unit == "lm_head"}
    assert named[by_cause["no_bias"].id] and not named[by_cause["float32_out"].id]
    # Unnamed groups come first within a function, the largest of them first.
    head = [g for g in found.groups if g.unit == "lm_head"]
    assert [g.named for g in head] == sorted(g.named for g in head)
    assert head[0].size == 3


def test_a_function_that_changes_its_input_is_grouped_by_what_it_does_to_it(graded):
    """numerical_gradient returning the right gradient but leaving x off by round-off: the probes
    see the changed input, so the group is numerical_gradient's (not of the question's functions
    together) and holds both styles, whatever tests each student's own inputs tripped."""
    root, _, cause = graded
    found = [g for g in class_groups(_records(root / "out")).groups
             if any(cause[r.entry.student] == "arith_restore" for r in g.members)]
    assert [(g.unit, sorted(r.entry.student for r in g.members)) for g in found] == [
        ("numerical_gradient", ["arith_restore_1", "arith_restore_2"])]


def test_ids_are_the_same_when_the_class_is_graded_again(graded, tmp_path):
    root, zip_path, _ = graded
    grade_batch([root / "class"], zip_path, tmp_path / "again", timeout=60)
    assert _head_groups(tmp_path / "again") == _head_groups(root / "out")
    assert {g.id for g in class_groups(_records(tmp_path / "again")).groups} == \
        {g.id for g in class_groups(_records(root / "out")).groups}


def test_a_note_reaches_every_member_everywhere_and_no_one_else_a_late_submission_included(graded, tmp_path):
    root, zip_path, cause = graded
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    groups = _head_groups(out)
    target = next(gid for gid, members in groups.items() if members == {"float32_out_1", "float32_out_2", "float32_out_3"})
    note = "Your logits are **float32**: keep the dtype of `hidden @ W_head`."
    result = run_groups(out, None, {target: note, "lm_head-0000000000000000": "nobody"})
    assert set(result.notes.changed) == {"float32_out_1", "float32_out_2", "float32_out_3"}
    assert result.notes.unused == ("lm_head-0000000000000000",)
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as handle:
        book = {row["student"]: row for row in csv.DictReader(handle)}
    for student in cause:
        folder = out / "students" / student
        member = cause[student] == "float32_out"
        assert (note in (folder / "feedback.md").read_text(encoding="utf-8")) is member, student
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
        assert (note in results["output"]) is member, student
        assert (target in book[student]["note"]) is member, student
    # A late submission that does the same thing, graded into the same folder with the notes.
    late = tmp_path / "late"
    late.mkdir()
    (late / "latecomer.py").write_text(_with_head(
        "def lm_head(hidden, W_head, b_head):\n    z = hidden @ W_head\n    z += b_head\n"
        "    return z.astype('float32')\n"), encoding="utf-8")
    grade_batch([late], zip_path, out, timeout=60, notes={target: note})
    assert note in (out / "students" / "latecomer" / "feedback.md").read_text(encoding="utf-8")
    assert _head_groups(out)[target] == {"float32_out_1", "float32_out_2", "float32_out_3", "latecomer"}


def test_groups_csv_and_the_report_keep_student_code_inert(graded, tmp_path):
    root, _, _ = graded
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    csv_path = run_groups(out).csv_path
    with open(csv_path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert all(not row[c].startswith(("=", "+", "-", "@")) for row in rows for c in row if c not in ("size",))
    code = "\n".join(row["representative_code"] + row["second_code"] for row in rows)
    assert "astype(np.float32)" in code or "np.float32(" in code
    page = build_report(out)
    assert 'id="groups"' in page
    assert "<script>alert" not in page and "&lt;/pre&gt;&lt;script&gt;alert" in page


#: Round 9: a wrong lm_head carrying live HTML and a formula in its docstring and a comment, handed in
#: by three students whose file names are formulas (a group of its own); cleaning ids keeps a leading
#: ``@`` or ``-``, so two of the ids are formulas too unless the CSV writers neutralise them.
MARKUP_HEAD = ('def lm_head(hidden, W_head, b_head):\n'
               '    """</pre></td><script>alert(1)</script><img src=x onerror=alert(2)> '
               '=HYPERLINK("http://127.0.0.1/x","y")"""\n'
               '    return hidden @ W_head - b_head  # </code><script>alert(3)</script>\n')
FORMULA_NAMES = ("=cmd|' -C calc'!A0", "@SUM(1+1)", "-2+3+evil2")


class _LiveHTML(HTMLParser):
    """Event handlers, and scripts or images that came from a submission (the page's own scripts
    never call alert), in an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self._in_script = tag == "script"
        self.found += [f"<{tag} {name}>" for name, _ in attrs if name.startswith("on")]
        if tag == "img" and ("src", "x") in attrs:
            self.found.append("<img src=x>")

    def handle_data(self, data):
        if self._in_script and "alert(" in data:
            self.found.append("<script>alert")


def _formula_cells(text: str) -> list[str]:
    return [c for row in csv.reader(io.StringIO(text)) for c in row
            if c.startswith(FORMULA_STARTS) and not re.fullmatch(r"[-+]?[\d.]+(e[-+]?\d+)?", c)]


def test_markup_and_formulas_in_code_and_file_names_stay_inert_through_grade_groups_notes_and_report(graded, tmp_path):
    """Round 9 (groups_markup): `grader grade` of three late files named as formulas whose wrong code
    carries <script>, <img onerror> and =HYPERLINK, then `grader groups`, `grader groups --notes`
    for their group and `grader report`: every CSV text cell is neutralised, the report shows the
    code as text, and the note reaches every member's feedback as the instructor's text only."""
    root, zip_path, cause = graded
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    late = tmp_path / "late"
    late.mkdir()
    for number, name in enumerate(FORMULA_NAMES):
        (late / f"{name}.py").write_text(_with_head(MARKUP_HEAD.replace("alert(1)", f"alert({1 + 8 * number})")),
                                         encoding="utf-8")
    runner = CliRunner()
    graded_late = runner.invoke(main, ["grade", str(late), "-a", str(zip_path), "-o", str(out), "--timeout", "60"])
    assert graded_late.exit_code in (0, 1), graded_late.output
    listed = runner.invoke(main, ["groups", str(out)])
    assert listed.exit_code == 0, listed.output
    groups_csv = (out / "groups.csv").read_text(encoding="utf-8")
    assert "onerror=alert(2)" in groups_csv
    members = {folder.name for folder in (out / "students").iterdir()} - set(cause)
    assert len(members) == 3 and any(m.startswith(FORMULA_STARTS) for m in members), members
    target = next((g for g, m in _head_groups(out).items() if m == members), None)
    assert target, f"the three late files should form a group of their own: {_head_groups(out)}"
    (tmp_path / "notes.yaml").write_text(f'"{target}": "Look at the sign of the bias."\n', encoding="utf-8")
    noted = runner.invoke(main, ["groups", str(out), "--notes", str(tmp_path / "notes.yaml")])
    assert noted.exit_code == 0, noted.output
    reported = runner.invoke(main, ["report", str(out)])
    assert reported.exit_code == 0, reported.output

    for table in sorted(out.glob("*.csv")):
        bad = _formula_cells(table.read_text(encoding="utf-8"))
        assert not bad, f"{table.name} holds cells a spreadsheet would evaluate: {bad[:5]}"
    page = (out / "report.html").read_text(encoding="utf-8")
    live = _LiveHTML()
    live.feed(page)
    assert not live.found, f"report.html renders the submission's markup: {live.found[:5]}"
    assert "&lt;img src=x onerror=alert(2)&gt;" in page, "the report should show the group's code, as text"
    for student in members:
        feedback = (out / "students" / student / "feedback.md").read_text(encoding="utf-8")
        assert "Look at the sign of the bias." in feedback, student
        assert "<script>" not in feedback and "onerror=" not in feedback, student


def test_a_digest_ignores_round_off_and_tells_different_results_apart():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8, 24))
    assert output_digest(x) == output_digest(x * (1 + 1e-13))
    assert output_digest((x, 3.0)) == output_digest([x, np.float64(3.0)])
    assert output_digest(np.float64(2.5)) == output_digest(np.array(2.5))
    assert output_digest(x) != output_digest(x * 2)
    assert output_digest(x) != output_digest(x.astype(np.float32))
    assert output_digest(x) != output_digest(np.swapaxes(x, 0, 1).copy().reshape(x.shape))
    assert output_digest(np.zeros(5)) == output_digest(np.full(5, 1e-17))


def test_a_result_of_many_parts_is_digested_by_its_first_parts_and_its_length():
    """A submission returning tens of thousands of arrays on a probe call costs the grader the digest
    of a few of them, not of each; the count of the rest still tells it from a shorter result."""
    from autograder.runtime.class_probes import MAX_PARTS
    many = [np.full(4, float(i)) for i in range(MAX_PARTS + 1000)]
    digest = output_digest(many)
    assert digest.endswith("+1000)") and digest.count("a(4,)") == MAX_PARTS
    assert digest == output_digest(many[:MAX_PARTS] + [np.zeros(2)] * 1000)
    assert digest != output_digest(many[:MAX_PARTS + 999])
    keyed = {f"k{i}": float(i) for i in range(MAX_PARTS + 5)}
    assert output_digest(keyed).endswith("+5}")


#: Reads each group article of the page: where its id, code blocks and note sit, and whether a code
#: block's text is wider than the block (it then scrolls inside it, never the page).
GROUPS_LAYOUT_SCRIPT = """() => {
  const rect = e => { const r = e.getBoundingClientRect(); return {left: r.left, right: r.right, top: r.top, width: r.width}; };
  return Array.from(document.querySelectorAll('article.mistake-group')).map(a => ({
    id: a.id,
    heading: rect(a.querySelector('h4 code')),
    headingText: a.querySelector('h4 code').textContent,
    figures: Array.from(a.querySelectorAll('.pair figure')).map(rect),
    codes: Array.from(a.querySelectorAll('.pair pre.code')).map(p => ({
      box: rect(p), scrolls: ['auto', 'scroll'].includes(getComputedStyle(p).overflowX),
      fontPx: parseFloat(getComputedStyle(p).fontSize), text: p.textContent})),
    note: a.querySelector('.group-note') && {
      strong: Array.from(a.querySelectorAll('.group-note strong')).map(s => s.textContent),
      items: a.querySelectorAll('.group-note li').length,
      code: Array.from(a.querySelectorAll('.group-note code')).map(c => c.textContent),
      text: a.querySelector('.group-note').textContent,
      links: Array.from(a.querySelectorAll('.group-note a')).map(l => l.getAttribute('href'))},
  }));
}"""


def test_the_groups_section_reads_at_1280_pixels_in_headless_chromium(graded, tmp_path):
    """The groups as an instructor reads them on a laptop: the page does not scroll sideways, each
    group's id is on screen, the representative's code stands beside the second member's in a
    readable size (a long line scrolls inside its block), the note is rendered from the
    instructor's Markdown (raw HTML in it stays text) and the student's code stays text."""
    from tests.browser import LAPTOP_WIDTH, opened

    root, _, _ = graded
    out = tmp_path / "out"
    shutil.copytree(root / "out", out)
    target = next(gid for gid, members in _head_groups(out).items() if "float32_out_2" in members)
    note = ("Your logits are **float32**:\n\n- keep the dtype of `hidden @ W_head`\n- do not cast\n\n"
            "<b>raw</b> [see](javascript:alert(1))")
    run_groups(out, None, {target: note})
    page_path = tmp_path / "report.html"
    page_path.write_text(build_report(out), encoding="utf-8")
    with opened(page_path, LAPTOP_WIDTH) as (page, errors):
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        articles = page.evaluate(GROUPS_LAYOUT_SCRIPT)
        scripts = page.evaluate("Array.from(document.scripts).map(s => s.textContent)")
    assert errors == []
    assert overflow <= 0, f"the page is {overflow} px wider than the screen"
    assert len(articles) == len(class_groups(_records(out)).groups)
    for article in articles:
        assert article["id"] == f"group-{article['headingText']}"
        assert 0 <= article["heading"]["left"] and article["heading"]["right"] <= LAPTOP_WIDTH, article["id"]
        codes, figures = article["codes"], article["figures"]
        assert all(c["fontPx"] >= 11 and c["scrolls"] and c["box"]["right"] <= LAPTOP_WIDTH for c in codes), codes
        if len(figures) == 2:
            first, second = figures
            assert first["top"] == second["top"] and first["right"] <= second["left"], article["id"]
            assert min(first["width"], second["width"]) >= 400, "the code blocks are squeezed"
    noted = next(a for a in articles if a["id"] == f"group-{target}")
    assert noted["note"]["strong"] == ["float32"] and noted["note"]["items"] == 2
    assert noted["note"]["code"] == ["hidden @ W_head"]
    assert "<b>raw</b>" in noted["note"]["text"] and noted["note"]["links"] == []
    assert all(a["note"] is None for a in articles if a is not noted)
    attack = next(c["text"] for a in articles for c in a["codes"] if "alert('x')" in c["text"])
    assert "</pre><script>alert('x')</script>" in attack
    assert not any("alert" in s for s in scripts)


def _worksheet_comments(out: Path) -> dict[str, str]:
    """Participant -> "Feedback comments" of the worksheet written, read as Moodle's importer
    finds the column (by its title), or {} when there is none."""
    text = (out / "gradebook_moodle_worksheet.csv").read_text(encoding="utf-8-sig")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if "Feedback comments" not in rows[0]:
        return {}
    at, ident = rows[0].index("Feedback comments"), rows[0].index("Identifier")
    return {row[ident]: row[at] for row in rows[1:]}


def test_a_note_reaches_moodles_feedback_comments_keeping_what_moodle_holds_a_late_member_included(graded, tmp_path):
    """Graded from Moodle's download with its worksheet: the group's members get the note in the
    worksheet's "Feedback comments" (as HTML, after the comment a TA already wrote), every other
    row keeps the comment Moodle holds (an empty cell would erase it on import); a member who
    hands in late, graded into the same folder with the worksheet downloaded again, gets the note,
    and no earlier member gets it twice."""
    from tests import lms_formats as F

    root, zip_path, _ = graded
    target = next(gid for gid, m in _head_groups(root / "out").items() if "float32_out_1" in m)
    note = "Your logits are **float32**: keep the dtype of `hidden @ W_head`."
    code = {name: _with_head(MISTAKES["float32_out"][i]) for i, name in enumerate(("lovelace", "turing", "obrien"))}
    code["hopper"] = _with_head(CORRECT[1])
    r = F.roster()
    when = F.datetime(2026, 11, 30, 21, 4)

    def class_files(names):
        return F.moodle_download([F.MoodleSubmission(r[n], files={"lm-head.py": code[n].encode()}) for n in names])

    def worksheet(feedback):
        return F.moodle_grading_worksheet([F.WorksheetRow(r[n], submitted_at=when, feedback=feedback.get(n, ""))
                                          for n in ("lovelace", "turing", "hopper", "obrien")], 20.0)

    held = {"turing": "Late by a day, accepted.", "hopper": "<p>Very clean, well done.</p>"}
    (tmp_path / "sheet1.csv").write_bytes(worksheet(held))
    F.write_tree(tmp_path / "download1", class_files(["lovelace", "turing", "hopper"]))
    out = tmp_path / "out"
    grade_batch([tmp_path / "download1"], zip_path, out, timeout=60, notes={target: note},
                moodle_worksheet=tmp_path / "sheet1.csv")
    first = _worksheet_comments(out)
    number = {n: f"Participant {r[n].moodle_uniqueid}" for n in r}
    assert set(first) == {number["lovelace"], number["turing"], number["hopper"]}
    assert first[number["hopper"]] == held["hopper"]
    assert first[number["turing"]].startswith(held["turing"] + "\n")
    for name in ("lovelace", "turing"):
        assert target in first[number[name]] and "<strong>float32</strong>" in first[number[name]]
        assert "<code>hidden @ W_head</code>" in first[number[name]]

    # Moodle imported it; O'Brien hands in late; the worksheet downloaded again holds the comments.
    held_now = {"lovelace": first[number["lovelace"]], "turing": first[number["turing"]], "hopper": held["hopper"]}
    (tmp_path / "sheet2.csv").write_bytes(worksheet(held_now))
    F.write_tree(tmp_path / "download2", class_files(["lovelace", "turing", "hopper", "obrien"]))
    grade_batch([tmp_path / "download2"], zip_path, out, timeout=60, notes={target: note},
                moodle_worksheet=tmp_path / "sheet2.csv")
    second = _worksheet_comments(out)
    assert second[number["lovelace"]] == held_now["lovelace"] and second[number["turing"]] == held_now["turing"]
    assert second[number["hopper"]] == held["hopper"]
    assert target in second[number["obrien"]] and "<strong>float32</strong>" in second[number["obrien"]]
    assert second[number["obrien"]].count(target) == 1

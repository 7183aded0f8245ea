"""Class folders and files exactly as Canvas, Moodle and Gradescope hand them to an instructor.

Every writer follows the LMS's own code (or, for Gradescope, whose code is not
public, the exports that public repositories parse); each docstring names the
repository, the file and the function it follows. Notebook contents are
parameters: tests pass real notebooks, and ``DEFAULT_NOTEBOOK`` is a tiny valid
one for checking the writers themselves.

The writers return ``{path inside the download: bytes}``; ``write_tree``,
``write_zip`` and ``unzip_like`` turn that into what the instructor has on disk:
the zip as downloaded, or the folder macOS's Archive Utility or Windows's
"Extract All" makes of it.
"""
from __future__ import annotations

import csv
import io
import json
import re
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Sequence

#: A tiny valid notebook (nbformat 4.5) of the assignment ``lm-head``.
DEFAULT_NOTEBOOK: bytes = json.dumps({
    "cells": [{"cell_type": "code", "execution_count": None, "id": "a1b2c3d4", "metadata": {},
               "outputs": [], "source": ["x = 1"]}],
    "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                 "language_info": {"name": "python"}, "otter": {"assignment_name": "lm-head"}},
    "nbformat": 4, "nbformat_minor": 5}, indent=1).encode("utf-8")

#: A minimal PDF (what a student's "File > Download as PDF" would add to a submission).
DEFAULT_PDF: bytes = (b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
                      b"2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n")

Files = dict[str, bytes]


@dataclass
class Person:
    """One student as each LMS knows them.

    ``canvas_id`` is Canvas's ``users.id``; ``sis_user_id``/``login_id`` are the
    pseudonym's ``sis_user_id``/``unique_id``; ``moodle_uniqueid`` is Moodle's
    ``assign_user_mapping`` id (the "Participant N" number); ``sid`` is what the
    student typed as SID in Gradescope.
    """

    first: str
    last: str
    canvas_id: int = 0
    sis_user_id: str = ""
    login_id: str = ""
    integration_id: str = ""
    email: str = ""
    sid: str = ""
    moodle_uniqueid: int = 0
    section: str = "Section 1"

    @property
    def name(self) -> str:
        """Canvas ``users.name`` and Moodle's default ``fullname()``: "First Last"."""
        return f"{self.first} {self.last}"

    @property
    def sortable_name(self) -> str:
        """Canvas ``users.sortable_name``: "Last, First"."""
        return f"{self.last}, {self.first}"


# --------------------------------------------------------------------------- materializing


def write_tree(root: Path, files: Mapping[str, bytes]) -> Path:
    """Write ``files`` under ``root`` (created), as an unzip would; returns ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = root / PurePosixPath(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def write_zip(path: Path, files: Mapping[str, bytes], when: datetime | None = None) -> Path:
    """Write ``files`` as a zip whose members all carry the time ``when`` (the LMS's "now").

    Canvas (rubyzip ``get_output_stream``), Moodle (``archive_writer``/ZipStream) and
    Gradescope all stamp members with the time the zip was made, so every member has
    (nearly) the same modification time: file times say nothing about submission order.
    """
    when = when or datetime(2026, 12, 1, 9, 30, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=when.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return path


def unzip_like(system: str, zip_path: Path, downloads: Path) -> Path:
    """Unzip ``zip_path`` into ``downloads`` as ``system`` ("macos" or "windows") does; returns the folder it shows.

    - Windows Explorer's "Extract All" always proposes ``<Downloads>\\<zip name without .zip>``
      and extracts the archive's contents inside it: a zip whose members all sit in
      one folder (Gradescope's ``assignment_N_export/``) becomes ``X/X/...``.
    - macOS Archive Utility extracts a zip with a single top-level folder as that
      folder, and a zip with several top-level items into a new folder named after the
      zip (``X/...``).

    Either way the instructor ends up with one folder above what the LMS put in the zip.
    """
    with zipfile.ZipFile(zip_path) as zf:
        names = [n for n in zf.namelist() if n and not n.endswith("/")]
        files = {n: zf.read(n) for n in names}
    stem = zip_path.name[:-4] if zip_path.name.lower().endswith(".zip") else zip_path.name
    tops = {PurePosixPath(n).parts[0] for n in names}
    single_folder = len(tops) == 1 and all(len(PurePosixPath(n).parts) > 1 for n in names)
    if system == "windows":
        return write_tree(downloads / stem, files)
    if system == "macos":
        if single_folder:
            write_tree(downloads, files)
            return downloads / tops.pop()
        return write_tree(downloads / stem, files)
    raise ValueError(f"system must be 'macos' or 'windows', not {system!r}")


# --------------------------------------------------------------------------- Canvas: Download Submissions


def canvas_user_name(sortable_name: str) -> str:
    """The name part of a Canvas download's file names.

    instructure/canvas-lms ``lib/content_zipper.rb``, ``sanitize_user_name``:
    ``user_name.gsub!(/_(\\d+)_/, '\\1')``, ``user_name.gsub!(/^(\\d+)$/, '\\1')``,
    ``user_name.downcase`` (the result then goes through ``sanitize_file_name``).
    """
    name = re.sub(r"_(\d+)_", r"\1", sortable_name)
    return name.lower()


def canvas_sanitize_file_name(filename: str) -> str:
    """``lib/content_zipper.rb`` ``sanitize_file_name``: ``filename.gsub(/[^[[:word:]]]/, "")``.

    ``[[:word:]]`` is Unicode letters, marks, digits and connector punctuation (the
    underscore), so "Lovelace, Ada" -> "lovelaceada", "O'Brien-Smith, Seán" ->
    "obriensmithseán", and an underscore in a name is kept.
    """
    return re.sub(r"[^\w]", "", filename)


def canvas_sanitize_attachment_filename(filename: str) -> str:
    """``lib/content_zipper.rb`` ``sanitize_attachment_filename``: ``gsub(%r{[\\x00/\\\\:*?"<>|]+}, "_")``."""
    return re.sub(r'[\x00/\\:*?"<>|]+', "_", filename)


def canvas_prefix(sortable_name: str | None, user_id: int | None = None, *, late: bool = False,
                  anonymous_id: str | None = None) -> str:
    """The part before the attachment id: ``{name}_{LATE_}{user id}`` or ``{LATE_}anon_{anonymous id}``.

    ``lib/content_zipper.rb`` ``get_filename``::

        id = @assignment.anonymize_students? ? "anon_#{submission.anonymous_id}" : submission.user_id
        filename = [users_name, submission.late? ? "LATE" : nil, id].compact.join("_")
        sanitize_file_name(filename)

    and ``add_submission``: ``users_name = get_user_name(...) unless @assignment.anonymize_students?``.
    The late marker is upper-case ``LATE``; under anonymous grading there is no name and no
    user id. ``anonymous_id`` is ``Anonymity.generate_short_id`` = ``SecureRandom.base58(5)``
    (``lib/anonymity.rb``).
    """
    if anonymous_id is not None:
        ident = f"anon_{anonymous_id}"
        users_name = None
    else:
        ident = str(user_id)
        users_name = canvas_user_name(sortable_name or "")
    parts = [p for p in (users_name, "LATE" if late else None, ident) if p is not None]
    return canvas_sanitize_file_name("_".join(parts))


def canvas_unique_filename(filename: str, existing: Iterable[str]) -> str:
    """The display name Canvas gives a file whose name is already taken: ``lm-head-1.ipynb``.

    instructure/canvas-lms ``app/models/attachment.rb`` ``Attachment.make_unique_filename``:
    ``new_name = "#{dir}#{basename}-#{addition}#{extname}"`` with ``addition`` counting from 1
    (``extname = filename[/(\\.[A-Za-z][A-Za-z0-9]*)*(\\.[A-Za-z0-9]*)$/]``). A student who
    uploads ``lm-head.ipynb`` again gets ``lm-head-1.ipynb``, then ``lm-head-2.ipynb``.
    """
    taken = set(existing)
    if filename not in taken:
        return filename
    m = re.search(r"(\.[A-Za-z][A-Za-z0-9]*)*(\.[A-Za-z0-9]*)$", filename)
    ext = m.group(0) if m else ""
    base = filename[: len(filename) - len(ext)] if ext else filename
    addition = 1
    while f"{base}-{addition}{ext}" in taken:
        addition += 1
    return f"{base}-{addition}{ext}"


@dataclass
class CanvasSubmission:
    """One student's current submission to a Canvas assignment.

    ``kind`` is Canvas's ``submission_type``: ``online_upload`` (``files``: display name ->
    bytes, with one attachment id each), ``online_text_entry`` (``body``) or ``online_url``
    (``url``). Only the current version is in the download: a resubmission replaces the
    attachments (``get_uploaded_files_from`` reads ``submission.attachment_ids``).
    """

    person: Person
    kind: str = "online_upload"
    files: dict[str, bytes] = field(default_factory=dict)
    attachment_ids: list[int] = field(default_factory=list)
    late: bool = False
    body: str = ""
    url: str = ""
    anonymous_id: str | None = None


def canvas_zip_name(course_short_name: str, assignment_title: str) -> str:
    """The download's file name: ``CS_101-LM_head_submissions.zip``.

    ``lib/content_zipper.rb`` ``assignment_zip_filename``:
    ``"#{assignment.context.short_name_slug}-#{assignment.title_slug} submissions"``, then
    ``make_zip_tmpdir``: ``File.basename(filename.tr(" ", "_").gsub(/[^\\w-]/, ""))`` + ``.zip``.
    """
    name = f"{course_short_name}-{assignment_title} submissions".replace(" ", "_")
    return re.sub(r"[^\w-]", "", name) + ".zip"


def _canvas_text_page(submission: CanvasSubmission) -> bytes:
    """``app/views/assignments/text_entry_page.html.erb`` (rendered by ``add_online_submission_content``)."""
    return (f"<html>\n  <head>\n    <meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\">\n"
            f"    <title>{submission.person.name}: LM head</title>\n  </head>\n  <body>\n"
            f"    <h1>{submission.person.name}: LM head</h1>\n    {submission.body}\n  </body>\n</html>\n"
            ).encode("utf-8")


def _canvas_redirect_page(submission: CanvasSubmission) -> bytes:
    """``app/views/assignments/redirect_page.html.erb``: a page that forwards to the submitted URL."""
    return (f"<html>\n  <head>\n    <title>{submission.url}</title>\n"
            f"    <meta http-equiv=\"refresh\" content=\"1; url={submission.url}\">\n  </head>\n"
            f"  <body>\n    <a href=\"{submission.url}\">{submission.url}</a>\n  </body>\n</html>\n").encode("utf-8")


def canvas_download(submissions: Sequence[CanvasSubmission]) -> Files:
    """The members of Canvas's "Download Submissions" zip: flat, one file per attachment.

    instructure/canvas-lms ``lib/content_zipper.rb``:

    - ``add_upload_submission``: ``"#{filename}_#{file.id}_#{sanitize_attachment_filename(file.display_name)}"``
      where ``filename`` is ``get_filename`` (see ``canvas_prefix``) and ``file.id`` is the
      **attachment** id (one per file), not the submission id;
    - ``add_text_or_url``: ``"#{called}_text.html"`` for ``online_text_entry`` and
      ``"#{called}_link.html"`` for ``online_url``;
    - ``add_attachment_to_zip``: ``Attachment.make_unique_filename(filename, @files_in_zip)``
      for a name already in the zip.
    """
    out: Files = {}
    for sub in submissions:
        p = sub.person
        called = canvas_prefix(p.sortable_name, p.canvas_id, late=sub.late, anonymous_id=sub.anonymous_id)
        if sub.kind == "online_text_entry":
            out[canvas_unique_filename(f"{called}_text.html", out)] = _canvas_text_page(sub)
        elif sub.kind == "online_url":
            out[canvas_unique_filename(f"{called}_link.html", out)] = _canvas_redirect_page(sub)
        else:
            ids = sub.attachment_ids or [p.canvas_id * 10 + i for i in range(len(sub.files))]
            for attachment_id, (display, data) in zip(ids, sub.files.items()):
                name = f"{called}_{attachment_id}_{canvas_sanitize_attachment_filename(display)}"
                out[canvas_unique_filename(name, out)] = data
    return out


# --------------------------------------------------------------------------- Canvas: Gradebook export


@dataclass
class CanvasAssignment:
    """A gradebook column: ``title_with_id`` is ``"#{title} (#{id})"`` (``app/models/assignment.rb``)."""

    title: str
    id: int
    points_possible: float
    manual_posting: bool = False
    scores: dict[int, float | str | None] = field(default_factory=dict)   # canvas_id -> score, "EX", or None

    @property
    def title_with_id(self) -> str:
        return f"{self.title} ({self.id})"


def _canvas_number(value: float | None, decimal: str) -> str | None:
    """``GradebookExporter#format_numbers``: ``I18n.n(number, precision: 2)`` (no thousands separator).

    ``I18n.n`` with ``precision: 2`` writes two decimals ("20.00"); the separator is the
    locale's ``number.format.separator`` ("," in de, fr, nl, pt-BR, ...). No score stays nil
    (an empty cell).
    """
    if value is None:
        return None
    return f"{value:.2f}".replace(".", decimal)


def _ruby_csv_line(row: Sequence[str | None], col_sep: str) -> str:
    """One row as Ruby's CSV writes it: nil empty, ``""`` for an empty string, quotes only when needed."""
    cells = []
    for value in row:
        if value is None:
            cells.append("")
        elif value == "" or any(ch in value for ch in (col_sep, '"', "\r", "\n")):
            cells.append('"' + value.replace('"', '""') + '"')
        else:
            cells.append(value)
    return col_sep.join(cells) + "\n"


def canvas_gradebook_export(people: Sequence[Person], assignments: Sequence[CanvasAssignment], *,
                            col_sep: str = ",", decimal: str = ".", bom: bool = False,
                            include_sis_id: bool = True, integration_id: bool = False,
                            group_name: str = "Assignments", test_student: Person | None = None,
                            first_last: bool = False) -> bytes:
    """Canvas's Gradebook > Export > "Export Entire Gradebook" CSV.

    instructure/canvas-lms ``lib/gradebook_exporter.rb`` ``csv_data`` and ``lib/csv_with_i18n.rb``:

    - header: ``["Student"]`` (``["LastName", "FirstName"]`` with ``show_student_first_last_name``),
      ``"ID"``, ``"SIS User ID" if include_sis_id``, ``"SIS Login ID"``,
      ``"Integration ID" if include_sis_id && show_integration_id?``, ``"Section"``, then
      ``assignments.map(&:title_with_id)``, then per assignment group
      ``"<group> Current Points", "<group> Final Points"`` (``include_points?``) and
      ``"<group> Current Score" ... "Unposted Final Score"``, then the course totals;
    - a "hidden" row when any assignment posts manually: ``row = [nil, nil, nil, nil]`` (+ nil per
      SIS column) then ``"Manual Posting"`` under each such assignment, nil elsewhere;
    - ``row = ["    Points Possible", nil, nil, nil]``, ``format_numbers(a.points_possible)``,
      ``(read only)`` under every total;
    - student rows ``[student_name(sortable_name), student.id, sis_user_id, unique_id, ...,
      sections]``, scores via ``format_numbers``, ``"EX"`` when excused; the test student
      (``StudentViewEnrollment``) is put last (``enrollments_for_csv``);
    - ``CSVWithI18n.csv_i18n_settings``: ``col_sep`` is ``;`` with the
      ``use_semi_colon_field_separators_in_gradebook_exports`` feature, or when autodetect is
      on and ``I18n.t('number.format.separator') == ','``; a UTF-8 BOM
      (``"\\xEF\\xBB\\xBF"``) with ``include_byte_order_mark_in_gradebook_exports``.
    """
    read_only = "(read only)"
    group_cols = [f"{group_name} Current Points", f"{group_name} Final Points", f"{group_name} Current Score",
                  f"{group_name} Unposted Current Score", f"{group_name} Final Score",
                  f"{group_name} Unposted Final Score"]
    total_cols = ["Current Points", "Final Points", "Current Score", "Unposted Current Score", "Final Score",
                  "Unposted Final Score"]
    header = (["LastName", "FirstName"] if first_last else ["Student"]) + ["ID"]
    header += (["SIS User ID"] if include_sis_id else []) + ["SIS Login ID"]
    header += (["Integration ID"] if include_sis_id and integration_id else []) + ["Section"]
    id_width = len(header)
    header += [a.title_with_id for a in assignments] + group_cols + total_cols
    lines = [_ruby_csv_line(header, col_sep)]
    if any(a.manual_posting for a in assignments):
        row: list[str | None] = [None] * id_width
        row += ["Manual Posting" if a.manual_posting else None for a in assignments]
        row += [None] * (len(group_cols) + len(total_cols))
        lines.append(_ruby_csv_line(row, col_sep))
    row = ["    Points Possible"] + [None] * (id_width - 1)
    row += [_canvas_number(a.points_possible, decimal) for a in assignments]
    row += [read_only] * (len(group_cols) + len(total_cols))
    lines.append(_ruby_csv_line(row, col_sep))
    everyone = list(people) + ([test_student] if test_student else [])
    for p in everyone:
        name = p.sortable_name
        if re.match(r"^\s*=", name):
            name = f'="{name}"'
        names = [p.last, p.first] if first_last else [name]
        row = [*names, str(p.canvas_id)] + ([p.sis_user_id or None] if include_sis_id else []) + \
            [p.login_id or None] + ([p.integration_id or None] if include_sis_id and integration_id else []) + \
            [p.section]
        earned = 0.0
        for a in assignments:
            score = a.scores.get(p.canvas_id)
            if score == "EX":
                row.append("EX")
            else:
                row.append(_canvas_number(score, decimal))  # type: ignore[arg-type]
                earned += float(score or 0)
        possible = sum(a.points_possible for a in assignments) or 1.0
        pct = round(100 * earned / possible, 2)
        row += [_canvas_number(earned, decimal)] * 2 + [_canvas_number(pct, decimal)] * 4
        row += [_canvas_number(earned, decimal)] * 2 + [_canvas_number(pct, decimal)] * 4
        lines.append(_ruby_csv_line(row, col_sep))
    text = "".join(lines)
    return (b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8")


def canvas_export_file_name(course_short_name: str, when: datetime | None = None) -> str:
    """The export's file name: ``2026-12-01T0930_Grades-CS_101.csv``.

    instructure/canvas-lms ``app/controllers/gradebook_csvs_controller.rb`` ``create``:
    ``current_time = Time.zone.now.strftime("%FT%H%M")``, ``name = t("grades_filename", "Grades") + "-" +
    @context.short_name.to_s``, ``"#{current_time}_#{name}.csv".gsub(%r{/| }, "_")``; the same
    action sets ``include_sis_id: @context.grants_any_right?(@current_user, session, :read_sis, :manage_sis)``
    (without either right the export has no "SIS User ID" column).
    """
    when = when or datetime(2026, 12, 1, 9, 30)
    return re.sub(r"/| ", "_", f"{when:%Y-%m-%dT%H%M}_Grades-{course_short_name}.csv")


# --------------------------------------------------------------------------- Moodle: Download all submissions


def moodle_clean_filename(name: str) -> str:
    """moodle/moodle ``lib/moodlelib.php`` ``clean_filename`` = ``clean_param($string, PARAM_FILE)``:

    ``preg_replace('~[[:cntrl:]]|[&<>"`\\|\\':\\\\\\\\/]~u', '', $param)`` and ``'.'``/``'..'`` become ``''``.
    So "José "Pepe" O'Brien" -> "José Pepe OBrien"; spaces, commas and accents stay.
    """
    name = re.sub(r"[\x00-\x1f\x7f]|[&<>\"`|':\\/]", "", name)
    return "" if name in (".", "..") else name


def moodle_prefix(person: Person | None = None, *, blind: bool = False, group: tuple[str, int] | None = None,
                  default_team: bool = False, version: str = "4.1", groupname_in_3x: str = "") -> str:
    """The per-participant prefix of a Moodle download.

    4.1+ (moodle/moodle ``mod/assign/classes/downloader.php`` ``get_student_prefix``)::

        // Team submissions are by group, not by student.
        $groupname = format_string($submissiongroup->name ...); $groupinfo = '_' . $submissiongroup->id;
        ... else { $groupname = get_string('defaultteam', 'mod_assign'); $groupinfo = ''; }
        return clean_filename(str_replace('_', ' ', $groupname) . $groupinfo);
        // Individual submissions are by user.
        $fullname = $manager->is_blind_marking() ? get_string('participant', 'mod_assign') : fullname(...);
        $prefix = clean_filename(str_replace('_', ' ', $fullname) . '_'
                                 . $manager->get_uniqueid_for_user($student->id));

    3.1-4.0 (``mod/assign/locallib.php`` ``assign::download_submissions``): the group's name and
    a dash before every member's own prefix, ``$groupname = $submissiongroup->name . '-'``
    ("Default group-" without a group), and
    ``clean_filename(str_replace('_', ' ', $groupname . fullname($student)) . '_' . get_uniqueid_for_user($userid))``.

    The number is the assignment's participant number (``assign_user_mapping``), the same
    as the worksheet's "Participant N", never the user id; a group prefix carries the
    **group** id instead.
    """
    if version == "4.1" and default_team:
        return moodle_clean_filename("Default group")
    if version == "4.1" and group is not None:
        name, gid = group
        return moodle_clean_filename(name.replace("_", " ") + f"_{gid}")
    if person is None:
        raise ValueError("an individual prefix needs the person")
    fullname = "Participant" if blind else person.name
    if version != "4.1":
        fullname = groupname_in_3x + fullname
    return moodle_clean_filename(fullname.replace("_", " ") + f"_{person.moodle_uniqueid}")


def moodle_onlinetext_html(text: str) -> bytes:
    """``mod/assign/submission/onlinetext/locallib.php`` ``get_files``:
    ``'<!DOCTYPE html><html>' . $head . '<body>'. $formattedtext . '</body></html>'`` with
    ``$head = '<head><meta charset="UTF-8"></head>'``; file name ``get_string('onlinetextfilename')``
    = ``onlinetext.html``."""
    return ('<!DOCTYPE html><html><head><meta charset="UTF-8"></head><body>' + text + "</body></html>").encode("utf-8")


@dataclass
class MoodleSubmission:
    """One prefix's submission: files (``assignsubmission_file``) and/or online text.

    For a team submission, ``group`` is ``(group name, group id)`` and ``members`` lists the
    people in the group (3.x writes one copy per member; 4.1+ one folder for the group).
    """

    person: Person | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    onlinetext: str | None = None
    group: tuple[str, int] | None = None
    members: list[Person] = field(default_factory=list)


def moodle_download(submissions: Sequence[MoodleSubmission], *, version: str = "4.1", as_folders: bool = True,
                    blind: bool = False) -> Files:
    """The members of Moodle's "Download all submissions" zip.

    4.1+ (``mod/assign/classes/downloader.php`` ``load_submissionplugin_filelist``), with
    ``assign_downloadasfolders`` on (the default)::

        $prefixedfilename = clean_filename($prefix . '_' . $subtype . '_' . $type);
        if ($type == 'file') { $pathfilename = $prefixedfilename . $file->get_filepath() . $zipfilename; }
        else { $pathfilename = $prefixedfilename . '/' . $zipfilename; }

    so ``Ada Lovelace_1234567_assignsubmission_file/lm-head.ipynb`` (no trailing underscore) and
    ``Ada Lovelace_1234567_assignsubmission_onlinetext/onlinetext.html``. With the preference off:
    ``clean_filename($prefix . '_' . $subtype . '_' . $type . '_' . $zipfilename)``, flat.

    3.1-4.0 (``mod/assign/locallib.php`` ``assign::download_submissions``): the same with
    ``clean_filename($prefix . '_' . $subtype . '_' . $type . '_')`` (a **trailing underscore**
    on the folder), and ``$prefix . '_' . $subtype . '_' . $type . '_' . $zipfilename`` flat.
    In 3.x a team submission is written once per member (each member's own prefix, after
    "<group name>-"); in 4.1+ once, under the group's prefix (``isset($this->prefixes[$prefix])``).
    """
    out: Files = {}

    def add(prefix: str, sub: MoodleSubmission) -> None:
        plugins: list[tuple[str, dict[str, bytes]]] = []
        if sub.files:
            plugins.append(("file", sub.files))
        if sub.onlinetext is not None:
            plugins.append(("onlinetext", {"onlinetext.html": moodle_onlinetext_html(sub.onlinetext)}))
        for kind, files in plugins:
            for name, data in files.items():
                if as_folders:
                    trailing = "_" if version != "4.1" else ""
                    folder = moodle_clean_filename(f"{prefix}_assignsubmission_{kind}{trailing}")
                    path = f"{folder}/{name}"
                else:
                    path = moodle_clean_filename(f"{prefix}_assignsubmission_{kind}_{name}")
                out[path] = data

    for sub in submissions:
        if sub.group is not None and version == "4.1":
            # A group id of None is the team of the students in no group ("Default group").
            add(moodle_prefix(group=sub.group, default_team=sub.group[1] is None), sub)
        elif sub.group is not None:
            for member in sub.members:
                add(moodle_prefix(member, blind=blind, version="3", groupname_in_3x=sub.group[0] + "-"), sub)
        else:
            add(moodle_prefix(sub.person, blind=blind, version=version), sub)
    return out


def moodle_zip_name(course_short_name: str, assignment_name: str, cmid: int) -> str:
    """``downloader.php`` ``get_zip_filename``:
    ``clean_filename(implode('-', [shortname, name, (group), cmid]) . '.zip')``."""
    return moodle_clean_filename(f"{course_short_name}-{assignment_name}-{cmid}.zip")


# --------------------------------------------------------------------------- Moodle: grading worksheet


def moodle_userdate(when: datetime) -> str:
    """``userdate($t)`` with ``strftimedatetime`` = ``%A, %d %B %Y, %I:%M %p`` and Moodle's
    ``fixday``/``fixhour`` (no leading zero): "Tuesday, 1 December 2026, 9:05 AM"."""
    hour = when.hour % 12 or 12
    return f"{when:%A}, {when.day} {when:%B %Y}, {hour}:{when:%M %p}"


def _php_fputcsv_line(row: Sequence[str], delimiter: str = ",") -> str:
    """A row as PHP's ``fputcsv`` writes it (what Spout's CSV writer calls): a field is quoted
    when it holds the delimiter, ``"``, ``\\n``, ``\\r``, ``\\t``, a space or ``\\``."""
    cells = []
    for value in row:
        if any(ch in value for ch in (delimiter, '"', "\n", "\r", "\t", " ", "\\")):
            cells.append('"' + value.replace('"', '""') + '"')
        else:
            cells.append(value)
    return delimiter.join(cells) + "\n"


@dataclass
class WorksheetRow:
    person: Person
    status: str = "Submitted for grading"
    grade: float | None = None
    graded_at: datetime | None = None
    submitted_at: datetime | None = None
    onlinetext: str = ""
    feedback: str = ""
    #: The "Group" column of a team assignment: ``col_team`` gives the group's name, else ``defaultteam``.
    group: str = "Default group"


def moodle_grading_worksheet(rows: Sequence[WorksheetRow], max_grade: float, *, identity_fields: Sequence[str] = (
        "Email address",), onlinetext: bool = False, blind: bool = False, team: bool = False,
        comments: bool = True) -> bytes:
    """The "Download grading worksheet" CSV of an assignment with offline grading on.

    moodle/moodle ``mod/assign/feedback/offline/locallib.php`` ``download_grades`` builds an
    ``assign_grading_table`` with a download name ``clean_filename('Grades-' . shortname . '-' .
    name . '-' . cmid)``; ``mod/assign/gradingtable.php`` ``__construct`` gives the columns
    when downloading: ``recordid`` ("Identifier", ``get_string('hiddenuser') . $row->recordid``
    = "Participant N"), ``fullname`` ("Full name"; both left out for blind marking without
    ``viewblinddetails``), the identity fields, "Status", ("Group" for team submissions),
    "Grade", "Maximum Grade" (``grade >= 0``), "Grade can be changed", "Last modified
    (submission)", one column per submission plugin editor field ("Online text"), "Last
    modified (grade)", and one per feedback editor field ("Feedback comments").
    The file is written by ``dataformat_csv`` (Spout's CSV writer: ``$shouldAddBOM = true``,
    ``fputcsv`` quoting).
    """
    header = ["Identifier"]
    if not blind:
        header += ["Full name", *identity_fields]
    header += ["Status"] + (["Group"] if team else []) + ["Grade", "Maximum Grade", "Grade can be changed",
                                                          "Last modified (submission)"]
    header += ["Online text"] if onlinetext else []
    header += ["Last modified (grade)"] + (["Feedback comments"] if comments else [])
    lines = [_php_fputcsv_line(header)]
    for r in rows:
        p = r.person
        row = [f"Participant {p.moodle_uniqueid}"]
        if not blind:
            row += [p.name] + [p.email if f == "Email address" else p.sid for f in identity_fields]
        row += [r.status] + ([r.group] if team else [])
        row += ["" if r.grade is None else f"{r.grade:.2f}", f"{max_grade:.2f}", "Yes",
                moodle_userdate(r.submitted_at) if r.submitted_at else "-"]
        row += [r.onlinetext] if onlinetext else []
        row += [moodle_userdate(r.graded_at) if r.graded_at else "-"] + ([r.feedback] if comments else [])
        lines.append(_php_fputcsv_line(row))
    return b"\xef\xbb\xbf" + "".join(lines).encode("utf-8")


def moodle_worksheet_file_name(course_short_name: str, assignment_name: str, cmid: int) -> str:
    """``download_grades``: ``clean_filename(get_string('offlinegradingworksheet') . '-' . shortname
    . '-' . name . '-' . cmid)`` (the string is "Grades"), then ``.csv``."""
    return moodle_clean_filename(f"Grades-{course_short_name}-{assignment_name}-{cmid}") + ".csv"


# --------------------------------------------------------------------------- Gradescope: Export Submissions


@dataclass
class GradescopeSubmission:
    """One Gradescope submission: every member of a group is a submitter of the same submission."""

    id: int
    submitters: list[Person]
    files: dict[str, bytes]
    created_at: datetime
    score: float | None = None
    history: list[tuple[datetime, float | None]] = field(default_factory=list)


def _ruby_time(when: datetime) -> str:
    """A Ruby ``Time`` as Psych dumps it: ``2026-11-30 21:04:05.123456000 -08:00`` (``Z`` for UTC)."""
    offset = when.utcoffset() or timedelta(0)
    if offset == timedelta(0):
        zone = "Z"
    else:
        minutes = int(offset.total_seconds() // 60)
        sign = "-" if minutes < 0 else "+"
        zone = f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"
    return f"{when:%Y-%m-%d %H:%M:%S}.{when.microsecond:06d}000 {zone}"


def gradescope_metadata(submissions: Sequence[GradescopeSubmission]) -> bytes:
    """``submission_metadata.yml`` as Gradescope's "Export Submissions" writes it (Ruby's Psych).

    Gradescope's code is not public; this follows the exports public repositories parse,
    e.g. ``sample`` in a ``parse-metadata`` test ("Ruby symbol keys, a single submitter, a
    group (two submitters) ... Ruby timestamps"): one top-level key per folder
    ``submission_<id>``, with ``:submitters:`` a list of ``:name:``/``:sid:``/``:email:``
    (every member of a group), ``:created_at: 2026-04-26 17:34:00.861687000 Z``,
    ``:score:`` and ``:history:`` (earlier submissions, each with its own ``:created_at:``
    and ``:score:``). SIDs that look like numbers are quoted (``:sid: '123456789'``).
    """
    lines: list[str] = []

    def scalar(value: str) -> str:
        if value == "" or re.fullmatch(r"[-+]?[\d.]+(e[-+]?\d+)?", value) or value[0] in "!&*{}[]|>%@`'\"#,?:-" \
                or ": " in value or " #" in value or value.lower() in ("yes", "no", "true", "false", "null", "~"):
            return "'" + value.replace("'", "''") + "'"
        return value

    for sub in submissions:
        lines.append(f"submission_{sub.id}:")
        lines.append("  :submitters:")
        for p in sub.submitters:
            lines.append(f"  - :name: {scalar(p.name)}")
            lines.append(f"    :sid: {scalar(p.sid)}")
            lines.append(f"    :email: {scalar(p.email)}")
        lines.append(f"  :created_at: {_ruby_time(sub.created_at)}")
        lines.append(f"  :score: {'' if sub.score is None else float(sub.score)}".rstrip())
        if sub.history:
            lines.append("  :history:")
            for when, score in sub.history:
                lines.append(f"  - :created_at: {_ruby_time(when)}")
                lines.append(f"    :score: {'' if score is None else float(score)}".rstrip())
        else:
            lines.append("  :history: []")
    return ("\n".join(lines) + "\n").encode("utf-8")


def gradescope_export(submissions: Sequence[GradescopeSubmission], assignment_id: int = 8046601) -> Files:
    """The members of Gradescope's "Export Submissions" zip: one folder around everything.

    ``assignment_<id>_export/submission_metadata.yml`` and one folder
    ``assignment_<id>_export/submission_<submission id>/`` per submission holding the files as
    the student uploaded them (original names; a group's files once). The single top-level
    folder follows public exports parsed by others (``const root =
    'assignment_8046601_export/'`` in their tests).
    """
    root = f"assignment_{assignment_id}_export"
    out: Files = {f"{root}/submission_metadata.yml": gradescope_metadata(submissions)}
    for sub in submissions:
        for name, data in sub.files.items():
            out[f"{root}/submission_{sub.id}/{name}"] = data
    return out


def gradescope_zip_name(assignment_id: int = 8046601) -> str:
    return f"assignment_{assignment_id}_export.zip"


# --------------------------------------------------------------------------- a ready-made class

PST = timezone(timedelta(hours=-8))


def roster() -> dict[str, Person]:
    """Six students, with the awkward cases the readers must survive.

    ``hopper``'s SIS User ID "4102" is ``turing``'s Canvas id and ``knuth``'s "4101" is
    ``lovelace``'s (institutions number both from small integers, so this happens; Knuth
    hands in a URL, so no notebook of his is graded); ``nguyen`` has an underscore in her family name (kept by
    Canvas's ``[[:word:]]``); ``obrien`` has an apostrophe, a hyphen and an accent.
    """
    return {
        "lovelace": Person("Ada", "Lovelace", 4101, "S1001", "ada@uni.edu", "", "ada@uni.edu", "1001", 1234501),
        "turing": Person("Alan", "Turing", 4102, "S1002", "alan@uni.edu", "", "alan@uni.edu", "1002", 1234502),
        "hopper": Person("Grace", "Hopper", 4103, "4102", "grace@uni.edu", "", "grace@uni.edu", "4102", 1234503),
        "obrien": Person("Seán", "O'Brien-Smith", 4104, "S1004", "sean@uni.edu", "", "sean@uni.edu", "1004",
                         1234504),
        "nguyen": Person("Mai", "Nguyen_Tran", 4105, "S1005", "mai@uni.edu", "", "mai@uni.edu", "1005", 1234505),
        "knuth": Person("Donald", "Knuth", 4106, "4101", "don@uni.edu", "", "don@uni.edu", "1006", 1234506),
    }


def canvas_class(solution: bytes = DEFAULT_NOTEBOOK, student: bytes = DEFAULT_NOTEBOOK, *,
                 anonymous: bool = False) -> tuple[list[CanvasSubmission], Files]:
    """A Canvas class: a plain upload, a late one, a resubmission (``lm-head-1.ipynb``), a
    notebook with its PDF, a text entry, a URL, and (with ``anonymous``) anonymous-grading names."""
    r = roster()
    anon = iter(["f8X9w", "Qm3Ab", "7Hk2p", "Zr4Te", "bW9cN", "kP2sL"]) if anonymous else None

    def aid() -> str | None:
        return next(anon) if anon else None

    subs = [
        CanvasSubmission(r["lovelace"], files={"lm-head.ipynb": solution}, attachment_ids=[88001],
                         anonymous_id=aid()),
        CanvasSubmission(r["turing"], files={"lm-head.ipynb": student}, attachment_ids=[88002], late=True,
                         anonymous_id=aid()),
        CanvasSubmission(r["hopper"], files={canvas_unique_filename("lm-head.ipynb", ["lm-head.ipynb"]): solution},
                         attachment_ids=[88013], anonymous_id=aid()),
        CanvasSubmission(r["obrien"], files={"lm-head.ipynb": solution, "lm-head.pdf": DEFAULT_PDF},
                         attachment_ids=[88004, 88005], anonymous_id=aid()),
        CanvasSubmission(r["nguyen"], kind="online_text_entry", body="<p>My notebook is attached below ...</p>",
                         anonymous_id=aid()),
        CanvasSubmission(r["knuth"], kind="online_url", url="https://colab.research.google.com/drive/1AbC",
                         anonymous_id=aid()),
    ]
    return subs, canvas_download(subs)


def canvas_gradebook_for_class(*, col_sep: str = ",", decimal: str = ".", bom: bool = False,
                               manual_posting: bool = False, points: float = 100.0,
                               include_sis_id: bool = True, assignment_id: int = 12345,
                               first_last: bool = False, scores: Mapping[str, float | str] | None = None) -> bytes:
    """A Canvas export of the roster's course with an ``lm-head (12345)`` column of ``points``
    points (default 100, not the autograder's total) and one graded earlier assignment.
    ``scores`` (roster key -> score or "EX") are already in the lm-head column (a TA's manual grade)."""
    r = roster()
    people = list(r.values())
    earlier = CanvasAssignment("Warm-up", 12001, 10.0, scores={p.canvas_id: 9.5 for p in people})
    lm = CanvasAssignment("lm-head", assignment_id, points, manual_posting=manual_posting,
                          scores={r[k].canvas_id: v for k, v in (scores or {}).items()})
    test = Person("Test", "Student", 4199, "", "", section="Section 1")
    return canvas_gradebook_export(people, [earlier, lm], col_sep=col_sep, decimal=decimal, bom=bom,
                                   include_sis_id=include_sis_id, test_student=test, first_last=first_last)


def moodle_class(solution: bytes = DEFAULT_NOTEBOOK, student: bytes = DEFAULT_NOTEBOOK, *, version: str = "4.1",
                 as_folders: bool = True, blind: bool = False) -> Files:
    """A Moodle class: a notebook, a notebook with online text, two files in one participant's
    submission, and an odd name (clean_filename drops the apostrophe)."""
    r = roster()
    subs = [
        MoodleSubmission(r["lovelace"], files={"lm-head.ipynb": solution}),
        MoodleSubmission(r["turing"], files={"lm-head.ipynb": student}, onlinetext="<p>Late, sorry.</p>"),
        MoodleSubmission(r["hopper"], files={"lm-head.ipynb": solution, "lm-head (1).ipynb": student}),
        MoodleSubmission(r["obrien"], files={"lm-head.ipynb": solution}),
    ]
    return moodle_download(subs, version=version, as_folders=as_folders, blind=blind)


def moodle_group_class(solution: bytes = DEFAULT_NOTEBOOK, *, version: str = "4.1") -> Files:
    """A team assignment: "Team Rocket" (group id 42) = Lovelace and Turing, one submission."""
    r = roster()
    sub = MoodleSubmission(files={"lm-head.ipynb": solution}, group=("Team Rocket", 42),
                           members=[r["lovelace"], r["turing"]])
    return moodle_download([sub], version=version)


def moodle_worksheet_for_class(max_grade: float = 100.0) -> bytes:
    """The worksheet Moodle hands out for ``moodle_class`` (Hopper already graded by a TA)."""
    r = roster()
    sub = datetime(2026, 11, 30, 21, 4)
    rows = [WorksheetRow(r["lovelace"], submitted_at=sub), WorksheetRow(r["turing"], submitted_at=sub),
            WorksheetRow(r["hopper"], submitted_at=sub, grade=55.0, graded_at=datetime(2026, 12, 1, 8, 15)),
            WorksheetRow(r["obrien"], submitted_at=sub),
            WorksheetRow(r["nguyen"], status="No submission"), WorksheetRow(r["knuth"], status="No submission")]
    return moodle_grading_worksheet(rows, max_grade)


def gradescope_class(solution: bytes = DEFAULT_NOTEBOOK, student: bytes = DEFAULT_NOTEBOOK, *,
                     group: bool = True) -> Files:
    """A Gradescope export: a single submitter, a group of two (Turing and Hopper; with
    ``group=False`` they submit apart, Hopper the starter notebook), two files in one
    submission (notebook + PDF), a resubmission (``:history:``), and a PDF-only submission."""
    r = roster()
    t = datetime(2026, 11, 30, 21, 4, 5, 123456, tzinfo=PST)
    pair = [GradescopeSubmission(409194002, [r["turing"], r["hopper"]], {"lm-head.ipynb": solution}, t, 0.0)] \
        if group else [GradescopeSubmission(409194002, [r["turing"]], {"lm-head.ipynb": solution}, t, 0.0),
                       GradescopeSubmission(409194005, [r["hopper"]], {"lm-head.ipynb": student}, t, 0.0)]
    subs = [
        GradescopeSubmission(409194001, [r["lovelace"]], {"lm-head.ipynb": solution}, t, 0.0),
        *pair,
        GradescopeSubmission(409194003, [r["obrien"]], {"lm-head.ipynb": student, "lm-head.pdf": DEFAULT_PDF},
                             t + timedelta(hours=1), 0.0, history=[(t, 0.0)]),
        GradescopeSubmission(409194004, [r["nguyen"]], {"lm-head.pdf": DEFAULT_PDF}, t, None),
    ]
    return gradescope_export(subs)


def csv_rows(data: bytes, col_sep: str = ",") -> list[list[str]]:
    """Parse a CSV (BOM dropped) with ``col_sep``: a helper for checks."""
    text = data.decode("utf-8-sig")
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=col_sep))

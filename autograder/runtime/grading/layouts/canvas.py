"""The file names of Canvas's "Download Submissions" zip: whose each file is.

instructure/canvas-lms ``lib/content_zipper.rb`` names every file of the (flat) zip::

    get_filename: id = anonymize_students? ? "anon_#{submission.anonymous_id}" : submission.user_id
                  filename = [users_name, submission.late? ? "LATE" : nil, id].compact.join("_")
                  sanitize_file_name(filename)          # gsub(/[^[[:word:]]]/, "")
    add_upload_submission: "#{filename}_#{attachment.id}_#{sanitize_attachment_filename(display_name)}"
    add_text_or_url:       "#{filename}_text.html" (online_text_entry), "#{filename}_link.html" (online_url)

so ``nguyen_tranmai_4105_88010_lm-head.ipynb``, ``turingalan_LATE_4102_88002_lm-head.ipynb``,
``knuthdonald_4106_link.html``, ``LATE_anon_Qm3Ab_88002_lm-head.ipynb`` and
``anon_bW9cN_text.html``. The name (``users_name``: the sortable name, lower case,
non-word characters dropped) keeps underscores, and the display name is the
student's own, so neither side can be split on ``_`` alone. What makes the split
sound: ``sanitize_user_name`` turns every ``_<digits>_`` of the name into
``<digits>``, so the first ``_<digits>_<digits>_`` is the user id and the
attachment id (the name can only fool this by *ending* in ``_<digits>``, which a
"Last, First" sortable name does not). The attachment id grows with every upload,
so it orders two files of one student as Canvas received them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_LATE = r"(?P<late>(?i:LATE)_)?"
_ANON = r"anon_(?P<anon>[1-9A-HJ-NP-Za-km-z]+)"     # Anonymity.generate_short_id: SecureRandom.base58(5)
_TAIL = r"_(?:(?P<attachment>\d+)_(?P<file>.+)|(?P<entry>text|link)\.html)$"
#: ``{LATE_}anon_{anonymous id}_...``: anonymous grading writes no name and no user id.
ANONYMOUS = re.compile(rf"^{_LATE}{_ANON}{_TAIL}")
#: ``{name}_{LATE_}{user id}_...``: the shortest name that leaves a user id and a tail.
NAMED = re.compile(rf"^(?P<name>.+?)_{_LATE}(?P<user>\d+){_TAIL}")
#: The timestamp otter's export cell puts in a file name (``lm-head_2026_12_01T06_12_34_567890.zip``),
#: whose numbers would otherwise read as a user id and an attachment id.
_EXPORT_DATE = re.compile(r"^\d{2}T\d{2}_")


@dataclass(frozen=True)
class CanvasName:
    """What a Canvas download's file name says."""

    name: str              # the sanitized sortable name ("" under anonymous grading)
    user_id: str           # Canvas's user id ("" under anonymous grading)
    anonymous_id: str      # the anonymous id ("" unless anonymous grading)
    late: bool
    attachment_id: int     # 0 for a text or URL entry
    entry: str             # "text", "link" or "" for an uploaded file
    display_name: str      # the file as the student named it ("" for a text or URL entry)

    @property
    def who(self) -> str:
        """Who handed it in, as a key no other student shares."""
        return f"canvas-anon:{self.anonymous_id}" if self.anonymous_id else f"canvas:{self.user_id}"

    @property
    def student_id(self) -> str:
        return f"anon_{self.anonymous_id}" if self.anonymous_id else self.user_id


def parse(file_name: str) -> CanvasName | None:
    """The parts of a Canvas download's file name, or ``None`` if it is not one."""
    m = ANONYMOUS.match(file_name) or NAMED.match(file_name)
    if m is None or (m["file"] and _EXPORT_DATE.match(m["file"])):
        return None
    groups = m.groupdict()
    return CanvasName(groups.get("name") or "", groups.get("user") or "", groups.get("anon") or "",
                      bool(m["late"]), int(m["attachment"] or 0), m["entry"] or "", m["file"] or "")

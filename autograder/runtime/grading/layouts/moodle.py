"""The names in Moodle's "Download all submissions" zip: whose each folder or file is.

moodle/moodle, 4.1+ ``mod/assign/classes/downloader.php`` (``get_student_prefix``,
``load_submissionplugin_filelist``) and 3.1-4.0 ``mod/assign/locallib.php``
(``assign::download_submissions``)::

    prefix = clean_filename(str_replace('_', ' ', fullname) . '_' . get_uniqueid_for_user(userid))
    folders on (default):  clean_filename(prefix . '_' . subtype . '_' . type) . filepath . filename   (4.1+)
                           clean_filename(prefix . '_' . subtype . '_' . type . '_') . '/' . filename  (3.x)
    folders off (flat):    clean_filename(prefix . '_' . subtype . '_' . type . '_' . filename)

so ``Ada Lovelace_1234501_assignsubmission_file/lm-head.ipynb`` (4.1),
``Ada Lovelace_1234501_assignsubmission_file_/lm-head.ipynb`` (3.x),
``Ada Lovelace_1234501_assignsubmission_onlinetext/onlinetext.html`` and, flat,
``Ada Lovelace_1234501_assignsubmission_file_lm-head.ipynb``. The number is the
assignment's participant number ("Participant 1234501" in the grading worksheet),
the same in every plugin's folder of one student. Underscores of the full name
became spaces, so the first ``_<digits>_assignsubmission_`` ends the name.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# The prefix holds no underscore (Moodle replaced them with spaces): a name with one before the
# number is not Moodle's, whatever follows (a Canvas display name can read `x_4105_assignsubmission_...`).
FOLDER = re.compile(r"^(?P<name>[^_/]*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_?$")
FLAT = re.compile(r"^(?P<name>[^_/]*?)_(?P<participant>\d+)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.+)$")
#: A team download's prefix for the students in no group (4.1+ ``get_student_prefix``: the
#: ``defaultteam`` string, "Default group" in English, and no ``'_' . $submissiongroup->id``): a
#: Moodle name with no number before ``_assignsubmission_``.
NUMBERLESS = re.compile(r"^(?P<name>[^_/]*?)(?<!\d)_assignsubmission_(?P<plugin>[a-z]+)(_.*)?$")
NUMBERLESS_FOLDER = re.compile(r"^(?P<name>[^_/]*?)(?<!\d)_assignsubmission_(?P<plugin>[a-z]+)_?$")
NUMBERLESS_FLAT = re.compile(r"^(?P<name>[^_/]*?)(?<!\d)_assignsubmission_(?P<plugin>[a-z]+)_(?P<file>.+)$")


@dataclass(frozen=True)
class MoodleName:
    """What a Moodle download's folder or flat file name says."""

    name: str            # the full name ("Participant" under blind marking), or a team's name
    participant: str     # the participant number (a team's group id; "" for a team download's no-group folder)
    plugin: str          # "file", "onlinetext", ...
    file: str = ""       # the file's own name (flat downloads only)

    @property
    def who(self) -> str:
        return f"moodle:{self.participant}" if self.participant else f"moodle-team:{self.name}"

    @property
    def kind(self) -> str:
        """What ``handed_in`` calls a file of this plugin: Moodle's online text, or a file."""
        return "onlinetext" if self.plugin == "onlinetext" else ""


def folder(name: str) -> MoodleName | None:
    """A Moodle folder's name read, or ``None``; a team download's numberless folder has no participant."""
    if m := FOLDER.match(name):
        return MoodleName(m["name"], m["participant"], m["plugin"])
    m = NUMBERLESS_FOLDER.match(name)
    return MoodleName(m["name"], "", m["plugin"]) if m else None


def flat(name: str) -> MoodleName | None:
    """A Moodle flat file's name read, or ``None`` (numberless as for :func:`folder`)."""
    if m := FLAT.match(name):
        return MoodleName(m["name"], m["participant"], m["plugin"], m["file"])
    m = NUMBERLESS_FLAT.match(name)
    return MoodleName(m["name"], "", m["plugin"], m["file"]) if m else None


def team_download_sign(name: str) -> bool:
    """Whether ``name`` is a folder or flat file Moodle writes only for a team assignment: the
    submission of the students in no group, under a prefix without a number. In such a download
    every other prefix is a group's name and **group** id, which reads exactly like a student's
    name and participant number, and the download names no group's members."""
    return NUMBERLESS.match(name) is not None and FOLDER.match(name) is None and FLAT.match(name) is None

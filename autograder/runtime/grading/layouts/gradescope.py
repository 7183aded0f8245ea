"""Gradescope's "Export Submissions": ``submission_metadata.yml`` and one folder per submission.

The metadata (Ruby's Psych, symbol keys) has one key per folder ``submission_<id>``::

    submission_409194002:
      :submitters:
      - :name: Alan Turing
        :sid: '1002'
        :email: alan@uni.edu
      - :name: Grace Hopper           # a group submission lists every member
        ...
      :created_at: 2026-11-30 21:04:05.123456000 -08:00
      :score: 0.0

Every member of a group is a submitter of the one submission: each is owed a row.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import yaml

METADATA_FILE = "submission_metadata.yml"


@dataclass(frozen=True)
class Submitter:
    name: str
    email: str
    sid: str

    @property
    def who(self) -> str:
        """Two people never share this: the SID, else the whole e-mail ("" if neither)."""
        return f"sid:{self.sid}" if self.sid else f"email:{self.email.lower()}" if self.email else ""

    @property
    def id_source(self) -> str:
        return self.sid or self.email


@dataclass(frozen=True)
class GradescopeSubmission:
    key: str                        # the folder: ``submission_<id>``
    submitters: tuple[Submitter, ...]
    created_at: str                 # ISO 8601 in UTC, or ""


def field(mapping: dict, key: str):
    """Gradescope writes Ruby-symbol keys (``:name``); accept plain keys too."""
    for candidate in (f":{key}", key, f":{key}:"):
        if candidate in mapping:
            return mapping[candidate]
    return None


def _text(value: object) -> str:
    return "" if value is None else str(value)


def _instant(value: object) -> str:
    if isinstance(value, datetime):     # YAML timestamps: compare instants, not text
        value = value.astimezone(timezone.utc).isoformat() if value.tzinfo else value.isoformat()
    return _text(value)


def read(folder: Path) -> list[GradescopeSubmission]:
    """The submissions ``folder/submission_metadata.yml`` lists, by key.

    Raises ``yaml.YAMLError``, ``OSError`` or ``UnicodeDecodeError`` for a file that cannot be read,
    ``ValueError`` for one that is not Gradescope's mapping of submissions.
    """
    metadata = yaml.safe_load((folder / METADATA_FILE).read_text(encoding="utf-8")) or {}
    if not isinstance(metadata, dict):
        raise ValueError(f"it holds a {type(metadata).__name__}, not one entry per submission")
    out = []
    for key, info in sorted(metadata.items(), key=lambda kv: str(kv[0])):
        info = info if isinstance(info, dict) else {}
        people = field(info, "submitters") or []
        submitters = tuple(Submitter(_text(field(p, "name")), _text(field(p, "email")), _text(field(p, "sid")))
                           for p in people if isinstance(p, dict))
        out.append(GradescopeSubmission(str(key), submitters or (Submitter("", "", ""),),
                                        _instant(field(info, "created_at"))))
    return out

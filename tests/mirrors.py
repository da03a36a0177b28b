"""Where the test oracles' source comes from: bare mirrors of their public repositories.

The oracle tests run the evaluation code that a measure's authors published (DOTA_devkit,
boundary-iou-api, PolyWorld, HiSup, frame-field learning, Pix2Poly), read at a pinned
commit from a bare git mirror ``<owner>+<name>/repo`` below one folder:
``GEOEVAL_ORACLE_MIRRORS``, by default ``/work/.mirror``. Where a mirror is missing the
tests that need it skip and say which (``pytest -ra``); the README says how to make one
(``git clone --mirror``).
"""

from __future__ import annotations

import os
from pathlib import Path

MIRRORS = Path(os.environ.get("GEOEVAL_ORACLE_MIRRORS", "/work/.mirror"))


def git_dir(repository: str) -> Path:
    """The bare mirror of ``owner/name`` (it may not exist)."""
    return MIRRORS / repository.replace("/", "+") / "repo"

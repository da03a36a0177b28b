"""Markdown reports written to files (``geoeval audit --markdown``).

A result that has a Markdown form (``to_markdown()``, e.g. the metric audit's
Tables 3–8 of Hemery et al. 2010) is written here, atomically
(:func:`geoeval.report.text_files.write_text`), as every other output goes through this package.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geoeval.output_targets import output_target
from geoeval.report.text_files import write_text


def write_markdown(result: Any, path: str | Path) -> Path | str:
    """Write ``result.to_markdown()`` to ``path`` atomically; returns ``path``."""
    write_text(path, result.to_markdown())
    return output_target(path)

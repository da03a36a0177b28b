"""Whole text files written for the reports: text, a CSV table, a JSON report, each
atomically (:func:`geoeval.outputs.atomic_path`: inside an output run, renamed or
uploaded with the run's other outputs, all or nothing)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from geoeval.encoding import dump_pieces
from geoeval.outputs import atomic_path


def write_text(path: str | os.PathLike[str], text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces, in order) to ``path`` atomically (UTF-8)."""
    with atomic_path(path) as tmp:
        if isinstance(text, str):
            tmp.write_text(text, encoding="utf-8")
        else:
            with open(tmp, "w", encoding="utf-8") as f:
                f.writelines(text)


def write_csv_table(path: str | Path, frame: Any) -> Path:
    """Write a pandas DataFrame as CSV, atomically: no index, ``\\n`` line ends,
    nulls as empty cells (geoeval's one CSV convention)."""
    write_text(path, frame.to_csv(index=False, lineterminator="\n"))
    return Path(path)


def write_json(path: str | Path, report: dict[str, Any]) -> None:
    """Write a report to ``path`` atomically (laid out by
    :func:`geoeval.encoding.dump_pieces`)."""
    write_text(path, dump_pieces(report))

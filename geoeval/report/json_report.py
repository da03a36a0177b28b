"""JSON reports written to files (``docs/report.md``).

Scoring builds a report (``to_dict``); this module writes it, atomically and in
pieces (:func:`geoeval.report.text_files.write_json`), so the per-instance lists of a large
scene are never one string.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from geoeval.output_targets import output_target
from geoeval.report.text_files import write_json


def write_report(result: Any, path: str | Path) -> Path | str:
    """Write ``result``'s JSON report to ``path`` atomically.

    A :class:`~geoeval.scoring.ScoreResult` gives its instances already encoded
    from the matchings' arrays (``to_dict(rows=True)``); any other result
    (many scenes, a ranking, a box challenge) its ``to_dict()``; a dict is the
    report itself.

    Returns
    -------
    Path
        ``path``.
    """
    from geoeval.scoring import ScoreResult

    if isinstance(result, ScoreResult):
        report = result.to_dict(rows=True)
    else:
        report = result.to_dict() if hasattr(result, "to_dict") else result
    write_json(path, report)
    return output_target(path)

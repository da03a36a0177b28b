"""The summaries of a result, as the JSON report has them: what the terminal tables take.

Every route's result has one :class:`~geoeval.scoring.summary.ScoreSummary` (each
matcher's counts and measures, the per-class, strata, error-breakdown and bootstrap
objects of ``docs/report.md``); only a local result holds per-object data besides.
The table builders (:mod:`geoeval.report.strata_tables`,
:mod:`geoeval.report.breakdown`, :mod:`geoeval.report.scene_tables`) take these
summaries, so every result is printed by the same code.
"""

from __future__ import annotations

from typing import Any

#: The keys of :func:`summaries`.
KEYS = ("results", "objects", "per_class", "strata", "breakdown", "bootstrap")


def summaries(result: Any) -> dict[str, Any]:
    """``results`` (matcher -> the report's summary numbers), ``objects`` (the number of
    reference and submitted objects), and the report's ``per_class``, ``strata``,
    ``breakdown`` and ``bootstrap`` objects (``None`` when not computed), from the
    result's :class:`~geoeval.scoring.summary.ScoreSummary` (any route's)."""
    s = result.summary
    return {"results": {n: r.summary() for n, r in s.results.items()},
            "objects": (s.reference.objects, s.submission.objects),
            "per_class": s.per_class, "strata": s.strata, "breakdown": s.breakdown,
            "bootstrap": None if s.bootstrap is None else s.bootstrap.to_dict()}

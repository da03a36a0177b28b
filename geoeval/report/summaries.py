"""The summaries of a result, as the JSON report has them: what the terminal tables take.

A local :class:`~geoeval.scoring.result.ScoreResult` and a Dask run's
:class:`~geoeval.scoring.by_partitions.PartitionedResult` report the same summaries
(each matcher's counts and measures, the per-class, strata, error-breakdown and
bootstrap objects of ``docs/report.md``); only the local result holds per-object
data. The table builders (:mod:`geoeval.report.strata_tables`,
:mod:`geoeval.report.breakdown`, :mod:`geoeval.report.scene_tables`) take these
summaries, so both results are printed by the same code.
"""

from __future__ import annotations

from typing import Any

#: The keys of :func:`summaries`.
KEYS = ("results", "objects", "per_class", "strata", "breakdown", "bootstrap")


def summaries(result: Any) -> dict[str, Any]:
    """``results`` (matcher -> the report's summary numbers), ``objects`` (the number of
    reference and submitted objects), and the report's ``per_class``, ``strata``,
    ``breakdown`` and ``bootstrap`` objects (``None`` when not computed)."""
    from geoeval.scoring.by_partitions import PartitionedResult

    if isinstance(result, PartitionedResult):
        return {"results": {n: r.to_dict(result.objects_dataset)
                            for n, r in result.results.items()},
                "objects": (int(result.reference["objects"]),
                            int(result.submission["objects"])),
                "per_class": getattr(result, "per_class", None),
                "strata": result.strata, "breakdown": result.breakdown,
                "bootstrap": None if result.bootstrap is None else result.bootstrap.to_dict()}
    return {"results": {n: r.summary() for n, r in result.results.items()},
            "objects": (len(result.reference), len(result.submission)),
            "per_class": None if result.per_class is None else result.per_class.to_dict(),
            "strata": None if result.strata is None else result.strata.to_dict(),
            "breakdown": None if result.breakdown is None
            else {m: b.to_dict() for m, b in result.breakdown.items()},
            "bootstrap": None if result.bootstrap is None else result.bootstrap.to_dict()}

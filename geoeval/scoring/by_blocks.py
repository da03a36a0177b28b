"""Scoring two label mosaics by blocks on a Dask cluster: summaries only in the client.

:func:`geoeval.scoring.dispatch.dispatch` says whether a ``dask`` run of two rasters
goes this way (its :class:`Plan`); :func:`score_mosaic_files` runs it
(:func:`geoeval.engine.mosaic.score_mosaic`) and returns its
:class:`~geoeval.scoring.summary.ScoreSummary`, whose JSON report is the in-memory
engine's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from geoeval.grid import crs_code
from geoeval.scoring.summary import (
    OverlapSummary,
    ScoreSummary,
    SideSummary,
    added_sums,
    empty_sides,
    ilp_components,
    matcher_summary,
)


@dataclass(frozen=True)
class Plan:
    """Two rasters on one grid, ready to be scored by blocks."""

    sources: tuple[Any, Any]
    transform: Any
    crs: Any


def score_mosaic_files(client: Any, plan: Plan, reference_side: Any, submission_side: Any,
                       options: Any, *,
                       progress: Callable[[str], None] | None = None) -> ScoreSummary:
    """Score two label rasters (:class:`~geoeval.scoring.options.Side`) on one grid by
    blocks (:mod:`geoeval.engine.mosaic`) with the
    :class:`~geoeval.scoring.options.ScoreOptions` ``options``."""
    from geoeval.engine.mosaic import score_mosaic
    from geoeval.io.evaluation_crs import evaluation_record
    from geoeval.measures.mallows import pooling_warning
    from geoeval.sums import ExactSum

    reference, submission = reference_side.source, submission_side.source
    matchers = options.matchers
    res = score_mosaic(client, plan.sources, plan.transform, plan.crs, matchers=matchers,
                       params=options.matcher_arguments(), mallows=options.mallows_matchers,
                       approximate=options.approximate, progress=progress,
                       lists=options.lists)
    t = plan.transform
    union = ExactSum(int(res.union_pixels), abs(t.a * t.e - t.b * t.d))  # pixels, then area
    sides = [SideSummary(str(path), "raster", n, crs_code(plan.crs))
             for path, n in ((reference, res.n_reference), (submission, res.n_submission))]
    warnings = empty_sides(*sides, region=options.region is not None)
    results = {}
    for name in matchers:
        m = res.matchers[name]
        mal = m["mallows"]
        if mal is not None and mal["approximated"]:
            warnings.append(pooling_warning(name, int(mal["approximated"]),
                                            float(mal["max_error_bound"])))
        results[name] = matcher_summary(
            name, added_sums(res.n_reference, res.n_submission, m, union), m["kinds"],
            m["params"], m["solver"], mal, None if res.lists is None else res.lists[name])
    overlap = OverlapSummary("co-occurrence", res.pairs, res.components,
                             ilp_components({n: res.matchers[n]["solver"] for n in matchers}),
                             float(union))
    parameters = options.report_parameters(
        None if plan.crs is None else evaluation_record(plan.crs))
    return ScoreSummary(sides[0], sides[1], overlap, results, parameters, tuple(warnings),
                        partitions={"blocks": res.blocks, "cut_objects": res.cut_objects,
                                    "boundary_objects": res.boundary_objects})

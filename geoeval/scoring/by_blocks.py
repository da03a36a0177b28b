"""Scoring two label mosaics by blocks on a Dask cluster: summaries only in the client.

:func:`geoeval.scoring.dispatch.dispatch` says whether a ``dask`` run of two rasters
goes this way (its :class:`Plan`); :func:`score_mosaic_files` runs it
(:func:`geoeval.engine.mosaic.score_mosaic`) and returns a
:class:`~geoeval.scoring.by_partitions.PartitionedResult` whose JSON report is the
in-memory engine's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.matching import registry
from geoeval.measures import counts
from geoeval.scoring.by_partitions import PartitionedMatcher, PartitionedResult


@dataclass(frozen=True)
class Plan:
    """Two rasters on one grid, ready to be scored by blocks."""

    sources: tuple[Any, Any]
    transform: Any
    crs: Any


def _details(m: dict[str, Any] | None, scene: float | None) -> dict[str, Any] | None:
    """The report's ``mallows_details`` (:meth:`MallowsResult.to_dict` without the
    instances) from the blocks' added sums."""
    if m is None:
        return None
    approx = dict(m["approximation"])
    approx["n_approximated"] = int(m["approximated"])
    approx["max_error_bound"] = float(m["max_error_bound"])
    err = approx.get("measured_error", float("nan"))
    approx["measured_error"] = None if not np.isfinite(err) else float(err)
    return {"scene": scene, "method": m["method"], "grid": m["grid"],
            "pixel_steps": list(m["pixel_steps"]), "n_undefined": int(m["undefined"]),
            "solver": {k: int(m["solver"][k]) for k in sorted(m["solver"])},
            "approximation": approx}


def score_mosaic_files(client: Any, plan: Plan, reference_side: Any, submission_side: Any,
                       options: Any, *,
                       progress: Callable[[str], None] | None = None) -> PartitionedResult:
    """Score two label rasters (:class:`~geoeval.scoring.options.Side`) on one grid by
    blocks (:mod:`geoeval.engine.mosaic`) with the
    :class:`~geoeval.scoring.options.ScoreOptions` ``options``."""
    from geoeval.engine.mosaic import score_mosaic
    from geoeval.io import crs_name
    from geoeval.measures.mallows import pooling_warning

    reference, submission = reference_side.source, submission_side.source
    parameters = options.report_parameters(
        None if plan.crs is None else {"crs": crs_name(plan.crs), "rule": "the reference's CRS"})

    matchers = options.matchers
    res = score_mosaic(client, plan.sources, plan.transform, plan.crs, matchers=matchers,
                       params=options.matcher_arguments(), mallows=options.mallows_matchers,
                       approximate=options.approximate, progress=progress,
                       lists=options.lists)
    t = plan.transform
    pixel_area = abs(t.a * t.e - t.b * t.d)
    union_area = float(res.union_pixels) * pixel_area
    sides = []
    warnings: list[str] = []
    for path, n, name, effect in (
            (reference, res.n_reference, "reference",
             "recall is undefined and every detection is a false alarm"),
            (submission, res.n_submission, "submission",
             "every reference object is missed (F1 0)")):
        sides.append({"path": str(path), "input_type": "raster", "objects": n,
                      "crs": None if plan.crs is None else plan.crs.to_string(),
                      "repaired": 0, "skipped": 0})
        if not n:
            warnings.append(f"{path}: the {name} has no objects: every pixel is background; "
                            f"{effect}")
    results = {}
    for name in matchers:
        m = res.matchers[name]
        mal = m["mallows"]
        sums = dict.fromkeys(counts.SUMS, 0.0)
        sums.update(matched_area=m["matched_overlap"], union_area=union_area,
                    score_sum=m["score_sum"], score_n=m["score_n"],
                    mallows_sum=0.0 if mal is None else mal["sum"],
                    mallows_n=0 if mal is None else mal["n"])
        values = counts.measures_from_sums(registry.accuracy_rule(name), sums,
                                           mallows=mal is not None)
        scene = counts.as_number(values["mallows"]) if mal is not None else None
        if mal is not None and mal["approximated"]:
            warnings.append(pooling_warning(name, int(mal["approximated"]),
                                            float(mal["max_error_bound"])))
        results[name] = PartitionedMatcher(
            name, res.n_reference, res.n_submission, m["missed"], m["false_alarms"],
            float(m["matched_overlap"]), counts.as_number(values["accuracy"]), m["kinds"],
            m["params"], m["solver"], scene, _details(mal, scene),
            None if res.lists is None else res.lists[name])
    mom = res.matchers.get("mom")
    overlap = {"method": "co-occurrence", "pairs": res.pairs, "components": res.components,
               "components_solved_by_ilp": None if mom is None else mom["solver"].get("ilp", 0),
               "union_area": union_area}
    return PartitionedResult(sides[0], sides[1], overlap, results, dict(parameters),
                             tuple(warnings), None,
                             {"blocks": res.blocks, "cut_objects": res.cut_objects,
                              "boundary_objects": res.boundary_objects})



"""Scoring two label mosaics by blocks on a Dask cluster: summaries only in the client.

:func:`mosaic_plan` says whether a ``dask`` run of two rasters goes this way;
:func:`score_mosaic_files` runs it (:func:`geoeval.engine.mosaic.score_mosaic`)
and returns a :class:`~geoeval.scoring.partitioned.PartitionedResult` whose JSON
report has the keys and values of the in-memory engine's report except the
per-object lists (``instances``, ``missed_ids``, ``false_alarm_ids``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.matching import registry
from geoeval.measures import counts
from geoeval.scoring.partitioned import PartitionedMatcher, PartitionedResult


@dataclass(frozen=True)
class Plan:
    """Two rasters on one grid, ready to be scored by blocks."""

    sources: tuple[Any, Any]
    transform: Any
    crs: Any


def mosaic_plan(reference: Any, submission: Any, ref_opts: dict[str, Any],
                sub_opts: dict[str, Any], options: Any,
                objects: Any = None) -> Plan | str | None:
    """A :class:`Plan` when a ``dask`` run of these inputs goes by blocks; ``None`` when
    they are not two raster files; else why not (a warning: the run then reads both
    rasters in the client). Only the files' headers are read."""
    from geoeval.grid import same_crs
    from geoeval.io import _both_raster_files
    from geoeval.io.evaluation_crs import unsuitable
    from geoeval.io.raster import open_source

    ro = {k: v for k, v in ref_opts.items() if v is not None}
    so = {k: v for k, v in sub_opts.items() if v is not None}
    if not _both_raster_files(reference, submission, ro, so):
        return None
    keep = ("band", "background")
    rs, rt, rc = open_source(reference, **{k: v for k, v in ro.items() if k in keep})
    ss, st, sc = open_source(submission, **{k: v for k, v in so.items() if k in keep})
    if rs.shape != ss.shape or tuple(rt) != tuple(st) or not same_crs(rc, sc):
        return "the rasters are on different grids (resampling)"
    st = options.strata
    for name, value in (  # options that need every object in one process
            ("class_field", options.class_field),
            ("size_bins", None if st is None else st.size_bins),
            ("zones", None if st is None else st.zones), ("bootstrap", options.bootstrap),
            ("breakdown", options.breakdown or None),
            ("geometry_measures", options.geometry),
            ("evaluation_crs", options.evaluation_crs),
            ("crs", options.reference.readers.crs)):
        if value is not None:
            return f"{name}= is not computed by blocks yet"
    if any(o.get(k) is not None for o in (ref_opts, sub_opts) for k in ("crs", "max_memory")):
        return "a CRS or memory limit given for one side is not read by blocks yet"
    if rc is not None and unsuitable(rc) is not None:
        return "the rasters' CRS needs an evaluation CRS (reprojection)"
    if objects is not None:
        return "the objects dataset of label rasters is not written by blocks yet"
    return Plan((rs, ss), rt, rc)


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


def score_mosaic_files(client: Any, plan: Plan, reference: Any, submission: Any,
                       options: Any, *, parameters: dict[str, Any],
                       progress: Callable[[str], None] | None = None) -> PartitionedResult:
    """Score two label rasters on one grid by blocks (:mod:`geoeval.engine.mosaic`) with
    the :class:`~geoeval.scoring.options.ScoreOptions` ``options``; ``parameters`` is
    the report's ``parameters`` (:meth:`ScoreOptions.report_parameters`)."""
    from geoeval.engine.mosaic import score_mosaic
    from geoeval.measures.mallows import pooling_warning

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



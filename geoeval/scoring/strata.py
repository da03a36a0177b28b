"""Strata: the scene's measures by object size, by class and by zone.

Every object of both sides is put in exactly one stratum of each kind by a
property of its own (never of the object it is matched to):

* ``size``: its area (square CRS units) against the bin edges; bin ``k`` is
  ``[e_{k-1}, e_k)``, so an object whose area equals an edge goes to the
  upper bin (the larger objects' bin).
* ``zone``: the zone polygon containing its representative point
  (``shapely.point_on_surface``, always inside the object); a point on the
  border of several zones goes to the first of them in file order; an object
  in no zone goes to the stratum ``"outside"``.
* ``class``: its class (:mod:`geoeval.scoring.classes`, unchanged).

A stratum's scene is its references and its submitted objects with the
overlap restricted to them, matched afresh (:func:`geoeval.scoring.subset.score_subset`,
the per-class rule): a match that crosses strata (a large detection over a
small reference) is split, a miss in one stratum and a false alarm in the
other. The strata partition both sides, so their object counts add up to the
scene's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.reprs import counted, listed
from geoeval.scoring.result import MatcherResult
from geoeval.scoring.subset import Subset, score_groups

#: COCO's size edges in pixels (COCO detection evaluation page, cocodataset.org/#detection-eval,
#: for the data set of Lin et al. 2014: small < 32², medium < 96², large): scaled by the pixel
#: area of a raster input.
COCO_PIXEL_EDGES = (32.0 ** 2, 96.0 ** 2)
COCO_NAMES = ("small", "medium", "large")
OUTSIDE = "outside"


#: One stratum scored as a scene of its own (:class:`geoeval.scoring.subset.Subset`).
Stratum = Subset


@dataclass(frozen=True)
class StrataKind:
    """All strata of one kind (``size``, ``zone`` or ``class``).

    ``reference_labels`` / ``submission_labels`` give each object's stratum
    (the GeoPackage and CSV ``stratum_<kind>`` columns); ``definition`` says
    how objects were assigned (edges, zone file, ...).
    """

    kind: str
    definition: dict[str, Any]
    reference_labels: np.ndarray
    submission_labels: np.ndarray
    strata: dict[str, Stratum]

    def __repr__(self) -> str:
        sizes = listed([f"{n} {s.reference_index.size}/{s.submission_index.size}"
                        for n, s in self.strata.items()], 6)
        return (f"<StrataKind {self.kind}: {counted(len(self.strata), 'stratum', 'strata')} "
                f"(reference/submitted "
                f"objects): {sizes}>")

    def to_dict(self) -> dict[str, Any]:
        return {
            "definition": self.definition,
            "strata": {
                name: {
                    "reference_objects": int(s.reference_index.size),
                    "submission_objects": int(s.submission_index.size),
                    "results": {m: r.summary() for m, r in s.results.items()},
                    "bootstrap": None if s.bootstrap is None else s.bootstrap.intervals,
                }
                for name, s in self.strata.items()
            },
        }


@dataclass(frozen=True)
class Strata:
    """The JSON report's ``strata`` object: kind -> stratum -> measures."""

    kinds: dict[str, StrataKind]

    def __repr__(self) -> str:
        kinds = "; ".join(f"{k} ({listed(list(v.strata), 4)})" for k, v in self.kinds.items())
        return f"<Strata by {kinds}>"

    def to_dict(self) -> dict[str, Any]:
        return {kind: k.to_dict() for kind, k in self.kinds.items()}


def size_edges(size_bins: Sequence[float] | str, reference: ObjectSet | None,
               submission: ObjectSet | None, step: float | None = None
               ) -> tuple[np.ndarray, tuple[str, ...], str]:
    """Bin edges (square CRS units), stratum names and the rule that gave them.

    ``"coco"``: COCO's 32² and 96² pixels times the pixel area of the raster
    input (the reference's grid first); for two vector layers, the pixel is
    the square of the Mallows grid step chosen from the data
    (:func:`geoeval.measures.rasterize.auto_resolution`; the Dask engine, which holds
    no layer, gives that ``step`` and no object sets). A sequence: the edges
    themselves, increasing and positive.
    """
    if isinstance(size_bins, str):
        if size_bins.strip().lower() != "coco":
            try:
                size_bins = [float(v) for v in size_bins.split(",") if v.strip()]
            except ValueError:
                raise InputError(f"size_bins (--size-bins) takes 'coco' or increasing areas "
                                 f"separated by commas, got {size_bins!r}") from None
        else:
            grid = None if reference is None or submission is None else \
                reference.grid if reference.grid is not None else submission.grid
            if grid is not None:
                t = grid.transform
                pixel = abs(t.a * t.e - t.b * t.d)
                rule = f"COCO 32², 96² pixels × pixel area {pixel:g}"
            else:
                from geoeval.measures.rasterize import auto_resolution

                if reference is not None and submission is not None:
                    step = auto_resolution(reference, submission)
                if step is None:
                    raise InputError("size_bins='coco' needs a pixel size: no raster input and "
                                     "no objects to choose one; give the edges in square CRS "
                                     "units (--size-bins 100,900)")
                pixel = step * step
                rule = f"COCO 32², 96² pixels × (grid step {step:g})²"
            return np.asarray(COCO_PIXEL_EDGES) * pixel, COCO_NAMES, rule
    edges = np.asarray(list(size_bins), float)
    if edges.ndim != 1 or edges.size == 0 or not np.all(np.isfinite(edges)) \
            or np.any(edges <= 0) or np.any(np.diff(edges) <= 0):
        raise InputError(f"size_bins (--size-bins) must be increasing positive areas, "
                         f"got {list(size_bins)!r}")
    names = COCO_NAMES if edges.size == 2 else tuple(
        f"[{lo:g}, {hi:g})" for lo, hi in zip(np.r_[0.0, edges], np.r_[edges, np.inf],
                                             strict=True))
    return edges, names, "given"


def size_labels(areas: np.ndarray, edges: np.ndarray, names: Sequence[str]) -> np.ndarray:
    """Stratum of each area: bin ``k`` is ``[e_{k-1}, e_k)`` (an edge goes up)."""
    return np.asarray(names, dtype=object)[np.searchsorted(edges, areas, side="right")]


def read_zones(zones: str | Path | Any, zone_field: str | None, crs: Any) -> tuple[
        np.ndarray, np.ndarray]:
    """Zone polygons (in the scene's CRS) and their names, from a vector file or
    a GeoDataFrame; names from ``zone_field`` (default the feature number)."""
    import geopandas as gpd

    if isinstance(zones, gpd.GeoDataFrame):
        frame, where = zones, "zones"
    else:
        where = str(zones)
        if not Path(where).exists():
            raise InputError("zones file (--zones) not found", where)
        try:
            from geoeval.io.paths import local_path

            frame = gpd.read_file(local_path(where))
        except Exception as exc:  # pyogrio's errors name no option
            raise InputError(f"cannot read the zones (--zones): {exc}", where) from None
    if zone_field is not None and zone_field not in frame.columns:
        raise InputError(f"zone field (--zone-field) {zone_field!r} not in "
                         f"{[c for c in frame.columns if c != frame.geometry.name]}", where)
    if crs is not None and frame.crs is not None:
        frame = frame.to_crs(crs)
    names = (frame[zone_field] if zone_field is not None else frame.index).astype(str)
    names = np.asarray(names, dtype=object)
    if OUTSIDE in set(names):
        raise InputError(f"a zone is named {OUTSIDE!r}, the name of objects in no zone", where)
    return np.asarray(frame.geometry.values, dtype=object), names


def zone_labels(objects: ObjectSet, zone_geoms: np.ndarray, zone_names: np.ndarray) -> np.ndarray:
    """Zone of each object's representative point (first zone in file order on a
    shared border), ``"outside"`` for a point in no zone."""
    import shapely

    from geoeval.io.representative import representative_points

    out = np.full(len(objects), OUTSIDE, dtype=object)
    if len(objects) == 0 or zone_geoms.size == 0:
        return out
    points = representative_points(objects.polygons)
    obj, zone = shapely.STRtree(zone_geoms).query(points, predicate="intersects")
    if obj.size:
        order = np.lexsort((zone, obj))
        obj, zone = obj[order], zone[order]
        first = np.r_[True, obj[1:] != obj[:-1]]
        out[obj[first]] = zone_names[zone[first]]
    return out


def score_strata(
    reference: ObjectSet,
    submission: ObjectSet,
    overlap: Overlap,
    all_results: dict[str, MatcherResult],
    matcher_params: dict[str, dict[str, Any]],
    *,
    size_bins: Sequence[float] | str | None = None,
    zones: Any = None,
    zone_field: str | None = None,
    per_class: Any = None,
    mallows_options: dict[str, Any] | None = None,
) -> Strata | None:
    """Score every stratum of every kind asked for.

    Parameters
    ----------
    reference, submission, overlap, all_results, matcher_params, mallows_options
        The whole scene, as in :func:`geoeval.scoring.subset.score_subset`.
    size_bins : "coco" or sequence of float, optional
        Size strata (:func:`size_edges`).
    zones : path or GeoDataFrame, optional
        Zone polygons; ``zone_field`` names them.
    per_class : PerClass, optional
        The per-class results, shown again as the ``class`` strata (not rescored).

    Returns
    -------
    Strata or None
        ``None`` when no stratification was asked for.
    """
    kinds: dict[str, StrataKind] = {}
    if size_bins is not None:
        edges, names, rule = size_edges(size_bins, reference, submission)
        rl = size_labels(reference.areas, edges, names)
        sl = size_labels(submission.areas, edges, names)
        definition = {"edges": edges.tolist(), "unit": "square CRS units",
                      "bins": "[lower, upper): an area on an edge goes to the upper bin",
                      "rule": rule}
        kinds["size"] = _kind("size", definition, rl, sl, list(names), reference, submission,
                              overlap, all_results, matcher_params, mallows_options)
    if zones is not None:
        geoms, names = read_zones(zones, zone_field, reference.crs)
        rl = zone_labels(reference, geoms, names)
        sl = zone_labels(submission, geoms, names)
        definition = {"zones": zones if isinstance(zones, str) else str(zones)
                      if isinstance(zones, Path) else "<memory>",
                      "field": zone_field, "rule": "zone containing the object's "
                      "representative point; first zone on a shared border; else 'outside'"}
        order = list(dict.fromkeys(names.tolist())) + [OUTSIDE]
        kinds["zone"] = _kind("zone", definition, rl, sl, order, reference, submission,
                              overlap, all_results, matcher_params, mallows_options)
    if per_class is not None:
        from geoeval.scoring.classes import class_labels, inherit_classes

        ref_cls = class_labels(reference.classes)
        sub_cls = class_labels(submission.classes)
        if sub_cls is None:
            sub_cls = inherit_classes(overlap, ref_cls)
        strata = dict(per_class.classes)  # the classes' own results, not rescored
        kinds["class"] = StrataKind("class", {"source": per_class.submission_classes},
                                    ref_cls, sub_cls, strata)
    return Strata(kinds) if kinds else None


def _kind(kind: str, definition: dict[str, Any], ref_labels: np.ndarray,
          sub_labels: np.ndarray, names: list[str], reference: ObjectSet,
          submission: ObjectSet, overlap: Overlap, all_results: dict[str, MatcherResult],
          matcher_params: dict[str, dict[str, Any]],
          mallows_options: dict[str, Any] | None) -> StrataKind:
    # no object outside every zone: no such stratum
    strata = score_groups(reference, submission, overlap, ref_labels, sub_labels, names,
                          all_results, matcher_params, mallows_options,
                          optional=(OUTSIDE,) if kind == "zone" else ())
    return StrataKind(kind, definition, ref_labels, sub_labels, strata)


def bootstrap_strata(strata: Strata, scene_bootstrap: Any) -> Strata:
    """Each stratum's intervals from the scene's blocks and draws (same grid, seed
    and replicates: :func:`geoeval.scoring.bootstrap.bootstrap_scene` on the stratum)."""
    from dataclasses import replace

    from geoeval.scoring.bootstrap import bootstrap_scene

    b = scene_bootstrap
    kinds = {}
    for kind, k in strata.kinds.items():
        new = {name: replace(s, bootstrap=bootstrap_scene(
            s.overlap.reference, s.overlap.submission, s.overlap, s.results, n=b.n, seed=b.seed,
            confidence=b.confidence, grid=b.grid)) for name, s in k.strata.items()}
        kinds[kind] = replace(k, strata=new)
    return Strata(kinds)

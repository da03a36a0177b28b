"""Geometry measures on request: Panoptic Quality, Clinton et al.'s over- and
under-segmentation, PoLiS and Boundary IoU (``docs/geometry-measures.md``).

PQ and Clinton's measures are the scene's own (PQ has its own IoU > 0.5
matching); PoLiS and Boundary IoU are computed per one-to-one instance of each
matcher that ran (the pair whose outlines are compared).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval import validate
from geoeval.encoding import number
from geoeval.errors import InputError
from geoeval.matching.result import Matching
from geoeval.overlap import Overlap

#: measure names (the CLI also takes ``boundary-iou``)
GEOMETRY_MEASURES = ("pq", "clinton", "polis", "boundary_iou")
#: Boundary IoU bands: the polygons' exact distance band (default) or the reference
#: code's pixel erosion (:mod:`geoeval.measures.boundary_band`)
BOUNDARY_BANDS = ("distance", "raster")


def check_boundary_band(band: str) -> str:
    """``band`` if it is one of :data:`BOUNDARY_BANDS`, else :class:`InputError`."""
    if band not in BOUNDARY_BANDS:
        raise InputError(f"Boundary IoU band must be one of {', '.join(BOUNDARY_BANDS)}, "
                         f"got {band!r}")
    return band


def parse_measures(measures: Sequence[str] | str | None) -> tuple[str, ...]:
    """The measures asked for, as a tuple of :data:`GEOMETRY_MEASURES` names.

    Accepts a sequence or a comma-separated string; ``-`` and ``_`` are the same;
    ``all`` is every measure. :class:`InputError` on an unknown name.
    """
    if measures is None:
        return ()
    items = measures.split(",") if isinstance(measures, str) else list(measures)
    names = [str(m).strip().lower().replace("-", "_") for m in items]
    names = [n for n in names if n]
    if "all" in names:
        return GEOMETRY_MEASURES
    bad = [n for n in names if n not in GEOMETRY_MEASURES]
    if bad:
        raise InputError(f"unknown geometry measure {bad[0]!r} (choose from pq, clinton, "
                         "polis, boundary-iou, all)")
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True, eq=False)
class PairValues:
    """One value per one-to-one instance of a matching (NaN where undefined)."""

    reference: np.ndarray  # reference indices
    submission: np.ndarray  # submission indices
    values: np.ndarray

    def to_dict(self, rid: np.ndarray, sid: np.ndarray) -> dict[str, Any]:
        ok = self.values[~np.isnan(self.values)]
        return {
            "pairs": int(self.values.size),
            "defined": int(ok.size),
            "mean": float(ok.mean()) if ok.size else None,
            "median": float(np.median(ok)) if ok.size else None,
            "reference_ids": rid[self.reference].tolist(),
            "submission_ids": sid[self.submission].tolist(),
            "values": [number(v) for v in self.values.tolist()],
        }


@dataclass(frozen=True, eq=False)
class GeometryMeasures:
    """The geometry measures of a scene; :meth:`to_dict` is the report's ``geometry`` key."""

    measures: tuple[str, ...]
    pq: Any = None  # geoeval.measures.panoptic.PanopticQuality
    clinton: Any = None  # geoeval.measures.clinton.ClintonSegmentation
    polis: dict[str, PairValues] | None = None
    boundary_iou: dict[str, PairValues] | None = None
    boundary_width: float | None = None
    ref_ids: np.ndarray | None = None
    sub_ids: np.ndarray | None = None
    boundary_band: str = "distance"
    boundary_pixels: int | None = None  # d of the raster band

    def to_dict(self) -> dict[str, Any]:
        from geoeval.measures.boundary_iou import WIDTH_RULE

        rid, sid = self.ref_ids, self.sub_ids
        out: dict[str, Any] = {"measures": list(self.measures)}
        if self.pq is not None:
            out["pq"] = self.pq.to_dict()
        if self.clinton is not None:
            out["clinton"] = self.clinton.to_dict()
        if self.polis is not None:
            out["polis"] = {n: v.to_dict(rid, sid) for n, v in self.polis.items()}
        if self.boundary_iou is not None:
            if self.boundary_band == "raster":
                from geoeval.measures.boundary_band import RULE as RASTER_RULE

                rule = ("given (CRS units), rounded to whole pixels"
                        if self.boundary_width is not None else RASTER_RULE)
            else:
                rule = "given (CRS units)" if self.boundary_width is not None else WIDTH_RULE
            out["boundary_iou"] = {
                "band": self.boundary_band,
                "width": self.boundary_width,
                "width_pixels": self.boundary_pixels,
                "width_rule": rule,
                "matchers": {n: v.to_dict(rid, sid) for n, v in self.boundary_iou.items()},
            }
        return out


def one_to_one_pairs(m: Matching) -> tuple[np.ndarray, np.ndarray]:
    """Reference and submission indices of the one-to-one instances of ``m``."""
    a = m.arrays
    k = np.flatnonzero(a.kind == 0)
    return a.ref_idx[a.ref_ptr[k]], a.sub_idx[a.sub_ptr[k]]


def geometry_measures(
    overlap: Overlap,
    matchings: Mapping[str, Matching],
    measures: Sequence[str] | str,
    *,
    boundary_width: float | None = None,
    boundary_band: str = "distance",
) -> GeometryMeasures:
    """Compute the geometry measures asked for.

    Parameters
    ----------
    overlap : Overlap
    matchings : mapping of matcher name to Matching
        PoLiS and Boundary IoU are computed on each one's one-to-one instances.
    measures : sequence of str or str
        See :func:`parse_measures`.
    boundary_width : float, optional
        Boundary IoU band width ``d`` in CRS units; default 2 % of each reference
        object's bounding-box diagonal (:mod:`geoeval.measures.boundary_iou`), or
        for the raster band the reference code's 2 % of the image diagonal.
    boundary_band : {'distance', 'raster'}
        ``distance``: the polygons' exact band of points within ``d`` of the
        outline; ``raster``: the reference code's band (erosion by a 3 × 3 square
        ``d`` times, :mod:`geoeval.measures.boundary_band`), for two label rasters
        on one grid.

    Returns
    -------
    GeometryMeasures
    """
    names = parse_measures(measures)
    validate.positive("boundary_width", boundary_width)
    check_boundary_band(boundary_band)
    kw: dict[str, Any] = {}
    pixels = None
    if "pq" in names:
        from geoeval.measures.panoptic import panoptic_quality

        kw["pq"] = panoptic_quality(overlap)
    if "clinton" in names:
        from geoeval.measures.clinton import clinton_segmentation

        kw["clinton"] = clinton_segmentation(overlap)
    if "polis" in names or "boundary_iou" in names:
        from geoeval.measures.boundary_iou import boundary_iou
        from geoeval.measures.polis import polis

        rg, sg = overlap.reference.polygons, overlap.submission.polygons
        pairs = {n: one_to_one_pairs(m) for n, m in matchings.items()}
        if "polis" in names:
            kw["polis"] = {n: PairValues(r, s, polis(rg[r], sg[s]))
                           for n, (r, s) in pairs.items()}
        if "boundary_iou" in names and boundary_band == "raster":
            pixels, kw["boundary_iou"] = _raster_boundary_iou(overlap, pairs, boundary_width)
        elif "boundary_iou" in names:
            pixel = _pixel_size(overlap)
            kw["boundary_iou"] = {n: PairValues(r, s, boundary_iou(rg[r], sg[s],
                                                                   boundary_width,
                                                                   min_width=pixel))
                                  for n, (r, s) in pairs.items()}
    return GeometryMeasures(names, boundary_width=boundary_width,
                            ref_ids=overlap.reference.ids, sub_ids=overlap.submission.ids,
                            boundary_band=boundary_band, boundary_pixels=pixels, **kw)


def _raster_boundary_iou(overlap: Overlap, pairs: Mapping[str, tuple[np.ndarray, np.ndarray]],
                         width: float | None) -> tuple[int, dict[str, PairValues]]:
    """The reference code's pixel band for every matcher's pairs (one pass over the
    rasters for all of them); ``d`` from ``width`` in whole pixels, else 2 % of the
    image diagonal."""
    from geoeval.measures.boundary_band import raster_boundary_iou, reference_dilation

    rg, sg = overlap.reference.grid, overlap.submission.grid
    if rg is None or sg is None or not rg.same_grid(sg):
        raise InputError("the raster Boundary IoU band (--boundary-iou-band raster) needs "
                         "two labelled rasters on one grid; use the distance band for "
                         "vector layers")
    d = (reference_dilation(rg.shape) if width is None
         else max(1, int(round(width / _pixel_size(overlap)))))
    if not pairs:
        return d, {}
    names = list(pairs)
    r = np.concatenate([pairs[n][0] for n in names])
    s = np.concatenate([pairs[n][1] for n in names])
    values = raster_boundary_iou(rg, sg, overlap.reference.ids[r],
                                 overlap.submission.ids[s], d)
    cuts = np.cumsum([pairs[n][0].size for n in names])[:-1]
    return d, {n: PairValues(pairs[n][0], pairs[n][1], v)
               for n, v in zip(names, np.split(values, cuts), strict=True)}


def _pixel_size(overlap: Overlap) -> float:
    """The larger pixel side of the inputs that are labelled rasters (0 for none)."""
    sides = [max(abs(g.transform.a), abs(g.transform.e))
             for g in (overlap.reference.grid, overlap.submission.grid) if g is not None]
    return float(max(sides, default=0.0))

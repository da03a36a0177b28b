"""Boundary IoU (Cheng, Girshick, Dollár, Berg and Kirillov 2021, "Boundary IoU:
Improving Object-Centric Image Segmentation Evaluation", CVPR, §4, eq. 2).

    Boundary IoU(G, P) = |(G_d ∩ G) ∩ (P_d ∩ P)| / |(G_d ∩ G) ∪ (P_d ∩ P)|

``G_d ∩ G`` is the inner boundary band of ``G``: its points within distance
``d`` of its contour, ``G`` minus ``G`` eroded by ``d``. The paper works on
binary masks (erosion by ``d`` pixels); here the band is exact on the polygons,
``G.difference(G.buffer(-d))``, with ``d`` in CRS units. On pixel-edge polygons
of axis-aligned rectangles and a whole number of pixels the two agree exactly;
at reflex corners the polygon band is rounded (Euclidean), the mask band square.

The paper sets ``d`` to 2 % of the image diagonal. A geographic scene has no
image size that means anything for one object, so by default ``d`` is 2 % of the
diagonal of the reference object's bounding box (:func:`default_width`): the
measure is then scale-free, one band per pair, shared by both of its objects.
Like the official code (which never erodes by less than one pixel), the default
is at least one pixel when an input is a labelled raster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from geoeval.overlap import iou_values

#: the paper's dilation ratio, applied to the reference object's bounding-box diagonal
WIDTH_RATIO = 0.02
WIDTH_RULE = ("2 % of the diagonal of the reference object's bounding box, "
              "at least one pixel for rasters")


def default_width(geoms: np.ndarray, minimum: float = 0.0) -> np.ndarray:
    """``d`` of each object: 2 % of the diagonal of its bounding box, at least ``minimum``."""
    b = shapely.bounds(np.asarray(geoms, dtype=object))
    return np.maximum(WIDTH_RATIO * np.hypot(b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]), minimum)


def inner_band(geoms: np.ndarray, width: np.ndarray | float) -> np.ndarray:
    """``G ∩ G_d``: the part of each geometry within ``width`` of its boundary."""
    geoms = np.asarray(geoms, dtype=object)
    return shapely.difference(geoms, shapely.buffer(geoms, -np.asarray(width, float),
                                                    quad_segs=16))


def boundary_iou(g: np.ndarray, p: np.ndarray, width: np.ndarray | float | None = None,
                 *, min_width: float = 0.0) -> np.ndarray:
    """Boundary IoU of each pair ``(g[k], p[k])``; NaN where both bands are empty.

    Parameters
    ----------
    g, p : numpy.ndarray of shapely (Multi)Polygons
        Reference (ground truth) and submitted objects, one pair per position.
    width : float or numpy.ndarray, optional
        Band width ``d`` in CRS units, one for all or one per pair. Default
        :func:`default_width` of ``g``.
    min_width : float
        Lower bound of the default width (the pixel size for rasters).

    Returns
    -------
    numpy.ndarray of float
    """
    g, p = np.asarray(g, dtype=object), np.asarray(p, dtype=object)
    d = default_width(g, min_width) if width is None else np.broadcast_to(
        np.asarray(width, float), g.shape)
    from geoeval.parallel import chunked

    return chunked(_boundary_iou, g, p, np.ascontiguousarray(d, dtype=float))


def _boundary_iou(g: np.ndarray, p: np.ndarray, d: np.ndarray) -> np.ndarray:
    gb, pb = inner_band(g, d), inner_band(p, d)
    inter = shapely.area(shapely.intersection(gb, pb))
    return iou_values(inter, shapely.area(gb), shapely.area(pb), empty=np.nan)


@dataclass(frozen=True, eq=False)
class BoundaryIoUValues:
    """Boundary IoU of each matcher's one-to-one pairs, with its band: the report's
    ``boundary_iou`` entry (:meth:`to_dict`)."""

    pairs: Any  # geoeval.measures.geometry.PairsByMatcher
    band: str
    width: float | None
    width_pixels: int | None

    def to_dict(self) -> dict[str, Any]:
        if self.band == "raster":
            from geoeval.measures.boundary_band import RULE as RASTER_RULE

            rule = ("given (CRS units), rounded to whole pixels" if self.width is not None
                    else RASTER_RULE)
        else:
            rule = "given (CRS units)" if self.width is not None else WIDTH_RULE
        return {"band": self.band, "width": self.width, "width_pixels": self.width_pixels,
                "width_rule": rule, "matchers": self.pairs.to_dict()}


def boundary_iou_measure(overlap: Any, pairs: dict[str, tuple[np.ndarray, np.ndarray]], *,
                         boundary_width: float | None = None,
                         boundary_band: str = "distance", **_: Any) -> BoundaryIoUValues:
    """The registry's entry point (:mod:`geoeval.measures.geometry`): Boundary IoU of each
    matcher's one-to-one pairs, on the polygons' distance band, or the reference code's
    pixel band for two label rasters on one grid (``boundary_band="raster"``)."""
    from geoeval.measures.geometry import PairsByMatcher, PairValues, pixel_size

    pixels = None
    if boundary_band == "raster":
        pixels, values = _raster_boundary_iou(overlap, pairs, boundary_width)
    else:
        rg, sg = overlap.reference.polygons, overlap.submission.polygons
        pixel = pixel_size(overlap)
        values = {n: PairValues(r, s, boundary_iou(rg[r], sg[s], boundary_width,
                                                   min_width=pixel))
                  for n, (r, s) in pairs.items()}
    return BoundaryIoUValues(PairsByMatcher(values, overlap.reference.ids,
                                            overlap.submission.ids),
                             boundary_band, boundary_width, pixels)


def _raster_boundary_iou(overlap: Any, pairs: dict[str, tuple[np.ndarray, np.ndarray]],
                         width: float | None) -> tuple[int, dict[str, Any]]:
    """The reference code's pixel band for every matcher's pairs (one pass over the
    rasters for all of them); ``d`` from ``width`` in whole pixels, else 2 % of the
    image diagonal."""
    from geoeval.errors import InputError
    from geoeval.measures.boundary_band import raster_boundary_iou, reference_dilation
    from geoeval.measures.geometry import PairValues, pixel_size

    rg, sg = overlap.reference.grid, overlap.submission.grid
    if rg is None or sg is None or not rg.same_grid(sg):
        raise InputError("the raster Boundary IoU band (--boundary-iou-band raster) needs "
                         "two labelled rasters on one grid; use the distance band for "
                         "vector layers")
    d = (reference_dilation(rg.shape) if width is None
         else max(1, int(round(width / pixel_size(overlap)))))
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


def table_rows(entry: dict[str, Any]) -> list[tuple[str, str, Any, Any, Any]]:
    """The terminal table's rows of the report's ``boundary_iou`` entry: one per matcher."""
    return [("Boundary IoU", m, v["mean"], v["median"], v["pairs"])
            for m, v in entry["matchers"].items()]

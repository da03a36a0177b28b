"""Polygon segmentations of COCO annotations as :class:`~geoeval.io.boxes.Outlines`.

A COCO polygon ``segmentation`` is a list of rings, each a flat list
``[x1, y1, x2, y2, …]``; the object is the union of its rings (COCO has no
holes in polygon form). The building-polygon measures need the rings as
written: their vertices (counted from the first ring, as the papers' scripts
do), their outlines and their pixel masks. Reading keeps every coordinate as
written (a closing vertex repeated or not) in one ``(V, 2)`` array with offsets,
one pass per column, no Python object per vertex.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.io._outlines import Outlines


class NotPolygons(Exception):
    """A segmentation the polygon measures cannot use: a mask (RLE) or a missing
    segmentation instead of polygons, or a ring of fewer than three distinct vertices
    (COCO accepts it; a polygon it is not). ``index`` is the record, ``reason`` says
    what it holds."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(index, reason)
        self.index = index
        self.reason = reason


def read_rings(records: list[Any], path: str, what: str = "annotations") -> Outlines:
    """The polygon rings of COCO ``records`` (annotations or results), in order.

    The rings are read and checked by the COCO mask reader's own rules
    (:func:`geoeval.io._coco_segm.polygon_rings`: even numbers of finite
    coordinates, at least three points in the first ring, two in the others).

    Raises
    ------
    NotPolygons
        A segmentation that is RLE or missing, or a ring without three distinct
        vertices.
    InputError
        A malformed segmentation, naming the record.
    """
    from geoeval.io._coco_segm import polygon_rings

    segs = [r.get("segmentation") if isinstance(r, dict) else None for r in records]
    kinds = set(map(type, segs))
    if not kinds <= {list}:
        k = next(i for i, seg in enumerate(segs) if type(seg) is not list)
        raise NotPolygons(k, "an RLE mask" if isinstance(segs[k], dict) else
                          "no polygon segmentation")
    if not segs:
        return Outlines(np.zeros((0, 2)), np.zeros(1, np.int64), np.zeros(1, np.int64))
    coords, sizes, n_rings = polygon_rings(segs, lambda k: f"{path}: {what}[{k}]")
    ring_start = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    first_ring = np.r_[0, np.cumsum(n_rings)].astype(np.int64)
    xy = coords.reshape(-1, 2)
    flat = np.flatnonzero(_distinct_vertices(xy, ring_start) < 3)
    if flat.size:
        k = int(np.searchsorted(first_ring, flat[0], side="right") - 1)
        raise NotPolygons(k, "a ring of fewer than three distinct vertices")
    return Outlines(xy, ring_start, first_ring)


def _distinct_vertices(coords: np.ndarray, ring_start: np.ndarray) -> np.ndarray:
    """Vertices of each ring besides a repeated closing one."""
    sizes = np.diff(ring_start)
    first, last = coords[ring_start[:-1]], coords[ring_start[1:] - 1]
    return sizes - (first == last).all(axis=1)

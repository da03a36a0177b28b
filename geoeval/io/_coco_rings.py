"""Polygon segmentations of COCO annotations as flat arrays (see :class:`Rings`).

A COCO polygon ``segmentation`` is a list of rings, each a flat list
``[x1, y1, x2, y2, …]``; the object is the union of its rings (COCO has no
holes in polygon form). The building-polygon measures need the rings as
written: their vertices (counted from the first ring, as the papers' scripts
do), their outlines and their pixel masks. Reading keeps every coordinate as
written (a closing vertex repeated or not) in one ``(V, 2)`` array with offsets,
one pass per column, no Python object per vertex.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely


@dataclass(frozen=True)
class Rings:
    """The polygon rings of ``n`` annotations.

    Attributes
    ----------
    coords : numpy.ndarray
        ``(V, 2)`` float64 vertices of every ring, as written.
    ring_start : numpy.ndarray
        ``(R + 1,)`` int64: ring ``r`` is ``coords[ring_start[r]:ring_start[r + 1]]``.
    first_ring : numpy.ndarray
        ``(n + 1,)`` int64: annotation ``k`` has rings ``first_ring[k]:first_ring[k + 1]``
        (at least one).
    """

    coords: np.ndarray
    ring_start: np.ndarray
    first_ring: np.ndarray

    def __len__(self) -> int:
        return int(self.first_ring.size - 1)

    @property
    def n_rings(self) -> np.ndarray:
        """Rings of each annotation."""
        return np.diff(self.first_ring)

    @property
    def ring_owner(self) -> np.ndarray:
        """Annotation of each ring."""
        return np.repeat(np.arange(len(self)), self.n_rings)

    @property
    def ring_sizes(self) -> np.ndarray:
        """Vertices written in each ring (a repeated closing vertex included)."""
        return np.diff(self.ring_start)

    def first_ring_sizes(self) -> np.ndarray:
        """Vertices written in each annotation's first ring: the papers' vertex count
        ``len(segmentation[0]) // 2``."""
        return self.ring_sizes[self.first_ring[:-1]]

    def ring_polygons(self, rings: np.ndarray | None = None) -> np.ndarray:
        """One shapely Polygon per ring (all rings, or those at ``rings``), closed
        where the ring was written open, as ``shapely.Polygon(ring)`` makes it."""
        r = np.arange(self.ring_sizes.size) if rings is None else np.asarray(rings)
        if r.size == 0:
            return np.empty(0, dtype=object)
        sizes = self.ring_sizes[r]
        idx = np.repeat(self.ring_start[r], sizes) + (
            np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes))
        lr = shapely.linearrings(self.coords[idx], indices=np.repeat(np.arange(r.size), sizes))
        return shapely.polygons(lr)

    def rings_of(self, annotations: np.ndarray) -> np.ndarray:
        """Indices of the rings of ``annotations`` (integer array), in that order."""
        annotations = np.asarray(annotations, dtype=np.int64)
        return _ranges(self.first_ring[annotations], self.n_rings[annotations])

    def first_polygons(self) -> np.ndarray:
        """Each annotation's first ring as a Polygon."""
        return self.ring_polygons(self.first_ring[:-1])

    def subset(self, index: np.ndarray) -> Rings:
        """The rings of the annotations at ``index`` (integer array), in that order."""
        index = np.asarray(index, dtype=np.int64)
        rings = self.rings_of(index)
        sizes = self.ring_sizes[rings]
        verts = _ranges(self.ring_start[rings], sizes)
        return Rings(self.coords[verts], np.r_[0, np.cumsum(sizes)].astype(np.int64),
                     np.r_[0, np.cumsum(self.n_rings[index])].astype(np.int64))


def _ranges(start: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``concatenate([arange(s, s + c) for s, c in zip(start, count)])``."""
    total = int(count.sum())
    return np.repeat(start, count) + (np.arange(total) - np.repeat(np.cumsum(count) - count,
                                                                   count))


class NotPolygons(Exception):
    """A segmentation the polygon measures cannot use: a mask (RLE) or a missing
    segmentation instead of polygons, or a ring of fewer than three distinct vertices
    (COCO accepts it; a polygon it is not). ``index`` is the record, ``reason`` says
    what it holds."""

    def __init__(self, index: int, reason: str) -> None:
        super().__init__(index, reason)
        self.index = index
        self.reason = reason


def read_rings(records: list[Any], path: str, what: str = "annotations") -> Rings:
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
        return Rings(np.zeros((0, 2)), np.zeros(1, np.int64), np.zeros(1, np.int64))
    coords, sizes, n_rings = polygon_rings(segs, lambda k: f"{path}: {what}[{k}]")
    ring_start = np.r_[0, np.cumsum(sizes)].astype(np.int64)
    first_ring = np.r_[0, np.cumsum(n_rings)].astype(np.int64)
    xy = coords.reshape(-1, 2)
    flat = np.flatnonzero(_distinct_vertices(xy, ring_start) < 3)
    if flat.size:
        k = int(np.searchsorted(first_ring, flat[0], side="right") - 1)
        raise NotPolygons(k, "a ring of fewer than three distinct vertices")
    return Rings(xy, ring_start, first_ring)


def _distinct_vertices(coords: np.ndarray, ring_start: np.ndarray) -> np.ndarray:
    """Vertices of each ring besides a repeated closing one."""
    sizes = np.diff(ring_start)
    first, last = coords[ring_start[:-1]], coords[ring_start[1:] - 1]
    return sizes - (first == last).all(axis=1)

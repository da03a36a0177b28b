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

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from geoeval.errors import InputError


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
    """An annotation's segmentation is run-length encoded (a mask, not polygons)."""

    def __init__(self, index: int) -> None:
        super().__init__(index)
        self.index = index


def read_rings(records: list[Any], path: str, what: str = "annotations") -> Rings:
    """The polygon rings of COCO ``records`` (annotations or results), in order.

    Raises
    ------
    NotPolygons
        When a segmentation is run-length encoded (a dict): the polygon measures
        cannot use it (the caller says so).
    InputError
        A missing or malformed ``segmentation`` (not a list of rings; a ring not
        a flat list of finite numbers, of odd length, or with fewer than three
        vertices besides a repeated closing one), naming the record.
    """
    segs = [r.get("segmentation") if isinstance(r, dict) else None for r in records]
    fast = _columns(segs)
    if fast is not None:
        return fast
    for i, s in enumerate(segs):  # name the first bad record
        _check(s, f"{path}: {what}[{i}]", i)
    raise AssertionError("unreachable: a bad segmentation was not named")


def _columns(segs: list[Any]) -> Rings | None:
    """:func:`read_rings` when every segmentation is well formed, else ``None``."""
    if not segs or not set(map(type, segs)) <= {list}:
        return None if segs else Rings(np.zeros((0, 2)), np.zeros(1, np.int64),
                                       np.zeros(1, np.int64))
    per_ann = np.fromiter(map(len, segs), dtype=np.int64, count=len(segs))
    rings = list(itertools.chain.from_iterable(segs))
    if (per_ann == 0).any() or not set(map(type, rings)) <= {list}:
        return None
    lengths = np.fromiter(map(len, rings), dtype=np.int64, count=len(rings))
    if (lengths % 2).any() or (lengths < 6).any():
        return None
    flat = itertools.chain.from_iterable(rings)
    if not set(map(type, itertools.chain.from_iterable(rings))) <= {int, float}:
        return None
    try:
        coords = np.fromiter(flat, dtype=float, count=int(lengths.sum())).reshape(-1, 2)
    except OverflowError:
        return None
    if not np.isfinite(coords).all():
        return None
    ring_start = np.r_[0, np.cumsum(lengths // 2)].astype(np.int64)
    if (_distinct_vertices(coords, ring_start) < 3).any():
        return None
    return Rings(coords, ring_start, np.r_[0, np.cumsum(per_ann)].astype(np.int64))


def _distinct_vertices(coords: np.ndarray, ring_start: np.ndarray) -> np.ndarray:
    """Vertices of each ring besides a repeated closing one."""
    sizes = np.diff(ring_start)
    first, last = coords[ring_start[:-1]], coords[ring_start[1:] - 1]
    return sizes - (first == last).all(axis=1)


def _check(seg: Any, where: str, index: int) -> None:
    """Raise the error :func:`_columns` stands for, if ``seg`` is bad."""
    if isinstance(seg, dict):
        raise NotPolygons(index)
    if seg is None:
        raise InputError("missing 'segmentation' (polygon rings)", where)
    if not isinstance(seg, list) or not seg:
        raise InputError("segmentation must be a non-empty list of polygon rings "
                         f"[x1, y1, x2, y2, ...], got {_short(seg)}", where)
    for k, ring in enumerate(seg):
        if not isinstance(ring, list) or not all(
                isinstance(v, (int, float)) and not isinstance(v, bool) for v in ring):
            raise InputError(f"segmentation ring {k} must be a list of numbers, "
                             f"got {_short(ring)}", where)
        if len(ring) % 2:
            raise InputError(f"segmentation ring {k} has an odd number of coordinates "
                             f"({len(ring)})", where)
        try:
            values = [float(v) for v in ring]
        except OverflowError:
            values = [math.inf]
        if not all(math.isfinite(v) for v in values):
            raise InputError(f"segmentation ring {k} holds a value that is not finite", where)
        xy = np.asarray(values).reshape(-1, 2)
        distinct = len(xy) - (len(xy) > 0 and bool((xy[0] == xy[-1]).all()))
        if distinct < 3:
            raise InputError(f"segmentation ring {k} has {distinct} vertices: a polygon "
                             "needs at least 3", where)


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

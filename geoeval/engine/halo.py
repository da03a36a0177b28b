"""The halo of a partition: the objects of other partitions that may share area with
its own (the *solve* step's inputs, :mod:`geoeval.engine.layers`).

A partition's footprint is its extent cut into :data:`FOOTPRINT_CELLS`² cells, the
cells some object's bounding box meets; an object of another partition is in the halo
when its bounding box meets one of those cells (a superset of the objects sharing area
with the partition's objects: boxes that overlap meet a common cell). Only partitions
whose extents meet (:func:`neighbours`) are tested.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from geoeval.engine.parts import Part, extent
from geoeval.parallel import gc_paused

#: Cells a side of a partition's footprint (the halo test).
FOOTPRINT_CELLS = 256


@dataclass(frozen=True)
class Footprint:
    """Where a partition's objects are: its extent cut into :data:`FOOTPRINT_CELLS`²
    cells, ``table`` the summed-area table of the cells some object's bounding box
    meets (a halo test in O(1) an object, exact on the cells)."""

    extent: tuple[float, float, float, float]
    table: np.ndarray

    def cells(self, b: np.ndarray) -> tuple[np.ndarray, ...]:
        """Cell ranges ``(i0, i1, j0, j1)`` of bounding boxes ``b``, clipped to the grid."""
        x0, y0, x1, y1 = self.extent
        g = FOOTPRINT_CELLS
        w = (x1 - x0) / g or 1.0
        h = (y1 - y0) / g or 1.0

        def cell(v: np.ndarray, o: float, size: float) -> np.ndarray:
            return np.clip(np.floor((v - o) / size), 0, g - 1).astype(np.int64)

        return (cell(b[:, 0], x0, w), cell(b[:, 2], x0, w), cell(b[:, 1], y0, h),
                cell(b[:, 3], y0, h))


@gc_paused
def footprint(part: Part) -> Footprint:
    """A partition's :class:`Footprint` (runs on a worker)."""
    g = FOOTPRINT_CELLS
    ext = extent(part)
    fp = Footprint(ext, np.zeros((g + 1, g + 1), np.int64))
    if not len(part):
        return fp
    i0, i1, j0, j1 = fp.cells(part.bounds)
    diff = np.zeros((g + 1, g + 1), np.int64)  # 2-D difference array of the boxes
    np.add.at(diff, (j0, i0), 1)
    np.add.at(diff, (j0, i1 + 1), -1)
    np.add.at(diff, (j1 + 1, i0), -1)
    np.add.at(diff, (j1 + 1, i1 + 1), 1)
    covered = np.cumsum(np.cumsum(diff, 0), 1)[:g, :g] > 0
    fp.table[1:, 1:] = np.cumsum(np.cumsum(covered, 0), 1)
    return fp


def extent_of(fp: Footprint) -> tuple[float, float, float, float]:
    return fp.extent


@gc_paused
def halo(part: Part, fp: Footprint) -> Part:
    """The objects of ``part`` whose bounding box meets a cell of another partition's
    footprint ``fp`` (a superset of those sharing area with that partition's objects:
    boxes that overlap meet a common cell)."""
    b = part.bounds
    x0, y0, x1, y1 = fp.extent
    near = np.flatnonzero((b[:, 0] <= x1) & (b[:, 2] >= x0) & (b[:, 1] <= y1)
                          & (b[:, 3] >= y0))
    i0, i1, j0, j1 = fp.cells(b[near])
    t = fp.table
    hits = t[j1 + 1, i1 + 1] - t[j0, i1 + 1] - t[j1 + 1, i0] + t[j0, i0]
    return part.take(near[hits > 0], attributes=False)  # only owned rows are written


def neighbours(extents: np.ndarray) -> list[list[int]]:
    """For each partition, the other partitions whose extents meet its extent."""
    ok = np.isfinite(extents).all(axis=1)
    x0, y0, x1, y1 = (extents[:, i] for i in range(4))
    import shapely

    boxes = shapely.box(np.where(ok, x0, 0), np.where(ok, y0, 0), np.where(ok, x1, 0),
                        np.where(ok, y1, 0))
    a, b = shapely.STRtree(boxes).query(boxes, predicate="intersects")
    keep = (a != b) & ok[a] & ok[b]
    out: list[list[int]] = [[] for _ in range(len(extents))]
    for p, q in zip(a[keep].tolist(), b[keep].tolist(), strict=True):
        out[p].append(q)
    return out

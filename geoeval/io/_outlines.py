"""Object outlines of a box data set, columnar: rings of vertices in flat arrays.

A :class:`~geoeval.io.boxes.BoxSet` whose objects are not axis-aligned boxes
(oriented boxes given by four corners, instance polygons) carries them as an
:class:`Outlines`: every vertex in one ``(V, 2)`` array, ring and object offsets
beside it (the layout of GeoArrow's multipolygons, without holes). Nothing is
built per object: the axis-aligned boxes, the areas and the shapely geometry
are derived from the flat arrays on request, vectorised.

Private to :mod:`geoeval.io.boxes`, which re-exports :class:`Outlines`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Outlines:
    """Each object's outline: one or more rings of vertices, as given.

    Attributes
    ----------
    coords : numpy.ndarray
        ``(V, 2)`` float64 ``x, y`` of every vertex, ring after ring, each ring
        as the input gives it (clockwise, counter-clockwise or self-intersecting;
        open, or closed by repeating its first vertex as COCO polygons may be:
        kept as written, the vertex counts of the building-polygon measures depend
        on it).
    ring_offsets : numpy.ndarray
        ``(R + 1,)`` int64: ring ``r`` is ``coords[ring_offsets[r]:ring_offsets[r + 1]]``.
    object_offsets : numpy.ndarray
        ``(n + 1,)`` int64: object ``k`` is made of rings
        ``object_offsets[k]:object_offsets[k + 1]`` (several rings: the parts of
        one instance, as in a COCO polygon segmentation; no holes).

    Examples
    --------
    >>> o = Outlines.from_quads(np.array([[0., 0, 4, 0, 4, 2, 0, 2], [1., 1, 3, 1, 2, 3, 2, 3]]))
    >>> len(o), o.bounds().tolist()
    (2, [[0.0, 0.0, 4.0, 2.0], [1.0, 1.0, 3.0, 3.0]])
    >>> o.quads()[1].tolist()
    [[1.0, 1.0], [3.0, 1.0], [2.0, 3.0], [2.0, 3.0]]
    """

    coords: np.ndarray
    ring_offsets: np.ndarray
    object_offsets: np.ndarray

    def __len__(self) -> int:
        return int(self.object_offsets.size - 1)

    def __repr__(self) -> str:
        return (f"<Outlines of {len(self)} objects: {self.ring_offsets.size - 1} rings, "
                f"{len(self.coords)} vertices>")

    @classmethod
    def from_quads(cls, corners: np.ndarray) -> Outlines:
        """Outlines of quadrilaterals given as ``(n, 8)`` ``x1 y1 … x4 y4`` (or ``(n, 4, 2)``)."""
        c = np.ascontiguousarray(np.asarray(corners, dtype=float).reshape(-1, 4, 2))
        n = c.shape[0]
        return cls(c.reshape(-1, 2), np.arange(0, 4 * n + 1, 4, dtype=np.int64),
                   np.arange(n + 1, dtype=np.int64))

    @classmethod
    def from_rings(cls, rings: list[np.ndarray]) -> Outlines:
        """One ring per object, each an ``(m, 2)`` array (``m >= 3``)."""
        sizes = np.array([len(r) for r in rings], dtype=np.int64)
        coords = (np.concatenate([np.asarray(r, dtype=float).reshape(-1, 2) for r in rings])
                  if rings else np.zeros((0, 2)))
        return cls(coords, np.r_[0, np.cumsum(sizes)].astype(np.int64),
                   np.arange(len(rings) + 1, dtype=np.int64))

    @property
    def ring_sizes(self) -> np.ndarray:
        """Vertices of each ring."""
        return np.diff(self.ring_offsets)

    def quads(self) -> np.ndarray | None:
        """``(n, 4, 2)`` corners when every object is one ring of four vertices, else ``None``."""
        if self.ring_offsets.size - 1 != len(self) or np.any(self.ring_sizes != 4):
            return None
        return self.coords.reshape(-1, 4, 2)

    def bounds(self) -> np.ndarray:
        """``(n, 4)`` axis-aligned bounding box ``x1, y1, x2, y2`` of each object."""
        n = len(self)
        if n == 0:
            return np.zeros((0, 4))
        q = self.quads()
        if q is not None:  # four columns at a time (a reduction over an axis of 4 is slow)
            x, y = q[:, :, 0], q[:, :, 1]
            return np.column_stack([
                np.minimum(np.minimum(x[:, 0], x[:, 1]), np.minimum(x[:, 2], x[:, 3])),
                np.minimum(np.minimum(y[:, 0], y[:, 1]), np.minimum(y[:, 2], y[:, 3])),
                np.maximum(np.maximum(x[:, 0], x[:, 1]), np.maximum(x[:, 2], x[:, 3])),
                np.maximum(np.maximum(y[:, 0], y[:, 1]), np.maximum(y[:, 2], y[:, 3]))])
        starts = self.ring_offsets[self.object_offsets[:-1]]
        lo = np.minimum.reduceat(self.coords, starts, axis=0)
        hi = np.maximum.reduceat(self.coords, starts, axis=0)
        return np.column_stack([lo, hi])

    def take(self, index: np.ndarray) -> Outlines:
        """The outlines of objects ``index`` (integer or boolean), in that order."""
        idx = np.arange(len(self))[np.asarray(index)]
        rings = _ranges(self.object_offsets[idx], self.object_offsets[idx + 1])
        verts = _ranges(self.ring_offsets[rings], self.ring_offsets[rings + 1])
        ring_sizes = self.ring_sizes[rings]
        n_rings = self.object_offsets[idx + 1] - self.object_offsets[idx]
        return Outlines(self.coords[verts], np.r_[0, np.cumsum(ring_sizes)].astype(np.int64),
                        np.r_[0, np.cumsum(n_rings)].astype(np.int64))

    def rings_of(self, objects: np.ndarray) -> np.ndarray:
        """Indices of the rings of ``objects`` (integer array), in that order."""
        objects = np.asarray(objects, dtype=np.int64)
        return _ranges(self.object_offsets[objects], self.object_offsets[objects + 1])

    def ring_polygons(self, rings: np.ndarray | None = None) -> np.ndarray:
        """One shapely Polygon per ring (every ring, or those at ``rings``), closed where
        the ring is written open, as ``shapely.Polygon(ring)`` makes it."""
        import shapely

        r = np.arange(self.ring_sizes.size) if rings is None else np.asarray(rings, np.int64)
        if r.size == 0:
            return np.zeros(0, dtype=object)
        sizes = self.ring_sizes[r]
        verts = _ranges(self.ring_offsets[r], self.ring_offsets[r + 1])
        rings_ = shapely.linearrings(self.coords[verts],
                                     indices=np.repeat(np.arange(r.size), sizes))
        return shapely.polygons(rings_)

    def geometry(self) -> np.ndarray:
        """A shapely array, one (multi)polygon per object, built vectorised (on request).

        Vertices are kept as given: a self-intersecting ring makes an invalid
        polygon (``shapely.is_valid`` is false), as written in the input.
        """
        import shapely

        n = len(self)
        if n == 0:
            return np.zeros(0, dtype=object)
        polys = self.ring_polygons()
        if self.ring_offsets.size - 1 == n:
            return polys
        n_rings = np.diff(self.object_offsets)
        single = n_rings == 1
        out = np.empty(n, dtype=object)
        out[single] = polys[self.object_offsets[:-1][single]]
        multi = np.flatnonzero(~single)
        if multi.size:
            parts = _ranges(self.object_offsets[multi], self.object_offsets[multi + 1])
            owner = np.repeat(np.arange(multi.size), n_rings[multi])
            out[multi] = shapely.multipolygons(polys[parts], indices=owner)
        return out

    def nbytes(self) -> int:
        """Bytes held by the three arrays."""
        return int(self.coords.nbytes + self.ring_offsets.nbytes + self.object_offsets.nbytes)


def _ranges(start: np.ndarray, stop: np.ndarray) -> np.ndarray:
    """``concatenate([arange(a, b) for a, b in zip(start, stop)])``, vectorised."""
    start = np.asarray(start, dtype=np.int64)
    count = np.asarray(stop, dtype=np.int64) - start
    total = int(count.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    first = np.cumsum(count) - count
    return np.repeat(start - first, count) + np.arange(total, dtype=np.int64)


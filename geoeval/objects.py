"""The object model every stage shares: :class:`ObjectSet` and :class:`LabelGrid`.

An :class:`ObjectSet` is what a reader returns and what :mod:`geoeval.overlap`
consumes: one row per object (id, area, optional class, confidence and image
key) plus either polygon geometries (vector layers, boxes) or a label grid
(labelled rasters), or both. Geometry of a raster is derived lazily, by
vectorising along pixel edges, only when a stage needs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np


@dataclass(frozen=True)
class LabelGrid:
    """A labelled raster on a georeferenced grid.

    Attributes
    ----------
    labels : numpy.ndarray
        2-D integer array. Pixels equal to ``background`` belong to no object
        (nodata has already been mapped to ``background`` by the reader).
    transform : affine.Affine
        Pixel-to-CRS transform (rasterio convention, pixel corners).
    crs : rasterio.crs.CRS or None
        Coordinate reference system, ``None`` if the file has none.
    background : int
        The background label value.
    """

    labels: np.ndarray
    transform: Any
    crs: Any
    background: int = 0

    @property
    def shape(self) -> tuple[int, int]:
        return tuple(self.labels.shape)  # type: ignore[return-value]

    @property
    def pixel_area(self) -> float:
        """Area of one pixel in square CRS units (absolute determinant)."""
        t = self.transform
        return abs(t.a * t.e - t.b * t.d)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(minx, miny, maxx, maxy) of the whole grid in CRS units."""
        h, w = self.labels.shape
        t = self.transform
        xs = [t.c, t.c + t.a * w, t.c + t.b * h, t.c + t.a * w + t.b * h]
        ys = [t.f, t.f + t.d * w, t.f + t.e * h, t.f + t.d * w + t.e * h]
        return (min(xs), min(ys), max(xs), max(ys))

    def same_grid(self, other: LabelGrid) -> bool:
        """True when both grids have the same shape, transform and CRS."""
        return (
            self.labels.shape == other.labels.shape
            and tuple(self.transform) == tuple(other.transform)
            and _same_crs(self.crs, other.crs)
        )


def label_index(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position of each label value in the sorted label array ``ids``.

    The comparison runs in the dtype of ``values`` (the raster's own integer
    type, which holds every id since the ids were taken from it), so labels are
    never promoted to float: ``uint64`` labels above 2**53 stay distinct.

    Examples
    --------
    >>> ids = np.array([2**53, 2**53 + 1], dtype=np.int64)
    >>> label_index(ids, np.array([2**53 + 1, 2**53], dtype=np.uint64)).tolist()
    [1, 0]
    """
    values = np.asarray(values)
    ids = np.asarray(ids)
    if values.dtype.kind in "iu" and ids.dtype != values.dtype:
        ids = ids.astype(values.dtype)
    return np.searchsorted(ids, values)


def _same_crs(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a == b


@dataclass(frozen=True)
class ObjectSet:
    """A set of objects (reference or submission), in one coordinate system.

    Attributes
    ----------
    ids : numpy.ndarray
        Object ids as the user knows them: raster label values, the vector id
        field, or the feature index. Unique.
    areas : numpy.ndarray
        Area of each object (float, square CRS units; pixels times pixel area
        for rasters).
    crs : Any
        A ``pyproj.CRS``/``rasterio`` CRS, or ``None`` (shared coordinates).
    geometry : numpy.ndarray or None
        Shapely (Multi)Polygons, one per object, or ``None`` for a raster whose
        geometry has not been asked for (see :attr:`polygons`).
    grid : LabelGrid or None
        The label grid for raster inputs; ``ids`` are its label values.
    classes : numpy.ndarray or None
        Class label of each object, if the input has one.
    scores : numpy.ndarray or None
        Detection confidence of each object, if any.
    image : numpy.ndarray or None
        Image / scene / frame key of each object for multi-image data sets.
    path, kind : str
        Where the objects came from and how (``raster``, ``vector``, ``boxes``,
        ``memory``).
    repaired, skipped : int
        Invalid geometries repaired with ``make_valid`` / features skipped
        (empty or non-polygonal) by the reader.
    """

    ids: np.ndarray
    areas: np.ndarray
    crs: Any = None
    geometry: np.ndarray | None = None
    grid: LabelGrid | None = None
    classes: np.ndarray | None = None
    scores: np.ndarray | None = None
    image: np.ndarray | None = None
    path: str = "<memory>"
    kind: str = "memory"
    repaired: int = 0
    skipped: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @cached_property
    def polygons(self) -> np.ndarray:
        """Shapely geometries of the objects (vectorised along pixel edges for rasters)."""
        if self.geometry is not None:
            return self.geometry
        if self.grid is None:
            raise ValueError("ObjectSet has neither geometry nor a label grid")
        from geoeval.io.raster import vectorize_grid

        return vectorize_grid(self.grid, self.ids)

    @classmethod
    def from_geometries(
        cls,
        geometries: Any,
        ids: Any = None,
        *,
        crs: Any = None,
        classes: Any = None,
        scores: Any = None,
        image: Any = None,
        path: str = "<memory>",
        kind: str = "memory",
    ) -> ObjectSet:
        """Build an object set from shapely polygons (in memory, no file).

        Parameters
        ----------
        geometries : sequence of shapely geometries
        ids : sequence, optional
            Object ids; default ``0..n-1``.
        """
        import shapely

        geoms = np.asarray(geometries, dtype=object)
        if geoms.ndim != 1:
            geoms = geoms.reshape(-1)
        n = geoms.shape[0]
        ids_arr = np.arange(n) if ids is None else np.asarray(ids)
        if ids_arr.shape[0] != n:
            raise ValueError(f"{n} geometries but {ids_arr.shape[0]} ids")
        return cls(
            ids=ids_arr,
            areas=shapely.area(geoms).astype(float) if n else np.zeros(0),
            crs=crs,
            geometry=geoms,
            classes=None if classes is None else np.asarray(classes),
            scores=None if scores is None else np.asarray(scores, dtype=float),
            image=None if image is None else np.asarray(image),
            path=path,
            kind=kind,
        )

    def subset(self, index: np.ndarray) -> ObjectSet:
        """The objects at ``index`` (integer or boolean array); the grid is dropped."""
        idx = np.asarray(index)

        def take(a: np.ndarray | None) -> np.ndarray | None:
            return None if a is None else a[idx]

        return ObjectSet(
            ids=self.ids[idx],
            areas=self.areas[idx],
            crs=self.crs,
            geometry=self.polygons[idx],
            classes=take(self.classes),
            scores=take(self.scores),
            image=take(self.image),
            path=self.path,
            kind=self.kind,
        )

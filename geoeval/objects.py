"""The object model every stage shares: :class:`ObjectSet` (grids: :mod:`geoeval.grid`).

An :class:`ObjectSet` is what a reader returns and what :mod:`geoeval.overlap`
consumes: one row per object (id, area, optional class, confidence and image
key) plus either polygon geometries (vector layers, boxes) or a label grid
(labelled rasters), or both. Geometry of a raster is derived lazily, by
vectorising along pixel edges, only when a stage needs it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np

from geoeval.errors import InputError
from geoeval.grid import LabelGrid


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
    path, input_type : str
        Where the objects came from and what they were (``raster``, ``vector``,
        ``boxes``, ``memory``).
    repaired, skipped : int
        Invalid geometries repaired with ``make_valid`` / features skipped
        (empty or non-polygonal) by the reader.
    read_crs : Any
        The CRS the input was read in, when the objects have been brought into
        another since (reprojected, resampled, or given the reference's equal CRS);
        ``None`` when :attr:`crs` is it. :attr:`input_crs` is the one the report
        records.
    attributes : pandas.DataFrame or None
        The input layer's own attribute columns (geometry columns excluded), one
        row per object in object order (a ``RangeIndex``): what the per-object
        outputs carry as ``ref_<name>`` / ``sub_<name>`` columns. ``None`` for
        inputs without attributes (labelled rasters, boxes), for a layer read without
        them (a score that writes no per-object output reads only its id and class
        fields) and for a :meth:`subset`.
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
    input_type: str = "memory"
    repaired: int = 0
    skipped: int = 0
    warnings: tuple[str, ...] = field(default_factory=tuple)
    read_crs: Any = None
    attributes: Any = field(default=None, compare=False, repr=False)

    def __repr__(self) -> str:
        what = "label grid" if self.grid is not None else "geometries"
        from geoeval.reprs import counted

        return (f"<ObjectSet {counted(len(self), 'object')} ({self.input_type}, {what}) from "
                f"{self.path}>")

    @property
    def input_crs(self) -> Any:
        """The CRS of the input as it was read (:attr:`crs` unless it changed since)."""
        return self.crs if self.read_crs is None else self.read_crs

    def in_crs(self, crs: Any, **changes: Any) -> ObjectSet:
        """These objects in ``crs`` (with ``changes``: their new geometry, areas …),
        remembering the CRS they were read in."""
        return replace(self, crs=crs, read_crs=self.input_crs, **changes)

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    @cached_property
    def self_overlaps(self) -> tuple[np.ndarray, np.ndarray]:
        """Pairs ``(a, b)``, ``a < b``, of objects of this set that share a positive
        area (one STRtree self-query, cached). Empty for a label grid (one label per
        pixel); objects that only touch are not pairs."""
        import shapely

        none = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        if len(self) < 2 or self.grid is not None:
            return none
        geoms = self.polygons
        from geoeval.parallel import chunked, query

        a, b = query(self.strtree, geoms, "intersects")
        keep = a < b
        a, b = a[keep], b[keep]
        if a.size == 0:
            return none

        shared = chunked(lambda x, y: shapely.area(shapely.intersection(x, y)),
                         geoms[a], geoms[b]) > 0
        return a[shared].astype(np.int64), b[shared].astype(np.int64)

    @cached_property
    def strtree(self) -> Any:
        """A ``shapely.STRtree`` of :attr:`polygons` (built once, cached): the
        self-query and the overlap with the other side share it."""
        import shapely

        return shapely.STRtree(self.polygons)

    @cached_property
    def polygons(self) -> np.ndarray:
        """Shapely geometries of the objects (vectorised along pixel edges for rasters)."""
        if self.geometry is not None:
            return self.geometry
        if self.grid is None:
            raise InputError("ObjectSet has neither geometry nor a label grid")
        from geoeval.grid import vectorize_grid

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
        input_type: str = "memory",
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
            raise InputError(f"{n} geometries but {ids_arr.shape[0]} ids")
        return cls(
            ids=ids_arr,
            areas=shapely.area(geoms).astype(float) if n else np.zeros(0),
            crs=crs,
            geometry=geoms,
            classes=None if classes is None else np.asarray(classes),
            scores=None if scores is None else np.asarray(scores, dtype=float),
            image=None if image is None else np.asarray(image),
            path=path,
            input_type=input_type,
        )

    def subset(self, index: np.ndarray) -> ObjectSet:
        """The objects at ``index`` (integer or boolean array); the grid and the
        attribute table are dropped (the subsets of classes and strata are scored, never
        written: the per-object outputs take the attributes of the whole set)."""
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
            input_type=self.input_type,
        )


def check_boxes(boxes: np.ndarray, name: str) -> np.ndarray:
    b = np.asarray(boxes, dtype=float).reshape(-1, 4)
    if np.any(b[:, 2] < b[:, 0]) or np.any(b[:, 3] < b[:, 1]):
        raise InputError(f"{name}: boxes must have right >= left and bottom >= top")
    return b


def box_area(boxes: np.ndarray, *, plus_one: bool = False) -> np.ndarray:
    """Area of axis-aligned boxes ``(x1, y1, x2, y2)``.

    With ``plus_one`` the PASCAL VOC devkit's pixel-inclusive convention
    ``(x2 − x1 + 1)(y2 − y1 + 1)`` is used.
    """
    b = check_boxes(boxes, "boxes")
    e = 1.0 if plus_one else 0.0
    return (b[:, 2] - b[:, 0] + e) * (b[:, 3] - b[:, 1] + e)

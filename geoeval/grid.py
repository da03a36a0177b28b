"""Label grids in memory: :class:`LabelGrid`, label lookup, areas, vectorising.

The lowest stage of the pipeline above :mod:`geoeval.errors`: plain arrays and
an affine transform, no files. Readers (:mod:`geoeval.io.raster`) build a
:class:`LabelGrid`; :mod:`geoeval.objects` derives polygons from one lazily.
"""

from __future__ import annotations

from dataclasses import dataclass
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

    def __repr__(self) -> str:
        h, w = self.labels.shape
        return f"<LabelGrid {w} x {h} {self.labels.dtype}, background {self.background}>"

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
            and same_crs(self.crs, other.crs)
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


def same_crs(a: Any, b: Any) -> bool:
    """True when two CRS (any form pyproj accepts, or ``None``) are the same.

    ``None`` equals only ``None``. Two local (engineering) CRS with the same
    name, axes and units are the same grid, whatever driver wrote them.

    Examples
    --------
    >>> same_crs("EPSG:4326", "epsg:4326"), same_crs(None, None), same_crs(None, "EPSG:4326")
    (True, True, False)
    """
    if type(a) is type(b) and a == b:  # cheap path, no pyproj import
        return True
    from pyproj import CRS

    try:
        ca, cb = CRS.from_user_input(a), CRS.from_user_input(b)
    except Exception:
        return a == b
    if ca == cb:
        return True
    # One local / engineering grid written by two drivers (GDAL's GeoTIFF writer drops
    # the LOCAL_DATUM a GeoPackage keeps): same name, axes and units is the same grid.
    eng = "Engineering CRS"
    return (ca.type_name == cb.type_name == eng and ca.name == cb.name
            and [(x.direction, x.unit_name) for x in ca.axis_info]
            == [(x.direction, x.unit_name) for x in cb.axis_info])


# Above this many distinct values per pixel, np.unique is used instead of bincount.
_BINCOUNT_FACTOR = 4


def label_areas(labels: np.ndarray, background: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-background labels (sorted) and their pixel counts.

    Uses ``np.bincount`` when the labels are small non-negative integers (one
    pass, no sort) and ``np.unique`` otherwise (labels need not be ``1..n``).
    Labels stay exact for every integer dtype: the ids are ``int64`` unless a
    ``uint64`` label exceeds ``2**63 - 1``, then ``uint64`` (never float).
    """
    flat = labels.ravel()
    if flat.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if flat.dtype.kind == "u" and flat.dtype.itemsize <= 2:  # no range scan needed
        lo, hi = 0, int(np.iinfo(flat.dtype).max)
    else:
        lo, hi = int(flat.min()), int(flat.max())
    if lo >= 0 and hi <= max(_BINCOUNT_FACTOR * flat.size, 1 << 16):
        # in slices: bincount casts each slice to intp itself (no whole-raster int64
        # copy, which for a large uint32 grid cost more time than the counting)
        step = max(1 << 22, hi + 1)
        counts = np.bincount(flat[:step], minlength=hi + 1)
        for i in range(step, flat.size, step):
            counts += np.bincount(flat[i:i + step], minlength=hi + 1)
        if 0 <= background <= hi:
            counts[background] = 0
        ids = np.flatnonzero(counts)
        return ids.astype(np.int64), counts[ids]
    ids, counts = np.unique(flat, return_counts=True)
    keep = ids != background
    return _id_array(ids[keep], hi), counts[keep]


def _id_array(ids: np.ndarray, hi: int) -> np.ndarray:
    """Label ids as ``int64`` when every one fits, else (huge ``uint64`` labels) ``uint64``."""
    if hi > np.iinfo(np.int64).max:
        return ids.astype(np.uint64)
    return ids.astype(np.int64)


def vectorize_grid(grid: LabelGrid, ids: np.ndarray) -> np.ndarray:
    """Polygons of each label (along pixel edges), aligned with ``ids``.

    Pieces of one label become one MultiPolygon. Areas equal pixel counts times
    the pixel area exactly (up to floating point).
    """
    import shapely
    from rasterio.features import shapes
    from shapely.geometry import shape

    ids = np.asarray(ids)
    out = np.empty(ids.size, dtype=object)
    if ids.size == 0:
        return out
    mask = grid.labels != grid.background
    # rasterio.features.shapes needs a 32-bit type: vectorise object positions + 1.
    index = np.zeros(grid.labels.shape, dtype=np.int32)
    index[mask] = label_index(ids, grid.labels[mask]).astype(np.int32) + 1
    pieces, owner = [], []
    for geom, value in shapes(index, mask=mask, transform=grid.transform, connectivity=4):
        pieces.append(shape(geom))
        owner.append(int(value) - 1)
    pieces_arr = np.asarray(pieces, dtype=object)
    owner_arr = np.asarray(owner, dtype=np.int64)
    order = np.argsort(owner_arr, kind="stable")
    pieces_arr, owner_arr = pieces_arr[order], owner_arr[order]
    counts = np.bincount(owner_arr, minlength=ids.size)
    single = counts[owner_arr] == 1
    out[owner_arr[single]] = pieces_arr[single]
    multi = ~single
    if multi.any():
        owners, inverse = np.unique(owner_arr[multi], return_inverse=True)
        out[owners] = shapely.multipolygons(pieces_arr[multi], indices=inverse)
    return out

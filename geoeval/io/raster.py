"""Labelled rasters: one integer label per object (any GDAL raster).

``SPEC.md`` §1: an object is every pixel holding one non-background label; it
may be several disconnected pieces. Nodata counts as background.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError, first_line
from geoeval.objects import LabelGrid, ObjectSet

# Above this many distinct values per pixel, np.unique is used instead of bincount.
_BINCOUNT_FACTOR = 4


def label_areas(labels: np.ndarray, background: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-background labels (sorted) and their pixel counts.

    Uses ``np.bincount`` when the labels are small non-negative integers (one
    pass, no sort) and ``np.unique`` otherwise (labels need not be ``1..n``).
    """
    flat = labels.ravel()
    if flat.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if flat.dtype.kind == "u" and flat.dtype.itemsize <= 2:  # no range scan needed
        lo, hi = 0, int(np.iinfo(flat.dtype).max)
    else:
        lo, hi = int(flat.min()), int(flat.max())
    if lo >= 0 and hi <= max(_BINCOUNT_FACTOR * flat.size, 1 << 16):
        small = flat.dtype.itemsize <= 2  # bincount casts these safely itself
        counts = np.bincount(flat if small else flat.astype(np.intp), minlength=hi + 1)
        if 0 <= background <= hi:
            counts[background] = 0
        ids = np.flatnonzero(counts)
        return ids.astype(np.int64), counts[ids]
    ids, counts = np.unique(flat, return_counts=True)
    keep = ids != background
    return ids[keep].astype(np.int64), counts[keep]


def read_raster(
    path: str | Path, *, band: int = 1, background: int = 0
) -> ObjectSet:
    """Read a labelled raster as an :class:`~geoeval.objects.ObjectSet`.

    Parameters
    ----------
    path : str or Path
        Any raster GDAL can open (GeoTIFF, PNG, VRT, …).
    band : int
        1-based band index holding the labels.
    background : int
        Label value of the background. The band's nodata value, if any, is
        mapped to it.

    Returns
    -------
    ObjectSet
        ``ids`` are the distinct non-background labels (sorted ascending),
        ``areas`` their pixel counts times the pixel area, ``grid`` the labels.

    Raises
    ------
    InputError
        The file cannot be opened, the band does not exist, or its data type is
        not an integer type.
    """
    import rasterio
    from rasterio.errors import RasterioIOError

    try:
        src = rasterio.open(path)
    except RasterioIOError as exc:
        raise InputError(f"cannot open as a raster ({first_line(exc)})", path) from None
    with src:
        if not 1 <= band <= src.count:
            raise InputError(f"band {band} does not exist (the raster has {src.count})", path)
        dtype = np.dtype(src.dtypes[band - 1])
        if dtype.kind not in "iu":
            raise InputError(
                f"band {band} has data type {dtype.name}; a labelled raster needs integer labels",
                path,
            )
        labels = src.read(band)
        nodata = src.nodatavals[band - 1]
        transform = src.transform
        crs = src.crs if src.crs else None
    if nodata is not None and not np.isnan(nodata) and int(nodata) != background:
        labels = np.where(labels == int(nodata), np.asarray(background, labels.dtype), labels)
    return objects_from_labels(labels, transform, crs, background=background, path=str(path))


def objects_from_labels(
    labels: np.ndarray,
    transform: Any = None,
    crs: Any = None,
    *,
    background: int = 0,
    path: str = "<memory>",
) -> ObjectSet:
    """An :class:`ObjectSet` from a label array already in memory.

    ``transform`` defaults to the identity (pixel units, y down as in rasterio).
    """
    from affine import Affine

    labels = np.asarray(labels)
    if labels.ndim != 2 or labels.dtype.kind not in "iu":
        raise InputError("labels must be a 2-D integer array", path)
    transform = Affine.identity() if transform is None else transform
    grid = LabelGrid(labels=labels, transform=transform, crs=crs, background=int(background))
    ids, counts = label_areas(labels, background)
    return ObjectSet(
        ids=ids,
        areas=counts.astype(float) * grid.pixel_area,
        crs=crs,
        grid=grid,
        path=path,
        kind="raster" if path != "<memory>" else "memory",
    )


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
    index[mask] = np.searchsorted(ids, grid.labels[mask]).astype(np.int32) + 1
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


def resample_to_grid(objects: ObjectSet, target: LabelGrid) -> ObjectSet:
    """Resample a labelled raster onto another grid (nearest neighbour)."""
    from rasterio.warp import Resampling, reproject

    src = objects.grid
    assert src is not None
    bg = src.background
    dtype = np.result_type(src.labels.dtype, np.min_scalar_type(bg))
    dest = np.full(target.labels.shape, bg, dtype=dtype)
    reproject(
        source=src.labels.astype(dtype, copy=False),
        destination=dest,
        src_transform=src.transform,
        src_crs=src.crs,
        dst_transform=target.transform,
        dst_crs=target.crs if target.crs is not None else src.crs,
        src_nodata=bg,
        dst_nodata=bg,
        resampling=Resampling.nearest,
    )
    out = objects_from_labels(dest, target.transform, target.crs, background=bg, path=objects.path)
    return ObjectSet(
        ids=out.ids,
        areas=out.areas,
        crs=target.crs,
        grid=out.grid,
        path=objects.path,
        kind=objects.kind,
    )


"""A label raster's part for a region: the region's window, grown until its labels
are whole, and its labels that belong.

The labels with a pixel in the region's window (:func:`seed_window`) are read whole:
the window grows where one of them reaches its edge (:func:`raster_window`); a label
belongs when the representative point of its pixels' outline is in the region
(:func:`region_labels`), every other pixel is background. Two rasters on one grid
are read in one window (:func:`shared_window`), so they stay on one grid; the Dask
engine scans that window's blocks (:class:`RegionSource`, :func:`region_blocks`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from geoeval.io.region import Region, short_name
from geoeval.io.representative import inside
from geoeval.io.windowed import RasterSource

#: Pixels a raster window first grows by on a side a label crosses (then twice as many).
GROW_PIXELS = 32


def seed_window(shape: tuple[int, int], transform: Any, bounds: Sequence[float]
                ) -> tuple[int, int, int, int] | None:
    """The pixel window ``(row0, row1, col0, col1)`` (ends exclusive) covering
    ``bounds`` on a grid of ``shape`` and ``transform``, rounded outwards and clipped to
    the grid; ``None`` when the region misses the raster."""
    inv = ~transform
    x0, y0, x1, y1 = bounds
    corners = [(x, y) for x in (x0, x1) for y in (y0, y1)]
    cols = [inv.a * x + inv.b * y + inv.c for x, y in corners]
    rows = [inv.d * x + inv.e * y + inv.f for x, y in corners]
    r0, r1 = max(0, math.floor(min(rows))), min(shape[0], math.ceil(max(rows)))
    c0, c1 = max(0, math.floor(min(cols))), min(shape[1], math.ceil(max(cols)))
    if r0 >= r1 or c0 >= c1:
        return None
    return r0, r1, c0, c1


def raster_window(source: Any, transform: Any, region: Any
                  ) -> tuple[int, int, int, int] | None:
    """The window of a label raster (:class:`geoeval.io.windowed.RasterSource`) that
    holds whole every label with a pixel in the region's window (:func:`seed_window`):
    that window, grown on each side where one of those labels reaches its edge (by
    :data:`GROW_PIXELS` at first, twice as much each time that side grows again, out
    to the band's block boundaries, which GDAL reads whole anyway) until none does or
    the raster ends. Only these windows' blocks are read."""
    seed = seed_window(source.shape, transform, region.bounds)
    if seed is None:
        return None
    h, w = source.shape
    bh, bw = (max(1, int(b)) for b in source.block_shape)
    r0, r1, c0, c1 = seed
    steps = [GROW_PIXELS] * 4
    labels = None
    while True:
        arr = source.read((r0, r1, c0, c1))
        if labels is None:
            part = arr[seed[0] - r0:seed[1] - r0, seed[2] - c0:seed[3] - c0]
            labels = np.unique(part[part != source.background])
            if not labels.size:
                return seed
        mask = np.isin(arr, labels)
        rows, cols = mask.any(axis=1), mask.any(axis=0)
        grow = (rows[0] and r0 > 0, rows[-1] and r1 < h, cols[0] and c0 > 0,
                cols[-1] and c1 < w)
        if not any(grow):
            return r0, r1, c0, c1
        if grow[0]:
            r0 = max(0, (r0 - steps[0]) // bh * bh)
        if grow[1]:
            r1 = min(h, -(-(r1 + steps[1]) // bh) * bh)
        if grow[2]:
            c0 = max(0, (c0 - steps[2]) // bw * bw)
        if grow[3]:
            c1 = min(w, -(-(c1 + steps[3]) // bw) * bw)
        steps = [s * 2 if g else s for s, g in zip(steps, grow, strict=True)]


def region_labels(source: Any, transform: Any, crs: Any, region: Region
                  ) -> tuple[tuple[int, int, int, int], np.ndarray, np.ndarray]:
    """The window a label raster is read in for ``region`` (:attr:`Region.window`
    shared with the other raster of the pair, else :func:`raster_window`), its labels
    (background where no object) and the labels that belong: those with a pixel in the
    region's window, read whole, whose outline's representative point is in the
    region (:func:`inside`)."""
    from rasterio.windows import Window
    from rasterio.windows import transform as window_transform

    from geoeval.io.raster import objects_from_labels

    background = source.background
    geometry = region.in_crs(crs)
    seed = seed_window(source.shape, transform, geometry.bounds)
    window = region.window if region.window is not None else \
        raster_window(source, transform, geometry)
    if seed is None or window is None:  # the region misses the raster: no object
        window = seed or (0, 1, 0, 1)
        arr = np.full((window[1] - window[0], window[3] - window[2]), background,
                      dtype=np.dtype(source.dtype))
        return window, arr, np.zeros(0, dtype=arr.dtype)
    arr = source.read(window)
    part = arr[seed[0] - window[0]:seed[1] - window[0], seed[2] - window[2]:
               seed[3] - window[2]]
    labels = np.unique(part[part != background])
    r0, r1, c0, c1 = window
    at = window_transform(Window(c0, r0, c1 - c0, r1 - r0), transform)
    candidates = objects_from_labels(np.where(np.isin(arr, labels), arr, background), at,
                                     crs, background=background, path=source.path)
    return window, arr, candidates.ids[inside(candidates.polygons, geometry)]


def window_transform(transform: Any, window: tuple[int, int, int, int]) -> Any:
    """The transform of a window ``(row0, row1, col0, col1)`` of a grid."""
    from rasterio.windows import Window
    from rasterio.windows import transform as of_window

    r0, r1, c0, c1 = window
    return of_window(Window(c0, r0, c1 - c0, r1 - r0), transform)


def read_raster_region(path: Any, region: Region, *, band: int = 1, background: int = 0,
                       crs: Any = None) -> Any:
    """A label raster's objects in ``region`` (:func:`region_labels`; the others are
    background), on the window's grid."""
    from geoeval.io.raster import _assumed, objects_from_labels, open_source
    from geoeval.io.zipped import resolve

    path = resolve(path)
    source, transform, own = open_source(path, band=band, background=background)
    if own is None and crs is not None:
        own = _assumed(crs, path)
    window, arr, keep = region_labels(source, transform, own, region)
    return objects_from_labels(np.where(np.isin(arr, keep), arr, background),
                               window_transform(transform, window), own,
                               background=background, path=str(path))


@dataclass(frozen=True)
class RegionSource(RasterSource):
    """A label raster's window for a region, as a :class:`RasterSource` the Dask
    engine scans by blocks: ``offset`` (row, col) of the window in the file, ``keep``
    the labels that belong (:func:`region_labels`), every other pixel background."""

    offset: tuple[int, int] = (0, 0)
    keep: tuple[int, ...] = ()

    def written(self, window: Any, dataset: Any = None) -> Any:
        return window

    def read(self, window: Any, dataset: Any = None, out: np.ndarray | None = None
             ) -> np.ndarray:
        r0, r1, c0, c1 = window
        dr, dc = self.offset
        labels = RasterSource.read(self, (r0 + dr, r1 + dr, c0 + dc, c1 + dc), dataset, out)
        labels[~np.isin(labels, np.asarray(self.keep, dtype=labels.dtype))] = \
            self.background
        return labels


def region_blocks(sources: tuple[Any, Any], transform: Any, crs: Any, region: Region
                  ) -> tuple[tuple[Any, Any], Any]:
    """Two label rasters on one grid as the region's window of each
    (:class:`RegionSource`, read in one window) and that window's transform: what the
    Dask engine scans by blocks, only the region's blocks."""
    out, window = [], None
    for source in sources:
        window, _, keep = region_labels(source, transform, crs, region)
        r0, r1, c0, c1 = window
        fields = {f: getattr(source, f) for f in source.__dataclass_fields__}
        fields.update(shape=(r1 - r0, c1 - c0), sparse_background=False)
        out.append(RegionSource(**fields, offset=(r0, c0),
                                keep=tuple(int(v) for v in keep)))
    assert window is not None
    return (out[0], out[1]), window_transform(transform, window)


def raster_notes(path: Any, region: Region, *, band: int = 1, background: int = 0,
                 **_: Any) -> tuple[str, ...]:
    """Why a label raster is read beyond the region's window: stored in strips (its
    blocks are whole rows), so every row of the window is read across the raster."""
    from geoeval.io.raster import open_source
    from geoeval.io.zipped import resolve

    source, transform, crs = open_source(resolve(path), band=band, background=background)
    seed = seed_window(source.shape, transform, region.in_crs(crs).bounds)
    if seed is None or source.block_shape[1] < source.shape[1] \
            or seed[3] - seed[2] >= source.shape[1]:
        return ()
    return (f"region: {short_name(str(path))} is stored in strips, not tiles: whole rows "
            "across the raster are read for the region's window (a tiled GeoTIFF or a "
            "Cloud-Optimised GeoTIFF reads only the region's blocks)",)


def shared_window(reference: Any, submission: Any, region: Region,
                  reader: tuple[dict[str, Any], dict[str, Any]]) -> Region:
    """``region`` with the one window two label rasters on one grid are read in (the
    union of each one's :func:`raster_window`), so that they stay on one grid."""
    from geoeval.grid import same_crs
    from geoeval.io.raster import open_source
    from geoeval.io.zipped import resolve

    opened = [open_source(resolve(p), band=o.get("band", 1), background=o.get("background", 0))
              for p, o in zip((reference, submission), reader, strict=True)]
    (rs, rt, rc), (ss, st, sc) = opened
    if rs.shape != ss.shape or tuple(rt) != tuple(st) or not same_crs(rc, sc):
        return region
    wins = [raster_window(s, t, region.in_crs(c if c is not None else o.get("crs")))
            for (s, t, c), o in zip(opened, reader, strict=True)]
    wins = [w for w in wins if w is not None]
    if not wins:
        return region
    b = np.array(wins)
    return replace(region, window=(int(b[:, 0].min()), int(b[:, 1].max()),
                                   int(b[:, 2].min()), int(b[:, 3].max())))

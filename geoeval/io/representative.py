"""The point an object is placed by: its representative point, and which objects a
region holds by it (the rule of the zones, :mod:`geoeval.scoring.strata`, and of a
region read alone, :mod:`geoeval.io.region`)."""

from __future__ import annotations

from typing import Any

import numpy as np


def representative_points(geoms: Any) -> np.ndarray:
    """Each geometry's representative point (``shapely.point_on_surface``; an invalid
    polygon made valid first): the point the zones and the region place an object by."""
    import shapely

    geoms = np.asarray(geoms, dtype=object)
    bad = ~shapely.is_valid(geoms) & ~shapely.is_missing(geoms)
    if bad.any():
        geoms = geoms.copy()
        geoms[bad] = shapely.make_valid(geoms[bad])
    return shapely.point_on_surface(geoms)


def inside(geoms: Any, region: Any) -> np.ndarray:
    """Which ``geoms`` belong to ``region`` (a shapely geometry in their CRS, or its
    WKB): their representative point intersects it (a point on its border belongs)."""
    import shapely

    if isinstance(region, bytes):
        region = shapely.from_wkb(region)
    geoms = np.asarray(geoms, dtype=object)
    out = np.zeros(geoms.shape[0], dtype=bool)
    present = ~shapely.is_missing(geoms) & ~shapely.is_empty(geoms)
    if present.any():
        shapely.prepare(region)
        out[present] = shapely.intersects(region, representative_points(geoms[present]))
    return out


def keep_inside(region: bytes, geoms: np.ndarray, ids: np.ndarray, classes: Any,
                frame: Any) -> tuple[np.ndarray, np.ndarray, Any, Any]:
    """A piece's features as read (:mod:`geoeval.io.pieces`) restricted to the region."""
    keep = inside(geoms, region)
    if keep.all():
        return geoms, ids, classes, frame
    geoms = np.asarray(geoms, dtype=object)[keep]
    ids = np.asarray(ids)[keep]
    classes = None if classes is None else np.asarray(classes)[keep]
    frame = None if frame is None else frame.iloc[np.flatnonzero(keep)]
    return geoms, ids, classes, frame

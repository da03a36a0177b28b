"""Readers: labelled rasters and vector layers into :class:`~geoeval.objects.ObjectSet`.

:func:`read` opens one file; :func:`read_pair` opens a reference and a
submission and brings the submission into the reference's CRS (and grid, for
two rasters), as ``SPEC.md`` §1 requires.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from geoeval.errors import CRSMismatchError, InputError
from geoeval.objects import ObjectSet

# Extensions read as vector layers; everything else is tried as a raster first.
VECTOR_SUFFIXES = {
    ".shp", ".gpkg", ".geojson", ".json", ".fgb", ".gml", ".kml", ".sqlite", ".tab",
    ".parquet", ".geoparquet", ".csv", ".gdb", ".mif", ".geojsonl", ".geojsons",
}


def detect_kind(path: str | Path) -> str:
    """``raster`` or ``vector``, from the file name (and content when unclear)."""
    p = Path(path)
    if not p.exists():
        raise InputError("no such file", path)
    if p.suffix.lower() in VECTOR_SUFFIXES or p.is_dir():
        return "vector"
    return "raster"


def read(
    path: str | Path,
    *,
    kind: str | None = None,
    band: int = 1,
    background: int = 0,
    layer: str | int | None = None,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
) -> ObjectSet:
    """Read a labelled raster or a vector layer.

    Parameters
    ----------
    path : str or Path
    kind : {'raster', 'vector'}, optional
        Default: from the file name (:data:`VECTOR_SUFFIXES` are vector).
    band, background
        Raster options (see :func:`geoeval.io.raster.read_raster`).
    layer, id_field, class_field
        Vector options (see :func:`geoeval.io.vector.read_vector`).
    crs : optional
        CRS to assume for a vector layer that has none (e.g. a Shapefile
        without ``.prj``).

    Returns
    -------
    ObjectSet
    """
    kind = kind or detect_kind(path)
    if kind == "raster":
        from geoeval.io.raster import read_raster

        return read_raster(path, band=band, background=background)
    if kind == "vector":
        from geoeval.io.vector import read_vector

        return read_vector(path, layer=layer, id_field=id_field, class_field=class_field, crs=crs)
    raise InputError(f"unknown kind {kind!r} (expected 'raster' or 'vector')", path)


def read_pair(
    reference: str | Path | ObjectSet,
    submission: str | Path | ObjectSet,
    *,
    reference_options: dict[str, Any] | None = None,
    submission_options: dict[str, Any] | None = None,
) -> tuple[ObjectSet, ObjectSet, list[str]]:
    """Read a reference and a submission into the reference's CRS (and grid).

    Parameters
    ----------
    reference, submission : path or ObjectSet
    reference_options, submission_options : dict, optional
        Keyword arguments of :func:`read` for each side.

    Returns
    -------
    reference, submission : ObjectSet
    warnings : list of str
        E.g. that a raster submission was resampled onto the reference grid.

    Raises
    ------
    CRSMismatchError
        Only one input has a CRS, or the two extents do not overlap.
    """
    ref = reference if isinstance(reference, ObjectSet) else read(
        reference, **(reference_options or {}))
    sub = submission if isinstance(submission, ObjectSet) else read(
        submission, **(submission_options or {}))
    warnings: list[str] = []
    if (ref.crs is None) != (sub.crs is None):
        has, lacks = (ref, sub) if sub.crs is None else (sub, ref)
        raise CRSMismatchError(
            f"has no CRS but {has.path} has one; give both a CRS or neither", lacks.path)
    if ref.crs is not None and not _same_crs(ref.crs, sub.crs):
        if sub.grid is not None and ref.grid is not None:
            sub = _resample(sub, ref, warnings, "CRS")
        else:
            from geoeval.io.vector import reproject

            sub = reproject(sub, ref.crs)
    elif ref.grid is not None and sub.grid is not None and not ref.grid.same_grid(sub.grid):
        sub = _resample(sub, ref, warnings, "grid")
    if sub.grid is None and ref.crs is not None:
        sub = replace(sub, crs=ref.crs)
    _check_extents(ref, sub)
    return ref, sub, warnings


def _same_crs(a: Any, b: Any) -> bool:
    if type(a) is type(b) and a == b:  # cheap path, no pyproj import
        return True
    from pyproj import CRS

    try:
        return CRS.from_user_input(a) == CRS.from_user_input(b)
    except Exception:
        return a == b


def _resample(sub: ObjectSet, ref: ObjectSet, warnings: list[str], what: str) -> ObjectSet:
    from geoeval.io.raster import resample_to_grid

    assert ref.grid is not None
    warnings.append(
        f"{sub.path}: raster on another {what} than the reference; resampled (nearest) "
        "onto the reference grid"
    )
    return resample_to_grid(sub, ref.grid)


def _bounds(objects: ObjectSet) -> tuple[float, float, float, float] | None:
    import numpy as np

    if objects.grid is not None:
        return objects.grid.bounds
    if len(objects) == 0:
        return None
    import shapely

    b = shapely.bounds(objects.polygons)
    return (float(np.min(b[:, 0])), float(np.min(b[:, 1])),
            float(np.max(b[:, 2])), float(np.max(b[:, 3])))


def _check_extents(ref: ObjectSet, sub: ObjectSet) -> None:
    rb, sb = _bounds(ref), _bounds(sub)
    if rb is None or sb is None:
        return
    if rb[0] > sb[2] or sb[0] > rb[2] or rb[1] > sb[3] or sb[1] > rb[3]:
        raise CRSMismatchError(
            f"extent {_fmt(sb)} does not overlap the reference extent {_fmt(rb)} "
            f"({ref.path}); wrong CRS or wrong file?",
            sub.path,
        )


def _fmt(b: tuple[float, float, float, float]) -> str:
    return "(" + ", ".join(f"{v:.6g}" for v in b) + ")"

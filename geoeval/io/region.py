"""A region read alone: ``region=`` (``--bbox``, ``--bbox-crs``, ``--region``).

An object belongs to the region by the zones' rule (:mod:`geoeval.scoring.strata`):
its **representative point** (``shapely.point_on_surface``, always inside the
object) intersects the region, the region reprojected into the input's own CRS
(:func:`geoeval.io.representative.inside`); the same rule on each side, on both
engines. The evaluation then runs on those objects only, so a region's report is the
report of the same region cut to files first.

This module holds the region's value (:class:`Region`: checked once,
:func:`region_of`; its CRS the reference's unless given, :func:`resolved`), what the
report records of it, and its errors. What a region reads: vector layers
:mod:`geoeval.io.region_pieces` (GeoParquet row groups, GDAL's spatial filter, tiles),
label rasters :mod:`geoeval.io.region_raster` (the region's window, grown until its
labels are whole).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError, first_line
from geoeval.io.representative import inside

#: The rule, as the report records it.
RULE = "object's representative point inside the region (in the input's own CRS)"


@dataclass(frozen=True)
class Region:
    """The region a score is restricted to.

    Attributes
    ----------
    geometry : shapely geometry
        The region's polygons as one (Multi)Polygon, in :attr:`crs`.
    crs : pyproj.CRS or None
        The region's CRS; ``None`` with :attr:`crs_given` ``False``: the reference's
        (:func:`resolved` sets it before the reading), or the inputs have no CRS.
    source : str
        ``"bbox"``, the region file's name, or ``"<memory>"``.
    bbox : tuple of float or None
        The box given (``--bbox``), as given.
    crs_given : bool
        The CRS was given or the region's own (a file, a GeoDataFrame).
    window : tuple of int or None
        The pixel window ``(row0, row1, col0, col1)`` two label rasters on one grid
        are both read in (:func:`shared_window`), ``None`` otherwise.
    """

    geometry: Any
    crs: Any = None
    source: str = "bbox"
    bbox: tuple[float, float, float, float] | None = None
    crs_given: bool = False
    window: tuple[int, int, int, int] | None = None

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        return tuple(float(v) for v in self.geometry.bounds)  # type: ignore[return-value]

    def in_crs(self, crs: Any) -> Any:
        """The region's geometry in ``crs`` (its edges densified first, so that a box
        in degrees stays the area it names); unchanged when either CRS is unknown."""
        if crs is None or self.crs is None:
            return self.geometry
        from pyproj import CRS

        target = CRS.from_user_input(crs)
        if target == self.crs:
            return self.geometry
        import geopandas as gpd
        import shapely

        x0, y0, x1, y1 = self.bounds
        step = max(x1 - x0, y1 - y0) / 64 or 1.0
        dense = shapely.segmentize(self.geometry, step)
        return gpd.GeoSeries([dense], crs=self.crs).to_crs(target).iloc[0]

    def record(self) -> dict[str, Any]:
        """The report's ``parameters.region``: what was given, its CRS, its bounds and
        the rule."""
        from geoeval.grid import crs_code

        out: dict[str, Any] = (
            {"bbox": list(self.bbox)} if self.bbox is not None
            else {"geometry": self.source} if self.source == "<memory>"
            else {"file": self.source})
        out["crs"] = None if self.crs is None else crs_code(self.crs)
        out["bounds"] = list(self.bounds)
        out["rule"] = RULE
        return out


def region_of(region: Any, region_crs: Any = None) -> Region | None:
    """The :class:`Region` of ``region=`` (and ``region_crs=``), checked.

    Parameters
    ----------
    region : tuple, shapely geometry, GeoDataFrame, GeoSeries, path or None
        ``(xmin, ymin, xmax, ymax)`` (in ``region_crs``, default the reference's CRS),
        a shapely (Multi)Polygon (same), a GeoDataFrame or GeoSeries of polygons (in
        its own CRS), or a polygon layer's file (in its own CRS).
    region_crs : CRS-like, optional
        The CRS of a box or a shapely geometry (``--bbox-crs``); for a layer without
        a CRS, the one it is in.

    Raises
    ------
    InputError
        Not 4 numbers, ``xmin >= xmax`` or ``ymin >= ymax``, a geometry or layer
        without polygons, a file that cannot be read, an unknown CRS.
    """
    if region is None:
        if region_crs is not None:
            raise InputError(f"{_name('crs')} is given but no {_name('bbox')}")
        return None
    crs = _crs(region_crs)
    if isinstance(region, str | Path):
        return _from_file(Path(region), crs)
    import shapely

    if isinstance(region, shapely.Geometry):
        return Region(_polygons([region], "the region geometry"), crs, "<memory>",
                      crs_given=crs is not None)
    if hasattr(region, "geometry") or type(region).__name__ == "GeoSeries":
        own = getattr(region, "crs", None)
        geoms = np.asarray(getattr(region, "geometry", region).values, dtype=object)
        return Region(_polygons(geoms, "the region's GeoDataFrame"),
                      own if own is not None else crs, "<memory>",
                      crs_given=own is not None or crs is not None)
    return _from_box(region, crs)


def parse_bbox(text: str) -> tuple[float, float, float, float]:
    """``--bbox XMIN,YMIN,XMAX,YMAX`` as 4 numbers (checked by :func:`region_of`)."""
    parts = [p.strip() for p in str(text).split(",")]
    try:
        values = tuple(float(p) for p in parts)
    except ValueError:
        raise InputError(f"--bbox takes 4 numbers XMIN,YMIN,XMAX,YMAX, got {text!r}") from None
    return _box_values(values, text)  # type: ignore[return-value]


def resolved(region: Region | None, reference_crs: Any) -> Region | None:
    """``region`` with its CRS: the reference's when none was given."""
    if region is None or region.crs_given or reference_crs is None:
        return region
    from pyproj import CRS

    return replace(region, crs=CRS.from_user_input(reference_crs))


def objects_inside(objects: Any, region: Region) -> Any:
    """An :class:`~geoeval.objects.ObjectSet` (read in memory) restricted to ``region``
    by the rule (:func:`inside`, the region in the objects' CRS)."""
    keep = inside(objects.polygons, region.in_crs(objects.crs))
    if keep.all():
        return objects
    return objects.subset(np.flatnonzero(keep))


def empty_region(region: Region) -> InputError:
    """The error of a region that holds no object of either input."""
    from geoeval.grid import crs_code

    where = "" if region.crs is None else f" in {crs_code(region.crs)}"
    box = ",".join(f"{v:.12g}" for v in region.bounds)
    what = (f"{_name('bbox')} {box}" if region.bbox is not None
            else f"{_name('file')} {region.source}, bounds {box}")
    return InputError(f"the region ({what}{where}) holds no object of either input: "
                      "nothing to score (check its coordinates and CRS)")


def short_name(path: str) -> str:
    """A file's name as notes show it (valid UTF-8)."""
    from geoeval.errors import printable

    return printable(Path(path).name)


def _name(what: str) -> str:
    from geoeval.validate import spelled

    return spelled({"bbox": "region=", "crs": "region_crs=", "file": "region="}[what],
                   {"bbox": "--bbox", "crs": "--bbox-crs", "file": "--region"}[what])


def _crs(value: Any) -> Any:
    if value is None:
        return None
    from pyproj import CRS

    try:
        return CRS.from_user_input(value)
    except Exception as exc:
        raise InputError(f"{_name('crs')} {value!r} is not a CRS ({first_line(exc)})") from None


def _box_values(values: Any, given: Any) -> tuple[float, ...]:
    try:
        box = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        box = ()
    if len(box) != 4 or not all(math.isfinite(v) for v in box):
        raise InputError(f"{_name('bbox')} takes 4 numbers XMIN,YMIN,XMAX,YMAX, got "
                         f"{given!r}")
    if box[0] >= box[2] or box[1] >= box[3]:
        raise InputError(f"{_name('bbox')} needs XMIN < XMAX and YMIN < YMAX, got {given!r}")
    return box


def _from_box(values: Any, crs: Any) -> Region:
    import shapely

    box = _box_values(values, values)
    return Region(shapely.box(*box), crs, "bbox", box, crs_given=crs is not None)  # type: ignore[arg-type]


def _polygons(geoms: Any, where: Any) -> Any:
    """The union of the polygons among ``geoms``; an error naming ``where`` when none."""
    import shapely

    geoms = np.asarray(geoms, dtype=object).reshape(-1)
    geoms = geoms[~shapely.is_missing(geoms)]
    parts = shapely.get_parts(geoms) if geoms.size else geoms
    parts = np.asarray(parts, dtype=object)
    if parts.size and (shapely.get_type_id(parts) == 7).any():  # collections: their parts
        parts = shapely.get_parts(parts)
    polys = parts[np.isin(shapely.get_type_id(parts), (3, 6))] if parts.size else parts
    polys = polys[~shapely.is_empty(polys)] if polys.size else polys
    if not polys.size:
        raise InputError(f"{_name('file')} has no polygons: a region is an area", where)
    polys = shapely.make_valid(polys)
    return shapely.union_all(polys)


def _from_file(path: Path, crs: Any) -> Region:
    from geoeval.errors import printable

    if not path.exists():
        raise InputError(f"region file ({_name('file')}) not found", path)
    try:
        import geopandas as gpd

        from geoeval.io.paths import local_path

        frame = gpd.read_file(local_path(path))
    except Exception as exc:
        raise InputError(f"cannot read the region ({_name('file')}): {first_line(exc)}",
                         path) from None
    geoms = np.asarray(frame.geometry.values, dtype=object) if hasattr(frame, "geometry") \
        else np.zeros(0, dtype=object)
    own = getattr(frame, "crs", None)
    return Region(_polygons(geoms, path), own if own is not None else crs,
                  printable(str(path)), crs_given=own is not None or crs is not None)

"""A region read alone: ``region=`` (``--bbox``, ``--region``) and what it prunes.

An object belongs to the region by the zones' rule (:mod:`geoeval.scoring.strata`):
its **representative point** (``shapely.point_on_surface``, always inside the
object) intersects the region, the region reprojected into the input's own CRS; the
same rule on each side, on both engines (:func:`inside`). The evaluation then runs
on those objects only, so a region's report is the report of the same region cut to
files first (:func:`inside` on the whole inputs, written out, scored).

What is read is only what the region needs (:func:`restrict_pieces`, from the
files' metadata alone, before any feature is read):

* a GeoParquet file or dataset: the row groups whose bounds meet the region's, by
  the row-group statistics of the GeoParquet 1.1 ``bbox`` covering column
  (``covering.bbox`` metadata) or of a ``bbox`` struct column without it (Overture's
  files: ``bbox.xmin`` …) (:func:`row_groups`);
* an OGR layer (GeoPackage, FlatGeobuf, Shapefile …): GDAL's spatial filter
  (pyogrio's ``bbox=``), which uses the layer's spatial index when it has one;
* a layer of tiles or the files of a dataset folder: a file whose bounds miss the
  region has its footer or header read (its rows are numbered) but no feature.

A file that cannot be pruned (no bbox column or no statistics, row groups that are
not spatially sorted, an OGR layer without a spatial index) is read whole, with a
one-line note saying why (:attr:`RegionPlan.notes`).

The functions work on what they are given — a Parquet file's metadata, a name
passed on to pyogrio — so that they serve every place a file can live.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError, first_line
from geoeval.io.representative import inside
from geoeval.io.windowed import RasterSource

#: The rule, as the report records it.
RULE = "object's representative point inside the region (in the input's own CRS)"

#: Pieces of at most this many row groups' rows: the local engine's reads, as planned.
_XY = ("xmin", "ymin", "xmax", "ymax")


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


# --- pruning ------------------------------------------------------------------------


@dataclass(frozen=True)
class RegionPlan:
    """The pieces a region needs and why some file is read whole.

    ``read``/``total``: row groups (Parquet) or files (OGR) read and planned."""

    pieces: list[Any]
    notes: tuple[str, ...] = ()
    read: int = 0
    total: int = 0


def row_groups(meta: Any, geo: dict[str, Any], bounds: Sequence[float]
               ) -> tuple[list[int] | None, str | None]:
    """The row groups of a GeoParquet file whose bbox meets ``bounds``.

    Parameters
    ----------
    meta : pyarrow.parquet.FileMetaData
        The file's footer (``ParquetFile(...).metadata``, wherever the file lives).
    geo : dict
        Its ``geo`` metadata.
    bounds : (xmin, ymin, xmax, ymax)
        The region's bounds in the file's CRS.

    Returns
    -------
    groups : list of int or None
        ``None``: the file cannot be pruned (every row group is read).
    why : str or None
        Why not, in words (for the note).
    """
    paths = _bbox_paths(meta, geo)
    if paths is None:
        return None, ("it has no bbox column (GeoParquet 1.1 covering 'bbox', or a 'bbox' "
                      "struct of xmin, ymin, xmax, ymax)")
    index = {meta.row_group(0).column(c).path_in_schema: c
             for c in range(meta.row_group(0).num_columns)} if meta.num_row_groups else {}
    if not all(paths[k] in index for k in _XY):
        return None, "its bbox column is not a struct of xmin, ymin, xmax, ymax"
    x0, y0, x1, y1 = (float(v) for v in bounds)
    keep = []
    for g in range(meta.num_row_groups):
        rg = meta.row_group(g)
        stats = {}
        for k in _XY:
            st = rg.column(index[paths[k]]).statistics
            if st is None or not st.has_min_max:
                return None, "its bbox column has no row-group statistics"
            stats[k] = float(st.min) if k in ("xmin", "ymin") else float(st.max)
        if stats["xmin"] <= x1 and stats["xmax"] >= x0 and stats["ymin"] <= y1 \
                and stats["ymax"] >= y0:
            keep.append(g)
    return keep, None


def _bbox_paths(meta: Any, geo: dict[str, Any]) -> dict[str, str] | None:
    """The column paths of the bbox's xmin … ymax: the covering's, else a ``bbox``
    struct column's."""
    try:
        column = geo["columns"][geo["primary_column"]]
    except (KeyError, TypeError):
        return None
    cover = (column.get("covering") or {}).get("bbox")
    if cover:
        try:
            return {k: ".".join(cover[k]) for k in _XY}
        except (KeyError, TypeError):
            return None
    names = set(meta.schema.to_arrow_schema().names)
    if "bbox" not in names:
        return None
    return {k: f"bbox.{k}" for k in _XY}


def restrict_pieces(pieces: list[Any], region: Any) -> RegionPlan:
    """The planned ``pieces`` of a layer (:func:`geoeval.io.pieces.plan_pieces`)
    restricted to ``region`` (a shapely geometry in the layer's CRS): the Parquet row
    groups that meet its bounds (a piece cut into its runs of kept row groups, each
    keeping its rows' numbers), each OGR file as one piece with GDAL's spatial filter,
    files whose bounds miss it dropped; every piece carries the region for the
    representative-point rule (:func:`inside`, applied as the features are read)."""
    import shapely

    wkb = shapely.to_wkb(region)
    bounds = tuple(float(v) for v in region.bounds)
    out: list[Any] = []
    notes: list[str] = []
    read = total = 0
    by_file: dict[str, list[Any]] = {}
    for q in pieces:
        by_file.setdefault(q.path, []).append(q)
    for path, group in by_file.items():
        if group[0].kind == "parquet":
            kept, why, n_read, n_total = _parquet_file(path, group, bounds)
        else:
            kept, why, n_read, n_total = _ogr_file(path, group, bounds)
        read, total = read + n_read, total + n_total
        out += [replace(q, region=wkb) for q in kept]
        if why is not None:
            notes.append(f"region: {_short(path)} is read whole because {why}; "
                         "reading it was slower than it needed to be")
    return RegionPlan(out, tuple(notes), read, total)


def _parquet_file(path: str, group: list[Any], bounds: tuple[float, ...]
                  ) -> tuple[list[Any], str | None, int, int]:
    """A GeoParquet file's pieces cut to the row groups the region needs."""
    import json

    meta = parquet_metadata(path)
    geo = json.loads((meta.schema.to_arrow_schema().metadata or {}).get(b"geo", b"{}"))
    n = meta.num_row_groups
    file_box = (geo.get("columns", {}).get(geo.get("primary_column"), {}) or {}).get("bbox")
    if file_box and len(file_box) in (4, 6) and not _meets(
            file_box[:2] + file_box[-3:-1] if len(file_box) == 6 else file_box, bounds):
        return [], None, 0, n  # the file's own bounds miss the region
    groups, why = row_groups(meta, geo, bounds)
    if groups is None:
        return group, why, n, n
    if len(groups) == n and n > 1 and not _covers(bounds, _file_bounds(meta, geo)):
        why = "its row groups are not spatially sorted (every one meets the region)"
    rows = [meta.row_group(g).num_rows for g in range(n)]
    wanted = set(groups)
    kept = []
    for q in group:
        run: list[int] = []
        for g in [*range(q.start, q.start + q.count), None]:
            if g is not None and g in wanted and (not run or run[-1] == g - 1):
                run.append(g)
                continue
            if run:
                first = q.first_row + sum(rows[q.start:run[0]])
                kept.append(replace(q, start=run[0], count=len(run), first_row=first,
                                    rows=sum(rows[run[0]:run[-1] + 1])))
                run = []
            if g is not None and g in wanted:
                run = [g]
    return kept, why if len(groups) == n and n > 1 else None, len(groups), n


def _ogr_file(path: str, group: list[Any], bounds: tuple[float, ...]
              ) -> tuple[list[Any], str | None, int, int]:
    """An OGR file's pieces: none when its extent misses the region, else one piece
    read through GDAL's spatial filter (the features' ids are their feature ids; a
    tile numbered by rows is read whole and filtered by the rule)."""
    info = ogr_info(path, group[0].layer)
    box = info.get("total_bounds")
    if box is not None and np.isfinite(np.asarray(box, float)).all() \
            and not _meets(box, bounds):
        return [], None, 0, 1
    if group[0].row_ids:  # ids by row number: every feature must be seen to count them
        return group, ("its features are numbered by row (give --id-field to filter "
                       "it by GDAL's spatial index)"), 1, 1
    rows = sum(q.rows for q in group)
    piece = replace(group[0], start=0, count=rows, rows=rows, bbox=bounds)
    fast = (info.get("capabilities") or {}).get("fast_spatial_filter", True)
    why = None if fast else "it has no spatial index"
    return [piece], why, 1, 1


def parquet_metadata(path: str) -> Any:
    """A GeoParquet file's footer (the one place a file is opened for it here)."""
    import pyarrow.parquet as pq

    from geoeval.io.paths import local_path

    try:
        return pq.ParquetFile(local_path(path)).metadata
    except Exception:
        raise InputError("is not a Parquet file (unreadable or corrupt footer)", path) from None


def ogr_info(path: str, layer: Any = None) -> dict[str, Any]:
    """pyogrio's ``read_info`` of an OGR layer (the name passed on as given)."""
    import pyogrio

    from geoeval.io.paths import local_path

    try:
        return pyogrio.read_info(local_path(path), layer=layer)
    except Exception as exc:
        raise InputError(f"cannot open as a vector layer ({first_line(exc)})", path) from None


def _file_bounds(meta: Any, geo: dict[str, Any]) -> tuple[float, ...] | None:
    from geoeval.io.pieces import covering_bounds

    try:
        column = geo["columns"][geo["primary_column"]]
    except (KeyError, TypeError):
        return None
    box = column.get("bbox") or covering_bounds(meta, column)
    if box is None:
        paths = _bbox_paths(meta, geo)
        if paths is not None:
            box = covering_bounds(meta, {"covering": {"bbox": {
                k: paths[k].split(".") for k in _XY}}})
    if not box:
        return None
    return tuple(box[:2] + box[-3:-1]) if len(box) == 6 else tuple(box)


def _meets(a: Sequence[float], b: Sequence[float]) -> bool:
    return a[0] <= b[2] and a[2] >= b[0] and a[1] <= b[3] and a[3] >= b[1]


def _covers(a: Sequence[float], b: Sequence[float] | None) -> bool:
    return b is not None and a[0] <= b[0] and a[1] <= b[1] and a[2] >= b[2] and a[3] >= b[3]


def _short(path: str) -> str:
    from geoeval.errors import printable

    return printable(Path(path).name)


# --- the values given -----------------------------------------------------------------


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


# --- reading ----------------------------------------------------------------------


def plan_region(path: Any, region: Region, *, layer: Any = None, id_field: str | None = None,
                crs: Any = None) -> tuple[RegionPlan, Any]:
    """The pieces of the vector layer at ``path`` (a file, a GeoParquet dataset folder,
    a pattern of tiles) that ``region`` needs, and the layer's CRS (``crs`` assumed
    for files without one), from the metadata alone."""
    from geoeval.io.pieces import plan_pieces

    pieces, layer_crs = plan_pieces(path, layer=layer, id_field=id_field, crs=crs)
    if layer_crs is None and crs is not None:
        from pyproj import CRS

        layer_crs = CRS.from_user_input(crs)
    return restrict_pieces(pieces, region.in_crs(layer_crs)), layer_crs


def read_vector_region(path: Any, region: Region, *, layer: Any = None,
                       id_field: str | None = None, class_field: str | None = None,
                       crs: Any = None, attributes: bool = True) -> Any:
    """A vector layer's objects in ``region`` (:func:`inside`), reading only the pieces
    it needs (:func:`plan_region`): ids, classes and attributes as the whole layer's
    reader gives them (:func:`geoeval.io.vector.objects_from_frame`)."""
    from geoeval.io.layer_files import is_tile_pattern
    from geoeval.io.pieces import _dataset_frame
    from geoeval.io.vector import _assumed_crs, objects_from_frame

    plan, layer_crs = plan_region(path, region, layer=layer, id_field=id_field, crs=crs)
    if layer_crs is None and not is_tile_pattern(path):
        layer_crs = _assumed_crs(path, crs)  # a Shapefile without .prj: its error
    if class_field is not None:  # the reader's error, from the metadata
        from geoeval.io.pieces import check_field

        check_field(plan.pieces, class_field, path)
    frame, _ = _dataset_frame(path, id_field, layer, crs, planned=(plan.pieces, layer_crs),
                              attributes=attributes, class_field=class_field)
    covering = _covering_columns(plan.pieces)  # not an attribute, as the whole reader
    if covering:
        frame = frame.drop(columns=[c for c in covering if c in frame.columns])
    return objects_from_frame(frame, id_field=id_field, class_field=class_field,
                              crs=layer_crs, path=str(path), polygons_only=True,
                              layer=layer, attributes=attributes)


def _covering_columns(pieces: list[Any]) -> list[str]:
    """The columns a GeoParquet file's ``covering`` metadata names (its bbox column):
    the one-file reader (geopandas) does not read them as attributes."""
    import json

    files = [q.path for q in pieces if q.kind == "parquet"][:1]
    if not files:
        return []
    meta = parquet_metadata(files[0])
    geo = json.loads((meta.schema.to_arrow_schema().metadata or {}).get(b"geo", b"{}"))
    out = []
    for column in (geo.get("columns") or {}).values():
        for path in ((column or {}).get("covering") or {}).get("bbox", {}).values():
            if path and path[0] not in out:
                out.append(str(path[0]))
    return out


def region_notes(path: Any, region: Region, **reader: Any) -> tuple[str, ...]:
    """Why a vector input is read whole for ``region`` (metadata only): its notes."""
    plan, _ = plan_region(path, region, layer=reader.get("layer"),
                          id_field=reader.get("id_field"), crs=reader.get("crs"))
    return plan.notes


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


# --- label rasters --------------------------------------------------------------------

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
    return (f"region: {_short(str(path))} is stored in strips, not tiles: whole rows across "
            "the raster are read for the region's window (a tiled GeoTIFF or a "
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

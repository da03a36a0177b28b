"""The pieces of a vector layer a region needs, from the files' metadata alone.

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
one-line note saying why (:attr:`RegionPlan.notes`). Every piece carries the region,
whose rule the piece reader applies (:func:`geoeval.io.pieces.read_features`).

The pruning works on what it is given — a Parquet file's metadata, a name passed on
to pyogrio — and opens files in two places only (:func:`parquet_metadata`,
:func:`ogr_info`), so that it serves every place a file can live.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from geoeval.errors import InputError, first_line
from geoeval.io.region import Region, short_name

_XY = ("xmin", "ymin", "xmax", "ymax")


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
            notes.append(f"region: {short_name(path)} is read whole because {why}; "
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
    from geoeval.io.url_paths import parquet_file

    try:
        return parquet_file(path).metadata
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

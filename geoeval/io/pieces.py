"""Vector layers read in pieces: what a Dask worker reads, planned from metadata only.

A layer is cut into **pieces** without reading its features: a GeoParquet file
or dataset folder by row groups (the footers give each row group's row count),
an OGR layer (GeoPackage, FlatGeobuf, Shapefile, …) by feature ranges (its
feature count, then ``pyogrio`` ``skip_features``/``max_features``). The client
plans the pieces (:func:`plan_pieces`, metadata only); each worker reads its
own pieces (:func:`read_piece`) with the file reader's rules
(:func:`geoeval.io.vector.polygonal_objects`: invalid geometries repaired,
non-polygonal and empty features skipped and counted). Pieces are numbered in
file order, so the position of an object in the whole layer is its position in
its piece plus the objects kept by the pieces before it: the position the
in-memory reader gives it.

A GeoParquet dataset folder and a layer of tiles (:mod:`geoeval.io.layer_files`)
are cut file by file, each file by its own kind. Without ``--id-field`` an
object's id is its row number in the whole layer (features of every tile
counted in order), as for a GeoParquet dataset: the files' own feature ids
repeat from tile to tile.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import FieldError, InputError, first_line, sendable
from geoeval.io.inputs import Input, is_dataset, is_pattern, layer_files
from geoeval.io.layer_files import geo_crs, one_crs, parse_crs
from geoeval.io.paths import local_path
from geoeval.io.url_paths import as_path, parquet_file, parquet_source, remote_failure
from geoeval.parallel import gc_paused

#: Features per piece (a row group larger than this is one piece on its own).
PIECE_FEATURES = 200_000
_PARQUET = (".parquet", ".geoparquet")


@dataclass(frozen=True)
class Piece:
    """One piece of a layer: what one worker task reads.

    Attributes
    ----------
    path : str
        The file (a GeoParquet file, or the OGR data source).
    kind : str
        ``parquet`` or ``ogr``.
    start, count : int
        Row groups ``start .. start + count - 1`` (Parquet) or features
        ``start .. start + count - 1`` (OGR).
    first_row : int
        Row number of the piece's first feature in the whole layer.
    layer : str, int or None
        OGR layer.
    id_field : str or None
        Column of the object ids (default: the feature id / row number).
    source : str
        The layer the piece belongs to (the file, dataset folder or tile pattern).
    row_ids : bool
        Ids are row numbers in the whole layer (``first_row`` onwards) instead of the
        file's feature ids (the tiles of an OGR layer of tiles without ``id_field``).
    rows : int
        Features in the piece (from the metadata).
    class_field : str or None
        Column of the object classes (``--class-field``), read with the objects.
    attributes : bool
        Read every attribute column too (for the objects dataset,
        :mod:`geoeval.io.attributes`).
    region : bytes or None
        A region's geometry (WKB, in the layer's CRS): only the features whose
        representative point it holds are kept (:func:`geoeval.io.representative.inside`).
    bbox : tuple of float or None
        GDAL's spatial filter of an OGR piece (the region's bounds; the piece is then
        the whole layer, its features filtered).
    """

    path: str
    kind: str
    start: int
    count: int
    first_row: int
    layer: str | int | None = None
    id_field: str | None = None
    source: str = ""
    row_ids: bool = False
    rows: int = 0
    class_field: str | None = None
    attributes: bool = False
    region: bytes | None = None
    bbox: tuple[float, float, float, float] | None = None


def plan_pieces(path: str | Path, *, layer: str | int | None = None,
                id_field: str | None = None, features: int | None = None,
                crs: Any = None) -> tuple[list[Piece], Any]:
    """The pieces of a layer and its CRS, from its metadata alone.

    Parameters
    ----------
    path : path
        GeoParquet file or dataset folder, any OGR vector source, or a pattern of
        tiles (:func:`is_tile_pattern`).
    layer, id_field : optional
        As for :func:`geoeval.io.vector.read_vector`.
    features : int, optional
        Features per piece (default :data:`PIECE_FEATURES`).
    crs : optional
        The CRS of the files that have none (``--crs``; a Shapefile without ``.prj``).

    Returns
    -------
    pieces : list of Piece
    crs : pyproj.CRS or None

    Raises
    ------
    InputError
        The file cannot be opened, has no geometry, or lacks ``id_field``; the
        files of a layer (tiles, the files of a GeoParquet dataset) in different
        CRSs, or some without one (:func:`~geoeval.io.layer_files.one_crs`).
    """
    size = int(features or PIECE_FEATURES)
    if is_pattern(path):  # the facts of a resolved Input, or of its text
        return _tile_pieces(path, layer, id_field, size, bounds=False, crs=crs)[:2]
    if is_dataset(path):
        return _parquet_pieces(path, id_field, size, crs)
    p = as_path(path)  # a URL: a UrlPath, never a Path
    if p.suffix.lower() in _PARQUET:
        return _parquet_pieces(p, id_field, size, crs)
    return _ogr_pieces(p, layer, id_field, size)


def plan_layer(path: str | Path, *, layer: str | int | None = None,
               id_field: str | None = None, features: int | None = None,
               mapper: Callable[..., list[Any]] | None = None
               ) -> tuple[list[Piece], Any, tuple[float, ...] | None]:
    """:func:`plan_pieces` and :func:`layer_bounds` in one pass; the tiles of a layer of
    tiles planned by ``mapper(function, files)`` when given (the Dask engine maps them
    on its workers: thousands of tiles are thousands of files to open)."""
    if is_pattern(path):
        return _tile_pieces(path, layer, id_field, int(features or PIECE_FEATURES),
                            mapper)
    pieces, crs = planned(path, layer=layer, id_field=id_field, features=features)
    return pieces, crs, layer_bounds(path, layer)


def planned(path: Any, *, layer: str | int | None = None, id_field: str | None = None,
            features: int | None = None) -> tuple[list[Piece], Any]:
    """:func:`plan_pieces`, once per resolved :class:`~geoeval.io.inputs.Input` and
    arguments (the route's choice and the Dask engine's plan read the same one)."""
    def plan() -> tuple[list[Piece], Any]:
        return plan_pieces(path, layer=layer, id_field=id_field, features=features)

    if isinstance(path, Input):
        return path.memo(("plan", layer, id_field, features or PIECE_FEATURES), plan)
    return plan()


def layer_crs(path: str | Path, layer: str | int | None = None) -> Any:
    """A layer's CRS from its metadata (a layer of tiles: its first tile's; the
    planning checks that the others share it)."""
    if is_pattern(path):
        first = layer_files(path)[0]
        return one_crs(str(path), [first], [plan_tile(first, layer, bounds=False).crs],
                       "tile")
    return plan_pieces(path, layer=layer)[1]


def _parquet_pieces(p: Any, id_field: str | None, size: int,
                    crs: Any = None) -> tuple[list[Piece], Any]:
    pieces, text = _parquet_plan(p, id_field, size, crs)
    return pieces, one_crs(str(p), [as_path(p)], [text], "file", crs)


def _parquet_plan(p: Any, id_field: str | None, size: int,
                  assumed: Any = None) -> tuple[list[Piece], str | None]:
    """The pieces of a GeoParquet file or dataset folder and its CRS as text (every
    file's the same: :func:`~geoeval.io.layer_files.one_crs`; ``assumed`` for the files
    without one). A piece names its file by the text to open (a URL whole: a worker
    reads it where it lives)."""
    files = layer_files(p) if is_dataset(p) else [as_path(p)]
    pieces: list[Piece] = []
    row = 0
    texts: list[str | None] = []
    for k, f in enumerate(files):
        try:
            meta = parquet_file(f).metadata
        except InputError:
            raise
        except Exception as exc:
            raise remote_failure(exc, f) or InputError(
                "is not a Parquet file (unreadable or corrupt footer)", f) from None
        geo = (meta.schema.to_arrow_schema().metadata or {}).get(b"geo")
        if geo is None:
            raise InputError("has no geometry column (no GeoParquet 'geo' metadata): "
                             "nothing to evaluate", f)
        texts.append(geo_crs(geo, f))
        if k == 0:
            names = meta.schema.to_arrow_schema().names
            if id_field is not None and id_field not in names:
                primary = json.loads(geo).get("primary_column")  # listed as the reader does
                raise FieldError("id_field", id_field, "is not a field", f, detail=(
                    f" (fields: {', '.join(n for n in names if n != primary) or 'none'})"))
        start, rows = 0, 0
        for g in range(meta.num_row_groups):
            n = meta.row_group(g).num_rows
            if rows and rows + n > size:
                pieces.append(Piece(os.fspath(f), "parquet", start, g - start, row, None,
                                    id_field, str(p), rows=rows))
                row += rows
                start, rows = g, 0
            rows += n
        if meta.num_row_groups:
            pieces.append(Piece(os.fspath(f), "parquet", start, meta.num_row_groups - start,
                                row, None, id_field, str(p), rows=rows))
            row += rows
    if len(files) > 1:
        one_crs(str(p), files, texts, "file", assumed)
    return pieces, texts[0] if texts else None


def _tile_pieces(pattern: Any, layer: str | int | None, id_field: str | None,
                 size: int, mapper: Callable[..., list[Any]] | None = None,
                 bounds: bool = True, crs: Any = None
                 ) -> tuple[list[Piece], Any, tuple[float, ...] | None]:
    """Each tile planned by its kind (:func:`plan_tile`, by ``mapper(function, files)``
    when given, e.g. on a cluster's workers; else here), then joined
    (:func:`join_tiles`; ``crs`` for the tiles without one)."""
    files = layer_files(pattern)
    plan = functools.partial(plan_tile, layer=layer, id_field=id_field, size=size,
                             bounds=bounds, crs=crs)
    plans = mapper(plan, files) if mapper is not None else [plan(f) for f in files]
    return join_tiles(str(pattern), files, plans, id_field, crs)


@dataclass(frozen=True)
class TilePlan:
    """One tile's pieces (rows numbered from 0 in the tile), CRS text and bounds."""

    pieces: list[Piece]
    crs: str | None
    bounds: tuple[float, float, float, float] | None


@sendable
def plan_tile(path: str | Path, layer: str | int | None = None, id_field: str | None = None,
              size: int | None = None, bounds: bool = True, crs: Any = None) -> TilePlan:
    """One tile of a layer of tiles planned from its metadata (runs where it is
    mapped: on a worker for the Dask engine): its pieces, its CRS as text (parsed
    once, in the client), its bounds (:func:`layer_bounds`; not read unless
    ``bounds``). ``crs``: for the files of a GeoParquet dataset tile without one."""
    f = as_path(path)
    size = int(size or PIECE_FEATURES)
    if f.suffix.lower() in _PARQUET or f.is_dir() and is_dataset(f):
        pieces, crs = _parquet_plan(f, id_field, size, crs)
    else:
        pieces, crs = _ogr_plan(f, layer, id_field, size)
    return TilePlan(pieces, crs, layer_bounds(f, layer) if bounds else None)


def join_tiles(pattern: str, files: list[Path], plans: list[TilePlan], id_field: str | None,
               crs: Any = None) -> tuple[list[Piece], Any, tuple[float, ...] | None]:
    """The tiles' pieces as one layer: rows numbered across the tiles in file order,
    one CRS (:func:`~geoeval.io.layer_files.one_crs`: else an :class:`InputError`
    naming the tile; ``crs`` for the tiles without one), the bounds of all tiles
    (``None`` when one has none)."""
    from dataclasses import replace

    pieces: list[Piece] = []
    row = 0
    first = one_crs(pattern, files, [plan.crs for plan in plans], "tile", crs)
    for plan in plans:
        pieces += [replace(q, first_row=row + q.first_row, source=pattern,
                           row_ids=id_field is None) for q in plan.pieces]
        row += sum(q.rows for q in plan.pieces)
    boxes = [p.bounds for p in plans]
    if not boxes or any(b is None for b in boxes):
        return pieces, first, None
    b = np.array(boxes, float)
    return pieces, first, (float(b[:, 0].min()), float(b[:, 1].min()),
                           float(b[:, 2].max()), float(b[:, 3].max()))


def _ogr_pieces(p: Path, layer: str | int | None, id_field: str | None,
                size: int) -> tuple[list[Piece], Any]:
    pieces, crs = _ogr_plan(p, layer, id_field, size)
    return pieces, parse_crs(crs)


def _ogr_plan(p: Path, layer: str | int | None, id_field: str | None,
              size: int) -> tuple[list[Piece], str | None]:
    import pyogrio

    from geoeval.io.vector import _choose_layer, list_layers

    layers = list_layers(p)
    if not layers:
        raise InputError("holds no vector layer", p)
    layer = _choose_layer(p, layers, layer)
    try:
        info = pyogrio.read_info(local_path(p), layer=layer, force_feature_count=True)
    except Exception as exc:
        raise InputError(f"cannot open as a vector layer ({first_line(exc)})", p) from None
    if info.get("geometry_type") is None:
        raise InputError("has no geometry column: nothing to evaluate", p)
    if id_field is not None and id_field not in list(info["fields"]):
        raise FieldError("id_field", id_field, "is not a field", p,
                         detail=f" (fields: {', '.join(map(str, info['fields'])) or 'none'})")
    n = int(info["features"])
    pieces = [Piece(os.fspath(p), "ogr", s, min(size, n - s), s, layer, id_field, str(p),
                    rows=min(size, n - s)) for s in range(0, n, size)]
    return pieces, info["crs"]


def layer_bounds(path: str | Path, layer: str | int | None = None
                 ) -> tuple[float, float, float, float] | None:
    """The layer's bounds from its metadata alone (GeoParquet ``bbox`` of every file, or
    else the row-group statistics of its bbox covering column, :func:`covering_bounds`;
    OGR's stored extent; every tile's of a layer of tiles), or ``None`` when some file
    has none."""
    if is_pattern(path):
        try:
            return _tile_pieces(path, layer, None, PIECE_FEATURES)[2]
        except InputError:
            return None
    p = as_path(path)
    if is_dataset(path) or p.suffix.lower() in _PARQUET:
        boxes = []
        for f in (layer_files(path) if is_dataset(path) else [p]):
            try:
                meta = parquet_file(f).metadata
                geo = json.loads(meta.schema.to_arrow_schema().metadata[b"geo"])
                column = geo["columns"][geo["primary_column"]]
                box = column.get("bbox") or covering_bounds(meta, column)
            except Exception:
                return None
            if not box or len(box) not in (4, 6):
                return None
            boxes.append(box[:2] + box[-3:-1] if len(box) == 6 else box)
        if not boxes:
            return None
        b = np.array(boxes, float)
        return (float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()),
                float(b[:, 3].max()))
    try:
        import pyogrio

        box = pyogrio.read_info(local_path(p), layer=layer).get("total_bounds")
    except Exception:
        return None
    if box is None or not np.isfinite(np.asarray(box, float)).all():
        return None
    return tuple(float(v) for v in box)  # type: ignore[return-value]


def covering_bounds(meta: Any, column: dict[str, Any],
                    row_groups: list[int] | None = None) -> list[float] | None:
    """Bounds from the Parquet row-group statistics of a GeoParquet 1.1 bbox covering
    column (``covering.bbox``: the ``xmin``, ``ymin``, ``xmax``, ``ymax`` fields of a
    struct column, e.g. written by ``GeoDataFrame.to_parquet(write_covering_bbox=True)``),
    no geometry read; ``None`` without a covering or statistics.

    Parameters
    ----------
    meta : pyarrow.parquet.FileMetaData
    column : dict
        The geometry column's entry of the ``geo`` metadata.
    row_groups : list of int, optional
        Only these row groups (default all).
    """
    cover = (column.get("covering") or {}).get("bbox")
    if not cover:
        return None
    paths = {".".join(cover[k]): k for k in ("xmin", "ymin", "xmax", "ymax")}
    found: dict[str, list[float]] = {k: [] for k in paths.values()}
    groups = range(meta.num_row_groups) if row_groups is None else row_groups
    for g in groups:
        rg = meta.row_group(g)
        for c in range(rg.num_columns):
            col = rg.column(c)
            key = paths.get(col.path_in_schema)
            if key is None:
                continue
            st = col.statistics
            if st is None or not st.has_min_max:
                return None
            found[key].append(st.min if key in ("xmin", "ymin") else st.max)
    if not all(len(v) == len(groups) and v for v in found.values()):
        return None
    return [float(min(found["xmin"])), float(min(found["ymin"])),
            float(max(found["xmax"])), float(max(found["ymax"]))]


@dataclass
class PieceData:
    """What :func:`read_piece` returns: the kept objects of a piece and the reader's counts.

    Attributes
    ----------
    geometry : numpy.ndarray of shapely geometries
    ids : numpy.ndarray
    areas : numpy.ndarray of float
    local : numpy.ndarray of int64
        Position of each kept object among the piece's kept objects.
    counts : dict
        ``features``, ``repaired``, ``collections``, ``missing``, ``empty``,
        ``lines``, ``zero`` (what :func:`geoeval.io.vector.reader_notes` words).
    bounds : tuple of float
        ``(xmin, ymin, xmax, ymax)`` of the kept objects (NaN when none).
    all_ids : numpy.ndarray or None
        With an id field, the ids of every feature of the piece, kept or skipped
        (the in-memory reader checks that they are unique), when some feature was
        skipped; ``None`` otherwise (then ``ids`` are all of them).
    empty_ids : int
        Features whose id field is empty (null).
    classes : numpy.ndarray or None
        With ``class_field``, each kept object's class value as read (object array).
    attributes : pandas.DataFrame or None
        With :attr:`Piece.attributes`, the kept objects' attribute columns, as the
        in-memory reader keeps them (:func:`geoeval.io.vector.attribute_frame`).
    """

    geometry: np.ndarray
    ids: np.ndarray
    areas: np.ndarray
    counts: dict[str, int] = field(default_factory=dict)
    all_ids: np.ndarray | None = None
    empty_ids: int = 0
    classes: np.ndarray | None = None
    attributes: Any = None

    def __getstate__(self) -> dict[str, Any]:
        import shapely  # one WKB array across processes, not a pickled object each

        return {**self.__dict__, "geometry": shapely.to_wkb(self.geometry)}

    def __setstate__(self, state: dict[str, Any]) -> None:
        import shapely

        state["geometry"] = np.asarray(shapely.from_wkb(state["geometry"]), dtype=object)
        self.__dict__.update(state)

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        import shapely

        if not self.geometry.size:
            return (np.nan,) * 4  # type: ignore[return-value]
        b = shapely.bounds(self.geometry)
        return (float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()),
                float(b[:, 3].max()))


@sendable
@gc_paused
def read_piece(piece: Piece) -> PieceData:
    """Read one piece (runs on a worker) with the reader's rules.

    Raises
    ------
    InputError
        Naming the file and the piece (row groups or features) that failed.
    """
    from geoeval.io.url_paths import ready_for_urls
    from geoeval.io.vector import polygonal_counts

    ready_for_urls(piece.path)  # a worker reads a URL with its own environment
    try:
        geoms, ids, classes, frame = read_features(piece)
    except InputError:
        raise
    except Exception as exc:
        mapped = remote_failure(exc, piece.path)  # a URL: the stores' words
        if mapped is not None:
            raise mapped from None
        what = "row groups" if piece.kind == "parquet" else "features"
        bad = _bad_row_group(piece) if piece.kind == "parquet" and piece.count > 1 else None
        where = "" if bad is None else f": row group {bad[0]} ({first_line(bad[1])})"
        raise InputError(f"cannot read {what} {piece.start}..{piece.start + piece.count - 1}"
                         f"{where or f' ({first_line(exc)})'}", as_path(piece.path)) from None
    ids = np.asarray(ids)
    try:
        kept, keep, counts, area = polygonal_counts(geoms, ids)
    except InputError as exc:  # a feature that cannot be measured: the file named
        raise InputError(exc.message, as_path(piece.path)) from None
    all_ids, empty = None, 0
    if piece.id_field is not None:
        import pandas as pd

        empty = int(np.count_nonzero(pd.isna(ids)))
        all_ids = None if keep.all() else ids
    if classes is not None:  # as read (as text: geoeval.scoring.classes.class_labels)
        classes = np.asarray(classes, dtype=object)[keep]
    attributes = None
    if frame is not None:
        from geoeval.io.vector import attribute_frame

        attributes = attribute_frame(frame, keep)
    return PieceData(kept, ids[keep], area, counts, all_ids, empty, classes, attributes)


def read_features(piece: Piece) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, Any]:
    """A piece's features as read (geometries, ids, classes, attribute frame), those
    outside its region left out (:func:`geoeval.io.representative.keep_inside`)."""
    out = _read_parquet_piece(piece) if piece.kind == "parquet" else _read_ogr_piece(piece)
    if piece.region is None:
        return out
    from geoeval.io.representative import keep_inside

    return keep_inside(piece.region, *out)


def _bad_row_group(piece: Piece) -> tuple[int, BaseException] | None:
    """The first row group of a piece that cannot be read on its own, and its error."""
    from dataclasses import replace

    for g in range(piece.start, piece.start + piece.count):
        try:
            _read_parquet_piece(replace(piece, start=g, count=1))
        except Exception as exc:
            return g, exc
    return None


def _read_parquet_piece(piece: Piece) -> tuple[np.ndarray, np.ndarray, np.ndarray | None,
                                                Any]:
    import shapely

    f = parquet_file(piece.path)  # where it lives: a URL read by ranges
    schema = f.schema_arrow
    geo = json.loads(schema.metadata[b"geo"])
    primary = geo["primary_column"]
    pandas_meta = json.loads((schema.metadata or {}).get(b"pandas", b"{}") or b"{}")
    index = [c for c in pandas_meta.get("index_columns", []) if isinstance(c, str)]
    columns = [primary] + ([piece.id_field] if piece.id_field else index[:1])
    if piece.class_field and piece.class_field not in columns:
        columns.append(piece.class_field)
    table = f.read_row_groups(list(range(piece.start, piece.start + piece.count)),
                              columns=None if piece.attributes else columns)
    column = table.column(primary)
    encoding = geo["columns"][primary].get("encoding", "WKB").upper()
    if encoding == "WKB":
        geoms = shapely.from_wkb(column.to_numpy(zero_copy_only=False))
    else:  # GeoArrow native encodings: geopandas' reader
        from geopandas.io.arrow import _arrow_to_geopandas

        geoms = np.asarray(_arrow_to_geopandas(table, geo).geometry.values, dtype=object)
    geoms = np.asarray(geoms, dtype=object)
    if piece.id_field:
        ids = table.column(piece.id_field).to_numpy(zero_copy_only=False)
    elif piece.row_ids:
        ids = piece.first_row + np.arange(geoms.size, dtype=np.int64)
    elif index:
        ids = table.column(index[0]).to_numpy(zero_copy_only=False)
    else:
        ranges = [c for c in pandas_meta.get("index_columns", []) if isinstance(c, dict)]
        start, step = ((ranges[0].get("start", 0), ranges[0].get("step", 1)) if ranges
                       else (0, 1))
        ids = start + step * (piece.first_row + np.arange(geoms.size, dtype=np.int64))
    classes = None if not piece.class_field else \
        table.column(piece.class_field).to_pandas().to_numpy()
    frame = None
    if piece.attributes:  # every column but the geometries and the pandas index
        frame = table.drop_columns([c for c in table.column_names
                                    if c in geo["columns"] or c in index]).to_pandas()
    return geoms, ids, classes, frame


def _read_ogr_piece(piece: Piece) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, Any]:
    import warnings

    import pyogrio

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        window = (dict(bbox=piece.bbox) if piece.bbox is not None else
                  dict(skip_features=piece.start, max_features=piece.count))
        frame = pyogrio.read_dataframe(
            local_path(piece.path), layer=piece.layer, **window,
            fid_as_index=True, datetime_as_string=piece.attributes,
            columns=None if piece.attributes else
            list(dict.fromkeys(f for f in (piece.id_field, piece.class_field) if f)))
    if piece.bbox is not None:  # a spatial index gives its own order: the file's back
        frame = frame.sort_index(kind="stable")
    geoms = np.asarray(frame.geometry.values, dtype=object)
    if piece.id_field:
        ids = frame[piece.id_field].to_numpy()
    elif piece.row_ids:
        ids = piece.first_row + np.arange(geoms.size, dtype=np.int64)
    else:
        ids = frame.index.to_numpy()
    classes = frame[piece.class_field].to_numpy() if piece.class_field else None
    return geoms, ids, classes, frame if piece.attributes else None


def read_dataset(path: str | Path, *, id_field: str | None = None,
                 class_field: str | None = None, crs: Any = None,
                 layer: str | int | None = None) -> Any:
    """A GeoParquet dataset folder or a layer of tiles (:func:`is_tile_pattern`) read
    whole, piece after piece, as an :class:`~geoeval.objects.ObjectSet` (for the
    in-memory engine: the pieces' order and ids, the reader's rules of
    :func:`geoeval.io.vector.objects_from_frame`)."""
    from geoeval.io.vector import objects_from_frame

    if class_field is not None:
        what = "a layer of tiles" if is_pattern(path) else "a GeoParquet dataset folder"
        raise InputError(f"--class-field is not read from {what} yet (give one file)", path)
    frame, layer_crs = _dataset_frame(path, id_field, layer, crs)
    return objects_from_frame(frame, id_field=id_field, crs=layer_crs, path=str(path),
                              polygons_only=True, layer=layer)


def _dataset_frame(path: str | Path, id_field: str | None,
                   layer: str | int | None = None, assumed: Any = None,
                   planned: tuple[list[Piece], Any] | None = None,
                   attributes: bool = True, class_field: str | None = None
                   ) -> tuple[Any, Any]:
    """The layer's features as one GeoDataFrame and its CRS: its pieces planned here,
    or ``planned`` (pieces and CRS, e.g. restricted to a region:
    :mod:`geoeval.io.region_pieces`); every attribute column, or without ``attributes`` only
    the ``class_field`` column."""
    from dataclasses import replace

    import geopandas as gpd
    import pandas as pd

    pieces, crs = planned if planned is not None else plan_pieces(
        path, id_field=id_field, layer=layer, crs=assumed)
    geoms, ids, frames = [], [], []
    for piece in pieces:  # every attribute column, as the one-file reader keeps them
        whole = (replace(piece, attributes=True) if attributes
                 else replace(piece, class_field=class_field))
        g, i, c, f = read_features(whole)
        geoms.append(np.asarray(g, dtype=object))
        ids.append(np.asarray(i))
        if attributes:
            frames.append(pd.DataFrame(f).reset_index(drop=True))
        else:
            frames.append(pd.DataFrame({class_field: np.asarray(c, dtype=object)}
                                       if class_field else {}, index=range(len(g))))
    geom = np.concatenate(geoms) if geoms else np.zeros(0, dtype=object)
    idx = np.concatenate(ids) if ids else np.zeros(0, dtype=np.int64)
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    if id_field is not None and id_field not in table.columns:
        table[id_field] = idx
    frame = gpd.GeoDataFrame(table, geometry=gpd.array.from_shapely(geom), crs=crs)
    if id_field is None:
        frame.index = idx
    return frame, crs


def check_field(pieces: list[Any], name: str, source: Any) -> None:
    """The in-memory reader's error (:class:`~geoeval.errors.FieldError`, named by the
    layer ``source``) when the layer of ``pieces`` (its first file) has no field
    ``name`` (``--class-field``), from the file's metadata: checked before any piece is
    read."""
    if not pieces:
        return
    from geoeval.io.vector import _check_fields

    q = pieces[0]
    if q.kind == "parquet":
        import pyarrow.parquet as pq

        schema = pq.read_schema(parquet_source(q.path))
        primary = json.loads((schema.metadata or {}).get(b"geo", b"{}")).get("primary_column")
        fields = [n for n in schema.names if n != primary]
    else:
        import pyogrio

        fields = [str(f) for f in pyogrio.read_info(local_path(q.path),
                                                    layer=q.layer)["fields"]]
    try:
        _check_fields(as_path(q.path), fields, None, name)
    except FieldError as exc:  # named by the layer, not its first file
        raise FieldError(exc.keyword, exc.field, exc.problem, source,
                         detail=exc.detail) from None

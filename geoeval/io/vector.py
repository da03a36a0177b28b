"""GIS vector layers (any OGR format, and GeoParquet): one object per polygonal feature.

A vector layer holds one object per Polygon or MultiPolygon feature (an object
``O_i`` of Özdemir et al. 2010, §4; the repair rule follows the OGC Simple
Features validity model). The reader

* repairs invalid geometries with ``make_valid`` and keeps their polygonal part
  (counted in ``repaired`` and announced in a warning);
* keeps a GeometryCollection as the union of its Polygon/MultiPolygon members
  (counted and announced; its points and lines are dropped);
* skips features without geometry, empty ones, points and lines, and polygons of
  zero area, with one warning saying how many were skipped and why (counted in
  ``skipped``);
* refuses, with a one-line :class:`~geoeval.errors.InputError` naming the file,
  anything it cannot read faithfully: an empty or unrecognised file, a layer
  without a geometry column, a Shapefile missing its ``.shx`` or ``.dbf``
  sidecar or cut short, attribute text in another encoding than declared, an
  unknown layer or field, and non-unique ids.

GDAL's own messages are not passed on as they are: errors are put in our words
and warnings raised while reading are captured.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import FieldError, InputError, first_line
from geoeval.io import zipped
from geoeval.io.paths import local_path
from geoeval.io.shapefiles import check_shapefile, shapefile_encoding, sidecar
from geoeval.io.url_paths import as_path, is_remote, parquet_source, remote_failure
from geoeval.objects import ObjectSet
from geoeval.parallel import chunked

#: Suffixes read with :func:`geopandas.read_parquet` (GDAL wheels lack a Parquet driver).
PARQUET_SUFFIXES = {".parquet", ".geoparquet"}
#: Column names a CSV may hold its geometries in (WKT, or GeoJSON/WKB text).
CSV_GEOMETRY_COLUMNS = ("WKT", "wkt", "geometry", "geom", "the_geom", "wkt_geom")

_POLYGONAL = (3, 6)  # shapely type ids of Polygon, MultiPolygon
_COLLECTION = 7  # GeometryCollection


def list_layers(path: str | Path) -> list[str]:
    """Names of the vector layers in a data source.

    Raises
    ------
    InputError
        The path does not exist, is an empty file, or is no vector data source.
    """
    p = as_path(path)
    _check_file(p)
    if p.suffix.lower() in PARQUET_SUFFIXES:
        return [p.stem]
    import pyogrio

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return [str(row[0]) for row in pyogrio.list_layers(local_path(p))]
    except Exception as exc:  # pyogrio raises several error types for unreadable files
        raise remote_failure(exc, p) or InputError(
            _open_failure(p, exc), p if is_remote(p) else path) from None


def read_vector(
    path: str | Path,
    *,
    layer: str | int | None = None,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
    attributes: bool = True,
) -> ObjectSet:
    """Read a polygon layer as an :class:`~geoeval.objects.ObjectSet`.

    Parameters
    ----------
    path : str or Path
        Any data source OGR can open (Shapefile, GeoPackage, GeoJSON, CSV with a
        WKT column, …) or a GeoParquet file (``.parquet``, ``.geoparquet``); in a
        zip archive too (``det.zip``, ``det.zip/buildings.shp``,
        :mod:`geoeval.io.zipped`).
    layer : str or int, optional
        Layer name or index; required when the source has several layers.
    id_field : str, optional
        Field holding unique object ids; default the feature id.
    class_field : str, optional
        Field holding each object's class.
    crs : optional
        CRS to assume when the layer has none (e.g. a Shapefile without .prj).
    attributes : bool
        Read every attribute column too (:attr:`ObjectSet.attributes`, what the
        per-object outputs carry); without it only the id and class fields are read,
        and ``attributes`` is ``None``.

    Returns
    -------
    ObjectSet
        In the layer's own CRS; ``repaired`` counts the invalid geometries
        repaired, ``skipped`` the features skipped, and ``warnings`` says why.

    Raises
    ------
    InputError
        The file, layer or a field cannot be used (the message names which).
    """

    path = zipped.resolve(path)  # a zip archive: the layer it holds
    p = as_path(path)  # a URL: a UrlPath, never a Path
    layers = list_layers(p)
    if not layers:
        raise InputError("holds no vector layer", path)
    layer = _choose_layer(p, layers, layer)
    wanted = list(dict.fromkeys(f for f in (id_field, class_field) if f is not None))
    if p.suffix.lower() in PARQUET_SUFFIXES:
        frame, caught = _read_parquet(p, wanted, id_field, class_field, attributes)
    else:
        frame, caught = _read_ogr(p, layer, wanted, id_field, class_field, attributes)

    own = frame.crs if frame.crs is not None else _assumed_crs(
        p, crs, bounds=tuple(map(float, frame.total_bounds)))
    return objects_from_frame(frame, id_field=id_field, class_field=class_field, crs=own,
                              path=str(p if is_remote(p) else path), caught=caught,
                              polygons_only=True, layer=layer,
                              attributes=attributes)


#: Shapely's type ids of the geometries that are no polygons, and their names.
_NOT_POLYGONS = {0: "Point", 1: "LineString", 2: "LinearRing", 4: "MultiPoint",
                 5: "MultiLineString"}


def check_polygonal(counts: dict[str, int], path: str | Path,
                    layer: str | int | None = None) -> None:
    """The one rule, for every engine, on the reader's counts
    (:func:`polygonal_counts`, of a layer or summed over its pieces): a layer whose
    features all have a geometry but none a polygon is refused. Every one would be
    skipped, and it is almost always the wrong layer. The message names the layer,
    its geometry types and the file's layers of polygons.

    Raises
    ------
    InputError
        ``layer 'centres' holds no polygons (2,310 Point): geoeval scores polygon
        objects; its layers of polygons: outlines (choose one with --layer, …)``.
    """
    present = counts["features"] - counts["missing"] - counts["empty"]
    kinds = [(name, counts.get(name, 0)) for name in _NOT_POLYGONS.values()]
    if present <= 0 or sum(n for _, n in kinds) < present:
        return
    types = ", ".join(f"{n:,} {name}" for name, n in kinds if n)
    p = as_path(path)
    source = zipped.is_file(p) or p.suffix.lower() == ".gdb"  # not tiles, not a dataset
    layers = list_layers(p) if source else []
    name = (layers[int(layer)] if isinstance(layer, (int, np.integer)) and layers
            else layers[0] if layer is None and layers else layer)
    polygon_layers = [other for other in _polygon_layers(p) if other != name] \
        if source else []
    where = (f"its layers of polygons: {', '.join(polygon_layers)} (choose one with --layer, "
             "or --ref-layer / --sub-layer)" if polygon_layers
             else "the file has no layer of polygons" if source
             else "its files hold no polygons")
    what = f"layer {name!r}" if name is not None else "the layer"
    raise InputError(f"{what} holds no polygons ({types}): geoeval scores polygon "
                     f"objects; {where}", path)


def _polygon_layers(p: Path) -> list[str]:
    """Layers of ``p`` whose declared geometry type is polygonal (or not declared)."""
    if p.suffix.lower() in PARQUET_SUFFIXES:
        return []
    import pyogrio

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            listed = pyogrio.list_layers(local_path(p))
    except Exception:  # already opened once; a listing failure only shortens the message
        return []
    return [str(name) for name, kind in listed
            if kind is None or "polygon" in str(kind).lower() or str(kind) == "Unknown"]


def objects_from_frame(
    frame: Any,
    *,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
    path: str = "<GeoDataFrame>",
    caught: Sequence[str] = (),
    polygons_only: bool = False,
    layer: str | int | None = None,
    attributes: bool = True,
) -> ObjectSet:
    """An :class:`~geoeval.objects.ObjectSet` from a GeoDataFrame (or GeoSeries)
    already in memory, with the file reader's rules: invalid geometries repaired,
    non-polygonal and empty ones skipped (counted, with a warning), ids unique.

    ``crs`` is used when the frame has none. ``polygons_only`` (a file's layer ``layer``
    of ``path``): refused when it holds no polygon at all (:func:`check_polygonal`).
    ``attributes``: the frame's columns are kept as :attr:`ObjectSet.attributes`
    (:func:`attribute_frame`); without it they are left out (``None``).
    """

    if hasattr(frame, "to_frame") and not hasattr(frame, "columns"):  # a GeoSeries
        frame = frame.to_frame("geometry").set_geometry("geometry")
    for keyword, field in (("id_field", id_field), ("class_field", class_field)):
        if field is not None and field not in frame.columns:
            raise FieldError(keyword, field, "is not a column", path, detail=(
                f" (columns: {', '.join(map(str, frame.columns))})"))
    geoms = np.asarray(frame.geometry.values, dtype=object)
    try:
        kept, keep, found, kept_area = polygonal_counts(geoms, frame.index)
    except InputError as exc:  # a feature that cannot be measured: the file named
        raise InputError(exc.message, path) from None
    if polygons_only:
        check_polygonal(found, path, layer)
    notes, repaired = reader_notes(found), found["repaired"]
    n_features = geoms.size
    if id_field is not None:
        column = frame[id_field]
        if column.isna().any():
            raise FieldError("id_field", id_field, "has empty values", path,
                             detail=f" ({int(column.isna().sum())} of {n_features} features)")
        ids = column.to_numpy()
        values, counts = np.unique(ids.astype(str) if ids.dtype == object else ids,
                                   return_counts=True)
        if (counts > 1).any():
            dup = values[counts > 1]
            raise FieldError("id_field", id_field, "is not unique", path, detail=(
                f": {dup.size} value(s) repeat (e.g. {dup[0]!s} appears "
                f"{counts[counts > 1][0]} times)"))
        ids = ids[keep]
    else:
        ids = frame.index.to_numpy()[keep]
    classes = frame[class_field].to_numpy()[keep] if class_field is not None else None
    table = attribute_frame(frame, keep) if attributes else None
    layer_crs = frame.crs if frame.crs is not None else crs
    if caught:
        notes.append(f"the reader reported {len(caught)} warning(s) (first: {caught[0]})")
    return ObjectSet(
        ids=ids,
        areas=kept_area,
        crs=layer_crs,
        geometry=kept,
        classes=classes,
        path=str(path),
        input_type="vector",
        repaired=repaired,
        skipped=int(n_features - kept.size),
        warnings=tuple(f"{path}: {n}" for n in notes),
        attributes=table,
    )


def attribute_frame(frame: Any, keep: np.ndarray) -> Any:
    """The attribute columns of the kept features (every column but geometries), one
    row per object in a ``RangeIndex``; ``None`` when the layer has none."""
    import pandas as pd

    columns = [c for c in frame.columns
               if getattr(frame[c].dtype, "name", "") != "geometry"]
    if not columns:
        return None
    table = pd.DataFrame(frame[columns], copy=False)
    if not keep.all():
        table = table.iloc[np.flatnonzero(keep)]
    return table.reset_index(drop=True)


def polygonal_counts(geoms: np.ndarray, names: Any = None
                     ) -> tuple[np.ndarray, np.ndarray, dict[str, int], np.ndarray]:
    """The polygonal object of every feature that has one, columnar: the kept
    (Multi)Polygons, the boolean mask of kept features, the counts (``features``,
    ``repaired``, ``collections``, the skipped ``missing``, ``empty``, ``lines``,
    ``zero``, and the features of each type that is no polygon by its name,
    ``Point``, ``LineString``, …), the kept areas. Counts of pieces of a layer add
    up to the counts of the layer (:func:`reader_notes`, :func:`check_polygonal`).

    Raises
    ------
    InputError
        A feature has a coordinate that is not a finite number (NaN, infinity):
        it has no area and cannot be repaired; the message names it by ``names``
        (the features' ids; default their positions), the caller adds the file.
    """
    import shapely

    geoms = geoms.copy()
    type_id = shapely.get_type_id(geoms)  # -1 for a missing geometry
    missing = type_id < 0
    empty = ~missing & shapely.is_empty(geoms)
    invalid = ~missing & ~empty & ~chunked(shapely.is_valid, geoms)  # every core
    if invalid.any():
        _check_finite(geoms, invalid, names)
        geoms[invalid] = shapely.make_valid(geoms[invalid])
    now = shapely.get_type_id(geoms) if invalid.any() else type_id
    collection = ~missing & ~empty & (now == _COLLECTION)
    if collection.any():
        geoms[collection] = _union_of_polygons(geoms[collection])
        now = shapely.get_type_id(geoms)
    polygonal = np.isin(now, _POLYGONAL)
    area = np.zeros(geoms.size)
    area[polygonal] = shapely.area(geoms[polygonal])
    keep = polygonal & (area > 0)
    # why each skipped feature was skipped (disjoint reasons)
    was_polygonal = np.isin(type_id, _POLYGONAL)
    gave_polygons = (type_id == _COLLECTION) & polygonal
    gave_polygons[gave_polygons] = ~shapely.is_empty(geoms[gave_polygons])
    lines = ~missing & ~empty & ~keep & ~was_polygonal & ~gave_polygons
    zero = ~keep & ~missing & ~empty & ~lines
    other = ~missing & ~empty & np.isin(type_id, list(_NOT_POLYGONS))
    kinds, n_kind = np.unique(type_id[other], return_counts=True)
    counts = {**{_NOT_POLYGONS[int(k)]: int(n) for k, n in zip(kinds, n_kind, strict=True)},
              "features": int(geoms.size),
              "repaired": int(np.count_nonzero(invalid & keep)),
              "collections": int(np.count_nonzero((type_id == _COLLECTION) & keep)),
              "missing": int(np.count_nonzero(missing)), "empty": int(np.count_nonzero(empty)),
              "lines": int(np.count_nonzero(lines)), "zero": int(np.count_nonzero(zero))}
    return geoms[keep], keep, counts, area[keep]


def _check_finite(geoms: np.ndarray, invalid: np.ndarray, names: Any) -> None:
    """Refuse a NaN or infinite coordinate (GEOS reports such a geometry invalid, and
    ``make_valid`` then fails); only the invalid geometries are looked at."""
    import shapely

    where = np.flatnonzero(invalid)
    coords, index = shapely.get_coordinates(geoms[where], return_index=True)
    bad = ~np.isfinite(coords).all(axis=1)
    if not bad.any():
        return
    k = int(where[index[np.argmax(bad)]])
    n = int(np.count_nonzero(np.bincount(index[bad], minlength=where.size)))
    name = names[k] if names is not None else k
    value = coords[np.argmax(bad)]
    more = f" (and {n - 1} more feature(s))" if n > 1 else ""
    raise InputError(f"feature {name} has a coordinate that is not a finite number "
                     f"({value[0]:g}, {value[1]:g}){more}: its shape has no area to measure; "
                     "fix or remove it")


def reader_notes(counts: dict[str, int]) -> list[str]:
    """The reader's warnings from :func:`polygonal_counts` (of a layer or summed
    over its pieces): repairs, collections reduced, skips by reason."""
    notes: list[str] = []
    repaired = counts["repaired"]
    if repaired:
        notes.append(f"{repaired} invalid geometr{'y' if repaired == 1 else 'ies'} "
                     "repaired (make_valid, polygonal part kept)")
    n_coll = counts["collections"]
    if n_coll:
        notes.append(f"{n_coll} GeometryCollection feature(s) kept as the union of their "
                     "polygons (points and lines in them dropped)")
    reasons = [("missing", "without geometry"), ("empty", "empty"), ("lines", "points/lines"),
               ("zero", "zero area")]
    skipped = [(counts[k], why) for k, why in reasons]
    n_skipped = sum(n for n, _ in skipped)
    if n_skipped:
        detail = ", ".join(f"{n} {why}" for n, why in skipped if n)
        notes.append(f"{n_skipped} of {counts['features']} feature(s) skipped: {detail}")
    return notes


def _union_of_polygons(collections: np.ndarray) -> np.ndarray:
    """Each GeometryCollection as the union of its polygonal members (empty if none)."""
    import shapely

    out = np.full(collections.size, shapely.Polygon(), dtype=object)
    parts, index = shapely.get_parts(collections, return_index=True)
    poly = np.isin(shapely.get_type_id(parts), _POLYGONAL)
    polys, pindex = shapely.get_parts(parts[poly], return_index=True)  # MultiPolygon members
    owner = index[poly][pindex]
    nonempty = ~shapely.is_empty(polys)
    polys, owner = polys[nonempty], owner[nonempty]
    if polys.size:
        groups, group = np.unique(owner, return_inverse=True)
        merged = shapely.multipolygons(polys, indices=group)
        bad = ~shapely.is_valid(merged)  # overlapping or touching members
        if bad.any():
            merged[bad] = shapely.make_valid(merged[bad], method="structure",
                                             keep_collapsed=False)
        out[groups] = merged
    return out


def _check_file(p: Path) -> None:
    """A path that can be a vector source: exists, is not empty; a Shapefile is whole."""
    if is_remote(p):  # GDAL and Arrow read it where it lives (and its sidecars)
        return
    if not zipped.exists(p):
        raise InputError("no such file", p)
    if zipped.is_file(p) and zipped.size(p) == 0:
        raise InputError("is an empty file (0 bytes)", p)
    if zipped.is_file(p) and p.suffix.lower() == ".shp":
        check_shapefile(p)


def _open_options(p: Path) -> dict[str, str]:
    """GDAL open options: a CSV's geometry may sit in a column named as in
    :data:`CSV_GEOMETRY_COLUMNS`."""
    if p.suffix.lower() == ".csv":
        return {"GEOM_POSSIBLE_NAMES": ",".join(CSV_GEOMETRY_COLUMNS),
                "KEEP_GEOM_COLUMNS": "NO"}
    return {}


def _open_failure(p: Path, exc: BaseException) -> str:
    """Our one-line words for a data source GDAL cannot open."""
    text = first_line(exc)
    if "not recognized as being in a supported file format" in text \
            or "not recognised" in text:
        return "is not a vector data source OGR can read (unknown format, or a corrupt file)"
    if p.is_dir():
        return "is a folder that holds no vector data source OGR can read"
    return f"cannot open as a vector layer ({_named(text, p)})"


def _named(text: str, p: Path) -> str:
    """A library's message with the file's name in place of the name GDAL was given."""
    return text.replace(local_path(p), p.name).replace(str(p), p.name)


def _choose_layer(p: Path, layers: list[str], layer: str | int | None) -> str | int | None:
    """Check the layer asked for (or that one is not needed)."""
    names = ", ".join(layers)
    if layer is None and len(layers) > 1:
        raise InputError(f"has {len(layers)} layers ({names}); choose one with --layer", p)
    if isinstance(layer, str) and layer not in layers:
        raise InputError(f"has no layer {layer!r} (layers: {names})", p)
    if isinstance(layer, (int, np.integer)) and not 0 <= int(layer) < len(layers):
        raise InputError(f"has no layer number {layer} (layers: {names})", p)
    return layer


def _check_fields(p: Path, fields: list[str], id_field: str | None,
                  class_field: str | None) -> None:
    for keyword, field in (("id_field", id_field), ("class_field", class_field)):
        if field is not None and field not in fields:
            raise FieldError(keyword, field, "is not a field", p,
                             detail=f" (fields: {', '.join(fields) or 'none'})")


def _no_geometry(p: Path, layer: str | int | None = None) -> InputError:
    where = "" if layer is None else f"layer {layer!r} "
    hint = (" (a CSV needs its polygons as WKT text in a column named WKT or geometry)"
            if p.suffix.lower() == ".csv" else "")
    return InputError(f"{where}has no geometry column: nothing to evaluate{hint}", p)


def _read_ogr(p: Path, layer: str | int | None, wanted: list[str], id_field: str | None,
              class_field: str | None, attributes: bool = False) -> tuple[Any, list[str]]:
    """Read one OGR layer, GDAL warnings captured: the ``wanted`` columns (id and
    class fields); with ``attributes`` every attribute column (carried to the
    per-object outputs), or only the wanted ones when another's text is not valid
    in its encoding (with a warning saying the attributes were left out)."""
    import pyogrio

    options = _open_options(p)
    encoding = shapefile_encoding(p)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            info = pyogrio.read_info(local_path(p), layer=layer, encoding=encoding, **options)
        except Exception as exc:
            raise remote_failure(exc, p) or InputError(_open_failure(p, exc), p) from None
        fields = [str(f) for f in info["fields"]]
        _check_fields(p, fields, id_field, class_field)
        if info.get("geometry_type") is None:
            raise _no_geometry(p, layer)
        left_out = None
        columns = fields if attributes else wanted
        try:
            try:
                frame = _ogr_frame(p, layer, columns, encoding, options)
            except UnicodeDecodeError as exc:
                if columns == wanted:
                    raise
                left_out = (f"attribute text is not valid {encoding or exc.encoding}: the "
                            "layer's attributes are not carried to the per-object outputs")
                frame = _ogr_frame(p, layer, wanted, encoding, options)
        except UnicodeDecodeError as exc:
            enc = encoding or exc.encoding
            src = f" (named by {p.with_suffix('.cpg').name})" if encoding else ""
            raise InputError(f"attribute text is not valid {enc}{src}: byte "
                             f"{exc.object[exc.start:exc.start + 1]!r} in field(s) "
                             f"{', '.join(wanted)}; re-save the layer as UTF-8", p) from None
        except Exception as exc:
            raise remote_failure(exc, p) or InputError(
                f"cannot read the layer ({_named(first_line(exc), p)})", p) from None
    if not hasattr(frame, "geometry"):
        raise _no_geometry(p, layer)
    notes = [first_line(w.message) for w in caught
             if not issubclass(w.category, (ResourceWarning, DeprecationWarning))]
    return frame, notes if left_out is None else [left_out, *notes]


def _ogr_frame(p: Path, layer: str | int | None, wanted: list[str], encoding: str | None,
               options: dict[str, str]) -> Any:
    """The layer as a GeoDataFrame indexed by feature id, with the wanted columns:
    the features through GDAL's Arrow stream (``pyogrio.raw.read_arrow``, about
    twice as fast as feature by feature), then the WKB parsed into geometries on
    every core (``shapely.from_wkb`` releases the GIL; on one thread it is about
    half of reading a large layer)."""
    import geopandas as gpd
    import pandas as pd
    import pyogrio.raw
    import shapely

    kwargs = dict(layer=layer, columns=wanted, encoding=encoding, return_fids=True,
                  datetime_as_string=True, **options)
    try:
        meta, table = pyogrio.raw.read_arrow(local_path(p), **kwargs)
        names = [str(c) for c in meta["fields"]]
        fids = table.column(meta["fid_column"]).to_numpy()
        fields = [table.column(name).to_pandas().to_numpy() for name in names]
        geometry = meta["geometry_name"] or "wkb_geometry"
        wkb = (table.column(geometry).to_numpy(zero_copy_only=False)
               if geometry in table.column_names else None)
        del table
    except Exception:  # e.g. text that is not valid in its encoding: the feature reader
        meta, fids, wkb, fields = pyogrio.raw.read(local_path(p), **kwargs)  # says which
        names = [str(c) for c in meta["fields"]]
    data = pd.DataFrame(dict(zip(names, fields, strict=True)), columns=names,
                        index=pd.Index(fids, name="fid"))
    if wkb is None:
        return data
    return gpd.GeoDataFrame(data, geometry=chunked(shapely.from_wkb, wkb), crs=meta["crs"])


def _read_parquet(p: Path, wanted: list[str], id_field: str | None,
                  class_field: str | None, attributes: bool = False) -> tuple[Any, list[str]]:
    """Read a GeoParquet file: its primary geometry column and the ``wanted`` columns
    (id and class fields), with ``attributes`` every column."""
    import json

    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError("reading GeoParquet needs the pyarrow package (pip install pyarrow)",
                         p) from None
    try:
        schema = pq.read_schema(parquet_source(p))  # a URL: read where it lives
    except InputError:
        raise
    except Exception as exc:
        raise remote_failure(exc, p) or InputError(
            "is not a Parquet file (unreadable or corrupt footer)", p) from None
    geo = (schema.metadata or {}).get(b"geo")
    if geo is None:
        raise _no_geometry(p)
    try:
        primary = str(json.loads(geo)["primary_column"])
    except Exception:
        raise InputError("has unreadable GeoParquet 'geo' metadata", p) from None
    fields = [n for n in schema.names if n != primary]
    _check_fields(p, fields, id_field, class_field)
    import geopandas as gpd

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            frame = gpd.read_parquet(parquet_source(p), columns=None if attributes
                                     else [*wanted, primary])
        except Exception as exc:
            raise remote_failure(exc, p) or InputError(
                f"cannot read as GeoParquet ({first_line(exc)})", p) from None
    return frame, [first_line(w.message) for w in caught
                   if not issubclass(w.category, (ResourceWarning, DeprecationWarning))]


def _assumed_crs(path: str | Path, crs: Any,
                 bounds: tuple[float, float, float, float] | None = None) -> Any:
    """The CRS given for a layer that has none; a Shapefile without ``.prj`` must get one.

    A Shapefile's CRS lives in its ``.prj`` sidecar, which is easily lost when
    files are copied: comparing it in unknown coordinates would give wrong
    numbers silently, so it is an error unless ``crs`` (``--crs``) says which.
    ``bounds``: the layer's extent, kept in the error so that whoever reads the other
    input of a pair can suggest a CRS that fits
    (:meth:`geoeval.io.missing_crs.MissingCRSError.beside`).
    """
    if crs is None:
        p = as_path(path)
        if p.suffix.lower() == ".shp" and not is_remote(p):
            from geoeval.io.missing_crs import MissingCRSError

            prj = sidecar(p, ".prj")
            problem = (f"{prj.name} holds no CRS OGR can read" if prj is not None
                       else f"{p.with_suffix('.prj').name} is missing")
            raise MissingCRSError(f"Shapefile without .prj ({problem}): its CRS is unknown",
                                  path, bounds=bounds)
        return None
    from pyproj import CRS

    try:
        return CRS.from_user_input(crs)
    except Exception as exc:
        raise InputError(f"--crs {crs!r} is not a CRS ({first_line(exc)})", path) from None


def reproject(objects: ObjectSet, crs: Any) -> ObjectSet:
    """The same objects in another CRS (vector geometry reprojected, areas recomputed).

    Whether the two CRSs can be transformed is checked by the caller
    (:func:`geoeval.io.read_pair`); the reader's counts and warnings are kept.
    """
    import geopandas as gpd
    import shapely

    series = gpd.GeoSeries(objects.polygons, crs=objects.crs).to_crs(crs)
    geoms = np.asarray(series.values, dtype=object)
    return objects.in_crs(crs, areas=shapely.area(geoms).astype(float), geometry=geoms)

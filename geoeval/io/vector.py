"""GIS vector layers (any OGR format): one object per Polygon/MultiPolygon feature.

``SPEC.md`` §1: invalid geometries are repaired with ``make_valid`` (keeping the
polygonal part) and counted; empty and non-polygonal features are skipped and
counted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError, first_line
from geoeval.objects import ObjectSet


def list_layers(path: str | Path) -> list[str]:
    """Names of the vector layers in a data source."""
    import pyogrio

    try:
        return [str(row[0]) for row in pyogrio.list_layers(path)]
    except Exception as exc:  # pyogrio raises several error types for unreadable files
        raise InputError(f"cannot open as a vector layer ({first_line(exc)})", path) from None


def read_vector(
    path: str | Path,
    *,
    layer: str | int | None = None,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
) -> ObjectSet:
    """Read a polygon layer as an :class:`~geoeval.objects.ObjectSet`.

    Parameters
    ----------
    path : str or Path
        Any data source OGR can open (Shapefile, GeoPackage, GeoJSON, …).
    layer : str or int, optional
        Layer name or index; required when the source has several layers.
    id_field : str, optional
        Field holding unique object ids; default the feature id.
    class_field : str, optional
        Field holding each object's class.
    crs : optional
        CRS to assume when the layer has none (e.g. a Shapefile without .prj).

    Returns
    -------
    ObjectSet
        In the layer's own CRS; ``repaired`` and ``skipped`` count the invalid
        geometries repaired and the empty / non-polygonal features skipped.
    """
    import pyogrio
    import shapely

    layers = list_layers(path)
    if not layers:
        raise InputError("holds no vector layer", path)
    if layer is None and len(layers) > 1:
        raise InputError(f"has {len(layers)} layers ({', '.join(layers)}); choose one with --layer",
                         path)
    if isinstance(layer, str) and layer not in layers:
        raise InputError(f"has no layer {layer!r} (layers: {', '.join(layers)})", path)
    try:
        frame = pyogrio.read_dataframe(path, layer=layer, fid_as_index=True,
                                       encoding=shapefile_encoding(path))
    except Exception as exc:
        raise InputError(f"cannot read the layer ({first_line(exc)})", path) from None
    for name, field in (("--id-field", id_field), ("--class-field", class_field)):
        if field is not None and field not in frame.columns:
            fields = ", ".join(c for c in frame.columns if c != "geometry") or "none"
            raise InputError(f"{name} {field!r} is not a field (fields: {fields})", path)

    geoms = np.asarray(frame.geometry.values, dtype=object)
    n_features = geoms.size
    missing = np.array([g is None for g in geoms], dtype=bool) if n_features else np.zeros(0, bool)
    geoms = np.where(missing, shapely.empty(1)[0] if n_features else None, geoms)
    empty = missing | shapely.is_empty(geoms)
    invalid = ~empty & ~shapely.is_valid(geoms)
    if invalid.any():
        geoms = geoms.copy()
        geoms[invalid] = _polygonal_part(shapely.make_valid(geoms[invalid]))
    polygonal = np.isin(shapely.get_type_id(geoms), (3, 6))  # Polygon, MultiPolygon
    keep = ~empty & polygonal & ~shapely.is_empty(geoms)
    keep &= shapely.area(geoms) > 0
    if id_field is not None:
        ids = frame[id_field].to_numpy()
        if frame[id_field].isna().any():
            raise InputError(f"--id-field {id_field!r} has empty values", path)
    else:
        ids = frame.index.to_numpy()
    ids = ids[keep]
    if np.unique(ids).size != ids.size:
        raise InputError(f"object ids in {id_field or 'the feature id'} are not unique", path)
    classes = frame[class_field].to_numpy()[keep] if class_field is not None else None
    layer_crs = frame.crs if frame.crs is not None else _assumed_crs(path, crs)
    kept = geoms[keep]
    return ObjectSet(
        ids=ids,
        areas=shapely.area(kept).astype(float),
        crs=layer_crs,
        geometry=kept,
        classes=classes,
        path=str(path),
        kind="vector",
        repaired=int(np.count_nonzero(invalid & keep)),
        skipped=int(n_features - np.count_nonzero(keep)),
    )


def shapefile_encoding(path: str | Path) -> str | None:
    """Python codec named by a Shapefile's ``.cpg`` sidecar, or ``None``.

    GDAL reads ``.cpg`` files itself but only knows some spellings (``1252``,
    ``UTF-8``, ``8859-1``, ``ANSI 1251``); ArcGIS and other tools also write e.g.
    ``ANSI 1252`` or ``Windows-1250``, which GDAL would silently read as
    ISO-8859-1. The sidecar is therefore parsed here and the encoding passed to
    the reader explicitly. Without a ``.cpg`` (or with one Python does not
    know) GDAL's own rule applies (the DBF's language driver id, else
    ISO-8859-1).
    """
    import codecs
    import re

    p = Path(path)
    if p.suffix.lower() != ".shp":
        return None
    cpg = next((c for c in (p.with_suffix(".cpg"), p.with_suffix(".CPG")) if c.is_file()), None)
    if cpg is None:
        return None
    text = cpg.read_text(encoding="ascii", errors="ignore").strip()
    m = re.fullmatch(r"(?i)(?:ansi|windows|cp|ms)?[ _-]?(\d{3,5})", text)
    name = f"cp{m.group(1)}" if m else text
    m = re.fullmatch(r"(?i)(?:iso[ _-]?)?8859[ _-]?(\d{1,2})", text)
    if m:
        name = f"iso-8859-{m.group(1)}"
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None


def _assumed_crs(path: str | Path, crs: Any) -> Any:
    """The CRS given for a layer that has none; a Shapefile without ``.prj`` must get one.

    A Shapefile's CRS lives in its ``.prj`` sidecar, which is easily lost when
    files are copied: comparing it in unknown coordinates would give wrong
    numbers silently, so it is an error unless ``crs`` (``--crs``) says which.
    """
    if crs is None:
        if Path(path).suffix.lower() == ".shp":
            raise InputError(
                f"Shapefile without .prj ({Path(path).with_suffix('.prj').name} is missing): its "
                "CRS is unknown; give it with --crs (e.g. --crs EPSG:32651)", path)
        return None
    from pyproj import CRS

    try:
        return CRS.from_user_input(crs)
    except Exception as exc:
        raise InputError(f"--crs {crs!r} is not a CRS ({first_line(exc)})", path) from None


def _polygonal_part(geoms: np.ndarray) -> np.ndarray:
    """Keep only the polygonal parts of repaired geometries (collections may mix types)."""
    import shapely

    out = np.asarray(geoms, dtype=object).copy()
    mixed = np.flatnonzero(shapely.get_type_id(out) == 7)  # GeometryCollection
    if mixed.size:
        parts, index = shapely.get_parts(out[mixed], return_index=True)
        poly = np.isin(shapely.get_type_id(parts), (3, 6))
        for k, pos in enumerate(mixed):
            mine = parts[poly & (index == k)]
            out[pos] = shapely.union_all(mine) if mine.size else shapely.Polygon()
    return out


def reproject(objects: ObjectSet, crs: Any) -> ObjectSet:
    """The same objects in another CRS (vector geometry reprojected, areas recomputed)."""
    import geopandas as gpd
    import shapely

    series = gpd.GeoSeries(objects.polygons, crs=objects.crs).to_crs(crs)
    geoms = np.asarray(series.values, dtype=object)
    return ObjectSet(
        ids=objects.ids,
        areas=shapely.area(geoms).astype(float),
        crs=crs,
        geometry=geoms,
        classes=objects.classes,
        scores=objects.scores,
        image=objects.image,
        path=objects.path,
        kind=objects.kind,
        repaired=objects.repaired,
        skipped=objects.skipped,
    )


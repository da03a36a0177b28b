"""The styled GeoPackage of a scored scene: drop it into QGIS and read it at a glance.

Layers (all in the reference's CRS):

* ``reference`` — every reference object, ``status`` matched | missed;
* ``submission`` — every submitted object, ``status`` matched | false_alarm;
* ``instances`` — one feature per match instance, geometry the union of its
  objects, ``kind`` one-to-one | one-to-many | many-to-one;
* ``summary`` — attribute table with the report's numbers (one row per
  matcher, and per class and matcher with ``--class-field``).

Columns: :func:`geoeval.report.objects.object_tables`. Raster objects are
vectorised along pixel edges (:attr:`geoeval.objects.ObjectSet.polygons`), so
the polygons have exactly the pixel areas the scores were computed from.

Each spatial layer gets a default QGIS style in the ``layer_styles`` table
(:mod:`geoeval.report.qgis_styles`), the table QGIS itself reads and writes,
registered in ``gpkg_contents`` as an attribute table as QGIS does. The file
is written with GDAL's ``VERSION`` creation option (GeoPackage 1.2 by
default), so QGIS 3.22 with GDAL 3.6 opens it without a "partially supported
version" warning (GDAL ≥ 3.11 would otherwise write 1.4). Everything is
written into a temporary file beside the target, then renamed.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from geoeval.errors import OutputError
from geoeval.output_targets import output_target, suffix_of
from geoeval.outputs import atomic_path
from geoeval.report.objects import ObjectTables, object_tables, to_frame
from geoeval.report.qgis_styles import STYLE_NAMES, layer_qml, layer_sld

if TYPE_CHECKING:  # pragma: no cover
    from geoeval.scoring import ScoreResult

#: GeoPackage version written (GDAL creation option ``VERSION``).
GPKG_VERSION = "1.2"
LAYERS = ("reference", "submission", "instances", "summary")

_LAYER_STYLES_SQL = """
CREATE TABLE IF NOT EXISTS layer_styles (
  id INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL,
  f_table_catalog TEXT(256),
  f_table_schema TEXT(256),
  f_table_name TEXT(256),
  f_geometry_column TEXT(256),
  styleName TEXT(30),
  styleQML TEXT,
  styleSLD TEXT,
  useAsDefault BOOLEAN,
  description TEXT,
  owner TEXT(30),
  ui TEXT(30),
  update_time DATETIME DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
)
"""


def write_gpkg(
    result: ScoreResult,
    path: str | Path,
    *,
    matcher: str | None = None,
    version: str = GPKG_VERSION,
) -> Path | str:
    """Write the scored scene as a styled GeoPackage, atomically.

    Parameters
    ----------
    result : ScoreResult
    path : path-like
        Target ``.gpkg``; replaced if it exists.
    matcher : str, optional
        Matcher whose result the layers show (default ``mom`` when it ran, else
        the first matcher).
    version : str
        GeoPackage version (GDAL ``VERSION`` creation option: ``1.0`` … ``1.3``).

    Returns
    -------
    Path

    Notes
    -----
    Statuses follow Özdemir et al. (2010), §4.1: a reference object in no match
    instance is missed (MD), a submitted one a false alarm (FA).

    Examples
    --------
    >>> import tempfile, pathlib, pyogrio, geoeval
    >>> from shapely import box
    >>> ref = geoeval.ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 30, 10)],
    ...                                         crs="EPSG:32631")
    >>> sub = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10)], crs="EPSG:32631")
    >>> res = geoeval.score(ref, sub, matchers=["bgm"])
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "review.gpkg"
    >>> write_gpkg(res, path, matcher="bgm") == path
    True
    >>> [name for name, _ in pyogrio.list_layers(path)]
    ['reference', 'submission', 'instances', 'summary', 'layer_styles']
    """
    target = output_target(path)  # a URL: written here, uploaded whole (SQLite needs a disk)
    if suffix_of(target) != ".gpkg":
        raise OutputError("GeoPackage output must end in .gpkg", target)
    if version not in ("1.0", "1.1", "1.2", "1.3"):
        raise OutputError(f"GeoPackage version {version!r} (choose 1.0 to 1.3)", target)
    tables = object_tables(result, matcher)
    layers = _spatial_layers(result, tables)
    import pyogrio

    crs = _crs_wkt(result.reference.crs)
    descriptions = _descriptions(result, tables)
    with atomic_path(target) as tmp:
        tmp.unlink()  # GDAL creates the file itself (with the VERSION option)
        for k, (name, columns, geoms) in enumerate(layers):
            frame = _geoframe(columns, geoms, crs)
            pyogrio.write_dataframe(
                frame, tmp, layer=name, driver="GPKG", promote_to_multi=True,
                geometry_type="MultiPolygon",
                dataset_options={"VERSION": version} if k == 0 else None,
                layer_options={"DESCRIPTION": descriptions[name]})
        pyogrio.write_dataframe(to_frame(tables.summary), tmp, layer="summary", driver="GPKG",
                                layer_options={"DESCRIPTION": descriptions["summary"]})
        counts = {
            "reference": _value_counts(tables.reference["status"]),
            "submission": _value_counts(tables.submission["status"]),
            "instances": _value_counts(tables.instances["kind"]),
        }
        write_layer_styles(tmp, counts)
    return target


def _spatial_layers(result: ScoreResult,
                    tables: ObjectTables) -> list[tuple[str, dict[str, np.ndarray], np.ndarray]]:
    ref_geoms = np.asarray(result.reference.polygons, dtype=object)
    sub_geoms = np.asarray(result.submission.polygons, dtype=object)
    ref_members, ref_inst, sub_members, sub_inst = tables.instance_members
    n_inst = tables.instances["instance"].size
    inst_geoms = grouped_union(
        np.concatenate([ref_geoms[ref_members], sub_geoms[sub_members]]),
        np.concatenate([ref_inst, sub_inst]), n_inst)
    return [("reference", tables.reference, ref_geoms),
            ("submission", tables.submission, sub_geoms),
            ("instances", tables.instances, inst_geoms)]


def grouped_union(geoms: np.ndarray, groups: np.ndarray, n_groups: int) -> np.ndarray:
    """Union of the geometries of each group, vectorised.

    Groups are reduced pairwise in rounds (``shapely.union`` on arrays): about
    ``log2`` of the largest group's size calls, none per group.

    Parameters
    ----------
    geoms : numpy.ndarray of shapely geometries
    groups : numpy.ndarray of int
        Group of each geometry, ``0 <= g < n_groups``.
    n_groups : int

    Returns
    -------
    numpy.ndarray
        One geometry per group (an empty polygon for an empty group).
    """
    import shapely

    out = np.full(n_groups, shapely.Polygon(), dtype=object)
    if geoms.size == 0:
        return out
    order = np.argsort(groups, kind="stable")
    geoms, groups = np.asarray(geoms, dtype=object)[order], np.asarray(groups)[order]
    while True:
        # position of each geometry within its group
        start = np.r_[0, np.flatnonzero(groups[1:] != groups[:-1]) + 1]
        sizes = np.diff(np.r_[start, groups.size])
        pos = np.arange(groups.size) - np.repeat(start, sizes)
        if sizes.max() == 1:
            break
        even = pos % 2 == 0
        has_next = np.r_[groups[1:] == groups[:-1], False] & even
        merged = geoms[even].copy()
        idx = np.flatnonzero(has_next[even])
        nxt = np.flatnonzero(even)[idx] + 1
        merged[idx] = shapely.union(geoms[even][idx], geoms[nxt])
        geoms, groups = merged, groups[even]
    out[groups] = geoms
    return out


def _geoframe(columns: dict[str, np.ndarray], geoms: np.ndarray, crs: str | None) -> Any:
    import geopandas as gpd

    return gpd.GeoDataFrame(to_frame(columns), geometry=gpd.GeoSeries(geoms), crs=crs)


def _crs_wkt(crs: Any) -> str | None:
    if crs is None:
        return None
    to_wkt = getattr(crs, "to_wkt", None)
    return to_wkt() if to_wkt is not None else str(crs)


def _value_counts(values: np.ndarray) -> dict[str, int]:
    if values.size == 0:
        return {}
    keys, counts = np.unique(values.astype(str), return_counts=True)
    return dict(zip(keys.tolist(), counts.tolist(), strict=True))


def _descriptions(result: ScoreResult, tables: ObjectTables) -> dict[str, str]:
    who = f"{result.submission.path} vs {result.reference.path}, matcher {tables.matcher}"
    return {
        "reference": f"geoeval: reference objects, status matched|missed ({who})",
        "submission": f"geoeval: submitted objects, status matched|false_alarm ({who})",
        "instances": f"geoeval: match instances, union of their objects ({who})",
        "summary": f"geoeval: scores per matcher and class ({who})",
    }


def write_layer_styles(path: str | Path, counts: dict[str, dict[str, int]] | None = None) -> None:
    """Store the default QGIS style of each spatial layer in ``layer_styles``.

    The table has QGIS's own columns and is registered in ``gpkg_contents``
    (and GDAL's ``gpkg_ogr_contents``) as an attribute table; the row of each
    layer has ``useAsDefault`` true, empty catalog and schema, and the layer's
    geometry column, as QGIS's OGR provider looks them up on load.

    Parameters
    ----------
    path : path-like
        An existing GeoPackage holding the ``reference``, ``submission`` and
        ``instances`` layers.
    counts : dict, optional
        Layer -> category -> count, shown in the legend labels.
    """
    counts = counts or {}
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    con = sqlite3.connect(str(path))
    try:
        geom_cols = dict(con.execute(
            "SELECT table_name, column_name FROM gpkg_geometry_columns").fetchall())
        con.execute(_LAYER_STYLES_SQL)
        for layer in ("reference", "submission", "instances"):
            if layer not in geom_cols:
                continue
            con.execute(
                "DELETE FROM layer_styles WHERE f_table_name = ? AND styleName = ?",
                (layer, STYLE_NAMES[layer]))
            con.execute(
                "INSERT INTO layer_styles (f_table_catalog, f_table_schema, f_table_name, "
                "f_geometry_column, styleName, styleQML, styleSLD, useAsDefault, description, "
                "owner, ui, update_time) VALUES ('', '', ?, ?, ?, ?, ?, 1, ?, '', NULL, ?)",
                (layer, geom_cols[layer], STYLE_NAMES[layer], layer_qml(layer, counts.get(layer)),
                 layer_sld(layer), f"geoeval default style of {layer} ({now})", now))
        con.execute(
            "INSERT OR REPLACE INTO gpkg_contents (table_name, data_type, identifier, "
            "description, last_change) VALUES ('layer_styles', 'attributes', 'layer_styles', "
            "'QGIS layer styles', ?)", (now,))
        has_ogr = con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                              "name = 'gpkg_ogr_contents'").fetchone()
        if has_ogr:
            n = con.execute("SELECT COUNT(*) FROM layer_styles").fetchone()[0]
            con.execute("INSERT OR REPLACE INTO gpkg_ogr_contents (table_name, feature_count) "
                        "VALUES ('layer_styles', ?)", (n,))
        con.commit()
    finally:
        con.close()

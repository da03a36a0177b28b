"""The per-object tables as GeoParquet: the GeoPackage's layers, one file each.

``reference.parquet``, ``submission.parquet`` and ``instances.parquet`` hold the
GeoPackage's spatial layers (same columns, same geometries, in the evaluation
CRS), ``summary.parquet`` its summary table; GeoParquet 1.x as written by
geopandas (pyarrow), the columnar format large layers come in, read back by
``geopandas.read_parquet``, QGIS ≥ 3.32, DuckDB, GDAL's Parquet driver. Each
file is written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from geoeval.outputs import atomic_path, ensure_folder, output_run, published
from geoeval.report.gpkg import _crs_wkt, _geoframe, _spatial_layers
from geoeval.report.objects import object_tables, to_frame

if TYPE_CHECKING:  # pragma: no cover
    from geoeval.scoring import ScoreResult

PARQUET_FILES = ("reference", "submission", "instances", "summary")


def write_parquet(result: ScoreResult, folder: str | Path, *,
                  matcher: str | None = None) -> list[Path | str]:
    """Write the per-object layers of ``result`` as GeoParquet files into ``folder``.

    Parameters
    ----------
    result, folder, matcher
        As in :func:`geoeval.report.csv.write_csv`.

    Returns
    -------
    list of Path or str
        The files written, in :data:`PARQUET_FILES` order (their URLs when
        ``folder`` is a URL of object storage, as in :func:`geoeval.report.csv.write_csv`).
    """
    with output_run():  # this call's own, if not inside one: all files or none
        out = ensure_folder(folder)
        tables = object_tables(result, matcher)
        crs = _crs_wkt(result.reference.crs)
        written = []
        for name, columns, geoms in _spatial_layers(result, tables):
            target = out / f"{name}.parquet"
            with atomic_path(target) as tmp:
                _geoframe(columns, geoms, crs).to_parquet(tmp, index=False)
            written.append(target)
        target = out / "summary.parquet"
        with atomic_path(target) as tmp:
            to_frame(tables.summary).to_parquet(tmp, index=False)
        written.append(target)
        return [published(p) for p in written]

"""Error corpus, the Dask engine: bad files read on the workers give the local engine's
one line (exit 2, no traceback), and the workers' logging stays off the terminal.

Damaged files as a user's folders hold them: a tile of a pattern that is garbage or
cut short (GeoPackage, GeoJSON, GeoParquet), Parquet pages garbled on the way, WKB
that is not WKB, a layer of points, a truncated label raster. Before, a worker's
``InputError`` came back as a full traceback (exit 1: GDAL's error, kept as its
context, cannot be unpickled, so Dask sent a plain ``Exception``), or the right line
followed a six-line ``distributed.worker - ERROR - Compute Failed`` block.

Every case runs on one shared cluster (``--scheduler``); one case runs the console
script with the cluster geoeval starts itself, where the workers' logging would reach
the terminal. All slow (a cluster).
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import geopandas as gpd
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import rasterio
import shapely
from rasterio.transform import from_origin
from rasterio.windows import Window

from tests.corpus.conftest import assert_error, run_cli
from tests.dask_cluster import local_cluster

pytestmark = pytest.mark.slow

CRS = "EPSG:32631"
SQUARES = [shapely.box(500000 + 4 * k, 0, 500002 + 4 * k, 2) for k in range(6)]


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(silence=logging.CRITICAL) as c:
        yield c


def frame(rows: slice = slice(None)) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"n": np.arange(6)[rows]}, geometry=SQUARES[rows], crs=CRS)


def tiles(tmp: Path, ext: str, bad: str) -> tuple[Path, str]:
    """Two good tiles and a third that is garbage or the second cut short."""
    folder = tmp / "tiles"
    folder.mkdir()
    for k in range(2):
        part, path = frame(slice(3 * k, 3 * k + 3)), folder / f"t{k}.{ext}"
        part.to_parquet(path) if ext == "parquet" else part.to_file(path)
    if bad == "garbage":
        (folder / f"t2.{ext}").write_bytes(np.random.default_rng(0).bytes(5000))
        return folder / f"*.{ext}", f"t2.{ext}"
    data = (folder / f"t1.{ext}").read_bytes()
    (folder / f"t1.{ext}").write_bytes(data[: len(data) * 2 // 3])
    return folder / f"*.{ext}", f"t1.{ext}"


def garbled_parquet(tmp: Path) -> tuple[Path, str]:
    path = tmp / "garbled.parquet"
    gpd.GeoDataFrame({"n": np.arange(3000)},
                     geometry=[shapely.box(500000 + 4 * k, 0, 500002 + 4 * k, 2)
                               for k in range(3000)], crs=CRS).to_parquet(
        path, row_group_size=500)
    data = bytearray(path.read_bytes())
    for i in range(len(data) // 3, len(data) // 3 + 200):
        data[i] ^= 0x5A
    path.write_bytes(bytes(data))
    return path, "garbled.parquet"


def bad_wkb(tmp: Path) -> tuple[Path, str]:
    wkb = [shapely.to_wkb(g) for g in SQUARES]
    wkb[2] = b"\x01\x03\x00\x00\x00garbage"
    geo = {"version": "1.0.0", "primary_column": "geometry",
           "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Polygon"]}}}
    table = pa.table({"n": list(range(6)), "geometry": pa.array(wkb, pa.binary())})
    path = tmp / "badwkb.parquet"
    pq.write_table(table.replace_schema_metadata({b"geo": json.dumps(geo).encode()}), path)
    return path, "badwkb.parquet"


def points(tmp: Path) -> tuple[Path, str]:
    path = tmp / "points.gpkg"
    gpd.GeoDataFrame({"n": [0, 1]}, geometry=[shapely.Point(500001, 1),
                                              shapely.Point(500005, 1)], crs=CRS).to_file(path)
    return path, "holds no polygons"


CASES = {
    **{f"{bad} {ext} tile": (lambda tmp, e=ext, b=bad: tiles(tmp, e, b))
       for ext in ("gpkg", "geojson", "parquet") for bad in ("garbage", "truncated")},
    "garbled Parquet pages": garbled_parquet,
    "bad WKB": bad_wkb,
    "a layer of points": points,
}


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_a_bad_file_read_on_the_workers(tmp_path, cluster, case):
    ref = tmp_path / "ref.gpkg"
    frame().to_file(ref)
    sub, named = case(tmp_path)
    out = tmp_path / "out.json"
    local = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, inputs=[ref])
    assert_error(local, named, absent=[out], max_lines=1)
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, "--engine", "dask",
                  "--scheduler", cluster.scheduler_address, inputs=[ref])
    assert_error(run, named, absent=[out], max_lines=1)
    assert "Compute Failed" not in run.stderr and "Exception: InputError" not in run.stderr
    if named == "holds no polygons":  # one rule for both engines, the same words
        assert run.stderr == local.stderr


def _raster(path: Path, cut: bool = False) -> Path:
    n = 4096
    with rasterio.open(path, "w", driver="GTiff", width=n, height=n, count=1, dtype="uint32",
                       crs=CRS, transform=from_origin(500000, n, 1, 1), tiled=True,
                       blockxsize=256, blockysize=256, compress="deflate",
                       sparse_ok=True) as dst:
        for k in range(40):
            dst.write(np.full((20, 20), k + 1, np.uint32), 1,
                      window=Window(97 * k, 101 * k, 20, 20))
    if cut:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2])
    return path


def test_a_truncated_raster_on_the_mosaic_path(tmp_path, cluster):
    """Two rasters on one grid go by blocks on the workers: the one line of the local
    engine (the file and GDAL's reason, bounded), not ``Exception: RasterioIOError('Read
    failed. See previous exception for details.')``."""
    ref, sub = _raster(tmp_path / "ref.tif"), _raster(tmp_path / "sub.tif", cut=True)
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, "--engine", "dask",
                  "--scheduler", cluster.scheduler_address, inputs=[ref, sub])
    assert_error(run, "sub.tif", "cannot read band 1", "truncated", absent=[out],
                 max_lines=1)
    assert len(run.stderr) < 600


def test_the_workers_logging_stays_off_the_terminal(tmp_path):
    """With the cluster geoeval starts (worker processes writing to the terminal): one
    line and exit 2; GEOEVAL_WORKER_LOGS=warning shows the workers' logging again."""
    ref = tmp_path / "ref.gpkg"
    frame().to_file(ref)
    sub, named = tiles(tmp_path, "gpkg", "garbage")
    out = tmp_path / "out.json"
    os.environ.pop("GEOEVAL_WORKER_LOGS", None)
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, "--engine", "dask",
                  inputs=[ref], script=True)
    assert_error(run, named, absent=[out], max_lines=1)
    assert "distributed" not in run.stderr
    os.environ["GEOEVAL_WORKER_LOGS"] = "warning"
    try:
        loud = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, "--engine",
                       "dask", inputs=[ref], script=True)
    finally:
        del os.environ["GEOEVAL_WORKER_LOGS"]
    assert loud.code == 2 and "distributed.worker" in loud.stderr
    assert loud.stderr.strip().splitlines()[-1] == run.stderr.strip()

"""Zipped inputs (:mod:`geoeval.io.zipped`): a Shapefile travels as ``det.zip``; it, a
GeoPackage or GeoJSON file, or a GeoTIFF in a zip archive is read in place (GDAL's
``/vsizip/``), under every name a user gives it, by the command line, the Python API
and the Dask engine; an archive of several layers is a clear error saying how to name
one. The archive is never modified and nothing is extracted beside it.

Reference: two 10 m squares in EPSG:32632; the zipped detections are the same squares,
so every accepted case scores F1 = 1 (and the archive's objects are those of the file
that was zipped).
"""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin
from shapely import box

import geoeval
from geoeval.errors import InputError
from tests.corpus.conftest import assert_error, assert_ok, run_cli

UTM = "EPSG:32632"
SQUARES = [box(690000, 5330000, 690010, 5330010), box(690020, 5330000, 690030, 5330010)]
SHAPEFILE = (".shp", ".shx", ".dbf", ".prj", ".cpg")


def _frame(geoms=SQUARES) -> gpd.GeoDataFrame:
    return gpd.GeoDataFrame({"n": list(range(len(geoms)))}, geometry=geoms, crs=UTM)


def _zip(archive: Path, files: dict[str, Path]) -> Path:
    """``archive`` holding each file under its name in the archive."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        for name, f in files.items():
            z.write(f, name)
    return archive


def _shapefile(folder: Path, stem: str = "det", geoms=SQUARES) -> dict[str, Path]:
    folder.mkdir(exist_ok=True)
    _frame(geoms).to_file(folder / f"{stem}.shp")
    return {f"{stem}{e}": folder / f"{stem}{e}" for e in SHAPEFILE
            if (folder / f"{stem}{e}").exists()}


@pytest.fixture
def ref(tmp_path: Path) -> Path:
    path = tmp_path / "ref.gpkg"
    _frame().to_file(path)
    return path


@pytest.fixture
def det_zip(tmp_path: Path) -> Path:
    return _zip(tmp_path / "det.zip", _shapefile(tmp_path / "src"))


def _score(ref: Path, sub: str | Path, tmp_path: Path, *extra: str) -> dict:
    out = tmp_path / "out.json"
    before = sorted(os.listdir(tmp_path))
    run = run_cli("score", ref, sub, "-m", "bgm", "-q", "--json", out, *extra,
                  inputs=[tmp_path / "det.zip"] if (tmp_path / "det.zip").exists() else [])
    assert_ok(run)
    assert sorted(os.listdir(tmp_path)) == sorted([*before, "out.json"])  # nothing extracted
    report = json.loads(out.read_text())
    out.unlink()
    return report


@pytest.mark.parametrize("name", ["{d}/det.zip", "zip://{d}/det.zip", "/vsizip/{d}/det.zip",
                                  "/vsizip/{d}/det.zip/det.shp", "{d}/det.zip/det.shp",
                                  "zip://{d}/det.zip!det.shp"])
def test_a_zipped_shapefile_under_every_name(tmp_path, ref, det_zip, name):
    report = _score(ref, name.format(d=tmp_path), tmp_path)
    assert report["results"]["bgm"]["f1"] == 1.0
    assert report["submission"]["path"] == f"{tmp_path}/det.zip/det.shp"
    assert report["submission"]["objects"] == 2


def test_a_shp_zip_and_a_relative_name(tmp_path, ref, det_zip):
    det_zip.rename(tmp_path / "det.shp.zip")
    out = tmp_path / "out.json"
    run = run_cli("score", ref, "det.shp.zip", "-m", "bgm", "-q", "--json", out,
                  cwd=tmp_path, inputs=[tmp_path / "det.shp.zip"])
    assert_ok(run)
    assert json.loads(out.read_text())["results"]["bgm"]["f1"] == 1.0


@pytest.mark.parametrize("suffix", [".gpkg", ".geojson"])
def test_a_zipped_layer_of_another_format(tmp_path, ref, suffix):
    layer = tmp_path / "src" / f"roofs{suffix}"
    layer.parent.mkdir()
    _frame().to_file(layer)
    archive = _zip(tmp_path / "roofs.zip", {f"data/roofs{suffix}": layer})
    report = _score(ref, archive, tmp_path)
    assert report["results"]["bgm"]["f1"] == 1.0
    assert report["submission"]["path"] == f"{archive}/data/roofs{suffix}"


def _labels_tif(folder: Path) -> Path:
    """Two objects of a 10 × 30 label raster, in UTM, where the reference lies."""
    folder.mkdir(exist_ok=True)
    tif = folder / "labels.tif"
    labels = np.zeros((10, 30), dtype=np.uint8)
    labels[:, :10], labels[:, 20:] = 1, 2
    with rasterio.open(tif, "w", driver="GTiff", width=30, height=10, count=1, dtype="uint8",
                       crs=UTM, transform=from_origin(690000, 5330010, 1, 1)) as ds:
        ds.write(labels, 1)
    return tif


def test_a_zipped_raster(tmp_path, ref):
    tif = _labels_tif(tmp_path / "src")
    archive = _zip(tmp_path / "labels.zip", {"labels.tif": tif})
    report = _score(ref, archive, tmp_path)
    assert report["submission"]["input_type"] == "raster"
    assert report["results"]["bgm"]["f1"] == 1.0


def test_several_layers_are_listed_and_one_can_be_named(tmp_path, ref):
    files = {**_shapefile(tmp_path / "a", "buildings"),
             **{f"old/{k}": v for k, v in _shapefile(tmp_path / "b", "roofs",
                                                     SQUARES[:1]).items()}}
    archive = _zip(tmp_path / "det.zip", files)
    run = run_cli("score", ref, archive, "-m", "bgm", "-q", inputs=[archive])
    assert_error(run, "det.zip", "2 layers", "buildings.shp", "old/roofs.shp",
                 f"/vsizip/{archive}/buildings.shp", max_lines=1)
    report = _score(ref, f"/vsizip/{archive}/old/roofs.shp", tmp_path)
    assert report["results"]["bgm"]["recall"] == 0.5  # one of the two squares
    run = run_cli("score", ref, f"{archive}/nothing.shp", "-m", "bgm", "-q",
                  inputs=[archive])
    assert_error(run, "det.zip", "holds no nothing.shp", "buildings.shp", max_lines=1)


def test_an_archive_without_a_layer(tmp_path, ref):
    archive = tmp_path / "notes.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("readme.txt", "no layer here")
    run = run_cli("score", ref, archive, "-m", "bgm", "-q", inputs=[archive])
    assert_error(run, "notes.zip", "no layer or raster", "readme.txt", max_lines=1)


def test_a_zipped_shapefile_keeps_the_shapefile_checks(tmp_path, ref):
    files = _shapefile(tmp_path / "src")
    del files["det.prj"]
    archive = _zip(tmp_path / "det.zip", files)
    run = run_cli("score", ref, archive, "-m", "bgm", "-q", inputs=[archive])
    assert_error(run, "det.zip/det.shp", "without .prj", f"(e.g. --sub-crs {UTM})",
                 max_lines=1)
    assert _score(ref, archive, tmp_path, "--sub-crs", UTM)["results"]["bgm"]["f1"] == 1.0
    del files["det.dbf"]
    archive = _zip(tmp_path / "det.zip", files)
    run = run_cli("score", ref, archive, "-m", "bgm", "-q", "--sub-crs", UTM, inputs=[archive])
    assert_error(run, "det.zip/det.shp", "without .dbf", max_lines=1)


def test_python_reads_a_zipped_layer(tmp_path, det_zip):
    objects = geoeval.read(det_zip)
    assert objects.path == f"{det_zip}/det.shp" and len(objects) == 2
    assert str(objects.crs) == UTM
    with pytest.raises(InputError, match="no such file"):
        geoeval.read(tmp_path / "gone.zip")


def test_the_dask_engine_reads_a_zipped_layer_by_partitions(tmp_path, ref, det_zip):
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    options = score_options(matchers=["bgm"])
    res = score(ref, det_zip, options, opened=Engine("dask", client=InlineClient(), n_jobs=1))
    assert res.partitions is not None  # read by pieces on the workers, not in the client
    assert res.to_json() == score(ref, det_zip, options).to_json()


def test_the_readers_themselves_take_an_archive(tmp_path, det_zip):
    from geoeval.io.raster import read_raster
    from geoeval.io.vector import read_vector

    assert len(read_vector(det_zip)) == 2
    tif = tmp_path / "labels.tif"
    with rasterio.open(tif, "w", driver="GTiff", width=4, height=4, count=1, dtype="uint8",
                       crs=UTM, transform=from_origin(690000, 5330010, 1, 1)) as ds:
        ds.write(np.eye(4, dtype=np.uint8), 1)
    objects = read_raster(_zip(tmp_path / "labels.zip", {"labels.tif": tif}))
    assert objects.ids.tolist() == [1] and objects.path == f"{tmp_path}/labels.zip/labels.tif"


def test_the_dask_engine_reads_a_zipped_raster_by_blocks(tmp_path):
    from geoeval.engine import Engine
    from geoeval.engine.inline import InlineClient
    from geoeval.scoring.options import score_options
    from geoeval.scoring.scene import score

    tif = _labels_tif(tmp_path)
    archive = _zip(tmp_path / "labels.zip", {"labels.tif": tif})
    options = score_options(matchers=["bgm"])
    res = score(archive, tif, options, opened=Engine("dask", client=InlineClient(), n_jobs=1))
    assert res.partitions["blocks"] == 1  # read by blocks on the workers
    assert res.results["bgm"].f1 == 1.0

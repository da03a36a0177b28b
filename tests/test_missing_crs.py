"""An input without a CRS beside one with a CRS: the error suggests a CRS only where the
data's coordinates fit it (the other input's CRS, or longitude/latitude), the same way
for every format, and names the option of the interface it is read through (the
command line's ``--sub-crs``, the Python API's ``submission_options``).

The reference is two 10 m squares near (690000, 5330000) in EPSG:32632 (UTM zone 32N,
near Munich); the sample data's zone (EPSG:32651) fits none of these layers.
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin
from shapely import box

import geoeval
from geoeval.errors import CRSMismatchError
from geoeval.io.missing_crs import suggested_crs
from tests.corpus.conftest import assert_error, assert_ok, run_cli

UTM = "EPSG:32632"
SQUARES = [box(690000, 5330000, 690010, 5330010), box(690020, 5330000, 690030, 5330010)]


def _layer(path: Path, geoms: list, crs: str | None) -> Path:
    frame = gpd.GeoDataFrame({"n": list(range(len(geoms)))}, geometry=geoms, crs=crs)
    with warnings.catch_warnings():  # pyogrio's "'crs' was not provided": on purpose
        warnings.simplefilter("ignore", UserWarning)
        frame.to_file(path)
    if crs is None:
        path.with_suffix(".prj").unlink(missing_ok=True)
    return path


@pytest.fixture
def ref(tmp_path: Path) -> Path:
    return _layer(tmp_path / "ref.gpkg", SQUARES, UTM)


def _f1(report: Path) -> float:
    return json.loads(report.read_text())["results"]["bgm"]["f1"]


@pytest.mark.parametrize("suffix", [".shp", ".gpkg"])
def test_the_reference_crs_is_suggested_and_following_it_works(tmp_path, ref, suffix):
    det = _layer(tmp_path / f"det_nocrs{suffix}", SQUARES, None)
    run = run_cli("score", ref, det, "-m", "bgm", "-q", inputs=[tmp_path])
    assert_error(run, det.name, f"(e.g. --sub-crs {UTM})", max_lines=1)
    assert "32651" not in run.stderr
    out = tmp_path / "out.json"
    run = run_cli("score", ref, det, "-m", "bgm", "-q", "--sub-crs", UTM, "--json", out,
                  inputs=[ref, det])
    assert_ok(run)
    assert _f1(out) == 1.0


def test_the_reference_side_is_named_when_it_lacks_the_crs(tmp_path, ref):
    det = _layer(tmp_path / "ref_nocrs.shp", SQUARES, None)
    run = run_cli("score", det, ref, "-m", "bgm", "-q", inputs=[tmp_path])
    assert_error(run, det.name, f"(e.g. --ref-crs {UTM})", max_lines=1)


@pytest.mark.parametrize("suffix", [".shp", ".gpkg"])
def test_coordinates_that_fit_nothing_get_no_example(tmp_path, ref, suffix):
    # (0, 0, 10, 10) is within longitude/latitude ranges, but far from the reference there
    det = _layer(tmp_path / f"far{suffix}", [box(0, 0, 10, 10)], None)
    run = run_cli("score", ref, det, "-m", "bgm", "-q", inputs=[tmp_path])
    assert_error(run, det.name, "--sub-crs", "(0, 0, 10, 10)", max_lines=1)
    assert "e.g." not in run.stderr and "EPSG:" + "4326" not in run.stderr
    assert f"(e.g. --sub-crs {UTM})" not in run.stderr


def test_longitudes_and_latitudes_get_epsg_4326(tmp_path, ref):
    lonlat = gpd.GeoSeries(SQUARES, crs=UTM).to_crs(4326)
    det = _layer(tmp_path / "lonlat.gpkg", list(lonlat), None)
    run = run_cli("score", ref, det, "-m", "bgm", "-q", inputs=[tmp_path])
    assert_error(run, det.name, "(e.g. --sub-crs EPSG:4326)", max_lines=1)
    out = tmp_path / "out.json"
    assert_ok(run_cli("score", ref, det, "-m", "bgm", "-q", "--sub-crs", "EPSG:4326",
                      "--json", out, inputs=[ref, det]))
    assert _f1(out) == 1.0


def test_a_raster_without_crs_gets_the_same_rule(tmp_path, ref):
    det = tmp_path / "det_nocrs.tif"
    labels = np.zeros((10, 30), dtype=np.uint8)
    labels[:, :10], labels[:, 20:] = 1, 2
    with rasterio.open(det, "w", driver="GTiff", width=30, height=10, count=1,
                       dtype="uint8", transform=from_origin(690000, 5330010, 1, 1)) as ds:
        ds.write(labels, 1)
    run = run_cli("score", ref, det, "-m", "bgm", "-q", inputs=[tmp_path])
    assert_error(run, det.name, f"(e.g. --sub-crs {UTM})", max_lines=1)


@pytest.mark.parametrize("suffix", [".shp", ".gpkg"])
def test_python_names_its_own_parameter(tmp_path, ref, suffix):
    det = _layer(tmp_path / f"det_nocrs{suffix}", SQUARES, None)
    with pytest.raises(CRSMismatchError) as caught:
        geoeval.score(ref, det, matchers=["bgm"])
    text = str(caught.value)
    given = f"submission_options={{'crs': '{UTM}'}}"
    assert f"with submission_options={{'crs': ...}} (e.g. {given})" in text
    assert "--" not in text
    res = geoeval.score(ref, det, matchers=["bgm"], submission_options={"crs": UTM})
    assert res.results["bgm"].f1 == 1.0


def test_python_read_alone_names_crs(tmp_path):
    det = _layer(tmp_path / "det_nocrs.shp", SQUARES, None)
    with pytest.raises(CRSMismatchError, match=r"without \.prj.*with crs=") as caught:
        geoeval.read(det)
    assert "--" not in str(caught.value)
    assert caught.value.cli_text().endswith("with --crs")


def test_the_rule():
    near = (689900, 5329900, 690200, 5330200)
    assert suggested_crs((690000, 5330000, 690100, 5330100), UTM, near) == UTM
    assert suggested_crs((11.55, 48.09, 11.56, 48.10), UTM, near) == "EPSG:4326"
    assert suggested_crs((0, 0, 10, 10), UTM, near) is None
    assert suggested_crs((690000, 5330000, 690100, 5330100), None, None) is None
    assert suggested_crs((np.nan,) * 4, UTM, near) is None


def test_the_error_crosses_processes_whole(tmp_path):
    import pickle

    from geoeval.io.missing_crs import MissingCRSError

    err = MissingCRSError("has no CRS", os.fspath(tmp_path / "a.gpkg"), side="submission",
                          example=UTM, bounds=(0, 0, 1, 1))
    back = pickle.loads(pickle.dumps(err))
    assert str(back) == str(err) and back.cli_text() == err.cli_text()

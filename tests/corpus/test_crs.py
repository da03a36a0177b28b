"""Error corpus, coordinate systems: pairs that cannot be transformed, disjoint extents
in other CRSs, equal CRSs spelled differently, CRS-less layers.

Every case runs the installed ``geoeval`` console script (``conftest.py``). A CRS pair
PROJ cannot transform (an engineering / local site grid against UTM, two unrelated
site grids) is one line naming both CRSs and both files, for raster/raster,
raster/vector and vector/vector.
"""

from __future__ import annotations

import json

import geopandas as gpd
import numpy as np
import pytest
import rasterio
import shapely
from rasterio.transform import from_origin

import geoeval
from geoeval.errors import CRSMismatchError
from tests.corpus.conftest import assert_error, assert_ok, run_cli

UTM = "EPSG:32651"
SITE = ('LOCAL_CS["Site grid",LOCAL_DATUM["unknown",32767],UNIT["metre",1],'
        'AXIS["Easting",EAST],AXIS["Northing",NORTH]]')
X0, Y0 = 570000.0, 1450000.0
UTM_NAME = "EPSG:32651 (WGS 84 / UTM zone 51N)"


def raster(path, crs, *, x0=X0, y0=Y0, size=1.0, label=1):
    """6 x 6 uint8 raster, one 2 x 2 object (``label``) in the top-left corner."""
    arr = np.zeros((6, 6), np.uint8)
    arr[:2, :2] = label
    with rasterio.open(path, "w", driver="GTiff", width=6, height=6, count=1, dtype="uint8",
                       crs=crs, transform=from_origin(x0, y0, size, size)) as dst:
        dst.write(arr, 1)
    return path


def layer(path, crs, geoms=None):
    """A GeoPackage with one 2 x 2 m square on the raster's top-left object."""
    geoms = geoms or [shapely.box(X0, Y0 - 2, X0 + 2, Y0)]
    gpd.GeoDataFrame({"oid": list(range(1, len(geoms) + 1))}, geometry=geoms,
                     crs=crs).to_file(path)
    return path


MAKERS = {"raster": (raster, "tif"), "vector": (layer, "gpkg")}


@pytest.mark.parametrize("ref_kind,sub_kind", [
    ("raster", "raster"), ("raster", "vector"), ("vector", "raster"), ("vector", "vector"),
])
@pytest.mark.parametrize("site_side", ["reference", "submission"])
def test_untransformable_crs_pair(tmp_path, ref_kind, sub_kind, site_side):
    ref_crs, sub_crs = (SITE, UTM) if site_side == "reference" else (UTM, SITE)
    make_r, ext_r = MAKERS[ref_kind]
    make_s, ext_s = MAKERS[sub_kind]
    ref = make_r(tmp_path / f"ref.{ext_r}", ref_crs)
    sub = make_s(tmp_path / f"sub.{ext_s}", sub_crs)
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_error(run, ref.name, sub.name, "'Site grid'", UTM_NAME, "cannot be transformed",
                 absent=[out], max_lines=1)


def test_same_site_grid_on_both_sides(tmp_path):
    """One engineering CRS on both sides needs no transformation: scored as is."""
    ref = raster(tmp_path / "ref.tif", SITE)
    sub = layer(tmp_path / "sub.gpkg", SITE)
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_ok(run)
    d = json.loads(out.read_text())
    assert d["results"]["iou"]["accuracy"] == 1.0


def test_api_raises_crs_mismatch_not_proj_error(tmp_path):
    ref = raster(tmp_path / "ref.tif", UTM)
    sub = layer(tmp_path / "sub.gpkg", SITE)
    with pytest.raises(CRSMismatchError, match="Site grid"):
        geoeval.score(ref, sub)


def test_same_crs_spelled_differently_is_not_resampled(tmp_path):
    """EPSG code on one side, the equivalent WKT on the other: one grid, no warning."""
    from pyproj import CRS

    ref = raster(tmp_path / "ref.tif", UTM)
    sub = raster(tmp_path / "sub.tif", CRS.from_epsg(32651).to_wkt(), label=9)
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_ok(run)
    assert "resampled" not in run.stderr
    d = json.loads(out.read_text())
    assert d["overlap"]["method"] == "co-occurrence"
    assert d["results"]["iou"]["instances"][0]["reference"] == [1]
    assert d["results"]["iou"]["instances"][0]["submission"] == [9]


def test_other_crs_overlapping_is_resampled(tmp_path):
    """Sub in Web Mercator from the same corner: its 2 x 2 object spans 2 Mercator metres
    = 1.95 m on the ground at 13° N, so the reference pixel centres at 0.5 and 1.5 m
    fall inside it: after resampling it covers exactly A (4 px)."""
    from rasterio.warp import transform

    xs, ys = transform(UTM, "EPSG:3857", [X0], [Y0])
    ref = raster(tmp_path / "ref.tif", UTM)
    sub = raster(tmp_path / "sub.tif", "EPSG:3857", x0=xs[0], y0=ys[0], size=1.0, label=4)
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_ok(run)
    assert "sub.tif" in run.stderr and "CRS" in run.stderr and "resampled" in run.stderr
    d = json.loads(out.read_text())
    assert d["reference"]["objects"] == 1 and d["submission"]["objects"] == 1
    (inst,) = d["results"]["iou"]["instances"]
    assert (inst["reference"], inst["submission"], inst["overlap"]) == ([1], [4], 4.0)
    assert inst["score"] == 1.0


@pytest.mark.parametrize("sub_kind", ["raster", "vector"])
def test_disjoint_in_another_crs(tmp_path, sub_kind):
    """Sub in WGS 84 at (0°, 0°): far from the UTM 51N reference. For two rasters this was
    silently 'all missed' when the extents were compared after resampling."""
    ref = raster(tmp_path / "ref.tif", UTM)
    if sub_kind == "raster":
        sub = raster(tmp_path / "sub.tif", "EPSG:4326", x0=0.0, y0=0.0, size=1e-5)
    else:
        sub = layer(tmp_path / "sub.gpkg", "EPSG:4326", [shapely.box(0, 0, 1e-5, 1e-5)])
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "--json", out, inputs=[ref, sub])
    assert_error(run, "ref.tif", sub.name, "does not overlap", absent=[out], max_lines=1)


def test_disjoint_reference_vector_raster_submission(tmp_path):
    ref = layer(tmp_path / "ref.gpkg", UTM, [shapely.box(X0 + 500, Y0, X0 + 502, Y0 + 2)])
    sub = raster(tmp_path / "sub.tif", UTM)
    run = run_cli("score", ref, sub, inputs=[ref, sub])
    assert_error(run, "ref.gpkg", "sub.tif", "does not overlap", max_lines=1)


@pytest.mark.parametrize("lacking", ["reference", "submission"])
def test_raster_without_crs_against_layer_with_one(tmp_path, lacking):
    plain = raster(tmp_path / "plain.tif", None)
    other = layer(tmp_path / "other.gpkg", UTM)
    args = (plain, other) if lacking == "reference" else (other, plain)
    run = run_cli("score", *args, inputs=[plain, other])
    assert_error(run, "plain.tif", "other.gpkg", "no CRS", max_lines=1)


@pytest.mark.slow  # 0.55 s CPU; the API case: test_evaluation_crs (fast)
def test_eval_crs_given_is_not_a_warning(tmp_path):
    """A geographic reference with an explicit --eval-crs: the user chose the CRS, so
    --strict passes (the report records it); without --eval-crs geoeval chooses a
    local equal-area projection and says so (a warning, an error under --strict)."""
    squares = [shapely.box(7.44, 46.94, 7.4402, 46.9402),
               shapely.box(7.445, 46.94, 7.4452, 46.9402)]
    ref = layer(tmp_path / "ref.gpkg", "EPSG:4326", squares)
    sub = layer(tmp_path / "sub.gpkg", "EPSG:4326", squares)
    out = tmp_path / "out.json"
    run = run_cli("score", ref, sub, "-m", "bgm", "--eval-crs", "EPSG:2056", "--strict",
                  "--json", out, inputs=[ref, sub])
    assert_ok(run)
    assert "warning" not in run.stderr
    d = json.loads(out.read_text())
    assert d["parameters"]["evaluation_crs"]["crs"].startswith("EPSG:2056")
    assert d["parameters"]["evaluation_crs"]["rule"] == "given (evaluation_crs)"
    out.unlink()
    run = run_cli("score", ref, sub, "-m", "bgm", "--strict", "--json", out,
                  inputs=[ref, sub])
    assert_error(run, "--strict", "computed in", "local equal-area", absent=[out])

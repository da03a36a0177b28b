"""Areas and distances are never computed in degrees or Web Mercator silently."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import shapely
from pyproj import Geod, Transformer

import geoeval
from geoeval.errors import InputError
from geoeval.io.evaluation_crs import local_equal_area, unsuitable
from geoeval.objects import ObjectSet


def squares(lat: float, lon: float = 10.0, side_m: float = 20.0):
    """Two ~20 m buildings in lon/lat and a submission shifted east by a tenth of a side."""
    dlat = side_m / 111_000
    dlon = side_m / (111_000 * np.cos(np.radians(lat)))
    ref = np.array([shapely.box(lon, lat, lon + dlon, lat + dlat),
                    shapely.box(lon + 3 * dlon, lat, lon + 4 * dlon, lat + dlat)])
    sub = shapely.transform(ref, lambda xy: xy + [dlon / 10, 0])
    return ref, sub


def geodesic_area(g) -> float:
    return abs(Geod(ellps="WGS84").geometry_area_perimeter(g)[0])


@pytest.mark.parametrize("lat", [0.5, 60.0])
def test_geographic_vectors_are_evaluated_in_a_local_equal_area_projection(lat):
    ref, sub = squares(lat)
    res = geoeval.score(ObjectSet.from_geometries(ref, crs="EPSG:4326"),
                        ObjectSet.from_geometries(sub, crs="EPSG:4326"), matchers=["bgm"])
    # areas are the ellipsoid's (equal-area projection), not square degrees
    want = [geodesic_area(g) for g in ref]
    np.testing.assert_allclose(res.reference.areas, want, rtol=1e-6)
    inter = shapely.intersection(ref, sub)
    np.testing.assert_allclose(res.overlap.values, [geodesic_area(g) for g in inter], rtol=1e-6)
    info = res.parameters["evaluation_crs"]
    assert "geographic" in info["rule"] and "equal-area" in info["crs"]
    assert any("areas and distances are computed in" in w for w in res.warnings)
    # the BGM score (union area) is the same as in a hand-made projection of the data
    proj = local_equal_area("EPSG:4326", tuple(shapely.total_bounds(ref)))
    t = Transformer.from_crs("EPSG:4326", proj, always_xy=True)
    pr = shapely.transform(ref, lambda xy: np.column_stack(t.transform(xy[:, 0], xy[:, 1])))
    ps = shapely.transform(sub, lambda xy: np.column_stack(t.transform(xy[:, 0], xy[:, 1])))
    union = shapely.area(shapely.union_all(np.concatenate([pr, ps])))
    assert res.overlap.union_area == pytest.approx(union, rel=1e-9)


def test_web_mercator_areas_are_ground_areas():
    ref, sub = squares(60.0)
    to_merc = Transformer.from_crs("EPSG:4326", "EPSG:3857", always_xy=True)
    merc = [shapely.transform(a, lambda xy: np.column_stack(to_merc.transform(xy[:, 0],
                                                                               xy[:, 1])))
            for a in (ref, sub)]
    assert shapely.area(merc[0][0]) / geodesic_area(ref[0]) == pytest.approx(4.0, rel=0.01)
    res = geoeval.score(ObjectSet.from_geometries(merc[0], crs="EPSG:3857"),
                        ObjectSet.from_geometries(merc[1], crs="EPSG:3857"), matchers=["iou"])
    np.testing.assert_allclose(res.reference.areas, [geodesic_area(g) for g in ref], rtol=1e-5)
    assert "Mercator" in res.parameters["evaluation_crs"]["rule"]


def test_projected_inputs_stay_as_they_are():
    ref, sub = (shapely.transform(g, lambda xy: xy * 1e4) for g in squares(0.5))
    res = geoeval.score(ObjectSet.from_geometries(ref, crs="EPSG:32632"),
                        ObjectSet.from_geometries(sub, crs="EPSG:32632"), matchers=["bgm"])
    assert res.parameters["evaluation_crs"]["rule"] == "the reference's CRS"
    assert not any("computed in" in w for w in res.warnings)
    np.testing.assert_allclose(res.reference.areas, shapely.area(ref))


def test_evaluation_crs_is_honoured_and_checked():
    ref, sub = squares(60.0)
    a = ObjectSet.from_geometries(ref, crs="EPSG:4326")
    b = ObjectSet.from_geometries(sub, crs="EPSG:4326")
    res = geoeval.score(a, b, matchers=["bgm"], evaluation_crs="EPSG:32632")
    assert res.parameters["evaluation_crs"]["crs"].startswith("EPSG:32632")
    assert not any("computed in" in w for w in res.warnings)  # chosen: not a warning
    assert res.reference.areas[0] == pytest.approx(geodesic_area(ref[0]), rel=2e-3)  # UTM scale
    with pytest.raises(InputError, match="geographic"):
        geoeval.score(a, b, matchers=["bgm"], evaluation_crs="EPSG:4326")
    with pytest.raises(InputError, match="not a CRS"):
        geoeval.score(a, b, matchers=["bgm"], evaluation_crs="no such crs")
    with pytest.raises(InputError, match="no CRS"):
        geoeval.score(ObjectSet.from_geometries(ref), ObjectSet.from_geometries(sub),
                      matchers=["bgm"], evaluation_crs="EPSG:32632")


def test_a_geographic_raster_is_refused_with_the_command_that_fixes_it(tmp_path):
    import rasterio
    from rasterio.transform import from_origin

    path = tmp_path / "labels_4326.tif"
    labels = np.zeros((20, 20), np.uint16)
    labels[5:10, 5:10] = 1
    with rasterio.open(path, "w", driver="GTiff", width=20, height=20, count=1,
                       dtype="uint16", crs="EPSG:4326",
                       transform=from_origin(2.35, 48.86, 1e-5, 1e-5)) as dst:
        dst.write(labels, 1)
    run = subprocess.run([sys.executable, "-m", "geoeval.cli", "score", str(path), str(path),
                          "-q", "--matcher", "bgm"], capture_output=True, text=True)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "gdalwarp -t_srs EPSG:32631 -r near" in run.stderr
    assert len(run.stderr.strip().splitlines()) <= 3


def test_unsuitable():
    assert unsuitable("EPSG:4326") == "geographic (degrees)"
    assert unsuitable("EPSG:3395").startswith("Mercator")  # world Mercator
    assert unsuitable("EPSG:32631") is None and unsuitable("EPSG:2154") is None  # UTM, LCC
    assert unsuitable(None) is None


def test_the_report_names_each_inputs_own_crs_and_the_evaluation_crs_once(tmp_path):
    """Issue 35 item 7: a geographic reference against a Web Mercator submission. The
    report's ``reference.crs`` and ``submission.crs`` are each file's own CRS by its
    authority code (they were the local projection's 2 KB PROJJSON, the submission's
    EPSG:3857 recorded nowhere); ``parameters.evaluation_crs`` names the projection
    once, with the WKT that rebuilds it (it has no authority code)."""
    import json

    import geopandas as gpd
    from pyproj import CRS

    ref, sub = squares(45.0)
    gpd.GeoDataFrame(geometry=ref, crs="EPSG:4326").to_file(tmp_path / "ref.gpkg")
    gpd.GeoDataFrame(geometry=sub, crs="EPSG:4326").to_crs(3857).to_file(tmp_path / "sub.gpkg")
    res = geoeval.score(tmp_path / "ref.gpkg", tmp_path / "sub.gpkg", matchers=["bgm"],
                        json=tmp_path / "r.json")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["reference"]["crs"] == "EPSG:4326"
    assert report["submission"]["crs"] == "EPSG:3857"
    assert all(len(json.dumps(report[k])) < 200 for k in ("reference", "submission"))
    ev = report["parameters"]["evaluation_crs"]
    assert set(ev) == {"crs", "rule", "wkt"}
    proj = local_equal_area("EPSG:4326", tuple(shapely.total_bounds(ref)))
    assert ev["crs"] == proj.name and ev["crs"].startswith("geoeval local equal-area")
    assert CRS.from_wkt(ev["wkt"]) == proj == CRS.from_user_input(res.reference.crs)
    # the objects were evaluated there: the areas are the ellipsoid's
    np.testing.assert_allclose(res.reference.areas, [geodesic_area(g) for g in ref], rtol=1e-6)
    # a CRS with an authority code is named by it alone, once
    chosen = geoeval.score(tmp_path / "ref.gpkg", tmp_path / "sub.gpkg", matchers=["bgm"],
                           evaluation_crs="EPSG:32632").to_dict()
    assert chosen["parameters"]["evaluation_crs"] == {
        "crs": "EPSG:32632", "rule": "given (evaluation_crs)", "wkt": None}
    assert (chosen["reference"]["crs"], chosen["submission"]["crs"]) == ("EPSG:4326",
                                                                          "EPSG:3857")


def test_a_resampled_raster_and_a_reprojected_layer_keep_their_own_crs():
    """The submission's own CRS, whatever brought it onto the reference: a label raster
    in the neighbouring UTM zone (resampled onto the reference grid) and a layer with no
    authority code (named by its CRS's name: never its definition)."""
    import rasterio.warp
    from rasterio.transform import from_origin

    labels = np.zeros((40, 40), np.int32)
    labels[5:15, 5:15], labels[20:35, 22:30] = 1, 2
    t = from_origin(500_000, 4_500_040, 1, 1)
    t2, width, height = rasterio.warp.calculate_default_transform(
        "EPSG:32631", "EPSG:32630", 40, 40, *rasterio.transform.array_bounds(40, 40, t))
    moved = np.zeros((height, width), np.int32)
    rasterio.warp.reproject(labels, moved, src_transform=t, src_crs="EPSG:32631",
                            dst_transform=t2, dst_crs="EPSG:32630",
                            resampling=rasterio.warp.Resampling.nearest)
    res = geoeval.score((labels, t, "EPSG:32631"), (moved, t2, "EPSG:32630"), matchers=["bgm"])
    d = res.to_dict()
    assert (d["reference"]["crs"], d["submission"]["crs"]) == ("EPSG:32631", "EPSG:32630")
    assert d["parameters"]["evaluation_crs"] == {"crs": "EPSG:32631",
                                                 "rule": "the reference's CRS", "wkt": None}
    assert res.results["bgm"].matching.n_instances == 2
    site = 'LOCAL_CS["site grid",UNIT["metre",1]]'
    boxes = [shapely.box(0, 0, 10, 10)]
    d = geoeval.score(ObjectSet.from_geometries(boxes, crs=site),
                      ObjectSet.from_geometries(boxes, crs=site), matchers=["bgm"]).to_dict()
    assert d["reference"]["crs"] == d["submission"]["crs"] == "site grid"
    ev = d["parameters"]["evaluation_crs"]
    assert ev["crs"] == "site grid" and ev["wkt"].startswith("ENGCRS[\"site grid\"")


def test_the_warning_names_the_option_as_its_caller_knows_it(tmp_path, capsys):
    """The CRS geoeval chose is a warning that says how to choose another: --eval-crs
    on the command line, evaluation_crs= from Python (never both); so does the
    Mallows pooling warning (--exact, approximate=False)."""
    import warnings

    import geopandas as gpd

    from geoeval.cli.main import main
    from geoeval.measures.mallows import pooling_warning
    from geoeval.validate import command_line_names

    ref, sub = squares(60.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", geoeval.GeoevalWarning)
        res = geoeval.score(ObjectSet.from_geometries(ref, crs="EPSG:4326"),
                            ObjectSet.from_geometries(sub, crs="EPSG:4326"), matchers=["bgm"])
    said = [w for w in res.warnings if "computed in" in w]
    assert said and said[0].endswith("set evaluation_crs= to choose the CRS"), said
    paths = []
    for name, geoms in (("ref.gpkg", ref), ("sub.gpkg", sub)):
        gpd.GeoDataFrame(geometry=list(geoms), crs="EPSG:4326").to_file(tmp_path / name)
        paths.append(str(tmp_path / name))
    assert main(["score", *paths, "-m", "bgm"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "set --eval-crs to choose the CRS" in err and "evaluation_crs=" not in err
    assert pooling_warning("mom", 2, 1e-5).endswith("pass approximate=False for exact scores")
    with command_line_names():
        assert pooling_warning("mom", 2, 1e-5).endswith("pass --exact for exact scores")

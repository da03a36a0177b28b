"""Inputs that give nothing: an empty layer or raster on either side is scored with
a warning naming the side and why; a layer of points or lines is an error naming
its geometry types and the file's polygon layers; --strict makes warnings errors;
a missing CRS is given per side; a cut .shx is named."""

from __future__ import annotations

import re

import geopandas as gpd
import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin
from shapely.geometry import LineString, Point, box

from geoeval.cli.main import main

CRS = "EPSG:32631"


@pytest.fixture()
def layers(tmp_path):
    polys = gpd.GeoDataFrame({"id": [1, 2]}, geometry=[box(0, 0, 10, 10), box(20, 0, 30, 10)],
                             crs=CRS)
    ref = tmp_path / "ref.gpkg"
    polys.to_file(ref, layer="buildings")
    empty = tmp_path / "empty.gpkg"
    polys.iloc[:0].to_file(empty, layer="detections")
    mixed = tmp_path / "mixed.gpkg"
    gpd.GeoDataFrame({"id": [1, 2]}, geometry=[Point(1, 1), Point(21, 1)],
                     crs=CRS).to_file(mixed, layer="centres")
    polys.to_file(mixed, layer="outlines")
    lines = tmp_path / "lines.gpkg"
    gpd.GeoDataFrame({"id": [1]}, geometry=[LineString([(0, 0), (9, 9)])],
                     crs=CRS).to_file(lines, layer="roads")
    return {"ref": ref, "empty": empty, "mixed": mixed, "lines": lines}


def run(capsys, *argv):
    code = main(["score", *map(str, argv), "-m", "bgm"])
    out = capsys.readouterr()
    return code, out.out, " ".join(out.err.split())


@pytest.mark.parametrize("side", ["submission", "reference"])
def test_an_empty_layer_is_scored_and_named(layers, capsys, side):
    args = (layers["ref"], layers["empty"]) if side == "submission" else (
        layers["empty"], layers["ref"])
    code, out, err = run(capsys, *args)
    assert code == 0
    assert f"the {side} has no objects: its layer has no features" in err
    assert "empty.gpkg" in err
    assert f"The {side} has no objects" in out  # and the reading under the table says so
    code, _, err = run(capsys, *args, "--strict")
    assert code == 2 and "--strict" in err


def test_features_all_skipped_say_so(tmp_path, layers, capsys):
    none = tmp_path / "none.gpkg"
    gpd.GeoDataFrame({"id": [1, 2]}, geometry=[None, None], crs=CRS).to_file(none)
    code, _, err = run(capsys, layers["ref"], none)
    assert code == 0
    assert "2 of 2 feature(s) skipped: 2 without geometry" in err
    assert "the submission has no objects: all 2 of its features were skipped" in err


def test_an_empty_raster_says_every_pixel_is_background(tmp_path, capsys):
    paths = []
    for name, value in (("ref.tif", 1), ("sub.tif", 0)):
        labels = np.zeros((20, 20), dtype=np.uint16)
        labels[2:8, 2:8] = value
        p = tmp_path / name
        with rasterio.open(p, "w", driver="GTiff", width=20, height=20, count=1,
                           dtype="uint16", crs=CRS, transform=from_origin(0, 20, 1, 1)) as d:
            d.write(labels, 1)
        paths.append(p)
    code, _, err = run(capsys, *paths)
    assert code == 0 and "the submission has no objects: every pixel is background" in err


@pytest.mark.parametrize("side", ["submission", "reference"])
def test_a_layer_of_points_is_an_error_naming_the_polygon_layers(layers, capsys, side):
    pair = (layers["ref"], layers["mixed"]) if side == "submission" else (
        layers["mixed"], layers["ref"])
    flag = "--sub-layer" if side == "submission" else "--ref-layer"
    code, _, err = run(capsys, *pair, flag, "centres")
    assert code == 2
    assert re.search(r"mixed\.gpkg: layer 'centres' holds no polygons \(2 Point\)", err), err
    assert "its layers of polygons: outlines" in err
    code, _, err = run(capsys, *pair, flag, "outlines")  # the layer it names works
    assert code == 0, err


def test_a_layer_of_lines_without_polygon_layers(layers, capsys):
    code, _, err = run(capsys, layers["lines"], layers["ref"])
    assert code == 2
    assert "layer 'roads' holds no polygons (1 LineString)" in err
    assert "the file has no layer of polygons" in err


def test_a_missing_crs_is_given_per_side_as_the_message_says(tmp_path, capsys):
    labels = np.zeros((20, 20), dtype=np.uint16)
    labels[2:8, 2:8] = 1
    paths = {}
    for name, crs in (("bare.tif", None), ("geo.tif", CRS)):
        p = tmp_path / name
        with rasterio.open(p, "w", driver="GTiff", width=20, height=20, count=1,
                           dtype="uint16", crs=crs, transform=from_origin(0, 20, 1, 1)) as d:
            d.write(labels, 1)
        paths[name] = p
    for ref, sub, flag in ((paths["bare.tif"], paths["geo.tif"], "--ref-crs"),
                           (paths["geo.tif"], paths["bare.tif"], "--sub-crs")):
        code, _, err = run(capsys, ref, sub, "-q")
        assert code == 2 and "bare.tif: has no CRS" in err
        advice = re.search(rf"({flag} \S+)\)", err)
        assert advice, err
        code, _, err = run(capsys, ref, sub, "-q", *advice.group(1).split())
        assert code == 0, err
    code, _, err = run(capsys, paths["geo.tif"], paths["bare.tif"], "-q", "--crs", CRS)
    assert code == 0, err  # --crs: any input that has none, rasters too


def test_a_cut_shx_names_the_index(tmp_path, layers, capsys):
    import geopandas as gpd

    shp = tmp_path / "cut.shp"
    gpd.read_file(layers["ref"]).to_file(shp)
    shx = shp.with_suffix(".shx")
    data = shx.read_bytes()
    shx.write_bytes(data[: len(data) - 5])  # a partial copy
    code, _, err = run(capsys, layers["ref"], shp)
    assert code == 2
    assert "cut.shp: damaged Shapefile: its index cut.shx is cut short" in err


def _f1_cells(html: str) -> list[str]:
    """The F1 column of the HTML page's scores table (``data-value``, one per matcher)."""
    table = html[html.index('<table class="scores">'):]
    table = table[:table.index("</table>")]
    rows = re.findall(r"<tr><th scope=\"row\">.*?</tr>", table, flags=re.S)
    return [re.findall(r'data-value="([^"]*)"', r)[2] for r in rows]


@pytest.mark.parametrize("empty", ["submission", "reference", "both"])
def test_f1_of_an_empty_side_agrees_everywhere(layers, tmp_path, capsys, empty):
    """One rule (F1 = 2PR/(P + R), the harmonic mean, 0 when either is 0): with one side
    empty F1 is 0, with both empty it is undefined; the table, JSON, CSV, HTML page,
    Python API, the warnings and the sentence under the table all say so."""
    import json

    import geoeval

    ref = layers["empty"] if empty in ("reference", "both") else layers["ref"]
    sub = layers["empty"] if empty in ("submission", "both") else layers["ref"]
    out = tmp_path / "out"
    out.mkdir()
    code = main(["score", str(ref), str(sub), "-m", "bgm", "-m", "iou", "--json",
                 str(out / "r.json"), "--csv-dir", str(out), "--html", str(out / "r.html")])
    cap = capsys.readouterr()
    err = " ".join(cap.err.split())
    said = " ".join(cap.out.split())
    assert code == 0, err
    f1 = None if empty == "both" else 0.0
    row = re.search(r"│ F1 +│(.*)│", cap.out)
    assert row, cap.out
    assert [c.strip() for c in row.group(1).split("│")] == (
        ["–", "–"] if f1 is None else ["0.0000", "0.0000"])
    rep = json.loads((out / "r.json").read_text())
    assert [rep["results"][m]["f1"] for m in ("bgm", "iou")] == [f1, f1]
    csv_rows = (out / "summary.csv").read_text().splitlines()
    col = csv_rows[0].split(",").index("f1")
    assert [r.split(",")[col] for r in csv_rows[1:]] == (["", ""] if f1 is None
                                                         else ["0.0", "0.0"])
    assert _f1_cells((out / "r.html").read_text()) == (
        ["", ""] if f1 is None else ["0.0", "0.0"])
    with pytest.warns(geoeval.GeoevalWarning):
        res = geoeval.score(ref, sub, matchers=["bgm", "iou"])
    assert [res.results[m].f1 for m in ("bgm", "iou")] == [f1, f1]
    if f1 is None:
        assert "F1 0" not in err and "F1 are 0" not in said
        assert err.count("precision, recall and F1 are undefined") == 2
        assert "Neither side has objects" in said and "F1 are undefined" in said
    else:
        assert "F1 0" in err and "F1 are 0" in said
        assert "F1 are undefined" not in err + said


def test_strict_refuses_before_the_matching(layers, tmp_path, capsys, monkeypatch):
    """--strict (strict=True): a warning known from reading (here an empty submission)
    refuses the run before the overlap and matching, with each warning printed, exit 2,
    nothing written; from Python the refusal names strict=True."""
    import geoeval
    from geoeval import engine
    from geoeval.errors import StrictError

    def no_work(*args, **kwargs):
        raise AssertionError("the overlap was computed before --strict refused the run")

    monkeypatch.setattr(engine, "compute_overlap", no_work)
    out = tmp_path / "r.json"
    code = main(["score", str(layers["ref"]), str(layers["empty"]), "--strict", "--json",
                 str(out)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert "warning: " in err and "the submission has no objects" in err
    assert "geoeval: error: --strict: 1 warning(s), the first:" in err
    assert "Traceback" not in err and not out.exists()
    steps = []
    with pytest.raises(StrictError, match=r"^strict=True: 1 warning\(s\), the first: .*"
                                          r"the submission has no objects"):
        geoeval.score(layers["ref"], layers["empty"], strict=True, progress=steps.append)
    assert "overlap" not in steps


def test_strict_refuses_a_missing_scene_before_any_scene(layers, tmp_path, capsys,
                                                         monkeypatch):
    """A scene without a submission is known from the folders: --strict refuses the run
    before scoring any scene."""
    import shutil

    from geoeval.scoring import scenes

    ref_dir, sub_dir = tmp_path / "refs", tmp_path / "subs"
    ref_dir.mkdir()
    sub_dir.mkdir()
    for name in ("a", "b"):
        shutil.copy(layers["ref"], ref_dir / f"{name}.gpkg")
    shutil.copy(layers["ref"], sub_dir / "a.gpkg")

    def no_scene(*args, **kwargs):
        raise AssertionError("a scene was scored before --strict refused the run")

    monkeypatch.setattr("geoeval.scoring.scene.score", no_scene)
    monkeypatch.setattr(scenes, "_score_empty", no_scene)
    code = main(["score", str(ref_dir), str(sub_dir), "-m", "bgm", "--strict"])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 2, err
    assert "1 scene(s) without a submission" in err and "--strict: 1 warning(s)" in err

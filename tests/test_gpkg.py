"""GeoPackage, CSV and figure outputs of ``geoeval score`` (issue 7)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pandas as pd
import pyogrio
import pytest
import shapely
from shapely import box

import geoeval
from geoeval.cli.main import main
from geoeval.errors import InputError, OutputError
from geoeval.objects import ObjectSet
from geoeval.report.gpkg import grouped_union, write_gpkg
from geoeval.report.objects import object_tables
from geoeval.scoring import score_objects

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
CRS = "EPSG:32651"


def small_scene():
    """Hand-made scene (metres, EPSG:32651).

    references: 10 matched one-to-one by 100; 11 and 12 both covered by 101
    (a merge: many-to-one for MOM); 13 missed (nothing near it).
    submissions: 100, 101, and 102 a false alarm far away.
    """
    x0, y0 = 570000.0, 1450000.0
    refs = [box(x0, y0, x0 + 10, y0 + 10),            # 10
            box(x0 + 20, y0, x0 + 30, y0 + 10),       # 11
            box(x0 + 31, y0, x0 + 41, y0 + 10),       # 12
            box(x0 + 60, y0, x0 + 70, y0 + 10)]       # 13
    subs = [box(x0 + 1, y0, x0 + 11, y0 + 10),        # 100: IoU 90/110
            box(x0 + 20, y0, x0 + 41, y0 + 10),       # 101: covers 11 and 12
            box(x0 + 100, y0 + 100, x0 + 105, y0 + 105)]  # 102: false alarm
    ref = ObjectSet.from_geometries(refs, [10, 11, 12, 13], crs=CRS,
                                    classes=["house", "house", "shed", "house"], path="ref")
    sub = ObjectSet.from_geometries(subs, [100, 101, 102], crs=CRS, path="sub")
    return score_objects(ref, sub, matchers=["mom", "iou"])


@pytest.fixture(scope="module")
def scene_gpkg(tmp_path_factory):
    res = small_scene()
    path = tmp_path_factory.mktemp("gpkg") / "scene.gpkg"
    write_gpkg(res, path)
    return res, path


def test_layers_fields_and_statuses_match_the_report(scene_gpkg):
    res, path = scene_gpkg
    layers = {name: kind for name, kind in pyogrio.list_layers(path)}
    assert set(layers) == {"reference", "submission", "instances", "summary", "layer_styles"}
    assert layers["summary"] is None and layers["layer_styles"] is None
    report = res.to_dict()["results"]["mom"]
    ref = pyogrio.read_dataframe(path, layer="reference")
    sub = pyogrio.read_dataframe(path, layer="submission")
    assert ref.crs.to_epsg() == 32651
    for col in ("id", "class", "area", "status", "instance", "kind", "partners", "overlap",
                "best_iou", "best_partner", "mallows"):
        assert col in ref.columns
    assert "score" not in ref.columns  # MOM's instances are scored by their Mallows score
    assert sorted(ref.loc[ref.status == "missed", "id"]) == sorted(report["missed_ids"]) == [13]
    assert sorted(sub.loc[sub.status == "false_alarm", "id"]) == report["false_alarm_ids"] == [102]
    assert set(ref.status) == {"matched", "missed"} and set(sub.status) == {"matched",
                                                                            "false_alarm"}
    by_id = ref.set_index("id")
    # hand-worked: 10 overlaps 100 on 9 x 10 = 90 m², IoU 90 / 110
    assert by_id.loc[10, "kind"] == "one-to-one"
    assert by_id.loc[10, "overlap"] == pytest.approx(90.0)
    assert by_id.loc[10, "best_iou"] == pytest.approx(90 / 110)
    assert by_id.loc[10, "best_partner"] == 100
    # 11 and 12 merged into 101: IoU 100/210 each, the merge is many-to-one
    assert by_id.loc[11, "kind"] == by_id.loc[12, "kind"] == "many-to-one"
    assert by_id.loc[11, "instance"] == by_id.loc[12, "instance"]
    assert by_id.loc[11, "best_iou"] == pytest.approx(100 / 210)
    assert by_id.loc[11, "partners"] == 1
    # missed: no instance, null kind/partner, zero overlap
    assert pd.isna(by_id.loc[13, "instance"]) and pd.isna(by_id.loc[13, "kind"])
    assert pd.isna(by_id.loc[13, "best_partner"]) and by_id.loc[13, "best_iou"] == 0.0
    assert by_id.loc[13, "class"] == "house"
    sub_by = sub.set_index("id")
    assert sub_by.loc[101, "partners"] == 2 and sub_by.loc[101, "overlap"] == pytest.approx(200)
    # areas equal the object areas and the geometry areas
    np.testing.assert_allclose(ref.area.to_numpy(), shapely.area(ref.geometry.values))
    np.testing.assert_allclose(np.sort(ref["area"]), np.sort(res.reference.areas))


def test_instances_layer_and_summary(scene_gpkg):
    res, path = scene_gpkg
    report = res.to_dict()["results"]["mom"]
    inst = pyogrio.read_dataframe(path, layer="instances").sort_values("instance")
    assert len(inst) == len(report["instances"]) == 2
    for row, item in zip(inst.itertuples(), report["instances"], strict=True):
        assert row.kind == item["kind"]
        assert row.overlap == pytest.approx(item["overlap"])
        assert row.reference_ids == ",".join(map(str, item["reference"]))
        assert row.submission_ids == ",".join(map(str, item["submission"]))
    merge = inst[inst.kind == "many-to-one"].iloc[0]
    # union of 11, 12 and 101 is the 21 x 10 box of 101
    assert shapely.area(merge.geometry) == pytest.approx(210.0)
    summary = pyogrio.read_dataframe(path, layer="summary", read_geometry=False)
    row = summary[(summary.matcher == "mom") & summary["class"].isna()].iloc[0]
    for key in ("missed", "false_alarms", "matched_reference", "matched_submission"):
        assert row[key] == report[key]
    assert row.precision == pytest.approx(report["precision"])
    assert row.recall == pytest.approx(report["recall"])
    assert row.many_to_one == 1 and row.one_to_one == 1
    iou = summary[summary.matcher == "iou"].iloc[0]
    assert iou.recall == pytest.approx(res.results["iou"].recall)


def test_version_and_layer_styles(scene_gpkg):
    _, path = scene_gpkg
    con = sqlite3.connect(path)
    try:
        assert con.execute("PRAGMA user_version").fetchone()[0] == 10200  # GeoPackage 1.2
        assert con.execute("PRAGMA application_id").fetchone()[0] == 0x47504B47  # 'GPKG'
        contents = dict(con.execute("SELECT table_name, data_type FROM gpkg_contents"))
        assert contents["layer_styles"] == "attributes"
        assert contents["summary"] == "attributes" and contents["reference"] == "features"
        geom_col = dict(con.execute("SELECT table_name, column_name FROM gpkg_geometry_columns"))
        rows = con.execute("SELECT f_table_catalog, f_table_schema, f_table_name, "
                           "f_geometry_column, styleQML, styleSLD, useAsDefault "
                           "FROM layer_styles").fetchall()
    finally:
        con.close()
    assert sorted(r[2] for r in rows) == ["instances", "reference", "submission"]
    for cat, schema, table, gcol, qml, sld, default in rows:
        assert cat == "" and schema == "" and default == 1
        assert gcol == geom_col[table]
        root = ET.fromstring(qml.split("\n", 1)[1])  # after the DOCTYPE line
        renderer = root.find("renderer-v2")
        assert renderer.get("type") == "categorizedSymbol"
        attr = "kind" if table == "instances" else "status"
        assert renderer.get("attr") == attr
        values = [c.get("value") for c in renderer.find("categories")]
        expected = {"reference": ["matched", "missed"],
                    "submission": ["matched", "false_alarm"],
                    "instances": ["one-to-one", "one-to-many", "many-to-one"]}[table]
        assert values == expected
        symbols = renderer.find("symbols")
        assert len(symbols) == len(values)
        ET.fromstring(sld)  # well-formed
    # the same colour for "matched" in the reference style as in the figures
    ref_qml = next(r[4] for r in rows if r[2] == "reference")
    assert "51,160,44,150" in ref_qml and "matched (3)" in ref_qml and "missed (1)" in ref_qml


def test_sample_raster_is_vectorised_along_pixel_edges(tmp_path):
    res = geoeval.score(SAMPLE / "reference.tif", SAMPLE / "submissions" / "s4_fragmented.tif",
                        matchers=["bgm"])
    path = write_gpkg(res, tmp_path / "s4.gpkg", matcher="bgm")
    ref = pyogrio.read_dataframe(path, layer="reference")
    assert len(ref) == len(res.reference)
    # exact pixel areas (0.36 m² pixels) in the column and in the geometry
    np.testing.assert_allclose(ref["area"].to_numpy(), res.reference.areas)
    np.testing.assert_allclose(shapely.area(ref.geometry.values), res.reference.areas,
                               rtol=1e-9)
    report = res.to_dict()["results"]["bgm"]
    assert sorted(ref.loc[ref.status == "missed", "id"]) == sorted(report["missed_ids"])
    sub = pyogrio.read_dataframe(path, layer="submission", read_geometry=False)
    assert sorted(sub.loc[sub.status == "false_alarm", "id"]) == sorted(
        report["false_alarm_ids"])
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_csv_tables_equal_the_gpkg_tables(scene_gpkg, tmp_path):
    res, path = scene_gpkg
    files = geoeval.write_csv(res, tmp_path / "tables")
    assert [f.name for f in files] == ["reference.csv", "submission.csv", "instances.csv",
                                       "summary.csv"]
    for layer in ("reference", "submission", "instances"):
        csv = pd.read_csv(tmp_path / "tables" / f"{layer}.csv")
        gpkg = pyogrio.read_dataframe(path, layer=layer, read_geometry=False)
        assert list(csv.columns) == [c for c in gpkg.columns if c != "fid"]
        assert csv["status" if layer != "instances" else "kind"].tolist() == \
            gpkg["status" if layer != "instances" else "kind"].tolist()
    ref = pd.read_csv(tmp_path / "tables" / "reference.csv")
    assert ref.loc[ref.id == 13, "instance"].isna().all()  # null is an empty cell


def test_geoparquet_files_equal_the_gpkg_layers(scene_gpkg, tmp_path):
    import geopandas as gpd

    from geoeval.report.parquet import write_parquet

    res, path = scene_gpkg
    files = write_parquet(res, tmp_path / "pq")
    assert [f.name for f in files] == ["reference.parquet", "submission.parquet",
                                       "instances.parquet", "summary.parquet"]
    for layer in ("reference", "submission", "instances"):
        pq = gpd.read_parquet(tmp_path / "pq" / f"{layer}.parquet")
        gpkg = pyogrio.read_dataframe(path, layer=layer)
        assert pq.crs.equals(gpkg.crs) and pq.crs.to_epsg() == 32651
        cols = [c for c in gpkg.columns if c not in ("fid", "geometry")]
        assert list(pq.columns[:-1]) == cols
        pd.testing.assert_frame_equal(pq[cols].reset_index(drop=True),
                                      gpkg[cols].reset_index(drop=True), check_dtype=False)
        # same shapes (the GeoPackage promotes them to MultiPolygons)
        assert shapely.equals(pq.geometry.values, gpkg.geometry.values).all()
    from geoeval.report.objects import to_frame

    summary = pd.read_parquet(tmp_path / "pq" / "summary.parquet")
    pd.testing.assert_frame_equal(summary, to_frame(object_tables(res).summary))


def test_cli_parquet_dir_and_a_failed_run_leaves_nothing(tmp_path):
    code = main(["score", str(SAMPLE / "reference.tif"),
                 str(SAMPLE / "submissions" / "s1_near_perfect.tif"), "-m", "bgm",
                 "--parquet-dir", str(tmp_path / "pq"), "-q"])
    assert code == 0 and sorted(p.name for p in (tmp_path / "pq").iterdir()) == [
        "instances.parquet", "reference.parquet", "submission.parquet", "summary.parquet"]
    # the output is checked before the work: a file where the folder should be
    (tmp_path / "f").write_text("x")
    assert main(["score", str(SAMPLE / "reference.tif"), str(SAMPLE / "reference.tif"),
                 "-m", "bgm", "--parquet-dir", str(tmp_path / "f"), "-q"]) == 2
    # a run that fails after the check (an unknown --gpkg-matcher) writes no folder
    assert main(["score", str(SAMPLE / "reference.tif"), str(SAMPLE / "reference.tif"),
                 "-m", "bgm", "--gpkg-matcher", "mom", "--parquet-dir",
                 str(tmp_path / "new"), "-q"]) == 2
    assert not (tmp_path / "new").exists()


def test_table_columns_are_consistent(scene_gpkg):
    res, _ = scene_gpkg
    t = object_tables(res, "iou")
    # iou: 10-100 IoU 0.818 ≥ 0.5 matched; 11/12 vs 101 IoU 0.476 < 0.5: missed
    status = dict(zip(t.reference["id"].tolist(), t.reference["status"].tolist(), strict=True))
    assert status == {10: "matched", 11: "missed", 12: "missed", 13: "missed"}
    assert t.reference["score"][0] == pytest.approx(90 / 110)  # the IoU instance score
    with pytest.raises(InputError, match="was not run"):
        object_tables(res, "bgm")


def test_grouped_union_equals_union_per_group():
    rng = np.random.default_rng(7)
    xy = rng.uniform(0, 50, size=(200, 2))
    geoms = shapely.box(xy[:, 0], xy[:, 1], xy[:, 0] + rng.uniform(1, 9, 200),
                        xy[:, 1] + rng.uniform(1, 9, 200))
    groups = rng.integers(0, 37, size=200)
    groups[groups == 5] = 6  # group 5 stays empty
    out = grouped_union(geoms, groups, 37)
    for g in range(37):
        expected = shapely.union_all(geoms[groups == g])
        assert shapely.area(shapely.symmetric_difference(out[g], expected)) < 1e-9
    assert out[5].is_empty


def test_figure_png_and_svg(scene_gpkg, tmp_path):
    res, _ = scene_gpkg
    png = geoeval.save_status_figure(res, tmp_path / "f.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = geoeval.save_status_figure(res, tmp_path / "f.svg", matcher="iou")
    text = svg.read_text()
    assert "<svg" in text and "reference missed" in text.replace("\u00a0", " ")
    with pytest.raises(OutputError, match="png or .svg"):
        geoeval.save_status_figure(res, tmp_path / "f.jpg")


def test_cli_outputs(tmp_path):
    out = tmp_path / "o.gpkg"
    code = main(["score", str(SAMPLE / "reference.gpkg"),
                 str(SAMPLE / "submissions" / "s9_blobby.shp"), "--ref-layer", "buildings",
                 "--id-field", "id", "-m", "iou", "-m", "bgm", "--gpkg", str(out),
                 "--gpkg-matcher", "iou", "--csv-dir", str(tmp_path / "csv"),
                 "--json", str(tmp_path / "r.json"), "-q"])
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    ref = pyogrio.read_dataframe(out, layer="reference", read_geometry=False)
    assert sorted(ref.loc[ref.status == "missed", "id"]) == sorted(
        report["results"]["iou"]["missed_ids"])
    assert (tmp_path / "csv" / "summary.csv").exists()
    assert main(["score", str(SAMPLE / "reference.tif"), str(SAMPLE / "reference.tif"),
                 "--gpkg", str(tmp_path / "no" / "x.gpkg"), "-q"]) == 2
    assert main(["score", str(SAMPLE / "reference.tif"), str(SAMPLE / "reference.tif"),
                 "-m", "bgm", "--gpkg-matcher", "mom", "--gpkg", str(out), "-q"]) == 2


def test_raster_score_does_not_import_geopandas():
    code = (
        "import sys\n"
        "from geoeval.cli.main import main\n"
        f"main(['score', {str(SAMPLE / 'reference.tif')!r}, "
        f"{str(SAMPLE / 'submissions' / 's2_misses.tif')!r}, '-m', 'bgm', '-q'])\n"
        "print(sorted(m for m in ('geopandas', 'pandas', 'matplotlib') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"


def test_status_map_shows_splits_and_merges(tmp_path):
    """The status map fills references by what happened to them: one-to-one, split
    (over-detection), merged (under-detection), missed, with their counts."""
    from shapely import box

    from geoeval.objects import ObjectSet

    ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(14, 0, 24, 10), box(28, 0, 34, 10),
                                     box(35, 0, 41, 10), box(60, 0, 70, 10)])
    sub = ObjectSet.from_geometries([box(0.5, 0, 10, 10), box(14, 0, 19, 10),
                                     box(19.3, 0, 24, 10), box(28, 0, 41, 10)])
    res = geoeval.score(ref, sub, matchers=["hoover"])
    text = geoeval.save_status_figure(res, tmp_path / "m.svg").read_text().replace("\u00a0", " ")
    for label in ("reference matched one-to-one (1)", "reference split (over-detection) (1)",
                  "reference merged (under-detection) (2)", "reference missed (1)",
                  "accuracy: hoover eq. 2"):
        assert label in text, label
    assert "mom Mallows" not in text  # only the matchers that ran are described


def test_status_map_draws_multipolygons():
    """Layers read from GeoPackages and Shapefiles hold MultiPolygons: every part,
    holes included, is drawn (the path has the vertices of every ring)."""
    from geoeval.report.status_figure import polygons_path

    ring = box(0, 0, 10, 10).difference(box(4, 4, 6, 6))  # a square with a hole
    geoms = np.array([shapely.MultiPolygon([ring, box(20, 0, 25, 5)]), box(30, 0, 31, 1)],
                     dtype=object)
    path = polygons_path(geoms)
    # 4 rings (outer, hole, second part, single polygon) of 5 closed vertices each
    assert (path.codes == path.MOVETO).sum() == 4 and len(path.vertices) == 20
    rings = path.vertices.reshape(4, 5, 2)
    x, y = rings[..., 0], rings[..., 1]
    signed = 0.5 * (x[:, :-1] * y[:, 1:] - x[:, 1:] * y[:, :-1]).sum(axis=1)
    # exteriors counter-clockwise, the hole clockwise: the non-zero rule leaves it empty
    np.testing.assert_allclose(signed, [100, -4, 25, 1])


def test_status_figure_shows_each_class(tmp_path):
    ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 30, 10), box(40, 0, 50, 10)],
                                    classes=np.array(["house", "house", "shed"], dtype=object))
    sub = ObjectSet.from_geometries([box(0, 0, 10, 10), box(40, 0, 50, 10), box(60, 0, 62, 2)],
                                    classes=np.array(["house", "house", "shed"], dtype=object))
    res = score_objects(ref, sub, matchers=["bgm"], per_class=True)
    text = geoeval.save_status_figure(res, tmp_path / "c.svg").read_text().replace("\u00a0", " ")
    # house: 2 references, 2 submitted, 1 match -> F1 0.50; shed: 1 reference, 1 false
    # alarm, no match -> precision 0, recall 0, F1 0.00
    assert "each class on its own" in text and "house (2)" in text and "shed (1)" in text
    assert "0.50" in text and "0.00" in text

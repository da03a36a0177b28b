"""Strata by zone, size and class, worked out by hand on tiny scenes."""

from __future__ import annotations

import geopandas as gpd
import numpy as np
import pytest
from shapely import box

from geoeval.errors import InputError
from geoeval.objects import ObjectSet
from geoeval.scoring import score_objects
from geoeval.scoring.strata import OUTSIDE, size_labels

CRS = "EPSG:32651"


def zones_frame():
    """Three strips A [0,100), B [100,200), C [200,300) of height 100."""
    return gpd.GeoDataFrame({"NAME": ["A", "B", "C"]},
                            geometry=[box(0, 0, 100, 100), box(100, 0, 200, 100),
                                      box(200, 0, 300, 100)], crs=CRS)


def zone_scene():
    """r1..r6 against s1..s5, IoU matcher at 0.5.

    A: r1 [10,20]² matched by s1 (IoU 9/11); r2 missed; r6 centred on the A|B
       border (x = 100): goes to A, the first zone in file order; s2 false alarm.
    B: r3 = s3 exactly; r5 [190,205] (centre 197.5, in B) matched in the scene by
       s5 [194,209] (centre 201.5, in C; IoU 110/190): a crossing match.
    C: r4 missed; s5.  outside: s4 at x = 400.
    """
    refs = [box(10, 10, 20, 20), box(40, 10, 50, 20), box(110, 10, 120, 20),
            box(210, 10, 220, 20), box(190, 40, 205, 50), box(95, 80, 105, 90)]
    subs = [box(11, 10, 21, 20), box(70, 70, 75, 75), box(110, 10, 120, 20),
            box(400, 10, 405, 15), box(194, 40, 209, 50)]
    return (ObjectSet.from_geometries(refs, [1, 2, 3, 4, 5, 6], crs=CRS),
            ObjectSet.from_geometries(subs, [11, 12, 13, 14, 15], crs=CRS))


def test_three_zones_known_counts():
    ref, sub = zone_scene()
    res = score_objects(ref, sub, matchers=["iou"], zones=zones_frame(), zone_field="NAME")
    whole = res.results["iou"]
    assert (whole.precision, whole.recall) == (3 / 5, 3 / 6)
    kind = res.strata.kinds["zone"]
    assert list(kind.reference_labels) == ["A", "A", "B", "C", "B", "A"]
    assert list(kind.submission_labels) == ["A", "A", "B", OUTSIDE, "C"]
    got = {n: (s.reference_index.size, s.submission_index.size,
               s.results["iou"].precision, s.results["iou"].recall, s.results["iou"].f1)
           for n, s in kind.strata.items()}
    assert got == {
        "A": (3, 2, 1 / 2, 1 / 3, pytest.approx(0.4)),
        "B": (2, 1, 1.0, 1 / 2, pytest.approx(2 / 3)),
        "C": (1, 1, 0.0, 0.0, 0.0),  # the crossing match is lost: r5 missed in B, s5 FA in C
        OUTSIDE: (0, 1, 0.0, None, 0.0),  # nothing to find: recall null, F1 0
    }
    d = res.to_dict()["strata"]["zone"]
    assert d["strata"]["A"]["results"]["iou"]["missed"] == 2
    assert d["strata"][OUTSIDE]["results"]["iou"]["false_alarms"] == 1
    # the strata partition both sides
    assert sum(v["reference_objects"] for v in d["strata"].values()) == len(ref)
    assert sum(v["submission_objects"] for v in d["strata"].values()) == len(sub)


def test_no_outside_stratum_when_every_object_is_in_a_zone():
    ref, sub = zone_scene()
    res = score_objects(ref, sub.subset(np.array([0, 1, 2, 4])), matchers=["iou"],
                        zones=zones_frame(), zone_field="NAME")
    assert OUTSIDE not in res.strata.kinds["zone"].strata


def test_size_edges_go_to_the_upper_bin():
    names = ("small", "medium", "large")
    got = size_labels(np.array([0.0, 99.9, 100.0, 399.0, 400.0, 1e6]), np.array([100.0, 400.0]),
                      names)
    assert list(got) == ["small", "small", "medium", "medium", "large", "large"]


def test_size_strata_split_a_match_across_bins():
    """r1 (area 100, on the edge: medium) detected by s1 (area 99: small, IoU 0.99);
    r2 (area 400: large) detected exactly; s3 (area 25: small) false alarm."""
    ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(50, 0, 70, 20)], crs=CRS)
    sub = ObjectSet.from_geometries([box(0, 0, 9.9, 10), box(50, 0, 70, 20),
                                     box(100, 0, 105, 5)], crs=CRS)
    res = score_objects(ref, sub, matchers=["iou", "bgm"], size_bins=[100, 400])
    whole = res.results["iou"]
    assert (whole.precision, whole.recall) == (2 / 3, 1.0)
    st = res.strata.kinds["size"].strata
    assert list(st) == ["small", "medium", "large"]
    small, medium, large = (st[k].results["iou"] for k in ("small", "medium", "large"))
    assert (small.precision, small.recall) == (0.0, None)
    assert (medium.precision, medium.recall) == (None, 0.0)
    assert (large.precision, large.recall, large.f1) == (1.0, 1.0, 1.0)
    assert st["large"].results["bgm"].accuracy == pytest.approx(1.0)
    d = res.to_dict()["strata"]["size"]
    assert d["definition"]["edges"] == [100.0, 400.0]


def test_size_bins_coco_on_a_raster_scales_by_the_pixel_area():
    from geoeval.grid import LabelGrid
    from geoeval.scoring.strata import size_edges

    t = __import__("affine").Affine(0.5, 0, 0, 0, -0.5, 0)
    grid = LabelGrid(np.zeros((2, 2), np.int32), t, None)
    ref = ObjectSet(ids=np.zeros(0, int), areas=np.zeros(0), grid=grid)
    edges, names, _ = size_edges("coco", ref, ref)
    assert edges.tolist() == [32 * 32 * 0.25, 96 * 96 * 0.25]
    assert names == ("small", "medium", "large")


@pytest.mark.parametrize("bins", [[400, 100], [0, 10], "a,b", [float("nan")]])
def test_bad_size_bins(bins):
    ref, sub = zone_scene()
    with pytest.raises(InputError, match="size_bins"):
        score_objects(ref, sub, matchers=["iou"], size_bins=bins)


def test_bad_zone_field_and_file(tmp_path):
    ref, sub = zone_scene()
    with pytest.raises(InputError, match="zone-field"):
        score_objects(ref, sub, matchers=["iou"], zones=zones_frame(), zone_field="nope")
    with pytest.raises(InputError, match="not found"):
        score_objects(ref, sub, matchers=["iou"], zones=tmp_path / "none.gpkg")


def test_zones_from_a_file_in_another_crs(tmp_path):
    path = tmp_path / "zones.gpkg"
    zones_frame().to_crs("EPSG:4326").to_file(path)
    ref, sub = zone_scene()
    res = score_objects(ref, sub, matchers=["iou"], zones=str(path), zone_field="NAME")
    assert list(res.strata.kinds["zone"].reference_labels[:5]) == ["A", "A", "B", "C", "B"]


def test_nothing_detected():
    ref, _ = zone_scene()
    sub = ObjectSet.from_geometries(np.array([], dtype=object), crs=CRS)
    res = score_objects(ref, sub, matchers=["iou", "bgm"], zones=zones_frame(),
                        zone_field="NAME", size_bins=[50, 150])
    for kind in res.strata.kinds.values():
        for s in kind.strata.values():
            assert s.results["iou"].precision is None
            assert s.results["iou"].recall == (0.0 if s.reference_index.size else None)


def test_class_strata_are_the_per_class_results():
    ref, sub = zone_scene()
    ref = ObjectSet.from_geometries(ref.geometry,
                                    ref.ids, crs=CRS, classes=list("aabbab"))
    res = score_objects(ref, sub, matchers=["iou"], per_class=True, zones=zones_frame(),
                        zone_field="NAME")
    assert set(res.strata.kinds) == {"zone", "class"}
    cls = res.strata.kinds["class"]
    for name, c in res.per_class.classes.items():
        assert cls.strata[name].results is c.results
    assert res.to_dict()["strata"]["class"]["strata"]["a"]["reference_objects"] == 3


def test_strata_get_intervals_on_the_scene_blocks():
    ref, sub = zone_scene()
    res = score_objects(ref, sub, matchers=["iou"], zones=zones_frame(), zone_field="NAME",
                        bootstrap=100, block_size=1e4)
    for s in res.strata.kinds["zone"].strata.values():
        assert s.bootstrap.grid == res.bootstrap.grid
        r = s.results["iou"]
        iv = s.bootstrap.intervals["iou"]
        # one block: every interval collapses to the stratum's own value
        assert iv["recall"] == (None if r.recall is None else [r.recall, r.recall])
    d = res.to_dict()["strata"]["zone"]["strata"]["B"]["bootstrap"]
    assert d["iou"]["precision"] == [1.0, 1.0]


def test_cli_writes_strata_to_json_csv_and_gpkg(tmp_path, capsys):
    import json

    import pyogrio

    from geoeval.cli.main import main

    ref, sub = zone_scene()
    gpd.GeoDataFrame({"id": ref.ids}, geometry=list(ref.polygons), crs=CRS).to_file(
        tmp_path / "ref.gpkg")
    gpd.GeoDataFrame({"id": sub.ids}, geometry=list(sub.polygons), crs=CRS).to_file(
        tmp_path / "sub.gpkg")
    zones_frame().to_file(tmp_path / "zones.gpkg")
    code = main(["score", str(tmp_path / "ref.gpkg"), str(tmp_path / "sub.gpkg"),
                 "--id-field", "id", "-m", "iou", "--zones", str(tmp_path / "zones.gpkg"),
                 "--zone-field", "NAME", "--size-bins", "100", "--bootstrap", "50",
                 "--json", str(tmp_path / "r.json"), "--gpkg", str(tmp_path / "o.gpkg"),
                 "--csv-dir", str(tmp_path / "csv"), "-q"])
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["strata"]["zone"]["strata"]["A"]["results"]["iou"]["recall"] == 1 / 3
    assert report["bootstrap"]["n"] == 50
    layer = pyogrio.read_dataframe(tmp_path / "o.gpkg", layer="reference", read_geometry=False)
    assert list(layer.sort_values("id")["stratum_zone"]) == ["A", "A", "B", "C", "B", "A"]
    import pandas as pd

    table = pd.read_csv(tmp_path / "csv" / "strata.csv")
    row = table[(table.by == "zone") & (table.stratum == "B")].iloc[0]
    assert (row.reference_objects, row.precision, row.recall) == (2, 1.0, 0.5)
    assert len(pd.read_csv(tmp_path / "csv" / "bootstrap.csv")) == 5
    sub_csv = pd.read_csv(tmp_path / "csv" / "submission.csv")
    assert set(sub_csv["stratum_size"]) == {"[0, 100)", "[100, inf)"}


@pytest.mark.parametrize("args", [["--size-bins", "a,b"], ["--bootstrap", "0"],
                                  ["--confidence", "1.5", "--bootstrap", "5"]])
def test_cli_bad_options_exit_2(tmp_path, args, capsys):
    from geoeval.cli.main import main

    ref, sub = zone_scene()
    gpd.GeoDataFrame(geometry=list(ref.polygons), crs=CRS).to_file(tmp_path / "ref.gpkg")
    gpd.GeoDataFrame(geometry=list(sub.polygons), crs=CRS).to_file(tmp_path / "sub.gpkg")
    code = main(["score", str(tmp_path / "ref.gpkg"), str(tmp_path / "sub.gpkg"), "-m", "iou",
                 "-q", *args])
    assert code == 2
    assert "Traceback" not in capsys.readouterr().err

"""Per-class scoring (``--class-field``): each class on its own and all together."""

from __future__ import annotations

import json

import numpy as np
import pyogrio
import pytest
from shapely import box

import geoeval
from geoeval.cli.main import main
from geoeval.errors import InputError
from geoeval.objects import ObjectSet
from geoeval.scoring import score_objects

CRS = "EPSG:32651"


def scene(sub_classes=None):
    """Three houses and two sheds; detections of two houses and one shed, one false alarm.

    reference: h1 [0,10], h2 [20,30], h3 [40,50] (house); s1 [60,70], s2 [80,90] (shed)
    submission: d1 ≈ h1, d2 ≈ h2, d3 ≈ s1, d4 far away (false alarm)
    """
    refs = [box(x, 0, x + 10, 10) for x in (0, 20, 40, 60, 80)]
    subs = [box(1, 0, 11, 10), box(20, 1, 30, 11), box(61, 0, 71, 10), box(200, 200, 205, 205)]
    ref = ObjectSet.from_geometries(refs, [1, 2, 3, 4, 5], crs=CRS,
                                    classes=["house", "house", "house", "shed", "shed"])
    sub = ObjectSet.from_geometries(subs, [11, 12, 13, 14], crs=CRS, classes=sub_classes)
    return ref, sub


def test_classes_inherited_from_the_reference():
    ref, sub = scene()
    res = score_objects(ref, sub, matchers=["iou", "bgm"], per_class=True)
    pc = res.to_dict()["per_class"]
    assert pc["submission_classes"] == "from_reference"
    assert pc["unclassified_submission"] == 1  # d4 overlaps nothing
    house = pc["classes"]["house"]
    assert house["reference_objects"] == 3 and house["submission_objects"] == 2
    r = house["results"]["iou"]
    # hand count: 2 of 3 houses found, both detections correct
    assert (r["matched_reference"], r["missed"], r["false_alarms"]) == (2, 1, 0)
    assert r["recall"] == pytest.approx(2 / 3) and r["precision"] == 1.0
    shed = pc["classes"]["shed"]["results"]["iou"]
    assert shed["recall"] == 0.5 and shed["precision"] == 1.0
    # all classes together: the top-level results (d4 is a false alarm there only)
    top = res.results["iou"]
    assert top.recall == pytest.approx(3 / 5) and top.precision == pytest.approx(3 / 4)
    # BGM per class: matched overlap / union of the class's objects (eq. 1)
    bgm = pc["classes"]["house"]["results"]["bgm"]
    assert bgm["accuracy"] == pytest.approx((90 + 90) / (300 + 200 - 180))


def test_classes_from_the_submission_field():
    # d2 labelled "shed" although it sits on house h2: a class confusion
    ref, sub = scene(["house", "shed", "shed", "shed"])
    res = score_objects(ref, sub, matchers=["iou"], per_class=True)
    pc = res.per_class
    assert pc.submission_classes == "field" and pc.unclassified_submission == 0
    house = pc.classes["house"].results["iou"]
    shed = pc.classes["shed"].results["iou"]
    assert (house.matching.missed.size, house.matching.false_alarms.size) == (2, 0)
    # shed: s1 found by d3; d2 and d4 are shed false alarms
    assert shed.recall == 0.5 and shed.precision == pytest.approx(1 / 3)
    # all classes together ignore the labels
    assert res.results["iou"].recall == pytest.approx(3 / 5)


def test_mallows_per_class_reuses_identical_instances():
    ref, sub = scene()
    res = score_objects(ref, sub, matchers=["mom"], per_class=True, resolution=0.5)
    main_scores = res.results["mom"].instance_mallows
    pc = res.per_class
    total_reused = 0
    for item in pc.classes.values():
        mal = item.results["mom"].mallows
        total_reused += mal.reused
        assert mal.computed == 0  # no instance spans two classes here
        # eq. 13 per class = mean of the class's instance scores of the all-classes run
        n = len(item.results["mom"].matching.instances)
        assert mal.scores.size == n
    assert total_reused == len(res.results["mom"].matching.instances) == 3
    assert np.isclose(np.mean([pc.classes[c].results["mom"].accuracy
                               for c in ("house",)]),
                      np.mean(main_scores[[0, 1]]))


def test_score_with_class_field_from_files(tmp_path):
    ref, sub = scene()
    import geopandas as gpd

    gpd.GeoDataFrame({"id": ref.ids, "kind": ref.classes}, geometry=list(ref.polygons),
                     crs=CRS).to_file(tmp_path / "ref.gpkg")
    gpd.GeoDataFrame({"id": sub.ids}, geometry=list(sub.polygons),
                     crs=CRS).to_file(tmp_path / "sub.gpkg")
    code = main(["score", str(tmp_path / "ref.gpkg"), str(tmp_path / "sub.gpkg"),
                 "--id-field", "id", "--class-field", "kind", "-m", "iou",
                 "--json", str(tmp_path / "r.json"), "--gpkg", str(tmp_path / "o.gpkg"), "-q"])
    assert code == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert set(report["per_class"]["classes"]) == {"house", "shed"}
    summary = pyogrio.read_dataframe(tmp_path / "o.gpkg", layer="summary", read_geometry=False)
    assert sorted(summary["class"].dropna()) == ["house", "shed"]
    assert summary.loc[summary["class"] == "house", "recall"].item() == pytest.approx(2 / 3)
    ref_layer = pyogrio.read_dataframe(tmp_path / "o.gpkg", layer="reference",
                                       read_geometry=False)
    assert sorted(ref_layer["class"]) == ["house"] * 3 + ["shed"] * 2


def test_class_field_on_a_raster_is_an_error(tmp_path):
    from pathlib import Path

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    with pytest.raises(InputError, match="vector layers only"):
        geoeval.score(sample / "reference.tif", sample / "submissions" / "s2_misses.tif",
                      class_field="class", matchers=["bgm"])


def test_without_class_field_no_per_class():
    ref, sub = scene()
    res = score_objects(ref, sub, matchers=["iou"])
    assert res.per_class is None and res.to_dict()["per_class"] is None


def test_mallows_per_class_scores_new_instances():
    """A detection covering a house and a shed is one many-to-one MOM instance in the
    all-classes run; per class it only has the house: a new instance, scored anew."""
    refs = [box(0, 0, 10, 10), box(11, 0, 21, 10)]
    subs = [box(0, 0, 21, 10)]
    ref = ObjectSet.from_geometries(refs, [1, 2], crs=CRS, classes=["house", "shed"])
    sub = ObjectSet.from_geometries(subs, [9], crs=CRS)
    res = score_objects(ref, sub, matchers=["mom"], per_class=True, resolution=1.0)
    assert res.results["mom"].matching.instances[0].kind == "many-to-one"
    house = res.per_class.classes["house"].results["mom"]
    assert (house.mallows.reused, house.mallows.computed) == (0, 1)
    single = score_objects(ObjectSet.from_geometries(refs[:1], [1], crs=CRS), sub,
                           matchers=["mom"], resolution=1.0)
    assert house.accuracy == pytest.approx(single.results["mom"].accuracy)
    assert res.per_class.classes["shed"].results["mom"].recall == 0.0

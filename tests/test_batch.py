"""Many scenes: pairing by name or list, SpaceNet pooling, per-scene reports."""

from __future__ import annotations

import json

import numpy as np
import pytest
import rasterio
from affine import Affine

import geoeval
from geoeval.cli.main import main
from geoeval.errors import InputError
from geoeval.scoring import pair_scenes


def write_labels(path, labels):
    with rasterio.open(path, "w", driver="GTiff", width=labels.shape[1], height=labels.shape[0],
                       count=1, dtype="uint16", crs="EPSG:32651",
                       transform=Affine(1.0, 0.0, 570000.0, 0.0, -1.0, 1450000.0)) as dst:
        dst.write(labels.astype("uint16"), 1)


def squares(positions, size=4, shape=(40, 40)):
    lab = np.zeros(shape, np.uint16)
    for k, (r, c) in enumerate(positions, start=1):
        lab[r:r + size, c:c + size] = k
    return lab


@pytest.fixture()
def folders(tmp_path):
    """Scene a: 3 references, 2 found + 1 false alarm. Scene b: 2 references, both found.
    Scene c: 1 reference, no submission file."""
    ref, sub = tmp_path / "ref", tmp_path / "sub"
    ref.mkdir()
    sub.mkdir()
    write_labels(ref / "a.tif", squares([(0, 0), (10, 10), (20, 20)]))
    write_labels(sub / "a.tif", squares([(0, 0), (10, 10), (30, 30)]))
    write_labels(ref / "b.tif", squares([(0, 0), (10, 10)]))
    write_labels(sub / "b.tif", squares([(0, 0), (10, 11)]))  # IoU 12/20 = 0.6
    write_labels(ref / "c.tif", squares([(5, 5)]))
    (ref / "a.tif.aux.xml").write_text("<PAMDataset/>")  # sidecars are ignored
    (sub / "notes.txt").write_text("x")
    return ref, sub


def test_pairing_by_name(folders):
    ref, sub = folders
    pairs, warnings = pair_scenes(ref, sub)
    assert [(n, r.name, None if s is None else s.name) for n, r, s in pairs] == [
        ("a", "a.tif", "a.tif"), ("b", "b.tif", "b.tif"), ("c", "c.tif", None)]
    assert any("without a submission" in w for w in warnings)
    (sub / "a.gpkg").write_bytes(b"")
    with pytest.raises(InputError, match="two files for scene 'a'"):
        pair_scenes(ref, sub)


def test_pooled_counts_are_summed_before_the_ratios(folders):
    ref, sub = folders
    seen = []
    res = geoeval.score_scenes(ref, sub, matchers=["iou", "bgm"],
                               progress=lambda done, total, name: seen.append((done, total)))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    iou = res.pooled["iou"]
    # hand count: TP 2 + 2 + 0, FP 1 + 0 + 0, FN 1 + 0 + 1 (SpaceNet pooling)
    assert (iou["matched_reference"], iou["false_alarms"], iou["missed"]) == (4, 1, 2)
    assert iou["precision"] == pytest.approx(4 / 5)
    assert iou["recall"] == pytest.approx(4 / 6)
    assert iou["f1"] == pytest.approx(2 * 0.8 * (4 / 6) / (0.8 + 4 / 6))
    # not the mean of the per-scene recalls (2/3, 1, 0)
    assert iou["recall"] != pytest.approx(np.mean([2 / 3, 1.0, 0.0]))
    # pooled mean IoU over all instances: 1, 1, 1, 0.6
    assert iou["accuracy"] == pytest.approx((3 + 0.6) / 4)
    # BGM pooled: matched overlap over union area summed over scenes (eq. 1)
    single = [geoeval.score(ref / f"{n}.tif", sub / f"{n}.tif", matchers=["bgm"])
              for n in ("a", "b")]
    w = sum(s.results["bgm"].matching.matched_overlap for s in single)
    u = sum(s.overlap.union_area for s in single) + 16.0  # scene c: one 4x4 reference
    assert res.pooled["bgm"]["accuracy"] == pytest.approx(w / u)
    scenes = {s.name: s for s in res.scenes}
    assert scenes["c"].submission is None and scenes["c"].results["iou"]["missed"] == 1
    assert scenes["c"].results["iou"]["precision"] is None
    # nothing detected against a reference object: recall and F1 0 (the harmonic mean
    # of 0 and anything), as the scene's warning says
    assert scenes["c"].results["iou"]["recall"] == 0.0 and scenes["c"].results["iou"]["f1"] == 0.0
    assert any("(recall and F1 0, precision undefined)" in w for w in scenes["c"].warnings)
    assert scenes["b"].results["iou"]["recall"] == 1.0
    d = res.to_dict()
    assert d["report"] == "scenes" and d["scenes_scored"] == 3 and len(d["scenes"]) == 3


def test_pairs_list(folders, tmp_path):
    ref, sub = folders
    lst = tmp_path / "pairs.csv"
    lst.write_text("scene,reference,submission\nfirst,a.tif,b.tif\nsecond,b.tif,a.tif\n")
    res = geoeval.score_scenes(ref, sub, pairs=lst, matchers=["iou"])
    assert [s.name for s in res.scenes] == ["first", "second"]
    assert res.scenes[0].submission.endswith("b.tif")
    lst.write_text("reference,submission\na.tif,b.tif\nmissing.tif,a.tif\n")
    with pytest.raises(InputError, match="line 3: no such reference"):
        geoeval.score_scenes(ref, sub, pairs=lst)
    lst.write_text("ref,sub\na.tif,b.tif\n")
    with pytest.raises(InputError, match="header"):
        geoeval.score_scenes(ref, sub, pairs=lst)


def test_cli_folders(folders, tmp_path):
    ref, sub = folders
    out = tmp_path / "out"
    code = main(["score", str(ref), str(sub), "-m", "iou", "--json", str(tmp_path / "s.json"),
                 "--csv-dir", str(out), "--scene-dir", str(tmp_path / "per"), "-q"])
    assert code == 0
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["pooled"]["iou"]["recall"] == pytest.approx(4 / 6)
    rows = (out / "scenes.csv").read_text().splitlines()
    assert rows[0].startswith("scene,matcher,scenes,reference_objects")
    assert rows[-1].startswith("(pooled),iou,3,6,")
    assert sorted(p.name for p in (tmp_path / "per").iterdir()) == [
        "a.gpkg", "a.json", "b.gpkg", "b.json", "c.gpkg", "c.json"]
    per_a = json.loads((tmp_path / "per" / "a.json").read_text())
    assert per_a["results"]["iou"]["missed"] == 1
    # a folder against a file, and per-scene outputs on folders, are errors
    assert main(["score", str(ref), str(sub / "a.tif"), "-q"]) == 2
    assert main(["score", str(ref), str(sub), "--gpkg", str(tmp_path / "x.gpkg"), "-q"]) == 2


def test_scene_without_submission_keeps_the_reference_readers_warnings(tmp_path):
    # scene "v": a vector reference with one polygon and one point (skipped with a warning)
    # and no submission file: the warning still reaches that scene's result
    import geopandas as gpd
    from shapely.geometry import Point, box

    ref, sub = tmp_path / "ref", tmp_path / "sub"
    ref.mkdir()
    sub.mkdir()
    gpd.GeoDataFrame({"id": [1, 2]}, geometry=[box(0, 0, 1, 1), Point(5, 5)],
                     crs="EPSG:32651").to_file(ref / "v.gpkg")
    result = geoeval.score_scenes(ref, sub, matchers=["bgm"])
    (scene,) = result.scenes
    assert scene.submission is None and scene.results["bgm"]["missed"] == 1
    assert any("skipped" in w and "1" in w for w in scene.warnings), scene.warnings

"""What a notebook shows: every result's repr is one line of a few hundred characters
at most, saying what it is, how many and its headline numbers (never its arrays);
instances show the objects' ids and their scores (or why none); COCO's undefined
numbers are None; a result's warnings are Python warnings too."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest
from affine import Affine
from shapely import box

import geoeval
from geoeval.errors import GeoevalWarning
from geoeval.reprs import number

ROOT = Path(__file__).resolve().parents[1]
BOXES = ROOT / "sample_data" / "boxes"
LIMIT = 300  # "a few hundred characters"
TRANSFORM = Affine(1.0, 0.0, 500000.0, 0.0, -1.0, 4000000.0)
CRS = "EPSG:32631"


def short(obj: object) -> str:
    text = repr(obj)
    assert len(text) <= LIMIT, (len(text), text[:200])
    assert "\n" not in text and "array(" not in text, text
    return text


@pytest.fixture(scope="module")
def scene():
    """Three buildings with labels 101, 102, 103; the submission (labels 7, 8, 9)
    finds the first, splits the second and misses the third."""
    ref = np.zeros((40, 40), np.int32)
    ref[2:12, 2:12], ref[2:12, 20:30], ref[25:35, 5:15] = 101, 102, 103
    sub = np.zeros_like(ref)
    sub[2:12, 3:12] = 7
    sub[2:12, 20:25], sub[2:12, 25:30] = 8, 9
    return geoeval.score((ref, TRANSFORM, CRS), (sub, TRANSFORM, CRS), breakdown=True,
                         bootstrap=10, size_bins=[50])


def test_score_results_are_short_and_say_their_numbers(scene):
    text = short(scene)
    for name, r in scene.results.items():
        assert f"{name}: F1 {number(r.f1)}" in text
        m = short(r)
        assert f"precision {number(r.precision)}" in m and f"F1 {number(r.f1)}" in m
        assert f"{r.matching.missed.size} missed" in short(r.matching)
    for b in scene.breakdown.values():
        assert f"F1 {number(b.now['f1'])}" in short(b)
    assert "size" in short(scene.strata)
    for kind in scene.strata.kinds.values():
        short(kind)
        for s in kind.strata.values():
            assert f"{s.reference_index.size} reference" in short(s)
    assert "10 replicates" in short(scene.bootstrap)
    short(scene.reference), short(scene.overlap)
    assert f"scene score {number(scene.results['mom'].mallows.scene)}" in short(
        scene.results["mom"].mallows)


def test_instances_show_ids_and_scores(scene):
    mom = scene.results["mom"]
    first = mom.matching.instance(0)
    assert first.reference == (0,) and first.reference_ids == (101,)
    assert first.submission_ids == (7,)
    text = short(first)
    assert "reference id 101 ↔ submission id 7" in text and "(0,)" not in text
    split = next(i for i in mom.matching.instances if i.kind == "one-to-many")
    assert split.reference_ids == (102,) and split.submission_ids == (8, 9)
    assert "submission ids 8, 9" in repr(split)
    # MOM's instances carry their Mallows score (eq. 12), the scene's mean of them (eq. 13)
    scores = [i.score for i in mom.matching.instances]
    np.testing.assert_allclose(scores, mom.mallows.scores)
    assert all(s is not None and 0 < s <= 1 for s in scores)
    assert f"score {first.score:.4g}" in text
    # BGM scores the scene, not its instances, and says so; Hoover and IoU their own
    bgm = scene.results["bgm"].matching.instance(0)
    assert bgm.score is None and "scores the scene" in repr(bgm)
    assert scene.results["hoover"].matching.instance(0).score is not None
    # the JSON report's instance rows are unchanged: ids, and MOM's score as "mallows"
    row = scene.to_dict()["results"]["mom"]["instances"][0]
    assert row["reference"] == [101] and "score" not in row and row["mallows"] == scores[0]


def test_a_mom_matching_alone_says_why_its_instances_have_no_score():
    ref = geoeval.ObjectSet.from_geometries([box(0, 0, 10, 10)], ids=[5])
    sub = geoeval.ObjectSet.from_geometries([box(1, 0, 11, 10)], ids=[6])
    inst = geoeval.match(geoeval.compute_overlap(ref, sub), "mom").instance(0)
    assert inst.reference_ids == (5,) and inst.submission_ids == (6,) and inst.score is None
    assert "Mallows score" in inst.score_note and "geoeval.score gives it" in inst.score_note
    scored = geoeval.score(ref, sub, matchers=["mom"]).results["mom"]
    assert scored.matching.instance(0).score == pytest.approx(scored.mallows.scores[0])


def test_box_results_are_short():
    voc = geoeval.evaluate_voc(BOXES / "voc" / "gt", BOXES / "voc" / "det")
    text = short(voc)  # was 5,269 characters of precision/recall arrays
    assert f"mAP {number(voc.map)}" in text
    for name, c in voc.classes.items():
        assert f"{name} {number(c.ap)}" in text
        assert f"{c.tp} TP" in short(c)
    short(voc.reference)
    coco = geoeval.evaluate_coco(BOXES / "coco" / "instances.json",
                                 BOXES / "coco" / "results.json")
    assert f"AP {number(coco.stats['AP'])}" in short(coco)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", GeoevalWarning)
        robin = geoeval.evaluate_robin(BOXES / "robin" / "gt",
                                       [BOXES / "robin" / "run1", BOXES / "robin" / "run2"],
                                       per_category=True)
        cats = geoeval.robin_categories(BOXES / "robin" / "gt", BOXES / "robin" / "run1")
    assert f"AUC {number(robin.auc)}" in short(robin) and "2 runs" in repr(robin)
    for r in robin.runs:
        assert f"{r.tp} TP" in short(r)
        short(r.match)
    for c in robin.categories.values():
        short(c)
    assert f"EDU {number(cats.edu)}" in short(cats)
    short(cats.runs[0])
    for c in cats.confusion_at.values():
        short(c)
    dota = geoeval.evaluate_dota(BOXES / "dota" / "labelTxt", BOXES / "dota" / "det")
    assert f"mAP {number(dota.map)}" in short(dota)
    for c in dota.classes.values():
        assert f"AP {number(c.ap)}" in short(c)
    short(dota.reference), short(dota.reference.outlines)
    segm = geoeval.evaluate_coco(BOXES / "coco_segm" / "instances.json",
                                 BOXES / "coco_segm" / "results.json", iou_type="segm")
    assert "<CocoResult segm:" in short(segm) and "1 category," in repr(segm)
    from geoeval.io.boxes import read_coco_pair

    masks = read_coco_pair(BOXES / "coco_segm" / "instances.json",
                           BOXES / "coco_segm" / "results.json", masks=True)[0].masks
    assert short(masks).startswith(f"<Masks of {len(masks)} objects")
    crowdai = geoeval.evaluate_crowdai(BOXES / "crowdai" / "annotation.json",
                                       BOXES / "crowdai" / "results.json")
    assert f"MTA {number(crowdai.polygons.mta)}" in short(crowdai)
    assert f"PoLiS {number(crowdai.polygons.polis)}" in short(crowdai.polygons)
    nv2 = geoeval.evaluate_neovision2(BOXES / "neovision2" / "truth",
                                      BOXES / "neovision2" / "results")
    assert f"weighted mean {number(nv2.weighted_mean)}" in short(nv2)
    short(nv2.overall), short(nv2.detection_only), short(nv2.overall.roc_detection_only)


def test_coco_undefined_numbers_are_none_as_in_the_json_and_the_table():
    from rich.console import Console

    from geoeval.report.box_tables import coco_tables

    reference = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "cat"}],
                 "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
                                  "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0}]}
    r = geoeval.evaluate_coco(reference, [{"image_id": 1, "category_id": 1,
                                           "bbox": [0, 0, 10, 10], "score": 0.9}])
    undefined = [k for k, v in r.to_dict()["stats"].items() if v is None]
    assert undefined and all(r.stats[k] is None for k in undefined)  # APm, APl, …
    assert -1.0 not in r.stats.values()
    assert all(r.stats_array[i] == -1 for i, k in enumerate(r.stats) if k in undefined)
    console = Console(width=80, record=True, file=io.StringIO())
    for t in coco_tables(r):
        console.print(t)
    text = console.export_text()
    assert all(f"│ {k}" in text for k in undefined) and "-1" not in text and "–" in text


def test_ranking_repr_is_short():
    r = geoeval.rank_indicators({f"entry_{k}": {"p": k / 30, "r": 1 - k / 30}
                                 for k in range(30)}, tie_break=None, method="mcmc",
                                samples=2000, burn_in=500)
    assert "(best first)" in short(r) and ", …, " in repr(r) and "of 30:" in repr(r)


def test_warnings_are_python_warnings_too():
    ref = np.zeros((10, 10), np.int32)
    ref[2:5, 2:5] = 1
    sub = np.zeros_like(ref)  # nothing detected: the result warns
    with pytest.warns(GeoevalWarning) as caught:
        r = geoeval.score((ref, TRANSFORM, CRS), (sub, TRANSFORM, CRS), matchers=["bgm"])
    assert r.warnings and [str(w.message) for w in caught] == list(r.warnings)
    assert caught[0].filename == __file__  # points at the caller's line
    with warnings.catch_warnings():
        warnings.simplefilter("error", GeoevalWarning)  # as a user can make them errors
        with pytest.raises(GeoevalWarning):
            geoeval.score((ref, TRANSFORM, CRS), (sub, TRANSFORM, CRS), matchers=["bgm"])


def test_the_cli_prints_each_warning_once(tmp_path):
    import rasterio

    from geoeval.cli.main import main

    paths = []
    for name, labels in (("ref", np.pad(np.ones((3, 3), np.int32), 3)),
                         ("sub", np.zeros((9, 9), np.int32))):
        path = tmp_path / f"{name}.tif"
        with rasterio.open(path, "w", driver="GTiff", width=9, height=9, count=1,
                           dtype="int32", crs=CRS, transform=TRANSFORM) as dst:
            dst.write(labels, 1)
        paths.append(str(path))
    err = io.StringIO()
    with redirect_stderr(err), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert main(["score", *paths, "-m", "bgm", "-q"]) == 0
    assert not [w for w in caught if issubclass(w.category, GeoevalWarning)]
    assert err.getvalue().count("has no objects") == 1


def test_audit_partitioned_and_scenes_reprs_are_short():
    from geoeval.audit import AuditResult
    from geoeval.scoring.scenes import Scene, ScenesResult
    from geoeval.scoring.summary import (
        MatcherSummary,
        OverlapSummary,
        ScoreSummary,
        SideSummary,
    )

    audit = AuditResult(metrics=tuple(f"m{k}" for k in range(12)), alterations=("a", "b"),
                        shapes=("s",), settings={}, curves={}, triangles={}, n_results=4800,
                        seconds=2.5)
    assert "12 metrics" in short(audit) and "4,800 altered results" in repr(audit)
    m = MatcherSummary("bgm", 90, 85, 10, 5, 85 / 90, 0.9, 0.874, 80.0, 0.7, None, None,
                       {"one-to-one": 85}, {}, {})
    part = ScoreSummary(SideSummary("r.gpkg", "vector", 100, None),
                        SideSummary("s.gpkg", "vector", 90, None),
                        OverlapSummary("rtree", 85, 85, None, 1000.0), {"bgm": m}, {},
                        partitions={"partitions": 4})
    assert "in 4 partitions; bgm: F1" in short(part) and "10 missed" in short(m)
    scene = Scene("a", "ref.tif", "sub.tif", {}, {}, ())
    scenes = ScenesResult((scene,) * 3, {"bgm": {"f1": 0.5}}, {}, ("w",))
    assert short(scenes) == "<ScenesResult 3 scenes; pooled bgm: F1 0.5; 1 warning>"


def test_counts_of_one_are_singular():
    """One object, pair, instance, scene or partition is not written as a plural."""
    from geoeval.scoring.scenes import Scene, ScenesResult
    from geoeval.scoring.summary import OverlapSummary, ScoreSummary, SideSummary

    one = geoeval.ObjectSet.from_geometries([box(0, 0, 10, 10)], crs=CRS)
    res = geoeval.score(one, one, matchers=["mom"], resolution=1.0)
    r = res.results["mom"]
    assert "<ObjectSet 1 object (" in short(res.reference)
    assert "<Overlap 1 pair of" in short(res.overlap)
    assert "<Matching mom: 1 instance (1 one-to-one), 0 missed, 0 false alarms>" \
        == short(r.matching)
    assert short(r).endswith("; 1 instance>") and "<MallowsResult 1 instance," in short(r.mallows)
    scenes = ScenesResult((Scene("a", "ref.tif", "sub.tif", {}, {}, ()),), {}, {})
    assert short(scenes).startswith("<ScenesResult 1 scene;")
    part = ScoreSummary(SideSummary("r.gpkg", "vector", 1, None),
                        SideSummary("s.gpkg", "vector", 1, None),
                        OverlapSummary("rtree", 1, 1, None, 100.0), {}, {},
                        partitions={"partitions": 1})
    assert " in 1 partition; " in short(part)

"""COCO protocol: identical to pycocotools' COCOeval (bbox) on seeded random data sets,
plus a hand-worked crowd region."""

from __future__ import annotations

import contextlib
import copy
import io
import json

import numpy as np
import pytest

from geoeval.challenges.coco import STAT_NAMES, evaluate_coco
from geoeval.cli.main import main as cli_main
from geoeval.errors import InputError

pycocotools = pytest.importorskip("pycocotools", reason="pycocotools is the reference (test-only)")


def official(gt: dict, dets: list):
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(copy.deepcopy(dets))
        ev = COCOeval(coco_gt, coco_dt, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def random_set(seed: int, n_img: int = 40, n_cat: int = 6, integer: bool = True,
               first_ann_id: int = 1):
    """Crowd regions, images without ground truth, images without detections, a
    category without ground truth, detections on an unknown category, tied scores,
    annotation areas different from box areas, more than 100 detections in places."""
    rng = np.random.default_rng(seed)
    images = [{"id": int(i), "width": 640, "height": 480}
              for i in rng.permutation(np.arange(1, n_img + 1) * 7)]
    cats = [{"id": c, "name": f"c{c}"} for c in range(1, n_cat + 1)]
    anns, by_img, aid = [], {}, first_ann_id
    for im in images:
        n = 0 if rng.random() < 0.15 else rng.poisson(6)
        for _ in range(n):
            w, h = np.exp(rng.uniform(np.log(4), np.log(250), 2))
            x, y = rng.uniform(0, 400, 2)
            if integer:
                x, y, w, h = np.round([x, y, w, h])
            box = [float(x), float(y), float(max(w, 1)), float(max(h, 1))]
            area = box[2] * box[3] * (rng.uniform(0.4, 1) if rng.random() < 0.5 else 1)
            ann = {"id": aid, "image_id": im["id"], "category_id": int(rng.integers(1, n_cat)),
                   "bbox": box, "area": float(area), "iscrowd": int(rng.random() < 0.12)}
            anns.append(ann)
            by_img.setdefault(im["id"], []).append(ann)
            aid += 1
    dets = []
    for im in images:
        if rng.random() < 0.15:
            continue
        g = by_img.get(im["id"], [])
        n = rng.poisson(120 if rng.random() < 0.1 else 25)
        for _ in range(n):
            if g and rng.random() < 0.6:
                a = g[rng.integers(len(g))]
                x, y, w, h = np.array(a["bbox"]) + rng.normal(0, 3, 4)
                c = a["category_id"] if rng.random() < 0.9 else int(rng.integers(1, n_cat + 2))
            else:
                w, h = np.exp(rng.uniform(np.log(4), np.log(250), 2))
                x, y = rng.uniform(0, 400, 2)
                c = int(rng.integers(1, n_cat + 1))
            if integer:
                x, y, w, h = np.round([x, y, w, h])
            dets.append({"image_id": im["id"], "category_id": c,
                         "bbox": [float(x), float(y), float(max(w, 1)), float(max(h, 1))],
                         "score": float(np.round(rng.random(), 2))})
    return {"images": images, "categories": cats, "annotations": anns}, dets


@pytest.mark.parametrize("seed, integer, first_id", [
    (0, True, 1), (1, False, 1), (2, True, 1), (3, False, 1), (4, True, 0), (5, False, 0)])
def test_identical_to_pycocotools(seed, integer, first_id):
    gt, dets = random_set(seed, integer=integer, first_ann_id=first_id)
    ev = official(gt, dets)
    r = evaluate_coco(gt, dets)
    np.testing.assert_allclose(r.stats_array, ev.stats, rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.precision, ev.eval["precision"], rtol=0, atol=1e-12)
    np.testing.assert_allclose(r.recall, ev.eval["recall"], rtol=0, atol=1e-12)
    # per-class AP as the usual per-category reading of eval['precision']
    for k, cid in enumerate(r.category_ids):
        p = ev.eval["precision"][:, :, k, 0, -1]
        want = float(np.mean(p[p > -1])) if (p > -1).any() else None
        got = r.per_class[f"c{cid}"]["ap"]
        assert (got is None) == (want is None)
        if want is not None:
            assert got == pytest.approx(want, abs=1e-12)
    assert r.per_class[f"c{len(r.category_ids)}"]["ap"] is None  # the category without GT


def test_crowd_region_hand_worked():
    # one image: a person and a crowd region; three detections
    gt = {
        "images": [{"id": 1}],
        "categories": [{"id": 1, "name": "person"}],
        "annotations": [
            {"id": 1, "image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "area": 100,
             "iscrowd": 0},
            {"id": 2, "image_id": 1, "category_id": 1, "bbox": [100, 0, 100, 100],
             "area": 10000, "iscrowd": 1},
        ],
    }
    dets = [
        # inside the crowd: IoU = |D ∩ G| / |D| = 1 -> matched to the crowd, ignored
        {"image_id": 1, "category_id": 1, "bbox": [110, 10, 20, 20], "score": 0.9},
        # also inside the crowd: a crowd region can be matched again -> ignored, not FP
        {"image_id": 1, "category_id": 1, "bbox": [150, 50, 20, 20], "score": 0.8},
        # the person -> TP at every threshold
        {"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.7},
        # half outside the crowd: IoU_crowd = 0.5 -> ignored at .50 only, FP above
        {"image_id": 1, "category_id": 1, "bbox": [90, 0, 20, 10], "score": 0.6},
    ]
    r = evaluate_coco(gt, dets)
    # at IoU .50 the ranked list is TP only -> precision 1 everywhere; at .55..95 the
    # FP comes after the TP, so the envelope is still 1 at every recall level
    assert r.stats["AP"] == pytest.approx(1.0)
    assert r.stats["AR100"] == pytest.approx(1.0)
    assert r.stats["APs"] == pytest.approx(1.0)  # the person (area 100) is small
    assert r.stats["APm"] == -1 and r.stats["APl"] == -1  # only the crowd is large
    # without the crowd flag the two crowd detections are FPs ranked above the TP
    plain = copy.deepcopy(gt)
    plain["annotations"][1]["iscrowd"] = 0
    r2 = evaluate_coco(plain, dets)
    ev = official(plain, dets)
    np.testing.assert_allclose(r2.stats_array, ev.stats, atol=1e-12)
    # person TP at rank 3 after two FPs (IoU of a 20x20 box with the 100x100 region is .04)
    # -> precision 1/3 at recall 1/2, then the region is missed: AP = 51 * (1/3) / 101
    assert r2.stats["AP"] == pytest.approx(51 / 3 / 101)
    np.testing.assert_allclose(r.stats_array, official(gt, dets).stats, atol=1e-12)


def test_empty_and_degenerate_inputs():
    gt, _ = random_set(7, n_img=5)
    r = evaluate_coco(gt, [])
    ev = official(gt, [{"image_id": gt["images"][0]["id"], "category_id": 99,
                        "bbox": [0, 0, 1, 1], "score": 0.1}])  # pycocotools rejects []
    np.testing.assert_allclose(r.stats_array, ev.stats, atol=1e-12)
    no_gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}], "annotations": []}
    r = evaluate_coco(no_gt, [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 5, 5],
                               "score": 0.5}])
    assert all(v == -1 for v in r.stats.values())
    assert all(v is None for v in r.to_dict()["stats"].values())


def test_bad_inputs():
    gt, dets = random_set(8, n_img=3)
    with pytest.raises(InputError, match="image id 12345"):
        evaluate_coco(gt, [{"image_id": 12345, "category_id": 1, "bbox": [0, 0, 1, 1],
                            "score": 0.3}])
    with pytest.raises(InputError, match="no category"):
        evaluate_coco({"images": [], "categories": [], "annotations": []}, [])
    with pytest.raises(InputError, match="not COCO JSON"):
        evaluate_coco(gt, {"foo": 1})


def test_cli_json(tmp_path, capsys):
    gt, dets = random_set(9, n_img=10)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    out = tmp_path / "coco.json"
    assert cli_main(["boxes", "coco", str(tmp_path / "gt.json"), str(tmp_path / "dt.json"),
                     "--json", str(out), "--per-class"]) == 0
    assert "AP50" in capsys.readouterr().out
    report = json.loads(out.read_text())
    assert list(report["stats"]) == list(STAT_NAMES)
    ev = official(gt, dets)
    np.testing.assert_allclose([report["stats"][k] if report["stats"][k] is not None else -1
                                for k in STAT_NAMES], ev.stats, atol=1e-12)
    assert set(report["per_class"]) == {f"c{i}" for i in range(1, 7)}
    (tmp_path / "dt.json").write_text('[{"image_id": 1,\n "bbox": }]')
    assert cli_main(["boxes", "coco", str(tmp_path / "gt.json"), str(tmp_path / "dt.json")]) == 2
    assert "dt.json:2: invalid JSON" in capsys.readouterr().err

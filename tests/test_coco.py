"""COCO protocol: identical to pycocotools' COCOeval (bbox) on seeded random data sets,
plus a hand-worked crowd region."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from geoeval.challenges.coco import STAT_NAMES, evaluate_coco
from geoeval.cli.main import main as cli_main
from geoeval.errors import InputError

pycocotools = pytest.importorskip("pycocotools", reason="pycocotools is the reference (test-only)")


from coco_segm_data import official  # noqa: E402  (pycocotools' COCOeval, bbox by default)


def assert_same_as_official(r, ev) -> None:
    """The twelve numbers, precision and recall equal to pycocotools' bit for bit."""
    np.testing.assert_array_equal(r.stats_array, ev.stats)
    np.testing.assert_array_equal(r.precision, ev.eval["precision"])
    np.testing.assert_array_equal(r.recall, ev.eval["recall"])


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
    # only the crowd is large: undefined, None (the JSON's null, the table's –), not -1
    assert r.stats["APm"] is None and r.stats["APl"] is None
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
    assert all(v is None for v in r.stats.values())
    assert all(v is None for v in r.to_dict()["stats"].values())
    assert (r.stats_array == -1).all()  # COCOeval's convention, to compare with it


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


@pytest.mark.parametrize("seed, integer, first_id", [(10, True, 1), (11, False, 0)])
def test_bit_for_bit_from_memory_and_from_files(tmp_path, seed, integer, first_id):
    # the twelve numbers, precision and recall equal to pycocotools' exactly, whether
    # the results are given as objects or as a file (read by Arrow)
    gt, dets = random_set(seed, n_img=60, integer=integer, first_ann_id=first_id)
    ev = official(gt, dets)
    (tmp_path / "gt.json").write_text(json.dumps(gt))
    (tmp_path / "dt.json").write_text(json.dumps(dets))
    from geoeval.io._coco_arrow import _arrow_columns

    assert _arrow_columns(tmp_path / "dt.json") is not None
    for r in (evaluate_coco(gt, dets), evaluate_coco(tmp_path / "gt.json", tmp_path / "dt.json")):
        assert_same_as_official(r, ev)


@pytest.mark.parametrize("jobs", [2, 3, 7])
@pytest.mark.parametrize("seed, integer, first_id", [(12, True, 1), (13, False, 0)])
def test_threaded_image_groups_bit_for_bit(monkeypatch, seed, integer, first_id, jobs):
    # detections matched by groups of whole images in threads (as on large sets),
    # categories accumulated in threads: pycocotools' numbers exactly, also with
    # more groups than images hold detections
    from geoeval.challenges import coco

    gt, dets = random_set(seed, n_img=9, integer=integer, first_ann_id=first_id)
    ev = official(gt, dets)
    monkeypatch.setattr(coco, "THREADED_FROM", 0)
    monkeypatch.setattr(coco, "workers", lambda: jobs)
    r = evaluate_coco(gt, dets)
    assert_same_as_official(r, ev)


def test_image_parts_cover_the_detections_in_order():
    from geoeval.challenges.coco import _image_parts

    rng = np.random.default_rng(0)
    image = rng.integers(0, 12, 500)
    for jobs in (1, 2, 3, 5, 40):
        parts = _image_parts(image, 12, jobs)
        assert len(parts) <= jobs
        assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(500))
        for a, b in zip(parts[:-1], parts[1:], strict=True):  # consecutive images in order
            assert image[a].max() < image[b].min()
        assert all((np.diff(p) > 0).all() for p in parts)
    sizes = [p.size for p in _image_parts(image, 12, 2)]
    assert max(sizes) - min(sizes) <= np.bincount(image).max()  # balanced to an image
    assert [p.size for p in _image_parts(np.zeros(0, np.int64), 3, 2)] == [0]


def _small_case(draw_ints, draw_floats, n_img, n_cat, crowd_p, id0):
    """A tiny COCO set on a coarse grid: equal IoUs, tied scores, crowd, id 0."""
    images = [{"id": i + 1} for i in range(n_img)]
    cats = [{"id": c + 1, "name": f"c{c + 1}"} for c in range(n_cat)]
    anns, dets = [], []
    for i in range(draw_ints(0, 4 * n_img)):
        x, y, w, h = (4 * draw_ints(0, 6), 4 * draw_ints(0, 6), 4 * draw_ints(1, 6),
                      4 * draw_ints(1, 6))
        anns.append({"id": i + (0 if id0 else 1), "image_id": draw_ints(1, n_img),
                     "category_id": draw_ints(1, n_cat), "bbox": [x, y, w, h],
                     "area": float(w * h * draw_floats()), "iscrowd": int(draw_floats() < crowd_p)})
    for _ in range(draw_ints(0, 15 * n_img)):
        x, y, w, h = (4 * draw_ints(0, 6), 4 * draw_ints(0, 6), 4 * draw_ints(1, 6),
                      4 * draw_ints(1, 6))
        dets.append({"image_id": draw_ints(1, n_img), "category_id": draw_ints(1, n_cat),
                     "bbox": [x, y, w, h], "score": [0.2, 0.5, 0.9][draw_ints(0, 2)]})
    return {"images": images, "categories": cats, "annotations": anns}, dets


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n_img=st.integers(1, 4), n_cat=st.integers(1, 3),
       crowd_p=st.sampled_from([0.0, 0.3, 1.0]), id0=st.booleans())
def test_small_random_cases_bit_for_bit(data, n_img, n_cat, crowd_p, id0):
    # ties everywhere (scores, IoUs on a 4-pixel grid), crowd-only sets, an annotation
    # with id 0, images without ground truth, categories without detections; areas
    # straddling 32² (a box of 32 x 32 is "small" by its area field only)
    def ints(lo, hi):
        return data.draw(st.integers(lo, hi))

    def floats():
        return data.draw(st.sampled_from([0.25, 0.5, 1.0]))

    gt, dets = _small_case(ints, floats, n_img, n_cat, crowd_p, id0)
    if not dets:  # pycocotools cannot load an empty result list
        r = evaluate_coco(gt, dets)
        assert all(v in (None, 0.0) for v in r.stats.values())
        return
    ev = official(gt, dets)
    r = evaluate_coco(gt, dets)
    assert_same_as_official(r, ev)


def test_many_detections_per_image_bit_for_bit():
    # one image, 250 detections of one category (cut to 100; maxDets 1 and 10 bite),
    # 30 ground truths, tied scores
    rng = np.random.default_rng(3)
    anns = [{"id": i + 1, "image_id": 1, "category_id": 1,
             "bbox": [float(v) for v in rng.integers(0, 50, 2)] + [20.0, 20.0],
             "area": 400.0, "iscrowd": int(i % 7 == 0)} for i in range(30)]
    dets = [{"image_id": 1, "category_id": 1,
             "bbox": [float(v) for v in rng.integers(0, 50, 2)] + [20.0, 20.0],
             "score": float(rng.integers(0, 5)) / 4} for _ in range(250)]
    gt = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "a"}], "annotations": anns}
    ev = official(gt, dets)
    r = evaluate_coco(gt, dets)
    np.testing.assert_array_equal(r.stats_array, ev.stats)
    np.testing.assert_array_equal(r.precision, ev.eval["precision"])
    assert r.n_submission == 100


@pytest.mark.parametrize("n, major_hi, minor_hi", [(0, 1, 1), (1, 1, 1), (500, 3, 4),
                                                   (500, 2**40, 2**30)])
def test_sort_by_is_lexsort(n, major_hi, minor_hi):
    # the packed 64-bit key and the lexsort fallback (keys too wide to pack) both give
    # numpy.lexsort's order, ties by index
    from geoeval.challenges.coco import _dense_ranks, _sort_by

    rng = np.random.default_rng(n)
    major = rng.integers(0, major_hi, n)
    minor = rng.integers(0, minor_hi, n)
    np.testing.assert_array_equal(_sort_by(major, minor, n),
                                  np.lexsort((np.arange(n), minor, major)))
    scores = rng.integers(0, 4, n) / 4.0
    scores[:2] = -0.0 if n > 2 else scores[:2]
    dense = _dense_ranks(scores)
    # (rank, index) orders as (decreasing score, index)
    order = np.lexsort((np.arange(n), -scores))
    np.testing.assert_array_equal(_sort_by(np.zeros(n, np.int64), dense, n), order)
    # dense ranks: equal scores share one, higher scores come first
    for i in range(min(n, 50)):
        for j in range(min(n, 50)):
            assert (dense[i] < dense[j]) == (scores[i] > scores[j])


@settings(max_examples=200, deadline=None)
@given(cats=st.sets(st.one_of(st.integers(-20, 20), st.integers(-2**63, 2**63 - 1)),
                    min_size=1, max_size=6),
       ids=st.lists(st.one_of(st.integers(-25, 25), st.integers(-2**63, 2**63 - 1)),
                    max_size=30))
def test_category_index_is_a_binary_search(cats, ids):
    from geoeval.arrays import lookup  # how _evaluate finds the results' categories

    cat_ids = np.array(sorted(cats), dtype=np.int64)
    a = np.array(ids, dtype=np.int64)
    pos, known = lookup(cat_ids, a)
    ref = np.minimum(np.searchsorted(cat_ids, a), cat_ids.size - 1)
    assert np.array_equal(known, cat_ids[ref] == a)
    assert np.array_equal(pos[known], ref[known])

"""COCO masks (``iou_type="segm"``) and boundaries (``"boundary"``): identical to
pycocotools' ``COCOeval(iouType="segm")`` and to boundary-iou-api's evaluator on
random and adversarial data sets, plus hand-worked cases and the errors."""

from __future__ import annotations

import json

import numpy as np
import pytest

pycocotools = pytest.importorskip("pycocotools", reason="pycocotools is the reference (test-only)")
# pycocotools' decode under numpy 2
pytestmark = pytest.mark.filterwarnings("ignore:__array__ implementation:DeprecationWarning")

import pycocotools.mask as mu  # noqa: E402
from coco_segm_data import (  # noqa: E402
    boundary_iou_api,
    coco_rle,
    official,
    official_boundary,
    random_mask,
    random_polygons,
    random_segm_set,
    reference_band,
    rle_of,
    run_boundary_iou_api,
)

from geoeval.challenges.coco import evaluate_coco  # noqa: E402
from geoeval.cli.main import main as cli_main  # noqa: E402
from geoeval.errors import InputError  # noqa: E402
from geoeval.io._polygon_masks import _crossing_steps, polygon_masks  # noqa: E402
from geoeval.io.boxes import read_coco  # noqa: E402
from geoeval.io.masks import decode_counts, masks_from_counts  # noqa: E402
from geoeval.measures.boundary_band import mask_bands  # noqa: E402


def assert_identical(r, ev) -> None:
    """The twelve numbers, precision and recall equal to the oracle's, bit for bit."""
    np.testing.assert_array_equal(r.stats_array, ev.stats)
    np.testing.assert_array_equal(r.precision, ev.eval["precision"])
    np.testing.assert_array_equal(r.recall, ev.eval["recall"])


# --- rasterisation: polygons and RLE as the COCO mask API makes them -----------------

def _polygon_objects(seed: int, n: int = 300, size: tuple[int, int] = (1, 120)):
    rng = np.random.default_rng(seed)
    objs, hw = [], []
    for _ in range(n):
        h, w = (int(v) for v in rng.integers(size[0], size[1], 2))
        objs.append(random_polygons(rng, h, w))
        hw.append((h, w))
    return objs, np.array(hw)


def _rasterise(objs, hw):
    coords = np.concatenate([np.array(r, float) for o in objs for r in o])
    sizes = np.array([len(r) // 2 for o in objs for r in o])
    owner = np.repeat(np.arange(len(objs)), [len(o) for o in objs])
    return polygon_masks(coords, sizes, owner, hw[:, 0], hw[:, 1], chunk_points=500)


@pytest.mark.parametrize("seed", [0, 1])
def test_polygons_rasterised_as_the_mask_api(seed):
    objs, hw = _polygon_objects(seed)
    m = _rasterise(objs, hw)
    want = [mu.merge(mu.frPyObjects(o, int(h), int(w)))["counts"]
            for o, (h, w) in zip(objs, hw, strict=True)]
    assert m.encode() == want  # the RLE strings themselves, byte for byte


@pytest.mark.parametrize("n, far", [(40, 2e3), pytest.param(200, 1e5, marks=pytest.mark.slow)])
def test_extreme_polygons_rasterised_as_the_mask_api(n, far):
    # far-away, huge, near-vertical and repeated vertices; one-pixel images
    rng = np.random.default_rng(5)
    objs, hw = [], []
    for i in range(n):
        h, w = int(rng.integers(1, 300)), int(rng.integers(1, 300))
        if i % 7 == 0:
            h = 1
        k = int(rng.integers(3, 25))
        mode = i % 4
        if mode == 0:
            pts = rng.uniform(-far, far, (k, 2))
        elif mode == 1:
            x = rng.uniform(0, w, k)
            x[::2] += rng.normal(0, 1e-3, x[::2].size)
            pts = np.column_stack([x, rng.uniform(-50, h + 50, k)])
        elif mode == 2:
            pts = np.repeat(rng.integers(0, max(h, w), (k, 2)).astype(float), 2, axis=0)
        else:
            pts = np.array([[0, 0], [w, 0], [w, h], [0, h]], float) + rng.choice(
                [0, -0.5, 0.5, -1e-9], (4, 2))
        objs.append([pts.ravel().tolist()])
        hw.append((h, w))
    hw = np.array(hw)
    m = _rasterise(objs, hw)
    want = [mu.merge(mu.frPyObjects(o, int(h), int(w)))["counts"]
            for o, (h, w) in zip(objs, hw, strict=True)]
    assert m.encode() == want


def test_the_crossing_search_finds_the_exact_step_from_any_guess():
    rng = np.random.default_rng(0)
    n = 4000
    dy = rng.integers(1, 3000, n)
    xs = rng.integers(-100, 2000, n).astype(float)
    s = rng.uniform(-0.999, 0.999, n)
    s[s == 0] = 0.5
    u0, un = np.trunc(xs + 0.5), np.trunc(xs + s * dy + 0.5)
    level = (np.minimum(u0, un) + (np.abs(un - u0) // 2)).astype(np.int64)
    ok = np.minimum(u0, un) <= level
    ok &= level <= np.maximum(u0, un) - 1
    xs, s, level, dy = xs[ok], s[ok], level[ok], dy[ok]
    for guess in (np.zeros(level.size, np.int64), rng.integers(-5, 5000, level.size)):
        got = _crossing_steps(xs, s, level, dy, guess)
        for i in range(0, level.size, 37):  # brute force on a sample
            t = np.arange(dy[i] + 1)
            u = np.trunc(xs[i] + s[i] * t + 0.5)
            reach = u >= level[i] + 1 if s[i] > 0 else u <= level[i]
            assert got[i] == int(np.argmax(reach)), i


def test_rle_strings_decoded_and_encoded_as_the_mask_api():
    rng = np.random.default_rng(3)
    masks = [random_mask(rng, int(h), int(w)) for h, w in rng.integers(1, 50, (200, 2))]
    masks[0][:] = 1
    masks[1][:] = 0
    strings = [mu.encode(np.asfortranarray(m[:, :, None]))[0]["counts"] for m in masks]
    hw = np.array([m.shape for m in masks])
    got = masks_from_counts(*decode_counts(strings), hw[:, 0], hw[:, 1])
    for k, m in enumerate(masks):
        np.testing.assert_array_equal(got.dense(k), m.astype(bool))
    assert got.encode() == strings
    np.testing.assert_array_equal(got.areas(), [m.sum() for m in masks])
    rles = [{"size": list(m.shape), "counts": s} for m, s in zip(masks, strings, strict=True)]
    np.testing.assert_array_equal(got.bboxes(), mu.toBbox(rles))


def test_uncompressed_counts_with_empty_runs():
    # [5, 0, 3, 92]: 5 background, 0 foreground, 3 background, 92 foreground
    got = masks_from_counts(np.array([5, 0, 3, 92]), np.array([4]), np.array([10]),
                            np.array([10]))
    want = mu.decode(mu.frPyObjects({"size": [10, 10], "counts": [5, 0, 3, 92]}, 10, 10))
    np.testing.assert_array_equal(got.dense(0), want.astype(bool))


@pytest.mark.parametrize("n", [70, pytest.param(400, marks=pytest.mark.slow)])
def test_bands_equal_the_reference_erosion(n):
    # unions of rectangles (with holes), and polygons: convex ones (one run per column,
    # eroded on their runs) and the others (eroded on canvases)
    rng = np.random.default_rng(2)
    masks = [random_mask(rng, int(h), int(w)) for h, w in rng.integers(1, 90, (n, 2))]
    masks += [mu.decode(coco_rle(random_polygons(rng, int(h), int(w)), int(h), int(w)))
              for h, w in rng.integers(1, 120, (n, 2))]
    hw = np.array([m.shape for m in masks])
    strings = [mu.encode(np.asfortranarray(m[:, :, None]))[0]["counts"] for m in masks]
    m = masks_from_counts(*decode_counts(strings), hw[:, 0], hw[:, 1])
    for ratio in (0.02, 0.1, 0.0):
        bands = mask_bands(m, ratio, canvas_pixels=3000)  # several canvases
        for k, mask in enumerate(masks):
            np.testing.assert_array_equal(bands.dense(k), reference_band(mask, ratio))


# --- the protocol against the oracles -------------------------------------------------

@pytest.mark.parametrize("seed, mode", [(0, "bbox"), (1, "mask"), (2, "bbox")])
def test_segm_identical_to_pycocotools(seed, mode):
    gt, dets = random_segm_set(seed, result_mode=mode, first_ann_id=seed % 2)
    assert_identical(evaluate_coco(gt, dets, iou_type="segm"), official(gt, dets, "segm"))


@pytest.mark.parametrize("seed, mode, ratio", [(0, "bbox", 0.02), (1, "mask", 0.1)])
def test_boundary_identical_to_the_written_out_reference(seed, mode, ratio):
    gt, dets = random_segm_set(seed, result_mode=mode)
    r = evaluate_coco(gt, dets, iou_type="boundary", dilation_ratio=ratio)
    assert_identical(r, official_boundary(gt, dets, ratio))
    assert r.to_dict()["protocol"] == "coco-boundary" and r.to_dict()["dilation_ratio"] == ratio


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(10, 50))
def test_segm_and_boundary_sweep(seed):
    mode = ("bbox", "mask")[seed % 2]
    gt, dets = random_segm_set(seed, result_mode=mode, first_ann_id=int(seed % 3 == 0),
                               n_img=20, per_image=12)
    assert_identical(evaluate_coco(gt, dets, iou_type="segm"), official(gt, dets, "segm"))
    ratio = (0.02, 0.05, 0.003)[seed % 3]
    assert_identical(evaluate_coco(gt, dets, iou_type="boundary", dilation_ratio=ratio),
                     official_boundary(gt, dets, ratio))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [100, 101])
def test_crowdai_sized_tiles(seed):
    # 300 x 300 tiles as in the CrowdAI mapping challenge, many results per tile
    gt, dets = random_segm_set(seed, n_img=30, n_cat=1, size=(300, 301), per_image=25)
    assert_identical(evaluate_coco(gt, dets, iou_type="segm"), official(gt, dets, "segm"))
    assert_identical(evaluate_coco(gt, dets, iou_type="boundary"), official_boundary(gt, dets))


@pytest.mark.slow
@pytest.mark.parametrize("seed, mode, ratio", [(0, "bbox", 0.02), (1, "mask", 0.02),
                                               (2, "bbox", 0.06), (3, "mask", 0.005)])
def test_boundary_identical_to_boundary_iou_api(seed, mode, ratio, tmp_path):
    checkout = boundary_iou_api()
    if checkout is None:
        pytest.skip("boundary-iou-api or OpenCV not available (the authors' code needs cv2)")
    gt, dets = random_segm_set(seed, result_mode=mode, size=(20, 140))
    stats, precision, recall = run_boundary_iou_api(checkout, gt, dets, ratio, tmp_path)
    r = evaluate_coco(gt, dets, iou_type="boundary", dilation_ratio=ratio)
    np.testing.assert_array_equal(r.stats_array, stats)
    np.testing.assert_array_equal(r.precision, precision)
    np.testing.assert_array_equal(r.recall, recall)


@pytest.mark.slow
def test_masks_in_threads_bit_for_bit(monkeypatch):
    import geoeval.challenges.coco as coco

    gt, dets = random_segm_set(7, n_img=30)
    one = evaluate_coco(gt, dets, iou_type="boundary")
    monkeypatch.setattr(coco, "THREADED_MASKS_FROM", 1)
    monkeypatch.setattr(coco, "MASK_PART", 40)  # many groups of a few images each
    monkeypatch.setattr(coco, "workers", lambda: 3)
    many = evaluate_coco(gt, dets, iou_type="boundary")
    np.testing.assert_array_equal(one.precision, many.precision)
    np.testing.assert_array_equal(one.recall, many.recall)


# --- hand-worked ------------------------------------------------------------------------

def _square(x: float, y: float, s: float = 10) -> list[list[float]]:
    return [[x, y, x + s, y, x + s, y + s, x, y + s]]


def _one_pair(det_seg, gt_seg=None, crowd=0, size=50, area=None):
    gt_seg = _square(0, 0) if gt_seg is None else gt_seg
    gt = {"images": [{"id": 1, "width": size, "height": size}],
          "categories": [{"id": 1, "name": "building"}],
          "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "segmentation": gt_seg,
                           "area": 100.0 if area is None else area, "bbox": [0, 0, 10, 10],
                           "iscrowd": crowd}]}
    dets = [{"image_id": 1, "category_id": 1, "segmentation": det_seg, "score": 0.9,
             "bbox": [0, 0, 10, 10]}]
    return gt, dets


def test_a_square_polygon_covers_its_pixels():
    # corners on pixel corners: 10 x 10 pixels, as the COCO mask API rasterises it
    gt = read_coco(_one_pair(_square(0, 0))[0], masks=True)
    np.testing.assert_array_equal(gt.masks.dense(0)[:10, :10], np.ones((10, 10), bool))
    assert gt.masks.areas().tolist() == [100]


def test_hand_worked_mask_and_boundary_ap():
    # detection shifted by one column: mask IoU 90/110 = 0.818 (a TP at .50 ... .80: AP 0.7);
    # 50 x 50 image: d = max(1, round(0.02 * 70.7)) = 1; each band is the square's outer
    # ring of 36 pixels (the gt square touches the image border: eroded there too); the
    # bands share the top and bottom rows' 9 common pixels each: 18 / (36 + 36 - 18) = 1/3
    gt, dets = _one_pair(_square(1, 0))
    segm = evaluate_coco(gt, dets, iou_type="segm")
    assert segm.stats["AP"] == pytest.approx(0.7, abs=1e-12)
    boundary = evaluate_coco(gt, dets, iou_type="boundary")
    assert boundary.stats["AP"] == 0.0
    # two columns: mask IoU 80/120 = 2/3 (TP at .50 ... .65: AP 0.4)
    gt, dets = _one_pair(_square(2, 0))
    assert evaluate_coco(gt, dets, iou_type="segm").stats["AP"] == pytest.approx(0.4, abs=1e-12)


def test_a_detection_inside_a_crowd_region_is_ignored():
    # crowd: IoU = |D ∩ G| / |D| = 1 → matched to an ignored region: neither TP nor FP
    region = rle_of(np.pad(np.ones((30, 30), np.uint8), ((0, 20), (0, 20))), compressed=False)
    gt, dets = _one_pair(_square(5, 5), gt_seg=region, crowd=1, area=900.0)
    gt["annotations"].append({"id": 2, "image_id": 1, "category_id": 1,
                              "segmentation": _square(35, 35), "area": 100.0,
                              "bbox": [35, 35, 10, 10], "iscrowd": 0})
    r = evaluate_coco(gt, dets, iou_type="segm")
    assert r.stats["AR100"] == 0.0 and r.stats["AP"] == 0.0  # nothing found, nothing false
    assert (r.precision[:, 0, 0, 0, 2] == 0).all()
    assert_identical(r, official(gt, dets, "segm"))


def test_results_without_segmentation_are_their_box_and_areas_follow_the_first_result():
    gt, dets = _one_pair(_square(0, 0))
    dets = [{"image_id": 1, "category_id": 1, "bbox": [0.0, 0.0, 10.0, 10.0], "score": 0.5},
            {"image_id": 1, "category_id": 1, "bbox": [0.0, 0.0, 4.0, 40.0], "score": 0.9,
             "segmentation": _square(0, 0, 4)}]
    r = evaluate_coco(gt, dets, iou_type="segm")
    assert_identical(r, official(gt, dets, "segm"))
    dt = read_coco(dets, side="submission", like=read_coco(gt, masks=True), masks=True)
    assert dt.areas.tolist() == [100.0, 160.0]  # the boxes' w * h, as COCO.loadRes
    assert dt.masks.areas().tolist() == [100, 16]


def test_empty_inputs():
    gt, _ = _one_pair(_square(0, 0))
    r = evaluate_coco(gt, [], iou_type="segm")
    assert r.stats["AP"] == 0.0 and r.n_submission == 0
    none = dict(gt, annotations=[])
    dets = _one_pair(_square(0, 0))[1]
    assert evaluate_coco(none, dets, iou_type="boundary").stats["AP"] is None  # undefined


# --- errors: one line, naming the file and the record -----------------------------------

@pytest.mark.parametrize("seg, message", [
    ([[0, 0, 10, 0, 10]], "odd number of coordinates"),
    ([[0, 0, 10, 0]], "at least 3 points"),
    ([], "holds no polygon"),
    ([[0, 0, 10, 0, 10, "x"]], "finite numbers"),
    ({"size": [40, 50], "counts": "PPYo1"}, "does not match the image"),
    ({"size": [50, 50], "counts": [10, 20]}, "sum to 30, not height x width"),
    ({"size": [50, 50], "counts": [10, -5, 2495]}, "must not be negative"),
    ({"size": [50, 50], "counts": "0P"}, "end inside a count"),
    ({"size": [50, 50], "counts": "0~"}, "outside '0'..'o'"),
    ({"size": [50, 50]}, "needs 'size' and 'counts'"),
    ("polygon", "segmentation must be polygons"),
])
def test_malformed_segmentations_are_named(seg, message):
    gt, dets = _one_pair(seg)
    with pytest.raises(InputError, match=message) as err:
        evaluate_coco(gt, dets, iou_type="segm")
    assert "results[0]" in str(err.value) and "\n" not in str(err.value)
    gt, dets = _one_pair(_square(0, 0), gt_seg=seg)
    with pytest.raises(InputError, match=message) as err:
        evaluate_coco(gt, dets, iou_type="segm")
    assert "annotations[0]" in str(err.value)


def test_other_input_errors():
    gt, dets = _one_pair(_square(0, 0))
    del gt["images"][0]["height"]
    with pytest.raises(InputError, match="whole-number 'height' and 'width'"):
        evaluate_coco(gt, dets, iou_type="segm")
    gt, dets = _one_pair(_square(0, 0))
    del dets[0]["segmentation"], dets[0]["bbox"]
    with pytest.raises(InputError, match="missing 'segmentation'"):
        evaluate_coco(gt, dets, iou_type="segm")
    with pytest.raises(InputError, match="iou_type must be one of"):
        evaluate_coco(*_one_pair(_square(0, 0)), iou_type="mask")
    with pytest.raises(InputError, match="dilation_ratio"):
        evaluate_coco(*_one_pair(_square(0, 0)), iou_type="boundary", dilation_ratio=-1)


def test_cli(tmp_path, capsys):
    gt, dets = random_segm_set(4)
    g, d, out = tmp_path / "gt.json", tmp_path / "dt.json", tmp_path / "r.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    assert cli_main(["boxes", "coco", str(g), str(d), "--iou-type", "segm", "--json", str(out),
                     "-q"]) == 0
    report = json.loads(out.read_text())
    ev = official(gt, dets, "segm")
    assert report["protocol"] == "coco-segm"
    assert [report["stats"][k] for k in ("AP", "AP50")] == [ev.stats[0], ev.stats[1]]
    assert cli_main(["boxes", "coco", str(g), str(d), "--iou-type", "boundary"]) == 0
    assert "COCO boundary" in capsys.readouterr().out
    dets[0]["segmentation"] = [[1, 2, 3]]
    d.write_text(json.dumps(dets))
    assert cli_main(["boxes", "coco", str(g), str(d), "--iou-type", "segm"]) == 2
    err = capsys.readouterr().err.strip()
    assert "dt.json: results[0]" in err and "odd number" in err and len(err.splitlines()) == 1


def test_masks_follow_subsets():
    gt, _ = random_segm_set(8)
    box = read_coco(gt, masks=True)
    idx = np.array([3, 1, 1, 0])
    sub = box.subset(idx)
    for k, i in enumerate(idx):
        np.testing.assert_array_equal(sub.masks.dense(k), box.masks.dense(int(i)))
    a = gt["annotations"][int(idx[0])]
    im = next(i for i in gt["images"] if i["id"] == a["image_id"])
    want = mu.decode(coco_rle(a["segmentation"], im["height"], im["width"])).astype(bool)
    np.testing.assert_array_equal(sub.masks.dense(0), want)


def test_the_docs_python_example_runs(monkeypatch, capsys):
    from tests.docs_examples import run_python_examples

    run_python_examples("coco-masks.md", monkeypatch)
    assert "mask AP" in capsys.readouterr().out


@pytest.mark.parametrize("seed, with_boxes", [(0, True), (1, False)])
def test_polygon_result_files_read_by_arrow_as_by_records(seed, with_boxes, tmp_path,
                                                          monkeypatch):
    # a result file of polygons is parsed by Arrow into columns; the same records given
    # as a list go through the record reader: the same set, mask for mask
    import geoeval.io._coco_read as box_coco
    from geoeval.io.boxes import read_coco_pair

    gt, dets = random_segm_set(seed)
    dets = [d for d in dets if isinstance(d.get("segmentation"), list)]
    if not with_boxes:  # areas and boxes from the masks
        for d in dets:
            del d["bbox"]
    g, d = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    used = []
    arrow = box_coco._coco_polygon_results
    monkeypatch.setattr(box_coco, "_coco_polygon_results",
                        lambda *a: used.append(1) or arrow(*a))
    _, fast = read_coco_pair(g, d, masks=True)
    _, slow = read_coco_pair(gt, dets, masks=True)
    assert used and fast.path == str(d)
    for name in ("boxes", "wh", "areas", "scores", "image_index", "class_ids", "ids"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert fast.masks.encode() == slow.masks.encode()
    assert [w.split(": ", 1)[1] for w in fast.warnings] == [
        w.split(": ", 1)[1] for w in slow.warnings]


def test_rle_result_files_fall_back_to_the_record_reader(tmp_path):
    gt, dets = random_segm_set(2, result_mode="mask")  # compressed RLE: not polygons
    g, d = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    assert_identical(evaluate_coco(g, d, iou_type="segm"), official(gt, dets, "segm"))
    dets[3]["segmentation"] = [[0, 0, 5, 0, 5]]  # an odd ring: the record reader names it
    d.write_text(json.dumps(dets))
    with pytest.raises(InputError, match=r"dt.json: results\[3\]: .*odd number"):
        evaluate_coco(g, d, iou_type="segm")


def test_a_bad_polygon_in_an_arrow_read_file_is_named(tmp_path):
    gt, dets = random_segm_set(3)
    dets = [d for d in dets if isinstance(d.get("segmentation"), list)]
    dets[5]["segmentation"] = [[0, 0, 5, 0, 5, 5], [1, 1, 2]]
    g, d = tmp_path / "gt.json", tmp_path / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    with pytest.raises(InputError, match=r"dt.json: results\[5\]: polygon ring 1 has an odd"):
        evaluate_coco(g, d, iou_type="boundary")


@pytest.mark.parametrize("seed", [4, pytest.param(5, marks=pytest.mark.slow)])
def test_polygon_ground_truth_files_read_by_arrow_as_by_records(seed, tmp_path, monkeypatch):
    import geoeval.io._coco_read as coco_read

    gt, _ = random_segm_set(seed)
    gt["annotations"] = [a for a in gt["annotations"] if isinstance(a["segmentation"], list)]
    for a in gt["annotations"][::3]:
        del a["area"]  # the mask's area
    gt["annotations"][1]["category_id"] = 99  # an unknown category: dropped
    p = tmp_path / "gt.json"
    p.write_text(json.dumps(gt))
    used = []
    arrow = coco_read._gt_from_columns
    monkeypatch.setattr(coco_read, "_gt_from_columns",
                        lambda *a, **k: used.append(1) or arrow(*a, **k))
    fast = read_coco(p, side="reference", masks=True)
    slow = read_coco(gt, side="reference", masks=True)
    assert used and len(fast) == len(gt["annotations"]) - 1
    for name in ("boxes", "wh", "areas", "iscrowd", "image_index", "class_ids", "ids"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert fast.masks.encode() == slow.masks.encode()

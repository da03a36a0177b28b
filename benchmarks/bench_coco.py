"""COCO box evaluation at the scale of COCO val2017: geoeval vs pycocotools.

A seeded synthetic data set (5,000 images, about 37,000 ground-truth boxes of
80 categories with about 1 % crowd regions, about 500,000 detections: noisy
copies of the ground truth, duplicates, background boxes, wrong classes, tied
scores) is evaluated by ``geoeval.evaluate_coco`` and by pycocotools'
``COCOeval`` (evaluate + accumulate + summarize) in the same run. The script
checks that the twelve numbers are identical and prints both times and the
ratio.

Run: ``python benchmarks/bench_coco.py [--images 5000] [--seed 0]``
(pycocotools needed; it is a test-only dependency of geoeval).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import io
import time

import numpy as np


def synthetic(n_images: int = 5000, n_cats: int = 80, gt_per_image: float = 7.4,
              dets_per_image: float = 100.0, seed: int = 0) -> tuple[dict, list]:
    """A COCO-like ground truth (dict) and result list, seeded."""
    rng = np.random.default_rng(seed)
    img_ids = rng.choice(np.arange(1, 600_000), size=n_images, replace=False)
    widths = rng.integers(320, 641, n_images)
    heights = rng.integers(240, 481, n_images)
    n_gt = rng.poisson(gt_per_image, n_images)
    g_img = np.repeat(np.arange(n_images), n_gt)
    G = g_img.size
    # box sizes log-uniform: a mix of small, medium and large objects
    side = np.exp(rng.uniform(np.log(4), np.log(400), (G, 2)))
    gw = np.minimum(side[:, 0], widths[g_img] - 1)
    gh = np.minimum(side[:, 1], heights[g_img] - 1)
    gx = rng.uniform(0, 1, G) * (widths[g_img] - gw)
    gy = rng.uniform(0, 1, G) * (heights[g_img] - gh)
    gbox = np.round(np.column_stack([gx, gy, gw, gh]), 2)
    g_cat = rng.integers(1, n_cats + 1, G)
    crowd = rng.random(G) < 0.01
    area = np.round(gbox[:, 2] * gbox[:, 3] * rng.uniform(0.4, 0.95, G), 3)  # "segment" area
    images = [{"id": int(i), "width": int(w), "height": int(h), "file_name": f"{i:012d}.jpg"}
              for i, w, h in zip(img_ids, widths, heights, strict=True)]
    cats = [{"id": int(c), "name": f"class{c}", "supercategory": "thing"}
            for c in range(1, n_cats + 1)]
    anns = [{"id": int(k + 1), "image_id": int(img_ids[i]), "category_id": int(c),
             "bbox": [float(v) for v in b], "area": float(a), "iscrowd": int(cr)}
            for k, (i, c, b, a, cr) in enumerate(zip(g_img, g_cat, gbox, area, crowd,
                                                     strict=True))]
    # detections: per image, noisy copies (some duplicated) of its ground truth + clutter
    n_det = rng.poisson(dets_per_image, n_images)
    d_img = np.repeat(np.arange(n_images), n_det)
    D = d_img.size
    start = np.r_[0, np.cumsum(n_gt)[:-1]]
    has_gt = n_gt[d_img] > 0
    from_gt = has_gt & (rng.random(D) < 0.35)
    pick = start[d_img] + (rng.random(D) * np.maximum(n_gt[d_img], 1)).astype(np.int64)
    pick = np.where(from_gt, pick, 0)
    noise = rng.normal(0, 0.08, (D, 4)) * np.column_stack([gbox[pick, 2:], gbox[pick, 2:]])
    copy_box = gbox[pick] + noise
    side = np.exp(rng.uniform(np.log(4), np.log(300), (D, 2)))
    clutter = np.column_stack([rng.uniform(0, 1, D) * widths[d_img],
                               rng.uniform(0, 1, D) * heights[d_img], side])
    dbox = np.where(from_gt[:, None], copy_box, clutter)
    dbox[:, 2:] = np.maximum(dbox[:, 2:], 1.0)
    dbox = np.round(dbox, 2)
    d_cat = np.where(from_gt & (rng.random(D) < 0.9), g_cat[pick], rng.integers(1, n_cats + 1, D))
    score = np.round(np.where(from_gt, rng.beta(4, 2, D), rng.beta(1.5, 5, D)), 3)
    dets = [{"image_id": int(img_ids[i]), "category_id": int(c), "bbox": [float(v) for v in b],
             "score": float(s)}
            for i, c, b, s in zip(d_img, d_cat, dbox, score, strict=True)]
    return {"images": images, "annotations": anns, "categories": cats}, dets


def run_pycocotools(gt: dict, dets: list) -> tuple[np.ndarray, float, float]:
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        t0 = time.perf_counter()
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(copy.deepcopy(dets))
        t1 = time.perf_counter()
        ev = COCOeval(coco_gt, coco_dt, "bbox")
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
        t2 = time.perf_counter()
    return np.asarray(ev.stats), t1 - t0, t2 - t1


def run_geoeval(gt: dict, dets: list) -> tuple[np.ndarray, float, float]:
    from geoeval.challenges.coco import _evaluate
    from geoeval.io.boxes import read_coco

    t0 = time.perf_counter()
    g = read_coco(gt, side="reference")
    d = read_coco(dets, side="submission", like=g)
    t1 = time.perf_counter()
    result = _evaluate(g, d)
    t2 = time.perf_counter()
    return result.stats_array, t1 - t0, t2 - t1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t = time.perf_counter()
    gt, dets = synthetic(n_images=args.images, seed=args.seed)
    n_crowd = sum(a["iscrowd"] for a in gt["annotations"])
    print(f"data set: {len(gt['images'])} images, {len(gt['annotations'])} ground-truth boxes "
          f"({n_crowd} crowd), {len(gt['categories'])} categories, {len(dets)} detections "
          f"(built in {time.perf_counter() - t:.1f} s)")
    g_stats, g_load, g_eval = run_geoeval(gt, dets)
    p_stats, p_load, p_eval = run_pycocotools(gt, dets)
    names = ("AP", "AP50", "AP75", "APs", "APm", "APl",
             "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")
    for n, a, b in zip(names, g_stats, p_stats, strict=True):
        print(f"  {n:6s} geoeval {a:.15f}  pycocotools {b:.15f}")
    identical = bool(np.array_equal(g_stats, p_stats))
    print(f"twelve numbers identical: {identical} "
          f"(max |diff| {np.abs(g_stats - p_stats).max():.3g})")
    print(f"load     : geoeval {g_load:7.2f} s   pycocotools (COCO + loadRes) {p_load:7.2f} s")
    print(f"evaluate : geoeval {g_eval:7.2f} s   pycocotools (evaluate+accumulate+summarize) "
          f"{p_eval:7.2f} s   ratio {p_eval / g_eval:.1f}x")
    print(f"total    : geoeval {g_load + g_eval:7.2f} s   pycocotools {p_load + p_eval:7.2f} s   "
          f"ratio {(p_load + p_eval) / (g_load + g_eval):.1f}x")
    # end to end from files, as `geoeval boxes coco gt.json dt.json` runs (JSON parsing
    # included), against the standard library's parse alone of the same two files
    import json
    import tempfile

    import geoeval

    with tempfile.TemporaryDirectory() as tmp:
        g, d = f"{tmp}/gt.json", f"{tmp}/dt.json"
        with open(g, "w") as fh:
            json.dump(gt, fh)
        with open(d, "w") as fh:
            json.dump(dets, fh)
        t = time.perf_counter()
        with open(g, "rb") as fg, open(d, "rb") as fd:
            json.load(fg), json.load(fd)
        t_parse = time.perf_counter() - t
        t = time.perf_counter()
        from_files = geoeval.evaluate_coco(g, d).stats_array
        t_files = time.perf_counter() - t
    same = bool(np.array_equal(from_files, p_stats))
    print(f"from files: geoeval {t_files:7.2f} s end to end (the standard library's json.load of "
          f"the two files alone: {t_parse:.2f} s); twelve numbers identical: {same}")
    if not (identical and same):
        raise SystemExit(1)


if __name__ == "__main__":
    main()

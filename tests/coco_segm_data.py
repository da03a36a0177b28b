"""Random COCO instance-segmentation data sets and the reference evaluators, for tests.

The data sets are adversarial on purpose: polygons with several rings (overlapping
or apart), rings far outside the image, sub-pixel rings, rings on the image border
with integer and half-pixel coordinates; compressed and uncompressed RLE masks
with holes; crowd regions as RLE; images without ground truth or without
detections; tied scores; results on an unknown category; more than 100 results on
some images; annotation areas that are not the mask area.

Oracles: pycocotools' ``COCOeval(iouType="segm")``; for Boundary AP, boundary-iou-api's
procedure written out on pycocotools (:class:`WrittenOutBoundaryEval`: its
``mask_to_boundary`` with scipy's erosion instead of OpenCV's, its
``computeBoundaryIoU``), and the authors' code itself when it and OpenCV are at hand
(:func:`boundary_iou_api`).
"""

from __future__ import annotations

import contextlib
import copy
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pycocotools.mask as mu
from pycocotools.coco import COCO
from pycocotools.cocoeval import COCOeval

from tests.mirrors import git_dir

BOUNDARY_IOU_API = git_dir("bowenc0221/boundary-iou-api")


def _ring(rng: np.random.Generator, h: int, w: int, kind: str) -> list[float]:
    if kind == "blob":
        c = rng.uniform(-5, [w + 5, h + 5])
        r = np.exp(rng.uniform(np.log(0.3), np.log(max(h, w) / 2)))
        k = int(rng.integers(3, 12))
        ang = np.sort(rng.uniform(0, 2 * np.pi, k))
        pts = c + np.column_stack([np.cos(ang), np.sin(ang)]) * (r * rng.uniform(0.5, 1, k))[
            :, None]
    elif kind == "rect":
        x0, y0 = rng.uniform(-3, [w, h])
        x1, y1 = x0 + rng.uniform(0.2, w), y0 + rng.uniform(0.2, h)
        pts = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
    elif kind == "tiny":  # sub-pixel
        pts = rng.uniform(0, [w, h]) + rng.normal(0, 0.25, (int(rng.integers(3, 6)), 2))
    elif kind == "huge":  # far beyond the image on every side
        pts = np.array([[-20, -30], [w + 40, -10], [w + 25, h + 50], [-15, h + 10]], float)
        pts += rng.normal(0, 3, pts.shape)
    else:  # on the image border
        pts = np.array([[0, 0], [w, 0], [w, h * rng.uniform(0.2, 1)], [0, h]], float)
        if rng.random() < 0.5:
            pts = np.round(pts * 2) / 2
    if rng.random() < 0.3:
        pts = np.round(pts, 1)
    return [float(v) for v in pts.ravel()]


def random_polygons(rng: np.random.Generator, h: int, w: int) -> list[list[float]]:
    """One to three rings of assorted kinds."""
    kinds = ["blob", "rect", "tiny", "huge", "border"]
    n = 1 if rng.random() < 0.7 else int(rng.integers(2, 4))
    return [_ring(rng, h, w, str(rng.choice(kinds, p=[0.5, 0.25, 0.1, 0.05, 0.1])))
            for _ in range(n)]


def random_mask(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A few rectangles, sometimes with a hole."""
    m = np.zeros((h, w), np.uint8)
    for _ in range(int(rng.integers(1, 4))):
        y, x = rng.integers(-3, [h, w])
        hh, ww = rng.integers(1, [max(h // 2, 2), max(w // 2, 2)])
        m[max(y, 0):y + hh, max(x, 0):x + ww] = 1
    if rng.random() < 0.5:
        y, x = rng.integers(0, [h, w])
        m[y:y + 3, x:x + 3] = 0
    return m


def rle_of(mask: np.ndarray, compressed: bool = True) -> dict:
    """A mask as COCO RLE: compressed text, or the counts as a JSON list."""
    if compressed:
        r = mu.encode(np.asfortranarray(mask[:, :, None].astype(np.uint8)))[0]
        return {"size": [int(v) for v in r["size"]], "counts": r["counts"].decode()}
    flat = mask.T.ravel()
    bounds = np.r_[0, np.flatnonzero(np.diff(flat)) + 1, flat.size]
    counts = np.diff(bounds).tolist()
    if flat.size and flat[0]:
        counts = [0] + counts
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": [int(c) for c in counts]}


def coco_rle(seg: Any, h: int, w: int) -> dict:
    """pycocotools' RLE of a segmentation (``COCO.annToRLE``)."""
    if isinstance(seg, list):
        return mu.merge(mu.frPyObjects(seg, h, w))
    if isinstance(seg["counts"], list):
        return mu.frPyObjects(seg, h, w)
    return seg


def random_segm_set(seed: int, n_img: int = 12, n_cat: int = 3, size: tuple[int, int] = (16, 90),
                    first_ann_id: int = 1, result_mode: str = "bbox",
                    per_image: float = 10.0) -> tuple[dict, list]:
    """Ground truth and results (see the module docstring). ``result_mode``: ``"bbox"``
    (every result has a box: areas are the boxes'; a few results have no
    segmentation) or ``"mask"`` (no box: areas are the masks'; compressed RLE only,
    the one kind pycocotools reads then)."""
    rng = np.random.default_rng(seed)
    images = []
    for i in rng.permutation(np.arange(1, n_img + 1) * 3):
        h, w = (int(v) for v in rng.integers(size[0], size[1], 2))
        images.append({"id": int(i), "width": w, "height": h})
    cats = [{"id": c, "name": f"c{c}"} for c in range(1, n_cat + 1)]
    anns: list[dict] = []
    by_img: dict[int, list] = {}
    aid = first_ann_id
    for im in images:
        h, w = im["height"], im["width"]
        for _ in range(0 if rng.random() < 0.15 else int(rng.poisson(4))):
            crowd = rng.random() < 0.1
            if crowd:
                seg = rle_of(random_mask(rng, h, w), compressed=rng.random() < 0.3)
            elif rng.random() < 0.75:
                seg = random_polygons(rng, h, w)
            else:
                seg = rle_of(random_mask(rng, h, w), compressed=rng.random() < 0.7)
            rle = coco_rle(seg, h, w)
            area = float(mu.area(rle))
            if rng.random() < 0.2:
                area *= float(rng.uniform(0.5, 2.0))
            ann = {"id": aid, "image_id": im["id"], "category_id": int(rng.integers(1, n_cat + 1)),
                   "segmentation": seg, "area": area,
                   "bbox": [float(v) for v in mu.toBbox(rle)], "iscrowd": int(crowd)}
            anns.append(ann)
            by_img.setdefault(im["id"], []).append(ann)
            aid += 1
    dets = []
    for im in images:
        if rng.random() < 0.15:
            continue  # an image without results
        h, w = im["height"], im["width"]
        g = by_img.get(im["id"], [])
        for _ in range(int(rng.poisson(per_image * 12 if rng.random() < 0.05 else per_image))):
            if g and rng.random() < 0.6:
                a = g[int(rng.integers(len(g)))]
                c = a["category_id"] if rng.random() < 0.9 else int(rng.integers(1, n_cat + 2))
                seg = a["segmentation"]
                if isinstance(seg, list):
                    seg = [[v + float(rng.normal(0, 1.0)) for v in ring] for ring in seg]
                else:
                    m = np.roll(mu.decode(coco_rle(seg, h, w)), int(rng.integers(-2, 3)),
                                axis=int(rng.integers(0, 2)))
                    seg = rle_of(m, compressed=rng.random() < 0.7)
            else:
                c = int(rng.integers(1, n_cat + 1))
                seg = (random_polygons(rng, h, w) if rng.random() < 0.6
                       else rle_of(random_mask(rng, h, w)))
            det: dict[str, Any] = {"image_id": im["id"], "category_id": c,
                                   "score": float(np.round(rng.random(), 1))}
            rle = coco_rle(seg, h, w)
            if result_mode == "bbox":
                box = [float(v) for v in mu.toBbox(rle)]
                if rng.random() < 0.3:
                    box = [abs(v + float(rng.normal(0, 2))) for v in box]
                det["bbox"] = box
                if rng.random() > 0.05:
                    det["segmentation"] = seg
            else:
                counts = rle["counts"]
                det["segmentation"] = {"size": [int(v) for v in rle["size"]],
                                       "counts": counts.decode() if isinstance(counts, bytes)
                                       else counts}
            dets.append(det)
    return {"images": images, "categories": cats, "annotations": anns}, dets


def official(gt: dict, dets: list, iou_type: str = "bbox", evaluator: Any = None) -> COCOeval:
    """pycocotools' evaluation of copies of the inputs (it modifies them); ``evaluator``
    (``gt, dt -> COCOeval``) replaces ``COCOeval(gt, dt, iou_type)``."""
    with contextlib.redirect_stdout(io.StringIO()):
        coco_gt = COCO()
        coco_gt.dataset = copy.deepcopy(gt)
        coco_gt.createIndex()
        coco_dt = coco_gt.loadRes(copy.deepcopy(dets))
        ev = (evaluator or (lambda g, d: COCOeval(g, d, iou_type)))(coco_gt, coco_dt)
        ev.evaluate()
        ev.accumulate()
        ev.summarize()
    return ev


def reference_band(mask: np.ndarray, ratio: float) -> np.ndarray:
    """boundary-iou-api's ``mask_to_boundary``, with scipy's binary erosion: pad with one
    pixel of zeros, erode ``d = max(1, round(ratio · diagonal))`` times by a 3 × 3
    square, keep what the erosion removed."""
    from scipy import ndimage

    h, w = mask.shape
    d = max(1, int(round(ratio * np.sqrt(h ** 2 + w ** 2))))
    padded = np.pad(mask.astype(bool), 1)
    eroded = ndimage.binary_erosion(padded, np.ones((3, 3), bool), iterations=d)[1:-1, 1:-1]
    return mask.astype(bool) & ~eroded


class WrittenOutBoundaryEval(COCOeval):
    """boundary-iou-api's ``COCOeval(iouType="boundary")`` written out on pycocotools:
    IoU ``min(mask IoU, boundary IoU)`` for a non-crowd ground truth, the mask IoU for
    a crowd region (``computeBoundaryIoU``)."""

    def __init__(self, gt: COCO, dt: COCO, ratio: float) -> None:
        super().__init__(gt, dt, "segm")
        self.ratio = ratio

    def _band(self, rle: dict) -> dict:
        band = reference_band(mu.decode(rle), self.ratio).astype(np.uint8)
        return mu.encode(np.asfortranarray(band[:, :, None]))[0]

    def computeIoU(self, imgId: int, catId: int) -> Any:  # noqa: N802 (COCOeval's name)
        p = self.params
        gt, dt = self._gts[imgId, catId], self._dts[imgId, catId]
        if len(gt) == 0 and len(dt) == 0:
            return []
        order = np.argsort([-d["score"] for d in dt], kind="mergesort")
        dt = [dt[i] for i in order][:p.maxDets[-1]]
        g = [x["segmentation"] for x in gt]
        d = [x["segmentation"] for x in dt]
        crowd = [int(o["iscrowd"]) for o in gt]
        ious = np.array(mu.iou(d, g, crowd))
        bands = np.array(mu.iou([self._band(x) for x in d], [self._band(x) for x in g], crowd))
        if len(gt) and len(dt):
            plain = np.array(crowd) == 0
            ious[:, plain] = np.minimum(ious[:, plain], bands[:, plain])
        return ious


def official_boundary(gt: dict, dets: list, ratio: float = 0.02) -> COCOeval:
    """Boundary AP by :class:`WrittenOutBoundaryEval`."""
    return official(gt, dets, evaluator=lambda g, d: WrittenOutBoundaryEval(g, d, ratio))


_API_RUNNER = """
import contextlib, io, json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
if not hasattr(np, "float"):
    np.float = float  # the evaluator's accumulate uses np.float (gone since numpy 1.24)
import boundary_iou.coco_instance_api.coco as bcoco
import boundary_iou.utils.boundary_utils as butils
from boundary_iou.coco_instance_api.cocoeval import COCOeval

def one_core(annotations, ann_to_mask, dilation_ratio=0.02):
    return butils.augment_annotations_with_boundary_single_core(0, annotations, ann_to_mask,
                                                                dilation_ratio)

bcoco.augment_annotations_with_boundary_multi_core = one_core
ratio = float(sys.argv[4])
with contextlib.redirect_stdout(io.StringIO()):
    g = bcoco.COCO(sys.argv[2], get_boundary=True, dilation_ratio=ratio)
    d = g.loadRes(sys.argv[3])
    ev = COCOeval(g, d, "boundary", dilation_ratio=ratio)
    ev.evaluate(); ev.accumulate(); ev.summarize()
np.save(sys.argv[5], ev.eval["precision"]); np.save(sys.argv[6], ev.eval["recall"])
print(json.dumps([float(x) for x in ev.stats]))
"""


def boundary_iou_api() -> Path | None:
    """A checkout of boundary-iou-api (``GEOEVAL_BOUNDARY_IOU_API``, or extracted from
    the local mirror), or ``None`` when it or OpenCV is missing."""
    try:
        import cv2  # noqa: F401  (the authors' code erodes with OpenCV)
    except ImportError:
        return None
    given = os.environ.get("GEOEVAL_BOUNDARY_IOU_API")
    if given:
        return Path(given)
    if not BOUNDARY_IOU_API.exists():
        return None
    out = Path(tempfile.gettempdir()) / "geoeval-boundary-iou-api"
    if not (out / "boundary_iou").exists():
        out.mkdir(exist_ok=True)
        archive = subprocess.run(["git", f"--git-dir={BOUNDARY_IOU_API}", "archive", "HEAD"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive, check=True)
    return out


def run_boundary_iou_api(checkout: Path, gt: dict, dets: list, ratio: float, tmp: Path
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The authors' COCO evaluator, in its own process: stats, precision, recall."""
    import json

    g, d = tmp / "gt.json", tmp / "dt.json"
    g.write_text(json.dumps(gt))
    d.write_text(json.dumps(dets))
    p, r = tmp / "precision.npy", tmp / "recall.npy"
    out = subprocess.run([sys.executable, "-c", _API_RUNNER, str(checkout), str(g), str(d),
                          repr(ratio), str(p), str(r)], capture_output=True, text=True,
                         check=True)
    stats = np.array(json.loads(out.stdout.strip().splitlines()[-1]))
    return stats, np.load(p), np.load(r)

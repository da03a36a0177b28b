"""Small box data sets for trying every ``geoeval boxes`` command (seeded, synthetic).

    python sample_data/make_boxes.py            # writes sample_data/boxes/
    python sample_data/make_boxes.py --out DIR

One scene set, written in each protocol's own format:

* ``boxes/voc/gt/``, ``boxes/voc/det/``: Padilla et al. (2020) text files, one
  per image (``class left top right bottom``; detections
  ``class confidence left top right bottom``);
* ``boxes/voc_xml/gt/``: the same ground truth as PASCAL VOC annotation XML
  (one ``<annotation>`` per image, with ``<size>`` and a ``<difficult>`` flag on
  the smallest objects), to be scored against ``boxes/voc/det/``;
* ``boxes/yolo/gt/``, ``boxes/yolo/det/``, ``boxes/yolo/classes.txt``: YOLO
  text (``class-index cx cy w h``, normalised by the image size; detections add
  a confidence) and the class names;
* ``boxes/coco/instances.json``, ``boxes/coco/results.json``: COCO ground truth
  and results;
* ``boxes/robin/gt/``, ``boxes/robin/run1/`` … ``run3/``: the same text format,
  three operating points of one detector (confidence thresholds 0.3, 0.5, 0.7);
* ``boxes/neovision2/truth/TowerA/001.csv``, ``002.csv`` and ``results/…``:
  DARPA Neovision2 CSV (Ekambaram et al. 2012, Table 4), two sequences of
  20 frames;
* ``boxes/coco_segm/instances.json``, ``boxes/coco_segm/results.json``: COCO
  instance segmentation of CrowdAI-style building tiles (``make_coco_segm.py``).
* ``boxes/dota/labelTxt/``, ``boxes/dota/det/``: a DOTA-style set of its own
  (:func:`dota_scenes`): 10 aerial images of 1024 × 1024 with the 15 DOTA-v1.0
  classes as rotated rectangles (labelTxt: four corners, class, difficult flag,
  ``imagesource:``/``gsd:`` headers) and the detections as ``Task1_<class>.txt``
  (four corners) and ``Task2_<class>.txt`` (horizontal boxes);
* ``boxes/crowdai/annotation.json``, ``boxes/crowdai/results.json``: eight
  CrowdAI Mapping Challenge-style tiles of 300 × 300 px (one category,
  ``building``; polygon outlines) and a polygonal method's results
  (:mod:`crowdai_tiles`: one tile without building, one without prediction).

Ground truth: 40 images of 640 × 480 with 2–6 objects each (car, truck, person).
Detections: each object found with probability 0.85, its box jittered by a few
pixels, its confidence higher when the box is good; about one false alarm per
image; 5 % of the found objects under a wrong class.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from make_coco_segm import write_coco_segm

CLASSES = ("car", "truck", "person")
W, H = 640, 480
HEADER = ("Frame,BoundingBox_X1,BoundingBox_Y1,BoundingBox_X2,BoundingBox_Y2,BoundingBox_X3,"
          "BoundingBox_Y3,BoundingBox_X4,BoundingBox_Y4,ObjectType,Occlusion,Ambiguous,"
          "Confidence,SiteInfo,Version")


def scenes(n_images: int = 40, seed: int = 7) -> tuple[list, list]:
    """Ground truth and detections: per image a list of (class, x1, y1, x2, y2[, conf])."""
    rng = np.random.default_rng(seed)
    gts, dets = [], []
    for _ in range(n_images):
        g, d = [], []
        for _ in range(int(rng.integers(2, 7))):
            cls = CLASSES[int(rng.integers(0, len(CLASSES)))]
            w, h = rng.uniform(30, 160), rng.uniform(30, 120)
            x, y = rng.uniform(0, W - w), rng.uniform(0, H - h)
            g.append((cls, round(x), round(y), round(x + w), round(y + h)))
            if rng.random() < 0.85:
                j = rng.normal(0, 0.08, 4) * np.array([w, h, w, h])
                box = np.clip(np.array([x, y, x + w, y + h]) + j, 0, [W, H, W, H])
                conf = float(np.clip(1 - np.abs(j).mean() / 40 - rng.uniform(0, 0.3), 0.05, 1))
                if rng.random() < 0.05:
                    cls = CLASSES[(CLASSES.index(cls) + 1) % len(CLASSES)]
                d.append((cls, *[round(float(v)) for v in box], round(conf, 3)))
        for _ in range(int(rng.poisson(1.0))):
            w, h = rng.uniform(20, 80), rng.uniform(20, 80)
            x, y = rng.uniform(0, W - w), rng.uniform(0, H - h)
            d.append((CLASSES[int(rng.integers(0, 3))], round(x), round(y), round(x + w),
                      round(y + h), round(float(rng.uniform(0.05, 0.6)), 3)))
        gts.append(g)
        dets.append(d)
    return gts, dets


def write_text(folder: Path, items: list, with_conf: bool, min_conf: float = 0.0) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for k, boxes in enumerate(items):
        lines = []
        for b in boxes:
            if with_conf:
                cls, x1, y1, x2, y2, conf = b
                if conf >= min_conf:
                    lines.append(f"{cls} {conf} {x1} {y1} {x2} {y2}")
            else:
                lines.append(" ".join(map(str, b)))
        (folder / f"img{k:03d}.txt").write_text("".join(f"{line}\n" for line in lines))


def write_voc_xml(folder: Path, gts: list, small: float = 40 * 40) -> None:
    """VOC annotation XML; objects smaller than ``small`` square pixels are ``difficult``."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, boxes in enumerate(gts):
        objects = "".join(
            f"  <object>\n    <name>{cls}</name>\n"
            f"    <difficult>{int((x2 - x1) * (y2 - y1) < small)}</difficult>\n"
            f"    <bndbox><xmin>{x1}</xmin><ymin>{y1}</ymin><xmax>{x2}</xmax>"
            f"<ymax>{y2}</ymax></bndbox>\n  </object>\n"
            for cls, x1, y1, x2, y2 in boxes)
        (folder / f"img{k:03d}.xml").write_text(
            f"<annotation>\n  <filename>img{k:03d}.jpg</filename>\n"
            f"  <size><width>{W}</width><height>{H}</height><depth>3</depth></size>\n"
            f"{objects}</annotation>\n")


def write_yolo(folder: Path, items: list, with_conf: bool) -> None:
    """YOLO text: ``class-index cx cy w h [confidence]``, normalised by the image size."""
    folder.mkdir(parents=True, exist_ok=True)
    for k, boxes in enumerate(items):
        lines = []
        for b in boxes:
            cls, x1, y1, x2, y2 = b[:5]
            v = ((x1 + x2) / 2 / W, (y1 + y2) / 2 / H, (x2 - x1) / W, (y2 - y1) / H)
            line = f"{CLASSES.index(cls)} " + " ".join(f"{x:.6f}" for x in v)
            lines.append(line + (f" {b[5]}" if with_conf else ""))
        (folder / f"img{k:03d}.txt").write_text("".join(f"{line}\n" for line in lines))


def write_coco(folder: Path, gts: list, dets: list) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    cats = [{"id": i + 1, "name": c} for i, c in enumerate(CLASSES)]
    cat_id = {c: i + 1 for i, c in enumerate(CLASSES)}
    images = [{"id": k + 1, "width": W, "height": H, "file_name": f"img{k:03d}.jpg"}
              for k in range(len(gts))]
    anns, results = [], []
    for k, (g, d) in enumerate(zip(gts, dets, strict=True)):
        for cls, x1, y1, x2, y2 in g:
            anns.append({"id": len(anns) + 1, "image_id": k + 1, "category_id": cat_id[cls],
                         "bbox": [x1, y1, x2 - x1, y2 - y1], "area": (x2 - x1) * (y2 - y1),
                         "iscrowd": 0})
        for cls, x1, y1, x2, y2, conf in d:
            results.append({"image_id": k + 1, "category_id": cat_id[cls],
                            "bbox": [x1, y1, x2 - x1, y2 - y1], "score": conf})
    gt = {"images": images, "annotations": anns, "categories": cats}
    (folder / "instances.json").write_text(json.dumps(gt, indent=1) + "\n")
    (folder / "results.json").write_text(json.dumps(results, indent=1) + "\n")


def write_crowdai(folder: Path) -> None:
    """CrowdAI-style tiles: COCO ground truth and results with polygon segmentations,
    one record per line."""
    from crowdai_tiles import tiles

    folder.mkdir(parents=True, exist_ok=True)
    gt, dt = tiles(8, seed=1, per_image=5, p_empty=0.12, p_unpredicted=0.12, noise=0.8)

    def lines(records: list) -> str:
        return ",\n".join(json.dumps(r) for r in records)

    (folder / "annotation.json").write_text(
        f'{{"images": [\n{lines(gt["images"])}],\n"categories": {json.dumps(gt["categories"])},'
        f'\n"annotations": [\n{lines(gt["annotations"])}]}}\n')
    (folder / "results.json").write_text(f"[\n{lines(dt)}]\n")


def _row(frame: int, box: tuple, label: str, conf: str = "") -> str:
    x1, y1, x2, y2 = box
    return f"{frame},{x1},{y1},{x2},{y1},{x2},{y2},{x1},{y2},{label},FALSE,FALSE,{conf},,1.0"


def write_neovision2(folder: Path, gts: list, dets: list, frames: int = 20) -> None:
    for s in range(2):  # two sequences of `frames` frames, from consecutive images
        truth, results = [HEADER], [HEADER]
        for f in range(frames):
            k = (s * frames + f) % len(gts)
            truth += [_row(f, b[1:], b[0].capitalize()) for b in gts[k]]
            results += [_row(f, b[1:5], b[0].capitalize(), str(b[5])) for b in dets[k]]
        for name, rows in (("truth", truth), ("results", results)):
            path = folder / name / "TowerA" / f"{s + 1:03d}.csv"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("\n".join(rows) + "\n")


DOTA_CLASSES = ("plane", "baseball-diamond", "bridge", "ground-track-field", "small-vehicle",
                "large-vehicle", "ship", "tennis-court", "basketball-court", "storage-tank",
                "soccer-ball-field", "roundabout", "harbor", "swimming-pool", "helicopter")
#: Length and width (pixels) of each class's objects.
DOTA_SIZES = (60, 55), (90, 85), (130, 25), (240, 140), (18, 9), (40, 12), (45, 14), (60, 30), \
    (55, 32), (30, 30), (200, 130), (100, 100), (120, 40), (40, 20), (40, 35)


def _corners(cx: float, cy: float, length: float, width: float, angle: float) -> np.ndarray:
    """Four corners of a rotated rectangle, clockwise on screen (y down)."""
    c, s = np.cos(angle), np.sin(angle)
    u, v = np.array([c, s]) * length / 2, np.array([-s, c]) * width / 2
    centre = np.array([cx, cy])
    return np.array([centre - u - v, centre + u - v, centre + u + v, centre - u + v]).ravel()


def dota_scenes(n_images: int = 10, seed: int = 11) -> tuple[list, dict]:
    """Labels (per image: (corners, class, difficult)) and detections per class
    ((image, confidence, corners)) of a small DOTA-style set."""
    rng = np.random.default_rng(seed)
    labels, dets = [], {c: [] for c in DOTA_CLASSES}
    for k in range(n_images):
        objects = []
        for _ in range(int(rng.integers(8, 16))):
            c = int(rng.integers(0, len(DOTA_CLASSES)))
            length, width = np.array(DOTA_SIZES[c]) * rng.uniform(0.8, 1.25)
            angle = 0.0 if rng.random() < 0.3 else rng.uniform(0, np.pi)
            cx, cy = rng.uniform(length / 2, 1024 - length / 2, 2)
            xy = np.round(_corners(cx, cy, length, width, angle))
            objects.append((xy, DOTA_CLASSES[c], int(rng.random() < 0.1)))
            for _ in range(int(rng.random() < 0.85) + int(rng.random() < 0.2)):
                q = rng.uniform(0, 1)  # 0: a tight box
                box = _corners(cx + rng.normal(0, 0.05 + 0.15 * q) * width,
                               cy + rng.normal(0, 0.05 + 0.15 * q) * width,
                               length * np.exp(rng.normal(0, 0.1 * q)),
                               width * np.exp(rng.normal(0, 0.1 * q)),
                               angle + rng.normal(0, 0.1 * q))
                cls = DOTA_CLASSES[c] if rng.random() > 0.05 else DOTA_CLASSES[(c + 1) % 15]
                dets[cls].append((k, round(float(np.clip(1 - 0.6 * q - rng.uniform(0, 0.2),
                                                         0.05, 1)), 3), box))
        for _ in range(int(rng.poisson(2))):  # false alarms
            c = int(rng.integers(0, len(DOTA_CLASSES)))
            box = _corners(*rng.uniform(50, 974, 2), *DOTA_SIZES[c], rng.uniform(0, np.pi))
            dets[DOTA_CLASSES[c]].append((k, round(float(rng.uniform(0.05, 0.5)), 3), box))
        labels.append(objects)
    return labels, dets


def write_dota(folder: Path, labels: list, dets: dict) -> None:
    """labelTxt files and the Task1 / Task2 result files of :func:`dota_scenes`."""
    (folder / "labelTxt").mkdir(parents=True, exist_ok=True)
    (folder / "det").mkdir(parents=True, exist_ok=True)
    for k, objects in enumerate(labels):
        lines = ["imagesource:GoogleEarth", f"gsd:{0.12 + 0.01 * k:.2f}"]
        lines += [" ".join(str(int(v)) for v in xy) + f" {c} {d}" for xy, c, d in objects]
        (folder / "labelTxt" / f"P{k + 1:04d}.txt").write_text("\n".join(lines) + "\n")
    for cls, rows in dets.items():
        task1 = [f"P{k + 1:04d} {conf} " + " ".join(f"{v:.1f}" for v in box)
                 for k, conf, box in rows]
        task2 = [f"P{k + 1:04d} {conf} " + " ".join(
            f"{v:.1f}" for v in (*box.reshape(4, 2).min(axis=0), *box.reshape(4, 2).max(axis=0)))
            for k, conf, box in rows]
        for task, lines in ((1, task1), (2, task2)):
            (folder / "det" / f"Task{task}_{cls}.txt").write_text(
                "".join(f"{line}\n" for line in lines))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "boxes")
    args = ap.parse_args()
    gts, dets = scenes()
    write_text(args.out / "voc" / "gt", gts, with_conf=False)
    write_text(args.out / "voc" / "det", dets, with_conf=True)
    write_voc_xml(args.out / "voc_xml" / "gt", gts)
    write_yolo(args.out / "yolo" / "gt", gts, with_conf=False)
    write_yolo(args.out / "yolo" / "det", dets, with_conf=True)
    (args.out / "yolo" / "classes.txt").write_text("".join(f"{c}\n" for c in CLASSES))
    write_coco(args.out / "coco", gts, dets)
    write_text(args.out / "robin" / "gt", gts, with_conf=False)
    for r, threshold in enumerate((0.3, 0.5, 0.7), start=1):
        write_text(args.out / "robin" / f"run{r}", dets, with_conf=True, min_conf=threshold)
    write_neovision2(args.out / "neovision2", gts, dets)
    write_coco_segm(args.out / "coco_segm")
    write_dota(args.out / "dota", *dota_scenes())
    write_crowdai(args.out / "crowdai")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

"""CrowdAI-style COCO instance segmentation: building polygons on 300 × 300 px tiles.

    python sample_data/make_boxes.py      # writes boxes/coco_segm/ with the other box sets

Modelled on the CrowdAI Mapping Challenge's files (one category ``building``, id
100; every annotation a polygon ``segmentation`` with its ``bbox`` and ``area``;
results ``{image_id, category_id, segmentation, bbox, score}``), seeded:

* ground truth: per tile a Poisson number of buildings (mean 8), rectangles and
  L shapes of 6–60 px, any orientation, some cut by the tile border;
* results: each building found with probability 0.9, its outline jittered by
  about a pixel, its score higher when the outline is good; some found twice;
  about one false alarm per tile.

The bundled sample (:func:`write_coco_segm`: 8 tiles, ``boxes/coco_segm/``) adds
what real files hold now and then: a building of two polygons, a crowd region as
uncompressed RLE (``iscrowd: 1``), a result as uncompressed RLE, a tile without
buildings and a tile without results. The benchmark
(``benchmarks/bench_coco_segm.py``) draws tens of thousands of tiles with
:func:`crowdai_like`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from crowdai_tiles import ring_area

CATEGORY = {"id": 100, "name": "building", "supercategory": "building"}
TILE = 300


def _outlines(rng: np.random.Generator, n: int, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` building outlines (rectangles or L shapes): vertices ``(n, 6, 2)`` and their
    number (4 or 6; a rectangle's last two slots repeat its first vertex)."""
    cx, cy = rng.uniform(0, size, (2, n))
    w = np.exp(rng.uniform(np.log(6), np.log(60), n))
    h = w * rng.uniform(0.5, 1.6, n)
    angle = rng.uniform(0, np.pi, n)
    ell = rng.random(n) < 0.35
    a, b = rng.uniform(0.3, 0.7, (2, n)) - 0.5
    unit = np.empty((n, 6, 2))
    unit[:, :4] = [[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]
    unit[:, 4:] = unit[:, :1]
    unit[ell, 2] = np.column_stack([np.full(ell.sum(), 0.5), b[ell]])
    unit[ell, 3] = np.column_stack([a[ell], b[ell]])
    unit[ell, 4] = np.column_stack([a[ell], np.full(ell.sum(), 0.5)])
    unit[ell, 5] = [-0.5, 0.5]
    p = unit * np.column_stack([w, h])[:, None, :]
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    x = p[:, :, 0] * c - p[:, :, 1] * s + cx[:, None]
    y = p[:, :, 0] * s + p[:, :, 1] * c + cy[:, None]
    return np.stack([x, y], axis=-1), np.where(ell, 6, 4)


def _columns(p: np.ndarray, k: np.ndarray) -> tuple[list, list, np.ndarray]:
    """COCO fields of outlines ``p`` (``(n, 6, 2)``, ``k`` vertices each): polygon
    lists, boxes ``[x, y, w, h]`` and shoelace areas (the padded slots repeat the first
    vertex: they change neither)."""
    r = np.round(p, 2)
    flat = r.reshape(len(r), 12).tolist()
    polys = [[row[:2 * n]] for row, n in zip(flat, k.tolist(), strict=True)]
    lo, hi = r.min(axis=1), r.max(axis=1)
    boxes = np.round(np.column_stack([lo, hi - lo]), 2).tolist()
    return polys, boxes, np.round(ring_area(r, 2), 2)


def _bbox(rings: list[np.ndarray]) -> list[float]:
    pts = np.concatenate(rings)
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    return [round(float(v), 2) for v in (lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1])]


def _flat(p: np.ndarray) -> list[float]:
    return [round(float(v), 2) for v in p.ravel()]


def crowdai_like(n_tiles: int, seed: int = 36, size: int = TILE, mean_buildings: float = 8.0
                 ) -> tuple[dict, list]:
    """Ground truth (a dict) and results (a list) of ``n_tiles`` tiles (see the module
    docstring)."""
    rng = np.random.default_rng(seed)
    images = [{"id": i + 1, "file_name": f"{i:06d}.jpg", "width": size, "height": size}
              for i in range(n_tiles)]
    counts = rng.poisson(mean_buildings, n_tiles)
    p, k = _outlines(rng, int(counts.sum()), size)
    tile = np.repeat(np.arange(n_tiles), counts) + 1
    polys, boxes, areas = _columns(p, k)
    anns = [{"id": i + 1, "image_id": t, "category_id": CATEGORY["id"], "segmentation": s,
             "area": a, "bbox": b, "iscrowd": 0}
            for i, (t, s, a, b) in enumerate(zip(tile.tolist(), polys, areas.tolist(), boxes,
                                                 strict=True))]
    # found with probability 0.9, 8 % of those twice (the copy worse)
    found = np.flatnonzero(rng.random(len(p)) < 0.9)
    twice = found[rng.random(found.size) < 0.08]
    src = np.r_[found, twice]
    err = rng.uniform(0.2, 2.5, src.size) * np.r_[np.ones(found.size), np.full(twice.size, 2)]
    q = p[src] + rng.normal(0, 1, (src.size, 6, 2)) * err[:, None, None]
    q[k[src] == 4, 4:] = q[k[src] == 4, :1]
    score = np.round(np.clip(1.0 - err / 4 + rng.normal(0, 0.08, src.size), 0.01, 1.0), 4)
    # about one false alarm per tile
    n_false = rng.poisson(1.0, n_tiles)
    fp, fk = _outlines(rng, int(n_false.sum()), size)
    q, qk = np.concatenate([q, fp]), np.r_[k[src], fk]
    score = np.r_[score, np.round(rng.uniform(0.01, 0.6, len(fp)), 4)]
    res_tile = np.r_[tile[src], np.repeat(np.arange(n_tiles), n_false) + 1]
    order = np.argsort(res_tile, kind="stable")  # a result file lists image after image
    q, qk, score, res_tile = q[order], qk[order], score[order], res_tile[order]
    polys, boxes, _ = _columns(q, qk)
    results = [{"image_id": t, "category_id": CATEGORY["id"], "segmentation": s, "bbox": b,
                "score": c}
               for t, s, b, c in zip(res_tile.tolist(), polys, boxes, score.tolist(),
                                     strict=True)]
    gt = {"info": {"description": "CrowdAI-style synthetic tiles (geoeval sample)"},
          "images": images, "categories": [CATEGORY], "annotations": anns}
    return gt, results


def _uncompressed(mask: np.ndarray) -> dict:
    """A mask as uncompressed COCO RLE: run lengths in column-major order, background
    first."""
    flat = mask.T.ravel().astype(np.int8)
    bounds = np.r_[0, np.flatnonzero(np.diff(flat)) + 1, flat.size]
    counts = np.diff(bounds).tolist()
    if flat[0]:
        counts = [0] + counts
    return {"size": [int(mask.shape[0]), int(mask.shape[1])], "counts": counts}


def write_coco_segm(out: Path, n_tiles: int = 8, seed: int = 36) -> None:
    """The bundled sample: ``out/instances.json`` and ``out/results.json``."""
    gt, results = crowdai_like(n_tiles, seed)
    anns = gt["annotations"]
    # a tile without buildings, and a tile without results
    anns[:] = [a for a in anns if a["image_id"] != 2]
    results[:] = [r for r in results if r["image_id"] not in (2, 3)]
    # a building of two polygons (a main block and an annex 3 px away)
    a = anns[0]
    ring = np.array(a["segmentation"][0]).reshape(-1, 2)
    lo = ring.min(axis=0)
    annex = np.array([[-14, 0], [-4, 0], [-4, 9], [-14, 9]], float) + [lo[0] + 1, lo[1]]
    rings = [ring, annex]
    a.update(segmentation=[_flat(r) for r in rings], bbox=_bbox(rings),
             area=round(float(ring_area(ring, 2) + ring_area(annex, 2)), 2))
    # a crowd region (a block of small sheds, too many to draw one by one)
    region = np.zeros((TILE, TILE), bool)
    region[200:260, 20:110] = True
    anns.append({"id": len(anns) + 1000, "image_id": 1, "category_id": CATEGORY["id"],
                 "segmentation": _uncompressed(region), "area": float(region.sum()),
                 "bbox": [20.0, 200.0, 90.0, 60.0], "iscrowd": 1})
    # a result given as an uncompressed RLE mask (inside the crowd region: ignored)
    shed = np.zeros((TILE, TILE), bool)
    shed[210:225, 30:50] = True
    results.append({"image_id": 1, "category_id": CATEGORY["id"],
                    "segmentation": _uncompressed(shed), "bbox": [30.0, 210.0, 20.0, 15.0],
                    "score": 0.42})
    out.mkdir(parents=True, exist_ok=True)
    (out / "instances.json").write_text(json.dumps(gt, separators=(",", ":")) + "\n")
    (out / "results.json").write_text(json.dumps(results, separators=(",", ":")) + "\n")

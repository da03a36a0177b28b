"""Seeded CrowdAI-style data sets: 300 × 300 px tiles of building footprints.

The CrowdAI Mapping Challenge ground truth is COCO JSON with one category
(``100``, "building"), one polygon ring per building, and the results of the
polygonal methods are COCO results with a polygon ``segmentation``, a ``bbox``
and a ``score``. :func:`tiles` makes such a pair: footprints (rotated
rectangles, L and U shapes, some with extra collinear vertices), and
predictions that are noisy copies of them (jittered, simplified, densified,
shifted, some duplicated, some missed) plus false alarms; some tiles have no
building, some no prediction, scores have ties. The adversarial options add
holes and multi-part annotations, tiny and huge objects and objects across the
tile border. The tests, the benchmark and the bundled sample use it.
"""

from __future__ import annotations

import numpy as np

SIZE = 300
CATEGORY = {"id": 100, "name": "building", "supercategory": "building"}


def footprint(rng: np.random.Generator, cx: float, cy: float, size: float) -> np.ndarray:
    """One building outline (``k × 2``, counter-clockwise or not, not closed)."""
    kind = rng.integers(0, 4)
    w, h = size, size * rng.uniform(0.5, 1.0)
    if kind == 0:  # rectangle
        pts = np.array([[0, 0], [w, 0], [w, h], [0, h]], float)
    elif kind == 1:  # L shape
        a, b = w * rng.uniform(0.4, 0.7), h * rng.uniform(0.4, 0.7)
        pts = np.array([[0, 0], [w, 0], [w, b], [a, b], [a, h], [0, h]], float)
    elif kind == 2:  # U shape
        a, b, c = w * 0.3, w * 0.7, h * rng.uniform(0.3, 0.6)
        pts = np.array([[0, 0], [w, 0], [w, h], [b, h], [b, c], [a, c], [a, h], [0, h]],
                       float)
    else:  # rectangle with a vertex in the middle of an edge (collinear)
        pts = np.array([[0, 0], [w / 2, 0], [w, 0], [w, h], [0, h]], float)
    pts -= pts.mean(axis=0)
    t = rng.uniform(0, np.pi / 2) if rng.random() < 0.6 else 0.0
    rot = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    pts = pts @ rot.T + [cx, cy]
    if rng.random() < 0.5:
        pts = pts[::-1]
    return pts


def ring_area(xy: np.ndarray, decimals: int) -> np.ndarray:
    """Shoelace area of rings whose coordinates are rounded to ``decimals``, exactly.

    ``xy`` is ``(..., k, 2)``, one ring per leading index (closed or not; a repeated
    vertex adds nothing). The coordinates are taken as the integers ``xy · 10^decimals``
    they stand for, the shoelace sum is made in integers, and the one division by
    ``2 · 10^(2 decimals)`` is correctly rounded: the area written to a sample file is
    the same on every machine. (``np.dot`` and float sums are not: their order of
    addition follows the CPU's BLAS and SIMD kernels, which changed the last bits of a
    written area from one machine to another.) The coordinates themselves come from
    ``np.cos``/``np.sin``, whose last bits may differ too, but they are written rounded to
    ``decimals``: a difference shows only within about 1e-13 of a rounding boundary.
    """
    q = np.rint(np.asarray(xy, float) * 10.0 ** decimals).astype(np.int64)
    x, y = q[..., 0], q[..., 1]
    twice = (x * np.roll(y, -1, axis=-1) - y * np.roll(x, -1, axis=-1)).sum(axis=-1)
    return np.abs(twice) / (2 * 10 ** (2 * decimals))


def _flat(ring: np.ndarray, closed: bool, decimals: int) -> list[float]:
    r = np.round(ring, decimals)
    if closed:
        r = np.vstack([r, r[:1]])
    return [float(v) for v in r.ravel()]


def _bbox(rings: list[list[float]]) -> list[float]:
    xy = np.asarray(rings[0], float).reshape(-1, 2)
    x0, y0 = xy.min(axis=0)
    x1, y1 = xy.max(axis=0)
    return [float(x0), float(y0), float(x1 - x0), float(y1 - y0)]


def _prediction(rng: np.random.Generator, ring: np.ndarray, noise: float) -> np.ndarray:
    """A noisy copy of a reference outline."""
    p = ring + rng.normal(0, noise, ring.shape) + rng.normal(0, noise, 2)
    r = rng.random()
    if r < 0.2 and len(p) > 4:  # a vertex missed
        p = np.delete(p, rng.integers(0, len(p)), axis=0)
    elif r < 0.4:  # densified: a vertex in the middle of every edge, slightly off
        mid = (p + np.roll(p, -1, axis=0)) / 2 + rng.normal(0, noise / 3, p.shape)
        p = np.stack([p, mid], axis=1).reshape(-1, 2)
    return p


def tiles(n_images: int = 50, seed: int = 0, *, per_image: float = 4.0,
          p_empty: float = 0.08, p_unpredicted: float = 0.08, noise: float = 1.0,
          adversarial: bool = False, closed: float = 0.5, decimals: int = 2,
          first_id: int = 0, min_per_image: int = 0, min_predictions: int = 0
          ) -> tuple[dict, list]:
    """A CrowdAI-style reference (dict) and results (list), seeded.

    Parameters
    ----------
    n_images : int
        Tiles of 300 × 300 px.
    per_image : float
        Mean number of buildings per tile (Poisson).
    p_empty, p_unpredicted : float
        Share of tiles with no building, and of tiles with no prediction at all.
    noise : float
        Standard deviation (pixels) of the vertex jitter of predictions.
    adversarial : bool
        Also holes and multi-part annotations (several rings), tiny (< 3 px) and
        huge (beyond the tile) objects, objects across the border, exact copies.
    closed : float
        Share of rings written closed (last vertex repeated), as CrowdAI does.
    min_per_image : int
        Buildings at least on a tile that is not empty.
    min_predictions : int
        Predictions at least on a tile that is predicted (false alarms added):
        with 1, every script runs to the end (HiSup's angle evaluation fails on a
        tile with a reference and no prediction).
    """
    rng = np.random.default_rng(seed)
    images, anns, dets = [], [], []
    for i in range(n_images):
        image_id = first_id + i
        images.append({"id": image_id, "file_name": f"{image_id:012d}.jpg",
                       "width": SIZE, "height": SIZE})
        n = 0 if rng.random() < p_empty else max(int(rng.poisson(per_image)), min_per_image)
        unpredicted = rng.random() < p_unpredicted
        tile_start = len(dets)
        for _ in range(n):
            r = rng.random()
            if adversarial and r < 0.06:
                size = rng.uniform(0.5, 3.0)  # tiny
            elif adversarial and r < 0.1:
                size = rng.uniform(200, 500)  # huge, beyond the tile
            else:
                size = np.exp(rng.uniform(np.log(8), np.log(90)))
            margin = -size / 2 if adversarial and rng.random() < 0.2 else min(size / 2, 140)
            cx, cy = rng.uniform(margin, SIZE - margin, 2)
            ring = footprint(rng, cx, cy, size)
            rings = [ring]
            if adversarial and rng.random() < 0.1:  # a hole (a second ring inside)
                rings.append(np.array([cx, cy]) + (ring - [cx, cy]) * 0.3)
            if adversarial and rng.random() < 0.08:  # a second part beside it
                rings.append(ring + [size * 1.2, 0])
            seg = [_flat(x, rng.random() < closed, decimals) for x in rings]
            area = ring_area(np.asarray(seg[0]).reshape(-1, 2), decimals)
            anns.append({"id": len(anns) + 1, "image_id": image_id, "category_id": 100,
                         "segmentation": seg, "area": float(area), "bbox": _bbox(seg),
                         "iscrowd": 0})
            if unpredicted:
                continue
            copies = 0 if rng.random() < 0.12 else (2 if rng.random() < 0.05 else 1)
            for _ in range(copies):
                if adversarial and rng.random() < 0.1:
                    pred = [np.asarray(s).reshape(-1, 2)[:len(s) // 2] for s in seg]
                    pseg = [list(map(float, s)) for s in seg]  # an exact copy
                else:
                    pred = [_prediction(rng, x, noise) for x in rings]
                    pseg = [_flat(x, rng.random() < closed, decimals) for x in pred]
                dets.append({"image_id": image_id, "category_id": 100, "segmentation": pseg,
                             "bbox": _bbox(pseg), "score": float(np.round(rng.random(), 1))})
        if not unpredicted:  # false alarms
            made = len(dets) - tile_start
            for _ in range(max(int(rng.poisson(0.5)), min_predictions - made)):
                cx, cy = rng.uniform(10, SIZE - 10, 2)
                seg = [_flat(footprint(rng, cx, cy, rng.uniform(6, 30)), rng.random() < closed,
                             decimals)]
                dets.append({"image_id": image_id, "category_id": 100, "segmentation": seg,
                             "bbox": _bbox(seg), "score": float(np.round(rng.random(), 1))})
    gt = {"images": images, "annotations": anns, "categories": [dict(CATEGORY)]}
    return gt, dets

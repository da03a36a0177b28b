"""The polygon columns of the building-extraction tables on the CrowdAI Mapping Challenge.

The papers after Girard et al. (2021) report, beside COCO's mask AP and
Boundary AP, numbers that come from three scripts; each is reproduced here with
its quirks (docs/crowdai.md says which and why):

``iou``, ``ciou``
    PolyWorld's ``coco_IoU_cIoU.py`` (Zorzi, Bazrafkan, Habenschuss and
    Fraundorfer 2022; zorzi-s/PolyWorldPretrainedNetwork at cc3d3ea). Per image,
    the union of all predicted masks against the union of all reference masks
    (COCO's rasterisation, the image's size): ``IoU = I / (U + 1e-9)``, 1 when
    both are empty; ``C-IoU = IoU · (1 − |N − N_GT| / (N + N_GT + 1e-9))`` with
    ``N`` the vertices written in the first ring of each annotation, summed over
    the image. Means over the images the script visits: those with at least one
    prediction of every reference category (``getImgIds(catIds=…)`` of the
    results). An image visited without reference annotation reuses, in the
    script, the previous image's reference mask; here its reference is empty.
``n_ratio``
    Mean of ``N / N_GT`` over the same images, those with ``N_GT > 0`` (the
    ``Mean N-Ratio`` that Pix2Poly's copy of PolyWorld's script prints,
    yeshwanth95/Pix2Poly at d2e288b).
``mta``
    Mean max tangent angle error in degrees (frame-field learning's
    ``eval_coco.py``, Lydorn/Polygonization-by-Frame-Field-Learning at 2dce7c1,
    and HiSup's copy ``angle_eval.py``): per image and category, invalid rings
    repaired (``buffer(0)``), the reference rings' union buffered by 1e-4, the
    predictions' union, each predicted polygon of that union covered more than
    half by the reference scored by :func:`geoeval.measures.tangent_angle.
    max_tangent_angle`; the mean over all such polygons.
``polis``
    HiSup's ``PolisEval`` (Xu, Xu, Xue and Xia 2023; SarahwXU/HiSup at 88bd550):
    per image, each reference annotation matched to the prediction whose
    bounding box (of its first ring) overlaps its own most (IoU > 0.5, a
    prediction may serve several); PoLiS of the two first rings with every
    vertex counted and each side divided by ``2(q + 1)``; averaged per image,
    then over the images with a nonzero average.

Every value is ``None`` where its script would divide by zero (no image, no
pair, no polygon).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import shapely

from geoeval.challenges._pairs import group_pairs
from geoeval.io.boxes import BoxSet, Outlines
from geoeval.measures.polis import polis
from geoeval.measures.tangent_angle import Targets, max_tangent_angle
from geoeval.overlap import box_iou_xywh_pairs
from geoeval.parallel import chunked
from geoeval.reprs import number

#: The frame-field-learning evaluation's reference buffer, spacing, precision and stretch.
MTA_GT_BUFFER = 1e-4
MTA_MIN_PRECISION = 0.5
#: HiSup's PoLiS matching threshold (bounding-box IoU, strict).
POLIS_MIN_IOU = 0.5
#: Polygon overlays (unions, buffers, intersections) worth a thread of their own.
OVERLAYS = 500


@dataclass(frozen=True)
class Side:
    """One side of a CrowdAI-style evaluation: the COCO annotations (or results) and
    their polygon rings, row for row."""

    boxes: BoxSet
    rings: Outlines


def read(reference: Any, submission: Any) -> tuple[BoxSet, BoxSet, list, list]:
    """The reference and the results (paths or loaded JSON), each read once: as COCO
    box sets with their masks, and their records (for the polygon rings)."""
    from geoeval.io.boxes import read_coco

    gt_data, gt_name = _loaded(reference)
    dt_data, dt_name = _loaded(submission)
    gt = read_coco(gt_data, side="reference", masks=True, name=gt_name)
    dt = read_coco(dt_data, side="submission", like=gt, masks=True, name=dt_name)
    anns = gt_data["annotations"]
    images, cats = set(gt.image_ids.values()), set(gt.categories.values())
    kept = [a for a in anns if a["image_id"] in images and a["category_id"] in cats]
    assert len(kept) == len(gt), "the reader kept other annotations"
    return gt, dt, kept, dt_data if isinstance(dt_data, list) else dt_data["annotations"]


def sides(gt: BoxSet, dt: BoxSet, gt_records: list, dt_records: list) -> tuple[Side, Side]:
    """The two :class:`Side` of box sets read with their records (:func:`read`).

    Raises
    ------
    geoeval.io.coco_rings.NotPolygons
        A segmentation that is not polygons (``index`` counts the reference's
        annotations, then the results).
    """
    from geoeval.io.coco_rings import NotPolygons, read_rings

    g_rings = read_rings(gt_records, gt.path, "annotations")
    try:
        d_rings = read_rings(dt_records, dt.path, "results")
    except NotPolygons as exc:
        raise NotPolygons(len(gt_records) + exc.index, exc.reason) from None
    return Side(gt, g_rings), Side(dt, d_rings)


def read_sides(reference: Any, submission: Any) -> tuple[Side, Side]:
    """:func:`sides` of :func:`read`."""
    return sides(*read(reference, submission))


def _loaded(source: Any) -> tuple[Any, str]:
    """Loaded JSON and the name messages give it."""
    from geoeval.io.boxes import load_json
    from geoeval.io.store_paths import shown

    if isinstance(source, (dict, list)):
        return source, "<memory>"
    return load_json(source), shown(source)


def _mean(values: np.ndarray) -> float | None:
    return float(np.mean(values)) if values.size else None


# --- iou, ciou, n_ratio (PolyWorld's loop) -------------------------------------------

def polyworld_images(gt: Side, dt: Side) -> np.ndarray:
    """Image indices PolyWorld's loop visits, in image-id order: those with at least
    one result of every reference category."""
    n_img = len(gt.boxes.images)
    cats = np.array(sorted(gt.boxes.categories.values()), dtype=np.int64)
    has = np.zeros((n_img, cats.size), dtype=bool)
    pos = np.searchsorted(cats, dt.boxes.class_ids)
    known = (pos < cats.size) & (cats[np.minimum(pos, cats.size - 1)] == dt.boxes.class_ids)
    has[dt.boxes.image_index[known], pos[known]] = True
    return np.flatnonzero(has.all(axis=1))


def vertex_counts(side: Side, n_images: int) -> np.ndarray:
    """``N`` of each image: ``len(segmentation[0]) // 2`` summed over its annotations."""
    first = side.rings.ring_sizes[side.rings.object_offsets[:-1]]
    return np.bincount(side.boxes.image_index, weights=first, minlength=n_images)


def iou_ciou(gt: Side, dt: Side, gt_runs: tuple[np.ndarray, np.ndarray, np.ndarray],
             dt_runs: tuple[np.ndarray, np.ndarray, np.ndarray]
             ) -> tuple[float | None, float | None, int]:
    """PolyWorld's mean IoU and C-IoU, and the images they average.

    ``gt_runs`` and ``dt_runs`` are each side's masks as runs of pixels:
    ``(annotation, start, end)``, ``[start, end)`` column-major pixel indices of the
    annotation's image (COCO's rasterisation; runs of one annotation disjoint).
    """
    n_img = len(gt.boxes.images)
    images = polyworld_images(gt, dt)
    stride = _stride(gt, dt, gt_runs, dt_runs)
    a = _image_union(gt.boxes.image_index[gt_runs[0]], gt_runs[1], gt_runs[2], stride)
    b = _image_union(dt.boxes.image_index[dt_runs[0]], dt_runs[1], dt_runs[2], stride)
    area_a = np.bincount(a[0] // stride, weights=a[1] - a[0], minlength=n_img)
    area_b = np.bincount(b[0] // stride, weights=b[1] - b[0], minlength=n_img)
    inter = _intersection(a, b, stride, n_img)
    i, u = inter[images], (area_a + area_b - inter)[images]
    with np.errstate(invalid="ignore", divide="ignore"):
        iou = np.where(u == 0, 1.0, i / (u + 1e-9))
    n, n_gt = vertex_counts(dt, n_img)[images], vertex_counts(gt, n_img)[images]
    ps = 1 - np.abs(n - n_gt) / (n + n_gt + 1e-9)
    return _mean(iou), _mean(iou * ps), int(images.size)


def _stride(gt: Side, dt: Side, *runs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> int:
    """A pixel-index stride that keeps every image's runs apart."""
    ends = [int(r[2].max()) for r in runs if r[2].size]
    return max(ends, default=0) + 1


def _image_union(image: np.ndarray, start: np.ndarray, end: np.ndarray,
                 stride: int) -> tuple[np.ndarray, np.ndarray]:
    """The union of the runs of each image, as disjoint runs ``[s, e)`` of the index
    ``image · stride + pixel``, sorted."""
    s = image.astype(np.int64) * stride + start
    e = image.astype(np.int64) * stride + end
    order = np.argsort(s, kind="stable")
    s, e = s[order], e[order]
    if s.size == 0:
        return s, e
    reach = np.maximum.accumulate(e)
    new = np.r_[True, s[1:] > reach[:-1]]
    head = np.flatnonzero(new)
    tail = np.r_[head[1:], s.size] - 1
    return s[head], reach[tail]


def _intersection(a: tuple[np.ndarray, np.ndarray], b: tuple[np.ndarray, np.ndarray],
                  stride: int, n_images: int) -> np.ndarray:
    """Pixels of each image in both unions (each a sorted set of disjoint runs)."""
    pos = np.concatenate([a[0], a[1], b[0], b[1]])
    delta = np.concatenate([np.ones(a[0].size, np.int64), -np.ones(a[1].size, np.int64),
                            np.ones(b[0].size, np.int64), -np.ones(b[1].size, np.int64)])
    order = np.argsort(pos, kind="stable")
    pos, cover = pos[order], np.cumsum(delta[order])
    both = cover[:-1] == 2
    length = (pos[1:] - pos[:-1])[both]
    return np.bincount(pos[:-1][both] // stride, weights=length, minlength=n_images)


def n_ratio(gt: Side, dt: Side) -> float | None:
    """Mean of ``N / N_GT`` over PolyWorld's images with ``N_GT > 0``."""
    n_img = len(gt.boxes.images)
    images = polyworld_images(gt, dt)
    n, n_gt = vertex_counts(dt, n_img)[images], vertex_counts(gt, n_img)[images]
    ok = n_gt > 0
    return _mean(n[ok] / n_gt[ok])


# --- PoLiS (HiSup) ---------------------------------------------------------------------

def polis_hisup(gt: Side, dt: Side) -> tuple[float | None, int, int]:
    """HiSup's ``PolisEval``: the mean PoLiS, the images averaged and the pairs scored."""
    g_poly = gt.rings.ring_polygons(gt.rings.object_offsets[:-1])
    d_poly = dt.rings.ring_polygons(dt.rings.object_offsets[:-1])
    g_box, d_box = _xywh(g_poly), _xywh(d_poly)
    d, g = group_pairs(dt.boxes.image_index, gt.boxes.image_index)
    iou = box_iou_xywh_pairs(d_box[d], g_box[g], np.zeros(d.size, bool))
    # per reference annotation, the first result (file order) with the largest IoU
    order = np.lexsort((d, -iou, g))
    first = order[np.r_[True, g[order][1:] != g[order][:-1]]] if order.size else order
    matched = first[iou[first] > POLIS_MIN_IOU]
    mg, md = g[matched], d[matched]  # sorted by reference annotation
    values = polis(g_poly[mg], d_poly[md], corners=False, closing_vertex=True)
    n_img = len(gt.boxes.images)
    image = gt.boxes.image_index[mg]
    total = np.bincount(image, weights=values, minlength=n_img)
    count = np.bincount(image, minlength=n_img)
    with np.errstate(invalid="ignore", divide="ignore"):
        avg = total / count
    kept = (count > 0) & (avg != 0)  # the script skips an image whose average is 0
    if not kept.any():
        return None, 0, int(matched.size)
    # summed in image order one after another, as the script's loop does
    return float(np.cumsum(avg[kept])[-1] / kept.sum()), int(kept.sum()), int(matched.size)


def _xywh(polys: np.ndarray) -> np.ndarray:
    """``[x, y, w, h]`` of each polygon's vertices (HiSup's ``bounding_box``)."""
    b = shapely.bounds(polys)
    return np.column_stack([b[:, 0], b[:, 1], b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]])


# --- max tangent angle error (frame-field learning) -----------------------------------

#: One side's polygons as the script fixes them (:func:`_fixed`).
Fixed = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def mta_ffl(gt: Side, dt: Side, fixed: tuple[Fixed, Fixed] | None = None
            ) -> tuple[float | None, int]:
    """Mean max tangent angle error (degrees) and the polygons it averages; ``fixed``:
    :func:`mta_polygons` of the two sides when computed already."""
    (g_parts, g_group, g_keys, g_union), (d_parts, d_group, _, _) = (
        fixed if fixed is not None else mta_polygons(gt, dt))
    # groups with both sides, numbered 0..G-1 in key order
    keys = np.intersect1d(g_group, d_group)
    g_in, d_in = np.isin(g_group, keys), np.isin(d_group, keys)
    g_parts, g_group = g_parts[g_in], np.searchsorted(keys, g_group[g_in])
    d_parts, d_group = d_parts[d_in], np.searchsorted(keys, d_group[d_in])
    if d_parts.size == 0:
        return None, 0
    covered = _covered(d_parts, d_group, g_parts, g_group,
                       g_union[np.searchsorted(g_keys, keys)])
    d_parts, d_group = d_parts[covered], d_group[covered]
    t_rings, t_part = shapely.get_rings(g_parts, return_index=True)
    targets = Targets.from_rings(t_rings, np.searchsorted(g_group[t_part],
                                                          np.arange(keys.size + 1)))
    rings, r_part = shapely.get_rings(d_parts, return_index=True)
    angle = max_tangent_angle(rings, r_part, d_parts.size, d_group[r_part], targets)
    deg = angle[~np.isnan(angle)] * 180 / np.pi
    return _mean(deg), int(deg.size)


def mta_polygons(gt: Side, dt: Side) -> tuple[Fixed, Fixed]:
    """:func:`_fixed` of each side's rings grouped by image and the reference's
    categories, with the script's buffers (:data:`MTA_GT_BUFFER` for the reference,
    none for the predictions): the GEOS part of :func:`mta_ffl`."""
    cats = np.array(sorted(gt.boxes.categories.values()), dtype=np.int64)
    K = max(cats.size, 1)

    def fixed(side: Side, buffer: float) -> Fixed:
        pos = np.searchsorted(cats, side.boxes.class_ids)
        ok = (pos < cats.size) & (cats[np.minimum(pos, cats.size - 1)] == side.boxes.class_ids)
        key = side.boxes.image_index * K + np.minimum(pos, K - 1)
        return _fixed(side.rings, ok, key, buffer)

    return fixed(gt, MTA_GT_BUFFER), fixed(dt, 0.0)


def _covered(parts: np.ndarray, group: np.ndarray, reference: np.ndarray,
             reference_group: np.ndarray, union: np.ndarray) -> np.ndarray:
    """Whether ``MTA_MIN_PRECISION < |part ∩ R| / |part|``, ``R`` the reference polygons
    of the part's group, as the script computes it (GEOS's intersection with their
    collection, whose MultiPolygon gives the same area to the last bits).

    ``R`` is the group's reference union buffered by :data:`MTA_GT_BUFFER` and holds
    that union (``union[group]``), so ``|part ∩ R|`` lies between ``|part ∩ union|``
    and that plus ``|R| − |union|``; ``|part ∩ union|`` by trapezoids
    (:func:`geoeval.overlap_rings.polygon_intersection_areas`, with its rounding
    bound). Only the parts these bounds leave within a margin of the threshold go
    through GEOS.
    """
    from geoeval.overlap_rings import polygon_intersection_areas

    collection = shapely.multipolygons(reference, indices=reference_group)
    area = shapely.area(parts)
    slack = np.maximum(shapely.area(collection) - shapely.area(union), 0.0)
    low, error = polygon_intersection_areas(parts, union, group)
    least, most = low - error, low + error + slack[group] * (1 + 1e-9)
    half = MTA_MIN_PRECISION * area
    sure_in = half * (1 + 1e-9) < least * (1 - 1e-9)
    sure_out = most * (1 + 1e-9) < half * (1 - 1e-9)
    covered = sure_in.copy()
    check = np.flatnonzero(~sure_in & ~sure_out)
    if check.size:
        inter = chunked(lambda a, b: shapely.area(shapely.intersection(a, b)),
                        parts[check], collection[group[check]], min_slice=OVERLAYS)
        covered[check] = MTA_MIN_PRECISION < inter / area[check]
    return covered


#: GEOS's unary union of each geometry of an array, the ufunc :func:`shapely.union_all`
#: calls on the collections it makes (shapely 2.0–2.2); ``None`` if a shapely moves it.
_UNARY_UNION = getattr(getattr(shapely, "lib", None), "unary_union", None)


def union_each(collections: np.ndarray) -> np.ndarray:
    """The union of the parts of each geometry collection, as :func:`shapely.union_all`
    of those parts gives it (GEOS's unary union of the same collection)."""
    if _UNARY_UNION is not None:
        return _UNARY_UNION(collections)
    return np.array([shapely.union_all(shapely.get_parts(c)) for c in collections],
                    dtype=object)


def _fixed(rings: Outlines, ok: np.ndarray, key: np.ndarray,
           buffer: float) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """HiSup's ``fix_polygons`` of each group's rings: one polygon per ring (invalid
    ones repaired by ``buffer(0)``), their union, buffered by ``buffer``, cut into its
    polygons (empty ones dropped). Returns the polygons and their group keys, by key,
    and each group's key and union (before the buffer)."""
    ann = np.flatnonzero(ok)
    ann = ann[np.argsort(key[ann], kind="stable")]
    polys = rings.ring_polygons(rings.rings_of(ann))
    valid = shapely.is_valid(polys)
    if not valid.all():
        polys[~valid] = shapely.buffer(polys[~valid], 0.0, quad_segs=16)
    ring_key = np.repeat(key[ann], np.diff(rings.object_offsets)[ann])
    keys, count = np.unique(ring_key, return_counts=True)
    # one collection per group, and GEOS's unary union of each (what shapely.union_all
    # does per row, without the rows)
    groups = shapely.geometrycollections(polys, indices=np.repeat(np.arange(keys.size), count))
    union = chunked(union_each, groups, min_slice=OVERLAYS)
    fixed = chunked(lambda u: shapely.buffer(u, buffer, quad_segs=16), union,
                    min_slice=OVERLAYS)
    parts, owner = shapely.get_parts(fixed, return_index=True)
    keep = ~shapely.is_empty(parts)
    return parts[keep], keys[owner[keep]], keys, union


@dataclass(frozen=True)
class PolygonMetrics:
    """The polygon columns of the table (module docstring), ``None`` where undefined.

    Attributes
    ----------
    iou, ciou : float or None
        PolyWorld's mean IoU and C-IoU (fractions).
    n_ratio : float or None
        Mean predicted / reference vertices.
    mta : float or None
        Mean max tangent angle error, degrees.
    polis : float or None
        HiSup's mean PoLiS, pixels.
    iou_images, polis_images, polis_pairs, mta_polygons : int
        What each mean is over: images of PolyWorld's loop (IoU, C-IoU and,
        those with a reference vertex, N-ratio), images and matched pairs of
        PoLiS, predicted polygons of the max tangent angle error.
    unavailable : str or None
        Why every value is ``None`` (segmentations that are masks, not polygons).
    """

    iou: float | None = None
    ciou: float | None = None
    n_ratio: float | None = None
    mta: float | None = None
    polis: float | None = None
    iou_images: int = 0
    polis_images: int = 0
    polis_pairs: int = 0
    mta_polygons: int = 0
    unavailable: str | None = None

    def __repr__(self) -> str:
        if self.unavailable:
            return f"<PolygonMetrics: unavailable ({self.unavailable[:120]})>"
        return (f"<PolygonMetrics: IoU {number(self.iou)}, C-IoU {number(self.ciou)}, N ratio "
                f"{number(self.n_ratio)} over {self.iou_images} tiles; MTA {number(self.mta)} "
                f"over {self.mta_polygons} polygons; PoLiS {number(self.polis)} over "
                f"{self.polis_pairs} pairs>")

    def values(self) -> dict[str, float | None]:
        """``iou, ciou, n_ratio, mta, polis``."""
        return {"iou": self.iou, "ciou": self.ciou, "n_ratio": self.n_ratio, "mta": self.mta,
                "polis": self.polis}

    def counts(self) -> dict[str, int]:
        return {"iou_images": self.iou_images, "polis_images": self.polis_images,
                "polis_pairs": self.polis_pairs, "mta_polygons": self.mta_polygons}


def assembled(gt: Side, dt: Side, ious: tuple[float | None, float | None, int],
              polis_value: tuple[float | None, int, int],
              mta: tuple[float | None, int]) -> PolygonMetrics:
    """The columns from the answers of :func:`iou_ciou`, :func:`polis_hisup` and
    :func:`mta_ffl` (computed side by side), with the N ratio."""
    (iou, ciou, iou_images), (polis_mean, polis_images, pairs) = ious, polis_value
    return PolygonMetrics(iou=iou, ciou=ciou, n_ratio=n_ratio(gt, dt), mta=mta[0],
                          polis=polis_mean, iou_images=iou_images, polis_images=polis_images,
                          polis_pairs=pairs, mta_polygons=mta[1])

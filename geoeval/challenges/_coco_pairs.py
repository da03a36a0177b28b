"""The COCO protocol's candidate pairs and their IoU: boxes, masks or boundaries.

The one thing that changes between ``iouType`` ``bbox``, ``segm`` and ``boundary``
(pycocotools' ``COCOeval`` and boundary-iou-api's ``COCOeval``) is the IoU of a
detection with a ground truth of its image and category; ranking, matching and
accumulation are the same (:mod:`geoeval.challenges.coco`). A pair can match only
at IoU ≥ 0.5, so each function here returns only those pairs, as arrays:

* ``bbox``: every pair of an image × category, IoU of ``[x, y, w, h]`` boxes with
  ``maskApi.c`` ``bbIou``'s operations;
* ``segm``: the pairs whose masks share a pixel, found by joining the masks'
  column runs on (image × category, column): ``|D ∩ G| / |D ∪ G|``, or ``|D ∩ G| /
  |D|`` for a crowd ground truth (``rleIou``; 0 when the masks do not meet);
* ``boundary``: the ``segm`` pairs, with ``min(mask IoU, boundary IoU)`` for a
  non-crowd ground truth (Cheng et al. 2021, "Boundary IoU", §5; boundary-iou-api's
  ``computeBoundaryIoU``), the boundaries being :func:`geoeval.measures.boundary_band.
  mask_bands`; a crowd ground truth keeps its mask IoU.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from geoeval.arrays import lookup
from geoeval.challenges._pairs import group_pairs
from geoeval.io.boxes import BoxSet
from geoeval.io.masks import Masks, ranges
from geoeval.overlap import box_iou_xywh_pairs

IOU_TYPES = ("bbox", "segm", "boundary")

#: ``pairs(d_idx, d_key, g_key) -> (pi, pg, iou)``: the pairs of the detections
#: ``d_idx`` (their keys ``d_key``, image × category) with the ground truth (keys
#: ``g_key``) whose IoU reaches the threshold; ``pi`` positions in ``d_idx``, ``pg``
#: ground-truth rows, sorted by ``(pi, pg)``.
PairFunction = Callable[[np.ndarray, np.ndarray, np.ndarray],
                        tuple[np.ndarray, np.ndarray, np.ndarray]]


def box_pairs(gt: BoxSet, dt: BoxSet, g_crowd: np.ndarray, threshold: float) -> PairFunction:
    """Pairs by box IoU (``iouType="bbox"``)."""
    assert dt.wh is not None and gt.wh is not None

    def pairs(d_idx: np.ndarray, d_key: np.ndarray, g_key: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        pi, pg = group_pairs(d_key, g_key)
        pd = d_idx[pi]
        iou = box_iou_xywh_pairs(np.column_stack([dt.boxes[pd, :2], dt.wh[pd]]),
                                 np.column_stack([gt.boxes[pg, :2], gt.wh[pg]]), g_crowd[pg])
        ok = iou >= threshold
        return pi[ok], pg[ok], iou[ok]

    return pairs


class _RunIndex:
    """One side's column runs sorted by (group key, column), for joins."""

    def __init__(self, masks: Masks, key: np.ndarray, stride: int) -> None:
        obj = masks.run_object
        piece = key[obj] * stride + masks.x
        order = np.argsort(piece, kind="stable")
        piece = piece[order]
        self.obj = obj[order]
        self.y0 = masks.y0[order]
        self.y1 = masks.y1[order]
        self.stride = stride
        # each distinct (key, column): where its runs start, and how many
        head = np.flatnonzero(np.r_[True, piece[1:] != piece[:-1]]) if piece.size else piece
        self.columns = piece[head]
        self.start = head
        self.count = np.diff(np.r_[head, piece.size])

    def find(self, piece: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The first run and the number of runs of each (key, column) of ``piece``."""
        if self.columns.size == 0:  # no ground truth at all
            return np.zeros(piece.size, np.int64), np.zeros(piece.size, np.int64)
        at, found = lookup(self.columns, piece)  # a table when the keys are dense
        return self.start[at], np.where(found, self.count[at], 0)


def _intersections(dm: Masks, d_idx: np.ndarray, d_key: np.ndarray, index: _RunIndex,
                   n_gt: int, chunk_pairs: int = 1 << 21
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``|D ∩ G|`` of every pair of the detections ``d_idx`` (masks ``dm``, keys
    ``d_key``) and the indexed ground truth that share a pixel: positions in
    ``d_idx``, ground-truth objects, pixel counts; sorted by (position, object).

    A pixel is shared when a run of each covers it: runs are joined on (key, column)
    and their row ranges intersected, a few thousand detections' runs at a time.
    """
    lengths = np.diff(dm.ptr)[d_idx]
    runs = ranges(dm.ptr[:-1][d_idx], lengths)
    pos = np.repeat(np.arange(d_idx.size), lengths)
    lo, count = index.find(d_key[pos] * index.stride + dm.x[runs])
    # chunks of whole detections with about chunk_pairs run pairs each
    per_det = np.bincount(pos, weights=count, minlength=d_idx.size)
    cum = np.cumsum(per_det)
    cuts = np.unique(np.r_[0, np.searchsorted(cum, np.arange(chunk_pairs, cum[-1] if cum.size
                                                             else 0, chunk_pairs)),
                           d_idx.size])
    run_cut = np.searchsorted(pos, cuts)
    out_d, out_g, out_n = [], [], []
    for a, b in zip(run_cut[:-1], run_cut[1:], strict=True):
        c = count[a:b]
        i = np.repeat(np.arange(a, b), c)
        j = ranges(lo[a:b], c)
        ov = (np.minimum(dm.y1[runs[i]], index.y1[j])
              - np.maximum(dm.y0[runs[i]], index.y0[j]))
        hit = ov > 0
        code = pos[i[hit]] * n_gt + index.obj[j[hit]]
        ov = ov[hit].astype(np.int64)
        order = np.argsort(code, kind="stable")
        code, ov = code[order], ov[order]
        head = np.flatnonzero(np.r_[True, code[1:] != code[:-1]]) if code.size else code
        out_d.append(code[head] // n_gt)
        out_g.append(code[head] % n_gt)
        out_n.append(np.add.reduceat(ov, head) if head.size else ov)
    if not out_d:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    return np.concatenate(out_d), np.concatenate(out_g), np.concatenate(out_n)


def _iou(inter: np.ndarray, area_d: np.ndarray, area_g: np.ndarray,
         crowd: np.ndarray) -> np.ndarray:
    """``rleIou``: ``i / u`` with ``u = |D| + |G| − i``, or ``|D|`` for a crowd region
    (``i > 0`` here)."""
    union = np.where(crowd, area_d, area_d + area_g - inter)
    return inter.astype(float) / union.astype(float)


def mask_pairs(gt: BoxSet, dt: BoxSet, g_key: np.ndarray, g_crowd: np.ndarray,
               threshold: float, boundary_ratio: float | None = None,
               shared: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None
               ) -> PairFunction:
    """Pairs by mask IoU (``iouType="segm"``), or with ``boundary_ratio`` by
    ``min(mask IoU, boundary IoU)`` (``iouType="boundary"``, crowd ground truth by
    mask IoU alone).

    The returned function is called for groups of whole images (in threads) and
    shares nothing mutable: each call indexes the runs of its images' ground truth
    (a group's arrays stay small enough for the cache). Boundaries are made only
    for the objects of pairs whose mask IoU reaches the threshold (a boundary can
    only lower it). ``shared`` keeps each group's mask-IoU pairs for another
    evaluation of the same two sets (``segm`` then ``boundary``: the boundary pass
    reuses them instead of intersecting the masks again).
    """
    gm, dm = gt.masks, dt.masks
    assert gm is not None and dm is not None
    stride = int(max(gm.width.max(initial=0), dm.width.max(initial=0))) + 1
    g_area, d_area = gm.areas(), dm.areas()
    g_order = np.argsort(g_key, kind="stable")  # the ground truth of a key range: a slice
    g_sorted = g_key[g_order]

    def pairs(d_idx: np.ndarray, d_key: np.ndarray, _g_key: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if d_idx.size == 0:
            z = np.zeros(0, dtype=np.int64)
            return z, z, np.zeros(0)
        known = None if shared is None else shared.get(d_idx.tobytes())
        if known is not None:
            pi, pg, iou = known
        else:
            # this group's ground truth: its images are consecutive, so are their keys
            lo = np.searchsorted(g_sorted, d_key.min(), side="left")
            hi = np.searchsorted(g_sorted, d_key.max(), side="right")
            rows = np.sort(g_order[lo:hi])
            index = _RunIndex(gm.subset(rows), g_key[rows], stride)
            pi, local, inter = _intersections(dm, d_idx, d_key, index, rows.size)
            pg = rows[local]
            iou = _iou(inter, d_area[d_idx[pi]], g_area[pg], g_crowd[pg])
            ok = iou >= threshold
            pi, pg, iou = pi[ok], pg[ok], iou[ok]
            if shared is not None:
                shared[d_idx.tobytes()] = (pi, pg, iou)
        if boundary_ratio is None:
            return pi, pg, iou
        need = np.flatnonzero(~g_crowd[pg])  # crowd regions keep their mask IoU
        b_iou = _boundary_iou(dm, gm, d_idx[pi[need]], pg[need], d_key[pi[need]], g_key,
                              stride, boundary_ratio)
        iou = iou.copy()
        iou[need] = np.minimum(iou[need], b_iou)
        ok = iou >= threshold
        return pi[ok], pg[ok], iou[ok]

    return pairs


def _boundary_iou(dm: Masks, gm: Masks, d: np.ndarray, g: np.ndarray, key: np.ndarray,
                  g_key: np.ndarray, stride: int, ratio: float) -> np.ndarray:
    """Boundary IoU of the pairs ``(dm[d[k]], gm[g[k]])`` (their image × category ``key``):
    the bands of the objects involved (:func:`geoeval.measures.boundary_band.mask_bands`),
    intersected by the join of runs; 0 where the bands share no pixel (``rleIou``)."""
    from geoeval.measures.boundary_band import mask_bands

    dets, d_local = np.unique(d, return_inverse=True)
    gts, g_local = np.unique(g, return_inverse=True)
    d_band = mask_bands(dm.subset(dets), ratio)
    g_band = mask_bands(gm.subset(gts), ratio)
    d_keys = np.zeros(dets.size, dtype=np.int64)
    d_keys[d_local] = key
    bi, bg, b_inter = _intersections(d_band, np.arange(dets.size), d_keys,
                                     _RunIndex(g_band, g_key[gts], stride), gts.size)
    # each pair's band intersection, looked up by (detection, ground truth)
    have = bi * gts.size + bg  # sorted
    want = d_local * gts.size + g_local
    at = np.minimum(np.searchsorted(have, want), max(have.size - 1, 0))
    inter = np.where(have[at] == want, b_inter[at], 0) if have.size else np.zeros(want.size,
                                                                                 np.int64)
    out = np.zeros(want.size)
    meet = inter > 0
    out[meet] = _iou(inter[meet], d_band.areas()[d_local[meet]], g_band.areas()[g_local[meet]],
                     np.zeros(int(meet.sum()), bool))
    return out

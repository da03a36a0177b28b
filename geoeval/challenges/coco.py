"""COCO detection protocol: the twelve standard numbers and per-class AP, by boxes,
instance masks or boundaries.

Reproduces the official evaluator (``pycocotools.cocoeval.COCOeval`` with
``iouType='bbox'`` or ``'segm'`` and default parameters) and boundary-iou-api's
(``iouType='boundary'``) number for number, with a vectorised implementation; neither
is imported here. Only the IoU of a pair differs between the three
(:mod:`geoeval.challenges._coco_pairs`); what follows is the same for all.

The protocol (Lin et al. 2014, "Microsoft COCO: Common Objects in Context";
COCOeval ``evaluateImg``/``accumulate``/``summarize``):

* images are the ground truth's ``images``, categories its ``categories``;
  results on other categories are dropped, results on unknown images refused;
* per image and category, detections ranked by decreasing score (stable) and
  cut to the 100 best; IoU of boxes ``[x, y, w, h]`` (or masks, or boundaries),
  except that a crowd ground truth (``iscrowd``) gives ``|D ∩ G| / |D|``;
* for each IoU threshold ``t ∈ {.50, .55, …, .95}`` and area range (all
  ``[0, 1e10]``, small ``[0, 32²]``, medium ``[32², 96²]``, large
  ``[96², 1e10]``, bounds inclusive, applied to the annotation ``area``
  field), ground truth is *ignored* if crowd or outside the range; each
  detection in rank order takes, among the ground truths still free (a crowd
  one is never used up) with IoU ≥ t, the best non-ignored one (highest IoU,
  ties to the later one in file order), or else the best ignored one;
  detections matched to ignored ground truth, and unmatched detections whose
  own area (``w·h``; for masks as ``COCO.loadRes`` sets it) is outside the range,
  are ignored; the rest are TP or FP;
* per category, area range, and maximum number of detections per image
  (1, 10, 100), detections of all images ranked by score (stable; ties by
  image id, then rank in image) give precision ``TP/(TP+FP+ε)`` and recall
  ``TP/N`` (N = non-ignored ground truth), precision made non-increasing from
  the right and read at the 101 recall levels ``0:.01:1`` (first point with
  recall ≥ level; 0 past the end); recall is the final recall;
* -1 marks an undefined value (no non-ignored ground truth); AP and AR are
  means over the defined values.

Vectorisation: all (detection, ground truth) pairs of each image × category
are scored at once; the greedy assignment, sequential inside one image ×
category, is run for the r-th ranked detection of *every* image × category
simultaneously (at most 100 steps), over all thresholds and area ranges at
once; accumulation is vectorised per category over thresholds, area ranges
and detection limits.

Names: the public API says ``reference`` (the COCO ground truth) and
``submission`` (the COCO results); inside :func:`_evaluate` the local names keep
COCOeval's ``gt`` / ``dt`` so that the code reads against ``cocoeval.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from geoeval import validate
from geoeval.arrays import lookup, unique
from geoeval.challenges._coco_pairs import IOU_TYPES, PairFunction, box_pairs, mask_pairs
from geoeval.errors import InputError
from geoeval.io.boxes import BoxSet, read_coco_pair
from geoeval.measures.boundary_band import DILATION_RATIO
from geoeval.parallel import workers
from geoeval.reprs import number as _short
from geoeval.reprs import warned as _warned

#: IoU thresholds .50:.05:.95, built exactly as the official evaluator builds them.
IOU_THRESHOLDS = np.linspace(0.5, 0.95, int(np.round((0.95 - 0.5) / 0.05)) + 1, endpoint=True)
#: Recall levels 0:.01:1 (101 points).
REC_THRESHOLDS = np.linspace(0.0, 1.00, int(np.round((1.00 - 0.0) / 0.01)) + 1, endpoint=True)
MAX_DETS = (1, 10, 100)
AREA_RANGES = ((0.0**2, 1e5**2), (0.0**2, 32.0**2), (32.0**2, 96.0**2), (96.0**2, 1e5**2))
AREA_LABELS = ("all", "small", "medium", "large")
STAT_NAMES = ("AP", "AP50", "AP75", "APs", "APm", "APl",
              "AR1", "AR10", "AR100", "ARs", "ARm", "ARl")


@dataclass(frozen=True)
class CocoResult:
    """COCO evaluation of one result set.

    Attributes
    ----------
    stats : dict of str -> float or None
        The twelve numbers ``AP AP50 AP75 APs APm APl AR1 AR10 AR100 ARs ARm
        ARl``, ``None`` when undefined (no reference box in that area range: the
        JSON's ``null`` and the table's ``–``; COCOeval writes -1, as
        :attr:`stats_array` does).
    per_class : dict of str -> dict
        Per category name: ``category_id``, ``ap`` (IoU .50:.95, all areas,
        100 detections), ``ap50``, ``ap75``, ``n_reference`` (non-crowd reference boxes);
        ``None`` where undefined.
    precision : numpy.ndarray
        ``[T, R, K, A, M]`` interpolated precision (COCOeval ``eval['precision']``).
    recall : numpy.ndarray
        ``[T, K, A, M]`` recall (COCOeval ``eval['recall']``).
    category_ids : tuple of int
        The ``K`` categories, sorted by id.
    n_images : int
    n_reference : int
        Reference (ground-truth) annotations.
    n_submission : int
        Submitted results kept (at most 100 per image and category, known categories).
    iou_type : str
        ``bbox``, ``segm`` or ``boundary``: what the IoU compared.
    dilation_ratio : float or None
        The boundary band's ratio of the image diagonal (``boundary`` only).
    """

    stats: dict[str, float | None]
    per_class: dict[str, dict[str, Any]]
    precision: np.ndarray = field(repr=False)
    recall: np.ndarray = field(repr=False)
    category_ids: tuple[int, ...] = ()
    n_images: int = 0
    n_reference: int = 0
    n_submission: int = 0
    warnings: tuple[str, ...] = ()  # the readers' (boxes outside the image, zero-area boxes)
    iou_type: str = "bbox"
    dilation_ratio: float | None = None  # boundary only

    def __repr__(self) -> str:
        ap = ", ".join(f"{k} {_short(self.stats[k])}" for k in ("AP", "AP50", "AP75", "AR100"))
        k = len(self.category_ids)
        return (f"<CocoResult {self.iou_type}: {self.n_images} images, {k} "
                f"categor{'y' if k == 1 else 'ies'}, {self.n_reference} reference and "
                f"{self.n_submission} submitted objects; {ap}{_warned(self.warnings)}>")

    @property
    def stats_array(self) -> np.ndarray:
        """The twelve numbers in COCOeval ``stats`` order, -1 where undefined (as
        COCOeval writes them, to compare with it)."""
        return np.array([-1.0 if self.stats[k] is None else self.stats[k] for k in STAT_NAMES])

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``stats`` (``None`` where undefined) and ``per_class``."""
        extra = {} if self.dilation_ratio is None else {"dilation_ratio": self.dilation_ratio}
        return {
            "protocol": f"coco-{self.iou_type}",
            **extra,
            "n_images": self.n_images,
            "n_reference": self.n_reference,
            "n_submission": self.n_submission,
            "stats": dict(self.stats),
            "per_class": self.per_class,
            "warnings": list(self.warnings),
        }


def _defined(v: float) -> float | None:
    return None if v == -1 else float(v)


def evaluate_coco(
    reference: str | Path | dict | BoxSet, submission: str | Path | list | BoxSet, *,
    iou_type: str = "bbox", dilation_ratio: float = DILATION_RATIO,
) -> CocoResult:
    """Evaluate detections with the COCO protocol (as ``COCOeval``: boxes, masks or
    boundaries).

    Parameters
    ----------
    reference : path, dict or BoxSet
        COCO ground truth (``images``, ``annotations``, ``categories``).
    submission : path, list or BoxSet
        COCO results: ``[{image_id, category_id, bbox: [x, y, w, h], score}, …]``,
        with ``segmentation`` for masks and boundaries.
    iou_type : {'bbox', 'segm', 'boundary'}
        What a detection and a ground truth are compared by: boxes (pycocotools'
        ``iouType="bbox"``), instance masks (``"segm"``: polygons and RLE rasterised
        as the COCO mask API does) or Boundary IoU (boundary-iou-api's
        ``iouType="boundary"``: ``min(mask IoU, boundary IoU)``, crowd regions by
        mask IoU); see docs/coco-masks.md.
    dilation_ratio : float
        ``boundary`` only: the boundary band's width as a fraction of the image
        diagonal (``d = max(1, round(ratio · diagonal))`` pixels; 0.02 as in the paper).

    Returns
    -------
    CocoResult

    Notes
    -----
    Lin et al., "Microsoft COCO: Common Objects in Context" (ECCV 2014) and
    the detection evaluation page (cocodataset.org/#detection-eval); the
    exact rules are those of ``pycocotools/cocoeval.py`` (see the module
    docstring). Two quirks of the official code are kept so that numbers are
    identical: a ground-truth annotation with id 0 cannot make a detection a
    true positive (its match is recorded as "0 = no match"), and the
    ``ignore`` field of annotations is overridden by ``iscrowd``.

    Examples
    --------
    >>> reference = {"images": [{"id": 1}], "categories": [{"id": 1, "name": "cat"}],
    ...       "annotations": [{"id": 1, "image_id": 1, "category_id": 1,
    ...                        "bbox": [0, 0, 10, 10], "area": 100, "iscrowd": 0}]}
    >>> submission = [{"image_id": 1, "category_id": 1, "bbox": [0, 0, 10, 10], "score": 0.9}]
    >>> r = evaluate_coco(reference, submission)
    >>> round(r.stats["AP"], 6), r.stats["APm"]  # no medium-sized reference box: undefined
    (1.0, None)
    """
    if iou_type not in IOU_TYPES:
        raise InputError(f"iou_type must be one of {', '.join(IOU_TYPES)}, got {iou_type!r}")
    validate.check("dilation_ratio", dilation_ratio)
    if isinstance(reference, BoxSet) and reference.fmt != "coco":
        raise InputError("COCO evaluation needs COCO ground truth", reference.path)
    from geoeval.heap import memory_kept

    with memory_kept():
        gt, dt = read_coco_pair(reference, submission, masks=iou_type != "bbox")
        if dt.scores is None or dt.wh is None or dt.class_ids is None:
            raise InputError("COCO evaluation needs COCO results", dt.path)
        if dt.images != gt.images:
            raise InputError("results were not read against this ground truth "
                             "(read them with like=reference)", dt.path)
        return _evaluate(gt, dt, iou_type, float(dilation_ratio))


#: detections from which images and categories are processed in threads (boxes; masks)
THREADED_FROM = 50_000
THREADED_MASKS_FROM = 5_000
#: detections matched at once (masks)
MASK_PART = 40_000


def masks_and_boundaries(gt: BoxSet, dt: BoxSet, dilation_ratio: float = DILATION_RATIO
                         ) -> tuple[CocoResult, CocoResult]:
    """``segm`` and ``boundary`` evaluations of two box sets read with their masks
    (:func:`geoeval.io.boxes.read_coco_pair`), the masks intersected once for both."""
    shared: dict = {}
    return (_evaluate(gt, dt, "segm", shared=shared),
            _evaluate(gt, dt, "boundary", dilation_ratio, shared=shared))


def _evaluate(gt: BoxSet, dt: BoxSet, iou_type: str = "bbox",
              dilation_ratio: float = DILATION_RATIO, shared: dict | None = None
              ) -> CocoResult:
    cat_ids = np.array(sorted(gt.categories.values()), dtype=np.int64)
    K, A, T, M = cat_ids.size, len(AREA_RANGES), IOU_THRESHOLDS.size, len(MAX_DETS)
    n_img = len(gt.images)
    if K == 0:
        raise InputError("COCO ground truth lists no category", gt.path)
    g_cat = np.searchsorted(cat_ids, gt.class_ids)
    d_cat, d_known = lookup(cat_ids, dt.class_ids)  # unknown ones are left out
    warnings = [*gt.warnings, *dt.warnings]
    if not d_known.all():
        unknown = unique(dt.class_ids[~d_known])
        warnings.append(f"{dt.path}: {int((~d_known).sum())} result(s) of category id(s) "
                        f"absent from the ground truth ({', '.join(map(str, unknown[:5]))}"
                        f"{', …' if unknown.size > 5 else ''}) are left out, as in COCOeval")

    # --- ground truth ---------------------------------------------------------------------
    g_key = gt.image_index * K + g_cat
    g_crowd = gt.iscrowd.astype(bool)
    lo = np.array([r[0] for r in AREA_RANGES])
    hi = np.array([r[1] for r in AREA_RANGES])
    g_ignore = g_crowd[:, None] | (gt.areas[:, None] < lo) | (gt.areas[:, None] > hi)  # [G, A]
    g_ok = gt.ids != 0

    # --- detections, matched by groups of whole images (in threads when many) ----------
    d_idx = np.flatnonzero(d_known)
    dense = _dense_ranks(dt.scores[d_idx])  # over the whole set: ties are global
    threaded = THREADED_FROM if iou_type == "bbox" else THREADED_MASKS_FROM
    jobs = workers() if d_idx.size > threaded else 1
    # masks: groups of at most about MASK_PART detections, whose arrays stay in cache
    n_parts = jobs if iou_type == "bbox" else max(jobs, -(-d_idx.size // MASK_PART))
    parts = _image_parts(dt.image_index[d_idx], n_img, n_parts)
    if iou_type == "bbox":
        pairs = box_pairs(gt, dt, g_crowd, IOU_THRESHOLDS[0])
    else:
        pairs = mask_pairs(gt, dt, g_key, g_crowd, IOU_THRESHOLDS[0],
                           dilation_ratio if iou_type == "boundary" else None, shared)
    d_area = dt.areas if dt.areas is not None else dt.wh[:, 0] * dt.wh[:, 1]

    def match(sel: np.ndarray) -> tuple[np.ndarray, ...]:
        return _match_images(dt.image_index, d_area, pairs, d_idx[sel], dense[sel], d_cat, K,
                             g_key, g_ignore, g_crowd, g_ok, lo, hi)

    if jobs > 1 and len(parts) > 1:
        from geoeval.cancel import threads

        with threads(min(jobs, len(parts))) as pool:
            done = list(pool.map(match, parts))
    else:
        done = [match(sel) for sel in parts]
    # the parts hold consecutive images: concatenated, the keys stay in order
    offsets = np.cumsum([0] + [r[0].size for r in done[:-1]])
    d_idx, d_key, rank, dense, unmatched, cand_status = (
        np.concatenate([r[i] for r in done]) for i in (0, 1, 2, 3, 4, 6))
    cand = np.concatenate([r[5] + off for r, off in zip(done, offsets, strict=True)])
    n_det = d_idx.size
    cand_pos = np.full(n_det, -1, dtype=np.int64)
    cand_pos[cand] = np.arange(cand.size)

    # --- accumulate -----------------------------------------------------------------------
    d_c = d_key % K
    npig = np.zeros((K, A), dtype=np.int64)
    for a in range(A):
        npig[:, a] = np.bincount(g_cat[~g_ignore[:, a]], minlength=K)
    precision = np.full((T, REC_THRESHOLDS.size, K, A, M), -1.0)
    recall = np.full((T, K, A, M), -1.0)
    # by category, then decreasing score (ties: image, then rank in image); the
    # detections are in (image, rank) order already
    acc_order = _sort_by(d_c, dense, n_det)
    bounds = np.searchsorted(d_c[acc_order], np.arange(K + 1))
    max_dets = np.array(MAX_DETS)

    def one(k: int) -> None:
        sel = acc_order[bounds[k]:bounds[k + 1]]
        pos = cand_pos[sel]
        is_cand = pos >= 0
        _accumulate_category(unmatched[sel], cand_status[pos[is_cand]],
                             rank[sel] < max_dets[:, None], is_cand, npig[k],
                             precision[:, :, k], recall[:, k])

    todo = np.flatnonzero((npig > 0).any(axis=1)).tolist()
    jobs = min(workers(), len(todo))
    if jobs > 1 and n_det > THREADED_FROM:  # categories in threads (numpy releases the GIL)
        from geoeval.cancel import threads

        with threads(jobs) as pool:
            list(pool.map(one, todo))
    else:
        for k in todo:
            one(k)
    stats = _summarize(precision, recall)
    per_class = _per_class(gt, cat_ids, precision, npig)
    return CocoResult(
        warnings=tuple(warnings),
        stats=dict(zip(STAT_NAMES, (_defined(s) for s in stats), strict=True)),
        per_class=per_class,
        precision=precision,
        recall=recall,
        category_ids=tuple(int(c) for c in cat_ids),
        n_images=n_img,
        n_reference=len(gt),
        n_submission=int(n_det),
        iou_type=iou_type,
        dilation_ratio=dilation_ratio if iou_type == "boundary" else None,
    )


def _image_parts(image: np.ndarray, n_img: int, jobs: int) -> list[np.ndarray]:
    """Positions of the detections split into at most ``jobs`` groups of consecutive
    images with about as many detections each (one group when ``jobs`` is 1)."""
    if jobs <= 1 or image.size == 0:
        return [np.arange(image.size)]
    cum = np.cumsum(np.bincount(image, minlength=n_img))
    cuts = unique(np.searchsorted(cum, cum[-1] * np.arange(1, jobs) / jobs, side="right"))
    part = np.searchsorted(cuts, image, side="right")  # group of each detection
    found = (np.flatnonzero(part == j) for j in range(cuts.size + 1))
    return [sel for sel in found if sel.size]


def _match_images(d_image: np.ndarray, d_areas: np.ndarray, pairs: PairFunction,
                  d_idx: np.ndarray, dense: np.ndarray, d_cat: np.ndarray, K: int,
                  g_key: np.ndarray, g_ignore: np.ndarray, g_crowd: np.ndarray,
                  g_ok: np.ndarray, lo: np.ndarray, hi: np.ndarray
                  ) -> tuple[np.ndarray, ...]:
    """Rank, cut and match the detections ``d_idx`` (file order, with their dense
    score ranks over the whole set) of some whole images against the ground truth;
    ``pairs`` gives their candidate pairs and IoU (box, mask or boundary).

    Returns, for the detections kept, in (image × category, rank) order: their
    indices, keys, ranks in their image × category, dense score ranks, unmatched
    status per area range ``[n, A]`` (int8: 2 ignored when the detection's own area
    is outside the range, else 0 FP); then the positions (among them) of those with
    a candidate pair, and those detections' status ``[c, T, A]`` after matching (1
    TP, 0 FP, 2 ignored). The others keep their unmatched status at every ``t``.
    """
    T = IOU_THRESHOLDS.size
    # --- rank in image × category, keep the 100 best ----------------------------------
    d_key = d_image[d_idx] * K + d_cat[d_idx]
    # by image × category, then decreasing score, then file order
    order = _sort_by(d_key, dense, d_idx.size)
    d_idx, d_key, dense = d_idx[order], d_key[order], dense[order]
    start = np.flatnonzero(np.r_[True, d_key[1:] != d_key[:-1]]) if d_key.size else d_key
    rank = np.arange(d_key.size) - np.repeat(start, np.diff(np.r_[start, d_key.size]))
    keep = rank < MAX_DETS[-1]
    d_idx, d_key, rank, dense = d_idx[keep], d_key[keep], rank[keep], dense[keep]
    d_area = d_areas[d_idx]
    unmatched = np.where((d_area[:, None] < lo) | (d_area[:, None] > hi), 2, 0).astype(np.int8)

    # --- candidate pairs (IoU >= .5) and the greedy assignment ---------------------------
    pi, pg, piou = pairs(d_idx, d_key, g_key)
    cand = pi[np.r_[True, pi[1:] != pi[:-1]]] if pi.size else pi  # pi is sorted
    cand_status = _assign(pi, pg, piou, cand, d_key, g_ignore, g_crowd, g_ok,
                          np.repeat(unmatched[cand][:, None, :], T, axis=1))
    return d_idx, d_key, rank, dense, unmatched, cand, cand_status


def _dense_ranks(scores: np.ndarray) -> np.ndarray:
    """Ranks of the scores in decreasing order, tied scores sharing one (``-0.0 == 0.0``):
    one unstable sort of the values (a stable argsort is four times slower)."""
    if scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    uniq, inverse = np.unique(scores, return_inverse=True)
    return (uniq.size - 1 - inverse).astype(np.int64)


def _sort_by(major: np.ndarray, minor: np.ndarray, n: int) -> np.ndarray:
    """Indices sorting by ``(major, minor, index)`` (non-negative integers): one sort of
    a packed 64-bit key when it fits, else :func:`numpy.lexsort`."""
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    m1 = int(minor.max()) + 1
    if (int(major.max()) + 1) * m1 * n < 2**62:
        return np.argsort((major * m1 + minor) * n + np.arange(n))
    return np.lexsort((np.arange(n), minor, major))


def _assign(
    pi: np.ndarray,
    pg: np.ndarray,
    piou: np.ndarray,
    cand: np.ndarray,
    d_key: np.ndarray,
    g_ignore: np.ndarray,
    g_crowd: np.ndarray,
    g_counts: np.ndarray,
    status: np.ndarray,
) -> np.ndarray:
    """Greedy COCO matching.

    ``status[C, T, A]`` (int8) is the unmatched status of the detections ``cand``
    that have at least one candidate pair (sorted indices). Returns their status
    after matching: 1 (TP) where matched to a non-ignored ground
    truth whose annotation id is not 0 (``g_counts``: COCOeval stores a match as
    the annotation id, 0 meaning none), 2 (ignored) where matched to an ignored
    one, unchanged otherwise.

    A ground truth whose candidate detections have no other candidate (the usual
    case: a detection reaches IoU 0.5 with one object at most) is matched on its own,
    without a loop: at threshold ``t`` the first of them (in rank order) whose IoU
    reaches ``t`` takes it (every such one for a crowd region, which is never used
    up); nothing else in its image competes for these detections or this object.
    The other pairs are matched by :func:`_assign_greedy`.
    """
    if pi.size == 0:
        return status
    slot = np.searchsorted(cand, pi)  # each pair's detection, as a row of `status`
    lone_det = np.bincount(slot, minlength=cand.size)[slot] == 1
    shared = np.zeros(g_ignore.shape[0], dtype=bool)
    shared[pg[~lone_det]] = True
    one_gt = lone_det & ~shared[pg]
    # pairs of such a ground truth, grouped by it, in rank order
    single = np.flatnonzero(one_gt)
    single = single[np.argsort(pg[single], kind="stable")]
    s_row, s_g, s_iou = slot[single], pg[single], piou[single]
    s_crowd = g_crowd[s_g]
    for t, thr in enumerate(IOU_THRESHOLDS):
        hit = np.flatnonzero(s_iou >= thr)
        k = s_g[hit]
        first = np.r_[True, k[1:] != k[:-1]] if k.size else np.zeros(0, dtype=bool)
        m = hit[first | s_crowd[hit]]
        rows, g = s_row[m], s_g[m]
        ign = g_ignore[g]  # [n, A]
        tp = ~ign & g_counts[g][:, None]
        status[rows, t, :] = np.where(ign, 2, np.where(tp, 1, status[rows, t, :]))
    multi = np.flatnonzero(~one_gt)
    if multi.size:
        c_key = d_key[cand]
        c_start = np.flatnonzero(np.r_[True, c_key[1:] != c_key[:-1]])
        c_step = np.arange(cand.size) - np.repeat(c_start, np.diff(np.r_[c_start, cand.size]))
        _assign_greedy(slot[multi], pg[multi], piou[multi], c_step[slot[multi]], g_ignore,
                       g_crowd, g_counts, status)
    return status


def _assign_greedy(
    slot: np.ndarray, pg: np.ndarray, piou: np.ndarray, p_step: np.ndarray,
    g_ignore: np.ndarray, g_crowd: np.ndarray, g_counts: np.ndarray, status: np.ndarray,
) -> None:
    """COCOeval's greedy matching of the pairs ``(slot, pg)`` (``status`` rows, ground
    truth), each detection's ``p_step`` being its rank among the detections of its
    group that have a candidate; updates ``status`` as :func:`_assign` says.

    Step ``r`` handles the ``r``-th detection of every image × category at once;
    within one step no two detections share a ground truth, so the state update
    has no conflict.
    """
    T = IOU_THRESHOLDS.size
    # pairs sorted by (step, detection, IoU, ground-truth file order): the position
    # in this order breaks IoU ties towards the later ground truth, as COCOeval does
    order = np.lexsort((pg, piou, slot, p_step))
    slot, pg, piou, p_step = slot[order], pg[order], piou[order], p_step[order]
    n_pairs = pg.size
    big = n_pairs + 1
    step_bounds = np.searchsorted(p_step, np.arange(int(p_step.max()) + 2))
    taken = np.zeros((g_ignore.shape[0], T, g_ignore.shape[1]), dtype=bool)
    g_weight = (~g_ignore).astype(np.int64) * big  # non-ignored ground truth first
    thr = IOU_THRESHOLDS
    for r in range(step_bounds.size - 1):
        s, e = step_bounds[r], step_bounds[r + 1]
        if s == e:
            continue
        ci, gi, iou = slot[s:e], pg[s:e], piou[s:e]
        elig = (iou[:, None] >= thr[None, :])[:, :, None] & (
            g_crowd[gi][:, None, None] | ~taken[gi])  # [P, T, A]
        pos = np.arange(s + 1, e + 1, dtype=np.int64)
        key = np.where(elig, g_weight[gi][:, None, :] + pos[:, None, None], 0)
        seg = np.flatnonzero(np.r_[True, ci[1:] != ci[:-1]])
        best = np.maximum.reduceat(key, seg, axis=0)  # [nd, T, A]
        dd, tt, aa = np.nonzero(best)
        gsel = pg[best[dd, tt, aa] % big - 1]
        row = ci[seg][dd]
        ign = g_ignore[gsel, aa]
        tp = ~ign & g_counts[gsel]
        status[row[ign], tt[ign], aa[ign]] = 2
        status[row[tp], tt[tp], aa[tp]] = 1
        hard = ~g_crowd[gsel]
        taken[gsel[hard], tt[hard], aa[hard]] = True


def _first_count(npig: np.ndarray) -> np.ndarray:
    """For each area range and recall level, the least TP count ``c`` with
    ``c / npig >= level`` in floating point (``npig + 1`` if none)."""
    n = np.maximum(npig, 1).astype(float)[:, None]  # npig == 0: masked by the caller
    c = np.ceil(REC_THRESHOLDS[None, :] * n).astype(np.int64)
    for _ in range(4):  # fix floating-point rounding of the product, both ways
        down = (c > 0) & ((c - 1) / n >= REC_THRESHOLDS[None, :])
        up = (c / n < REC_THRESHOLDS[None, :]) & (c <= npig[:, None])
        c = c - down + up
    return c


def _accumulate_category(
    unmatched: np.ndarray, cand_status: np.ndarray, within: np.ndarray, cand: np.ndarray,
    npig: np.ndarray, precision: np.ndarray, recall: np.ndarray,
) -> None:
    """Fill ``precision[T, R, A, M]`` and ``recall[T, A, M]`` of one category.

    Its ``n`` detections in accumulation order: ``cand[n]`` whether each had a
    candidate pair; ``cand_status[c, T, A]`` the status (1 TP, 0 FP, 2 ignored)
    of those that had one, in the same order; ``unmatched[n, A]`` the status of
    the others (false positives or ignored at every threshold: it does not
    depend on ``t``); ``within[M, n]`` whether each detection is inside the
    per-image limit ``maxDets[m]``.

    COCOeval computes ``p_i = TP_i / (FP_i + TP_i + ε)`` after every counted
    detection, replaces it by ``max_{j ≥ i} p_j`` and reads it at the first
    ``i`` whose recall ``TP_i / N`` reaches each level. Precision rises only
    at a true positive, so that maximum is attained at a true positive, and
    the first point reaching a level is a true positive (or the first point,
    for level 0). Only the true positives are therefore needed: with
    ``k = 1, 2, …`` and ``f_k`` the false positives ranked before the k-th
    true positive, ``p_k = k / (f_k + k + ε)`` (the same floating-point
    operations), and level ``r`` reads ``max_{k ≥ max(c_r, 1)} p_k`` where
    ``c_r`` is the least count with ``c_r / N ≥ r`` (0 past the last one).
    ``f_k`` adds the false positives among the detections without a candidate
    (one running count per area range and limit) to those among the
    candidates (one per threshold, area range and limit).
    """
    T, A = cand_status.shape[1], cand_status.shape[2]
    M = within.shape[0]
    R = REC_THRESHOLDS.size
    ci = np.flatnonzero(cand)
    fp_other = ((unmatched.T == 0) & ~cand)[:, None, :] & within[None, :, :]  # [A, M, n]
    fpc_other = np.cumsum(fp_other, axis=-1, dtype=np.int32)
    st = np.ascontiguousarray(cand_status.transpose(1, 2, 0))  # [T, A, c]
    w = within[:, ci]  # [M, c]
    fp = st == 0
    # true positives of each row (t, a, m): those of (t, a) within the limit m, in
    # order; k counts them along the row, f the false positives before each
    t0, a0, p0 = np.nonzero(st == 1)  # row-major: (t, a) in order, positions ascending
    n_tp = np.zeros((M, T, A), dtype=np.int64)
    q = np.zeros((M, T, A, R))
    need = np.maximum(_first_count(npig), 1)
    fpc_all = None
    for m in range(M):  # one limit at a time: a row's precisions only live for its limit
        if w[m].all():  # no candidate beyond this limit: counts along all of them
            if fpc_all is None:
                fpc_all = np.cumsum(fp, axis=-1, dtype=np.int32)
            fpc, t_m, a_m, p_m, at = fpc_all, t0, a0, p0, p0
        else:  # counts along the candidates within the limit only
            sub = np.flatnonzero(w[m])
            fpc = np.cumsum(fp[:, :, sub], axis=-1, dtype=np.int32)
            keep = w[m, p0]
            t_m, a_m, p_m = t0[keep], a0[keep], p0[keep]
            at = (np.cumsum(w[m]) - 1)[p_m]
        ta = t_m * A + a_m  # ascending: rows (t, a) in order, k along each
        counts = np.bincount(ta, minlength=T * A)
        n_tp[m] = counts.reshape(T, A)
        if ta.size:
            kf = (np.arange(ta.size) - (np.cumsum(counts) - counts)[ta] + 1).astype(float)
            f_m = (fpc[t_m, a_m, at] + fpc_other[a_m, m, ci[p_m]]).astype(float)
            p = kf / (f_m + kf + np.spacing(1))
            q[m] = _envelope(p, counts, need, A).reshape(T, A, R)
    valid_a = npig > 0
    npig_f = np.maximum(npig, 1).astype(float)[None, :, None]
    recall[...] = np.where(valid_a[None, :, None], n_tp.transpose(1, 2, 0) / npig_f, -1.0)
    q = np.where(valid_a[None, None, :, None], q, -1.0)
    precision[...] = q.transpose(1, 3, 2, 0)


def _envelope(p: np.ndarray, n_tp: np.ndarray, need: np.ndarray, A: int) -> np.ndarray:
    """``max_{k ≥ need[a, r]} p_k`` of every row (0 where the row has fewer true
    positives): ``p`` holds the rows' precisions one after the other (``n_tp`` each,
    the row's area range the row number modulo ``A``), ``need[a, r]`` the least count
    reaching recall level ``r``.

    The counts that levels ask for cut each row into at most ``R`` segments; the
    maxima of the segments (one ``maximum.reduceat`` over ``p``), each put at the first
    level of its segment, are then made non-increasing from the right on an
    ``[rows, R]`` table: the same maxima as a suffix maximum over every ``k``, without
    a table as wide as the longest row.
    """
    n_rows, R = n_tp.size, need.shape[1]
    cols = need[np.arange(n_rows) % A] - 1  # [rows, R] 0-based, non-decreasing along r
    reach = cols < n_tp[:, None]
    new = reach.copy()
    new[:, 1:] &= cols[:, 1:] != cols[:, :-1]
    row_start = np.cumsum(n_tp) - n_tp
    starts = (row_start[:, None] + cols)[new]  # ascending: rows in order, then levels
    seg = np.zeros((n_rows, R))  # each segment's maximum at the level that starts it
    seg[new] = np.maximum.reduceat(p, starts)  # p > 0: the zeros between never win
    env = np.maximum.accumulate(seg[:, ::-1], axis=1)[:, ::-1]
    first = np.maximum.accumulate(np.where(new, np.arange(R), 0), axis=1)  # its segment
    return np.where(reach, np.take_along_axis(env, first, axis=1), 0.0)


def _mean_defined(s: np.ndarray) -> float:
    sel = s[s > -1]
    return -1.0 if sel.size == 0 else float(np.mean(sel))


def _summarize(precision: np.ndarray, recall: np.ndarray) -> np.ndarray:
    """The twelve numbers, computed as ``COCOeval.summarize`` computes them."""

    def one(ap: bool, iou: float | None = None, area: str = "all", max_det: int = 100) -> float:
        a = AREA_LABELS.index(area)
        m = MAX_DETS.index(max_det)
        if ap:
            s = precision
            if iou is not None:
                s = s[np.where(iou == IOU_THRESHOLDS)[0]]
            s = s[:, :, :, [a], [m]]
        else:
            s = recall
            if iou is not None:
                s = s[np.where(iou == IOU_THRESHOLDS)[0]]
            s = s[:, :, [a], [m]]
        return _mean_defined(s)

    return np.array([
        one(True), one(True, iou=0.5), one(True, iou=0.75),
        one(True, area="small"), one(True, area="medium"), one(True, area="large"),
        one(False, max_det=1), one(False, max_det=10), one(False),
        one(False, area="small"), one(False, area="medium"), one(False, area="large"),
    ])


def _per_class(gt: BoxSet, cat_ids: np.ndarray, precision: np.ndarray,
               npig: np.ndarray) -> dict[str, dict[str, Any]]:
    name_of = {v: k for k, v in gt.categories.items()}
    t50 = np.where(0.5 == IOU_THRESHOLDS)[0]
    t75 = np.where(0.75 == IOU_THRESHOLDS)[0]
    out: dict[str, dict[str, Any]] = {}
    for k, cid in enumerate(cat_ids.tolist()):
        p = precision[:, :, k, 0, -1]
        out[name_of[cid]] = {
            "category_id": cid,
            "ap": _defined(_mean_defined(p)),
            "ap50": _defined(_mean_defined(p[t50])),
            "ap75": _defined(_mean_defined(p[t75])),
            "n_reference": int(npig[k, 0]),
        }
    return out

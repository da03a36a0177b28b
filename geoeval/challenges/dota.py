"""The DOTA protocol: per-class AP and mAP of oriented (task 1) or horizontal (task 2) boxes.

Reproduces DOTA_devkit's evaluation (Ding et al., CAPTAIN-WHU/DOTA_devkit,
``dota_evaluation_task1.py`` / ``dota_evaluation_task2.py`` and their
``dota-v1.5_`` variants, commit 9938855, 2019; Xia et al. 2018, "DOTA: A
Large-Scale Dataset for Object Detection in Aerial Images", §5) on the one VOC
accumulation of :mod:`geoeval.challenges.voc`:

* per class of the version's list, detections ranked as the devkit ranks them
  (``np.argsort(-confidence)`` over the class file's lines: numpy's default
  sort, so tied confidences come in the order it leaves them);
* each detection takes the ground truth of its image and class with the
  highest IoU, a hit when that IoU is **strictly above** 0.5; a hit on a
  difficult object is ignored (DOTA-v1.0 and v2.0; the v1.5 scripts count every
  object); the first hit of an object in ranked order is a true positive, any
  other detection a false positive;
* task 1: IoU of the quadrilaterals (:func:`geoeval.overlap_rings.ring_intersection_areas`,
  the devkit's ``polyiou`` convention for self-intersecting ones) over
  ``|A| + |B| − |A ∩ B|`` with shoelace areas; task 2: IoU of the horizontal
  boxes with the devkit's ``+1`` pixel areas, the reference's boxes being the
  quadrilaterals' bounding boxes truncated to integers (the task-2 script reads
  its ground truth with ``int(float(v))``);
* AP: the devkit's 11-point interpolation at recall levels
  ``np.arange(0, 1.1, 0.1)`` (``metric="voc07"``, the default: 0.30000000000000004,
  0.6000000000000001 and 0.7000000000000001 are three of them, so a recall of
  exactly 0.3, 0.6 or 0.7 does not reach its level), or every point
  (``metric="area"``, the devkit's ``use_07_metric=False``, which later toolkits
  report); mAP is the mean over the version's classes.

Kept quirks and where geoeval differs are listed in ``docs/dota.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.challenges._box_groups import centred_pairs, overlapping_pairs
from geoeval.challenges._pr import ap_every_point, interpolated_precision, pr_curve
from geoeval.challenges.voc import assign, ranked_hits
from geoeval.errors import InputError, swapped
from geoeval.heap import memory_kept
from geoeval.io.boxes import (
    BoxSet,
    dota_result_files,
    read_dota_labels,
    read_dota_results,
)
from geoeval.io.store_paths import box_path
from geoeval.io.store_paths import shown as shown_name
from geoeval.overlap import box_iou_pairs, iou_from_union
from geoeval.overlap_rings import convex_rings, ring_intersection_areas, ring_signed_areas
from geoeval.reprs import listed, number, warned
from geoeval.thresholds import RELATIVE_SLACK, above

_V10 = ("plane", "baseball-diamond", "bridge", "ground-track-field", "small-vehicle",
        "large-vehicle", "ship", "tennis-court", "basketball-court", "storage-tank",
        "soccer-ball-field", "roundabout", "harbor", "swimming-pool", "helicopter")
#: Classes of each DOTA version, in the devkit's order (v2.0: Ding et al. 2021, Table 2).
CLASSES: dict[str, tuple[str, ...]] = {
    "1.0": _V10,
    "1.5": (*_V10, "container-crane"),
    "2.0": (*_V10, "container-crane", "airport", "helipad"),
}
#: Short names used in the papers' tables.
ABBREVIATIONS = {
    "plane": "PL", "baseball-diamond": "BD", "bridge": "BR", "ground-track-field": "GTF",
    "small-vehicle": "SV", "large-vehicle": "LV", "ship": "SH", "tennis-court": "TC",
    "basketball-court": "BC", "storage-tank": "ST", "soccer-ball-field": "SBF",
    "roundabout": "RA", "harbor": "HA", "swimming-pool": "SP", "helicopter": "HC",
    "container-crane": "CC", "airport": "AP", "helipad": "HP"}
VERSIONS = tuple(CLASSES)
TASKS = (1, 2)
METRICS = ("voc07", "area")
#: IoU a true positive must exceed (strictly).
IOU_THRESHOLD = 0.5
#: The devkit's recall levels ``np.arange(0., 1.1, 0.1)``, kept as computed.
DEVKIT_LEVELS = np.arange(0.0, 1.1, 0.1)


@dataclass(frozen=True)
class DotaClassResult:
    """One class's result.

    Attributes
    ----------
    ap : float or None
        AP of the chosen metric; with ``voc07`` a class without a counted
        reference object has AP 0 (the devkit's arithmetic), with ``area`` it is
        ``None`` and left out of mAP.
    n_reference : int
        Reference objects counted (not difficult; every object with DOTA-v1.5).
    n_difficult : int
        Difficult reference objects (not counted with v1.0 and v2.0).
    n_submission, tp, fp, ignored : int
        Detections of the class; true and false positives; detections whose
        best match is a difficult object (neither).
    precision, recall : numpy.ndarray
        The curve, one point per counted detection in ranked order.
    """

    name: str
    ap: float | None
    n_reference: int
    n_difficult: int
    n_submission: int
    tp: int
    fp: int
    ignored: int
    precision: np.ndarray
    recall: np.ndarray

    def __repr__(self) -> str:
        return (f"<DotaClassResult {self.name}: AP {number(self.ap)}; {self.tp} TP, {self.fp} "
                f"FP of {self.n_submission} detections, {self.n_reference} reference objects "
                f"({self.n_difficult} difficult)>")

    def to_dict(self) -> dict[str, Any]:
        return {"ap": self.ap, "n_reference": self.n_reference,
                "n_difficult": self.n_difficult, "n_submission": self.n_submission,
                "tp": self.tp, "fp": self.fp, "ignored": self.ignored,
                "precision": self.precision.tolist(), "recall": self.recall.tolist()}


@dataclass(frozen=True)
class DotaResult:
    """DOTA evaluation of one submission.

    Attributes
    ----------
    task, version, metric : int, str, str
    map : float or None
        Mean AP over the version's classes (``area``: those with a counted
        reference object; ``None`` if none has one).
    classes : dict of str -> DotaClassResult
        Every class of the version, in the devkit's order.
    outcome, matched : numpy.ndarray
        Per detection (order of :attr:`submission`): 1 TP, 0 FP, -1 ignored;
        its matched reference object or -1.
    reference, submission : BoxSet
    warnings : tuple of str
    """

    task: int
    version: str
    metric: str
    map: float | None
    classes: dict[str, DotaClassResult]
    outcome: np.ndarray = field(repr=False)
    matched: np.ndarray = field(repr=False)
    reference: BoxSet = field(repr=False)
    submission: BoxSet = field(repr=False)
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        aps = listed([f"{k} {number(c.ap)}" for k, c in self.classes.items()], 4)
        return (f"<DotaResult task {self.task}, DOTA-v{self.version}, {self.metric}: mAP "
                f"{number(self.map)} over {len(self.reference.images)} images, "
                f"{len(self.classes)} classes; AP {aps}{warned(self.warnings)}>")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``stats.mAP``, ``per_class[name].ap`` and the counts and curves."""
        return {
            "protocol": "dota",
            "task": self.task,
            "version": self.version,
            "metric": self.metric,
            "iou_threshold": IOU_THRESHOLD,
            "stats": {"mAP": self.map, "n_images": len(self.reference.images),
                      "n_reference": len(self.reference),
                      "n_submission": len(self.submission)},
            "per_class": {k: v.to_dict() for k, v in self.classes.items()},
            "warnings": list(self.warnings),
        }


def evaluate_dota(
    reference: BoxSet | str | Path,
    submission: BoxSet | str | Path,
    *,
    task: int = 1,
    version: str = "1.0",
    metric: str = "voc07",
) -> DotaResult:
    """Evaluate oriented (task 1) or horizontal (task 2) detections as DOTA_devkit does.

    Parameters
    ----------
    reference : path or BoxSet
        A folder of labelTxt files (:func:`~geoeval.io.boxes.read_dota_labels`),
        or its :class:`BoxSet` (with outlines).
    submission : path or BoxSet
        A folder of ``Task1_<class>.txt`` (task 1) or ``Task2_<class>.txt``
        (task 2) files (:func:`~geoeval.io.boxes.read_dota_results`), or a
        :class:`BoxSet` on the reference's images (task 1: with outlines).
    task : {1, 2}
    version : {'1.0', '1.5', '2.0'}
        The class list (and, for 1.5, difficult objects counted as any other).
    metric : {'voc07', 'area'}
        11-point AP as the devkit (default) or every-point AP.

    Returns
    -------
    DotaResult

    Examples
    --------
    >>> import numpy as np
    >>> from geoeval.io.boxes import BoxSet, Outlines
    >>> ref = BoxSet(None, np.array([0]), np.array(["plane"]), ("P1",),
    ...              outlines=Outlines.from_quads(np.array([[0., 0, 10, 0, 10, 10, 0, 10]])))
    >>> sub = BoxSet(None, np.array([0, 0]), np.array(["plane", "plane"]), ("P1",),
    ...              scores=np.array([0.9, 0.8]),
    ...              outlines=Outlines.from_quads(np.array([[0., 0, 10, 0, 10, 10, 0, 10],
    ...                                                     [0., 0, 20, 0, 20, 10, 0, 10]])))
    >>> r = evaluate_dota(ref, sub)
    >>> r.classes["plane"].tp, r.classes["plane"].fp  # IoU 1 and IoU 0.5 (not above 0.5)
    (1, 1)
    >>> r.classes["plane"].ap  # eleven additions of 1/11, as the devkit adds them
    1.0000000000000002
    >>> round(r.map, 4)  # the 14 classes without objects count as AP 0, as in the devkit
    0.0667
    """
    if task not in TASKS:
        raise InputError(f"unknown DOTA task {task!r} (expected 1 or 2)")
    if version not in CLASSES:
        raise InputError(f"unknown DOTA version {version!r} (expected "
                         f"{', '.join(VERSIONS)})")
    if metric not in METRICS:
        raise InputError(f"unknown metric {metric!r} (expected voc07 or area)")
    with memory_kept():  # freed memory reused, not given back and zeroed again
        names = CLASSES[version]
        warnings: list[str] = []
        gt = reference if isinstance(reference, BoxSet) else read_dota_labels(reference)
        if gt.outlines is None:
            raise InputError("the reference carries no outlines (read it with read_dota_labels)",
                             gt.path)
        if isinstance(submission, BoxSet):
            det = submission
            if det.images != gt.images:
                raise InputError("the submission is not on the reference's images", det.path)
        else:
            det = _read_submission(submission, task, gt.images, names, warnings)
        if det.scores is None:
            raise InputError("the submission carries no confidence", det.path)
        if task == 1 and (det.outlines is None or det.outlines.quads() is None):
            raise InputError("task 1 needs four corners per detection", det.path)
        g_cls, d_cls = _codes(gt.classes, names), _codes(det.classes, names)
        warnings += _left_out(gt, g_cls < 0, "reference object(s)", version)
        warnings += _left_out(det, d_cls < 0, "detection(s)", version)
        if (g_cls < 0).any():
            gt, g_cls = gt.subset(np.flatnonzero(g_cls >= 0)), g_cls[g_cls >= 0]
        if (d_cls < 0).any():
            det, d_cls = det.subset(np.flatnonzero(d_cls >= 0)), d_cls[d_cls >= 0]
        warnings += _shape_warnings(gt, det, task)
        result = _evaluate(gt, det, g_cls, d_cls, task, version, metric)
        return DotaResult(task, version, metric, result[0], result[1], result[2], result[3], gt,
                          det, tuple(warnings))


def _read_submission(source: str | Path, task: int, images: tuple[str, ...],
                     names: tuple[str, ...], warnings: list[str]) -> BoxSet:
    path = shown_name(source)  # a URL without its secrets
    found, other = dota_result_files(source, task)
    if not found and other:
        raise InputError(f"no Task{task}_<class>.txt file, but {other[0]} (evaluate it "
                         f"with --task {3 - task})", path)
    if not found:
        labels = sorted(q.name for q in box_path(source).glob("*.txt") if q.is_file())
        if labels:
            raise InputError(f"no Task{task}_<class>.txt file, but {labels[0]} (labelTxt?): "
                             + swapped("labelTxt folder", f"folder of Task{task}_<class>.txt "
                                       "files"), path)
    missing = [c for c in names if c not in found]
    if missing:
        shown = ", ".join(missing[:4]) + (", ..." if len(missing) > 4 else "")
        warnings.append(f"{path}: no Task{task} file for {len(missing)} class(es) ({shown}): "
                        "no detection, AP 0")
    extra = sorted(set(found) - set(names))
    if extra:
        warnings.append(f"{path}: Task{task} file(s) of {len(extra)} class(es) outside the "
                        f"version's list ({', '.join(extra[:4])}): not read")
    return read_dota_results(source, task, images, tuple(c for c in names if c in found))


def _left_out(boxes: BoxSet, out: np.ndarray, what: str, version: str) -> list[str]:
    if not out.any():
        return []
    kinds = sorted(set(boxes.classes[out].tolist()))
    shown = ", ".join(kinds[:4]) + (", ..." if len(kinds) > 4 else "")
    return [f"{boxes.path}: {int(out.sum())} {what} of class(es) outside DOTA-v{version}'s "
            f"list ({shown}): left out"]


def _shape_warnings(gt: BoxSet, det: BoxSet, task: int) -> list[str]:
    """Quadrilaterals that are not simple (self-intersecting or of zero area), counted."""
    out = []
    sides = ((gt, "reference object(s)"), (det, "detection(s)")) if task == 1 else \
        ((gt, "reference object(s)"),)
    for boxes, what in sides:
        q = boxes.outlines.quads() if boxes.outlines is not None else None
        if q is None or not len(q):
            continue
        crossing = _self_intersecting(q)
        flat = (ring_signed_areas(q) == 0) & ~crossing
        if flat.any():
            out.append(f"{boxes.path}: {int(flat.sum())} {what} of zero area (IoU 0 with "
                       "everything)")
        if crossing.any():
            out.append(f"{boxes.path}: {int(crossing.sum())} {what} with crossing sides, "
                       "scored as DOTA_devkit scores them (lobes of opposite signs)")
    return out


def _self_intersecting(q: np.ndarray) -> np.ndarray:
    """Quadrilaterals whose opposite sides cross (a bow tie)."""
    def cross(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return (a[:, 0] - p[:, 0]) * (b[:, 1] - p[:, 1]) - (a[:, 1] - p[:, 1]) * (b[:, 0] - p[:, 0])

    def crossing(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> np.ndarray:
        return ((np.sign(cross(a, b, c)) * np.sign(cross(a, b, d)) < 0)
                & (np.sign(cross(c, d, a)) * np.sign(cross(c, d, b)) < 0))

    p0, p1, p2, p3 = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return crossing(p0, p1, p2, p3) | crossing(p1, p2, p3, p0)


def _evaluate(gt: BoxSet, det: BoxSet, g_cls: np.ndarray, d_cls: np.ndarray, task: int,
              version: str, metric: str
              ) -> tuple[float | None, dict[str, DotaClassResult], np.ndarray, np.ndarray]:
    names = CLASSES[version]
    difficult = gt.difficult if version != "1.5" else np.zeros(len(gt), dtype=bool)
    order = _devkit_order(det.scores, d_cls, len(names))
    di, gi, iou, hit = _pairs(gt, det, g_cls, d_cls, task)
    outcome, matched = assign(len(det), di, gi, iou, hit, difficult, order)

    n_gt = np.bincount(g_cls[~difficult], minlength=len(names))
    n_diff = np.bincount(g_cls[gt.difficult], minlength=len(names))
    n_det = np.bincount(d_cls, minlength=len(names))
    n_ign = np.bincount(d_cls[outcome == -1], minlength=len(names))
    classes: dict[str, DotaClassResult] = {}
    for c, (name, is_tp) in enumerate(zip(names, ranked_hits(outcome, order, d_cls,
                                                             len(names)), strict=True)):
        if n_gt[c] > 0:
            prec, rec = pr_curve(is_tp, int(n_gt[c]))
            ap: float | None = _ap(prec, rec, metric)
        else:  # the devkit divides by zero: 11-point AP 0, every-point AP NaN
            prec, rec = np.zeros(0), np.zeros(0)
            ap = 0.0 if metric == "voc07" else None
        tp = int(is_tp.sum())
        classes[name] = DotaClassResult(name, ap, int(n_gt[c]), int(n_diff[c]), int(n_det[c]),
                                        tp, int(is_tp.size - tp), int(n_ign[c]), prec, rec)
    aps = [v.ap for v in classes.values() if v.ap is not None]
    return _mean(aps, metric, len(names)), classes, outcome, matched


def _codes(classes: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Position of each class in ``names`` (-1 for another name), by runs of equal names
    (a class file's detections are one run): no sort of the strings."""
    n = classes.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, classes[1:] != classes[:-1]])
    where = {c: i for i, c in enumerate(names)}
    run = np.array([where.get(c, -1) for c in classes[starts].tolist()], dtype=np.int64)
    return np.repeat(run, np.diff(np.r_[starts, n]))


def _ap(prec: np.ndarray, rec: np.ndarray, metric: str) -> float:
    if metric == "area":
        return ap_every_point(prec, rec)
    ap = 0.0
    for p in interpolated_precision(prec, rec, DEVKIT_LEVELS).tolist():
        ap = ap + p / 11.0  # added level by level, as the devkit's loop does
    return ap


def _mean(aps: list[float], metric: str, n_classes: int) -> float | None:
    """The devkit's mAP: the APs added in class order, over the length of its class list
    (``voc07``); ``area``: over the classes with an AP (the devkit's would be NaN)."""
    if not aps:
        return None
    total = 0.0
    for a in aps:
        total = total + a
    return total / (n_classes if metric == "voc07" else len(aps))


def _devkit_order(scores: np.ndarray, d_cls: np.ndarray, n_classes: int) -> np.ndarray:
    """Each class's detections in the order the devkit ranks them, classes in list order:
    ``np.argsort(-confidence)`` over the class's lines as read (numpy's default sort:
    ties in whatever order it leaves them, as in the devkit)."""
    parts = []
    for c in range(n_classes):  # a loop over the classes (at most 18), not the detections
        idx = np.flatnonzero(d_cls == c)
        parts.append(idx[np.argsort(-scores[idx])])
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _pairs(gt: BoxSet, det: BoxSet, g_cls: np.ndarray, d_cls: np.ndarray, task: int
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Candidate pairs of one image and class, their IoU and the hit decision.

    Only pairs whose bounding boxes meet can have an IoU above 0.5, so only they
    are listed (a left-out pair never is a detection's best above the threshold,
    :func:`~geoeval.challenges.voc.assign`).
    """
    n_img = max(len(gt.images), 1)
    dg, gg = d_cls * n_img + det.image_index, g_cls * n_img + gt.image_index
    if task == 2:
        g_box = np.trunc(gt.boxes)  # the task-2 script reads int(float(v))
        # the +1 areas are those of the boxes [x1, x2 + 1] x [y1, y2 + 1]; above IoU 1/2
        # each of two such boxes holds the other's centre (centred_pairs), checked on
        # boxes grown by 1e-9 of their size so that rounding cannot lose a pair
        di, gi = centred_pairs(dg, _grown(det.boxes + [0, 0, 1, 1]), gg,
                               _grown(g_box + [0, 0, 1, 1]))
        iou = box_iou_pairs(det.boxes, g_box, di, gi, plus_one=True)
        return di, gi, iou, iou > IOU_THRESHOLD  # the devkit's own float comparison
    di, gi = overlapping_pairs(dg, det.boxes, gg, gt.boxes)
    dq, gq = det.outlines.quads(), gt.outlines.quads()
    d_area, g_area = np.abs(ring_signed_areas(dq)), np.abs(ring_signed_areas(gq))
    # an IoU bound from the areas and the bounding boxes' overlap; convex quadrilaterals
    # only (a self-intersecting one's winding-number overlap can exceed its area)
    simple = convex_rings(dq)[di] & convex_rings(gq)[gi]
    box_inter = np.minimum(np.minimum(d_area[di], g_area[gi]), _box_overlap(det, gt, di, gi))
    bound_union = d_area[di] + g_area[gi] - box_inter
    possible = ~simple | ~(box_inter <= IOU_THRESHOLD * bound_union * (1 - 1e3 * RELATIVE_SLACK))
    di, gi = di[possible], gi[possible]
    inter = ring_intersection_areas(dq[di], gq[gi])
    union = d_area[di] + g_area[gi] - inter
    return di, gi, iou_from_union(inter, union), above(inter, union, IOU_THRESHOLD)


def _grown(boxes: np.ndarray) -> np.ndarray:
    """``boxes`` one billionth of their size larger on every side."""
    pad = 1e-9 * (boxes[:, 2:] - boxes[:, :2] + 1.0)
    return np.concatenate([boxes[:, :2] - pad, boxes[:, 2:] + pad], axis=1)


def _box_overlap(det: BoxSet, gt: BoxSet, di: np.ndarray, gi: np.ndarray) -> np.ndarray:
    from geoeval.overlap import box_intersection_areas

    return box_intersection_areas(det.boxes, gt.boxes, di, gi)

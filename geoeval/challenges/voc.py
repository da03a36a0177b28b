"""PASCAL VOC detection protocol: precision × recall per class, AP, mAP.

Definitions (Padilla et al., Object-Detection-Metrics README; the VOC devkit ``VOCevaldet.m``):
per class, detections are ranked by decreasing confidence; each one takes the
ground truth of its image and class with the highest IoU (over *all* of them,
taken or not); it is a true positive if that IoU is at least the threshold and
that ground truth has not been taken by a higher-ranked detection, else a
false positive (so duplicates are false positives). A detection whose best
ground truth is ``difficult`` is neither (devkit), and difficult objects do not
count in the number of ground truths.

Because a detection's choice does not depend on what is already taken, the
whole assignment is vectorised: one IoU call over the (detection, ground
truth) pairs of each image × class, a best-pair selection, and "first
detection of each ground truth in ranked order" by ``numpy.unique``.

Names: the public API says ``reference`` (ground truth) and ``submission``
(detections); the local variables of the evaluator keep the devkit's ``gt`` /
``det`` so that it reads line by line against ``VOCevaldet.m`` and Padilla et
al.'s ``Evaluator.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.challenges._pairs import group_pairs
from geoeval.challenges._pr import ap_eleven_point, ap_every_point, pr_curve
from geoeval.errors import InputError
from geoeval.io.boxes import BoxSet, align_images, read_boxes
from geoeval.overlap import box_iou_pairs
from geoeval.reprs import listed, number, warned
from geoeval.validate import fraction


@dataclass(frozen=True)
class VocClassResult:
    """Result of one class.

    Attributes
    ----------
    name : str
    ap, ap11 : float or None
        Every-point and 11-point average precision; ``None`` when the class
        has no (non-difficult) ground truth.
    tp, fp : int
        True and false positives over all detections of the class.
    n_reference : int
        Non-difficult reference (ground-truth) boxes.
    n_submission : int
        All submitted boxes (detections) of the class (``tp + fp + ignored``).
    ignored : int
        Detections matched to a difficult ground truth (neither TP nor FP).
    precision, recall : numpy.ndarray
        The curve, one point per counted detection in ranked order (empty when
        ``n_reference`` is 0).
    """

    name: str
    ap: float | None
    ap11: float | None
    tp: int
    fp: int
    n_reference: int
    n_submission: int
    ignored: int
    precision: np.ndarray
    recall: np.ndarray

    def __repr__(self) -> str:
        return (f"<VocClassResult {self.name}: AP {number(self.ap)}, AP11 {number(self.ap11)}; "
                f"{self.tp} TP, {self.fp} FP of {self.n_submission} detections, "
                f"{self.n_reference} reference boxes>")

    def to_dict(self) -> dict[str, Any]:
        return {
            "ap": self.ap,
            "ap11": self.ap11,
            "tp": self.tp,
            "fp": self.fp,
            "n_reference": self.n_reference,
            "n_submission": self.n_submission,
            "ignored": self.ignored,
            "precision": self.precision.tolist(),
            "recall": self.recall.tolist(),
        }


@dataclass(frozen=True)
class VocResult:
    """PASCAL VOC evaluation of one detection set.

    Attributes
    ----------
    classes : dict of str -> VocClassResult
        Every class present in the ground truth or the detections.
    map, map11 : float or None
        Mean of ``ap`` / ``ap11`` over the classes that have ground truth
        (``None`` if none has).
    iou_threshold : float
    plus_one : bool
    outcome : numpy.ndarray
        Per detection (in the order of the detection :class:`BoxSet`):
        1 true positive, 0 false positive, -1 ignored (difficult).
    matched : numpy.ndarray
        Per detection, the index of its best ground truth (IoU ≥ threshold) in
        the ground-truth :class:`BoxSet`, or -1.
    reference, submission : BoxSet
        The inputs on a common image list.
    warnings : tuple of str
        What the readers accepted with a warning (boxes outside the image,
        clipped, zero-area) and detection classes without ground truth.
    """

    classes: dict[str, VocClassResult]
    map: float | None
    map11: float | None
    iou_threshold: float
    plus_one: bool
    outcome: np.ndarray = field(repr=False)
    matched: np.ndarray = field(repr=False)
    reference: BoxSet = field(repr=False)
    submission: BoxSet = field(repr=False)
    warnings: tuple[str, ...] = ()

    def __repr__(self) -> str:
        aps = listed([f"{k} {number(c.ap)}" for k, c in self.classes.items()], 4)
        return (f"<VocResult IoU ≥ {self.iou_threshold:g}: mAP {number(self.map)} (11-point "
                f"{number(self.map11)}) over {len(self.reference.images)} images; AP {aps}"
                f"{warned(self.warnings)}>")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``classes.<name>.{ap, ap11, tp, fp, n_reference, precision,
        recall, …}``, ``map``, ``map11`` (undefined values are ``None``)."""
        return {
            "protocol": "pascal-voc",
            "iou_threshold": self.iou_threshold,
            "plus_one": self.plus_one,
            "map": self.map,
            "map11": self.map11,
            "n_images": len(self.reference.images),
            "classes": {k: v.to_dict() for k, v in self.classes.items()},
            "warnings": list(self.warnings),
        }


def evaluate_voc(
    reference: BoxSet | str | Path,
    submission: BoxSet | str | Path,
    iou_threshold: float = 0.5,
    plus_one: bool = False,
    *,
    box_format: str = "xyrb",
    image_size: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
    ref_fmt: str | None = None,
    sub_fmt: str | None = None,
    class_names: Any = None,
    ref_box_format: str | None = None,
    sub_box_format: str | None = None,
    ref_image_size: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
    sub_image_size: tuple[float, float] | Mapping[str, tuple[float, float]] | None = None,
    ref_relative: bool | None = None,
    sub_relative: bool | None = None,
) -> VocResult:
    """Evaluate detections with the PASCAL VOC protocol.

    Parameters
    ----------
    reference, submission : BoxSet or path
        Reference (ground truth) and submission (detections, with
        confidences); paths are read with :func:`geoeval.io.boxes.read_boxes`,
        and the submission borrows the reference's image sizes and COCO
        category names.
    iou_threshold : float
        Minimum IoU of a true positive, ``0 < t <= 1`` (VOC: 0.5).
    plus_one : bool
        Use the devkit's pixel-inclusive areas ``(x2 − x1 + 1)(y2 − y1 + 1)``.
    box_format, image_size, ref_fmt, sub_fmt, class_names
        Reader options (see :func:`~geoeval.io.boxes.read_boxes`), for paths.
    ref_box_format, sub_box_format, ref_image_size, sub_image_size : optional
        The same per side (Padilla et al.'s ``-gtformat``/``-detformat`` and
        image size); each defaults to ``box_format`` / ``image_size``.
    ref_relative, sub_relative : bool, optional
        Per side: text coordinates are relative (``-gtcoords``/``-detcoords
        rel``; read as :func:`~geoeval.io.boxes.read_boxes` says). When
        neither is given, a side is relative exactly when it has an image
        size (the old single-switch behaviour); when one is given, the other
        defaults to absolute, as in Padilla et al.'s pascalvoc.py.

    Returns
    -------
    VocResult

    Notes
    -----
    Per class ``c`` with ``N_c`` non-difficult ground truths, detections
    ranked by confidence (stable: ties keep reading order) give
    ``P_k = TP_k / k`` and ``R_k = TP_k / N_c`` (Padilla et al., "Precision x
    Recall curve"). AP by every-point interpolation
    ``Σ (r_{n+1} − r_n) max_{r ≥ r_{n+1}} p(r)`` and by 11-point interpolation
    ``(1/11) Σ_{r∈{0,.1,…,1}} max_{r' ≥ r} p(r')`` (Padilla et al.; devkit).
    mAP is the mean AP over classes with ``N_c > 0``.

    Examples
    --------
    >>> import numpy as np
    >>> from geoeval.io.boxes import BoxSet
    >>> reference = BoxSet(boxes=np.array([[0., 0, 10, 10]]), image_index=np.array([0]),
    ...                    classes=np.array(["car"]), images=("a",))
    >>> submission = BoxSet(boxes=np.array([[0., 0, 10, 10], [1., 0, 10, 10]]),
    ...                     image_index=np.array([0, 0]), classes=np.array(["car", "car"]),
    ...                     images=("a",), scores=np.array([0.9, 0.8]))
    >>> r = evaluate_voc(reference, submission)
    >>> r.classes["car"].tp, r.classes["car"].fp, r.map
    (1, 1, 1.0)
    """
    t = fraction("iou_threshold", iou_threshold, low_open=True)
    g_size = image_size if ref_image_size is None else ref_image_size
    d_size = image_size if sub_image_size is None else sub_image_size
    if ref_relative is None and sub_relative is None:
        g_rel, d_rel = g_size is not None, d_size is not None
    else:
        g_rel, d_rel = bool(ref_relative), bool(sub_relative)
    gt = reference
    if not isinstance(gt, BoxSet):
        gt = read_boxes(gt, fmt=ref_fmt, side="reference",
                        box_format=ref_box_format or box_format,
                        image_size=g_size, relative=g_rel, class_names=class_names)
    det = submission
    if not isinstance(det, BoxSet):
        det = read_boxes(det, fmt=sub_fmt, side="submission",
                         box_format=sub_box_format or box_format,
                         image_size=d_size, relative=d_rel, class_names=class_names, like=gt)
    if det.scores is None:
        raise InputError("the submission carries no confidence", det.path)
    gt, det = align_images(gt, det)
    result = _evaluate(gt, det, float(t), bool(plus_one))
    warnings = list(gt.warnings) + list(det.warnings)
    extra = sorted(set(det.classes.tolist()) - set(gt.classes.tolist()))
    if extra:
        n = int(np.isin(det.classes, extra).sum())
        shown = ", ".join(extra[:5]) + (", ..." if len(extra) > 5 else "")
        warnings.append(f"{det.path}: {n} detection(s) of {len(extra)} class(es) absent from "
                        f"the ground truth ({shown}): AP undefined, left out of mAP")
    return replace(result, warnings=tuple(warnings))


def _evaluate(gt: BoxSet, det: BoxSet, t: float, plus_one: bool) -> VocResult:
    names, codes = np.unique(np.concatenate([gt.classes, det.classes]).astype(str),
                             return_inverse=True)
    g_cls, d_cls = codes[: len(gt)], codes[len(gt):]
    n_img = max(len(gt.images), 1)
    scores = det.scores
    assert scores is not None
    # ranked order: by class, then decreasing confidence, ties in reading order
    order = np.lexsort((np.arange(len(det)), -scores, d_cls))
    # every ground truth of a detection's image and class is a candidate
    di, gi = group_pairs(d_cls * n_img + det.image_index, g_cls * n_img + gt.image_index)
    iou = box_iou_pairs(det.boxes, gt.boxes, di, gi, plus_one=plus_one)
    outcome, matched = assign(len(det), di, gi, iou, iou >= t, gt.difficult, order)

    n_gt = np.bincount(g_cls[~gt.difficult], minlength=names.size)
    n_det = np.bincount(d_cls, minlength=names.size)
    n_ign = np.bincount(d_cls[outcome == -1], minlength=names.size)
    classes: dict[str, VocClassResult] = {}
    for c, (name, is_tp) in enumerate(zip(names.tolist(), ranked_hits(outcome, order, d_cls,
                                                                       names.size),
                                          strict=True)):
        tp = int(is_tp.sum())
        fp = int(is_tp.size - tp)
        if n_gt[c] > 0:
            prec, rec = pr_curve(is_tp, int(n_gt[c]))
            ap, ap11 = ap_every_point(prec, rec), ap_eleven_point(prec, rec)
        else:
            prec, rec, ap, ap11 = np.zeros(0), np.zeros(0), None, None
        classes[name] = VocClassResult(name, ap, ap11, tp, fp, int(n_gt[c]), int(n_det[c]),
                                       int(n_ign[c]), prec, rec)
    aps = [v.ap for v in classes.values() if v.ap is not None]
    ap11s = [v.ap11 for v in classes.values() if v.ap11 is not None]
    return VocResult(
        classes=classes,
        map=float(np.mean(aps)) if aps else None,
        map11=float(np.mean(ap11s)) if ap11s else None,
        iou_threshold=t,
        plus_one=plus_one,
        outcome=outcome,
        matched=matched,
        reference=gt,
        submission=det,
    )


def assign(n_det: int, di: np.ndarray, gi: np.ndarray, iou: np.ndarray, hit: np.ndarray,
           difficult: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The VOC devkit's assignment of ranked detections to ground truth, vectorised.

    Parameters
    ----------
    n_det : int
        Number of detections.
    di, gi : numpy.ndarray
        Candidate pairs (detection, ground truth) of one image and class, sorted
        by detection, then ground truth in file order. A pair left out can
        never be a detection's best one above the threshold. IoUs are never NaN.
    iou : numpy.ndarray
        IoU of each pair.
    hit : numpy.ndarray
        The protocol's threshold decision on each pair (VOC ``IoU >= t``,
        DOTA ``IoU > t``).
    difficult : numpy.ndarray
        The ground truth's difficult flags.
    order : numpy.ndarray
        Detections ranked: each class's detections by decreasing confidence.

    Returns
    -------
    outcome : numpy.ndarray
        Per detection 1 (true positive), 0 (false positive), -1 (ignored: its
        best ground truth is difficult).
    matched : numpy.ndarray
        Per detection its best ground truth when that pair is a hit, else -1.

    Notes
    -----
    Each detection takes the ground truth of its image and class with the
    highest IoU (over all of them, taken or not; ties to the first in file
    order); a hit on a difficult one is ignored; a hit is a true positive when
    no higher-ranked detection claimed that ground truth first
    (``VOCevaldet.m``; Padilla et al., ``Evaluator.py``). A detection's choice
    does not depend on what is taken, so "first claim in ranked order" is one
    ``numpy.unique`` over the ranked hits.
    """
    best = _best_pairs(di, iou)
    is_hit = np.zeros(n_det, dtype=bool)
    jmax = np.full(n_det, -1, dtype=np.int64)
    is_hit[di[best]] = hit[best]
    jmax[di[best]] = gi[best]
    matched = np.where(is_hit, jmax, -1)
    # no ground truth at all: nothing is hit (and there is nothing to index)
    ignored = (is_hit & difficult[np.maximum(jmax, 0)] if difficult.size
               else np.zeros(n_det, dtype=bool))
    cand = is_hit & ~ignored
    # a candidate is a TP iff it is the first one, in ranked order, to claim its ground truth
    ranked_cand = order[cand[order]]
    _, first_claim = np.unique(jmax[ranked_cand], return_index=True)
    outcome = np.zeros(n_det, dtype=np.int8)
    outcome[ranked_cand[first_claim]] = 1
    outcome[ignored] = -1
    return outcome, matched


def _best_pairs(di: np.ndarray, iou: np.ndarray) -> np.ndarray:
    """Per detection with pairs, its pair of highest IoU, ties to the first in pair order
    (pairs sorted by detection, then ground truth in file order): one pass over the
    pairs, no sort."""
    if di.size == 0:
        return np.zeros(0, dtype=np.int64)
    if np.any(di[1:] < di[:-1]):
        raise ValueError("pairs must be sorted by detection")
    starts = np.flatnonzero(np.r_[True, di[1:] != di[:-1]])
    segment = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, di.size]))
    at_max = np.flatnonzero(iou == np.maximum.reduceat(iou, starts)[segment])
    return at_max[np.r_[True, segment[at_max][1:] != segment[at_max][:-1]]]


def ranked_hits(outcome: np.ndarray, order: np.ndarray, d_cls: np.ndarray,
                n_classes: int) -> list[np.ndarray]:
    """Per class ``0..n_classes-1``, whether each counted detection is a true positive,
    in ranked order (ignored ones left out): the input of :func:`~geoeval.challenges._pr.pr_curve`.

    ``order`` must rank the classes in increasing code ``d_cls``.
    """
    counted = order[outcome[order] >= 0]
    bounds = np.searchsorted(d_cls[counted], np.arange(n_classes + 1))
    return [outcome[counted[bounds[c]:bounds[c + 1]]] == 1 for c in range(n_classes)]

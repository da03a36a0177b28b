"""Panoptic Quality (Kirillov, He, Girshick, Rother and Dollár 2019, "Panoptic
Segmentation", CVPR, §4.1, eq. 1).

Objects match when their IoU is strictly above one half. When no two objects of
one side overlap each other that matching is unique (the paper's Theorem 1):
each object then has at most one partner with IoU > 0.5. When a side overlaps
itself an object can have several such partners; the matching then keeps the
most pairs and, among those, the largest total IoU (as geoeval's ``iou``
matcher does).

    SQ = Σ_TP IoU / |TP|,  RQ = |TP| / (|TP| + ½|FP| + ½|FN|),  PQ = SQ × RQ

Everything is read from the sparse overlap; no loop per object or pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.arrays import has_duplicates
from geoeval.encoding import number
from geoeval.matching.assignment import max_weight_matching
from geoeval.overlap import Overlap

#: IoU a matched pair must exceed (strictly; Kirillov et al. 2019, §4.1)
PQ_THRESHOLD = 0.5


@dataclass(frozen=True, eq=False)
class PanopticQuality:
    """PQ, SQ and RQ of one scene and the matched pairs (indices, IoU).

    ``sq`` is NaN without a true positive; all three are NaN when neither side
    has an object. ``pq`` is ``Σ IoU / (TP + ½FP + ½FN)``, so 0 when nothing
    matches but something exists.
    """

    tp: int
    fp: int
    fn: int
    pq: float
    sq: float
    rq: float
    reference: np.ndarray  # indices of the matched reference objects
    submission: np.ndarray  # their submitted partners
    iou: np.ndarray  # their IoU

    def to_dict(self) -> dict[str, Any]:
        return {"pq": number(self.pq), "sq": number(self.sq), "rq": number(self.rq),
                "tp": self.tp, "fp": self.fp, "fn": self.fn,
                "iou_threshold": PQ_THRESHOLD, "threshold_rule": "IoU > 0.5 (strict)"}


def panoptic_quality(overlap: Overlap) -> PanopticQuality:
    """Panoptic Quality of a scene (Kirillov et al. 2019, eq. 1).

    Parameters
    ----------
    overlap : Overlap
        The sparse overlap of the reference (ground truth) and the submission.

    Returns
    -------
    PanopticQuality
    """
    iou = overlap.iou
    # IoU > ½ on integer pixel counts for label rasters (2·|A∩B| > |A∪B|), so the
    # matching never depends on the pixel size (geoeval.thresholds)
    cand = np.flatnonzero(overlap.iou_above(PQ_THRESHOLD))
    rows, cols = overlap.rows[cand], overlap.cols[cand]
    # a side overlaps itself: several candidates for one object
    if has_duplicates(rows) or has_duplicates(cols):
        keep = max_weight_matching(rows, cols, iou[cand], overlap.n_reference,
                                   overlap.n_submission, cardinality_first=True)
        cand = cand[keep]
    ref, sub, values = overlap.rows[cand], overlap.cols[cand], iou[cand]
    tp = int(cand.size)
    fn, fp = overlap.n_reference - tp, overlap.n_submission - tp
    denom = tp + 0.5 * fp + 0.5 * fn
    total = float(values.sum())
    sq = total / tp if tp else float("nan")
    rq = tp / denom if denom else float("nan")
    pq = total / denom if denom else float("nan")
    return PanopticQuality(tp, fp, fn, pq, sq, rq, ref.astype(np.int64),
                           sub.astype(np.int64), values)


def pq_measure(overlap: Overlap, pairs: Any = None, **_: Any) -> PanopticQuality:
    """The registry's entry point (:mod:`geoeval.measures.geometry`): the scene's PQ."""
    return panoptic_quality(overlap)


def table_rows(entry: dict[str, Any]) -> list[tuple[str, str, Any, Any, Any]]:
    """The terminal table's rows of the report's ``pq`` entry: PQ, SQ, RQ."""
    tp = f"{entry['tp']} TP"
    return [("PQ", "IoU>0.5", entry["pq"], None, tp), ("SQ", "IoU>0.5", entry["sq"], None, tp),
            ("RQ", "IoU>0.5", entry["rq"], None, tp)]

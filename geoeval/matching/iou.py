"""IoU-thresholded one-to-one matching (SpaceNet buildings, DARPA Neovision2).

Among pairs with ``IoU ≥ t`` take the one-to-one matching with
the most pairs and, among those, the largest total IoU.
"""

from __future__ import annotations

import numpy as np

from geoeval import validate
from geoeval.matching.assignment import max_weight_matching
from geoeval.matching.build import from_edges
from geoeval.matching.result import Matching
from geoeval.overlap import Overlap


def match_iou(overlap: Overlap, *, threshold: float = 0.5) -> Matching:
    """One-to-one matching among pairs with IoU at least ``threshold``.

    Parameters
    ----------
    overlap : Overlap
    threshold : float
        ``0 < t ≤ 1``; 0.5 for SpaceNet, 0.2 for Neovision2.

    Returns
    -------
    Matching
        One-to-one instances whose ``score`` is the pair's IoU.

    Notes
    -----
    ``IoU_ij = C_ij / (|R_i| + |O_j| − C_ij)``. Maximum cardinality first, then
    maximum total IoU (Hungarian on weights ``K + IoU``, see
    :func:`~geoeval.matching.assignment.max_weight_matching`). For ``t > 0.5``
    every object has at most one candidate and no solver runs. "IoU at least
    ``t``" is decided by :func:`geoeval.thresholds.at_least`: on integer pixel
    counts for two label rasters on one grid, with a relative slack of 1e-12 on
    polygon areas.
    """
    validate.IOU.check("threshold", threshold)  # (0, 1]: one rule for every IoU threshold
    iou = overlap.iou
    cand = np.flatnonzero(overlap.iou_at_least(threshold))
    chosen = max_weight_matching(
        overlap.rows[cand], overlap.cols[cand], iou[cand],
        overlap.n_reference, overlap.n_submission, cardinality_first=True,
    )
    return from_edges(overlap, cand[chosen], "iou", edge_scores=iou,
                      params={"threshold": threshold})

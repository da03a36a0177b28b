"""Over- and under-segmentation of Clinton, Holt, Scanlon, Huang and Gong (2010),
"Accuracy assessment measures for object-based image segmentation goodness",
Photogrammetric Engineering & Remote Sensing 76(3), 289–299.

For a reference object ``x_i`` and a segment ``y_j`` associated with it:

    OverSegmentation_ij  = 1 − |x_i ∩ y_j| / |x_i|
    UnderSegmentation_ij = 1 − |x_i ∩ y_j| / |y_j|
    D_ij = sqrt((OverSegmentation_ij² + UnderSegmentation_ij²) / 2)

Clinton et al. associate segments with ``x_i`` by four rules and their union:
(a) the centroid of ``x_i`` lies in ``y_j``, (b) the centroid of ``y_j`` lies in
``x_i``, (c) ``|x_i ∩ y_j| / |y_j| > 0.5``, (d) ``|x_i ∩ y_j| / |x_i| > 0.5``.
``rule="overlap"`` (the default) is (c) ∪ (d), read straight from the sparse
overlap matrix; ``"centroid"`` is (a) ∪ (b) (two point-in-polygon STRtree
queries); ``"all"`` is the union of the four. Each measure is averaged over all
associated pairs; the per-reference means (over ``Y_i``) are averaged too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.arrays import unique
from geoeval.errors import InputError
from geoeval.overlap import Overlap

RULES = ("overlap", "centroid", "all")
RULE_TEXT = {
    "overlap": "|x∩y|/|y| > 0.5 or |x∩y|/|x| > 0.5 (Clinton et al. 2010, Y_c ∪ Y_d)",
    "centroid": "centroid of x in y or centroid of y in x (Clinton et al. 2010, Y_a ∪ Y_b)",
    "all": "any of the four rules (Clinton et al. 2010, Y_a ∪ Y_b ∪ Y_c ∪ Y_d)",
}


@dataclass(frozen=True, eq=False)
class ClintonSegmentation:
    """Per pair (reference index, segment index) OS, US and D, and their means.

    Means are NaN when no pair is associated.
    """

    rule: str
    reference: np.ndarray
    submission: np.ndarray
    over: np.ndarray
    under: np.ndarray
    d: np.ndarray
    n_reference: int

    @property
    def per_reference_d(self) -> np.ndarray:
        """Mean ``D`` over ``Y_i`` of each reference object (NaN where ``Y_i`` is empty)."""
        n = np.bincount(self.reference, minlength=self.n_reference)
        s = np.bincount(self.reference, weights=self.d, minlength=self.n_reference)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, s / np.maximum(n, 1), np.nan)

    def to_dict(self) -> dict[str, Any]:
        per_ref = self.per_reference_d
        has = ~np.isnan(per_ref)
        return {
            "rule": self.rule, "rule_text": RULE_TEXT[self.rule],
            "pairs": int(self.d.size),
            "over_segmentation": _mean(self.over),
            "under_segmentation": _mean(self.under),
            "d": _mean(self.d),
            "d_per_reference_mean": _mean(per_ref[has]),
            "references_with_segments": int(has.sum()),
            "references_without_segments": int((~has).sum()),
        }


def clinton_segmentation(overlap: Overlap, *, rule: str = "overlap") -> ClintonSegmentation:
    """Clinton et al. (2010) over-/under-segmentation and ``D`` of a scene.

    Parameters
    ----------
    overlap : Overlap
    rule : {'overlap', 'centroid', 'all'}
        How segments are associated with a reference object (module docstring).

    Returns
    -------
    ClintonSegmentation
    """
    if rule not in RULES:
        raise InputError(f"Clinton association rule must be one of {', '.join(RULES)}, "
                         f"got {rule!r}")
    ns = overlap.n_submission
    rows, cols, values = overlap.rows, overlap.cols, overlap.values
    ra, sa = overlap.ref_area, overlap.sub_area
    keys = np.zeros(0, np.int64)
    if rule in ("overlap", "all"):
        big = (values > 0.5 * sa[cols]) | (values > 0.5 * ra[rows])
        keys = rows[big].astype(np.int64) * ns + cols[big]
    if rule in ("centroid", "all"):
        keys = np.concatenate([keys, _centroid_keys(overlap)])
    keys = unique(keys)
    ref, sub = keys // max(ns, 1), keys % max(ns, 1)
    inter = _lookup(overlap, keys)
    with np.errstate(invalid="ignore", divide="ignore"):
        over = 1.0 - inter / ra[ref]
        under = 1.0 - inter / sa[sub]
    d = np.sqrt((over ** 2 + under ** 2) / 2)
    return ClintonSegmentation(rule, ref, sub, over, under, d, overlap.n_reference)


def _centroid_keys(overlap: Overlap) -> np.ndarray:
    """``i * ns + j`` of the pairs where one object's centroid lies in the other."""
    import shapely

    ref, sub = overlap.reference.polygons, overlap.submission.polygons
    ns = overlap.n_submission
    if len(ref) == 0 or len(sub) == 0:
        return np.zeros(0, np.int64)
    # (a): centroid of x_i within y_j; (b): centroid of y_j within x_i
    i_a, j_a = shapely.STRtree(sub).query(shapely.centroid(ref), predicate="within")
    j_b, i_b = shapely.STRtree(ref).query(shapely.centroid(sub), predicate="within")
    return np.concatenate([i_a.astype(np.int64) * ns + j_a, i_b.astype(np.int64) * ns + j_b])


def _lookup(overlap: Overlap, keys: np.ndarray) -> np.ndarray:
    """``C_ij`` of each pair key (0 where the pair does not overlap)."""
    have = overlap.rows.astype(np.int64) * overlap.n_submission + overlap.cols
    pos = np.searchsorted(have, keys)
    pos_c = np.minimum(pos, max(have.size - 1, 0))
    found = (pos < have.size) & (have[pos_c] == keys) if have.size else np.zeros(keys.size, bool)
    return np.where(found, overlap.values[pos_c] if have.size else 0.0, 0.0)


def _mean(x: np.ndarray) -> float | None:
    return float(np.mean(x)) if x.size else None

"""Over- and under-segmentation of Clinton, Holt, Scarborough, Yan and Gong (2010),
"Accuracy assessment measures for object-based image segmentation goodness",
Photogrammetric Engineering & Remote Sensing 76(3), 289–299.

For a reference object ``x_i`` and a segment ``y_j`` associated with it:

    OverSegmentation_ij  = 1 − |x_i ∩ y_j| / |x_i|
    UnderSegmentation_ij = 1 − |x_i ∩ y_j| / |y_j|
    D_ij = sqrt((OverSegmentation_ij² + UnderSegmentation_ij²) / 2)

Clinton et al. first take the segments that share area with ``x_i``,
``Ỹ_i = {y_j : area(x_i ∩ y_j) ≠ 0}``, and then four subsets of ``Ỹ_i`` and their
union (§ "Methods", the subsets ``Ya_i`` … ``Yd_i`` and ``Y*_i``):
(a) the centroid of ``x_i`` is in ``y_j``, (b) the centroid of ``y_j`` is in
``x_i``, (c) ``|x_i ∩ y_j| / |y_j| > 0.5``, (d) ``|x_i ∩ y_j| / |x_i| > 0.5``.
Every subset lies inside ``Ỹ_i``: a segment that shares no area with ``x_i`` is
never associated with it, wherever its centroid lies (a segment inside a
building's courtyard holds the building's centroid but is not one of its
segments). A centroid exactly on the other object's outline counts as in it
(a point on the boundary of a polygon is covered by it), as the R package
segmetric does. ``rule="overlap"`` (the default) is (c) ∪ (d), read straight
from the sparse overlap matrix (the ``> 0.5`` decisions by
:func:`geoeval.thresholds.above`: on integer pixel counts for label rasters);
``"centroid"`` is (a) ∪ (b) (two point-in-polygon STRtree queries, kept only
for overlapping pairs); ``"all"`` is the union of the four. Each measure is
averaged over all associated pairs; the per-reference means (over ``Y_i``) are
averaged too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.arrays import unique
from geoeval.errors import InputError
from geoeval.overlap import Overlap
from geoeval.thresholds import above

RULES = ("overlap", "centroid", "all")
RULE_TEXT = {
    "overlap": "|x∩y|/|y| > 0.5 or |x∩y|/|x| > 0.5 (Clinton et al. 2010, Y_c ∪ Y_d)",
    "centroid": "y shares area with x, and the centroid of x is in y or the centroid of y "
                "is in x (Clinton et al. 2010, Y_a ∪ Y_b)",
    "all": "y shares area with x and meets any of the four rules "
           "(Clinton et al. 2010, Y_a ∪ Y_b ∪ Y_c ∪ Y_d)",
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
        unit = overlap.pixel_area
        big = above(values, sa[cols], 0.5, unit=unit) | above(values, ra[rows], 0.5, unit=unit)
        keys = rows[big].astype(np.int64) * ns + cols[big]
    if rule in ("centroid", "all"):
        keys = np.concatenate([keys, _centroid_keys(overlap)])
    keys = unique(keys)
    inter = _lookup(overlap, keys)
    if rule != "overlap":  # Ya, Yb ⊂ Ỹ_i: only segments that share area with x_i
        keys, inter = keys[inter > 0], inter[inter > 0]
    ref, sub = keys // max(ns, 1), keys % max(ns, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        over = 1.0 - inter / ra[ref]
        under = 1.0 - inter / sa[sub]
    d = np.sqrt((over ** 2 + under ** 2) / 2)
    return ClintonSegmentation(rule, ref, sub, over, under, d, overlap.n_reference)


def _centroid_keys(overlap: Overlap) -> np.ndarray:
    """``i * ns + j`` of the pairs where one object's centroid lies in the other
    (inside or on its outline); pairs that share no area are dropped by the caller.

    Two label rasters on one grid are compared in pixel coordinates, where every
    outline runs along whole pixel edges and every centroid is computed exactly
    (:func:`_exact_centroids`): whether a centroid lies on an outline then never
    depends on the pixel size or the grid's origin.
    """
    import shapely

    ref, sub = overlap.reference, overlap.submission
    ns = overlap.n_submission
    if len(ref) == 0 or len(sub) == 0:
        return np.zeros(0, np.int64)
    rg, sg = ref.grid, sub.grid
    if rg is not None and sg is not None and rg.same_grid(sg):
        inv = ~rg.transform
        ref_g, sub_g = _to_pixels(ref.polygons, inv), _to_pixels(sub.polygons, inv)
        ref_c, sub_c = _exact_centroids(ref_g), _exact_centroids(sub_g)
    else:
        ref_g, sub_g = ref.polygons, sub.polygons
        ref_c, sub_c = shapely.centroid(ref_g), shapely.centroid(sub_g)
    # (a): centroid of x_i in y_j; (b): centroid of y_j in x_i (on the outline counts)
    i_a, j_a = shapely.STRtree(sub_g).query(ref_c, predicate="covered_by")
    j_b, i_b = shapely.STRtree(ref_g).query(sub_c, predicate="covered_by")
    return np.concatenate([i_a.astype(np.int64) * ns + j_a, i_b.astype(np.int64) * ns + j_b])


def _to_pixels(geoms: np.ndarray, inverse: Any) -> np.ndarray:
    """Polygons traced along pixel edges, in pixel coordinates (whole numbers)."""
    import shapely

    a, b, c, d, e, f = inverse.a, inverse.b, inverse.c, inverse.d, inverse.e, inverse.f

    def to_cells(xy: np.ndarray) -> np.ndarray:
        x, y = xy[:, 0], xy[:, 1]
        return np.rint(np.column_stack([a * x + b * y + c, d * x + e * y + f]))

    return shapely.transform(geoms, to_cells)


def _exact_centroids(geoms: np.ndarray) -> np.ndarray:
    """Centroids of polygons whose vertices are whole numbers, exactly.

    ``C = Σ (p_k + p_{k+1}) (x_k y_{k+1} − x_{k+1} y_k) / (3 Σ (x_k y_{k+1} − x_{k+1} y_k))``
    over every ring (exteriors counted positively, holes negatively), in integers
    relative to each polygon's lowest vertex; the one rounding is the final
    division, so a centroid that lies on a pixel edge is exactly on it.
    """
    import shapely

    n = geoms.size
    parts, part_of = shapely.get_parts(geoms, return_index=True)
    rings, ring_part = shapely.get_rings(parts, return_index=True)
    exterior = np.r_[True, ring_part[1:] != ring_part[:-1]]  # first ring of each part
    xy, ring_of = shapely.get_coordinates(rings, return_index=True)
    owner = part_of[ring_part[ring_of]]
    xy = np.rint(xy).astype(np.int64)
    origin = np.full((n, 2), np.iinfo(np.int64).max)
    np.minimum.at(origin, owner, xy)
    xy -= origin[owner]
    same = ring_of[:-1] == ring_of[1:]  # consecutive vertices of one ring
    x0, y0, x1, y1 = xy[:-1, 0][same], xy[:-1, 1][same], xy[1:, 0][same], xy[1:, 1][same]
    k = ring_of[:-1][same]
    cross = x0 * y1 - x1 * y0
    n_rings = rings.size
    a2 = np.zeros(n_rings, np.int64)
    np.add.at(a2, k, cross)
    sx = np.zeros(n_rings, np.int64)
    sy = np.zeros(n_rings, np.int64)
    np.add.at(sx, k, (x0 + x1) * cross)
    np.add.at(sy, k, (y0 + y1) * cross)
    sign = np.sign(a2) * np.where(exterior, 1, -1)
    geom_of_ring = part_of[ring_part]
    tot_a, tot_x, tot_y = (np.zeros(n, np.int64) for _ in range(3))
    np.add.at(tot_a, geom_of_ring, sign * a2)
    np.add.at(tot_x, geom_of_ring, sign * sx)
    np.add.at(tot_y, geom_of_ring, sign * sy)
    den = np.where(tot_a > 0, 3 * tot_a, 1)  # an empty geometry: no centroid (NaN)
    qx, rx = np.divmod(tot_x, den)
    qy, ry = np.divmod(tot_y, den)
    cx = origin[:, 0] + qx + rx / den
    cy = origin[:, 1] + qy + ry / den
    empty = tot_a <= 0
    cx[empty] = cy[empty] = np.nan
    return shapely.points(cx, cy)


def _lookup(overlap: Overlap, keys: np.ndarray) -> np.ndarray:
    """``C_ij`` of each pair key (0 where the pair does not overlap)."""
    have = overlap.rows.astype(np.int64) * overlap.n_submission + overlap.cols
    pos = np.searchsorted(have, keys)
    pos_c = np.minimum(pos, max(have.size - 1, 0))
    found = (pos < have.size) & (have[pos_c] == keys) if have.size else np.zeros(keys.size, bool)
    return np.where(found, overlap.values[pos_c] if have.size else 0.0, 0.0)


def _mean(x: np.ndarray) -> float | None:
    return float(np.mean(x)) if x.size else None


def clinton_measure(overlap: Overlap, pairs: Any = None, **_: Any) -> ClintonSegmentation:
    """The registry's entry point (:mod:`geoeval.measures.geometry`)."""
    return clinton_segmentation(overlap)


def table_rows(c: dict[str, Any]) -> list[tuple[str, str, Any, Any, Any]]:
    """The terminal table's rows of the report's ``clinton`` entry."""
    return [(f"Clinton {label}", c["rule"], c[key], None, c["pairs"])
            for key, label in (("over_segmentation", "over-segm."),
                               ("under_segmentation", "under-segm."), ("d", "D"))]

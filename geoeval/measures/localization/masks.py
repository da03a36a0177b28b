"""Mask (region) metrics of Hemery et al. (2010), Table 2.

Notation: ``G`` the reference mask, ``L`` the result mask, ``card(I)`` the
pixels of the common support; per image the four counts ``a = |G ∩ L|``,
``b = |G \\ L|``, ``c = |L \\ G|``, ``d = card(I) − |G ∪ L|``. The segmentation
measures (Yasnoff, Martin, Hamming, Hafiane, Vinet) see each image as a
partition into two regions, the object and the background
(``docs/localization.md``). Dissimilarities unless labelled **similarity**.
"""

from __future__ import annotations

import numpy as np

from geoeval.errors import InputError
from geoeval.measures.localization._wrap import pair_metric, safe_div
from geoeval.measures.localization.pairs import MaskPair
from geoeval.overlap import iou_values


def _abcd(p: MaskPair) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return p.n_both, p.n_ref_only, p.n_res_only, p.n_neither


@pair_metric("mask", "Similarity in ``[0, 1]``; NaN when both masks are empty.")
def pascal_overlap(pair: MaskPair) -> np.ndarray:
    """PAS: intersection over union (a **similarity**, 1 = identical).

    Notes
    -----
    Hemery et al. (2010), eq. 7: ``PAS = card(I_gt^r ∩ I_l^r) / card(I_gt^r ∪ I_l^r)``.

    References
    ----------
    Everingham et al., The 2005 PASCAL VOC challenge; Hemery et al. (2010), eq. 7.

    Examples
    --------
    >>> g = np.zeros((4, 4), bool); g[:2] = True
    >>> l = np.zeros((4, 4), bool); l[1:3] = True
    >>> round(pascal_overlap(g, l), 4)
    0.3333
    """
    return iou_values(pair.n_both, pair.n_ref, pair.n_res, empty=np.nan)


@pair_metric("mask", "Dissimilarity ``≥ 0``; NaN for an empty reference.")
def henricsson_size_error(pair: MaskPair) -> np.ndarray:
    """HEN1: relative difference of the two areas.

    Notes
    -----
    Hemery et al. (2010), Table 2 (misprinted there as ``|card(I_gt^r) − card(I_gt^r)|``):
    ``HEN1 = |card(I_l^r) − card(I_gt^r)| / card(I_gt^r)``.

    References
    ----------
    Henricsson & Baltsavias, "3-D building reconstruction with ARUBA" (1997).
    """
    return safe_div(np.abs(pair.n_res - pair.n_ref), pair.n_ref)


@pair_metric("mask", "Dissimilarity ``≥ 0``; NaN for an empty reference.")
def henricsson_mismatch_error(pair: MaskPair) -> np.ndarray:
    """HEN2: false positive plus false negative area, relative to the reference area.

    Notes
    -----
    Hemery et al. (2010), Table 2 (a mask metric, so its ``c`` superscripts are read as regions):
    ``HEN2 = (card(I_{l\\gt}^r) + card(I_{gt\\l}^r)) / card(I_gt^r)``.

    References
    ----------
    Henricsson & Baltsavias (1997).
    """
    _, b, c, _ = _abcd(pair)
    return safe_div(b + c, pair.n_ref)


@pair_metric("mask", "Dissimilarity in ``[0, 100]``; NaN for an empty result.")
def yasnoff_over_detection(pair: MaskPair) -> np.ndarray:
    """YAS1: percentage of the result's object pixels that are not reference pixels.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``YAS1 = 100 (card(I_l^r) − card(I_{gt∩l}^r)) / card(I_l^r)``.

    References
    ----------
    Yasnoff, Mui & Bacus, Pattern Recogn. 9 (1977).
    """
    return safe_div(100 * pair.n_res_only, pair.n_res)


@pair_metric("mask", "Dissimilarity ``≥ 0``.")
def yasnoff_under_detection(pair: MaskPair) -> np.ndarray:
    """YAS2: reference pixels missed, as a percentage of the result's background.

    Notes
    -----
    Hemery et al. (2010), Table 2, as printed: ``YAS2 = 100 (card(I_gt^r) − card(I_{gt∩l}^r)) /
    (card(I) − card(I_l^r))``.

    References
    ----------
    Yasnoff et al. (1977).
    """
    return safe_div(100 * pair.n_ref_only, pair.n_pixels - pair.n_res)


@pair_metric("mask", "Dissimilarity ``≥ 0``.")
def yasnoff_distance_error(pair: MaskPair) -> np.ndarray:
    """YAS3: distances of wrongly included pixels to the reference object.

    Notes
    -----
    Hemery et al. (2010), Table 2: ``YAS3 = 100/card(I) [Σ_{a ∈ I_{l\\gt}^r} d(a, I_gt^r)²]^{1/2}``.
    The distance from a pixel outside ``G`` to ``G`` is its distance to ``G``'s
    inner contour, read from the contour distance map.

    References
    ----------
    Yasnoff et al. (1977).
    """
    dist = pair.contours.dist_ref
    wrong = pair.result & ~pair.reference
    s = (wrong * np.where(np.isfinite(dist), dist, 0.0) ** 2).sum(axis=(1, 2))
    return 100 / pair.n_pixels * np.sqrt(np.broadcast_to(s, (pair.size,)))


def _e_sums(p: MaskPair) -> tuple[np.ndarray, ...]:
    """Local refinement errors (Hemery et al. 2010, eq. 8) per pixel class (object/background).

    Returns ``(E(G,L), E(L,G))`` for the classes ``G∩L``, ``G\\L``, ``L\\G``, neither,
    and the class sizes.
    """
    a, b, c, d = _abcd(p)
    e_gl = (safe_div(b, a + b, 0.0), safe_div(a, a + b, 0.0), safe_div(d, c + d, 0.0),
            safe_div(c, c + d, 0.0))
    e_lg = (safe_div(c, a + c, 0.0), safe_div(d, b + d, 0.0), safe_div(a, a + c, 0.0),
            safe_div(b, b + d, 0.0))
    return e_gl, e_lg, (a, b, c, d)


@pair_metric("mask", "Dissimilarity in ``[0, 1]``.")
def global_consistency_error(pair: MaskPair) -> np.ndarray:
    """MAR_gce: Martin's global consistency error.

    Notes
    -----
    Hemery et al. (2010), eq. 8–9:
    ``E(I_1, I_2, k) = card(I_1^{r(k)} \\ I_2^{r(k)}) / card(I_1^{r(k)})``,
    ``MAR_gce = 1/card(I) min(Σ_k E(I_gt, I_l, k), Σ_k E(I_l, I_gt, k))``.

    References
    ----------
    Martin, Fowlkes, Tal & Malik, ICCV 2001.
    """
    e_gl, e_lg, n = _e_sums(pair)
    s1 = sum(k * e for k, e in zip(n, e_gl, strict=True))
    s2 = sum(k * e for k, e in zip(n, e_lg, strict=True))
    return np.minimum(s1, s2) / pair.n_pixels


@pair_metric("mask", "Dissimilarity in ``[0, 1]``.")
def local_consistency_error(pair: MaskPair) -> np.ndarray:
    """MAR_lce: Martin's local consistency error.

    Notes
    -----
    Hemery et al. (2010), eq. 10: ``MAR_lce = 1/card(I) Σ_k min(E(I_gt, I_l, k), E(I_l, I_gt, k))``.

    References
    ----------
    Martin et al. (2001).
    """
    e_gl, e_lg, n = _e_sums(pair)
    terms = zip(n, e_gl, e_lg, strict=True)
    return sum(k * np.minimum(x, y) for k, x, y in terms) / pair.n_pixels


@pair_metric("mask", "Similarity in ``[0.5, 1]`` for two-region images.")
def hamming_similarity(pair: MaskPair) -> np.ndarray:
    """HAM: Huang & Dom's normalised Hamming measure (a **similarity**, 1 = identical).

    Notes
    -----
    Hemery et al. (2010), Table 2:
    ``HAM = 1 − (D_H(I_gt, I_l) + D_H(I_l, I_gt)) / (2 card(I))`` with
    ``D_H(S_1, S_2) = Σ_{R ∈ S_2} (|R| − max_{R' ∈ S_1} |R ∩ R'|)``; with object and
    background regions, ``D_H(G, L) + D_H(L, G) = min(a, c) + min(b, d) + min(a, b)
    + min(c, d)``.

    References
    ----------
    Huang & Dom, ICIP 1995.
    """
    a, b, c, d = _abcd(pair)
    dh = np.minimum(a, c) + np.minimum(b, d) + np.minimum(a, b) + np.minimum(c, d)
    return 1 - dh / (2 * pair.n_pixels)


def _straight(p: MaskPair) -> np.ndarray:
    """Whether the greedy pairing by decreasing overlap pairs object with object and
    background with background (largest overlap ``a`` or ``d``; ties: same type)."""
    a, b, c, d = _abcd(p)
    return np.maximum(a, d) >= np.maximum(b, c)


def _region_ious(p: MaskPair) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """IoU of each (reference region, result region) pair, regions (object, background).

    ``ious[i][j]`` is the IoU of reference region ``i`` and result region ``j``
    (0 = object, 1 = background), by geoeval's one IoU formula
    (:func:`geoeval.overlap.iou_values`, 0 for an empty union).
    """
    a, b, c, d = _abcd(p)
    ref_sizes, res_sizes = (a + b, c + d), (a + c, b + d)
    inter = ((a, b), (c, d))
    return tuple(
        tuple(iou_values(inter[i][j], ref_sizes[i], res_sizes[j]) for j in (0, 1)) for i in (0, 1)
    )


def _best_matches(p: MaskPair) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """For each reference region (object, background): (IoU, size) of its best result region.

    The best region maximises the overlap (ties go to the region of the same type).
    """
    a, b, c, d = _abcd(p)
    (oo, ob), (bo, bb) = _region_ious(p)
    obj = a >= b
    iou_obj = np.where(obj, oo, ob)
    size_obj = np.where(obj, p.n_res, p.n_pixels - p.n_res)
    bg = d >= c
    iou_bg = np.where(bg, bb, bo)
    size_bg = np.where(bg, p.n_pixels - p.n_res, p.n_res)
    return (iou_obj, size_obj), (iou_bg, size_bg)


@pair_metric("mask", "Similarity in ``[0, 1]``.")
def hafiane_matching(pair: MaskPair, matching: str = "reference") -> np.ndarray:
    """HAF1: Hafiane's best-match overlap criterion (a **similarity**, 1 = identical).

    Parameters
    ----------
    matching : {"reference", "greedy"}
        How regions are paired: each reference region with the result region
        it overlaps most (``"reference"``, as printed, not symmetric), or
        region pairs taken by decreasing overlap, each region once
        (``"greedy"``, Vinet's pairing: symmetric).

    Notes
    -----
    Hemery et al. (2010), Table 2:
    ``HAF1 = η Σ_i card(I_gt^{r(i)} ∩ I_l^{r(j*)}) / card(I_gt^{r(i)} ∪
    I_l^{r(j*)})`` with ``j* = argmax_j card(I_gt^{r(i)} ∩ I_l^{r(j)})``. Both
    images have ``N = 2`` regions (object, background), so ``η = 1``; geoeval
    divides the sum by ``N(I_gt)`` so that identical images score 1
    (``docs/localization.md``). The switch of ``j*`` makes it jump.

    References
    ----------
    Hafiane, PhD thesis, Univ. Paris-Sud XI (2005).
    """
    if matching == "reference":
        (i1, _), (i2, _) = _best_matches(pair)
        return (i1 + i2) / 2
    if matching != "greedy":
        raise InputError(f"matching must be 'reference' or 'greedy', got {matching!r}")
    (oo, ob), (bo, bb) = _region_ious(pair)
    return np.where(_straight(pair), (oo + bb) / 2, (ob + bo) / 2)


@pair_metric("mask", "Similarity in ``[m/(1+m), 1]``.")
def hafiane_weighted(pair: MaskPair, m: float = 0.2) -> np.ndarray:
    """HAF2: Hafiane et al.'s weighted criterion (a **similarity**, 1 = identical).

    Parameters
    ----------
    m : float
        Weight of the region-count term (Hemery et al. 2010: 0.2).

    Notes
    -----
    Hemery et al. (2010), Table 2: ``HAF2 = (M + m η)/(1 + m)``,
    ``M = Σ_i ρ_{j*} card(I_gt^{r(i)} ∩ I_l^{r(j*)}) / card(I_gt^{r(i)} ∪ I_l^{r(j*)})``,
    ``ρ_j = card(I_l^{r(j)}) / card(I)``; ``η = 1`` with two regions on each side.

    References
    ----------
    Hafiane, Chabrier, Rosenberger & Laurent, ACIVS 2007, LNCS 4678.
    """
    (i1, s1), (i2, s2) = _best_matches(pair)
    big_m = (s1 * i1 + s2 * i2) / pair.n_pixels
    return (big_m + m) / (1 + m)


@pair_metric("mask", "Dissimilarity in pixels, ``[0, card(I)]``.")
def vinet_distance(pair: MaskPair) -> np.ndarray:
    """VIN: Vinet's measure, pixels outside the greedily matched region pairs.

    Notes
    -----
    Hemery et al. (2010), Table 2:
    ``VIN = card(I) − Σ_{C'} card(I_l^{r(i)} ∩ I_gt^{r(j)})``, ``C'`` the
    region pairs chosen greedily by decreasing overlap, each region used once.
    With object/background partitions the pairs are (object, object) and
    (background, background) when the largest overlap is ``a`` or ``d``, the
    crossed pairs otherwise (ties: pairs of the same type).

    References
    ----------
    Vinet, PhD thesis, Univ. Paris IX Dauphine (1991); Cocquerez & Philipp (1995).
    """
    a, b, c, d = _abcd(pair)
    return pair.n_pixels - np.where(_straight(pair), a + d, b + c)


@pair_metric("mask", "Similarity in ``[0, 1]``; NaN for an empty result.")
def pixel_precision(pair: MaskPair) -> np.ndarray:
    """P_px: share of the result's pixels inside the reference (a **similarity**).

    Notes
    -----
    Hemery et al. (2010), Table 2: ``P_px = card(I_gt^r ∩ I_l^r) / card(I_l^r)``.

    References
    ----------
    Wolf & Jolion, IJDAR 8(4) 2006.
    """
    return safe_div(pair.n_both, pair.n_res)


@pair_metric("mask", "Similarity in ``[0, 1]``; NaN for an empty reference.")
def pixel_recall(pair: MaskPair) -> np.ndarray:
    """R_px: share of the reference's pixels found (a **similarity**).

    Notes
    -----
    Hemery et al. (2010), Table 2: ``R_px = card(I_gt^r ∩ I_l^r) / card(I_gt^r)``,
    that is :func:`pixel_precision` with the two masks exchanged.

    References
    ----------
    Wolf & Jolion (2006).
    """
    return pixel_precision.core(pair.swapped())

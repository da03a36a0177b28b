"""Counts and the matchers' own scores: precision, recall, F1, BGM, Hoover, mean IoU.

Özdemir et al. (2010): precision ``= (No − FA)/No`` (eq. 14), recall
``= (Nr − MD)/Nr`` (eq. 15), BGM score eq. 1, Hoover score eq. 2. Undefined
ratios (a side with no objects, no instances) are ``None``, never guessed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.matching.result import Matching


def precision(m: Matching) -> float | None:
    """``(No − FA)/No`` (eq. 14); ``None`` when there are no submitted objects."""
    if m.n_submission == 0:
        return None
    return (m.n_submission - m.false_alarms.size) / m.n_submission


def recall(m: Matching) -> float | None:
    """``(Nr − MD)/Nr`` (eq. 15); ``None`` when there are no reference objects."""
    if m.n_reference == 0:
        return None
    return (m.n_reference - m.missed.size) / m.n_reference


def f1(p: float | None, r: float | None) -> float | None:
    """Harmonic mean ``2PR/(P + R)``; ``None`` if either is undefined, 0 if both are 0."""
    if p is None or r is None:
        return None
    return float(f1_values(p, r))


def f1_values(p: Any, r: Any) -> np.ndarray:
    """:func:`f1` of arrays (e.g. bootstrap replicates): NaN where either is NaN.

    Examples
    --------
    >>> f1_values(np.array([0.5, 0.0, np.nan]), np.array([1.0, 0.0, 1.0])).tolist()
    [0.6666666666666666, 0.0, nan]
    """
    p, r = np.asarray(p, dtype=float), np.asarray(r, dtype=float)
    s = p + r
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(s > 0, 2 * p * r / s, np.where(s == 0, 0.0, np.nan))


def bgm_score(m: Matching, union_area: float) -> float | None:
    """BGM accuracy (eq. 1): matched area ``w`` over the union of all objects.

    ``w / (|I| − C_00)``; ``None`` when both sides are empty (no union). ``w`` is
    :attr:`~geoeval.matching.result.Matching.matched_overlap`, the area of the
    union of the matched pairs' intersections, so an area covered by several
    objects of one side counts once (see :func:`bgm_accuracy`).
    """
    return bgm_accuracy(m.matched_overlap, union_area)


def bgm_accuracy(matched_area: float, union_area: float) -> float | None:
    """Eq. 1 from its two areas; the one formula for one scene and for pooled scenes.

    Parameters
    ----------
    matched_area : float
        Area matched (for pooled scenes, summed over the scenes).
    union_area : float
        Area of the union of all objects of both sides (summed likewise).

    Returns
    -------
    float or None
        ``matched_area / union_area`` in ``[0, 1]``; ``None`` when the union is
        empty. The matched area lies inside the union, so a ratio above 1 can
        only be floating-point rounding of the two areas and is clipped to 1.

    Examples
    --------
    >>> bgm_accuracy(60.0, 100.0), bgm_accuracy(0.0, 0.0)
    (0.6, None)
    """
    if not union_area > 0:
        return None
    return float(bgm_accuracy_values(matched_area, union_area))


def bgm_accuracy_values(matched_area: Any, union_area: Any) -> np.ndarray:
    """:func:`bgm_accuracy` of arrays (e.g. bootstrap replicates): NaN where the
    union is empty."""
    matched, union = np.asarray(matched_area, dtype=float), np.asarray(union_area, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, np.minimum(matched / union, 1.0), np.nan)


def mean_instance_score(m: Matching) -> float | None:
    """Mean of the instances' own scores: Hoover eq. 2, or the IoU matcher's mean IoU.

    ``(1/H) Σ (s_i1 + s_i2)/2`` for Hoover; ``None`` with no instance.
    """
    scores = m.arrays.score
    scores = scores[~np.isnan(scores)]
    if not scores.size:
        return None
    # left-to-right sum in instance order, as the report has always computed it
    return float(sum(scores.tolist()) / scores.size)

"""Counts and the matchers' own scores: precision, recall, F1, BGM, Hoover, mean IoU.

Özdemir et al. (2010): precision ``= (No − FA)/No`` (eq. 14), recall
``= (Nr − MD)/Nr`` (eq. 15), BGM score eq. 1, Hoover score eq. 2. Undefined
ratios (a side with no objects, no instances) are ``None``, never guessed.
"""

from __future__ import annotations

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
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


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
    return min(matched_area / union_area, 1.0)


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

"""Counts and the matchers' own scores: precision, recall, F1 and accuracy.

Özdemir et al. (2010): precision ``= (No − FA)/No`` (eq. 14), recall
``= (Nr − MD)/Nr`` (eq. 15), BGM score eq. 1, Hoover score eq. 2, the scene
Mallows score eq. 13. Undefined ratios (a side with no objects, no instances)
are ``None``, never guessed: precision with no submitted object, recall with no
reference object. F1, their harmonic mean, is 0 when either is 0 whatever the
other (``1/F1 = (1/P + 1/R)/2``), so it is defined whenever one side has
objects: 0 with nothing submitted or nothing to find, undefined only when both
sides are empty (for one-to-one matchers it is ``2TP / (2TP + FP + FN)``).

Every measure is a ratio of sums over objects and instances, so there is one
formula each, over *sufficient statistics* (:data:`SUMS`):
:func:`measures_from_sums` takes them as numbers or arrays, and serves one
scene (:func:`scene_measures`), bootstrap replicates (block sums weighted by
their multiplicities), pooled scenes (sums over scenes) and the error
breakdown (a repaired matching). Which accuracy a matcher has is its registry
entry's rule (:data:`geoeval.matching.registry.ACCURACY_RULES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from geoeval.matching.registry import INSTANCE_SCORE, MALLOWS, MATCHED_AREA
from geoeval.matching.result import Matching
from geoeval.sums import as_float, exact_sum

#: The sufficient statistics of the measures: objects on each side, matched
#: objects on each side, the sum and number of the instances' own scores and
#: of their Mallows scores, the matched area and the area of the union of all
#: objects.
SUMS: tuple[str, ...] = ("n_ref", "n_sub", "matched_ref", "matched_sub", "score_sum", "score_n",
                         "mallows_sum", "mallows_n", "matched_area", "union_area")
#: The measures :func:`measures_from_sums` returns, in report order.
MEASURES: tuple[str, ...] = ("precision", "recall", "f1", "accuracy", "mallows")


def ratio_values(num: Any, den: Any) -> np.ndarray:
    """``num / den`` where ``den > 0``, NaN elsewhere (arrays or numbers)."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / den, np.nan)


def measures_from_sums(accuracy: str, sums: Mapping[str, Any], *,
                       mallows: bool = True) -> dict[str, np.ndarray]:
    """Precision, recall, F1, the accuracy of rule ``accuracy`` and the Mallows
    score from their sufficient statistics (:data:`SUMS`): the one formula of each.

    Parameters
    ----------
    accuracy : str
        :data:`~geoeval.matching.registry.MATCHED_AREA` (eq. 1, matched area over
        the union, at most 1), :data:`~geoeval.matching.registry.INSTANCE_SCORE`
        (mean of the instances' own scores: Hoover eq. 2, mean IoU) or
        :data:`~geoeval.matching.registry.MALLOWS` (scene Mallows score, eq. 13).
    sums : mapping
        Every key of :data:`SUMS`, numbers or arrays of one shape (e.g. one
        value per bootstrap replicate).
    mallows : bool
        The Mallows score was computed (else the ``mallows`` measure is NaN).

    Returns
    -------
    dict of str to numpy.ndarray
        :data:`MEASURES`, NaN where undefined (no submitted object, no instance …).

    Examples
    --------
    >>> s = dict(n_ref=4, n_sub=5, matched_ref=3, matched_sub=4, score_sum=1.5, score_n=2,
    ...          mallows_sum=0.0, mallows_n=0, matched_area=60.0, union_area=100.0)
    >>> {k: round(float(v), 4) for k, v in measures_from_sums("matched_area", s).items()}
    {'precision': 0.8, 'recall': 0.75, 'f1': 0.7742, 'accuracy': 0.6, 'mallows': nan}
    >>> float(measures_from_sums("instance_score", s)["accuracy"])
    0.75
    """
    sums = {k: as_float(v) for k, v in sums.items()}  # exact sums rounded once
    p = ratio_values(sums["matched_sub"], sums["n_sub"])
    r = ratio_values(sums["matched_ref"], sums["n_ref"])
    scene_mallows = ratio_values(sums["mallows_sum"], sums["mallows_n"])
    if accuracy == MATCHED_AREA:
        acc = bgm_accuracy_values(sums["matched_area"], sums["union_area"])
    elif accuracy == INSTANCE_SCORE:
        acc = ratio_values(sums["score_sum"], sums["score_n"])
    elif accuracy == MALLOWS:
        acc = scene_mallows
    else:
        raise ValueError(f"unknown accuracy rule {accuracy!r}")
    return {"precision": p, "recall": r, "f1": f1_values(p, r), "accuracy": acc,
            "mallows": scene_mallows if mallows else np.full(np.shape(p), np.nan)}


def scene_sums(m: Matching, union_area: Any = None,
               mallows: np.ndarray | None = None) -> dict[str, Any]:
    """The sufficient statistics (:data:`SUMS`) of one matching.

    ``union_area`` is the area of the union of all objects (unknown: ``None``,
    then the matched-area accuracy is undefined); ``mallows`` the instances'
    Mallows scores (NaN where undefined), when computed. The sums are exact
    (:class:`geoeval.sums.ExactSum`): those of a scene's parts add up to the
    scene's, whatever the order (:func:`measures_from_sums` rounds them once).
    """
    scores = m.arrays.score
    scores = scores[~np.isnan(scores)]
    mal = np.zeros(0) if mallows is None else np.asarray(mallows, float)
    mal = mal[~np.isnan(mal)]
    return {
        "n_ref": m.n_reference, "n_sub": m.n_submission,
        "matched_ref": m.n_reference - m.missed.size,
        "matched_sub": m.n_submission - m.false_alarms.size,
        "score_sum": exact_sum(scores), "score_n": scores.size,
        "mallows_sum": exact_sum(mal), "mallows_n": mal.size,
        "matched_area": m.matched_sum,
        "union_area": np.nan if union_area is None else union_area,
    }


def scene_measures(accuracy: str, m: Matching, union_area: float | None = None,
                   mallows: np.ndarray | None = None) -> dict[str, float | None]:
    """:func:`measures_from_sums` of one matching (:func:`scene_sums`), as
    numbers: ``None`` where undefined."""
    values = measures_from_sums(accuracy, scene_sums(m, union_area, mallows),
                                mallows=mallows is not None)
    return {k: as_number(v) for k, v in values.items()}


def as_number(value: Any) -> float | None:
    """A 0-d result as a ``float``, ``None`` for NaN (undefined)."""
    v = float(value)
    return None if v != v else v


def precision(m: Matching) -> float | None:
    """``(No − FA)/No`` (eq. 14); ``None`` when there are no submitted objects."""
    return as_number(ratio_values(m.n_submission - m.false_alarms.size, m.n_submission))


def recall(m: Matching) -> float | None:
    """``(Nr − MD)/Nr`` (eq. 15); ``None`` when there are no reference objects."""
    return as_number(ratio_values(m.n_reference - m.missed.size, m.n_reference))


def f1(p: float | None, r: float | None) -> float | None:
    """Harmonic mean ``2PR/(P + R)`` (:func:`f1_values`); ``None`` when undefined."""
    return as_number(f1_values(np.nan if p is None else p, np.nan if r is None else r))


def f1_values(p: Any, r: Any) -> np.ndarray:
    """F1, the harmonic mean ``2PR/(P + R)`` of precision and recall, of numbers or
    arrays (e.g. bootstrap replicates): the one formula of F1.

    A harmonic mean is 0 when one of its terms is 0, whatever the other
    (``1/F1 = (1/P + 1/R)/2``): with nothing submitted (``P`` undefined) and
    references to find, recall and F1 are 0; with nothing to find (``R``
    undefined) and detections, precision and F1 are 0. F1 is NaN (undefined) where
    one is undefined and the other is not 0: from counts, only when both sides are
    empty. For one-to-one matchers this is ``2TP / (2TP + FP + FN)`` in every case.

    Examples
    --------
    >>> f1_values(np.array([0.5, 0.0, np.nan, 0.0, np.nan]),
    ...           np.array([1.0, 0.0, 0.0, np.nan, np.nan])).tolist()
    [0.6666666666666666, 0.0, 0.0, 0.0, nan]
    """
    p, r = np.asarray(p, dtype=float), np.asarray(r, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):  # 0/0 where both are 0: set to 0
        return np.where((p == 0) | (r == 0), 0.0, 2 * p * r / (p + r))  # NaN stays NaN


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
    return as_number(bgm_accuracy_values(matched_area, union_area))


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
    return scene_measures(INSTANCE_SCORE, m)["accuracy"]

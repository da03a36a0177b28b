"""Precision × recall curves and average precision (every-point and 11-point).

Shared by the box protocols (VOC here; ROBIN and Neovision2 may reuse it).
Definitions from Padilla, Netto, da Silva, "A Survey on Performance Metrics for
Object-Detection Algorithms" (IWSSIP 2020) and its README ("Average Precision",
"11-point interpolation", "Interpolating all points") and the PASCAL VOC devkit
(``VOCap``, ``VOCevaldet``).
"""

from __future__ import annotations

import numpy as np

#: Recall levels of the 11-point interpolation, exactly ``i / 10``.
ELEVEN_LEVELS = np.arange(11) / 10.0


def pr_curve(is_tp: np.ndarray, n_reference: int) -> tuple[np.ndarray, np.ndarray]:
    """Precision and recall after each detection of a ranked list.

    Parameters
    ----------
    is_tp : numpy.ndarray
        Boolean, one entry per counted detection in decreasing confidence
        (true positive or false positive; ignored detections left out).
    n_reference : int
        Number of (non-ignored) ground-truth objects; must be positive.

    Returns
    -------
    precision, recall : numpy.ndarray
        ``P_k = TP_k / k`` and ``R_k = TP_k / n_reference`` where ``TP_k``
        counts the true positives among the first ``k`` detections.
    """
    if n_reference <= 0:
        raise ValueError("n_reference must be positive")
    tp = np.cumsum(np.asarray(is_tp, dtype=bool), dtype=np.int64)
    k = np.arange(1, tp.size + 1, dtype=np.int64)
    return tp / k, tp / n_reference


def ap_every_point(precision: np.ndarray, recall: np.ndarray) -> float:
    """Average precision by interpolating all points (VOC 2010+, Padilla et al. 2020).

    Notes
    -----
    ``AP = Σ_n (r_{n+1} − r_n) · p_interp(r_{n+1})`` with
    ``p_interp(r) = max_{r' ≥ r} p(r')`` over the curve extended by
    ``(0, 0)`` and ``(1, 0)`` (devkit ``VOCap``). An empty curve gives 0.
    """
    mrec = np.concatenate(([0.0], np.asarray(recall, float), [1.0]))
    mpre = np.concatenate(([0.0], np.asarray(precision, float), [0.0]))
    mpre = np.maximum.accumulate(mpre[::-1])[::-1]
    step = np.flatnonzero(mrec[1:] != mrec[:-1])
    return float(np.sum((mrec[step + 1] - mrec[step]) * mpre[step + 1]))


def ap_eleven_point(precision: np.ndarray, recall: np.ndarray) -> float:
    """Average precision by 11-point interpolation (VOC 2007, Padilla et al. 2020).

    Notes
    -----
    ``AP = (1/11) Σ_{r ∈ {0, 0.1, …, 1}} max_{r' ≥ r} p(r')`` (0 where no point
    reaches recall ``r``; :func:`interpolated_precision`). The levels are exactly
    ``i / 10`` so that a recall of ``3/10`` counts for the level 0.3
    (``np.linspace`` would give 0.30000000000000004).
    """
    return float(interpolated_precision(precision, recall).sum() / 11.0)


def interpolated_precision(precision: np.ndarray, recall: np.ndarray,
                           levels: np.ndarray = ELEVEN_LEVELS) -> np.ndarray:
    """``max_{r' ≥ r} p(r')`` at each recall level ``r`` of ``levels`` (0 where no point of
    the curve reaches ``r``): the values the 11-point AP averages.

    A protocol that reproduces a reference code whose levels are
    ``np.arange(0, 1.1, 0.1)`` (0.30000000000000004 …) passes those ``levels``.

    Examples
    --------
    >>> interpolated_precision(np.array([1.0, 0.5]), np.array([0.5, 0.5])).tolist()
    [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    p = np.asarray(precision, float)
    r = np.asarray(recall, float)
    if p.size == 0:
        return np.zeros(len(levels))
    env = np.maximum.accumulate(p[::-1])[::-1]  # max precision at recall >= r[i]
    idx = np.searchsorted(r, levels, side="left")  # recall is non-decreasing
    return np.where(idx < r.size, env[np.minimum(idx, r.size - 1)], 0.0)

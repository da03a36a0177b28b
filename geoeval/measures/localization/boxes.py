"""ROBIN box measures m1, m2, m3: the one implementation.

D'Angelo, Herbin & Ratiéville, *ROBIN Challenge: Evaluation principles and
metrics* (2006), §4.1.2; Hemery et al., J. Electron. Imaging 19(2) 2010,
Table 2, eqs. 2–4 (ROB_loc, ROB_com, ROB_cor). :func:`robin_measures` is used
by the ROBIN protocol (:mod:`geoeval.challenges.robin`) and by the three
localisation metrics below, so both always give the same numbers.

Boxes are ``(x0, y0, x1, y1)`` in pixel-edge coordinates (``x1``, ``y1``
exclusive), so the width is ``x1 − x0``. All three are dissimilarities in
``[0, 1]`` (0 = same centre / area / aspect ratio).
"""

from __future__ import annotations

import numpy as np

from geoeval.measures.localization._wrap import pair_metric
from geoeval.measures.localization.pairs import BoxPair


def _parts(b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Centre x, centre y, width, height of ``(n, 4)`` boxes."""
    return (b[:, 0] + b[:, 2]) / 2, (b[:, 1] + b[:, 3]) / 2, b[:, 2] - b[:, 0], b[:, 3] - b[:, 1]


def robin_measures(
    detections: np.ndarray, ground_truth: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Localisation m1, completeness m2 and correctness m3 of box pairs.

    Parameters
    ----------
    detections, ground_truth : numpy.ndarray
        ``(k, 4)`` boxes ``(x1, y1, x2, y2)``, pair ``k`` = row ``k`` of each
        (a single row broadcasts).

    Returns
    -------
    m1, m2, m3 : numpy.ndarray
        Each in ``[0, 1]`` (0 best), NaN where the formula is undefined.

    Notes
    -----
    ROBIN §4.1.2, with centres ``(x, y)``, widths ``w``, heights ``h`` and
    areas ``A`` (``d`` detection, ``gt`` reference):

    * ``m1 = (2/π) arctan(max(|x_d − x_gt| / w_gt, |y_d − y_gt| / h_gt))``
    * ``m2 = |A_d − A_gt| / max(A_d, A_gt)``
    * ``m3 = (2/π) arctan(|h_d / w_d − h_gt / w_gt|)``

    Degenerate boxes follow the formulas in the extended reals and nothing
    else: a detection of zero width and positive height has
    ``h_d / w_d = +∞`` and ``m3 = (2/π)·arctan(∞) = 1``; an access point
    (zero width and height) has ``m2 = |0 − A_gt| / A_gt = 1`` and
    ``h_d / w_d = 0/0``, so ``m3`` is undefined (NaN). §4.1.2 note 2 judges a
    point "only" on ``m1``; m3 is not needed for it and is not invented. A
    reference of zero width or height makes ``m1`` divide by zero (callers
    refuse such references).

    References
    ----------
    E. D'Angelo, S. Herbin, M. Ratiéville, *ROBIN Challenge: Evaluation
    principles and metrics*, 2006, §4.1.2.

    Examples
    --------
    >>> m1, m2, m3 = robin_measures(np.array([[1., 0, 11, 10]]), np.array([[0., 0, 10, 10]]))
    >>> round(float(m1[0]), 4), float(m2[0]), float(m3[0])
    (0.0635, 0.0, 0.0)
    """
    d = np.asarray(detections, dtype=float).reshape(-1, 4)
    g = np.asarray(ground_truth, dtype=float).reshape(-1, 4)
    xd, yd, wd, hd = _parts(d)
    xg, yg, wg, hg = _parts(g)
    with np.errstate(divide="ignore", invalid="ignore"):
        m1 = (2.0 / np.pi) * np.arctan(np.maximum(np.abs(xd - xg) / wg, np.abs(yd - yg) / hg))
        ad, ag = wd * hd, wg * hg
        m2 = np.abs(ad - ag) / np.maximum(ad, ag)
        m3 = (2.0 / np.pi) * np.arctan(np.abs(hd / wd - hg / wg))
    return m1, m2, m3


@pair_metric("box", "Dissimilarity in ``[0, 1)``.")
def robin_localization(pair: BoxPair) -> np.ndarray:
    """ROB_loc: offset of the box centre relative to the reference size.

    Notes
    -----
    Hemery et al. (2010), eq. 2:
    ``ROB_loc = (2/π) arctan(max(|x_l − x_gt| / w_gt, |y_l − y_gt| / h_gt))``
    with ``(x, y)`` the box centre.

    References
    ----------
    E. D'Angelo, S. Herbin, M. Ratiéville, "Robin challenge evaluation principles
    and metrics" (2006); Hemery et al., J. Electron. Imaging 19(2) 2010, eq. 2.

    Examples
    --------
    >>> round(robin_localization([0, 0, 10, 10], [10, 0, 20, 10]), 4)
    0.5
    """
    return robin_measures(pair.result, pair.reference)[0]


@pair_metric("box", "Dissimilarity in ``[0, 1]``.")
def robin_completeness(pair: BoxPair) -> np.ndarray:
    """ROB_com: relative difference of the box areas.

    Notes
    -----
    Hemery et al. (2010), eq. 3: ``ROB_com = |A_l − A_gt| / max(A_l, A_gt)``.

    References
    ----------
    D'Angelo et al. (2006); Hemery et al. (2010), eq. 3.

    Examples
    --------
    >>> robin_completeness([0, 0, 10, 10], [0, 0, 10, 5])
    0.5
    """
    return robin_measures(pair.result, pair.reference)[1]


@pair_metric("box", "Dissimilarity in ``[0, 1]``; NaN for a point result "
             "(see :func:`robin_measures`).")
def robin_correctness(pair: BoxPair) -> np.ndarray:
    """ROB_cor: difference of the height/width ratios.

    Notes
    -----
    Hemery et al. (2010), eq. 4: ``ROB_cor = (2/π) arctan(|h_l / w_l − h_gt / w_gt|)``.

    References
    ----------
    D'Angelo et al. (2006); Hemery et al. (2010), eq. 4.

    Examples
    --------
    >>> round(robin_correctness([0, 0, 10, 10], [0, 0, 10, 20]), 4)
    0.5
    """
    return robin_measures(pair.result, pair.reference)[2]

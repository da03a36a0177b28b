"""ROBIN box metrics (003 Table 2, eq. 2–4; D'Angelo, Herbin & Ratiéville 2006).

Boxes are ``(x0, y0, x1, y1)`` in pixel-edge coordinates (``x1``, ``y1``
exclusive), so the width is ``x1 − x0``. All three are dissimilarities in
``[0, 1]`` (0 = same centre / area / aspect ratio).
"""

from __future__ import annotations

import numpy as np

from geoeval.measures.localization._wrap import pair_metric
from geoeval.measures.localization.pairs import BoxPair


@pair_metric("box")
def robin_localization(pair: BoxPair) -> np.ndarray:
    """ROB_loc: offset of the box centre relative to the reference size.

    Parameters
    ----------
    {PARAMS}

    Returns
    -------
    float or numpy.ndarray
        Dissimilarity in ``[0, 1)``.

    Notes
    -----
    003 eq. 2: ``ROB_loc = (2/π) arctan(max(|x_l − x_gt| / w_gt, |y_l − y_gt| / h_gt))``
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
    xg, yg, wg, hg = pair.ref_parts
    xl, yl, _, _ = pair.res_parts
    r = np.maximum(np.abs(xl - xg) / wg, np.abs(yl - yg) / hg)
    return 2 / np.pi * np.arctan(r)


@pair_metric("box")
def robin_completeness(pair: BoxPair) -> np.ndarray:
    """ROB_com: relative difference of the box areas.

    Parameters
    ----------
    {PARAMS}

    Returns
    -------
    float or numpy.ndarray
        Dissimilarity in ``[0, 1]``.

    Notes
    -----
    003 eq. 3: ``ROB_com = |A_l − A_gt| / max(A_l, A_gt)``.

    References
    ----------
    D'Angelo et al. (2006); Hemery et al. (2010), eq. 3.

    Examples
    --------
    >>> robin_completeness([0, 0, 10, 10], [0, 0, 10, 5])
    0.5
    """
    _, _, wg, hg = pair.ref_parts
    _, _, wl, hl = pair.res_parts
    ag, al = wg * hg, wl * hl
    return np.abs(al - ag) / np.maximum(al, ag)


@pair_metric("box")
def robin_correctness(pair: BoxPair) -> np.ndarray:
    """ROB_cor: difference of the height/width ratios.

    Parameters
    ----------
    {PARAMS}

    Returns
    -------
    float or numpy.ndarray
        Dissimilarity in ``[0, 1)``.

    Notes
    -----
    003 eq. 4: ``ROB_cor = (2/π) arctan(|h_l / w_l − h_gt / w_gt|)``.

    References
    ----------
    D'Angelo et al. (2006); Hemery et al. (2010), eq. 4.

    Examples
    --------
    >>> round(robin_correctness([0, 0, 10, 10], [0, 0, 10, 20]), 4)
    0.5
    """
    _, _, wg, hg = pair.ref_parts
    _, _, wl, hl = pair.res_parts
    return 2 / np.pi * np.arctan(np.abs(hl / wl - hg / wg))

"""geoeval's own scene scores on single-object instances, as audit metrics.

With one reference object ``G`` and one submitted object ``L`` (masks on one
grid) the matchers' scores reduce to small formulas on ``a = |G ∩ L|``:

* IoU matcher (mean IoU of the matched pair): ``a / |G ∪ L|``;
* BGM (Özdemir et al. 2010, eq. 1): matched overlap over the union of all
  objects, ``a / |G ∪ L|`` (the pair is matched as soon as ``a > 0``);
* Hoover at threshold ``T`` (Özdemir et al. 2010, eq. 2): the pair is a correct detection when
  ``a ≥ T|L|`` and ``a ≥ T|G|``, scoring ``(a/|G| + a/|L|)/2``; otherwise there
  is no instance, and geoeval scores the pair 0 (``docs/localization.md``);
* Mallows (Özdemir et al. 2010, eq. 12) through :func:`geoeval.measures.mallows.mallows_scores`.

All four are **similarities** (1 = identical).
"""

from __future__ import annotations

import numpy as np

from geoeval.measures.localization._wrap import pair_metric, safe_div
from geoeval.measures.localization.pairs import MaskPair
from geoeval.thresholds import at_least


@pair_metric("mask")
def single_pair_iou(pair: MaskPair) -> np.ndarray:
    """geoeval's IoU score of one matched pair (a **similarity**).

    Parameters
    ----------
    {PARAMS}

    Returns
    -------
    float or numpy.ndarray
        ``|G ∩ L| / |G ∪ L|``; NaN if both masks are empty.

    Notes
    -----
    geoeval's IoU matcher (one-to-one, ``docs/matcher-iou.md``): the mean IoU of the
    matched pairs, here one pair.

    References
    ----------
    Özdemir et al. (2010), §4.1; Everingham et al. (2010).
    """
    a = pair.n_both
    return safe_div(a, pair.n_ref + pair.n_res - a)


@pair_metric("mask")
def single_pair_bgm(pair: MaskPair) -> np.ndarray:
    """geoeval's BGM score of a one-object scene (a **similarity**).

    Parameters
    ----------
    {PARAMS}

    Returns
    -------
    float or numpy.ndarray
        Matched overlap over the union, ``|G ∩ L| / |G ∪ L|``.

    Notes
    -----
    Özdemir et al. (2010), eq. 1: ``w / |⋃ objects|``; with one pair ``w = |G ∩ L|``.

    References
    ----------
    Özdemir et al. (2010), eq. 1.
    """
    a = pair.n_both
    return safe_div(a, pair.n_ref + pair.n_res - a)


@pair_metric("mask")
def single_pair_hoover(pair: MaskPair, threshold: float = 0.6) -> np.ndarray:
    """geoeval's Hoover score of a one-object scene (a **similarity**).

    Parameters
    ----------
    {PARAMS}
    threshold : float
        Hoover's ``T`` (``0.5 < T ≤ 1``; geoeval's default 0.6).

    Returns
    -------
    float or numpy.ndarray
        ``(a/|G| + a/|L|)/2`` when both ratios are at least ``T``, else 0.

    Notes
    -----
    Özdemir et al. (2010), §4.1.2 and eq. 2 with one correct-detection candidate.

    References
    ----------
    Hoover et al., IEEE PAMI 18(7) 1996; Özdemir et al. (2010), eq. 2.
    """
    s1 = safe_div(pair.n_both, pair.n_ref, 0.0)
    s2 = safe_div(pair.n_both, pair.n_res, 0.0)
    # pixel counts: decided exactly in integers (geoeval.thresholds)
    ok = (at_least(pair.n_both, pair.n_ref, threshold, unit=1.0)
          & at_least(pair.n_both, pair.n_res, threshold, unit=1.0))
    return np.where(ok, (s1 + s2) / 2, 0.0)


@pair_metric("mask")
def single_pair_mallows(pair: MaskPair) -> np.ndarray:
    """geoeval's Mallows shape score of one instance (a **similarity**).

    Parameters
    ----------
    {PARAMS}

    Returns
    -------
    float or numpy.ndarray
        Özdemir et al. (2010), eq. 12, ``1 − EMD / max ‖u − v‖``; NaN if a mask is empty.

    Notes
    -----
    Each pair goes through :func:`geoeval.measures.mallows.mallows_scores` as a
    one-instance scene on the pixel grid (exact EMD up to that module's
    ``EXACT_LIMIT``, pooled and flagged beyond). One EMD per image: slow, so the
    audit runs it only when asked for (``--metric mallows``).

    References
    ----------
    Özdemir et al. (2010), §4.2, eq. 7–12.
    """
    from geoeval.io.raster import objects_from_labels
    from geoeval.matching.result import Instance
    from geoeval.measures.mallows import mallows_scores

    ref = np.broadcast_to(pair.reference, (pair.size, *pair.reference.shape[1:]))
    res = np.broadcast_to(pair.result, (pair.size, *pair.result.shape[1:]))
    out = np.full(pair.size, np.nan)
    for i in range(pair.size):  # one transport problem per image
        if not (ref[i].any() and res[i].any()):
            continue
        r = objects_from_labels(ref[i].astype(np.int32))
        s = objects_from_labels(res[i].astype(np.int32))
        inst = Instance((0,), (0,), float(pair.n_both[i]), "one-to-one")
        out[i] = mallows_scores(r, s, [inst], n_jobs=1).scores[0]
    return out

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

All four are **similarities** (1 = identical). Each is computed by the code the
matchers and the scene report use (the overlap's :func:`~geoeval.overlap.iou_values`,
:func:`~geoeval.measures.counts.bgm_accuracy_values`, the registered Hoover matcher
on the pairs side by side, :func:`~geoeval.measures.mallows.mallows_scores`), so
the audit checks geoeval's own scores, not copies of their formulas.
"""

from __future__ import annotations

import numpy as np

from geoeval.measures.counts import bgm_accuracy_values
from geoeval.measures.localization._wrap import pair_metric
from geoeval.measures.localization.pairs import MaskPair
from geoeval.overlap import Overlap, iou_values


@pair_metric("mask", "``|G ∩ L| / |G ∪ L|``; NaN if both masks are empty.")
def single_pair_iou(pair: MaskPair) -> np.ndarray:
    """geoeval's IoU score of one matched pair (a **similarity**).

    Notes
    -----
    geoeval's IoU matcher (one-to-one, ``docs/matcher-iou.md``): the mean IoU of the
    matched pairs, here one pair.

    References
    ----------
    Özdemir et al. (2010), §4.1; Everingham et al. (2010).
    """
    return iou_values(pair.n_both, pair.n_ref, pair.n_res, empty=np.nan)


@pair_metric("mask", "Matched overlap over the union, ``|G ∩ L| / |G ∪ L|``.")
def single_pair_bgm(pair: MaskPair) -> np.ndarray:
    """geoeval's BGM score of a one-object scene (a **similarity**).

    Notes
    -----
    Özdemir et al. (2010), eq. 1: ``w / |⋃ objects|``; with one pair ``w = |G ∩ L|``.

    References
    ----------
    Özdemir et al. (2010), eq. 1.
    """
    a = np.asarray(pair.n_both, dtype=float)
    return bgm_accuracy_values(a, pair.n_ref + pair.n_res - a)


@pair_metric("mask", "``(a/|G| + a/|L|)/2`` when both ratios are at least ``T``, else 0.")
def single_pair_hoover(pair: MaskPair, threshold: float = 0.6) -> np.ndarray:
    """geoeval's Hoover score of a one-object scene (a **similarity**).

    Parameters
    ----------
    threshold : float
        Hoover's ``T`` (``0.5 < T ≤ 1``; geoeval's default 0.6).

    Notes
    -----
    Özdemir et al. (2010), §4.1.2 and eq. 2 with one correct-detection candidate.

    References
    ----------
    Hoover et al., IEEE PAMI 18(7) 1996; Özdemir et al. (2010), eq. 2.
    """
    from geoeval.matching import match

    m = match(_side_by_side(pair), "hoover", threshold=threshold)
    out = np.zeros(pair.size)
    out[m.arrays.ref_idx] = m.arrays.score  # one correct detection per pair at most
    return out


def _side_by_side(pair: MaskPair) -> Overlap:
    """The ``B`` one-pair scenes of ``pair`` as one overlap: reference ``k`` and
    result ``k`` overlap by ``|G_k ∩ L_k|`` and nothing else (no geometry: the
    objects are their pixel counts, so the matcher decides on integer counts,
    :mod:`geoeval.thresholds`)."""
    import shapely

    from geoeval.objects import ObjectSet

    a = np.asarray(pair.n_both, dtype=float)
    g, r = np.asarray(pair.n_ref, dtype=float), np.asarray(pair.n_res, dtype=float)
    ids = np.arange(pair.size)
    empty = np.full(pair.size, shapely.Polygon(), dtype=object)
    on = a > 0
    return Overlap(ObjectSet(ids, g, geometry=empty), ObjectSet(ids, r, geometry=empty),
                   ids[on], ids[on], a[on], float(g.sum() + r.sum() - a.sum()), "co-occurrence",
                   pixel_area=1.0)


@pair_metric("mask", "Özdemir et al. (2010), eq. 12, ``1 − EMD / max ‖u − v‖``; "
             "NaN if a mask is empty.")
def single_pair_mallows(pair: MaskPair) -> np.ndarray:
    """geoeval's Mallows shape score of one instance (a **similarity**).

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

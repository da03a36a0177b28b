"""The registry of localisation metrics: name → :class:`Metric`.

Every entry names the metric as in Hemery et al. (2010), Table 2 (``label``), its input
representation, whether it is a dissimilarity (0 = identical) or a similarity
(``best`` = identical), the public function and its fixed parameters. The audit
turns similarities into dissimilarities with :meth:`Metric.as_dissimilarity`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.errors import InputError
from geoeval.measures.localization import boxes, contours, masks, single


@dataclass(frozen=True)
class Metric:
    """One registered localisation metric.

    Attributes
    ----------
    name : str
        Registry key (lower case, used by ``geoeval audit --metric``).
    label : str
        Name in Hemery et al.'s tables (``ROB_loc``, ``Lq,1`` …).
    representation : str
        ``box``, ``contour`` or ``mask``.
    sense : str
        ``dissimilarity`` (0 = identical) or ``similarity``: which way the
        values point.
    best : float
        Value for identical inputs of a similarity (``inf`` for SNR); 0 for a
        dissimilarity.
    function : callable
        Public function ``f(reference, result, ...)``; ``function.core`` works on pairs.
    params : dict
        Fixed keyword arguments (``q``, ``p``, ``n`` …).
    source : str
        Where the formula comes from.
    slow : bool
        One solver call per image (Mallows): left out of the default audit.
    """

    name: str
    label: str
    representation: str
    sense: str
    best: float
    function: Callable[..., Any]
    params: dict[str, Any] = field(default_factory=dict)
    source: str = "Hemery et al. 2010, Table 2"
    slow: bool = False

    def evaluate(self, pair: Any) -> np.ndarray:
        """The metric on a batched pair of its representation (``(B,)`` array)."""
        return np.asarray(self.function.core(pair, **self.params), dtype=float)

    def as_dissimilarity(self, values: np.ndarray) -> np.ndarray:
        """Values oriented so that 0 is best and larger is worse.

        ``best − value`` for a similarity with finite ``best``; ``−value`` for
        SNR (``best = inf``), so identical images get ``−inf``.
        """
        v = np.asarray(values, dtype=float)
        if self.sense == "dissimilarity":
            return v
        return -v if np.isinf(self.best) else self.best - v


def _m(name, label, rep, fn, sense="dissimilarity", best=0.0, source=None, **params) -> Metric:
    return Metric(
        name, label, rep, sense, best, fn, dict(params),
        source or "Hemery et al. 2010, Table 2", slow=name == "mallows",
    )


_SIM = "similarity"
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        _m("rob_loc", "ROB_loc", "box", boxes.robin_localization),
        _m("rob_com", "ROB_com", "box", boxes.robin_completeness),
        _m("rob_cor", "ROB_cor", "box", boxes.robin_correctness),
        _m("err_loc", "ErrLoc", "contour", contours.localization_error),
        _m("err_sous", "ErrSous", "contour", contours.under_detection_error),
        _m("err_sur", "ErrSur", "contour", contours.over_detection_error),
        _m("snr", "SNR", "contour", contours.signal_to_noise_ratio, _SIM, np.inf),
        _m("rms", "rms", "contour", contours.root_mean_square),
        _m("lq1", "Lq,1", "contour", contours.lq_distance, q=1.0),
        _m("lq3", "Lq,3", "contour", contours.lq_distance, q=3.0),
        _m("kul", "KUL", "contour", contours.kullback_distance, support="result"),
        _m("bha", "BHA", "contour", contours.bhattacharyya_distance, levels="background"),
        _m("jen", "JEN", "contour", contours.jensen_distance, alpha=3.0, levels="background"),
        _m("dmoy", "DMoy", "contour", contours.mean_distance),
        _m("dmoc", "DMoC", "contour", contours.mean_squared_distance),
        _m("fom", "FOM", "contour", contours.figure_of_merit, _SIM, 1.0, alpha=1 / 9),
        _m("hau", "HAU", "contour", contours.hausdorff_distance),
        _m("bad1", "BAD,1", "contour", contours.baddeley_distance, p=1.0),
        _m("bad2", "BAD,2", "contour", contours.baddeley_distance, p=2.0),
        _m("bad3", "BAD,3", "contour", contours.baddeley_distance, p=3.0),
        _m("odi1", "ODI,1", "contour", contours.odet_over_detection, n=1.0, d_th=5.0),
        _m("odi2", "ODI,2", "contour", contours.odet_over_detection, n=2.0, d_th=5.0),
        _m("udi1", "UDI,1", "contour", contours.odet_under_detection, n=1.0, d_th=5.0),
        _m("udi2", "UDI,2", "contour", contours.odet_under_detection, n=2.0, d_th=5.0),
        _m("pas", "PAS", "mask", masks.pascal_overlap, _SIM, 1.0),
        _m("hen1", "HEN1", "mask", masks.henricsson_size_error),
        _m("hen2", "HEN2", "mask", masks.henricsson_mismatch_error),
        _m("yas1", "YAS1", "mask", masks.yasnoff_over_detection),
        _m("yas2", "YAS2", "mask", masks.yasnoff_under_detection),
        _m("yas3", "YAS3", "mask", masks.yasnoff_distance_error),
        _m("mar_gce", "MAR_gce", "mask", masks.global_consistency_error),
        _m("mar_lce", "MAR_lce", "mask", masks.local_consistency_error),
        _m("ham", "HAM", "mask", masks.hamming_similarity, _SIM, 1.0),
        _m("haf1", "HAF1", "mask", masks.hafiane_matching, _SIM, 1.0),
        _m("haf2", "HAF2", "mask", masks.hafiane_weighted, _SIM, 1.0, m=0.2),
        _m("vin", "VIN", "mask", masks.vinet_distance),
        _m("p_px", "P_px", "mask", masks.pixel_precision, _SIM, 1.0),
        _m("r_px", "R_px", "mask", masks.pixel_recall, _SIM, 1.0),
        _m("iou", "geoeval IoU", "mask", single.single_pair_iou, _SIM, 1.0,
           "geoeval IoU matcher (docs/matcher-iou.md) on one pair"),
        _m("bgm", "geoeval BGM", "mask", single.single_pair_bgm, _SIM, 1.0,
           "Özdemir et al. 2010, eq. 1 on one pair"),
        _m("hoover", "geoeval Hoover", "mask", single.single_pair_hoover, _SIM, 1.0,
           "Özdemir et al. 2010, eq. 2 on one pair", threshold=0.6),
        _m("mallows", "geoeval Mallows", "mask", single.single_pair_mallows, _SIM, 1.0,
           "Özdemir et al. 2010, eq. 12 on one instance"),
    )
}


def get_metric(name: str) -> Metric:
    """The registered metric called ``name`` (case-insensitive).

    Raises
    ------
    InputError
        Unknown name (the message lists the known ones).
    """
    key = name.lower()
    if key not in METRICS:
        raise InputError(f"unknown metric {name!r}; known: {', '.join(METRICS)}")
    return METRICS[key]

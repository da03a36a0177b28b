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


def _m(name, label, fn, sense="dissimilarity", best=0.0, source=None, **params) -> Metric:
    """A registry entry; the representation is the one ``fn`` was written for."""
    return Metric(
        name, label, fn.representation, sense, best, fn, dict(params),
        source or "Hemery et al. 2010, Table 2", slow=name == "mallows",
    )


def _family(stem: str, fn: Callable[..., Any], param: str, values: tuple[int, ...],
            **fixed: Any) -> tuple[Metric, ...]:
    """One entry per value of ``param`` (``bad1``/``BAD,1`` …, as the paper indexes them)."""
    return tuple(
        _m(f"{stem}{v}", f"{stem.upper()},{v}", fn, **{param: float(v)}, **fixed) for v in values
    )


_SIM = "similarity"
METRICS: dict[str, Metric] = {
    m.name: m
    for m in (
        _m("rob_loc", "ROB_loc", boxes.robin_localization),
        _m("rob_com", "ROB_com", boxes.robin_completeness),
        _m("rob_cor", "ROB_cor", boxes.robin_correctness),
        _m("err_loc", "ErrLoc", contours.localization_error),
        _m("err_sous", "ErrSous", contours.under_detection_error),
        _m("err_sur", "ErrSur", contours.over_detection_error),
        _m("snr", "SNR", contours.signal_to_noise_ratio, _SIM, np.inf),
        _m("rms", "rms", contours.root_mean_square),
        _m("lq1", "Lq,1", contours.lq_distance, q=1.0),
        _m("lq3", "Lq,3", contours.lq_distance, q=3.0),
        _m("kul", "KUL", contours.kullback_distance, support="result"),
        _m("bha", "BHA", contours.bhattacharyya_distance, levels="background"),
        _m("jen", "JEN", contours.jensen_distance, alpha=3.0, levels="background"),
        _m("dmoy", "DMoy", contours.mean_distance),
        _m("dmoc", "DMoC", contours.mean_squared_distance),
        _m("fom", "FOM", contours.figure_of_merit, _SIM, 1.0, alpha=1 / 9),
        _m("hau", "HAU", contours.hausdorff_distance),
        *_family("bad", contours.baddeley_distance, "p", (1, 2, 3)),
        *_family("odi", contours.odet_over_detection, "n", (1, 2), d_th=5.0),
        *_family("udi", contours.odet_under_detection, "n", (1, 2), d_th=5.0),
        _m("pas", "PAS", masks.pascal_overlap, _SIM, 1.0),
        _m("hen1", "HEN1", masks.henricsson_size_error),
        _m("hen2", "HEN2", masks.henricsson_mismatch_error),
        _m("yas1", "YAS1", masks.yasnoff_over_detection),
        _m("yas2", "YAS2", masks.yasnoff_under_detection),
        _m("yas3", "YAS3", masks.yasnoff_distance_error),
        _m("mar_gce", "MAR_gce", masks.global_consistency_error),
        _m("mar_lce", "MAR_lce", masks.local_consistency_error),
        _m("ham", "HAM", masks.hamming_similarity, _SIM, 1.0),
        _m("haf1", "HAF1", masks.hafiane_matching, _SIM, 1.0),
        _m("haf2", "HAF2", masks.hafiane_weighted, _SIM, 1.0, m=0.2),
        _m("vin", "VIN", masks.vinet_distance),
        _m("p_px", "P_px", masks.pixel_precision, _SIM, 1.0),
        _m("r_px", "R_px", masks.pixel_recall, _SIM, 1.0),
        _m("iou", "geoeval IoU", single.single_pair_iou, _SIM, 1.0,
           "geoeval IoU matcher (docs/matcher-iou.md) on one pair"),
        _m("bgm", "geoeval BGM", single.single_pair_bgm, _SIM, 1.0,
           "Özdemir et al. 2010, eq. 1 on one pair"),
        _m("hoover", "geoeval Hoover", single.single_pair_hoover, _SIM, 1.0,
           "Özdemir et al. 2010, eq. 2 on one pair", threshold=0.6),
        _m("mallows", "geoeval Mallows", single.single_pair_mallows, _SIM, 1.0,
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

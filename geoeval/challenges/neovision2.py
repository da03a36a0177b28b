"""The DARPA Neovision2 protocol: NMOTDA, detection-only score, ROC and Az.

Follows Ekambaram, Goldgof, Kasturi, Ran, Zheng, *Neovision2 Performance
Evaluation Protocol* v3.0 (2012); choices where it is silent are stated in
``docs/neovision2.md``. The whole data set is scored at once: pairs are found
per frame and class with one STRtree query (:mod:`._box_groups`), IoU comes
from :func:`geoeval.overlap.box_iou_pairs`, and the one-to-one assignment of
every frame and class is one call to
:func:`geoeval.matching.assignment.max_weight_matching` (Hungarian per
connected component; no Python loop over frames).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.challenges._box_groups import (
    overlapping_pairs,
)
from geoeval.challenges.neovision2_prepare import Prepared, prepare
from geoeval.encoding import number
from geoeval.errors import InputError
from geoeval.io.neovision2 import (
    Neovision2Boxes,
    read_neovision2,
)
from geoeval.reprs import listed, warned
from geoeval.reprs import number as rn
from geoeval.thresholds import above, at_least

#: Confidence thresholds of the ROC curve (§3.5): 0.95, 0.85, …, 0.05.
ROC_THRESHOLDS: tuple[float, ...] = tuple(round(0.95 - 0.1 * k, 2) for k in range(10))
DETECTION_ONLY = "detection_only"


@dataclass(frozen=True)
class NmotdaScore:
    """NMOTDA and its counts for one class (or detection only) and one domain.

    ``nmotda = 1 − (c_m · missed + c_f · false_positives) / n_reference``
    (eq. 2), ``None`` when there is no ground truth. ``n_reference`` counts the
    reference (ground-truth) objects scored, ``n_submission`` the submitted
    detections scored. ``ignored`` counts the
    detections matched to don't-care objects (neither TP nor FP, §3.7).

    ``nmotda`` sums the frames of all sequences (§3.3); it equals the
    ground-truth-weighted mean of the per-sequence NMOTDA (§3.4, with
    ``N·NMOTDA = N − errors``). ``sequence_mean`` and ``sequence_median`` are
    the plain mean and the median of the per-sequence NMOTDA (§3.4's other two
    candidates) over the ``n_sequences`` sequences that hold ground truth of
    this class (NMOTDA is undefined for the others); ``None`` when there is
    none.
    """

    n_reference: int
    n_submission: int
    true_positives: int
    missed: int
    false_positives: int
    ignored: int
    nmotda: float | None
    n_sequences: int = 0
    sequence_mean: float | None = None
    sequence_median: float | None = None

    def __repr__(self) -> str:
        return (f"<NmotdaScore NMOTDA {rn(self.nmotda)}: {self.true_positives} TP, "
                f"{self.missed} missed, {self.false_positives} FP, {self.ignored} ignored; "
                f"{self.n_reference} reference, {self.n_submission} submitted>")

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class RocCurve:
    """ROC points at the confidence thresholds (§3.5) and the area ``Az`` (§3.6).

    ``detection_rate`` = TP / ground truth (a fraction; × 100 for the protocol's
    percentage), ``false_positives_per_frame`` = FP / evaluated frames. ``az``
    is the area under detection rate as a function of FPPF on
    ``[0, fppf_max]`` divided by ``fppf_max`` (see ``docs/neovision2.md``).
    """

    thresholds: tuple[float, ...]
    true_positives: tuple[int, ...]
    false_positives: tuple[int, ...]
    detection_rate: tuple[float | None, ...]
    false_positives_per_frame: tuple[float | None, ...]
    az: float | None
    fppf_max: float | None

    def __repr__(self) -> str:
        return (f"<RocCurve Az {rn(self.az)} over {len(self.thresholds)} thresholds, "
                f"FPPF up to {rn(self.fppf_max)}>")

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Neovision2Scores:
    """Scores of one domain (or of all domains pooled).

    ``weighted_mean``, ``mean`` and ``median`` combine the class NMOTDA scores
    (the three candidates of §3.4) over the classes with ground truth:
    ``Σ_c N_c·NMOTDA_c / Σ_c N_c``, the plain mean and the median (mean of
    the two middle values for an even count); ``None`` without such a class.
    """

    n_frames: int
    classes: dict[str, NmotdaScore]
    detection_only: NmotdaScore
    weighted_mean: float | None
    roc: dict[str, RocCurve]
    roc_detection_only: RocCurve
    mean: float | None = None
    median: float | None = None

    def __repr__(self) -> str:
        per = listed([f"{c} {rn(s.nmotda)}" for c, s in self.classes.items()], 4)
        return (f"<Neovision2Scores {self.n_frames} frames: NMOTDA weighted mean "
                f"{rn(self.weighted_mean)}, detection only {rn(self.detection_only.nmotda)}; "
                f"{per}>")

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_frames": self.n_frames,
            "classes": {c: s.to_dict() for c, s in self.classes.items()},
            "detection_only": self.detection_only.to_dict(),
            "weighted_mean": self.weighted_mean,
            "mean": self.mean,
            "median": self.median,
            "roc": {
                "classes": {c: r.to_dict() for c, r in self.roc.items()},
                DETECTION_ONLY: self.roc_detection_only.to_dict(),
            },
        }


@dataclass(frozen=True)
class Neovision2Result:
    """Result of :func:`evaluate_neovision2`; ``to_dict()`` is the JSON report."""

    overall: Neovision2Scores
    domains: dict[str, Neovision2Scores]
    settings: dict[str, Any]
    dont_care: dict[str, int]
    reference_path: str
    submission_path: str
    warnings: tuple[str, ...] = field(default_factory=tuple)
    sequences: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __repr__(self) -> str:
        o = self.overall
        per = listed([f"{c} {rn(s.nmotda)}" for c, s in o.classes.items()], 4)
        return (f"<Neovision2Result {o.n_frames} frames, {len(self.domains)} domain"
                f"{'s' if len(self.domains) != 1 else ''}: NMOTDA weighted mean "
                f"{rn(o.weighted_mean)}, detection only {rn(o.detection_only.nmotda)}; {per}"
                f"{warned(self.warnings)}>")

    @property
    def classes(self) -> dict[str, NmotdaScore]:
        return self.overall.classes

    @property
    def detection_only(self) -> NmotdaScore:
        return self.overall.detection_only

    @property
    def weighted_mean(self) -> float | None:
        return self.overall.weighted_mean

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "protocol": "neovision2",
            "reference": self.reference_path,
            "submission": self.submission_path,
            "settings": dict(self.settings),
            "dont_care": dict(self.dont_care),
        }
        out.update(self.overall.to_dict())
        out["domains"] = {d: s.to_dict() for d, s in self.domains.items()}
        out["sequences"] = {k: dict(v) for k, v in self.sequences.items()}
        out["warnings"] = list(self.warnings)
        return out


# --- public entry -------------------------------------------------------------


def evaluate_neovision2(
    reference: str | Path | Neovision2Boxes,
    submission: str | Path | Neovision2Boxes,
    *,
    iou_threshold: float = 0.2,
    dcr_threshold: float = 0.2,
    merge_threshold: float = 0.2,
    cost_miss: float = 1.0,
    cost_false_positive: float = 1.0,
    thresholds: tuple[float, ...] = ROC_THRESHOLDS,
    roc_max_fppf: float | None = None,
) -> Neovision2Result:
    """Score Neovision2 detections against ground truth (NMOTDA, detection only, ROC).

    Parameters
    ----------
    reference, submission : path or Neovision2Boxes
        Reference (ground truth) and submission (detections): CSV file or
        folder of per-sequence CSV files (:func:`read_neovision2`).
        Sequences are paired by their key (path relative to the folder); two
        single files are paired whatever their names. A ground-truth sequence
        without a detection file has no detections.
    iou_threshold : float
        A ground truth and a detection can match when ``IoU ≥ iou_threshold``
        (eq. 1, §3.1: 0.2).
    dcr_threshold : float
        A detection with more than this fraction of its area inside the
        union of the don't-care regions of its frame is dropped (§3.7: "more
        than 20 %"; exactly 20 % is kept). A ground-truth object inside a
        region by the same rule is eliminated from mapping and scoring.
    merge_threshold : float
        Detection only: detections of a frame overlapping with
        ``IoU > merge_threshold`` (or identical) are merged (§3.3: 0.2).
    cost_miss, cost_false_positive : float
        ``c_m`` and ``c_f`` of eq. 2 (1 and 1).
    thresholds : tuple of float
        ROC confidence thresholds; a detection is kept when
        ``confidence ≥ threshold`` (§3.5). Detections without a confidence are
        kept at every threshold.
    roc_max_fppf : float, optional
        Right end of the FPPF axis for ``Az``; by default the largest FPPF of
        each curve. Give one value to compare several systems.

    Returns
    -------
    Neovision2Result

    Notes
    -----
    Per frame and class the assignment maximises ``2·TP + D`` where ``D`` is
    the number of detections matched to don't-care objects: this minimises
    ``misses + false positives`` and so maximises NMOTDA, as §3.2 requires;
    without don't-care objects it is the maximum number of matched pairs.
    Ties are broken by the largest total IoU.

    ``NMOTDA = 1 − Σ_t (c_m m_t + c_f f_t) / Σ_t N_G(t)`` (eq. 2), summed over
    the evaluated frames of all sequences (§3.3), per class and per domain.
    The weighted mean is ``Σ_c N_G(c)·NMOTDA_c / Σ_c N_G(c)`` over the classes
    with ground truth (§3.4), reported with the plain mean and the median of
    the same scores; per class, the plain mean and median over sequences sit
    beside the pooled value (see :class:`NmotdaScore`). ``sequences`` holds
    the NMOTDA of every sequence, per class and for detection only.

    Don't-care regions (§3.7): the share of a box inside the union of its
    frame's regions is ``|box ∩ regions| / |box|`` from intersection areas
    computed directly; a detection, and a ground-truth object, with a share
    above ``dcr_threshold`` is eliminated before the mapping.

    References
    ----------
    Ekambaram, Goldgof, Kasturi, Ran, Zheng, *Neovision2 Performance Evaluation
    Protocol* v3.0 (2012), §3.1–3.7 and Table 4.

    Examples
    --------
    The bundled sample (two sequences of one tower; run from a checkout): 67 cars in
    the ground truth, 59 found, 8 missed, 15 false alarms, so NMOTDA = 1 − (8 + 15)/67.

    >>> r = evaluate_neovision2("sample_data/boxes/neovision2/truth",
    ...                         "sample_data/boxes/neovision2/results")
    >>> car = r.classes["Car"]
    >>> car.n_reference, car.true_positives, car.missed, car.false_positives
    (67, 59, 8, 15)
    >>> round(car.nmotda, 4), round(1 - (8 + 15) / 67, 4)
    (0.6567, 0.6567)
    """
    for name, value in (("iou_threshold", iou_threshold), ("dcr_threshold", dcr_threshold),
                        ("merge_threshold", merge_threshold)):
        if not 0.0 < value <= 1.0 and not (name != "iou_threshold" and value == 0.0):
            raise InputError(f"{name} must be in (0, 1], got {value}")
    if roc_max_fppf is not None and not roc_max_fppf > 0:
        raise InputError(f"roc_max_fppf must be positive, got {roc_max_fppf}")
    gt = reference if isinstance(reference, Neovision2Boxes) else read_neovision2(
        reference, dont_care=True)
    det = submission if isinstance(submission, Neovision2Boxes) else read_neovision2(
        submission, dont_care=False)
    data = prepare(gt, det, dcr_threshold)
    thresholds = tuple(float(t) for t in thresholds)
    domain_names = data.domain_names
    per_domain = len(domain_names) > 1 or domain_names[0] is not None
    cache = _all_counts(data, iou_threshold, merge_threshold, thresholds)
    sequences = _sequence_table(data, cache, cost_miss, cost_false_positive)
    overall = _scores(data, None, cost_miss, cost_false_positive, thresholds, roc_max_fppf,
                      cache)
    domains = {}
    if per_domain:
        for k, name in enumerate(domain_names):
            domains[name if name is not None else "(none)"] = _scores(
                data, k, cost_miss, cost_false_positive, thresholds, roc_max_fppf, cache)
    settings = {
        "iou_threshold": iou_threshold,
        "dcr_threshold": dcr_threshold,
        "merge_threshold": merge_threshold,
        "cost_miss": cost_miss,
        "cost_false_positive": cost_false_positive,
        "roc_thresholds": list(thresholds),
        "roc_max_fppf": roc_max_fppf,
    }
    return Neovision2Result(
        overall=overall,
        domains=domains,
        settings=settings,
        dont_care=data.dont_care,
        reference_path=gt.path,
        submission_path=det.path,
        warnings=tuple(data.warnings),
        sequences=sequences,
    )


# --- matching -----------------------------------------------------------------


def _candidates(
    g_group: np.ndarray, g_boxes: np.ndarray, d_group: np.ndarray, d_boxes: np.ndarray,
    iou_threshold: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs of one group with ``IoU ≥ iou_threshold`` and their IoU."""
    from geoeval.overlap import box_pair_areas, iou_from_union

    i, j = overlapping_pairs(g_group, g_boxes, d_group, d_boxes)
    inter, union = box_pair_areas(g_boxes, d_boxes, i, j)
    iou = iou_from_union(inter, union)
    keep = at_least(inter, union, iou_threshold) & (inter > 0)
    return i[keep], j[keep], iou[keep]


def _assign(
    i: np.ndarray, j: np.ndarray, iou: np.ndarray, care: np.ndarray, n_g: int, n_d: int,
    d_group: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One-to-one assignment maximising ``2·TP + D`` then total IoU.

    Returns ``gt_hit`` (each ground-truth row matched) and ``det_state`` (0 false
    positive, 1 true positive, 2 matched to a don't-care object).
    """
    from geoeval.matching.assignment import max_weight_matching

    gt_hit = np.zeros(n_g, dtype=bool)
    state = np.zeros(n_d, dtype=np.int8)
    if i.size == 0:
        return gt_hit, state
    # L exceeds the total IoU of any matching inside one group, so the integer
    # part (2 per true positive, 1 per don't-care match) always decides first
    big = float(np.bincount(d_group[j]).max()) + 1.0
    w = np.where(care[i], 2.0 * big, big) + iou
    chosen = max_weight_matching(i, j, w, n_g, n_d)
    ci, cj = i[chosen], j[chosen]
    gt_hit[ci] = True
    state[cj] = np.where(care[ci], 1, 2)
    return gt_hit, state


def _count(
    gt_hit: np.ndarray, state: np.ndarray, g_key: np.ndarray, g_care: np.ndarray,
    d_key: np.ndarray, n_keys: int,
) -> np.ndarray:
    """Counts per key: ground truth, detections, TP, FP, ignored (rows of a 5 × K array)."""
    care_key = g_key[g_care]
    return np.stack([
        np.bincount(care_key, minlength=n_keys),
        np.bincount(d_key, minlength=n_keys),
        np.bincount(care_key, weights=gt_hit[g_care], minlength=n_keys),
        np.bincount(d_key, weights=state == 0, minlength=n_keys),
        np.bincount(d_key, weights=state == 2, minlength=n_keys),
    ]).astype(np.int64)


def _merge(
    frame: np.ndarray, boxes: np.ndarray, conf: np.ndarray, merge_threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Detection only (§3.3): merge identical boxes and boxes with IoU > threshold.

    The merged boxes are the connected components of the graph linking two
    detections of one frame that are identical or overlap with
    ``IoU > merge_threshold`` (one pass); each component becomes the envelope
    of its boxes, with the largest confidence of its members.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from geoeval.overlap import box_pair_areas

    n = frame.size
    if n == 0:
        return frame, boxes, conf
    i, j = overlapping_pairs(frame, boxes, frame, boxes)
    keep = i < j
    i, j = i[keep], j[keep]
    inter, union = box_pair_areas(boxes, boxes, i, j)
    link = above(inter, union, merge_threshold) | np.all(boxes[i] == boxes[j], axis=1)
    adj = coo_matrix((np.ones(int(link.sum())), (i[link], j[link])), shape=(n, n))
    _, comp = connected_components(adj, directed=False)
    order = np.argsort(comp, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(comp[order]) != 0])
    b = boxes[order]
    merged = np.stack([
        np.minimum.reduceat(b[:, 0], starts), np.minimum.reduceat(b[:, 1], starts),
        np.maximum.reduceat(b[:, 2], starts), np.maximum.reduceat(b[:, 3], starts),
    ], axis=1)
    return frame[order][starts], merged, np.maximum.reduceat(conf[order], starts)


def _score_counts(
    data: Prepared, min_conf: float | None, iou_threshold: float, merge_threshold: float,
    cand: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> tuple[np.ndarray, np.ndarray]:
    """Counts per (sequence, class) and per sequence (detection only) at one threshold."""
    n_seq, n_cls = len(data.sequence_names), len(data.classes)
    keep_d = np.ones(data.d_frame.size, dtype=bool) if min_conf is None else (
        data.d_conf >= min_conf)
    # class-aware: ground truth rows expanded so class-less don't-care objects
    # join every class, groups = (frame, class)
    gi, dj, iou, ge_class, ge_row = cand
    e_keep = keep_d[dj]
    care = data.g_care[ge_row]
    hit, state = _assign(gi[e_keep], dj[e_keep], iou[e_keep], care, ge_row.size,
                         data.d_frame.size, data.d_frame)
    g_key = data.g_seq[ge_row] * n_cls + ge_class
    d_key = data.d_seq * n_cls + data.d_class
    counts = _count(hit, state[keep_d], g_key, care, d_key[keep_d], n_seq * n_cls)
    # detection only: labels ignored, boxes merged per frame
    mf, mb, _ = _merge(data.d_frame[keep_d], data.d_boxes[keep_d], data.d_conf[keep_d],
                       merge_threshold)
    m_seq = _frame_sequence(data, mf)
    i, j, iou2 = _candidates(data.g_frame, data.g_boxes, mf, mb, iou_threshold)
    hit2, state2 = _assign(i, j, iou2, data.g_care, data.g_frame.size, mf.size, mf)
    det_only = _count(hit2, state2, data.g_seq, data.g_care, m_seq, n_seq)
    return counts, det_only


def _frame_sequence(data: Prepared, frames: np.ndarray) -> np.ndarray:
    """Sequence of each frame code (a frame code belongs to one sequence)."""
    lut = np.zeros(int(max(data.g_frame.max(initial=-1), data.d_frame.max(initial=-1))) + 1,
                   dtype=np.int64)
    lut[data.g_frame] = data.g_seq
    lut[data.d_frame] = data.d_seq
    return lut[frames]


def _class_candidates(
    data: Prepared, iou_threshold: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Candidate pairs per (frame, class), with class-less don't-care objects expanded."""
    n_cls = len(data.classes)
    own = np.flatnonzero(data.g_class >= 0)
    anyc = np.flatnonzero(data.g_class < 0)
    ge_row = np.concatenate([own, np.repeat(anyc, n_cls)])
    ge_class = np.concatenate([data.g_class[own], np.tile(np.arange(n_cls), anyc.size)])
    n_f = int(max(data.g_frame.max(initial=-1), data.d_frame.max(initial=-1))) + 1
    g_group = data.g_frame[ge_row] + n_f * ge_class
    d_group = data.d_frame + n_f * data.d_class
    i, j, iou = _candidates(g_group, data.g_boxes[ge_row], d_group, data.d_boxes, iou_threshold)
    return i, j, iou, ge_class.astype(np.int64), ge_row.astype(np.int64)


# --- scores ---------------------------------------------------------------------


def _nmotda(c: np.ndarray, cost_miss: float, cost_fp: float,
            per_seq: np.ndarray | None = None) -> NmotdaScore:
    """Score of a count vector ``c`` (5,), with the per-sequence counts ``per_seq`` (5, S)."""
    n_g, n_d, tp, fp, ign = (int(x) for x in c)
    missed = n_g - tp
    value = None if n_g == 0 else 1.0 - (cost_miss * missed + cost_fp * fp) / n_g
    n_s, mean, median = 0, None, None
    if per_seq is not None:
        v = _nmotda_values(per_seq, cost_miss, cost_fp)
        v = v[np.isfinite(v)]
        n_s = int(v.size)
        if n_s:
            mean, median = float(np.mean(v)), float(np.median(v))
    return NmotdaScore(n_g, n_d, tp, missed, fp, ign, value, n_s, mean, median)


def _nmotda_values(c: np.ndarray, cost_miss: float, cost_fp: float) -> np.ndarray:
    """NMOTDA of each column of a (5, K) count array; NaN where there is no ground truth."""
    n_g = c[0].astype(float)
    err = cost_miss * (c[0] - c[2]) + cost_fp * c[3]
    out = np.full(n_g.shape, np.nan)
    np.divide(err, n_g, out=out, where=n_g > 0)
    return np.where(n_g > 0, 1.0 - out, np.nan)


def _combine(scores: list[NmotdaScore]) -> tuple[float | None, float | None, float | None]:
    """Weighted mean, mean and median of the defined class scores (§3.4)."""
    v = np.array([s.nmotda for s in scores if s.nmotda is not None], dtype=float)
    n = np.array([s.n_reference for s in scores if s.nmotda is not None], dtype=float)
    if v.size == 0:
        return None, None, None
    return float(np.sum(n * v) / np.sum(n)), float(np.mean(v)), float(np.median(v))


def _az(fppf: list[float | None], rate: list[float | None], fmax: float | None) -> tuple:
    """Normalised area under detection rate vs FPPF, from (0, 0) through the points."""
    pts = [(f, r) for f, r in zip(fppf, rate, strict=True) if f is not None and r is not None]
    if not pts:
        return None, None
    x = np.array([0.0] + [p[0] for p in pts])
    y = np.array([0.0] + [p[1] for p in pts])
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    top = float(x.max()) if fmax is None else float(fmax)
    if top <= 0:
        return float(y.max()), 0.0
    if x[-1] < top:  # hold the last detection rate up to the end of the axis
        x, y = np.r_[x, top], np.r_[y, y[-1]]
    inside = x <= top
    xi, yi = x[inside], y[inside]
    if xi[-1] < top:  # clip: interpolate at the end of the axis
        k = np.searchsorted(x, top)
        yt = y[k - 1] + (y[k] - y[k - 1]) * (top - x[k - 1]) / (x[k] - x[k - 1])
        xi, yi = np.r_[xi, top], np.r_[yi, yt]
    area = float(np.sum((xi[1:] - xi[:-1]) * (yi[1:] + yi[:-1]) / 2.0))
    return area / top, top


def _roc(
    thresholds: tuple[float, ...], rows: list[np.ndarray], n_frames: int,
    roc_max_fppf: float | None,
) -> RocCurve:
    """ROC of one class/domain from its count vectors at each threshold."""
    tp = tuple(int(r[2]) for r in rows)
    fp = tuple(int(r[3]) for r in rows)
    n_g = int(rows[0][0]) if rows else 0
    rate = tuple(None if n_g == 0 else t / n_g for t in tp)
    fppf = tuple(None if n_frames == 0 else f / n_frames for f in fp)
    az, top = _az(list(fppf), list(rate), roc_max_fppf)
    return RocCurve(thresholds, tp, fp, rate, fppf, az, top)


def _scores(
    data: Prepared, domain: int | None, cost_miss: float, cost_fp: float,
    thresholds: tuple[float, ...],
    roc_max_fppf: float | None, cache: dict[str, Any],
) -> Neovision2Scores:
    n_seq, n_cls = len(data.sequence_names), len(data.classes)
    seqs = (np.arange(n_seq) if domain is None
            else np.flatnonzero(data.seq_domain == domain))

    def cls_counts(c: np.ndarray) -> np.ndarray:  # (5, n_seq * n_cls) -> (5, n_cls)
        return c.reshape(5, n_seq, n_cls)[:, seqs, :].sum(axis=1)

    def det_counts(c: np.ndarray) -> np.ndarray:
        return c[:, seqs].sum(axis=1)

    main_c, main_d = cache["main"]
    per_class = cls_counts(main_c)
    per_seq_class = main_c.reshape(5, n_seq, n_cls)[:, seqs, :]
    classes = {name: _nmotda(per_class[:, k], cost_miss, cost_fp, per_seq_class[:, :, k])
               for k, name in enumerate(data.classes)}
    det_only = _nmotda(det_counts(main_d), cost_miss, cost_fp, main_d[:, seqs])
    weighted, mean, median = _combine(list(classes.values()))
    n_frames = int(data.frames_per_seq[seqs].sum())
    sweeps = cache["roc"]
    roc = {name: _roc(thresholds, [cls_counts(c)[:, k] for c, _ in sweeps], n_frames,
                      roc_max_fppf)
           for k, name in enumerate(data.classes)}
    roc_det = _roc(thresholds, [det_counts(d) for _, d in sweeps], n_frames, roc_max_fppf)
    return Neovision2Scores(n_frames, classes, det_only, weighted, roc, roc_det, mean, median)


def _sequence_table(
    data: Prepared, cache: dict[str, Any], cost_miss: float, cost_fp: float
) -> dict[str, dict[str, Any]]:
    """NMOTDA of every sequence: per class and detection only (``None`` without ground truth)."""
    n_seq, n_cls = len(data.sequence_names), len(data.classes)
    main_c, main_d = cache["main"]
    per_cls = _nmotda_values(main_c, cost_miss, cost_fp).reshape(n_seq, n_cls)
    det = _nmotda_values(main_d, cost_miss, cost_fp)

    return {
        name: {
            "n_frames": int(data.frames_per_seq[s]),
            "n_reference": int(main_d[0, s]),
            "detection_only": number(det[s]),
            "classes": {c: number(per_cls[s, k]) for k, c in enumerate(data.classes)},
        }
        for s, name in enumerate(data.sequence_names)
    }


def _all_counts(
    data: Prepared, iou_threshold: float, merge_threshold: float, thresholds: tuple[float, ...]
) -> dict[str, Any]:
    """Counts of every (sequence, class) cell: all detections, then each ROC threshold."""
    cand = _class_candidates(data, iou_threshold)
    return {
        "main": _score_counts(data, None, iou_threshold, merge_threshold, cand),
        "roc": [_score_counts(data, t, iou_threshold, merge_threshold, cand)
                for t in thresholds],
    }

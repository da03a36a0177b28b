"""The ROBIN challenge: detection (criterion G, precision/recall, R*, P*, EER, AUC).

Follows D'Angelo, Herbin, Ratiéville, *ROBIN Challenge: Evaluation principles
and metrics* (2006), §4.1. Categorisation (§4.2) is in
:mod:`geoeval.challenges.robin_categories`. Choices where the paper is silent
are listed in ``docs/robin.md``.

All pairs of one image are scored at once for the whole data set
(:func:`geoeval.challenges._pairs.group_pairs`, dense per image only), and the
one-to-one association of every image is one call to
:func:`geoeval.matching.assignment.max_weight_matching`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.encoding import number
from geoeval.errors import InputError
from geoeval.io.boxes import BoxSet, align_images, read_boxes
from geoeval.measures.localization.boxes import robin_measures
from geoeval.reprs import listed, warned
from geoeval.reprs import number as rn
from geoeval.thresholds import at_most

__all__ = ["robin_measures", "evaluate_robin", "match_robin", "operating_points",
           "resolve_thresholds"]

#: Threshold presets (ε1, ε2, ε3) of §4.1.2, note 1.
PRESETS: dict[str, tuple[float, float, float]] = {
    "rough": (0.15, 0.5, 0.15),
    "precise": (0.05, 0.2, 0.05),
}

BoxInput = str | Path | BoxSet


# m1, m2, m3: :func:`geoeval.measures.localization.boxes.robin_measures`, the one
# implementation (the localisation metrics ROB_loc, ROB_com, ROB_cor use it too)


def resolve_thresholds(
    preset: str | None = "rough",
    eps1: float | None = None,
    eps2: float | None = None,
    eps3: float | None = None,
) -> tuple[float, float, float]:
    """(ε1, ε2, ε3) from a preset, each value overridable."""
    if preset is None:
        if None in (eps1, eps2, eps3):
            raise InputError("without a preset give all of eps1, eps2, eps3")
        base = (0.0, 0.0, 0.0)
    elif preset not in PRESETS:
        raise InputError(f"unknown ROBIN preset {preset!r} (expected rough or precise)")
    else:
        base = PRESETS[preset]
    eps = tuple(b if e is None else float(e) for b, e in zip(base, (eps1, eps2, eps3),
                                                             strict=True))
    for k, e in enumerate(eps, 1):
        if not 0.0 <= e < 1.0:
            raise InputError(f"eps{k} must be in [0, 1), got {e}")
    return eps  # type: ignore[return-value]


# --- reading -----------------------------------------------------------------


def _load(x: BoxInput, side: str, reader: dict[str, Any], like: BoxSet | None = None) -> BoxSet:
    if isinstance(x, BoxSet):
        return x
    return read_boxes(x, side=side, like=like, **reader)


def _check_ground_truth(gt: BoxSet) -> None:
    w = gt.boxes[:, 2] - gt.boxes[:, 0]
    h = gt.boxes[:, 3] - gt.boxes[:, 1]
    bad = np.flatnonzero((w <= 0) | (h <= 0))
    if bad.size:
        k = int(bad[0])
        where = f"line {int(gt.lines[k])}: " if gt.lines is not None else ""
        raise InputError(f"{where}ground-truth box {gt.boxes[k].tolist()} of image "
                         f"{gt.images[gt.image_index[k]]!r} has no width or height (m1 divides by "
                         "them)", gt.path)


# --- matching one run -----------------------------------------------------------


@dataclass(frozen=True)
class RobinMatch:
    """Accepted pairs and the chosen one-to-one association of one run.

    ``reference``, ``submission`` index the aligned reference (ground truth)
    and submission (detection) sets; ``m1``, ``m2``, ``m3`` are the measures
    of the chosen pairs.
    """

    reference: np.ndarray
    submission: np.ndarray
    m1: np.ndarray
    m2: np.ndarray
    m3: np.ndarray

    def __repr__(self) -> str:
        return f"<RobinMatch {len(self.reference)} pairs of reference and submitted boxes>"


def _accepted(
    gt: BoxSet, det: BoxSet, eps: tuple[float, float, float], points: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (gt, det) of one image accepted by G, with m1, m2, m3 (§4.1.2)."""
    from geoeval.challenges._pairs import group_pairs

    d, g = group_pairs(det.image_index, gt.image_index)
    m1, m2, m3 = robin_measures(det.boxes[d], gt.boxes[g])
    db = det.boxes[d]
    is_point = (db[:, 2] == db[:, 0]) & (db[:, 3] == db[:, 1])
    if points:
        is_point[:] = True
    # m2 is a ratio of areas: "at most ε2" by geoeval's one rule (geoeval.thresholds)
    ok = (m1 <= eps[0]) & (is_point | (at_most(m2, 1.0, eps[1]) & (m3 <= eps[2])))
    return g[ok], d[ok], m1[ok], m2[ok], m3[ok]


def match_robin(
    reference: BoxSet, submission: BoxSet, eps: tuple[float, float, float], *,
    points: bool = False
) -> RobinMatch:
    """Maximum-cardinality one-to-one association among the pairs accepted by G.

    ``reference`` and ``submission`` are on one image list
    (:func:`~geoeval.io.boxes.align_images`).

    Notes
    -----
    Conditions (2) of §4.1.1 with the largest number of true detections; among
    the maximum associations the one with the smallest total ``m1`` (edge
    weight ``2 − m1``) is kept, so each detection goes to the reference whose
    centre it hits best. The TP count does not depend on that choice.
    """
    from geoeval.matching.assignment import max_weight_matching

    g, d, m1, m2, m3 = _accepted(reference, submission, eps, points)
    chosen = max_weight_matching(g, d, 2.0 - m1, len(reference), len(submission),
                                 cardinality_first=True)
    return RobinMatch(g[chosen], d[chosen], m1[chosen], m2[chosen], m3[chosen])


def _sweep_tp(gt: BoxSet, det: BoxSet, eps: tuple[float, float, float], points: bool
              ) -> tuple[np.ndarray, np.ndarray]:
    """True detections of every confidence cut, from one matching.

    Returns the distinct confidences (descending) and, for each, TP of the
    detections with confidence ≥ it.

    Notes
    -----
    The detections that can be matched together form a transversal matroid,
    so a maximum-weight matching with weights decreasing with confidence
    matches, among the ``k`` most confident detections, as many as any
    matching of those ``k`` alone can (greedy property of matroids): one
    Hungarian solve gives the whole curve.
    """
    matched = _sweep_matched(gt, det, eps, points)
    return _cut_counts(det.scores, matched)


def _sweep_matched(gt: BoxSet, det: BoxSet, eps: tuple[float, float, float], points: bool
                   ) -> np.ndarray:
    """Detections matched by one matching valid for every confidence cut (see :func:`_sweep_tp`)."""
    from geoeval.matching.assignment import max_weight_matching

    g, d, _, _, _ = _accepted(gt, det, eps, points)
    order = np.argsort(-det.scores, kind="stable")
    rank = np.empty(len(det), dtype=np.int64)
    rank[order] = np.arange(len(det))
    chosen = max_weight_matching(g, d, (len(det) - rank[d]).astype(float), len(gt), len(det))
    matched = np.zeros(len(det), dtype=bool)
    matched[d[chosen]] = True
    return matched


def _cut_counts(scores: np.ndarray, matched: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct confidences (descending) and the matched count at or above each."""
    order = np.argsort(-scores, kind="stable")
    levels, first = np.unique(-scores[order], return_index=True)
    last = np.r_[first[1:], scores.size] - 1
    tp = np.cumsum(matched[order])[last]
    return -levels, tp


# --- results --------------------------------------------------------------------


@dataclass(frozen=True)
class RobinRun:
    """Detection counts of one run (one DET input at its full detection set).

    Per image: ``image_tp``, ``image_n`` (detections N), ``image_n_star``
    (references N*), the one-sided binomial p-values of the image's recall and
    precision under the run's global rates, and the ``difficult`` flag.
    """

    path: str
    tp: int
    n: int
    n_star: int
    precision: float | None
    recall: float | None
    images: tuple[str, ...]
    image_tp: np.ndarray
    image_n: np.ndarray
    image_n_star: np.ndarray
    p_recall: np.ndarray
    p_precision: np.ndarray
    difficult: np.ndarray
    match: RobinMatch

    def __repr__(self) -> str:
        return (f"<RobinRun {self.path}: precision {rn(self.precision)}, recall "
                f"{rn(self.recall)}; {self.tp} TP of {self.n} detections, {self.n_star} "
                f"reference boxes, {len(self.images)} images>")

    def to_dict(self, images: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path, "tp": self.tp, "n": self.n, "n_star": self.n_star,
            "precision": self.precision, "recall": self.recall,
            "difficult_images": [self.images[k] for k in np.flatnonzero(self.difficult)],
        }
        if images:
            out["images"] = {
                key: {
                    "tp": int(self.image_tp[k]), "n": int(self.image_n[k]),
                    "n_star": int(self.image_n_star[k]),
                    "p_recall": number(self.p_recall[k]),
                    "p_precision": number(self.p_precision[k]),
                    "difficult": bool(self.difficult[k]),
                }
                for k, key in enumerate(self.images)
            }
        return out


@dataclass(frozen=True)
class OperatingPoint:
    """One point of the precision/recall curve (a confidence cut or a run)."""

    precision: float
    recall: float
    tp: int
    n: int
    threshold: float | None = None
    run: int | None = None


@dataclass(frozen=True)
class CategoryDetection:
    """Detection indices of one category's detector (§4.2.4, "categorization as
    multiple detections"): the category's ground truth against the outputs
    carrying its label.

    ``tp``, ``n``, ``n_star``, ``precision``, ``recall`` are those of the first
    run at its full output set (eqs. 3, 4; ``None`` when a denominator is 0);
    ``curve`` and ``r_star``, ``p_star``, ``eer``, ``auc`` as in
    :class:`RobinResult`, for this category alone.
    """

    tp: int
    n: int
    n_star: int
    precision: float | None
    recall: float | None
    curve: tuple[OperatingPoint, ...]
    r_star: float | None
    p_star: float | None
    eer: float | None
    auc: float | None

    def __repr__(self) -> str:
        return (f"<CategoryDetection precision {rn(self.precision)}, recall {rn(self.recall)}"
                f" ({self.tp} TP of {self.n} detections, {self.n_star} reference boxes); R* "
                f"{rn(self.r_star)}, P* {rn(self.p_star)}, EER {rn(self.eer)}, AUC "
                f"{rn(self.auc)}>")

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, curve=[p.__dict__ for p in self.curve])


def first_run(name: str, doc: str) -> property:
    """A result's read-only attribute ``name`` of its first run (the submission as given)."""
    return property(lambda self: getattr(self.runs[0], name), doc=doc)


@dataclass(frozen=True)
class RobinResult:
    """Result of :func:`evaluate_robin`; ``to_dict()`` is the JSON report."""

    eps: tuple[float, float, float]
    preset: str | None
    runs: tuple[RobinRun, ...]
    curve: tuple[OperatingPoint, ...]
    curve_source: str
    r_star: float | None
    p_star: float | None
    eer: float | None
    auc: float | None
    difficult_alpha: float
    reference_path: str
    warnings: tuple[str, ...] = field(default_factory=tuple)
    categories: dict[str, CategoryDetection] = field(default_factory=dict)

    def __repr__(self) -> str:
        first = self.runs[0]
        cats = f"; categories {listed(list(self.categories), 4)}" if self.categories else ""
        return (f"<RobinResult ε = {', '.join(f'{e:g}' for e in self.eps)}, "
                f"{len(self.runs)} run{'s' if len(self.runs) != 1 else ''}: precision "
                f"{rn(first.precision)}, recall {rn(first.recall)} (first run); R* "
                f"{rn(self.r_star)}, P* {rn(self.p_star)}, EER {rn(self.eer)}, AUC "
                f"{rn(self.auc)}{cats}{warned(self.warnings)}>")

    precision = first_run("precision", "Precision of the first run at its full output set.")
    recall = first_run("recall", "Recall of the first run at its full output set.")

    def to_dict(self, images: bool = True) -> dict[str, Any]:
        return {
            "protocol": "robin",
            "reference": self.reference_path,
            "preset": self.preset,
            "eps": list(self.eps),
            "precision": self.precision,
            "recall": self.recall,
            "r_star": self.r_star,
            "p_star": self.p_star,
            "eer": self.eer,
            "auc": self.auc,
            "curve_source": self.curve_source,
            "curve": [p.__dict__ for p in self.curve],
            "difficult_alpha": self.difficult_alpha,
            "runs": [r.to_dict(images) for r in self.runs],
            "categories": {c: v.to_dict() for c, v in self.categories.items()},
            "warnings": list(self.warnings),
        }


def _ratio(a: int, b: int) -> float | None:
    return None if b == 0 else a / b


# --- public entry -----------------------------------------------------------------


def evaluate_robin(
    reference: BoxInput,
    submissions: BoxInput | Sequence[BoxInput],
    *,
    preset: str | None = "rough",
    eps1: float | None = None,
    eps2: float | None = None,
    eps3: float | None = None,
    points: bool = False,
    difficult_alpha: float = 0.05,
    per_category: bool = False,
    **reader: Any,
) -> RobinResult:
    """ROBIN detection evaluation (§4.1): G, TP per image, precision, recall, R*, P*, EER, AUC.

    Parameters
    ----------
    reference : path or BoxSet
        Reference (ground-truth) boxes (any format of :func:`geoeval.io.boxes.read_boxes`).
        Class labels are ignored: detection compares locations only.
    submissions : path or BoxSet, or a sequence of them
        The detections of one run, or several runs (operating points of one algorithm, §4.3.2
        "Decision without confidence coefficient").
    preset : {'rough', 'precise'} or None
        ε1, ε2, ε3 = 0.15, 0.5, 0.15 (rough) or 0.05, 0.2, 0.05 (precise)
        (§4.1.2 note 1); ``eps1``..``eps3`` override single values.
    points : bool
        Treat every detection as an access point (its box centre): G uses m1
        only (§4.1.2 note 2). A zero-size detection box is always a point.
    difficult_alpha : float
        Significance level of the difficult-image test (see Notes).
    per_category : bool
        Also evaluate each category as its own detector (§4.2.4): the
        ground truth of category ``c`` against the detections labelled ``c``,
        associated per image and category by G; ``result.categories``.
    **reader
        Passed to :func:`read_boxes` (``fmt``, ``box_format``, ``image_size``…).

    Returns
    -------
    RobinResult

    Notes
    -----
    ``TP(I)`` is the size of a maximum one-to-one association among the pairs
    with ``G = 1`` (eq. 2); ``Precision = Σ_I TP(I) / Σ_I N(I)`` (eq. 3),
    ``Recall = Σ_I TP(I) / Σ_I N*(I)`` (eq. 4); ``None`` when the denominator
    is 0.

    Curve: with one run whose detections all carry a confidence α, one point
    per distinct α (detections with ``α ≥`` it, i.e. λ just below it, §4.1.3);
    otherwise one point per run. ``R*``: the largest recall among the points of
    maximal precision; ``P*``: the largest precision among the points of
    maximal recall; ``EER``: the first place (by increasing recall) where
    ``P − R`` is 0 or changes sign between consecutive points (linear
    interpolation), points with no true detection (``P = R = 0``) left out,
    ``None`` if it never happens; ``AUC``: the
    trapezoidal area under precision against recall, points sorted by recall
    (ties: higher precision first), extended from the first point to recall 0
    at its precision; ``None`` with fewer than two points.

    Difficult image (§4.1.1: compare ``TP``, ``N``, ``N*`` with the global
    ratios): an image is difficult when ``P(X ≤ TP(I))`` is below
    ``difficult_alpha`` for ``X ~ Binomial(N*(I), Recall)`` or for
    ``X ~ Binomial(N(I), Precision)`` — far fewer true detections than the
    average performance predicts.

    References
    ----------
    E. D'Angelo, S. Herbin, M. Ratiéville, *ROBIN Challenge: Evaluation
    principles and metrics*, 2006, §4.1 (eqs. 1–4).

    Examples
    --------
    Folders or box sets read already (:func:`geoeval.io.boxes.read_boxes`); two
    cars, one found:

    >>> from geoeval.io.boxes import BoxSet
    >>> import numpy as np
    >>> gt = BoxSet(np.array([[10., 10, 50, 40], [60, 10, 90, 40]]), np.zeros(2, np.int64),
    ...             np.array(["car", "car"]), ("img1",))
    >>> run = BoxSet(np.array([[12., 10, 52, 40]]), np.zeros(1, np.int64), np.array(["car"]),
    ...              ("img1",), scores=np.array([0.9]))
    >>> r = evaluate_robin(gt, run, preset="precise")
    >>> r.precision, r.recall
    (1.0, 0.5)
    """
    eps = resolve_thresholds(preset, eps1, eps2, eps3)
    if not 0.0 < difficult_alpha < 1.0:
        raise InputError(f"difficult_alpha must be in (0, 1), got {difficult_alpha}")
    gt0 = _load(reference, "reference", reader)
    _check_ground_truth(gt0)
    dets = _as_list(submissions)
    if not dets:
        raise InputError("no submission (detection run) given")
    warnings: list[str] = list(gt0.warnings)  # the readers' (boxes outside the image, …)
    runs: list[RobinRun] = []
    aligned: list[tuple[BoxSet, BoxSet]] = []
    for x in dets:
        det = _load(x, "submission", reader, like=gt0)
        warnings.extend(det.warnings)
        gt, det = align_images(gt0, det)
        aligned.append((gt, det))
        runs.append(_run(gt, det, eps, points, difficult_alpha))
        extra = sorted(set(det.images) - set(gt0.images))
        if extra:
            warnings.append(f"{det.path}: {len(extra)} image(s) without ground truth, e.g. "
                            f"{extra[0]!r} (all their detections are false)")
    gt, det = aligned[0]
    sweep = len(runs) == 1 and det.scores is not None and len(det) > 0 and bool(
        np.all(np.isfinite(det.scores)))
    if sweep:
        levels, tp = _sweep_tp(gt, det, eps, points)
        n = np.searchsorted(np.sort(-det.scores), -levels, side="right")
        curve = tuple(
            OperatingPoint(t / k, _ratio(t, len(gt)) or 0.0, int(t), int(k), float(v))
            for v, t, k in zip(levels, tp, n, strict=True))
        if len(gt) == 0:
            curve = ()
        source = "confidence"
    else:
        curve = tuple(
            OperatingPoint(r.precision, r.recall, r.tp, r.n, None, k)
            for k, r in enumerate(runs) if r.precision is not None and r.recall is not None)
        source = "runs"
    r_star, p_star, eer, auc = operating_points(
        [p.precision for p in curve], [p.recall for p in curve])
    categories = _per_category(aligned, eps, points, sweep) if per_category else {}
    return RobinResult(
        eps=eps, preset=preset if (eps1, eps2, eps3) == (None, None, None) else None,
        runs=tuple(runs), curve=curve, curve_source=source, r_star=r_star, p_star=p_star,
        eer=eer, auc=auc, difficult_alpha=difficult_alpha, reference_path=gt0.path,
        warnings=tuple(warnings), categories=categories,
    )


def _per_category(
    aligned: list[tuple[BoxSet, BoxSet]], eps: tuple[float, float, float], points: bool,
    sweep: bool,
) -> dict[str, CategoryDetection]:
    """Each category as a detector (§4.2.4), all categories in one matching per run.

    The group of a box becomes (image, category), so G and the one-to-one
    association only pair a reference with an output of its own category; the
    groups are disjoint, so each category's counts are those of matching it
    alone. With a confidence sweep, the single matching of :func:`_sweep_tp`
    is valid for every cut of every category (a direct sum of matroids).
    """
    from dataclasses import replace

    labels = np.concatenate([aligned[0][0].classes.astype(str)]
                            + [d.classes.astype(str) for _, d in aligned])
    cats = np.unique(labels)
    k = cats.size

    def by_category(b: BoxSet) -> tuple[BoxSet, np.ndarray]:
        code = np.searchsorted(cats, b.classes.astype(str)).astype(np.int64)
        return replace(b, image_index=b.image_index * k + code), code

    counts = []  # per run: tp, n, n_star per category
    first: tuple[BoxSet, BoxSet, np.ndarray, np.ndarray] | None = None
    for gt, det in aligned:  # one matching per run (a few runs), not per category
        gt_c, g_code = by_category(gt)
        det_c, d_code = by_category(det)
        m = match_robin(gt_c, det_c, eps, points=points)
        counts.append(np.stack([np.bincount(g_code[m.reference], minlength=k),
                                np.bincount(d_code, minlength=k),
                                np.bincount(g_code, minlength=k)]))
        if first is None:
            first = (gt_c, det_c, g_code, d_code)
    assert first is not None
    matched = None
    if sweep:
        gt_c, det_c, _, d_code = first
        matched = _sweep_matched(gt_c, det_c, eps, points)
    out: dict[str, CategoryDetection] = {}
    for c, name in enumerate(cats.tolist()):  # one summary per category
        tp, n, ns = (int(x) for x in counts[0][:, c])
        if matched is not None:
            sel = d_code == c
            curve: tuple[OperatingPoint, ...] = ()
            if ns > 0 and sel.any():
                levels, tps = _cut_counts(first[1].scores[sel], matched[sel])
                nk = np.searchsorted(np.sort(-first[1].scores[sel]), -levels, side="right")
                curve = tuple(OperatingPoint(t / q, t / ns, int(t), int(q), float(v))
                              for v, t, q in zip(levels, tps, nk, strict=True))
        else:
            curve = tuple(
                OperatingPoint(int(r[0, c]) / int(r[1, c]), int(r[0, c]) / int(r[2, c]),
                               int(r[0, c]), int(r[1, c]), None, j)
                for j, r in enumerate(counts) if r[1, c] > 0 and r[2, c] > 0)
        r_star, p_star, eer, auc = operating_points(
            [p.precision for p in curve], [p.recall for p in curve])
        out[name] = CategoryDetection(tp, n, ns, _ratio(tp, n), _ratio(tp, ns), curve,
                                      r_star, p_star, eer, auc)
    return out


def _as_list(x: BoxInput | Sequence[BoxInput]) -> list[BoxInput]:
    if isinstance(x, str | Path | BoxSet):
        return [x]
    return list(x)


def _run(gt: BoxSet, det: BoxSet, eps: tuple[float, float, float], points: bool,
         alpha: float) -> RobinRun:
    from scipy.stats import binom

    match = match_robin(gt, det, eps, points=points)
    n_img = len(gt.images)
    tp_i = np.bincount(gt.image_index[match.reference], minlength=n_img)
    n_i = np.bincount(det.image_index, minlength=n_img)
    ns_i = np.bincount(gt.image_index, minlength=n_img)
    tp, n, ns = int(tp_i.sum()), int(n_i.sum()), int(ns_i.sum())
    precision, recall = _ratio(tp, n), _ratio(tp, ns)
    p_rec = np.full(n_img, np.nan)
    p_pre = np.full(n_img, np.nan)
    if recall is not None:
        has = ns_i > 0
        p_rec[has] = binom.cdf(tp_i[has], ns_i[has], recall)
    if precision is not None:
        has = n_i > 0
        p_pre[has] = binom.cdf(tp_i[has], n_i[has], precision)
    difficult = (np.nan_to_num(p_rec, nan=1.0) < alpha) | (np.nan_to_num(p_pre, nan=1.0) < alpha)
    return RobinRun(det.path, tp, n, ns, precision, recall, gt.images, tp_i, n_i, ns_i,
                    p_rec, p_pre, difficult, match)


def operating_points(
    precision: Sequence[float], recall: Sequence[float]
) -> tuple[float | None, float | None, float | None, float | None]:
    """R*, P*, EER and AUC of precision/recall points (§4.1.1, §4.3.1).

    For the EER crossing and the AUC the points are sorted by recall (ties:
    higher precision first), which is the order of a confidence sweep from high
    to low threshold. See :func:`evaluate_robin` for the definitions.

    Examples
    --------
    >>> [round(v, 4) for v in operating_points([1.0, 0.8, 0.5], [0.2, 0.6, 0.9])]
    [0.2, 0.5, 0.7, 0.755]
    """
    p = np.asarray(precision, dtype=float)
    r = np.asarray(recall, dtype=float)
    if p.size == 0:
        return None, None, None, None
    r_star = float(r[p == p.max()].max())
    p_star = float(p[r == r.max()].max())
    order = np.lexsort((-p, r))
    live = order[(p[order] > 0) | (r[order] > 0)]  # P = R = 0 (no true detection) is no EER
    eer = _crossing(p[live], r[live])
    auc = None
    if p.size >= 2:
        rs, ps = np.r_[0.0, r[order]], np.r_[p[order][0], p[order]]
        auc = float(np.sum((rs[1:] - rs[:-1]) * (ps[1:] + ps[:-1]) / 2.0))
    return r_star, p_star, eer, auc


def _crossing(a: np.ndarray, b: np.ndarray) -> float | None:
    """Value where ``a = b`` along consecutive points (linear), first crossing."""
    diff = a - b
    zero = np.flatnonzero(diff == 0)
    change = np.flatnonzero(np.sign(diff[1:]) * np.sign(diff[:-1]) < 0)
    first_zero = zero[0] if zero.size else None
    first_change = change[0] if change.size else None
    if first_zero is not None and (first_change is None or first_zero <= first_change):
        return float(a[first_zero])
    if first_change is None:
        return None
    k = first_change
    t = diff[k] / (diff[k] - diff[k + 1])
    return float(a[k] + t * (a[k + 1] - a[k]))

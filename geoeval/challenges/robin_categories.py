"""ROBIN categorisation (§4.2): confusion matrix η, D, U, D*, U*, EDU, rejection, ERR.

A *sample* is a ground-truth object. The categoriser's outputs are boxes with a
label (a category, ``Ambiguous`` or ``Other``) and optionally a confidence;
each sample gets the output associated with it by the ROBIN detection
association (criterion G, maximum one-to-one, :func:`match_robin`). Choices
where the paper is silent are listed in ``docs/robin.md``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.challenges.robin import (
    BoxInput,
    _as_list,
    _check_ground_truth,
    _crossing,
    _load,
    first_run,
    match_robin,
    resolve_thresholds,
)
from geoeval.errors import InputError
from geoeval.io.boxes import align_images
from geoeval.reprs import listed, warned
from geoeval.reprs import number as rn

AMBIGUOUS = "Ambiguous"
OTHER = "Other"
MISSING = "(missing)"
AMBIGUOUS_LABELS: frozenset[str] = frozenset({"ambiguous", "a"})
OTHER_LABELS: frozenset[str] = frozenset({"other", "o"})


@dataclass(frozen=True)
class CategoryRun:
    """Categorisation of one run at its submitted labels.

    ``counts[c*][c]`` is the number of samples of ground-truth category ``c*``
    given output ``c``; ``confusion[c*][c] = η(c, c*)`` divides by ``N(c*)``.
    Rows are the known categories (closed world); the ``Other`` ground-truth
    samples are kept for rejection only.
    """

    path: str
    categories: tuple[str, ...]
    outputs: tuple[str, ...]
    counts: dict[str, dict[str, int]]
    confusion: dict[str, dict[str, float]]
    n_samples: int
    n_other: int
    discrimination: float | None
    uncertainty: float | None
    rejection: float | None
    false_rejection: float | None
    false_acceptance: float | None
    unmatched_outputs: int

    def __repr__(self) -> str:
        return (f"<CategoryRun {self.path}: D {rn(self.discrimination)}, U "
                f"{rn(self.uncertainty)} over {self.n_samples} samples of "
                f"{len(self.categories)} categories ({self.n_other} Other)>")

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, categories=list(self.categories), outputs=list(self.outputs))


@dataclass(frozen=True)
class CategoryPoint:
    """One (D, U) operating point: a confidence threshold μ or a run."""

    discrimination: float
    uncertainty: float
    threshold: float | None = None
    run: int | None = None


@dataclass(frozen=True)
class ConfusionAt:
    """The confusion matrix at one chosen operating point.

    ``rule`` names the choice (``max_uncertainty``: §4.3.1 "confusion matrix
    at maximal uncertainty"; ``min_uncertainty``: §4.2.1, the point of ``D*``
    where U ≈ 0); ``threshold`` (μ, ``None`` for the labels as given) or
    ``run`` says which point; ``matrix`` holds its η, counts, D and U.
    """

    rule: str
    threshold: float | None
    run: int | None
    matrix: CategoryRun

    def to_dict(self) -> dict[str, Any]:
        m = self.matrix
        return {"rule": self.rule, "threshold": self.threshold, "run": self.run,
                "D": m.discrimination, "U": m.uncertainty, "outputs": list(m.outputs),
                "confusion": m.confusion, "counts": m.counts}


@dataclass(frozen=True)
class CategoriesResult:
    """Result of :func:`robin_categories`; ``to_dict()`` is the JSON report."""

    eps: tuple[float, float, float]
    runs: tuple[CategoryRun, ...]
    curve: tuple[CategoryPoint, ...]
    curve_source: str
    d_star: float | None
    u_star: float | None
    edu: float | None
    err: float | None
    reference_path: str
    warnings: tuple[str, ...] = field(default_factory=tuple)
    confusion_at: dict[str, ConfusionAt] = field(default_factory=dict)

    def __repr__(self) -> str:
        first = self.runs[0]
        return (f"<CategoriesResult {len(self.runs)} run{'s' if len(self.runs) != 1 else ''} "
                f"over {listed(first.categories, 4)}: D {rn(first.discrimination)}, U "
                f"{rn(first.uncertainty)} (first run); D* {rn(self.d_star)}, U* "
                f"{rn(self.u_star)}, EDU {rn(self.edu)}, ERR {rn(self.err)}"
                f"{warned(self.warnings)}>")

    discrimination = first_run("discrimination", "D of the first run at its submitted labels.")
    uncertainty = first_run("uncertainty", "U of the first run at its submitted labels.")

    def to_dict(self) -> dict[str, Any]:
        first = self.runs[0]
        return {
            "protocol": "robin-categories",
            "reference": self.reference_path,
            "eps": list(self.eps),
            "confusion": first.confusion,
            "counts": first.counts,
            "D": first.discrimination,
            "U": first.uncertainty,
            "D_star": self.d_star,
            "U_star": self.u_star,
            "EDU": self.edu,
            "rejection": first.rejection,
            "false_rejection": first.false_rejection,
            "false_acceptance": first.false_acceptance,
            "ERR": self.err,
            "curve_source": self.curve_source,
            "curve": [p.__dict__ for p in self.curve],
            "confusion_at": {k: v.to_dict() for k, v in self.confusion_at.items()},
            "runs": [r.to_dict() for r in self.runs],
            "warnings": list(self.warnings),
        }


def _normalise(labels: np.ndarray, ambiguous: set[str], other: set[str]) -> np.ndarray:
    """Map special labels to ``Ambiguous`` / ``Other`` (case-insensitive)."""
    out = labels.astype(object).copy()
    low = np.char.lower(np.char.strip(labels.astype(str)))
    out[np.isin(low, list(ambiguous))] = AMBIGUOUS
    out[np.isin(low, list(other))] = OTHER
    return out


def robin_categories(
    reference: BoxInput,
    submissions: BoxInput | Sequence[BoxInput],
    *,
    preset: str | None = "rough",
    eps1: float | None = None,
    eps2: float | None = None,
    eps3: float | None = None,
    known_categories: Iterable[str] | None = None,
    ambiguous_labels: Iterable[str] = AMBIGUOUS_LABELS,
    other_labels: Iterable[str] = OTHER_LABELS,
    **reader: Any,
) -> CategoriesResult:
    """ROBIN categorisation evaluation: η, D, U, D*, U*, EDU, rejection and ERR.

    Parameters
    ----------
    reference : path or BoxSet
        Reference (ground-truth) boxes with their categories. A category named ``Other``
        (or, when ``known_categories`` is given, any category outside it) is a
        category absent from the learning database: an outlier sample.
    submissions : path or BoxSet, or a sequence of them
        The categoriser's outputs (labelled boxes): one run, or several runs (operating
        points). Labels ``Ambiguous``/``A`` and ``Other``/``O`` (any case) are
        the two special outputs.
    preset, eps1, eps2, eps3 :
        Criterion G used to associate outputs with samples (as in
        :func:`evaluate_robin`).
    known_categories : iterable of str, optional
        The categories of the learning database.
    ambiguous_labels, other_labels : iterable of str
        Lower-case spellings of the special outputs.
    **reader
        Passed to :func:`geoeval.io.boxes.read_boxes`.

    Returns
    -------
    CategoriesResult

    Notes
    -----
    ROBIN §4.2, for the known categories ``c*`` (closed world):

    * ``η(c, c*) = (1/N(c*)) Σ_n 1_c(Y_n) 1_{c*}(Y*_n)``,
      ``π(c*) = N(c*) / Σ_c N(c)``;
    * ``D = Σ_{c*} π(c*) η(c*, c*)`` (the fraction of samples given their own
      category);
    * ``U = Σ_{c*} π(c*) η(A, c*)`` where, in discrimination, ``Other`` outputs
      count as ``Ambiguous`` (§4.2.1);
    * rejection (eq. 5) ``= (1/N(O)) Σ_n 1_O(Y_n) 1_O(Y*_n)``; false
      rejection = share of known samples labelled ``Other``; false acceptance =
      ``1 − rejection``.

    A sample with no associated output is counted in the column ``(missing)``
    (neither correct nor ambiguous). Operating points: with one run whose
    outputs all carry a confidence β, the thresholding policy of §4.2.2 (an
    output becomes ``Ambiguous`` when ``β ≤ μ``) at ``μ = −∞`` and at every
    distinct β; otherwise one point per run. ``D*`` = largest D among the
    points of least U; ``U*`` = least U among the points of largest D;
    ``EDU`` = where ``D = U`` along the points sorted by U (linear
    interpolation); ``ERR`` = where false rejection = false acceptance along
    the runs sorted by false rejection. ``None`` where a value is undefined.

    ``confusion_at`` holds the confusion matrix at two operating points of the
    curve, beside the matrix of the labels as given (``runs[0]``): §4.3.1
    lists the "confusion matrix at maximal uncertainty" (key
    ``max_uncertainty``: the point of largest U), while §4.2.1 says the
    discrimination "at minimal uncertainty rate (U ≈ 0) can be decomposed in a
    confusion matrix" (key ``min_uncertainty``: the point of least U, i.e. the
    point of ``D*``). Ties: the larger D, then the first point of the curve.

    References
    ----------
    E. D'Angelo, S. Herbin, M. Ratiéville, *ROBIN Challenge: Evaluation
    principles and metrics*, 2006, §4.2 (eq. 5) and §4.3.1.
    """
    eps = resolve_thresholds(preset, eps1, eps2, eps3)
    amb = {s.lower() for s in ambiguous_labels}
    oth = {s.lower() for s in other_labels}
    gt0 = _load(reference, "reference", reader)
    _check_ground_truth(gt0)
    if len(gt0) == 0:
        raise InputError("ground truth holds no sample", gt0.path)
    known = None if known_categories is None else {str(c) for c in known_categories}
    runs: list[CategoryRun] = []
    samples: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    warnings: list[str] = list(gt0.warnings)  # the readers' (boxes outside the image, …)
    for x in _as_list(submissions):
        out = _load(x, "submission", reader, like=gt0)
        warnings.extend(out.warnings)
        gt, out = align_images(gt0, out)
        match = match_robin(gt, out, eps)
        truth = _normalise(gt.classes, set(), oth)
        if known is not None:
            truth[~np.isin(truth.astype(str), list(known))] = OTHER
        given = np.full(len(gt), MISSING, dtype=object)
        given[match.reference] = _normalise(out.classes[match.submission], amb, oth)
        conf = np.full(len(gt), np.nan)
        if out.scores is not None:
            conf[match.reference] = out.scores[match.submission]
        unmatched = len(out) - match.submission.size
        runs.append(_category_run(out.path, truth, given, unmatched))
        samples.append((truth, given, conf, out.scores))
        if unmatched:
            warnings.append(f"{out.path}: {unmatched} output(s) associated with no sample "
                            "(ignored)")
        if (given == MISSING).any():
            warnings.append(f"{out.path}: {int((given == MISSING).sum())} sample(s) without "
                            "an output (column '(missing)')")
    truth, given, conf, scores = samples[0]
    sweep = len(runs) == 1 and scores is not None and scores.size > 0 and bool(
        np.all(np.isfinite(scores)))
    if sweep:
        curve = _sweep(truth, given, conf)
        source = "confidence"
    else:
        curve = tuple(CategoryPoint(r.discrimination, r.uncertainty, None, k)
                      for k, r in enumerate(runs)
                      if r.discrimination is not None and r.uncertainty is not None)
        source = "runs"
    d_star, u_star, edu = _du_points(curve)
    err = _err(runs)
    confusion_at = _confusion_at(curve, runs, samples[0])
    return CategoriesResult(eps, tuple(runs), curve, source, d_star, u_star, edu, err,
                            gt0.path, tuple(warnings), confusion_at)


def _confusion_at(
    curve: Sequence[CategoryPoint], runs: Sequence[CategoryRun],
    first: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None],
) -> dict[str, ConfusionAt]:
    """Confusion matrices at the points of largest and of least U (see :func:`robin_categories`)."""
    if not curve:
        return {}
    d = np.array([p.discrimination for p in curve])
    u = np.array([p.uncertainty for p in curve])
    truth, given, conf, _ = first
    out: dict[str, ConfusionAt] = {}
    for rule, target in (("max_uncertainty", u.max()), ("min_uncertainty", u.min())):
        cand = np.flatnonzero(u == target)
        k = int(cand[np.argmax(d[cand])])  # largest D, then the first point
        p = curve[k]
        if p.run is not None:
            matrix = runs[p.run]
        else:  # a point of the sweep: outputs with β ≤ μ become Ambiguous (§4.2.2)
            g = given.copy()
            if p.threshold is not None:
                decided = (g != AMBIGUOUS) & (g != OTHER) & (g != MISSING)
                g[decided & (conf <= p.threshold)] = AMBIGUOUS
            matrix = _category_run(runs[0].path, truth, g, runs[0].unmatched_outputs)
        out[rule] = ConfusionAt(rule, p.threshold, p.run, matrix)
    return out


def _category_run(path: str, truth: np.ndarray, given: np.ndarray, unmatched: int
                  ) -> CategoryRun:
    is_known = truth != OTHER
    cats = tuple(sorted(set(truth[is_known].astype(str).tolist())))
    specials = [AMBIGUOUS, OTHER, MISSING]
    rest = sorted(set(given.astype(str).tolist()) - set(cats) - set(specials))
    outs = cats + tuple(rest) + tuple(specials)
    t_idx = {c: i for i, c in enumerate(cats)}
    o_idx = {c: i for i, c in enumerate(outs)}
    tk = np.array([t_idx[c] for c in truth[is_known]], dtype=np.int64)
    ok = np.array([o_idx[c] for c in given[is_known]], dtype=np.int64)
    table = np.bincount(tk * len(outs) + ok, minlength=len(cats) * len(outs)).reshape(
        len(cats), len(outs))
    n_c = table.sum(axis=1)
    n = int(n_c.sum())
    counts = {c: {o: int(table[i, j]) for j, o in enumerate(outs)} for i, c in enumerate(cats)}
    confusion = {c: {o: float(table[i, j] / n_c[i]) for j, o in enumerate(outs)}
                 for i, c in enumerate(cats)}
    correct = int(np.trace(table[:, : len(cats)])) if cats else 0
    undecided = int(table[:, o_idx[AMBIGUOUS]].sum() + table[:, o_idx[OTHER]].sum())
    n_other = int((~is_known).sum())
    rejected = int(((given == OTHER) & ~is_known).sum())
    false_rej = int(((given == OTHER) & is_known).sum())
    rejection = None if n_other == 0 else rejected / n_other
    return CategoryRun(
        path=path, categories=cats, outputs=outs, counts=counts, confusion=confusion,
        n_samples=n, n_other=n_other,
        discrimination=None if n == 0 else correct / n,
        uncertainty=None if n == 0 else undecided / n,
        rejection=rejection,
        false_rejection=None if n == 0 else false_rej / n,
        false_acceptance=None if rejection is None else 1.0 - rejection,
        unmatched_outputs=int(unmatched),
    )


def _sweep(truth: np.ndarray, given: np.ndarray, conf: np.ndarray) -> tuple[CategoryPoint, ...]:
    """(D, U) at μ = −∞ and at each distinct confidence μ (output → A when β ≤ μ)."""
    known = truth != OTHER
    t, g, c = truth[known], given[known], conf[known]
    n = t.size
    if n == 0:
        return ()
    special = (g == AMBIGUOUS) | (g == OTHER)
    decided = ~special & (g != MISSING)
    correct = decided & (g == t)
    base_u = int(special.sum())
    levels = np.unique(c[decided])
    # for μ = level: samples with a decision and β ≤ μ become ambiguous
    cs = np.sort(c[decided])
    cc = np.sort(c[correct])
    n_flip = np.searchsorted(cs, levels, side="right")
    n_lost = np.searchsorted(cc, levels, side="right")
    total_correct = int(correct.sum())
    pts = [CategoryPoint(total_correct / n, base_u / n, None)]
    pts += [CategoryPoint((total_correct - int(lo)) / n, (base_u + int(fl)) / n, float(mu))
            for mu, fl, lo in zip(levels, n_flip, n_lost, strict=True)]
    return tuple(pts)


def _du_points(curve: Sequence[CategoryPoint]) -> tuple[float | None, float | None, float | None]:
    if not curve:
        return None, None, None
    d = np.array([p.discrimination for p in curve])
    u = np.array([p.uncertainty for p in curve])
    d_star = float(d[u == u.min()].max())
    u_star = float(u[d == d.max()].min())
    order = np.lexsort((-d, u))
    return d_star, u_star, _crossing(d[order], u[order])


def _err(runs: Sequence[CategoryRun]) -> float | None:
    pts = [(r.false_rejection, r.false_acceptance) for r in runs
           if r.false_rejection is not None and r.false_acceptance is not None]
    if not pts:
        return None
    fr = np.array([p[0] for p in pts])
    fa = np.array([p[1] for p in pts])
    order = np.lexsort((-fa, fr))
    return _crossing(fr[order], fa[order])

"""``geoeval.score``: one submission against one reference, every matcher.

read → overlap → match → measure, as ``ARCHITECTURE.md`` draws it. The CLI
command ``geoeval score`` is a thin wrapper around :func:`score`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from geoeval.errors import InputError
from geoeval.matching import MATCHERS, Matching, match
from geoeval.measures import counts
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap, compute_overlap

REPORT_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class MatcherResult:
    """One matcher's matching and measures.

    Attributes
    ----------
    matcher : str
    matching : Matching
    precision, recall, f1 : float or None
        Eq. 14–15 of Özdemir et al. (2010); ``None`` when undefined.
    accuracy : float or None
        The matcher's own score: BGM eq. 1, Hoover eq. 2, mean IoU for ``iou``,
        the scene Mallows score (eq. 13) for ``mom`` once computed.
    mallows : MallowsResult or None
        Mallows scores of the instances (eq. 12) and their mean (eq. 13), when
        computed (always for ``mom``; for the others with ``mallows=True``).
    """

    matcher: str
    matching: Matching
    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    mallows: Any = None

    @property
    def instance_mallows(self) -> np.ndarray | None:
        """Mallows score of each instance (NaN where undefined), when computed."""
        return None if self.mallows is None else self.mallows.scores

    def to_dict(self, reference: ObjectSet, submission: ObjectSet) -> dict[str, Any]:
        """The ``results.<matcher>`` object of the JSON report."""
        m = self.matching
        rid, sid = reference.ids, submission.ids
        instances = []
        for k, inst in enumerate(m.instances):
            item: dict[str, Any] = {
                "reference": rid[list(inst.reference)].tolist(),
                "submission": sid[list(inst.submission)].tolist(),
                "overlap": inst.overlap,
                "kind": inst.kind,
            }
            if inst.score is not None:
                item["score"] = inst.score
            if self.instance_mallows is not None:
                item["mallows"] = _num(self.instance_mallows[k])
            instances.append(item)
        matched_ref = m.n_reference - m.missed.size
        matched_sub = m.n_submission - m.false_alarms.size
        mallows_details = None
        if self.mallows is not None:
            mallows_details = {k: v for k, v in self.mallows.to_dict().items()
                               if k != "instances"}
        return {
            "matched_reference": int(matched_ref),
            "matched_submission": int(matched_sub),
            "missed": int(m.missed.size),
            "false_alarms": int(m.false_alarms.size),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "matched_overlap": m.matched_overlap,
            "accuracy": self.accuracy,
            "mallows": None if self.mallows is None else self.mallows.scene,
            "mallows_details": mallows_details,
            "instances_by_kind": m.kind_counts(),
            "parameters": m.params,
            "solver": m.solver_stats or None,
            "missed_ids": rid[m.missed].tolist(),
            "false_alarm_ids": sid[m.false_alarms].tolist(),
            "instances": instances,
        }


@dataclass(frozen=True)
class ScoreResult:
    """Everything :func:`score` found; :meth:`to_dict` is the JSON report."""

    reference: ObjectSet
    submission: ObjectSet
    overlap: Overlap
    results: dict[str, MatcherResult]
    parameters: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON report (schema in ``docs/report.md``)."""
        import geoeval

        mom = self.results.get("mom")
        return {
            "geoeval": geoeval.__version__,
            "schema": REPORT_SCHEMA_VERSION,
            "reference": _describe(self.reference),
            "submission": _describe(self.submission),
            "overlap": {
                "method": self.overlap.method,
                "pairs": self.overlap.n_pairs,
                "components": self.overlap.n_components,
                "components_solved_by_ilp": None if mom is None
                else mom.matching.solver_stats.get("ilp", 0),
                "union_area": self.overlap.union_area,
            },
            "parameters": self.parameters,
            "warnings": list(self.warnings),
            "results": {
                name: res.to_dict(self.reference, self.submission)
                for name, res in self.results.items()
            },
        }


def _num(x: Any) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def _describe(objects: ObjectSet) -> dict[str, Any]:
    crs = objects.crs
    return {
        "path": objects.path,
        "kind": objects.kind,
        "objects": len(objects),
        "crs": None if crs is None else crs.to_string(),
        "repaired": objects.repaired,
        "skipped": objects.skipped,
    }


def score(
    reference: str | Path | ObjectSet,
    submission: str | Path | ObjectSet,
    *,
    matchers: Sequence[str] = MATCHERS,
    hoover_threshold: float = 0.6,
    iou_threshold: float = 0.5,
    min_overlap: float | None = None,
    mallows: bool = False,
    resolution: float | None = None,
    approximate: bool | None = None,
    n_jobs: int | None = None,
    band: int = 1,
    background: int = 0,
    layer: str | int | None = None,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
    reference_options: dict[str, Any] | None = None,
    submission_options: dict[str, Any] | None = None,
    progress: Callable[[str], None] | None = None,
) -> ScoreResult:
    """Score one submission against one reference with the chosen matchers.

    Parameters
    ----------
    reference, submission : path or ObjectSet
        Labelled rasters or vector layers (or objects already read).
    matchers : sequence of {'bgm', 'hoover', 'mom', 'iou'}
    hoover_threshold : float
        Hoover's ``T`` (``0.5 < T ≤ 1``).
    iou_threshold : float
        IoU matcher threshold.
    min_overlap : float, optional
        MOM minimum overlap as a fraction of the smaller object.
    mallows : bool
        Also compute the Mallows score for the instances of the other
        matchers (MOM always gets it: it is MOM's accuracy).
    resolution : float, optional
        Grid step (CRS units) for the Mallows score when both inputs are vector
        layers; without it their Mallows score is null, with a warning.
    approximate : bool, optional
        Mallows block pooling: ``None`` exact up to the announced size, then
        pooled and flagged; ``True`` pool large instances; ``False`` never.
    n_jobs : int, optional
        Processes for the Mallows score (default: up to two).
    band, background, layer, id_field, class_field, crs
        Reader options applied to both inputs (each where it applies).
    reference_options, submission_options : dict, optional
        Per-side reader options overriding the shared ones.
    progress : callable, optional
        Called with the name of each long step as it starts.

    Returns
    -------
    ScoreResult

    Examples
    --------
    >>> res = score("sample_data/reference.tif",
    ...             "sample_data/submissions/s1_near_perfect.tif")  # doctest: +SKIP
    >>> res.results["bgm"].precision  # doctest: +SKIP
    """
    from geoeval.io import read_pair

    shared: dict[str, Any] = {"band": band, "background": background}
    vector_shared = {"layer": layer, "id_field": id_field, "class_field": class_field, "crs": crs}
    ref_opts = _side_options(reference, shared, vector_shared, reference_options)
    sub_opts = _side_options(submission, shared, vector_shared, submission_options)
    _step(progress, "reading")
    ref, sub, warnings = read_pair(reference, submission, reference_options=ref_opts,
                                   submission_options=sub_opts)
    return score_objects(
        ref, sub, matchers=matchers, hoover_threshold=hoover_threshold,
        iou_threshold=iou_threshold, min_overlap=min_overlap, mallows=mallows,
        resolution=resolution, approximate=approximate, n_jobs=n_jobs, progress=progress,
        warnings=warnings,
    )


def _side_options(
    source: Any,
    shared: dict[str, Any],
    vector_shared: dict[str, Any],
    override: dict[str, Any] | None,
) -> dict[str, Any]:
    if isinstance(source, ObjectSet):
        return {}
    from geoeval.io import detect_kind

    kind = (override or {}).get("kind") or detect_kind(source)
    opts = dict(shared) if kind == "raster" else {
        k: v for k, v in vector_shared.items() if v is not None}
    opts.update(override or {})
    return opts


def score_objects(
    reference: ObjectSet,
    submission: ObjectSet,
    *,
    matchers: Sequence[str] = MATCHERS,
    hoover_threshold: float = 0.6,
    iou_threshold: float = 0.5,
    min_overlap: float | None = None,
    mallows: bool = False,
    resolution: float | None = None,
    approximate: bool | None = None,
    n_jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
    warnings: Sequence[str] = (),
) -> ScoreResult:
    """:func:`score` for object sets already read and in one CRS."""
    matchers = tuple(dict.fromkeys(matchers))
    unknown = [m for m in matchers if m not in MATCHERS]
    if unknown or not matchers:
        raise InputError(f"unknown matcher {', '.join(unknown) or '(none)'} "
                         f"(choose from {', '.join(MATCHERS)})")
    _step(progress, "overlap")
    ov = compute_overlap(reference, submission)
    params: dict[str, Any] = {"matchers": list(matchers)}
    if "hoover" in matchers:
        params["hoover_threshold"] = hoover_threshold
    if "iou" in matchers:
        params["iou_threshold"] = iou_threshold
    if "mom" in matchers:
        params["min_overlap"] = min_overlap
    warnings = list(warnings)
    want_mallows = [n for n in matchers if n == "mom" or mallows]
    if want_mallows:
        params["mallows"] = {"resolution": resolution, "approximate": approximate}
    can_mallows = bool(want_mallows) and (
        reference.grid is not None or submission.grid is not None or resolution is not None)
    if want_mallows and not can_mallows:
        warnings.append("both inputs are vector layers: the Mallows score needs a grid step "
                        "(--resolution); it is reported as null")
    results: dict[str, MatcherResult] = {}
    for name in matchers:
        _step(progress, f"matching ({name})")
        kwargs: dict[str, Any] = {}
        if name == "hoover":
            kwargs["threshold"] = hoover_threshold
        elif name == "iou":
            kwargs["threshold"] = iou_threshold
        elif name == "mom":
            kwargs["min_overlap"] = min_overlap
        m = match(ov, name, **kwargs)
        mal = None
        if name in want_mallows and can_mallows:
            from geoeval.measures.mallows import mallows_scores

            _step(progress, f"Mallows score ({name})")
            mal = mallows_scores(reference, submission, m.instances, resolution=resolution,
                                 approximate=approximate, n_jobs=n_jobs)
            if mal.approximated.any():
                warnings.append(
                    f"{name}: {int(mal.approximated.sum())} large instance(s) scored by block "
                    f"pooling (above {mal.approximation['exact_limit']} pixels a side; "
                    f"error bound {float(mal.error_bound.max()):.2g}); pass approximate=False "
                    "(--exact) for exact scores")
        results[name] = _measure(name, m, ov, mal)
    return ScoreResult(reference, submission, ov, results, params, tuple(warnings))


def _measure(name: str, m: Matching, ov: Overlap, mal: Any = None) -> MatcherResult:
    p, r = counts.precision(m), counts.recall(m)
    if name == "bgm":
        acc = counts.bgm_score(m, ov.union_area)
    elif name in ("hoover", "iou"):
        acc = counts.mean_instance_score(m)
    else:  # MOM's accuracy is the scene Mallows score (eq. 13)
        acc = None if mal is None else mal.scene
    return MatcherResult(name, m, p, r, counts.f1(p, r), acc, mal)


def _step(progress: Callable[[str], None] | None, name: str) -> None:
    if progress is not None:
        progress(name)

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
from geoeval.per_class import PerClass

REPORT_SCHEMA_VERSION = 1
_COUNT_KEYS = ("matched_reference", "matched_submission", "missed", "false_alarms", "precision",
               "recall", "f1", "matched_overlap", "accuracy", "mallows")


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

    def summary(self) -> dict[str, Any]:
        """The numbers of the report without the per-object lists: counts,
        precision, recall, F1, matched overlap, accuracy, scene Mallows score and
        instances by kind (shared by the JSON report, per-class and multi-scene
        reports and the GeoPackage ``summary`` table)."""
        m = self.matching
        return {
            "matched_reference": int(m.n_reference - m.missed.size),
            "matched_submission": int(m.n_submission - m.false_alarms.size),
            "missed": int(m.missed.size),
            "false_alarms": int(m.false_alarms.size),
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "matched_overlap": m.matched_overlap,
            "accuracy": self.accuracy,
            "mallows": None if self.mallows is None else self.mallows.scene,
            "instances_by_kind": m.kind_counts(),
        }

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
        mallows_details = None
        if self.mallows is not None:
            mallows_details = {k: v for k, v in self.mallows.to_dict().items()
                               if k != "instances"}
        summary = self.summary()
        return {
            **{k: summary[k] for k in _COUNT_KEYS},
            "mallows_details": mallows_details,
            "instances_by_kind": summary["instances_by_kind"],
            "parameters": m.params,
            "solver": m.solver_stats or None,
            "missed_ids": rid[m.missed].tolist(),
            "false_alarm_ids": sid[m.false_alarms].tolist(),
            "instances": instances,
        }


@dataclass(frozen=True)
class ScoreResult:
    """Everything :func:`score` found; :meth:`to_dict` is the JSON report.

    ``per_class`` holds each class scored on its own (:mod:`geoeval.per_class`)
    when ``class_field`` was given; :meth:`write_gpkg`, :meth:`write_csv` and
    :meth:`save_figure` write the per-object outputs.
    """

    reference: ObjectSet
    submission: ObjectSet
    overlap: Overlap
    results: dict[str, MatcherResult]
    parameters: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    per_class: PerClass | None = None

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
            "per_class": None if self.per_class is None else self.per_class.to_dict(),
        }

    def write_gpkg(self, path: str | Path, *, matcher: str | None = None) -> Path:
        """Write the styled GeoPackage (see :func:`geoeval.report.gpkg.write_gpkg`)."""
        from geoeval.report.gpkg import write_gpkg

        return write_gpkg(self, path, matcher=matcher)

    def write_csv(self, folder: str | Path, *, matcher: str | None = None) -> list[Path]:
        """Write the per-object CSV tables (see :func:`geoeval.report.csv.write_csv`)."""
        from geoeval.report.csv import write_csv

        return write_csv(self, folder, matcher=matcher)

    def save_figure(self, path: str | Path, *, matcher: str | None = None) -> Path:
        """Save the status map and score chart (see
        :func:`geoeval.report.status_figure.save_status_figure`)."""
        from geoeval.report.status_figure import save_status_figure

        return save_status_figure(self, path, matcher=matcher)


def _num(x: Any) -> float | None:
    x = float(x)
    return None if np.isnan(x) else x


def _describe(objects: ObjectSet) -> dict[str, Any]:
    crs = objects.crs
    return {
        "path": objects.path,
        "kind": objects.kind,
        "objects": len(objects),
        "crs": None if crs is None else (
            crs.to_string() if hasattr(crs, "to_string") else str(crs)),
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
    gpkg: str | Path | None = None,
    gpkg_matcher: str | None = None,
    csv_dir: str | Path | None = None,
    figure: str | Path | None = None,
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
    band, background, layer, id_field, crs
        Reader options applied to both inputs (each where it applies). ``crs``
        is assumed for vector layers without one (a Shapefile without ``.prj``).
    class_field : str, optional
        Vector field holding each object's class. The reference must have it;
        the submission's is used when it has one (else its objects take the
        class of the reference they overlap most). Every class is then also
        scored on its own (:attr:`ScoreResult.per_class`).
    reference_options, submission_options : dict, optional
        Per-side reader options overriding the shared ones.
    progress : callable, optional
        Called with the name of each long step as it starts.
    gpkg : path, optional
        Write the styled GeoPackage here (:func:`geoeval.report.gpkg.write_gpkg`).
    gpkg_matcher : str, optional
        Matcher whose per-object result the GeoPackage, CSV tables and figure
        show (default ``mom`` when it ran, else the first matcher).
    csv_dir : path, optional
        Write the per-object tables as CSV into this folder (created if needed).
    figure : path, optional
        Save the status map and score chart (``.png`` or ``.svg``).

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
    from geoeval.report.atomic import output_run

    check_options(matchers=matchers, hoover_threshold=hoover_threshold,
                  iou_threshold=iou_threshold, min_overlap=min_overlap, resolution=resolution,
                  n_jobs=n_jobs, band=band, gpkg_matcher=gpkg_matcher)
    shared: dict[str, Any] = {"band": band, "background": background}
    vector_shared = {"layer": layer, "id_field": id_field, "class_field": class_field, "crs": crs}
    ref_opts = _side_options(reference, shared, vector_shared, reference_options)
    sub_opts = _side_options(submission, shared, vector_shared, submission_options)
    if class_field is not None:
        _class_field_optional(submission, sub_opts)
    with output_run([reference, submission]) as outputs:
        outputs.file(gpkg, "gpkg", suffixes=(".gpkg",))
        outputs.folder(csv_dir, "csv_dir")
        outputs.file(figure, "figure", suffixes=(".png", ".svg"))
        _step(progress, "reading")
        ref, sub, warnings = read_pair(reference, submission, reference_options=ref_opts,
                                       submission_options=sub_opts)
        if class_field is not None and ref.classes is None:
            raise InputError(f"--class-field {class_field!r} applies to vector layers only",
                             ref.path)
        result = score_objects(
            ref, sub, matchers=matchers, hoover_threshold=hoover_threshold,
            iou_threshold=iou_threshold, min_overlap=min_overlap, mallows=mallows,
            resolution=resolution, approximate=approximate, n_jobs=n_jobs, progress=progress,
            warnings=warnings, per_class=class_field is not None,
        )
        write_outputs(result, gpkg=gpkg, gpkg_matcher=gpkg_matcher, csv_dir=csv_dir,
                      figure=figure, progress=progress)
    return result


def check_options(
    *,
    matchers: Sequence[str] | None = None,
    hoover_threshold: float | None = None,
    iou_threshold: float | None = None,
    min_overlap: float | None = None,
    resolution: float | None = None,
    n_jobs: int | None = None,
    band: int | None = None,
    gpkg_matcher: str | None = None,
) -> None:
    """Check the scoring keywords; :class:`InputError` naming the first bad one.

    Hoover's threshold must satisfy ``0.5 < T <= 1`` (Hoover et al. 1996, §3.1:
    below one half an object could take part in two correct detections).
    """
    from geoeval import validate

    if matchers is not None:
        if isinstance(matchers, str):
            matchers = (matchers,)
        unknown = [m for m in matchers if m not in MATCHERS]
        if unknown or not matchers:
            raise InputError(f"unknown matcher {unknown[0] if unknown else '(none)'!r} "
                             f"(choose from {', '.join(MATCHERS)})")
    if gpkg_matcher is not None and gpkg_matcher not in MATCHERS:
        raise InputError(f"gpkg_matcher takes one matcher ({', '.join(MATCHERS)}), "
                         f"got {gpkg_matcher!r}")
    validate.number("hoover_threshold", hoover_threshold, low=0.5, high=1.0, low_open=True)
    validate.fraction("iou_threshold", iou_threshold)
    validate.fraction("min_overlap", min_overlap)
    validate.positive("resolution", resolution)
    validate.count("n_jobs", n_jobs)
    validate.count("band", band)


def write_outputs(
    result: ScoreResult,
    *,
    gpkg: str | Path | None = None,
    gpkg_matcher: str | None = None,
    csv_dir: str | Path | None = None,
    figure: str | Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> None:
    """Write the GeoPackage, CSV tables and figure that were asked for."""
    from geoeval.report.objects import choose_matcher

    if gpkg is None and csv_dir is None and figure is None:
        return
    matcher = choose_matcher(result, gpkg_matcher)
    if gpkg is not None:
        _step(progress, "writing the GeoPackage")
        result.write_gpkg(gpkg, matcher=matcher)
    if csv_dir is not None:
        _step(progress, "writing CSV tables")
        result.write_csv(csv_dir, matcher=matcher)
    if figure is not None:
        _step(progress, "drawing the figure")
        result.save_figure(figure, matcher=matcher)


def _class_field_optional(source: Any, opts: dict[str, Any]) -> None:
    """Drop ``class_field`` from the submission's reader options when its layer
    has no such field (its classes then come from the reference)."""
    if isinstance(source, ObjectSet) or "class_field" not in opts:
        return
    from geoeval.io import detect_kind

    if (opts.get("kind") or detect_kind(source)) != "vector":
        return
    import pyogrio

    try:
        fields = pyogrio.read_info(source, layer=opts.get("layer"))["fields"]
    except Exception:
        return  # the reader reports the problem with its own message
    if opts["class_field"] not in list(fields):
        del opts["class_field"]


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
    per_class: bool = False,
) -> ScoreResult:
    """:func:`score` for object sets already read and in one CRS.

    With ``per_class`` (and classes on the reference) every class is also
    scored on its own (:mod:`geoeval.per_class`).
    """
    check_options(matchers=matchers, hoover_threshold=hoover_threshold,
                  iou_threshold=iou_threshold, min_overlap=min_overlap, resolution=resolution,
                  n_jobs=n_jobs)
    matchers = tuple(dict.fromkeys([matchers] if isinstance(matchers, str) else matchers))
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
    matcher_params: dict[str, dict[str, Any]] = {}
    for name in matchers:
        _step(progress, f"matching ({name})")
        kwargs: dict[str, Any] = {}
        if name == "hoover":
            kwargs["threshold"] = hoover_threshold
        elif name == "iou":
            kwargs["threshold"] = iou_threshold
        elif name == "mom":
            kwargs["min_overlap"] = min_overlap
        matcher_params[name] = kwargs
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
    classes = None
    if per_class and reference.classes is not None:
        from geoeval.per_class import score_classes

        _step(progress, "scoring each class")
        classes = score_classes(
            reference, submission, ov, results, matcher_params,
            mallows_options={"resolution": resolution, "approximate": approximate,
                             "n_jobs": n_jobs})
    return ScoreResult(reference, submission, ov, results, params, tuple(warnings), classes)


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

"""``geoeval.score``: one submission against one reference, every matcher.

read → overlap → match → measure, as ``docs/architecture.md`` draws it. The CLI
command ``geoeval score`` is a thin wrapper around :func:`score`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from geoeval.engine import Engine, check_engine
from geoeval.errors import InputError
from geoeval.matching import MATCHERS, registry
from geoeval.objects import ObjectSet
from geoeval.parallel import gc_paused
from geoeval.scoring.partitioned import PartitionedResult
from geoeval.scoring.result import MatcherResult, ScoreResult, empty_sides, measure


@gc_paused
def score(
    reference: str | Path | ObjectSet,
    submission: str | Path | ObjectSet,
    *,
    matchers: Sequence[str] = MATCHERS,
    hoover_threshold: float = registry.HOOVER_THRESHOLD.default,  # type: ignore[assignment]
    iou_threshold: float = registry.IOU_THRESHOLD.default,  # type: ignore[assignment]
    min_overlap: float | None = registry.MIN_OVERLAP.default,
    matcher_options: Mapping[str, Any] | None = None,
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
    evaluation_crs: Any = None,
    reference_options: dict[str, Any] | None = None,
    submission_options: dict[str, Any] | None = None,
    size_bins: Sequence[float] | str | None = None,
    zones: Any = None,
    zone_field: str | None = None,
    bootstrap: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    block_size: float | None = None,
    engine: str | Engine = "local",
    scheduler: str | None = None,
    progress: Callable[[str], None] | None = None,
    breakdown: bool = False,
    geometry_measures: Sequence[str] | str | None = None,
    boundary_width: float | None = None,
    boundary_band: str = "distance",
    memory_limit: str | None = None,
    objects: Callable[[str, Any], Any] | None = None,
    partitioned: bool = True,
    lists: bool = True,
) -> ScoreResult | PartitionedResult:
    """Read one submission and one reference and score them with the chosen matchers.

    Writes nothing: :func:`geoeval.score` adds the GeoPackage, CSV tables and
    figure outputs.

    Parameters
    ----------
    reference, submission : path or ObjectSet
        Labelled rasters or vector layers (or objects already read).
    matchers : sequence of str
        Names of :mod:`geoeval.matching.registry` (``bgm``, ``hoover``, ``mom``,
        ``iou``; default all four).
    hoover_threshold : float
        Hoover's ``T`` (``0.5 < T ≤ 1``).
    iou_threshold : float
        IoU matcher threshold (``0 < t ≤ 1``).
    min_overlap : float, optional
        MOM minimum overlap as a fraction of the smaller object.
    matcher_options : mapping, optional
        Parameters of other registered matchers by keyword
        (:func:`geoeval.matching.registry.parameters`), each checked by its rule.
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
        Processes for the Mallows score (default: every core).
    band, background, layer, id_field, crs
        Reader options applied to both inputs (each where it applies). ``crs``
        is assumed for vector layers without one (a Shapefile without ``.prj``).
    evaluation_crs : CRS-like, optional
        CRS to compute areas and distances in. Default: the reference's, unless
        it is geographic (degrees) or Mercator, then a local equal-area
        projection of the data, announced
        (:func:`geoeval.io.evaluation_crs.to_evaluation_crs`).
    class_field : str, optional
        Vector field holding each object's class. The reference must have it;
        the submission's is used when it has one (else its objects take the
        class of the reference they overlap most). Every class is then also
        scored on its own (:attr:`ScoreResult.per_class`).
    reference_options, submission_options : dict, optional
        Per-side reader options overriding the shared ones.
    size_bins : "coco" or sequence of float, optional
        Also score each object size stratum (:mod:`geoeval.scoring.strata`):
        ``"coco"`` (32², 96² pixels) or increasing area edges in square CRS units.
    zones, zone_field : path or GeoDataFrame, str, optional
        Also score each zone (objects by their representative point; the rest
        ``"outside"``), named by ``zone_field`` (default the feature number).
    bootstrap : int, optional
        Replicates of the spatial block bootstrap (:mod:`geoeval.scoring.bootstrap`):
        percentile intervals for every measure (:attr:`ScoreResult.bootstrap`).
    confidence : float
        Coverage of the bootstrap intervals.
    seed : int
        Seed of the bootstrap draws (same seed, same intervals).
    block_size : float, optional
        Bootstrap block side in CRS units (default a tenth of the reference bounds).
    engine : {'local', 'dask'}
        Where the overlap and the Mallows score run: this process, or a Dask
        cluster (:mod:`geoeval.engine`, ``docs/scale.md``). The results are the same.
    scheduler : str, optional
        ``engine='dask'``: address of a running scheduler (``tcp://host:8786``);
        without it a local cluster of ``n_jobs`` worker processes is started for
        the run and closed after it. A script starting one needs an
        ``if __name__ == "__main__":`` guard (the workers re-import it).
    progress : callable, optional
        Called with the name of each long step as it starts.
    breakdown : bool
        Also attribute each measure's loss to error types (misses, false
        alarms, merges, splits, localisation; TIDE's oracle deltas, Bolya et
        al. 2020): :attr:`ScoreResult.breakdown` (``docs/breakdown.md``).
    geometry_measures : sequence of str or comma-separated str, optional
        Also compute ``pq`` (Panoptic Quality, Kirillov et al. 2019), ``clinton``
        (over-/under-segmentation, Clinton et al. 2010), ``polis`` (Avbelj et al.
        2015) and/or ``boundary_iou`` (Cheng et al. 2021), or ``all``:
        :attr:`ScoreResult.geometry` (``docs/geometry-measures.md``).
    boundary_width : float, optional
        Boundary IoU band width in CRS units (default 2 % of each reference
        object's bounding-box diagonal; with the raster band, 2 % of the image
        diagonal as in Cheng et al.'s code).
    boundary_band : {'distance', 'raster'}
        Boundary IoU band: the polygons' exact distance band (default), or the
        reference code's pixel erosion for two label rasters on one grid
        (reproduces published Boundary IoU numbers; ``docs/geometry-measures.md``).
    memory_limit : str, optional
        ``engine='dask'`` without a scheduler: memory limit of each local worker
        (``"4GB"``; Dask's ``memory_limit``).
    objects : callable, optional
        ``objects(id_kind, crs)`` opens the objects dataset writer of a
        partitioned run (:func:`geoeval.report.objects_dataset.open_dataset`).
    partitioned : bool
        ``engine='dask'`` with two vector layers: read, match and write by
        partitions on the cluster when the options allow it
        (:func:`geoeval.scoring.partitioned.partitioned_reason`); the result is
        then a :class:`~geoeval.scoring.partitioned.PartitionedResult`.
    lists : bool
        The report lists every object (``instances``, ``missed_ids``,
        ``false_alarm_ids``): at most :data:`geoeval.matching.lists.LIST_LIMIT`
        objects, else an error pointing at the objects dataset. Without an objects
        dataset, a Dask run gathers them; ``False`` spares that (the report then
        has no lists).

    Returns
    -------
    ScoreResult or PartitionedResult

    Examples
    --------
    ``score("sample_data/reference.tif", "sample_data/submissions/s4_fragmented.tif")``
    reads two files; objects already read work the same (two reference squares,
    one detection of the first):

    >>> from shapely import box
    >>> from geoeval.objects import ObjectSet
    >>> ref = ObjectSet.from_geometries([box(0, 0, 10, 10), box(20, 0, 30, 10)],
    ...                                 crs="EPSG:32631")
    >>> sub = ObjectSet.from_geometries([box(1, 0, 11, 10)], crs="EPSG:32631")
    >>> res = score(ref, sub, matchers=["hoover", "iou"])
    >>> res.results["hoover"].recall, res.results["hoover"].accuracy  # (0.9 + 0.9) / 2
    (0.5, 0.9)
    >>> res.parameters["hoover_threshold"], res.parameters["iou_threshold"]
    (0.6, 0.5)
    """
    from geoeval.io import read_pair_counted

    check_options(matchers=matchers, hoover_threshold=hoover_threshold,
                  iou_threshold=iou_threshold, min_overlap=min_overlap, resolution=resolution,
                  n_jobs=n_jobs, band=band, matcher_options=matcher_options)
    if not isinstance(engine, Engine):
        check_engine(engine, scheduler)
    shared: dict[str, Any] = {"band": band, "background": background}
    vector_shared = {"layer": layer, "id_field": id_field, "class_field": class_field, "crs": crs}
    ref_opts = _side_options(reference, shared, vector_shared, reference_options)
    sub_opts = _side_options(submission, shared, vector_shared, submission_options)
    if class_field is not None:
        _class_field_optional(submission, sub_opts)
    from geoeval import parallel

    # the engine is open while reading too: a raster's windowed scan runs on it
    with _engine(engine, scheduler, n_jobs, progress, memory_limit) as eng, \
            parallel.remote(eng.mapper):
        notes: tuple[str, ...] = ()
        if eng.client is not None and partitioned:
            done = _try_partitioned(eng, reference, submission, ref_opts, sub_opts, locals(),
                                    objects, progress)
            if isinstance(done, PartitionedResult):
                return done
            if done is not None:  # where the work runs: a note, not part of the report
                notes = (done,)
        _step(progress, "reading")
        with parallel.reporting(_parts(progress, "reading")):
            ref, sub, warnings, counts = read_pair_counted(
                reference, submission, reference_options=ref_opts, submission_options=sub_opts)
        if class_field is not None and ref.classes is None:
            raise InputError(f"--class-field {class_field!r} applies to vector layers only",
                             ref.path)
        if lists and objects is None:
            from geoeval.matching.lists import check_listable

            check_listable(len(ref) + len(sub))
        result = _score_objects(
            ref, sub, matchers=matchers, hoover_threshold=hoover_threshold,
            iou_threshold=iou_threshold, min_overlap=min_overlap,
            matcher_options=matcher_options, mallows=mallows,
            resolution=resolution, approximate=approximate, n_jobs=n_jobs, progress=progress,
            warnings=warnings, pair_counts=counts, per_class=class_field is not None,
            evaluation_crs=evaluation_crs, breakdown=breakdown, size_bins=size_bins,
            zones=zones, zone_field=zone_field, bootstrap=bootstrap, confidence=confidence,
            seed=seed, block_size=block_size, engine=eng, scheduler=None,
            geometry_measures=geometry_measures, boundary_width=boundary_width,
            boundary_band=boundary_band,
        )
        if notes:
            from dataclasses import replace

            result = replace(result, notes=notes)
        return result


def _try_partitioned(eng: Engine, reference: Any, submission: Any, ref_opts: dict[str, Any],
                     sub_opts: dict[str, Any], options: dict[str, Any],
                     objects: Callable[[str, Any], Any] | None,
                     progress: Callable[[str], None] | None) -> Any:
    """The partitioned run's result, or why it cannot run (a warning text for vector
    files, ``None`` for inputs that are no vector files)."""
    from geoeval.io.partitioned import layer_crs
    from geoeval.scoring.partitioned import crs_reason, partitioned_reason, score_partitioned

    options = dict(options)
    names = options["matchers"]
    options["matchers"] = tuple(dict.fromkeys([names] if isinstance(names, str) else names))
    mosaic = _try_mosaic(eng, reference, submission, ref_opts, sub_opts, options, objects,
                         progress)
    if mosaic is not None:
        return mosaic
    reason = partitioned_reason(reference, submission, options)
    if reason is None:
        crs = [layer_crs(src, o.get("layer"))
               for src, o in ((reference, ref_opts), (submission, sub_opts))]
        reason = crs_reason(*crs)
    if reason is None and (any(o.get("crs") is not None for o in (ref_opts, sub_opts))
                           or ref_opts.get("class_field") != options.get("class_field")
                           or sub_opts.get("class_field") not in (None,
                                                                  options.get("class_field"))):
        reason = "a CRS or class field given for one side is not read by partitions yet"
    if reason is None:
        return score_partitioned(
            eng.client, reference, submission, matchers=tuple(options["matchers"]),
            hoover_threshold=options["hoover_threshold"],
            iou_threshold=options["iou_threshold"], reference_options=ref_opts,
            submission_options=sub_opts, objects=objects, progress=progress,
            min_overlap=options["min_overlap"], matcher_options=options["matcher_options"],
            mallows=options["mallows"], resolution=options["resolution"],
            approximate=options["approximate"], breakdown=options["breakdown"],
            size_bins=options["size_bins"], zones=options["zones"],
            zone_field=options["zone_field"], bootstrap=options["bootstrap"],
            confidence=options["confidence"], seed=options["seed"],
            block_size=options["block_size"], lists=options["lists"])
    if reason in ("the inputs are not files", "an input is not a vector layer",
                  "an input is a folder"):
        return None
    return (f"engine 'dask': {reason}, so both layers are read and matched in the client "
            "(docs/scale.md)")


def _try_mosaic(eng: Engine, reference: Any, submission: Any, ref_opts: dict[str, Any],
                sub_opts: dict[str, Any], options: dict[str, Any],
                objects: Callable[[str, Any], Any] | None,
                progress: Callable[[str], None] | None) -> Any:
    """Two label rasters on one grid scored by blocks on the cluster
    (:mod:`geoeval.scoring.mosaic`): the result, why not (a warning text), or ``None``
    when the inputs are not two raster files."""
    from geoeval.scoring.mosaic import Plan, mosaic_plan, score_mosaic_files

    plan = mosaic_plan(reference, submission, ref_opts, sub_opts, options, objects)
    if plan is None:
        return None
    if not isinstance(plan, Plan):
        return (f"engine 'dask': {plan}, so both rasters are read and matched in the "
                "client (docs/scale.md)")
    matchers = options["matchers"]
    given = {"hoover_threshold": options["hoover_threshold"],
             "iou_threshold": options["iou_threshold"], "min_overlap": options["min_overlap"],
             **(options.get("matcher_options") or {})}
    from geoeval.io import crs_name

    params, want_mallows = report_parameters(
        matchers, given, None if plan.crs is None else
        {"crs": crs_name(plan.crs), "rule": "the reference's CRS"}, options["mallows"],
        options["resolution"], options["approximate"])
    return score_mosaic_files(
        eng.client, plan, reference, submission, matchers=matchers,
        matcher_params={n: registry.get(n).arguments(given) for n in matchers},
        parameters=params, mallows=want_mallows, approximate=options["approximate"],
        block_pixels=options.get("block_pixels"), progress=progress, lists=options["lists"])


def read_reference(
    reference: str | Path | ObjectSet,
    *,
    band: int = 1,
    background: int = 0,
    layer: str | int | None = None,
    id_field: str | None = None,
    class_field: str | None = None,
    crs: Any = None,
    reference_options: dict[str, Any] | None = None,
    **_: Any,
) -> ObjectSet:
    """Read a reference once with :func:`score`'s reader options, to score many
    submissions against it (pass the result as ``reference`` to :func:`score`)."""
    if isinstance(reference, ObjectSet):
        return reference
    from geoeval.io import read

    check_options(band=band)
    shared: dict[str, Any] = {"band": band, "background": background}
    vector_shared = {"layer": layer, "id_field": id_field, "class_field": class_field, "crs": crs}
    return read(reference, **_side_options(reference, shared, vector_shared, reference_options))


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
    matcher_options: Mapping[str, Any] | None = None,
) -> None:
    """Check the scoring keywords; :class:`InputError` naming the first bad one.

    The ranges are :data:`geoeval.validate.RULES` (Hoover's ``0.5 < T <= 1``,
    Hoover et al. 1996, §3.1; an IoU threshold in ``(0, 1]``).
    """
    from geoeval import validate

    if matchers is not None:
        if isinstance(matchers, str):
            matchers = (matchers,)
        if not matchers:
            raise InputError("no matcher given (choose from "
                             f"{', '.join(registry.names())})")
        for name in matchers:
            registry.get(name)
    if gpkg_matcher is not None and gpkg_matcher not in registry.names():
        raise InputError(f"gpkg_matcher takes one matcher ({', '.join(registry.names())}), "
                         f"got {gpkg_matcher!r}")
    for name, value in (("hoover_threshold", hoover_threshold),
                        ("iou_threshold", iou_threshold), ("min_overlap", min_overlap),
                        ("resolution", resolution), ("n_jobs", n_jobs), ("band", band)):
        validate.check(name, value)  # one rule per option (geoeval.validate.RULES)
    for keyword, value in (matcher_options or {}).items():  # other registered matchers'
        registry.parameter(keyword).check(value)


def _class_field_optional(source: Any, opts: dict[str, Any]) -> None:
    """Drop ``class_field`` from the submission's reader options when its layer
    has no such field (its classes then come from the reference)."""
    if isinstance(source, ObjectSet) or "class_field" not in opts:
        return
    from geoeval.io import detect_input_type, in_memory_type

    memory = in_memory_type(source)
    if memory is not None:
        if memory != "vector" or opts["class_field"] not in getattr(source, "columns", ()):
            del opts["class_field"]
        return
    if (opts.get("input_type") or detect_input_type(source)) != "vector":
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
    from geoeval.io import detect_input_type, in_memory_type

    input_type = (in_memory_type(source) or (override or {}).get("input_type")
                  or detect_input_type(source))
    opts = dict(shared) if input_type == "raster" else {
        k: v for k, v in vector_shared.items() if v is not None}
    if input_type == "raster" and vector_shared.get("crs") is not None:
        opts["crs"] = vector_shared["crs"]  # a raster without georeferencing too
    opts.update(override or {})
    return opts


@gc_paused
def score_objects(
    reference: ObjectSet,
    submission: ObjectSet,
    *,
    matchers: Sequence[str] = MATCHERS,
    hoover_threshold: float = registry.HOOVER_THRESHOLD.default,  # type: ignore[assignment]
    iou_threshold: float = registry.IOU_THRESHOLD.default,  # type: ignore[assignment]
    min_overlap: float | None = registry.MIN_OVERLAP.default,
    matcher_options: Mapping[str, Any] | None = None,
    mallows: bool = False,
    resolution: float | None = None,
    approximate: bool | None = None,
    n_jobs: int | None = None,
    progress: Callable[[str], None] | None = None,
    warnings: Sequence[str] = (),
    pair_counts: Any = None,
    per_class: bool = False,
    evaluation_crs: Any = None,
    breakdown: bool = False,
    size_bins: Sequence[float] | str | None = None,
    zones: Any = None,
    zone_field: str | None = None,
    bootstrap: int | None = None,
    confidence: float = 0.95,
    seed: int = 0,
    block_size: float | None = None,
    engine: str | Engine = "local",
    scheduler: str | None = None,
    geometry_measures: Sequence[str] | str | None = None,
    boundary_width: float | None = None,
    boundary_band: str = "distance",
) -> ScoreResult:
    """:func:`score` for object sets already read and in one CRS.

    With ``per_class`` (and classes on the reference) every class is also
    scored on its own (:mod:`geoeval.scoring.classes`); with ``breakdown`` each
    matcher's error breakdown (:mod:`geoeval.measures.breakdown`) is added. Objects
    in a geographic or Mercator CRS are first reprojected as :func:`score` says
    (``evaluation_crs``). ``engine`` and ``scheduler`` as in :func:`score`.
    ``pair_counts`` are the label-pair counts the reader returned with two rasters
    (:func:`geoeval.io.read_pair_counted`), so the overlap does not read them again.
    """
    check_options(matchers=matchers, hoover_threshold=hoover_threshold,
                  iou_threshold=iou_threshold, min_overlap=min_overlap, resolution=resolution,
                  n_jobs=n_jobs, matcher_options=matcher_options)
    options = {k: v for k, v in locals().items() if k not in ("reference", "submission")}
    return _score_objects(reference, submission, **options)


def _score_objects(
    reference: ObjectSet,
    submission: ObjectSet,
    *,
    matchers: Sequence[str],
    hoover_threshold: float,
    iou_threshold: float,
    min_overlap: float | None,
    matcher_options: Mapping[str, Any] | None,
    mallows: bool,
    resolution: float | None,
    approximate: bool | None,
    n_jobs: int | None,
    progress: Callable[[str], None] | None,
    warnings: Sequence[str],
    pair_counts: Any,
    per_class: bool,
    evaluation_crs: Any,
    breakdown: bool,
    size_bins: Sequence[float] | str | None,
    zones: Any,
    zone_field: str | None,
    bootstrap: int | None,
    confidence: float,
    seed: int,
    block_size: float | None,
    engine: str | Engine,
    scheduler: str | None,
    geometry_measures: Sequence[str] | str | None,
    boundary_width: float | None,
    boundary_band: str = "distance",
) -> ScoreResult:
    """:func:`score_objects` once its options are checked (by it, or by :func:`score`:
    each option is checked once per call)."""
    from geoeval.io import crs_name
    from geoeval.io.evaluation_crs import to_evaluation_crs

    if bootstrap is not None:
        from geoeval.scoring.bootstrap import check_bootstrap

        check_bootstrap(bootstrap, confidence, seed, block_size)
    if geometry_measures is not None or boundary_width is not None:
        from geoeval import validate
        from geoeval.measures.geometry import parse_measures

        geometry_measures = parse_measures(geometry_measures)  # checked before the work
        validate.positive("boundary_width", boundary_width)
        from geoeval.measures.geometry import check_boundary_band

        check_boundary_band(boundary_band)
    matchers = tuple(dict.fromkeys([matchers] if isinstance(matchers, str) else matchers))
    reference, submission, crs_info, crs_warnings = to_evaluation_crs(
        reference, submission, evaluation_crs)
    from geoeval import parallel

    with _engine(engine, scheduler, n_jobs, progress) as eng, parallel.remote(eng.mapper):
        _step(progress, "overlap")
        with parallel.reporting(_parts(progress, "overlap")):
            ov = eng.overlap(reference, submission, pair_counts)
        options = {"hoover_threshold": hoover_threshold, "iou_threshold": iou_threshold,
                   "min_overlap": min_overlap, **(matcher_options or {})}
        specs = [registry.get(n) for n in matchers]
        params, want_mallows = report_parameters(
            matchers, options, crs_info if crs_info is not None else
            None if reference.crs is None else {"crs": crs_name(reference.crs),
                                                "rule": "the reference's CRS"},
            mallows, resolution, approximate)
        warnings = [*warnings, *crs_warnings, *empty_sides(reference, submission)]
        if want_mallows and reference.grid is None and submission.grid is None \
                and resolution is None:
            from geoeval.measures.rasterize import (
                AUTO_RESOLUTION_RULE,
                auto_resolution,
                auto_resolution_warning,
            )

            resolution = auto_resolution(reference, submission)
            if resolution is not None:
                params["mallows"].update(resolution=resolution,
                                         resolution_rule=AUTO_RESOLUTION_RULE)
                warnings.append(auto_resolution_warning(resolution))
        can_mallows = bool(want_mallows) and (
            reference.grid is not None or submission.grid is not None or resolution is not None)
        # new Mallows scores of classes and strata: the scene's settings, this process
        mallows_options = {"resolution": resolution, "approximate": approximate,
                           "n_jobs": n_jobs}
        results: dict[str, MatcherResult] = {}
        matcher_params: dict[str, dict[str, Any]] = {}
        for spec in specs:
            name = spec.name
            _step(progress, f"matching ({name})")
            kwargs = spec.arguments(options)
            matcher_params[name] = kwargs
            with parallel.reporting(_parts(progress, f"matching ({name})")):
                m = spec.run(ov, **kwargs)
            mal = None
            if name in want_mallows and can_mallows:
                from geoeval.measures.mallows import mallows_scores

                _step(progress, f"Mallows score ({name})")
                mal = mallows_scores(reference, submission, m, resolution=resolution,
                                     approximate=approximate,
                                     n_jobs=eng.n_jobs if eng.client else n_jobs,
                                     executor=eng.executor,
                                     progress=_counter(progress, f"Mallows score ({name})",
                                                       "instances"))
                if mal.approximated.any():
                    from geoeval.measures.mallows import pooling_warning

                    warnings.append(pooling_warning(name, int(mal.approximated.sum()),
                                                    float(mal.error_bound.max())))
            results[name] = measure(name, m, ov, mal)
        classes = None
        if per_class and reference.classes is not None:
            from geoeval.scoring.classes import score_classes

            _step(progress, "scoring each class")
            classes = score_classes(reference, submission, ov, results, matcher_params,
                                    mallows_options=mallows_options)
        errors = None
        if breakdown:
            from geoeval.measures.breakdown import error_breakdown

            errors = {name: error_breakdown(r.matching, r.instance_mallows)
                      for name, r in results.items()}
            if classes is not None:
                from dataclasses import replace

                from geoeval.scoring.class_breakdown import class_confusion

                _step(progress, "class confusion")
                cc = class_confusion(reference, submission, ov, results, matcher_params, classes,
                                     mallows_options=mallows_options)
                errors = {name: replace(b, class_confusion=cc[name]) for name, b in errors.items()}
        geometry = None
        if geometry_measures:
            from geoeval.measures.geometry import geometry_measures as measure_geometry

            _step(progress, "geometry measures")
            geometry = measure_geometry(ov, {n: r.matching for n, r in results.items()},
                                        geometry_measures, boundary_width=boundary_width,
                                        boundary_band=boundary_band)
        strata = boot = None
        if size_bins is not None or zones is not None or classes is not None:
            from geoeval.scoring.strata import score_strata

            _step(progress, "scoring each stratum")
            strata = score_strata(
                reference, submission, ov, results, matcher_params, size_bins=size_bins,
                zones=zones, zone_field=zone_field, per_class=classes,
                mallows_options=mallows_options)
        if bootstrap is not None:
            from geoeval.scoring.bootstrap import bootstrap_scene

            _step(progress, "bootstrap")
            boot = bootstrap_scene(reference, submission, ov, results, n=bootstrap, seed=seed,
                                   confidence=confidence, block_size=block_size)
            if strata is not None:
                from geoeval.scoring.strata import bootstrap_strata

                strata = bootstrap_strata(strata, boot)
        return ScoreResult(reference, submission, ov, results, params, tuple(warnings), classes,
                           breakdown=errors, strata=strata, bootstrap=boot,
                           geometry=geometry)


def report_parameters(matchers: Sequence[str], options: Mapping[str, Any],
                      evaluation_crs: dict[str, Any] | None, mallows: bool,
                      resolution: float | None, approximate: bool | None
                      ) -> tuple[dict[str, Any], list[str]]:
    """The report's ``parameters`` (matchers, evaluation CRS, each matcher parameter in
    registry order, the Mallows settings when computed) and the matchers that get the
    Mallows score (MOM always: it is its accuracy; all with ``mallows``). Not the engine:
    where the work ran does not change the report."""
    params: dict[str, Any] = {"matchers": list(matchers)}
    if evaluation_crs is not None:
        params["evaluation_crs"] = evaluation_crs
    specs = [registry.get(n) for n in matchers]
    used = {p.keyword for spec in specs for p in spec.parameters}
    for p in registry.parameters():  # the report lists them in registry order
        if p.keyword in used:
            params[p.keyword] = options.get(p.keyword, p.default)
    want_mallows = [s.name for s in specs if s.accuracy == registry.MALLOWS or mallows]
    if want_mallows:
        params["mallows"] = {"resolution": resolution, "approximate": approximate}
    return params, want_mallows


def _engine(engine: str | Engine, scheduler: str | None, n_jobs: int | None,
            progress: Callable[[str], None] | None, memory_limit: str | None = None) -> Any:
    """A context giving the open :class:`~geoeval.engine.Engine`: ``engine`` itself
    when it is already open (:func:`score` opens it before reading), else opened
    here for the run (:func:`geoeval.engine.open_engine`)."""
    from contextlib import nullcontext

    from geoeval.engine import open_engine

    if isinstance(engine, Engine):
        return nullcontext(engine)
    check_engine(engine, scheduler)
    if engine != "local":
        _step(progress, f"starting the {engine} engine")
    return open_engine(engine, scheduler, n_jobs, memory_limit)


def _counter(progress: Callable[[str], None] | None, what: str,
             unit: str) -> Callable[[int, int, float], None] | None:
    """``(done, total, fraction of the work)`` callbacks turned into step texts
    with the time left, from the throughput measured since the first
    :data:`WARM_UP` items (start-up costs left out; no guess before that)."""
    if progress is None:
        return None
    import time

    base: list[float] = []  # (time, fraction) once WARM_UP items are done

    def report(done: int, total: int, fraction: float) -> None:
        now = time.monotonic()
        eta = ""
        if not base and done >= min(WARM_UP, total):
            base.extend((now, fraction))
        elif base and fraction > base[1] and now - base[0] >= MEASURED and fraction < 1:
            left = (now - base[0]) * (1 - fraction) / (fraction - base[1])
            eta = f", about {left:.0f} s left"
        progress(f"{what}: {done:,}/{total:,} {unit}{eta}")

    return report


#: Items done before the throughput is measured (the first ones carry start-up costs).
WARM_UP = 3
#: Seconds of measured throughput before a time left is printed.
MEASURED = 1.0


def _parts(progress: Callable[[str], None] | None,
           what: str) -> Callable[[str, int, int], None] | None:
    """:func:`geoeval.parallel.reporting` callbacks turned into step texts: the
    sub-step, its parts done and the time left of that sub-step."""
    if progress is None:
        return None
    import time

    base: list[float] = [0.0, 0.0]  # (time, parts done) when the throughput is measured

    def report(sub: str, done: int, total: int) -> None:
        now = time.monotonic()
        if done == 0 or done < min(WARM_UP, total) and base[1] == 0:
            base[:] = [now, float(done)]
            if done == 0:
                return
        eta = ""
        if done > base[1] and now - base[0] >= MEASURED and done < total:
            left = (now - base[0]) * (total - done) / (done - base[1])
            eta = f", about {left:.0f} s left" if left >= 1 else ""
        progress(f"{what}: {sub} {done}/{total} parts{eta}")

    return report


def _step(progress: Callable[[str], None] | None, name: str) -> None:
    if progress is not None:
        progress(name)

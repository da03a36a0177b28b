"""``geoeval.score``: one submission against one reference, every matcher.

read → overlap → match → measure, as ``docs/architecture.md`` draws it. The CLI
command ``geoeval score`` is a thin wrapper around :func:`score`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from geoeval.engine import Engine
from geoeval.errors import InputError
from geoeval.matching import registry
from geoeval.objects import ObjectSet
from geoeval.parallel import gc_paused
from geoeval.progress import TimeLeft
from geoeval.scoring.dispatch import Route, dispatch
from geoeval.scoring.options import ScoreOptions, Side, score_options, side
from geoeval.scoring.result import MatcherResult, ScoreResult, describe, empty_sides, measure


@gc_paused
def score(
    reference: str | Path | ObjectSet,
    submission: str | Path | ObjectSet,
    options: ScoreOptions | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    objects: Callable[[str, Any], Any] | None = None,
    opened: Engine | None = None,
    **keywords: Any,
) -> ScoreResult:
    """Read one submission and one reference and score them with the chosen matchers.

    Writes nothing: :func:`geoeval.score` adds the GeoPackage, CSV tables and
    figure outputs.

    Parameters
    ----------
    reference, submission : path or ObjectSet
        Labelled rasters or vector layers (or objects already read).
    options : ScoreOptions, optional
        The options, already built (:func:`geoeval.scoring.options.score_options`);
        else ``keywords`` are its keywords: ``matchers``, the matchers' parameters
        (``hoover_threshold``, ``iou_threshold``, ``min_overlap``, any registered
        one), ``mallows``, ``resolution``, ``approximate``, ``n_jobs``, the reader
        options (``band``, ``background``, ``layer``, ``id_field``, ``class_field``,
        ``crs``, ``reference_options``, ``submission_options``), ``evaluation_crs``,
        ``size_bins``, ``zones``, ``zone_field``, ``bootstrap``, ``confidence``,
        ``seed``, ``block_size``, ``breakdown``, ``geometry_measures``,
        ``boundary_width``, ``boundary_band``, ``engine``, ``scheduler``,
        ``memory_limit``, ``lists``, ``partitioned``, ``region``, ``region_crs`` (each
        documented there).
    progress : callable, optional
        Called with the name of each long step as it starts.
    objects : callable, optional
        ``objects(id_kind, crs)`` opens the objects dataset writer of a
        partitioned run (:func:`geoeval.report.objects_dataset.open_dataset`).
    opened : Engine, optional
        An engine already open (several scenes share one Dask cluster).

    Returns
    -------
    ScoreResult
        The scene's objects and matchings with their summary, the same from every
        engine; a Dask run by partitions or blocks keeps the objects and matchings on
        its workers (reading them raises :class:`~geoeval.errors.NotHeldError` saying
        what to use instead, :attr:`ScoreResult.objects_held` is ``False``).

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

    options = _built(options, keywords)
    ref_side, sub_side = sides(reference, submission, options)
    region_notes: tuple[str, ...] = ()
    if options.region is not None:
        with options.sides_named():
            options, region_notes = _region(options, ref_side, sub_side)
    from geoeval import parallel

    # the engine is open while reading too: a raster's windowed scan runs on it
    with _engine(opened, options, progress) as eng, parallel.remote(eng.mapper), \
            options.sides_named():
        choice = dispatch(ref_side, sub_side, options, dask=eng.client is not None,
                          objects=objects is not None)
        if choice.route is Route.PARTITIONS:
            from geoeval.scoring.by_partitions import score_partitioned

            if options.region is not None:  # each side's pieces restricted to it
                ref_side, sub_side = (s.but(region=options.region) for s in (ref_side, sub_side))
            return _region_checked(ScoreResult.added(score_partitioned(
                eng.client, ref_side, sub_side, options, objects=objects, progress=progress)),
                options, region_notes)
        if choice.route is Route.BLOCKS:
            from geoeval.scoring.by_blocks import Plan, score_mosaic_files

            plan = choice.plan
            if options.region is not None:  # only the region's window, its labels
                from geoeval.io.region_raster import region_blocks

                plan = Plan(*region_blocks(plan.sources, plan.transform, plan.crs,
                                           options.region), plan.crs)
            return _region_checked(ScoreResult.added(score_mosaic_files(
                eng.client, plan, ref_side, sub_side, options, progress=progress)),
                options, region_notes)
        # where the work runs: a note, not part of the report
        notes = (*(() if choice.note is None else (choice.note,)), *region_notes)
        _step(progress, "reading")
        within = {} if options.region is None else {"region": options.region}
        with parallel.reporting(_parts(progress, "reading")):
            ref, sub, warnings, counts = read_pair_counted(
                ref_side.source, sub_side.source,
                reference_options={**ref_side.reader, **within},
                submission_options={**sub_side.reader, **within})
        if options.region is not None and not len(ref) and not len(sub):
            from geoeval.io.region import empty_region

            raise empty_region(options.region)
        if options.class_field is not None and ref.classes is None:
            raise InputError(f"--class-field {options.class_field!r} applies to vector "
                             "layers only", ref.path)
        result = _score_objects(ref, sub, options, warnings=warnings, pair_counts=counts,
                                engine=eng, progress=progress)
        if notes:
            from dataclasses import replace

            result = replace(result, notes=(*notes, *result.notes))
        return result


def _region(options: ScoreOptions, reference: Side, submission: Side
            ) -> tuple[ScoreOptions, tuple[str, ...]]:
    """The options with their region in its CRS (the reference's unless given), and
    the notes on the vector files the region cannot prune (metadata only)."""
    from geoeval.io.formats import format_of
    from geoeval.io.region import resolved
    from geoeval.io.region_pieces import region_notes
    from geoeval.io.region_raster import raster_notes
    from geoeval.scoring.options import RASTER, VECTOR

    region = resolved(options.region, _source_crs(reference.source, reference.kind,
                                                  reference.reader))
    notes: list[str] = []
    for s in (reference, submission):
        if s.is_file and format_of(s.source).reader() is None:
            notes += (region_notes(s.source, region, **s.reader) if s.kind == VECTOR
                      else raster_notes(s.source, region, **s.reader) if s.kind == RASTER
                      else ())
    if reference.kind == submission.kind == RASTER and reference.is_file \
            and submission.is_file and not any(format_of(s.source).reader() is not None
                                               for s in (reference, submission)):
        from geoeval.io.region_raster import shared_window

        region = shared_window(reference.source, submission.source, region,
                               (reference.reader, submission.reader))
    return options.but(region=region), tuple(notes)


def _source_crs(source: Any, kind: str, reader: dict[str, Any]) -> Any:
    """The CRS an input will be read in, from its metadata where it is a file (the
    default CRS of a region given as a box: the reference's)."""
    from geoeval.io import in_memory_type, read
    from geoeval.io.formats import format_of
    from geoeval.objects import ObjectSet

    if isinstance(source, ObjectSet):
        return source.crs
    assumed = reader.get("crs")
    if in_memory_type(source) is not None or format_of(source).reader() is not None:
        return read(source, **{k: v for k, v in reader.items() if k != "region"}).crs
    if kind == "raster":
        from geoeval.io.raster import open_source
        from geoeval.io.zipped import resolve

        crs = open_source(resolve(source), band=reader.get("band", 1),
                          background=reader.get("background", 0))[2]
    else:
        from geoeval.io.pieces import layer_crs

        crs = layer_crs(source, reader.get("layer"))
    return crs if crs is not None else assumed


def _region_checked(result: ScoreResult, options: ScoreOptions,
                    notes: tuple[str, ...]) -> ScoreResult:
    """A Dask run's result with the region's notes; the error of a region that holds
    no object of either input."""
    if options.region is None:
        return result
    s = result.summary
    if not s.reference.objects and not s.submission.objects:
        from geoeval.io.region import empty_region

        raise empty_region(options.region)
    if not notes:
        return result
    from dataclasses import replace

    return replace(result, notes=(*result.notes, *notes))
def sides(reference: Any, submission: Any, options: ScoreOptions) -> tuple[Side, Side]:
    """Both inputs resolved once, at the edge (:func:`geoeval.scoring.options.side`),
    GDAL configured for the stores first (:func:`geoeval.io.locations.configure_gdal`:
    ``AWS_ENDPOINT_URL`` in GDAL's spelling, ``anon``)."""
    _configured(options, reference, submission)
    return (side(reference, options.reference, attributes=options.attributes,
                 anon=options.anon),
            side(submission, options.submission,
                 optional_class=options.class_field is not None,
                 attributes=options.attributes, anon=options.anon))


def _configured(options: ScoreOptions, *sources: Any) -> None:
    """GDAL configured for the stores before ``sources`` are resolved, when one is a
    URL or ``anon`` is asked for; Arrow's reads told ``anon`` (once per run)."""
    from geoeval.io.locations import configure_gdal, is_url
    from geoeval.io.stores import use_anon

    use_anon(options.anon)
    if options.anon or any(is_url(str(s)) for s in sources if isinstance(s, str | Path)):
        configure_gdal(anon=options.anon)


def _built(options: ScoreOptions | None, keywords: dict[str, Any]) -> ScoreOptions:
    """``options``, or the options of ``keywords`` (:func:`score_options`) checked."""
    if options is None:
        return score_options(**keywords)
    if keywords:
        raise TypeError(f"options given twice: as a ScoreOptions and as keywords "
                        f"({', '.join(sorted(keywords))})")
    return options


def read_reference(reference: str | Path | ObjectSet,
                   options: ScoreOptions | None = None, **keywords: Any) -> ObjectSet:
    """Read a reference once with :func:`score`'s reader options, to score many
    submissions against it (pass the result as ``reference`` to :func:`score`)."""
    if isinstance(reference, ObjectSet):
        return reference
    from geoeval.io import read_side

    options = _built(options, keywords)
    _configured(options, reference)
    with options.sides_named():
        one = side(reference, options.reference, attributes=options.attributes,
                   anon=options.anon)
        reader = one.reader
        if options.region is not None:  # only the objects of the region
            from geoeval.io.region import resolved

            reader["region"] = resolved(options.region,
                                        _source_crs(one.source, one.kind, reader))
        return read_side(one.source, "reference", **reader)


def check_options(*, gpkg_matcher: str | None = None, **keywords: Any) -> None:
    """Check the scoring keywords (:func:`score_options`) and ``gpkg_matcher`` (one
    registered matcher); :class:`InputError` naming the first bad one."""
    if gpkg_matcher is not None and gpkg_matcher not in registry.names():
        raise InputError(f"gpkg_matcher takes one matcher ({', '.join(registry.names())}), "
                         f"got {gpkg_matcher!r}")
    if keywords:
        score_options(**keywords)


@gc_paused
def score_objects(
    reference: ObjectSet,
    submission: ObjectSet,
    options: ScoreOptions | None = None,
    *,
    progress: Callable[[str], None] | None = None,
    warnings: Sequence[str] = (),
    pair_counts: Any = None,
    opened: Engine | None = None,
    **keywords: Any,
) -> ScoreResult:
    """:func:`score` for object sets already read and in one CRS.

    ``options`` (or ``keywords``) as :func:`score` takes them; with ``per_class`` (and
    classes on the reference) every class is also scored on its own
    (:mod:`geoeval.scoring.classes`); with ``breakdown`` each matcher's error breakdown
    (:mod:`geoeval.measures.breakdown`) is added. Objects in a geographic or Mercator
    CRS are first reprojected as :func:`score` says (``evaluation_crs``).
    ``warnings`` are the readers'; ``pair_counts`` the label-pair counts the reader
    returned with two rasters (:func:`geoeval.io.read_pair_counted`), so the overlap
    does not read them again.
    """
    return _score_objects(reference, submission, _built(options, keywords),
                          warnings=warnings, pair_counts=pair_counts, engine=opened,
                          progress=progress)


def _score_objects(reference: ObjectSet, submission: ObjectSet, options: ScoreOptions, *,
                   warnings: Sequence[str], pair_counts: Any, engine: Engine | None,
                   progress: Callable[[str], None] | None) -> ScoreResult:
    """:func:`score_objects` with its options built."""
    from geoeval.io.evaluation_crs import evaluation_record, to_evaluation_crs

    matchers = options.matchers
    reference, submission, crs_info, crs_warnings = to_evaluation_crs(
        reference, submission, options.evaluation_crs)
    resolution, approximate, n_jobs = options.resolution, options.approximate, options.n_jobs
    from geoeval import parallel

    warnings = [*warnings, *crs_warnings,
                *empty_sides(describe(reference), describe(submission),
                             region=options.region is not None)]
    if options.strict and warnings:  # known from reading: refused before the work
        from geoeval.errors import StrictError
        from geoeval.validate import option_name

        raise StrictError(warnings, option_name("strict", switch=True))
    with _engine(engine, options, progress) as eng, parallel.remote(eng.mapper):
        _step(progress, "overlap")
        with parallel.reporting(_parts(progress, "overlap")):
            ov = eng.overlap(reference, submission, pair_counts)
        want_mallows = options.mallows_matchers
        chosen, notes = None, ()
        if want_mallows and reference.grid is None and submission.grid is None \
                and resolution is None:
            from geoeval.measures.rasterize import auto_resolution, auto_resolution_note

            resolution = chosen = auto_resolution(reference, submission)
            if chosen is not None:  # the default, recorded in the report: a note
                notes = (auto_resolution_note(chosen),)
        params = options.report_parameters(
            crs_info if crs_info is not None else
            None if reference.crs is None else evaluation_record(reference.crs), chosen)
        can_mallows = bool(want_mallows) and (
            reference.grid is not None or submission.grid is not None or resolution is not None)
        # new Mallows scores of classes and strata: the scene's settings, this process
        mallows_options = {"resolution": resolution, "approximate": approximate,
                           "n_jobs": n_jobs}
        results: dict[str, MatcherResult] = {}
        matcher_params = options.matcher_arguments()
        for name in matchers:
            spec = registry.get(name)
            _step(progress, f"matching ({name})")
            with parallel.reporting(_parts(progress, f"matching ({name})")):
                m = spec.run(ov, **matcher_params[name])
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
        if options.per_class and reference.classes is not None:
            from geoeval.scoring.classes import score_classes

            _step(progress, "scoring each class")
            classes = score_classes(reference, submission, ov, results, matcher_params,
                                    mallows_options=mallows_options)
        errors = None
        if options.breakdown:
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
        if options.geometry is not None:
            from geoeval.measures.geometry import geometry_measures as measure_geometry

            g = options.geometry
            _step(progress, "geometry measures")
            geometry = measure_geometry(ov, {n: r.matching for n, r in results.items()},
                                        g.measures, boundary_width=g.boundary_width,
                                        boundary_band=g.boundary_band)
        strata = boot = None
        st = options.strata
        if st is not None or classes is not None:
            from geoeval.scoring.strata import score_strata

            _step(progress, "scoring each stratum")
            strata = score_strata(
                reference, submission, ov, results, matcher_params,
                size_bins=None if st is None else st.size_bins,
                zones=None if st is None else st.zones,
                zone_field=None if st is None else st.zone_field, per_class=classes,
                mallows_options=mallows_options)
        if options.bootstrap is not None:
            from geoeval.scoring.bootstrap import bootstrap_scene

            b = options.bootstrap
            _step(progress, "bootstrap")
            boot = bootstrap_scene(reference, submission, ov, results, n=b.n, seed=b.seed,
                                   confidence=b.confidence, block_size=b.block_size)
            if strata is not None:
                from geoeval.scoring.strata import bootstrap_strata

                strata = bootstrap_strata(strata, boot)
        return ScoreResult(reference, submission, ov, results, params, tuple(warnings), classes,
                           errors, strata, boot, geometry, notes=notes)


def _engine(opened: Engine | None, options: ScoreOptions,
            progress: Callable[[str], None] | None) -> Any:
    """A context giving the open :class:`~geoeval.engine.Engine`: ``opened`` when it is
    already open (:func:`score` opens it before reading; scenes share one), else the
    options' engine opened for the run (:func:`geoeval.engine.open_engine`)."""
    from contextlib import nullcontext

    from geoeval.engine import open_engine

    if opened is not None:
        return nullcontext(opened)
    e = options.engine
    if e.name != "local":
        _step(progress, f"starting the {e.name} engine")
    return open_engine(e.name, e.scheduler, e.n_jobs, e.memory_limit)


def _counter(progress: Callable[[str], None] | None, what: str,
             unit: str) -> Callable[[int, int, float], None] | None:
    """``(done, total, fraction of the work)`` callbacks turned into step texts with the
    time left (:class:`geoeval.progress.TimeLeft`)."""
    if progress is None:
        return None
    left = TimeLeft()

    def report(done: int, total: int, fraction: float) -> None:
        progress(f"{what}: {done:,}/{total:,} {unit}{left.text(done, total, fraction)}")

    return report


def _parts(progress: Callable[[str], None] | None,
           what: str) -> Callable[[str, int, int], None] | None:
    """:func:`geoeval.parallel.reporting` callbacks turned into step texts: the
    sub-step, its parts done and the time left of that sub-step."""
    if progress is None:
        return None
    left = TimeLeft()

    def report(sub: str, done: int, total: int) -> None:
        eta = left.text(done, total)
        if done:  # a sub-step starting: its count, from the next part on
            progress(f"{what}: {sub} {done}/{total} parts{eta}")

    return report


def _step(progress: Callable[[str], None] | None, name: str) -> None:
    if progress is not None:
        progress(name)

"""Scoring two vector layers by partitions on a Dask cluster: summaries only in the client.

:func:`geoeval.scoring.dispatch.dispatch` says whether a run goes this way;
:func:`score_partitioned` runs it (:func:`geoeval.engine.layers.score_layers`)
and returns its :class:`~geoeval.scoring.summary.ScoreSummary`, whose JSON report is
the in-memory engine's (``docs/report.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from geoeval.errors import printable
from geoeval.grid import crs_code
from geoeval.scoring.summary import (
    OverlapSummary,
    ScoreSummary,
    SideSummary,
    added_sums,
    empty_sides,
    ilp_components,
    matcher_summary,
)


def score_partitioned(client: Any, reference_side: Any, submission_side: Any, options: Any, *,
                      objects: Callable[[str, Any], Any] | None = None,
                      progress: Callable[[str], None] | None = None) -> ScoreSummary:
    """Score two vector layers (:class:`~geoeval.scoring.options.Side`) by partitions
    (:mod:`geoeval.engine.layers`) with the
    :class:`~geoeval.scoring.options.ScoreOptions` ``options``.

    ``objects(id_kind, crs)`` opens the objects dataset writer (see
    :func:`geoeval.report.objects_dataset.open_dataset`). The Mallows score
    (Özdemir et al. 2010, §4.2) of a matcher whose accuracy it is (MOM), or of every
    matcher with ``mallows``, is computed per instance in the partition tasks and
    reduced as sums and counts. The breakdown, strata, classes and bootstrap are
    computed as partial sums in the same tasks
    (:mod:`geoeval.scoring.partition_sums`).
    """
    from geoeval.engine.layers import score_layers
    from geoeval.io.evaluation_crs import evaluation_record
    from geoeval.io.vector import reader_notes

    reference, submission = reference_side.source, submission_side.source
    reference_options, submission_options = reference_side.reader, submission_side.reader
    matchers = options.matchers
    params = options.matcher_arguments()
    want_mallows = options.mallows_matchers
    resolution, approximate = options.resolution, options.approximate
    plan = None
    classes = reference_options.get("class_field") is not None
    st, boot = options.strata, options.bootstrap
    if options.breakdown or st is not None or boot is not None or classes:
        from geoeval.scoring import partition_sums as ps

        if st is not None and st.zones is not None:  # read before the work
            from geoeval.scoring.strata import read_zones

            read_zones(st.zones, st.zone_field, None)
        plan = ps.Plan.of(options, classes=classes)
    def refuse_empty(n_reference: int, n_submission: int) -> None:
        """``strict``: an empty layer, known from the metadata, refused before the work
        (the warning the run would give at the end, word for word)."""
        early = empty_sides(*(SideSummary(printable(path), "vector", n, None, 0, 0)
                              for path, n in ((reference, n_reference),
                                              (submission, n_submission))),
                            region=options.region is not None)
        if early:
            from geoeval.errors import StrictError
            from geoeval.validate import option_name

            raise StrictError(early, option_name("strict", switch=True))

    res = score_layers(client, reference, submission, matchers=matchers, params=params,
                       reference_options=reference_options,
                       submission_options=submission_options, writer=objects,
                       progress=progress,
                       mallows={"matchers": want_mallows, "resolution": resolution,
                                "approximate": approximate}, summaries_plan=plan,
                       lists=options.lists and objects is None,
                       planned=refuse_empty if options.strict else None)
    warnings: list[str] = []
    sides = []
    for path, n, cnt, crs in ((reference, res.n_reference, res.counts[0], res.crs[0]),
                              (submission, res.n_submission, res.counts[1], res.crs[1])):
        name = printable(path)  # a name that is not UTF-8 written \xNN, as the reader does
        sides.append(SideSummary(name, "vector", n, crs_code(crs), cnt["repaired"],
                                 cnt["features"] - n))
        warnings += [f"{name}: {note}" for note in reader_notes(cnt)]
    warnings += empty_sides(*sides, region=options.region is not None)
    chosen = res.mallows_resolution if want_mallows and resolution is None else None
    notes = ()
    if chosen is not None:  # the default, recorded in the report: a note
        from geoeval.measures.rasterize import auto_resolution_note

        notes = (auto_resolution_note(chosen),)
    parameters = options.report_parameters(
        None if res.crs[0] is None else evaluation_record(res.crs[0]), chosen)
    results = {}
    for name in matchers:
        m = res.matchers[name]
        mal = m.get("mallows")
        if mal is not None and mal["approximated"]:
            from geoeval.measures.mallows import pooling_warning

            warnings.append(pooling_warning(name, mal["approximated"], mal["max_error_bound"]))
        results[name] = matcher_summary(
            name, added_sums(res.n_reference, res.n_submission, m, res.union_area), m["kinds"],
            m["params"], m["solver"], mal, None if res.lists is None else res.lists[name])
    overlap = OverlapSummary("rtree", res.pairs, res.components,
                             ilp_components({n: res.matchers[n]["solver"] for n in matchers}),
                             float(res.union_area))
    extra: dict[str, Any] = {}
    if plan is not None:
        from geoeval.scoring import partition_sums as ps

        names = list(matchers)
        if options.breakdown:
            extra["breakdown"] = ps.breakdown_report(res.partials[ps.BREAKDOWN], names)
        if ps.STRATA in res.partials:
            extra["strata"] = ps.strata_report(res.partials[ps.STRATA], plan, res.prepared,
                                               names)
        if classes:
            from geoeval.scoring.classes import FROM_FIELD, FROM_REFERENCE

            source = FROM_FIELD if submission_options.get("class_field") is not None \
                else FROM_REFERENCE
            got = res.partials[ps.PER_CLASS]
            extra["per_class"] = ps.per_class_report(got, source, names)
            # as the in-memory engine: the classes are a kind of strata too
            extra["strata"] = {**(extra.get("strata") or {}),
                               "class": ps.class_strata_report(got, source, plan,
                                                               res.prepared or {}, names)}
            if options.breakdown:
                for m, cc in ps.class_confusion_report(got, names).items():
                    extra["breakdown"][m]["class_confusion"] = cc
        if boot is not None:
            extra["bootstrap"] = ps.bootstrap_report(res.partials[ps.BOOTSTRAP], plan,
                                                     res.prepared["grid"])
    return ScoreSummary(sides[0], sides[1], overlap, results, parameters, tuple(warnings),
                        objects_dataset=res.objects_dataset, notes=notes,
                        partitions={"partitions": res.partitions,
                                    "boundary_objects": res.boundary_objects,
                                    "halo_objects": res.halo_objects,
                                    "reference_pieces": res.pieces[0],
                                    "submission_pieces": res.pieces[1]}, **extra)

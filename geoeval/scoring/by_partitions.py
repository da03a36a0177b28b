"""Scoring two vector layers by partitions on a Dask cluster: summaries only in the client.

:func:`geoeval.scoring.dispatch.dispatch` says whether a run goes this way;
:func:`score_partitioned` runs it (:func:`geoeval.engine.distributed.score_layers`)
and returns a :class:`PartitionedResult`, whose JSON report is the in-memory
engine's (``docs/report.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from geoeval.matching import registry
from geoeval.measures import counts


def empty_side_warnings(reference: dict[str, Any], submission: dict[str, Any]) -> list[str]:
    """The in-memory run's warnings for a side without objects, from the sides' report
    entries (:func:`geoeval.scoring.result.empty_sides`)."""
    import numpy as np

    from geoeval.objects import ObjectSet
    from geoeval.scoring.result import empty_sides

    sides = [ObjectSet(ids=np.zeros(min(d["objects"], 1)), areas=np.zeros(0),
                       path=d["path"], input_type="vector", skipped=d["skipped"])
             for d in (reference, submission)]
    return empty_sides(*sides)


@dataclass(frozen=True)
class PartitionedMatcher:
    """One matcher's summary (the report's ``results.<matcher>`` without the lists)."""

    matcher: str
    n_reference: int
    n_submission: int
    missed: int
    false_alarms: int
    matched_overlap: float
    accuracy: float | None
    kinds: dict[str, int]
    params: dict[str, Any]
    solver: dict[str, int]
    mallows: float | None = None
    mallows_details: dict[str, Any] | None = None
    #: The per-object lists (:class:`~geoeval.matching.lists.MatchLists`), gathered when
    #: no objects dataset was written.
    lists: Any = None

    def __repr__(self) -> str:
        from geoeval.reprs import number

        return (f"<PartitionedMatcher {self.matcher}: precision {number(self.precision)}, "
                f"recall {number(self.recall)}, F1 {number(self.f1)}, accuracy "
                f"{number(self.accuracy)}; {self.missed} missed, {self.false_alarms} false "
                "alarms>")

    @property
    def precision(self) -> float | None:
        """``(No − FA)/No`` (Özdemir et al. 2010, eq. 14; :mod:`geoeval.measures.counts`)."""
        return counts.as_number(counts.ratio_values(self.n_submission - self.false_alarms,
                                                    self.n_submission))

    @property
    def recall(self) -> float | None:
        """``(Nr − MD)/Nr`` (Özdemir et al. 2010, eq. 15; :mod:`geoeval.measures.counts`)."""
        return counts.as_number(counts.ratio_values(self.n_reference - self.missed,
                                                    self.n_reference))

    @property
    def f1(self) -> float | None:
        return counts.f1(self.precision, self.recall)

    def to_dict(self, objects: str | None, *, rows: bool = False) -> dict[str, Any]:
        from geoeval.scoring.result import list_fields

        kinds = {k: int(self.kinds.get(k, 0)) for k in ("one-to-one", "one-to-many",
                                                        "many-to-one")}
        kinds.update({k: int(v) for k, v in self.kinds.items() if k not in kinds and v})
        return {
            "matched_reference": self.n_reference - self.missed,
            "matched_submission": self.n_submission - self.false_alarms,
            "missed": self.missed, "false_alarms": self.false_alarms,
            "precision": self.precision, "recall": self.recall, "f1": self.f1,
            "matched_overlap": self.matched_overlap, "accuracy": self.accuracy,
            "mallows": self.mallows, "mallows_details": self.mallows_details,
            "instances_by_kind": kinds,
            "parameters": self.params, "solver": self.solver or None,
            **list_fields(self.lists, objects, rows=rows),
        }


@dataclass(frozen=True)
class PartitionedResult:
    """What a partitioned Dask run returns: summaries, and where the objects were written."""

    reference: dict[str, Any]
    submission: dict[str, Any]
    overlap: dict[str, Any]
    results: dict[str, PartitionedMatcher]
    parameters: dict[str, Any]
    warnings: tuple[str, ...] = ()
    objects_dataset: str | None = None
    partitions: dict[str, int] = field(default_factory=dict)
    #: The report's ``breakdown`` and ``strata`` objects, and the bootstrap
    #: (:class:`~geoeval.scoring.bootstrap.BootstrapResult`), when asked for
    #: (:mod:`geoeval.scoring.partition_sums`).
    breakdown: dict[str, Any] | None = None
    strata: dict[str, Any] | None = None
    bootstrap: Any = None
    #: The report's ``per_class`` object, with ``class_field``.
    per_class: dict[str, Any] | None = None
    #: Where the work ran and why (not part of the report).
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        from geoeval.reprs import number, warned

        scores = ", ".join(f"{n}: F1 {number(r.f1)}, accuracy {number(r.accuracy)}"
                           for n, r in self.results.items())
        unit = "blocks" if "blocks" in self.partitions else "partitions"
        return (f"<PartitionedResult {self.reference.get('objects')} reference vs "
                f"{self.submission.get('objects')} submitted objects in "
                f"{self.partitions.get(unit, 0)} {unit}; {scores}{warned(self.warnings)}>")

    def to_dict(self, *, rows: bool = False) -> dict[str, Any]:
        """The JSON report (``rows`` as :meth:`ScoreResult.to_dict`)."""
        from geoeval._version import __version__
        from geoeval.scoring.result import REPORT_SCHEMA_VERSION

        return {
            "geoeval": __version__, "schema": REPORT_SCHEMA_VERSION,
            "reference": self.reference, "submission": self.submission,
            "overlap": self.overlap, "parameters": self.parameters,
            "warnings": list(self.warnings),
            "results": {n: r.to_dict(self.objects_dataset, rows=rows)
                        for n, r in self.results.items()},
            "per_class": self.per_class, "breakdown": self.breakdown, "strata": self.strata,
            "bootstrap": None if self.bootstrap is None else self.bootstrap.to_dict(),
            "geometry": None,
        }

    def to_json(self) -> str:
        from geoeval.encoding import dumps

        return dumps(self.to_dict(rows=True))


def score_partitioned(client: Any, reference_side: Any, submission_side: Any, options: Any, *,
                      objects: Callable[[str, Any], Any] | None = None,
                      progress: Callable[[str], None] | None = None) -> PartitionedResult:
    """Score two vector layers (:class:`~geoeval.scoring.options.Side`) by partitions
    (:mod:`geoeval.engine.distributed`) with the
    :class:`~geoeval.scoring.options.ScoreOptions` ``options``.

    ``objects(id_kind, crs)`` opens the objects dataset writer (see
    :func:`geoeval.report.objects_dataset.open_dataset`). The Mallows score
    (Özdemir et al. 2010, §4.2) of a matcher whose accuracy it is (MOM), or of every
    matcher with ``mallows``, is computed per instance in the partition tasks and
    reduced as sums and counts. The breakdown, strata, classes and bootstrap are
    computed as partial sums in the same tasks
    (:mod:`geoeval.scoring.partition_sums`).
    """
    from geoeval.engine.distributed import score_layers
    from geoeval.io import crs_name
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
    res = score_layers(client, reference, submission, matchers=matchers, params=params,
                       reference_options=reference_options,
                       submission_options=submission_options, writer=objects,
                       progress=progress,
                       mallows={"matchers": want_mallows, "resolution": resolution,
                                "approximate": approximate}, summaries_plan=plan,
                       lists=options.lists and objects is None)
    sides = []
    warnings: list[str] = []
    for path, n, cnt, crs in ((reference, res.n_reference, res.counts[0], res.crs[0]),
                              (submission, res.n_submission, res.counts[1], res.crs[1])):
        sides.append({"path": str(path), "input_type": "vector", "objects": n,
                      "crs": None if crs is None else crs.to_string(),
                      "repaired": cnt["repaired"], "skipped": cnt["features"] - n})
        warnings += [f"{path}: {note}" for note in reader_notes(cnt)]
    warnings += empty_side_warnings(sides[0], sides[1])
    parameters = options.report_parameters(
        None if res.crs[0] is None else {"crs": crs_name(res.crs[0]),
                                         "rule": "the reference's CRS"})
    if want_mallows:
        if resolution is None and res.mallows_resolution is not None:
            from geoeval.measures.rasterize import AUTO_RESOLUTION_RULE, auto_resolution_warning

            parameters["mallows"].update(resolution=res.mallows_resolution,
                                         resolution_rule=AUTO_RESOLUTION_RULE)
            warnings.append(auto_resolution_warning(res.mallows_resolution))
    results = {}
    for name in matchers:
        m = res.matchers[name]
        mal = m.get("mallows")
        # the accuracy of the matcher's registry rule, from the partitions' sums
        sums = dict.fromkeys(counts.SUMS, 0.0)
        sums.update(matched_area=m["matched_overlap"], union_area=res.union_area,
                    score_sum=m.get("score_sum", 0.0), score_n=m.get("score_n", 0))
        if mal is not None:
            sums.update(mallows_sum=mal["sum"], mallows_n=mal["n"])
        acc = counts.as_number(counts.measures_from_sums(registry.accuracy_rule(name),
                                                         sums)["accuracy"])
        scene, details = None, None
        if mal is not None:
            from geoeval.measures.mallows import approximation_info, pooling_warning
            from geoeval.measures.mallows import details as mallows_details

            scene = float(mal["sum"]) / mal["n"] if mal["n"] else None
            details = mallows_details(scene, "resolution", (res.mallows_resolution,) * 2,
                                      mal["undefined"], mal["solver"],
                                      approximation_info(approximate), mal["approximated"],
                                      mal["max_error_bound"])
            if mal["approximated"]:
                warnings.append(pooling_warning(name, mal["approximated"],
                                                mal["max_error_bound"]))
        results[name] = PartitionedMatcher(name, res.n_reference, res.n_submission,
                                           m["missed"], m["false_alarms"],
                                           float(m["matched_overlap"]), acc, m["kinds"],
                                           m["params"], m["solver"], scene, details,
                                           None if res.lists is None else res.lists[name])
    mom = res.matchers.get("mom")
    overlap = {"method": "rtree", "pairs": res.pairs, "components": res.components,
               "components_solved_by_ilp": None if mom is None else mom["solver"].get("ilp", 0),
               "union_area": float(res.union_area)}
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
    return PartitionedResult(sides[0], sides[1], overlap, results, parameters,
                             tuple(warnings), res.objects_dataset,
                             {"partitions": res.partitions,
                              "boundary_objects": res.boundary_objects,
                              "halo_objects": res.halo_objects,
                              "reference_pieces": res.pieces[0],
                              "submission_pieces": res.pieces[1]}, **extra)

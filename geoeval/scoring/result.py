"""What scoring returns, the same from every engine: :class:`MatcherResult` per matcher
and :class:`ScoreResult`.

A :class:`ScoreResult` holds the scene's objects, overlap and matchings (for the
GeoPackage, CSV tables, figures and pages); its numbers are its
:attr:`ScoreResult.summary` (:class:`~geoeval.scoring.summary.ScoreSummary`), the one
summary every route gives, whose ``to_dict`` is the JSON report (``docs/report.md``). A
Dask run by partitions or blocks gives a :class:`ScoreResult` too, made from the summary
it added up (:meth:`ScoreResult.added`): what it left on the workers (objects, overlap,
matchings) raises :class:`~geoeval.errors.NotHeldError` when read, saying what to use
instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from geoeval.errors import NotHeldError
from geoeval.grid import crs_code
from geoeval.matching import Matching, registry
from geoeval.matching.lists import MatchLists, listable, unlisted
from geoeval.measures import counts
from geoeval.measures.mallows import mallows_sums
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.reprs import counted, result_repr
from geoeval.reprs import number as _short
from geoeval.scoring.summary import (
    REPORT_SCHEMA_VERSION,
    MatcherSummary,
    OverlapSummary,
    ScoreSummary,
    SideSummary,
    empty_sides,
    ilp_components,
    matcher_summary,
)

__all__ = ["REPORT_SCHEMA_VERSION", "MatcherResult", "NotHeld", "ScoreResult", "describe",
           "empty_sides", "measure"]


@dataclass(frozen=True)
class NotHeld:
    """What stands for a part of a result the run left on the workers: ``what`` it is
    and what to use ``instead``; reading it raises :class:`~geoeval.errors.NotHeldError`
    saying both."""

    what: str
    instead: str

    def error(self) -> NotHeldError:
        return NotHeldError(f"{self.what}: {self.instead}")


def held(value: Any) -> Any:
    """``value``, or the :class:`NotHeld` part's error raised."""
    if isinstance(value, NotHeld):
        raise value.error()
    return value


@dataclass(frozen=True)
class MatcherResult:
    """One matcher's matching and measures, the same from every engine.

    Attributes
    ----------
    matcher : str
    matching : Matching
        Its instances and unmatched objects. A Dask run by partitions or blocks keeps
        them on the workers: reading it then raises
        :class:`~geoeval.errors.NotHeldError` saying what to use instead.
    precision, recall, f1 : float or None
        Eq. 14–15 of Özdemir et al. (2010); ``None`` when undefined.
    accuracy : float or None
        The matcher's own score: BGM eq. 1, Hoover eq. 2, mean IoU for ``iou``,
        the scene Mallows score (eq. 13) for ``mom`` once computed.
    mallows : MallowsResult or None
        Mallows scores of the instances (eq. 12) and their mean (eq. 13), when
        computed (always for ``mom``; for the others with ``mallows=True``); per
        instance, so not held after a Dask run by parts (the scene's score is
        ``summary()["mallows"]`` on every engine).
    """

    matcher: str
    _matching: Matching | NotHeld
    precision: float | None
    recall: float | None
    f1: float | None
    accuracy: float | None
    _mallows: Any = None
    #: The numbers a Dask run by parts added up (its matching not held here).
    _added: MatcherSummary | None = None

    @property
    def matching(self) -> Matching:
        """The matcher's :class:`~geoeval.matching.Matching`."""
        return held(self._matching)

    @property
    def mallows(self) -> Any:
        """The instances' Mallows scores (:class:`~geoeval.measures.mallows.MallowsResult`),
        ``None`` when not computed."""
        return held(self._mallows)

    @property
    def n_instances(self) -> int:
        """How many instances (matched groups) the matcher found."""
        if self._added is not None:
            return sum(self._added.instances_by_kind.values())
        return int(self.matching.n_instances)

    def __repr__(self) -> str:
        return (f"<MatcherResult {self.matcher}: precision {_short(self.precision)}, recall "
                f"{_short(self.recall)}, F1 {_short(self.f1)}, accuracy {_short(self.accuracy)}; "
                f"{counted(self.n_instances, 'instance')}>")

    @classmethod
    def added(cls, numbers: MatcherSummary, where: str,
              objects_dataset: str | None = None) -> MatcherResult:
        """A matcher's result from a Dask run by parts (``where``: ``"partitions"`` or
        ``"blocks"``; ``objects_dataset``: the folder its objects were written to): its
        numbers, the matching and per-instance Mallows scores left on the workers."""
        name = numbers.matcher
        local = "score with engine='local', which keeps everything in this process"
        if objects_dataset is not None:
            instead = (f"the objects dataset {objects_dataset} holds every object's "
                       f"result; {local}")
        elif where == "partitions":
            instead = ("write every object's result with geoeval.score(..., objects_dir=...), "
                       f"or {local}")
        else:
            instead = (f"{local} (an objects dataset of label rasters is not written by "
                       "blocks yet)")
        matching = NotHeld(f"the dask engine keeps the per-object matching of {name!r} on "
                           f"the workers (scored by {where})", instead)
        mallows = None if numbers.mallows_details is None else NotHeld(
            f"the dask engine keeps the per-instance Mallows scores of {name!r} on the "
            f"workers (scored by {where})", f"the scene's is summary()['mallows']; {instead}")
        return cls(name, matching, numbers.precision, numbers.recall, numbers.f1,
                   numbers.accuracy, mallows, numbers)

    def summary(self) -> dict[str, Any]:
        """The numbers of the report without the per-object lists: counts,
        precision, recall, F1, matched overlap, accuracy, scene Mallows score and
        instances by kind (shared by the JSON report, per-class and multi-scene
        reports and the GeoPackage ``summary`` table)."""
        if self._added is not None:
            return self._added.summary()
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

    def sums(self, overlap: Overlap) -> dict[str, Any]:
        """Its sufficient statistics (:func:`geoeval.measures.counts.scene_sums`) on
        ``overlap``'s union."""
        return counts.scene_sums(self.matching, overlap.union, self.instance_mallows)


@dataclass(frozen=True)
class ScoreResult:
    """Everything :func:`score` found, the same from every engine; :meth:`to_dict` is the
    JSON report.

    Attributes
    ----------
    reference, submission : ObjectSet
        The objects read.
    overlap : Overlap
        Their sparse overlap.
    results : dict of str to MatcherResult
        Each matcher's matching and measures.
    parameters : dict
        The report's ``parameters``.
    warnings : tuple of str
    per_class : PerClass or None
        Each class scored on its own (:mod:`geoeval.scoring.classes`) when
        ``class_field`` was given.
    breakdown : dict or None
        Matcher -> :class:`geoeval.measures.breakdown.Breakdown`, with ``breakdown=True``.
    strata : Strata or None
        Results by size and zone (:mod:`geoeval.scoring.strata`).
    bootstrap : BootstrapResult or None
    geometry : GeometryMeasures or None
        The geometry measures, on request.
    objects_dataset : str or None
        The objects dataset's folder when every object's result was written there
        (``objects_dir``): the report names it instead of listing the objects.
    notes : tuple of str
        Where the work ran and why (not part of the report: the engine does not change
        it).
    partitions : dict of str to int
        How a Dask run by partitions or raster blocks cut the work (``partitions`` or
        ``blocks``, objects at their boundaries …); empty otherwise.
    summary : ScoreSummary
        The numbers, route-independent: what the JSON report and the terminal tables
        are made of.

    A Dask run by partitions or blocks (``engine="dask"`` on two files, ``docs/scale.md``)
    keeps the objects, overlap and matchings on its workers: reading ``reference``,
    ``submission``, ``overlap``, a matcher's ``matching``, or ``per_class``,
    ``breakdown``, ``strata``, ``geometry`` when computed, raises
    :class:`~geoeval.errors.NotHeldError` saying what to use instead (``summary`` holds
    their numbers; ``objects_dir`` writes every object's result). :attr:`objects_held`
    says whether they are here.
    """

    _reference: ObjectSet | NotHeld
    _submission: ObjectSet | NotHeld
    _overlap: Overlap | NotHeld
    results: dict[str, MatcherResult]
    parameters: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    _per_class: Any = None  # geoeval.scoring.classes.PerClass (which builds on this module)
    _breakdown: dict[str, Any] | NotHeld | None = None
    _strata: Any = None  # geoeval.scoring.strata.Strata
    bootstrap: Any = None  # geoeval.scoring.bootstrap.BootstrapResult
    _geometry: Any = None  # geoeval.measures.geometry.GeometryMeasures, on request
    objects_dataset: str | None = None
    #: How the run ran, not warnings (``--strict`` ignores them) and not part of the
    #: report: where the work ran and why (the engine does not change the report), a
    #: default chosen from the data (the Mallows grid step; ``parameters`` records it).
    notes: tuple[str, ...] = ()
    partitions: dict[str, int] = field(default_factory=dict)
    #: The summary a Dask run by parts added up (a local run's is made from its objects).
    _added: ScoreSummary | None = None

    @property
    def reference(self) -> ObjectSet:
        """The reference's objects."""
        return held(self._reference)

    @property
    def submission(self) -> ObjectSet:
        """The submission's objects."""
        return held(self._submission)

    @property
    def overlap(self) -> Overlap:
        """The sparse overlap of the two sides."""
        return held(self._overlap)

    @property
    def per_class(self) -> Any:
        """Each class scored on its own (:class:`~geoeval.scoring.classes.PerClass`), or
        ``None``."""
        return held(self._per_class)

    @property
    def breakdown(self) -> dict[str, Any] | None:
        """Matcher -> error breakdown (:class:`geoeval.measures.breakdown.Breakdown`), or
        ``None``."""
        return held(self._breakdown)

    @property
    def strata(self) -> Any:
        """The results by stratum (:class:`geoeval.scoring.strata.Strata`), or ``None``."""
        return held(self._strata)

    @property
    def geometry(self) -> Any:
        """The geometry measures (:class:`geoeval.measures.geometry.GeometryMeasures`), or
        ``None``."""
        return held(self._geometry)

    @property
    def objects_held(self) -> bool:
        """Whether the objects, overlap and matchings are in this process (``False`` after
        a Dask run by partitions or blocks: they stayed on the workers)."""
        return not isinstance(self._reference, NotHeld)

    @classmethod
    def added(cls, summary: ScoreSummary) -> ScoreResult:
        """The result of a Dask run by partitions or blocks from the summary it added up:
        the same attributes, those left on the workers raising
        :class:`~geoeval.errors.NotHeldError` when read."""
        where = "blocks" if "blocks" in summary.partitions else "partitions"
        ran = f"the dask engine (scored by {where})"
        local = "score with engine='local', which keeps everything in this process"

        def away(what: str, instead: str) -> NotHeld:
            return NotHeld(f"{ran} keeps {what} on the workers", instead)

        def numbers(name: str, value: Any) -> NotHeld | None:
            return None if value is None else away(
                f"the {name} objects", f"result.summary.{name} holds its numbers (the "
                f"report's); {local}")

        sides = {s: away(f"the {s}'s objects", f"result.summary.{s} describes it (path, "
                         f"objects, CRS); {local}") for s in ("reference", "submission")}
        return cls(sides["reference"], sides["submission"],
                   away("the overlap", f"result.summary.overlap holds its pairs, components "
                                       f"and union area; {local}"),
                   {n: MatcherResult.added(r, where, summary.objects_dataset)
                    for n, r in summary.results.items()},
                   summary.parameters, summary.warnings,
                   numbers("per_class", summary.per_class),
                   numbers("breakdown", summary.breakdown), numbers("strata", summary.strata),
                   summary.bootstrap, numbers("geometry", summary.geometry),
                   summary.objects_dataset, summary.notes, dict(summary.partitions), summary)

    @property
    def unlisted(self) -> int | None:
        """The objects (both sides) its report does not list one by one, when there are
        more than :data:`~geoeval.matching.lists.LIST_LIMIT` (else ``None``): the
        summary's :attr:`~geoeval.scoring.summary.ScoreSummary.unlisted`, known without
        making the summary."""
        return unlisted(sum(self._sizes()))

    def _sizes(self) -> tuple[int, int]:
        if self._added is not None:
            return self._added.reference.objects, self._added.submission.objects
        return len(self.reference), len(self.submission)

    def __repr__(self) -> str:
        return result_repr("ScoreResult", *self._sizes(), self.partitions,
                           {n: (r.f1, r.accuracy) for n, r in self.results.items()},
                           self.warnings)

    @cached_property
    def summary(self) -> ScoreSummary:
        """The route-independent summary (:class:`~geoeval.scoring.summary.ScoreSummary`):
        what the JSON report and the terminal tables are made of."""
        if self._added is not None:
            return self._added
        results = {}
        # the lists of a report that lists them (LIST_LIMIT objects at most)
        listed = self.objects_dataset is None and listable(len(self.reference)
                                                           + len(self.submission))
        for name, r in self.results.items():
            m = r.matching
            lists = None if not listed else MatchLists.of(
                m, self.reference.ids, self.submission.ids, r.instance_mallows)
            results[name] = matcher_summary(
                name, r.sums(self.overlap), m.kind_counts(), m.params, m.solver_stats,
                None if r.mallows is None else mallows_sums(r.mallows), lists)
        ov = self.overlap
        return ScoreSummary(
            describe(self.reference), describe(self.submission),
            OverlapSummary(ov.method, ov.n_pairs, ov.n_components,
                           ilp_components({n: r.matching.solver_stats
                                           for n, r in self.results.items()}),
                           ov.union_area),
            results, self.parameters, self.warnings,
            None if self.per_class is None else self.per_class.to_dict(),
            None if self.breakdown is None
            else {name: b.to_dict() for name, b in self.breakdown.items()},
            None if self.strata is None else self.strata.to_dict(), self.bootstrap,
            None if self.geometry is None else self.geometry.to_dict(),
            self.objects_dataset, self.notes)

    def to_dict(self, *, rows: bool = False) -> dict[str, Any]:
        """The JSON report (:meth:`ScoreSummary.to_dict` of :attr:`summary`)."""
        return self.summary.to_dict(rows=rows)

    def to_json(self) -> str:
        """The JSON report as text (:meth:`ScoreSummary.to_json`)."""
        return self.summary.to_json()


def describe(objects: ObjectSet) -> SideSummary:
    """The report's description of an input read into ``objects``, in the input's own
    CRS (:attr:`~geoeval.objects.ObjectSet.input_crs`; the evaluation CRS is the
    parameters')."""
    return SideSummary(objects.path, objects.input_type, len(objects),
                       crs_code(objects.input_crs), objects.repaired, objects.skipped)


def measure(name: str, m: Matching, ov: Overlap, mal: Any = None) -> MatcherResult:
    """A matcher's measures: precision, recall, F1 (Özdemir et al. 2010, eq. 14–15)
    and its accuracy by its registry rule (BGM eq. 1, Hoover eq. 2, mean IoU, MOM
    the scene Mallows score eq. 13): :func:`geoeval.measures.counts.scene_measures`."""
    rule = registry.accuracy_rule(name)
    v = counts.scene_measures(rule, m, ov.union_area, None if mal is None else mal.scores)
    if mal is not None and rule == registry.MALLOWS:  # MOM's instances: their Mallows scores
        m = m.with_instance_scores(mal.scores)
    return MatcherResult(name, m, v["precision"], v["recall"], v["f1"], v["accuracy"], mal)



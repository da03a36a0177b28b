"""What local scoring returns: :class:`MatcherResult` per matcher and :class:`ScoreResult`.

A :class:`ScoreResult` holds the scene's objects, overlap and matchings (for the
GeoPackage, CSV tables, figures and pages); its numbers are its
:attr:`ScoreResult.summary` (:class:`~geoeval.scoring.summary.ScoreSummary`), the one
result every route gives, whose ``to_dict`` is the JSON report (``docs/report.md``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from geoeval.grid import crs_code
from geoeval.matching import Matching, registry
from geoeval.matching.lists import MatchLists
from geoeval.measures import counts
from geoeval.measures.mallows import mallows_sums
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.reprs import number as _short
from geoeval.scoring.summary import (
    REPORT_SCHEMA_VERSION,
    OverlapSummary,
    ScoreSummary,
    SideSummary,
    empty_sides,
    ilp_components,
    matcher_summary,
)

__all__ = ["REPORT_SCHEMA_VERSION", "MatcherResult", "ScoreResult", "describe", "empty_sides",
           "measure"]


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

    def __repr__(self) -> str:
        return (f"<MatcherResult {self.matcher}: precision {_short(self.precision)}, recall "
                f"{_short(self.recall)}, F1 {_short(self.f1)}, accuracy {_short(self.accuracy)}; "
                f"{self.matching.n_instances} instances>")

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

    def sums(self, overlap: Overlap) -> dict[str, Any]:
        """Its sufficient statistics (:func:`geoeval.measures.counts.scene_sums`) on
        ``overlap``'s union."""
        return counts.scene_sums(self.matching, overlap.union, self.instance_mallows)


@dataclass(frozen=True)
class ScoreResult:
    """Everything :func:`score` found; :meth:`to_dict` is the JSON report.

    ``per_class`` holds each class scored on its own (:mod:`geoeval.scoring.classes`)
    when ``class_field`` was given. :mod:`geoeval.report` writes it out (JSON,
    GeoPackage, CSV tables, figure); :meth:`to_dict` is the JSON report.
    """

    reference: ObjectSet
    submission: ObjectSet
    overlap: Overlap
    results: dict[str, MatcherResult]
    parameters: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    per_class: Any = None  # geoeval.scoring.classes.PerClass (which builds on this module)
    #: matcher -> geoeval.measures.breakdown.Breakdown, with ``breakdown=True``
    breakdown: dict[str, Any] | None = None
    strata: Any = None  # geoeval.scoring.strata.Strata
    bootstrap: Any = None  # geoeval.scoring.bootstrap.BootstrapResult
    geometry: Any = None  # geoeval.measures.geometry.GeometryMeasures, on request
    #: The objects dataset's folder when every object's result was written there
    #: (``--objects``): the report names it instead of listing the objects.
    objects_dataset: str | None = None
    #: How the run ran, not warnings (``--strict`` ignores them) and not part of the
    #: report: where the work ran and why (the engine does not change the report), a
    #: default chosen from the data (the Mallows grid step; ``parameters`` records it).
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        scores = ", ".join(f"{n}: F1 {_short(r.f1)}, accuracy {_short(r.accuracy)}"
                           for n, r in self.results.items())
        return (f"<ScoreResult {len(self.reference)} reference vs {len(self.submission)} "
                f"submitted objects; {scores}>")

    @cached_property
    def summary(self) -> ScoreSummary:
        """The route-independent summary (:class:`~geoeval.scoring.summary.ScoreSummary`):
        what the JSON report and the terminal tables are made of."""
        results = {}
        for name, r in self.results.items():
            m = r.matching
            lists = None if self.objects_dataset is not None else MatchLists.of(
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



"""What scoring returns: :class:`MatcherResult` per matcher and :class:`ScoreResult`.

:meth:`ScoreResult.to_dict` is the JSON report (``docs/report.md``); it is
built from the matchings' arrays, one list per report field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.encoding import Rows, number_texts
from geoeval.matching import Matching, registry
from geoeval.matching.lists import MatchLists
from geoeval.matching.result import KINDS
from geoeval.measures import counts
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.reprs import number as _short

REPORT_SCHEMA_VERSION = 2
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

    def to_dict(self, reference: ObjectSet, submission: ObjectSet, *,
                rows: bool = False, objects_dataset: str | None = None) -> dict[str, Any]:
        """The ``results.<matcher>`` object of the JSON report.

        With ``rows`` the instances come as :class:`geoeval.encoding.Rows`
        (each instance already JSON text, for the writer) instead of dicts; with
        ``objects_dataset`` (its folder) that folder is named instead of the lists.
        """
        m = self.matching
        lists = None if objects_dataset is not None else MatchLists.of(
            m, reference.ids, submission.ids, self.instance_mallows)
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
            **list_fields(lists, objects_dataset, rows=rows),
        }


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
    #: Where the work ran and why (not part of the report: the engine does not change it).
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        scores = ", ".join(f"{n}: F1 {_short(r.f1)}, accuracy {_short(r.accuracy)}"
                           for n, r in self.results.items())
        return (f"<ScoreResult {len(self.reference)} reference vs {len(self.submission)} "
                f"submitted objects; {scores}>")

    def to_json(self) -> str:
        """The JSON report as text: :meth:`to_dict` written by
        :func:`geoeval.encoding.dumps`, each instance encoded straight from the
        matching's arrays (one line each)."""
        from geoeval.encoding import dumps

        return dumps(self.to_dict(rows=True))

    def to_dict(self, *, rows: bool = False) -> dict[str, Any]:
        """The JSON report (schema in ``docs/report.md``); ``rows`` as in
        :meth:`MatcherResult.to_dict`."""
        from geoeval._version import __version__

        mom = self.results.get("mom")
        return {
            "geoeval": __version__,
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
                name: res.to_dict(self.reference, self.submission, rows=rows,
                                  objects_dataset=self.objects_dataset)
                for name, res in self.results.items()
            },
            "per_class": None if self.per_class is None else self.per_class.to_dict(),
            "breakdown": None if self.breakdown is None
            else {name: b.to_dict() for name, b in self.breakdown.items()},
            "strata": None if self.strata is None else self.strata.to_dict(),
            "bootstrap": None if self.bootstrap is None else self.bootstrap.to_dict(),
            "geometry": None if self.geometry is None else self.geometry.to_dict(),
        }



def list_fields(lists: MatchLists | None, objects_dataset: str | None = None, *,
                rows: bool = False) -> dict[str, Any]:
    """The per-object fields of a matcher's report: ``missed_ids``, ``false_alarm_ids``
    and ``instances`` (:func:`instance_rows` with ``rows``, else :func:`instance_dicts`),
    or, when the objects were written as a dataset (``--objects``), its folder
    (``objects_dataset``) instead."""
    if lists is None:
        return {"objects_dataset": objects_dataset}
    make = instance_rows if rows else instance_dicts
    return {"missed_ids": lists.missed_ids.tolist(),
            "false_alarm_ids": lists.false_alarm_ids.tolist(), "instances": make(lists)}


def instance_dicts(lists: MatchLists) -> list[dict[str, Any]]:
    """The ``instances`` list of the JSON report, built from the lists' arrays:
    user ids of both sides, overlap, kind, the matcher's score when it has one and
    the instance's Mallows score (null where undefined) when computed."""
    a = lists.instances
    mallows = lists.mallows
    refs = _ragged(lists.ref_ids.tolist(), a.ref_ptr)
    subs = _ragged(lists.sub_ids.tolist(), a.sub_ptr)
    kinds = np.asarray(KINDS, dtype=object)[a.kind].tolist()
    overlaps = a.overlap.tolist()
    has_score = ~np.isnan(a.score)
    scores = a.score.tolist()
    out = [{"reference": r, "submission": s, "overlap": o, "kind": k}
           for r, s, o, k in zip(refs, subs, overlaps, kinds, strict=True)] if len(a) else []
    for k in np.flatnonzero(has_score).tolist():
        out[k]["score"] = scores[k]
    if mallows is not None:
        mal = np.asarray(mallows, float)
        values = [None if v != v else v for v in mal.tolist()]  # NaN -> null
        for item, v in zip(out, values, strict=True):
            item["mallows"] = v
    return out


def instance_rows(lists: MatchLists) -> Rows:
    """:func:`instance_dicts` already encoded: one JSON object per instance, same
    keys in the same order, assembled column by column from the arrays (numbers
    encoded by :func:`geoeval.encoding.number_texts`; NaN Mallows scores are null)
    without a Python step per instance."""
    a = lists.instances
    mallows = lists.mallows
    n = len(a)
    has_score = ~np.isnan(a.score)
    segments: list[Any] = [
        '{"reference": ', (_id_texts(lists.ref_ids), a.ref_ptr),
        ', "submission": ', (_id_texts(lists.sub_ids), a.sub_ptr),
        ', "overlap": ', number_texts(a.overlap),
        ', "kind": "', np.asarray(KINDS, dtype=object)[a.kind], '"']
    if has_score.all():  # the same key on every row (a matcher that scores its matches)
        segments += [', "score": ', number_texts(a.score)]
    elif has_score.any():  # the key only where there is a score
        segments += [np.where(has_score, ', "score": ', ""),
                     np.where(has_score, np.asarray(number_texts(a.score), dtype=object), "")]
    if mallows is not None:
        segments += [', "mallows": ', number_texts(np.asarray(mallows, float))]
    return Rows(n, [*segments, "}"])


def _id_texts(ids: np.ndarray) -> list[str]:
    """JSON text of each id: integers as digits, any other id (e.g. a text field)
    JSON-encoded."""
    if ids.dtype.kind in "iu":
        return number_texts(ids)
    return [json.dumps(v) for v in ids.tolist()]


def _ragged(values: list[Any], ptr: np.ndarray) -> list[list[Any]]:
    """``values`` cut at the CSR pointers ``ptr`` (one Python list per instance)."""
    if ptr.size - 1 == len(values):  # one member each (one-to-one): no slicing
        return [[v] for v in values]
    bounds = ptr.tolist()
    return [values[i:j] for i, j in zip(bounds[:-1], bounds[1:], strict=True)]


def _describe(objects: ObjectSet) -> dict[str, Any]:
    crs = objects.crs
    return {
        "path": objects.path,
        "input_type": objects.input_type,
        "objects": len(objects),
        "crs": None if crs is None else (
            crs.to_string() if hasattr(crs, "to_string") else str(crs)),
        "repaired": objects.repaired,
        "skipped": objects.skipped,
    }


def empty_sides(reference: ObjectSet, submission: ObjectSet) -> list[str]:
    """A warning for each side without a single object, saying why: the layer or
    raster holds none, or every feature was skipped (the reader's warning says for
    what). A submission that detected nothing scores F1 0; a reference with no
    object leaves recall undefined."""
    out = []
    for side, objects, effect in (
            ("reference", reference, "recall is undefined and every detection is a false "
                                     "alarm"),
            ("submission", submission, "every reference object is missed (F1 0)")):
        if len(objects):
            continue
        if objects.skipped:
            why = (f"all {objects.skipped:,} of its features were skipped (the warning "
                   "above says why)")
        elif objects.input_type == "raster":
            why = "every pixel is background"
        elif str(objects.path).startswith("<"):  # objects given in memory
            why = "none were given"
        else:
            why = "its layer has no features"
        out.append(f"{objects.path}: the {side} has no objects: {why}; {effect}")
    return out


def measure(name: str, m: Matching, ov: Overlap, mal: Any = None) -> MatcherResult:
    """A matcher's measures: precision, recall, F1 (Özdemir et al. 2010, eq. 14–15)
    and its accuracy by its registry rule (BGM eq. 1, Hoover eq. 2, mean IoU, MOM
    the scene Mallows score eq. 13): :func:`geoeval.measures.counts.scene_measures`."""
    rule = registry.accuracy_rule(name)
    v = counts.scene_measures(rule, m, ov.union_area, None if mal is None else mal.scores)
    if mal is not None and rule == registry.MALLOWS:  # MOM's instances: their Mallows scores
        m = m.with_instance_scores(mal.scores)
    return MatcherResult(name, m, v["precision"], v["recall"], v["f1"], v["accuracy"], mal)



"""The one result every route gives, and the one function that makes the report of it.

Whatever ran the score (this process, a Dask cluster by partitions, by raster blocks,
or through the client: :mod:`geoeval.scoring.dispatch`), its numbers end as a
:class:`ScoreSummary`: each side (:class:`SideSummary`), the overlap
(:class:`OverlapSummary`), each matcher's counts, measures and per-object lists
(:class:`MatcherSummary`, made by :func:`matcher_summary` from the sufficient
statistics, :mod:`geoeval.measures.counts`), the report's ``parameters`` (written once,
:meth:`geoeval.scoring.options.ScoreOptions.report_parameters`), warnings, and the
per-class, strata, breakdown, bootstrap and geometry objects. :meth:`ScoreSummary.to_dict`
is the JSON report (``docs/report.md``), the terminal tables
(:mod:`geoeval.report.tables`) read the same summary, so the report and the tables do
not depend on the route. A local :class:`~geoeval.scoring.result.ScoreResult` keeps its
objects besides (for the GeoPackage, CSV, figures and pages) and gives its summary as
:attr:`~geoeval.scoring.result.ScoreResult.summary`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.encoding import Rows, number_texts
from geoeval.matching import registry
from geoeval.matching.lists import MatchLists, not_listed, unlisted
from geoeval.matching.result import KINDS
from geoeval.measures import counts

REPORT_SCHEMA_VERSION = 3
#: The kinds of instance every report counts (others only when present).
_KINDS = ("one-to-one", "one-to-many", "many-to-one")


@dataclass(frozen=True)
class SideSummary:
    """The report's ``reference`` / ``submission`` object; ``crs`` is the input's own
    CRS by its short name (:func:`geoeval.grid.crs_code`): the evaluation CRS is the
    report's ``parameters.evaluation_crs``."""

    path: str
    input_type: str
    objects: int
    crs: str | None
    repaired: int = 0
    skipped: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "input_type": self.input_type, "objects": self.objects,
                "crs": self.crs, "repaired": self.repaired, "skipped": self.skipped}


@dataclass(frozen=True)
class OverlapSummary:
    """The report's ``overlap`` object."""

    method: str
    pairs: int
    components: int
    components_solved_by_ilp: int | None
    union_area: float

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "pairs": self.pairs, "components": self.components,
                "components_solved_by_ilp": self.components_solved_by_ilp,
                "union_area": self.union_area}


@dataclass(frozen=True)
class MatcherSummary:
    """One matcher's part of the report (``results.<matcher>``).

    ``lists`` holds the per-object lists (:class:`~geoeval.matching.lists.MatchLists`),
    ``None`` when they were written as an objects dataset instead.
    """

    matcher: str
    matched_reference: int
    matched_submission: int
    missed: int
    false_alarms: int
    precision: float | None
    recall: float | None
    f1: float | None
    matched_overlap: float
    accuracy: float | None
    mallows: float | None
    mallows_details: dict[str, Any] | None
    instances_by_kind: dict[str, int]
    parameters: dict[str, Any]
    solver: dict[str, int]
    lists: Any = None

    def __repr__(self) -> str:
        from geoeval.reprs import number

        return (f"<MatcherSummary {self.matcher}: precision {number(self.precision)}, "
                f"recall {number(self.recall)}, F1 {number(self.f1)}, accuracy "
                f"{number(self.accuracy)}; {self.missed} missed, {self.false_alarms} false "
                "alarms>")

    def summary(self) -> dict[str, Any]:
        """The numbers without the per-object lists (the per-class, strata and multi-scene
        reports' entries): :meth:`~geoeval.scoring.result.MatcherResult.summary`'s keys."""
        return {"matched_reference": self.matched_reference,
                "matched_submission": self.matched_submission, "missed": self.missed,
                "false_alarms": self.false_alarms, "precision": self.precision,
                "recall": self.recall, "f1": self.f1, "matched_overlap": self.matched_overlap,
                "accuracy": self.accuracy, "mallows": self.mallows,
                "instances_by_kind": self.instances_by_kind}

    def to_dict(self, objects_dataset: str | None = None, *,
                rows: bool = False, unlisted: int | None = None) -> dict[str, Any]:
        """The report's ``results.<matcher>`` object (``rows``: instances already encoded,
        :func:`instance_rows`; ``unlisted``: the run's objects, past
        :data:`~geoeval.matching.lists.LIST_LIMIT`, that the report does not list)."""
        s = self.summary()
        kinds = s.pop("instances_by_kind")
        return {**s, "mallows_details": self.mallows_details, "instances_by_kind": kinds,
                "parameters": self.parameters, "solver": self.solver or None,
                **list_fields(self.lists, objects_dataset, rows=rows, unlisted=unlisted)}


def matcher_summary(name: str, sums: dict[str, Any], kinds: dict[str, int],
                    parameters: dict[str, Any], solver: dict[str, int],
                    mallows: dict[str, Any] | None = None, lists: Any = None
                    ) -> MatcherSummary:
    """A matcher's summary from its sufficient statistics (:data:`counts.SUMS`, exact sums
    of one scene or added over its parts): the one formula of each measure
    (:func:`counts.measures_from_sums`, the matcher's registry accuracy rule).

    ``mallows`` is the Mallows score's additive part
    (:func:`geoeval.measures.mallows.mallows_sums`), when computed.
    """
    from geoeval.measures.mallows import details_from_sums

    values = counts.measures_from_sums(registry.accuracy_rule(name), sums,
                                       mallows=mallows is not None)
    scene = counts.as_number(values["mallows"]) if mallows is not None else None
    n_ref, n_sub = int(sums["n_ref"]), int(sums["n_sub"])
    matched_ref, matched_sub = int(sums["matched_ref"]), int(sums["matched_sub"])
    by_kind = {k: int(kinds.get(k, 0)) for k in _KINDS}
    by_kind.update({k: int(v) for k, v in kinds.items() if k not in by_kind and v})
    return MatcherSummary(
        name, matched_ref, matched_sub, n_ref - matched_ref, n_sub - matched_sub,
        counts.as_number(values["precision"]), counts.as_number(values["recall"]),
        counts.as_number(values["f1"]), float(sums["matched_area"]),
        counts.as_number(values["accuracy"]), scene,
        None if mallows is None else details_from_sums(mallows, scene), by_kind,
        dict(parameters), dict(solver), lists)


def added_sums(n_reference: int, n_submission: int, totals: dict[str, Any],
               union_area: Any) -> dict[str, Any]:
    """The sufficient statistics (:data:`counts.SUMS`) of a matcher from the totals its
    parts added up (the Dask engine's partitions and blocks: ``missed``,
    ``false_alarms``, ``matched_overlap``, ``score_sum``, ``score_n`` and the Mallows
    sums, exact) and the union area."""
    mal = totals.get("mallows")
    return {"n_ref": n_reference, "n_sub": n_submission,
            "matched_ref": n_reference - totals["missed"],
            "matched_sub": n_submission - totals["false_alarms"],
            "score_sum": totals["score_sum"], "score_n": totals["score_n"],
            "mallows_sum": 0.0 if mal is None else mal["sum"],
            "mallows_n": 0 if mal is None else mal["n"],
            "matched_area": totals["matched_overlap"], "union_area": union_area}


def ilp_components(solver: dict[str, dict[str, int]]) -> int | None:
    """The report's ``overlap.components_solved_by_ilp``: how many components the first
    matcher whose accuracy is the Mallows score (MOM, the one exact solver that may call
    an ILP) solved with one, from each matcher's solver counts (``None`` without such a
    matcher)."""
    for name, counts_ in solver.items():
        if registry.get(name).accuracy == registry.MALLOWS:
            return int(counts_.get("ilp", 0))
    return None


@dataclass(frozen=True)
class ScoreSummary:
    """What a score found, route-independent: :meth:`to_dict` is the JSON report.

    ``per_class``, ``breakdown``, ``strata`` and ``geometry`` are the report's objects
    (``None`` when not asked for); ``bootstrap`` the
    :class:`~geoeval.scoring.bootstrap.BootstrapResult`. ``objects_dataset`` names the
    objects dataset when every object's result was written there (then no matcher lists
    its objects). ``notes`` say how the run ran (where the work ran and why, a default
    chosen from the data: not warnings), and ``partitions`` how a Dask run cut it:
    neither is part of the report.
    """

    reference: SideSummary
    submission: SideSummary
    overlap: OverlapSummary
    results: dict[str, MatcherSummary]
    parameters: dict[str, Any]
    warnings: tuple[str, ...] = ()
    per_class: dict[str, Any] | None = None
    breakdown: dict[str, Any] | None = None
    strata: dict[str, Any] | None = None
    bootstrap: Any = None
    geometry: dict[str, Any] | None = None
    objects_dataset: str | None = None
    notes: tuple[str, ...] = ()
    partitions: dict[str, int] = field(default_factory=dict)

    @property
    def unlisted(self) -> int | None:
        """The objects (both sides) the report does not list one by one, when there are
        more than :data:`~geoeval.matching.lists.LIST_LIMIT` (else ``None``): the one
        rule of every engine and route (:func:`~geoeval.matching.lists.unlisted`)."""
        return unlisted(self.reference.objects + self.submission.objects)

    @property
    def summary(self) -> ScoreSummary:
        """Itself (a :class:`~geoeval.scoring.result.ScoreResult` gives its own)."""
        return self

    def __repr__(self) -> str:
        from geoeval.reprs import result_repr

        return result_repr("ScoreSummary", self.reference.objects, self.submission.objects,
                           self.partitions,
                           {n: (r.f1, r.accuracy) for n, r in self.results.items()},
                           self.warnings)

    def to_dict(self, *, rows: bool = False) -> dict[str, Any]:
        """The JSON report (schema in ``docs/report.md``); with ``rows`` the instances come
        as :class:`geoeval.encoding.Rows` (each instance already JSON text)."""
        from geoeval._version import __version__

        return {
            "geoeval": __version__,
            "schema": REPORT_SCHEMA_VERSION,
            "reference": self.reference.to_dict(),
            "submission": self.submission.to_dict(),
            "overlap": self.overlap.to_dict(),
            "parameters": self.parameters,
            "warnings": list(self.warnings),
            "results": {name: r.to_dict(self.objects_dataset, rows=rows,
                                        unlisted=self.unlisted)
                        for name, r in self.results.items()},
            "per_class": self.per_class,
            "breakdown": self.breakdown,
            "strata": self.strata,
            "bootstrap": None if self.bootstrap is None else self.bootstrap.to_dict(),
            "geometry": self.geometry,
        }

    def to_json(self) -> str:
        """The JSON report as text (:func:`geoeval.encoding.dumps`), each instance encoded
        straight from the arrays (one line each)."""
        from geoeval.encoding import dumps

        return dumps(self.to_dict(rows=True))


def empty_sides(reference: SideSummary, submission: SideSummary, *,
                region: bool = False) -> list[str]:
    """A warning for each side without a single object, saying why (the layer or
    raster holds none, or every feature was skipped: the reader's warning says for
    what) and what it does to the measures
    (:func:`geoeval.measures.counts.f1_values`): a submission that detected
    nothing has recall and F1 0 and precision undefined; a reference with no
    object, precision and F1 0 and recall undefined; with both empty, all three
    are undefined. With ``region`` (a region read alone) a side without features has
    none in the region."""
    if not reference.objects and not submission.objects:
        both = "precision, recall and F1 are undefined"
        effects = (f"the submission has none either: {both}",
                   f"the reference has none either: {both}")
    else:
        effects = ("every detection is a false alarm (precision and F1 0, recall undefined)",
                   "every reference object is missed (recall and F1 0, precision undefined)")
    out = []
    for side, s, effect in (("reference", reference, effects[0]),
                            ("submission", submission, effects[1])):
        if s.objects:
            continue
        if s.skipped:
            why = (f"all {s.skipped:,} of its features were skipped (the warning "
                   "above says why)")
        elif region:
            why = "none is in the region"
        elif s.input_type == "raster":
            why = "every pixel is background"
        elif str(s.path).startswith("<"):  # objects given in memory
            why = "none were given"
        else:
            why = "its layer has no features"
        out.append(f"{s.path}: the {side} has no objects: {why}; {effect}")
    return out


def list_fields(lists: Any, objects_dataset: str | None = None, *,
                rows: bool = False, unlisted: int | None = None) -> dict[str, Any]:
    """The per-object fields of a matcher's report: ``missed_ids``, ``false_alarm_ids``
    and ``instances`` (:func:`instance_rows` with ``rows``, else :func:`instance_dicts`),
    or, when the objects were written as a dataset (``--objects``), its folder
    (``objects_dataset``) instead; with ``unlisted`` (more objects than
    :data:`~geoeval.matching.lists.LIST_LIMIT`) the folder (or ``None``) and
    ``not_listed`` (:func:`~geoeval.matching.lists.not_listed`), whatever lists were
    gathered."""
    if unlisted is not None:
        return {"objects_dataset": objects_dataset,
                "not_listed": not_listed(unlisted, objects_dataset)}
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

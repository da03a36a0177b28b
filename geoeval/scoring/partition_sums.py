"""Strata, error breakdown and bootstrap of a Dask run by partitions, as small partial sums.

Every measure of the report is a ratio of sums over objects and instances
(:mod:`geoeval.measures.counts`), and every instance lies inside one overlap
component. The Dask engine solves each component once, in one task
(:mod:`geoeval.engine.solve`): the functions here run in those tasks, on
the components solved there (:class:`~geoeval.engine.solve.Solution`),
with the in-memory engine's code, and return sums; the client adds them and
applies the one formula of each measure.

* **Strata** (``size_bins``, ``zones``; :mod:`geoeval.scoring.strata`): each object's
  stratum is a property of its own (area, representative point), and a stratum's
  scene is the overlap restricted to its objects, matched afresh
  (:func:`geoeval.scoring.subset.score_subset`): its components are parts of the
  scene's components, so each task scores the strata of its own components.
* **Error breakdown** (:mod:`geoeval.measures.breakdown`): the fixed matchings
  repair instances and objects one by one, so their sufficient statistics add up
  (:func:`~geoeval.measures.breakdown.breakdown_sums`).
* **Bootstrap** (:mod:`geoeval.scoring.bootstrap`): the block grid needs only the
  reference's bounds (the client has them from the partitions' extents); each
  task adds its objects' and instances' sums into the blocks
  (:func:`~geoeval.scoring.bootstrap.block_statistics`), the client adds the
  block tables (blocks × 10 numbers a matcher) and draws the same replicates at
  the same seed (:func:`~geoeval.scoring.bootstrap.bootstrap_from_statistics`).

The partial results are added on the workers (a tree of additions,
:meth:`Plan.add`): what reaches the client is one total, strata × matchers ×
blocks numbers, never a number per object or per partition. Sums are taken per
partition and then added exactly (:mod:`geoeval.sums`): the same numbers as the
in-memory engine's, to the last digit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.matching import registry
from geoeval.measures import counts

#: Keys of the partial results.
STRATA, BREAKDOWN, BOOTSTRAP, PER_CLASS = "strata", "breakdown", "bootstrap", "per_class"


@dataclass
class Plan:
    """The options a partitioned run computes as partial sums (for
    :func:`geoeval.engine.layers.score_layers`)."""

    size_bins: Any = None
    zones: Any = None
    zone_field: str | None = None
    breakdown: bool = False
    bootstrap: int | None = None
    seed: int = 0
    confidence: float = 0.95
    block_size: float | None = None
    #: ``--class-field``: each class scored on its own (:func:`per_class_partial`)
    classes: bool = False

    @classmethod
    def of(cls, options: Any, *, classes: bool) -> Plan:
        """The plan of a run's :class:`~geoeval.scoring.options.ScoreOptions`."""
        st, boot = options.strata, options.bootstrap
        return cls(None if st is None else st.size_bins, None if st is None else st.zones,
                   None if st is None else st.zone_field, options.breakdown,
                   None if boot is None else boot.n, 0 if boot is None else boot.seed,
                   0.95 if boot is None else boot.confidence,
                   None if boot is None else boot.block_size, classes=classes)

    @staticmethod
    def add(*partials: Any) -> Any:
        """Partial results added (runs on the workers: the engine's tree of additions)."""
        return add_all(list(partials))

    @property
    def needs_step(self) -> bool:
        """COCO size bins of two vector layers need the data's grid step (median area)."""
        return isinstance(self.size_bins, str)

    def prepare(self, *, step: float | None, bounds: tuple[Any, Any], crs: Any
                ) -> tuple[tuple[tuple[str, Any, Any], ...], dict[str, Any]]:
        """The partial functions with their arguments, and what the client keeps: the
        size edges, the zones, the block grid. ``bounds`` are each side's bounds
        (``None`` for a side without objects), ``step`` the grid step of the data."""
        from geoeval.scoring import strata as st

        partials: list[tuple[str, Any, Any]] = []
        kept: dict[str, Any] = {}
        grid = None
        if self.bootstrap is not None:
            from geoeval.scoring.bootstrap import grid_over

            grid = grid_over(bounds[0] if bounds[0] is not None else bounds[1],
                             self.block_size)
            kept["grid"] = grid
            partials.append((BOOTSTRAP, bootstrap_partial, grid))
        kinds: list[tuple[str, Any]] = []
        if self.size_bins is not None:
            edges, names, rule = st.size_edges(self.size_bins, None, None, step)
            kept["size"] = {"edges": edges.tolist(), "unit": "square CRS units",
                            "bins": "[lower, upper): an area on an edge goes to the upper bin",
                            "rule": rule}, list(names)
            kinds.append(("size", (edges, tuple(names))))
        if self.zones is not None:
            from pathlib import Path

            import shapely

            geoms, names = st.read_zones(self.zones, self.zone_field, crs)
            z = self.zones
            kept["zone"] = {"zones": z if isinstance(z, str) else str(z)
                            if isinstance(z, Path) else "<memory>",
                            "field": self.zone_field,
                            "rule": "zone containing the object's representative point; "
                                    "first zone on a shared border; else 'outside'"}, \
                list(dict.fromkeys(names.tolist())) + [st.OUTSIDE]
            kinds.append(("zone", (shapely.to_wkb(geoms), names)))
        if kinds:
            partials.append((STRATA, strata_partial, (tuple(kinds), grid)))
        if self.breakdown:
            partials.append((BREAKDOWN, breakdown_partial, None))
        if self.classes:
            # the class strata's blocks with a bootstrap; the breakdown's class confusion
            partials.append((PER_CLASS, per_class_partial, (grid, self.breakdown)))
        return tuple(partials), kept


# --- in the partition tasks ---------------------------------------------------------------

def _results(sol: Any) -> dict[str, Any]:
    from geoeval.scoring.result import measure

    return {n: measure(n, m, sol.overlap, sol.mallows[n]) for n, m in sol.matchings.items()}


def _matcher_sums(m: Any, union: float, mallows: np.ndarray | None) -> dict[str, Any]:
    return {"sums": counts.scene_sums(m, union, mallows), "kinds": m.kind_counts(),
            "mallows": mallows is not None}


def strata_partial(sol: Any, spec: tuple[tuple[tuple[str, Any], ...], Any]) -> dict[str, Any]:
    """Per kind and stratum: objects, each matcher's sums (and its block table with a
    bootstrap), on the components of ``sol`` (:func:`geoeval.scoring.strata.score_strata`'s
    per-stratum scene)."""
    import shapely

    from geoeval.scoring import strata as st
    from geoeval.scoring.subset import score_subset

    kinds, grid = spec
    ref, sub, ov = sol.reference, sol.submission, sol.overlap
    results = _results(sol)
    out: dict[str, Any] = {}
    for kind, arg in kinds:
        if kind == "size":
            edges, names = arg
            rl, sl = st.size_labels(ref.areas, edges, names), st.size_labels(sub.areas, edges,
                                                                              names)
        else:
            wkb, names = arg
            geoms = np.asarray(shapely.from_wkb(wkb), dtype=object)
            rl, sl = st.zone_labels(ref, geoms, names), st.zone_labels(sub, geoms, names)
            names = tuple(dict.fromkeys(names.tolist())) + (st.OUTSIDE,)
        per: dict[str, Any] = {}
        for name in names:
            ri, si = np.flatnonzero(rl == name), np.flatnonzero(sl == name)
            sov, res = score_subset(ref, sub, ov, ri, si, results, sol.params,
                                    sol.mallows_options)
            entry: dict[str, Any] = {"reference_objects": int(ri.size),
                                     "submission_objects": int(si.size),
                                     "total": _totals(sov),
                                     "union": _subset_unions(sol, ri, si, sov), "results": {}}
            for mname, r in res.items():
                entry["results"][mname] = _matcher_sums(
                    r.matching, sov.union,
                    None if r.mallows is None else np.asarray(r.mallows.scores, float))
            if grid is not None:
                from geoeval.scoring.bootstrap import block_statistics

                rb, sb = grid.block_of(sov.reference), grid.block_of(sov.submission)
                entry["blocks"] = {mname: block_statistics(r, sov, rb, sb, grid.n_blocks)
                                   for mname, r in res.items()}
            per[name] = entry
        out[kind] = per
    out["scene"] = _totals(ov)  # which union a stratum takes (:func:`_subset_unions`)
    return out


def per_class_partial(sol: Any, spec: tuple[Any, bool]) -> dict[str, Any]:
    """Per class: objects and each matcher's sums, on the components of ``sol``, and the
    submitted objects without a class (:func:`geoeval.scoring.classes.score_classes`'
    per-class scenes); with a block grid (``spec[0]``) each class's block tables (the
    class strata's bootstrap), with ``spec[1]`` the breakdown's class confusion: per
    matcher the objects whose class the fix changes and the classes scored with the
    fixed classes (:func:`geoeval.scoring.class_breakdown.matched_classes`; instances lie
    inside components).

    A submission without a class field takes each object's class from the reference it
    overlaps most (:func:`geoeval.scoring.classes.inherit_classes`): every pair of a
    submitted object lies in its component, and the object sets of ``sol`` are in layer
    order, so the tie rule (the lowest reference) is the in-memory engine's."""
    from geoeval.scoring.classes import class_labels, inherit_classes

    grid, confusion = spec
    ref, ov = sol.reference, sol.overlap
    rl = class_labels(ref.classes)
    if rl is None:
        rl = np.full(len(ref), None, dtype=object)
    sl = class_labels(sol.submission.classes)
    if sl is None:
        sl = inherit_classes(ov, rl)
    results = _results(sol)
    out = {"unclassified": int(np.count_nonzero(np.equal(sl, None))),
           "classes": _class_sums(sol, rl, sl, results, grid), "total": _totals(ov)}
    if confusion:
        from geoeval.scoring.class_breakdown import matched_classes

        out["confusion"] = {}
        for name, r in results.items():
            fixed = matched_classes(r.matching, ov, rl, sl)
            out["confusion"][name] = {
                "count": int(np.count_nonzero(fixed != sl)),
                "classes": _class_sums(sol, rl, fixed, {name: r}, None)}
    return out


def _class_sums(sol: Any, rl: np.ndarray, sl: np.ndarray, results: dict[str, Any],
                grid: Any) -> dict[str, Any]:
    """Per class of ``rl`` / ``sl`` (labels, ``None``: no class): the class's scene
    (:func:`geoeval.scoring.subset.score_subset`) as sums of ``results``' matchers."""
    from geoeval.scoring.subset import score_subset

    ref, sub, ov = sol.reference, sol.submission, sol.overlap
    has_r, has_s = np.not_equal(rl, None), np.not_equal(sl, None)
    names = np.unique(np.concatenate([rl[has_r], sl[has_s]]).astype(str)).tolist()
    params = {m: sol.params[m] for m in results}
    classes: dict[str, Any] = {}
    for name in names:
        ri, si = np.flatnonzero(has_r & (rl == name)), np.flatnonzero(has_s & (sl == name))
        sov, res = score_subset(ref, sub, ov, ri, si, results, params, sol.mallows_options)
        entry: dict[str, Any] = {
            "reference_objects": int(ri.size), "submission_objects": int(si.size),
            "union": _subset_unions(sol, ri, si, sov), "total": _totals(sov),
            "results": {m: _matcher_sums(
                r.matching, sov.union,
                None if r.mallows is None else np.asarray(r.mallows.scores, float))
                for m, r in res.items()}}
        if grid is not None:
            from geoeval.scoring.bootstrap import block_statistics

            rb, sb = grid.block_of(sov.reference), grid.block_of(sov.submission)
            entry["blocks"] = {m: block_statistics(r, sov, rb, sb, grid.n_blocks)
                               for m, r in res.items()}
        classes[name] = entry
    return classes


def _subset_unions(sol: Any, ri: np.ndarray, si: np.ndarray, sov: Any) -> tuple[float, float]:
    """The union area of a subset of the components of ``sol`` both ways
    :meth:`geoeval.overlap.Overlap.restrict` may take it for the whole scene: its areas
    minus its pairs' overlaps (what the scene takes when its own totals say
    :attr:`~geoeval.overlap.Overlap.union_is_sum`), and the true area of the union
    (otherwise). Both add up over components, which share no area. The true union
    comes from the geometries when a side of ``sol`` overlaps itself (the totals of
    ``sol`` alone may agree by chance: two overlapping detections inside one
    reference)."""
    as_sum = sov.area_total
    if not (sol.reference.self_overlaps[0].size or sol.submission.self_overlaps[0].size):
        return as_sum, as_sum
    from geoeval.overlap import union_area

    ref, sub = sov.reference, sov.submission
    return as_sum, union_area(ref, sub, sov.rows, sov.cols, sov.values, ref.self_overlaps,
                              sub.self_overlaps)


def breakdown_partial(sol: Any, _: Any) -> dict[str, Any]:
    """Per matcher: error counts and the sums now and fixed
    (:func:`geoeval.measures.breakdown.breakdown_sums`)."""
    from geoeval.measures.breakdown import breakdown_sums

    out = {}
    for name, m in sol.matchings.items():
        mal = sol.mallows[name]
        errors, sums = breakdown_sums(m, None if mal is None else mal.scores)
        out[name] = {"errors": errors, "sums": sums, "mallows": mal is not None}
    return out


def bootstrap_partial(sol: Any, grid: Any) -> dict[str, Any]:
    """Per matcher its block table (:func:`geoeval.scoring.bootstrap.block_statistics`),
    and the overlap's totals (whether the union is a sum is decided on the scene's)."""
    from geoeval.scoring.bootstrap import block_statistics

    rb, sb = grid.block_of(sol.reference), grid.block_of(sol.submission)
    results = _results(sol)
    return {"blocks": {n: block_statistics(r, sol.overlap, rb, sb, grid.n_blocks)
                       for n, r in results.items()},
            "total": _totals(sol.overlap),
            "mallows": {n: r.mallows is not None for n, r in results.items()}}


def _totals(ov: Any) -> tuple[float, float]:
    """Areas minus pairwise overlaps, and the union area (their sums over the scene's
    parts decide :attr:`geoeval.overlap.Overlap.union_is_sum` for the scene)."""
    return ov.area_total, ov.union


# --- in the client ------------------------------------------------------------------------

def _add(a: Any, b: Any) -> Any:
    """Partial results added: dicts key by key (keys of either), numbers and arrays
    summed, tuples element by element, booleans or-ed."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        return {k: _add(a.get(k), b.get(k)) for k in dict.fromkeys([*a, *b])}
    if isinstance(a, bool):
        return a or b
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def add_all(parts: list[Any]) -> Any:
    total = None
    for p in parts:
        total = _add(total, p)
    return total


def _union_is_sum(total: tuple[Any, Any]) -> bool:
    """:attr:`geoeval.overlap.Overlap.union_is_sum`'s test on the scene's totals."""
    from geoeval.overlap import same_area

    return same_area(*total)


def summary(name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """:meth:`geoeval.scoring.result.MatcherResult.summary` from the added sums."""
    s = entry["sums"]
    v = counts.measures_from_sums(registry.accuracy_rule(name), s, mallows=entry["mallows"])
    n = {k: int(s[k]) for k in ("n_ref", "n_sub", "matched_ref", "matched_sub")}
    return {"matched_reference": n["matched_ref"], "matched_submission": n["matched_sub"],
            "missed": n["n_ref"] - n["matched_ref"],
            "false_alarms": n["n_sub"] - n["matched_sub"],
            "precision": counts.as_number(v["precision"]),
            "recall": counts.as_number(v["recall"]), "f1": counts.as_number(v["f1"]),
            "matched_overlap": float(s["matched_area"]),
            "accuracy": counts.as_number(v["accuracy"]),
            "mallows": counts.as_number(v["mallows"]) if entry["mallows"] else None,
            "instances_by_kind": entry["kinds"]}


def bootstrap_report(total: dict[str, Any], plan: Plan, grid: Any) -> Any:
    """The scene's :class:`~geoeval.scoring.bootstrap.BootstrapResult` from the added
    block tables."""
    from geoeval.scoring.bootstrap import bootstrap_from_statistics

    return bootstrap_from_statistics(total["blocks"], total["mallows"],
                                     _union_is_sum(total["total"]), n=plan.bootstrap,
                                     seed=plan.seed, confidence=plan.confidence, grid=grid)


def strata_report(total: dict[str, Any], plan: Plan, kept: dict[str, Any],
                  matchers: list[str]) -> dict[str, Any]:
    """The report's ``strata`` object (:meth:`geoeval.scoring.strata.Strata.to_dict`) from
    the added partial results."""
    from geoeval.scoring.strata import OUTSIDE

    out: dict[str, Any] = {}
    which = 0 if _union_is_sum(total["scene"]) else 1
    for kind in ("size", "zone"):
        if kind not in kept:
            continue
        definition, names = kept[kind]
        strata = {}
        for name in names:
            e = total[kind][name]
            if kind == "zone" and name == OUTSIDE and not e["reference_objects"] \
                    and not e["submission_objects"]:
                continue  # no object outside every zone: no such stratum
            boot = _bootstrap(e, which, plan, kept, matchers)
            strata[name] = {"reference_objects": int(e["reference_objects"]),
                            "submission_objects": int(e["submission_objects"]),
                            "results": {m: summary(m, _with_union(e["results"][m],
                                                                  e["union"][which]))
                                        for m in matchers},
                            "bootstrap": boot}
        out[kind] = {"definition": definition, "strata": strata}
    return out


def _bootstrap(e: dict[str, Any], which: int, plan: Plan, kept: dict[str, Any],
               matchers: list[str]) -> Any:
    """A stratum's (or class's) bootstrap intervals from its added block table, at the
    run's seed (``None`` without ``--bootstrap``); its union taken as the scene's rule
    (``which``) says."""
    if plan.bootstrap is None:
        return None
    from geoeval.scoring.bootstrap import bootstrap_from_statistics

    has = {m: e["results"][m]["mallows"] for m in matchers}
    is_sum = _union_is_sum((e["total"][0], e["union"][which]))
    return bootstrap_from_statistics(e["blocks"], has, is_sum, n=plan.bootstrap,
                                     seed=plan.seed, confidence=plan.confidence,
                                     grid=kept["grid"]).intervals


def per_class_report(total: dict[str, Any], source: str, matchers: list[str]) -> dict[str, Any]:
    """The report's ``per_class`` object (:meth:`geoeval.scoring.classes.PerClass.to_dict`)
    from the added partial results; ``source`` is where the submitted objects' classes
    came from (``field`` or ``from_reference``)."""
    return {"submission_classes": source,
            "unclassified_submission": int(total["unclassified"]),
            "classes": _class_summaries(total["classes"], total["total"], matchers)}


def _class_summaries(classes: dict[str, Any], scene: tuple[float, float],
                     matchers: list[str]) -> dict[str, Any]:
    # the union of a class's objects as the in-memory engine takes it: from the areas
    # when the scene's totals say the union is their sum, else the true union
    which = 0 if _union_is_sum(scene) else 1
    out = {}
    for name in sorted(classes):
        e = classes[name]
        union = e["union"][which]
        out[name] = {"reference_objects": int(e["reference_objects"]),
                     "submission_objects": int(e["submission_objects"]),
                     "results": {m: summary(m, _with_union(e["results"][m], union))
                                 for m in matchers}}
    return out


def class_strata_report(total: dict[str, Any], source: str, plan: Plan, kept: dict[str, Any],
                        matchers: list[str]) -> dict[str, Any]:
    """The report's ``strata.class`` object: the per-class results as strata
    (:func:`geoeval.scoring.strata.score_strata`), each with its bootstrap intervals
    when asked for (:func:`geoeval.scoring.strata.bootstrap_strata`)."""
    strata = {}
    which = 0 if _union_is_sum(total["total"]) else 1
    for name, entry in _class_summaries(total["classes"], total["total"], matchers).items():
        e = total["classes"][name]
        strata[name] = {**entry, "bootstrap": _bootstrap(e, which, plan, kept, matchers)}
    return {"definition": {"source": source}, "strata": strata}


def class_confusion_report(total: dict[str, Any], matchers: list[str]) -> dict[str, Any]:
    """Each matcher's ``class_confusion`` of the breakdown
    (:func:`geoeval.scoring.class_breakdown.class_confusion`) from the added partial
    results."""
    from geoeval.scoring.class_breakdown import MEASURES

    now_all = _class_summaries(total["classes"], total["total"], matchers)
    out = {}
    for m in matchers:
        cc = total["confusion"][m]
        fixed_all = _class_summaries(cc["classes"], total["total"], [m])
        classes = {}
        for c in sorted(set(now_all) | set(fixed_all)):
            now = _measures(now_all.get(c), m)
            then = _measures(fixed_all.get(c), m)
            classes[c] = {"now": now, "fixed": then,
                          "gain": {k: None if now[k] is None or then[k] is None
                                   else then[k] - now[k] for k in MEASURES}}
        out[m] = {"count": int(cc["count"]), "classes": classes}
    return out


def _measures(entry: dict[str, Any] | None, matcher: str) -> dict[str, Any]:
    from geoeval.scoring.class_breakdown import MEASURES

    if entry is None:
        return dict.fromkeys(MEASURES)
    return {k: entry["results"][matcher][k] for k in MEASURES}


def _with_union(entry: dict[str, Any], union: float) -> dict[str, Any]:
    return {**entry, "sums": {**entry["sums"], "union_area": union}}


def breakdown_report(total: dict[str, Any], matchers: list[str]) -> dict[str, Any]:
    """The report's ``breakdown`` object (:meth:`geoeval.measures.breakdown.Breakdown.to_dict`)
    from the added partial results."""
    from geoeval.measures.breakdown import breakdown_from_sums

    return {m: breakdown_from_sums(m, total[m]["errors"], total[m]["sums"],
                                   total[m]["mallows"]).to_dict() for m in matchers}

"""Error breakdown: how much of each scene measure every kind of error costs.

The oracle deltas of TIDE (Bolya et al. 2020, "TIDE: A General Toolbox for
Identifying Object Detection Errors", ECCV, §2.3), moved from boxes to the match
instances of a :class:`~geoeval.matching.result.Matching`: for each error type
the matching is *fixed* (only that type's errors are repaired, everything else
stays as it is), the measures are recomputed on the fixed matching with the same
formulas as the scene report, and the gain is ``M(fixed) − M``.

Error types and their fixes (``docs/breakdown.md``):

``missed``
    Every missed reference gets a perfect one-to-one detection (a new submitted
    object equal to it: Mallows score 1, matcher score 1).
``false_alarm``
    Every false alarm is removed.
``merge``
    Every instance with several references (many-to-one, under-detection; and
    many-to-many) has its submitted objects replaced by one perfect detection per
    reference.
``split``
    Every one-to-many instance (over-detection) has its submitted pieces replaced
    by one perfect detection of the reference.
``localisation``
    Every one-to-one instance is made perfect (Mallows score 1, IoU 1, Hoover
    score 1); counts do not change.

The fixed matching is built from the CSR arrays without a loop per instance:
kept instances are taken with :meth:`InstanceArrays.take`, every new perfect
one-to-one instance pairs a reference with a new (virtual) submitted index
``≥ n_submission``. Every measure comes from
:func:`geoeval.measures.counts.scene_measures`, as in the scene report: eq. 14–15
of Özdemir et al. (2010) and the accuracy of the matcher's registry rule (Hoover
eq. 2, mean IoU, the Mallows score eq. 13): one copy of each formula.
BGM's accuracy (eq. 1) is an area ratio over the union of all objects, which
the instance arrays do not determine once objects are replaced: its gains are
``None``. Class confusion needs the classes re-scored:
:mod:`geoeval.scoring.class_breakdown`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from geoeval.matching import registry
from geoeval.matching.result import InstanceArrays, Matching
from geoeval.measures import counts

MISSED = "missed"
FALSE_ALARM = "false_alarm"
MERGE = "merge"
SPLIT = "split"
LOCALISATION = "localisation"
#: Error types, in report order.
ERROR_TYPES: tuple[str, ...] = (MISSED, FALSE_ALARM, MERGE, SPLIT, LOCALISATION)
#: Labels for tables and figures.
LABELS = {MISSED: "misses", FALSE_ALARM: "false alarms", MERGE: "merges (under-detection)",
          SPLIT: "splits (over-detection)", LOCALISATION: "localisation (one-to-one)"}
#: Measures of the breakdown, in report order.
MEASURES: tuple[str, ...] = counts.MEASURES


@dataclass(frozen=True)
class Breakdown:
    """The error breakdown of one matching.

    Attributes
    ----------
    matcher : str
    errors : dict of str to int
        How many errors of each type: missed references, false alarms,
        merge instances, split instances, one-to-one instances.
    now : dict of str to float or None
        The measures of the matching as it is.
    fixed : dict of str to dict
        ``fixed[type][measure]``: the measure with that error type fixed;
        ``fixed["all"]`` with every type fixed at once.
    class_confusion : dict, optional
        With classes: per class, the scores now / with every matched submitted
        object given its reference's class, and the gain
        (:mod:`geoeval.scoring.class_breakdown`).
    """

    matcher: str
    errors: dict[str, int]
    now: dict[str, float | None]
    fixed: dict[str, dict[str, float | None]]
    class_confusion: dict[str, Any] | None = None

    def __repr__(self) -> str:
        from geoeval.reprs import number

        def signed(x: float | None) -> str:
            return "null" if x is None else f"{x:+.4f}"

        gains = ", ".join(f"{t} {self.errors[t]} ({signed(self.gain(t, 'f1'))})"
                          for t in self.errors)
        return (f"<Breakdown {self.matcher}: F1 {number(self.now.get('f1'))}, all fixed "
                f"{number(self.fixed['all'].get('f1'))}; errors and the F1 gain fixing each: "
                f"{gains}>")

    def gain(self, error: str, measure: str) -> float | None:
        """``M(fixed) − M`` (TIDE's oracle delta); ``None`` if either is undefined."""
        return _gain(self.fixed[error][measure], self.now[measure])

    def to_dict(self) -> dict[str, Any]:
        """The ``breakdown.<matcher>`` object of the JSON report (``docs/breakdown.md``)."""
        return {
            "now": dict(self.now),
            "errors": {t: {"count": self.errors.get(t),
                           "fixed": dict(self.fixed[t]),
                           "gain": {k: self.gain(t, k) for k in MEASURES}}
                       for t in (*ERROR_TYPES, "all")},
            "class_confusion": self.class_confusion,
        }


def error_breakdown(m: Matching, mallows: np.ndarray | None = None) -> Breakdown:
    """TIDE-style oracle deltas of every error type for one matching.

    Parameters
    ----------
    m : Matching
    mallows : numpy.ndarray, optional
        Mallows score of each instance (eq. 12 of Özdemir et al. 2010; NaN where
        undefined), when computed. MOM's accuracy is their mean (eq. 13).

    Returns
    -------
    Breakdown

    Examples
    --------
    >>> from geoeval.matching.result import Instance, Matching
    >>> m = Matching.from_instances("mom", [Instance((0,), (0,), 1.0, "one-to-one")], 2, 2)
    >>> b = error_breakdown(m, np.array([0.5]))
    >>> b.now["f1"], b.fixed["missed"]["f1"], b.fixed["localisation"]["mallows"]
    (0.5, 0.8, 1.0)
    """
    errors, sums = breakdown_sums(m, mallows)
    return breakdown_from_sums(m.matcher, errors, sums, mallows is not None)


def breakdown_sums(m: Matching, mallows: np.ndarray | None = None
                   ) -> tuple[dict[str, int], dict[str, dict[str, float]]]:
    """The error counts and the sufficient statistics (:data:`geoeval.measures.counts.SUMS`)
    of the matching now and fixed for each error type and for all: sums over instances
    and objects, so those of disjoint parts of a scene (the Dask engine's partitions)
    add up to the scene's. :func:`breakdown_from_sums` turns them into measures."""
    a = m.arrays
    if mallows is not None:
        mallows = np.asarray(mallows, float)
        if mallows.shape != (len(a),):
            raise ValueError(f"{mallows.size} Mallows scores for {len(a)} instances")
    n_merge = int(np.count_nonzero(a.kind >= 2))
    errors = {MISSED: int(m.missed.size), FALSE_ALARM: int(m.false_alarms.size),
              MERGE: n_merge, SPLIT: int(np.count_nonzero(a.kind == 1)),
              LOCALISATION: int(np.count_nonzero(a.kind == 0))}
    sums = {"now": counts.scene_sums(m, None, mallows)}
    for t in ERROR_TYPES:
        sums[t] = counts.scene_sums(*_fixed(m, mallows, [t]))
    sums["all"] = counts.scene_sums(*_fixed(m, mallows, ERROR_TYPES))
    return errors, sums


def breakdown_from_sums(matcher: str, errors: dict[str, int],
                        sums: dict[str, dict[str, float]], mallows: bool) -> Breakdown:
    """The :class:`Breakdown` from :func:`breakdown_sums` (of one scene, or added over
    its parts): each measure by the scene report's formula
    (:func:`geoeval.measures.counts.measures_from_sums`); the union of all objects is
    unknown once objects are replaced, so an accuracy over it (BGM eq. 1) is ``None``."""
    rule = registry.accuracy_rule(matcher)

    def measures(s: dict[str, float]) -> dict[str, float | None]:
        values = counts.measures_from_sums(rule, s, mallows=mallows)
        return {k: counts.as_number(v) for k, v in values.items()}

    fixed = {t: measures(sums[t]) for t in (*ERROR_TYPES, "all")}
    return Breakdown(matcher, dict(errors), measures(sums["now"]), fixed)


def _fixed(m: Matching, mallows: np.ndarray | None, types: Iterable[str]
           ) -> tuple[Matching, None, np.ndarray | None]:
    """:func:`fix`'s matching, no union area, its Mallows scores (for ``scene_sums``)."""
    fixed, mal = fix(m, mallows, types)
    return fixed, None, mal


def fix(m: Matching, mallows: np.ndarray | None,
        types: Iterable[str]) -> tuple[Matching, np.ndarray | None]:
    """The matching with the error ``types`` fixed, and its instances' Mallows scores.

    New perfect instances have Mallows score 1, matcher score 1 (Hoover, IoU;
    NaN for the matchers without their own score) and an unknown (NaN) overlap;
    their submitted objects get new indices from ``m.n_submission`` on.
    """
    types = set(types)
    unknown = types - set(ERROR_TYPES)
    if unknown:
        raise ValueError(f"unknown error type(s) {sorted(unknown)}; known: {ERROR_TYPES}")
    a = m.arrays
    kind = a.kind
    # instances whose submitted objects are replaced by one perfect detection per reference
    replaced = np.zeros(len(a), bool)
    if MERGE in types:
        replaced |= kind >= 2
    if SPLIT in types:
        replaced |= kind == 1
    perfected = (kind == 0) if LOCALISATION in types else np.zeros(len(a), bool)
    keep = np.flatnonzero(~replaced)
    kept = a.take(keep)
    new_refs = a.ref_idx[replaced[a.ref_instance()]]
    if MISSED in types:
        new_refs = np.concatenate([new_refs, m.missed])
    n_kept, n_new = len(kept), int(new_refs.size)
    new_inst = n_kept + np.arange(n_new)
    new_subs = m.n_submission + np.arange(n_new)
    perfect = perfected[keep]
    score_perfect = 1.0 if registry.get(m.matcher).scores_instances else np.nan
    score = np.concatenate([np.where(perfect, score_perfect, kept.score),
                            np.full(n_new, score_perfect)])
    arrays = InstanceArrays.from_members(
        n_kept + n_new,
        np.concatenate([kept.ref_instance(), new_inst]), np.concatenate([kept.ref_idx, new_refs]),
        np.concatenate([kept.sub_instance(), new_inst]), np.concatenate([kept.sub_idx, new_subs]),
        np.concatenate([kept.overlap, np.full(n_new, np.nan)]), score)
    missed = np.zeros(0, np.int64) if MISSED in types else m.missed
    false_alarms = np.zeros(0, np.int64) if FALSE_ALARM in types else m.false_alarms
    out = Matching(m.matcher, arrays, missed, false_alarms, m.n_reference,
                   int(kept.sub_idx.size + n_new + false_alarms.size), dict(m.params))
    fixed_mallows = None
    if mallows is not None:
        fixed_mallows = np.concatenate([np.where(perfect, 1.0, mallows[keep]), np.ones(n_new)])
    return out, fixed_mallows


def _gain(fixed: float | None, now: float | None) -> float | None:
    if fixed is None or now is None:
        return None
    return fixed - now

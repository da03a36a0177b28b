"""Score a subset of a scene: the one function behind per-class, per-stratum
and (through its sufficient statistics) bootstrap scoring.

A subset is given by reference positions ``ri`` and submission positions
``si`` in the whole scene. Its scene is those objects only: the whole scene's
sparse overlap restricted to pairs inside the subset
(:meth:`geoeval.overlap.Overlap.restrict`, nothing intersected again), matched
afresh by every matcher with the whole scene's parameters. Mallows scores
(Mallows 1972; Özdemir et al. 2010, eq. 12-13) of instances identical to a
whole-scene instance are reused; only new instances are scored.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from geoeval.matching import match
from geoeval.matching.result import Matching
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap
from geoeval.reprs import number
from geoeval.scoring.result import MatcherResult, measure


@dataclass(frozen=True)
class Subset:
    """A part of a scene (one class, one stratum) scored as a scene of its own.

    Attributes
    ----------
    name : str
    reference_index, submission_index : numpy.ndarray
        Positions of its objects in the whole scene.
    overlap : Overlap
        The whole scene's overlap restricted to them; its object sets are
        :attr:`reference` and :attr:`submission` (ids, areas, classes; no geometry).
    results : dict of str to MatcherResult
    bootstrap : BootstrapResult, optional
        Its intervals on the scene's blocks (strata scored with ``bootstrap=N``).
    """

    name: str
    reference_index: np.ndarray
    submission_index: np.ndarray
    overlap: Overlap
    results: dict[str, MatcherResult]
    bootstrap: Any = None

    def __repr__(self) -> str:
        scores = ", ".join(f"{m}: F1 {number(r.f1)}" for m, r in self.results.items())
        return (f"<Subset {self.name}: {self.reference_index.size} reference and "
                f"{self.submission_index.size} submitted objects; {scores}>")

    @property
    def reference(self) -> ObjectSet:
        return self.overlap.reference

    @property
    def submission(self) -> ObjectSet:
        return self.overlap.submission


def score_groups(reference: ObjectSet, submission: ObjectSet, overlap: Overlap,
                 ref_labels: np.ndarray, sub_labels: np.ndarray, names: Sequence[str],
                 all_results: dict[str, MatcherResult],
                 matcher_params: dict[str, dict[str, Any]],
                 mallows_options: dict[str, Any] | None = None, *,
                 optional: Collection[str] = ()) -> dict[str, Subset]:
    """Each group of the scene (the objects whose label is its name, on both sides)
    scored by :func:`score_subset`, in the order of ``names``; a group named in
    ``optional`` is left out when it has no object."""
    groups: dict[str, Subset] = {}
    for name in names:
        ri = np.flatnonzero(ref_labels == name)
        si = np.flatnonzero(sub_labels == name)
        if name in optional and ri.size == 0 and si.size == 0:
            continue
        ov, results = score_subset(reference, submission, overlap, ri, si, all_results,
                                   matcher_params, mallows_options)
        groups[name] = Subset(name, ri, si, ov, results)
    return groups


@dataclass(frozen=True)
class InstanceMallows:
    """Mallows scores of a class's instances (eq. 12) and their mean (eq. 13)."""

    scores: np.ndarray
    scene: float | None
    reused: int
    computed: int

    def to_dict(self) -> dict[str, Any]:
        return {"reused": self.reused, "computed": self.computed}


def score_subset(
    reference: ObjectSet,
    submission: ObjectSet,
    overlap: Overlap,
    ri: np.ndarray,
    si: np.ndarray,
    all_results: dict[str, MatcherResult],
    matcher_params: dict[str, dict[str, Any]],
    mallows_options: dict[str, Any] | None = None,
) -> tuple[Overlap, dict[str, MatcherResult]]:
    """Score the references at ``ri`` against the submitted objects at ``si``.

    Parameters
    ----------
    reference, submission : ObjectSet
        The whole scene.
    overlap : Overlap
        The whole scene's overlap.
    ri, si : numpy.ndarray
        Positions of the subset's objects on each side.
    all_results : dict
        The whole scene's results (their Mallows scores are reused, and a
        Mallows score is computed for a matcher only when the whole scene has one).
    matcher_params : dict
        Matcher name -> keyword arguments of :func:`geoeval.matching.match`.
    mallows_options : dict, optional
        ``resolution``, ``approximate``, ``n_jobs`` for new Mallows scores.

    Returns
    -------
    (Overlap, dict of str to MatcherResult)
        The restricted overlap and each matcher's result on it.
    """
    ri, si = np.asarray(ri, np.int64), np.asarray(si, np.int64)
    ov = overlap.restrict(ri, si)
    results: dict[str, MatcherResult] = {}
    for mname, params in matcher_params.items():
        m = match(ov, mname, **params)
        mal = None
        main = all_results.get(mname)
        if main is not None and main.mallows is not None:
            mal = subset_mallows(reference, submission, ri, si, m, main, mallows_options or {})
        results[mname] = measure(mname, m, ov, mal)
    return ov, results


def subset_mallows(reference: ObjectSet, submission: ObjectSet, ri: np.ndarray, si: np.ndarray,
                   matching: Matching, main: MatcherResult,
                   options: dict[str, Any]) -> InstanceMallows:
    """Eq. 12 per subset instance (reusing the whole-scene scores of identical
    instances) and eq. 13, their mean.

    A class instance is identical to an all-classes instance when its members,
    mapped back to the whole sets, are exactly that instance's members: all of
    them in the instance of its first reference, and as many on each side.
    """
    a, g = matching.arrays, main.matching.arrays
    n = len(a)
    ref_glob, sub_glob = ri[a.ref_idx], si[a.sub_idx]
    g_of_ref = np.full(len(reference), -1, np.int64)
    g_of_ref[g.ref_idx] = g.ref_instance()
    g_of_sub = np.full(len(submission), -1, np.int64)
    g_of_sub[g.sub_idx] = g.sub_instance()
    cand = g_of_ref[ref_glob[a.ref_ptr[:-1]]] if n else np.zeros(0, np.int64)
    same = cand >= 0
    safe = np.where(same, cand, 0)
    nref, nsub = np.diff(a.ref_ptr), np.diff(a.sub_ptr)
    if len(g):
        same &= (nref == np.diff(g.ref_ptr)[safe]) & (nsub == np.diff(g.sub_ptr)[safe])
    stray = (np.bincount(a.ref_instance(), weights=g_of_ref[ref_glob] != np.repeat(cand, nref),
                         minlength=n)
             + np.bincount(a.sub_instance(),
                           weights=g_of_sub[sub_glob] != np.repeat(cand, nsub), minlength=n))
    same &= stray == 0
    scores = np.full(n, np.nan)
    all_scores = np.asarray(main.mallows.scores, float)
    scores[same] = all_scores[cand[same]]
    todo = np.flatnonzero(~same)
    if todo.size:
        from geoeval.measures.mallows import mallows_scores

        new = a.take(todo)
        new = replace(new, ref_idx=ri[new.ref_idx], sub_idx=si[new.sub_idx])
        res = mallows_scores(reference, submission, new, **options)
        scores[todo] = np.asarray(res.scores, float)
    from geoeval.measures.mallows import scene_score

    return InstanceMallows(scores, scene_score(scores), int(n - todo.size), int(todo.size))

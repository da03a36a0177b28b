"""The solve step of two vector layers on a Dask cluster: a partition's pairs,
components and matches, and the components that cross partitions, solved once.

Each partition runs the in-memory engine's kernels on its own objects and its halo
(:mod:`geoeval.engine.halo`): the overlap (:func:`geoeval.overlap.overlap_pairs`), the
same-side overlaps, the components, and, for the components made only of objects it
owns (*interior*), the matchers (:func:`geoeval.matching.match`), the Mallows scores,
the union area and the partial sums of strata, classes, breakdown and bootstrap
(:class:`Config.partials`). The components that reach another partition's objects
(*boundary*) are sent (their objects and the pairs the partition owns) to one task,
which solves them once with the same code (:func:`solve_boundary`).

Ownership rule (every pair, component and object counted exactly once): an object is
owned by the one partition whose key run holds it; a reference-submission pair by the
owner of its reference object. Components are those of the reference-submission pairs
and of the same-side pairs whose geometries intersect. Complete: a pair sharing area
shares bounding boxes, so the other object is in the partition's halo and the pair is
found by its owner.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.arrays import SizedByArrays
from geoeval.engine.parts import Part
from geoeval.measures.mallows import mallows_sums
from geoeval.parallel import gc_paused
from geoeval.sums import exact_sum


@dataclass(frozen=True)
class Config:
    """What every partition task needs: matchers and their keywords, and the matchers
    whose instances get the Mallows score (on the grid of step ``resolution``;
    ``approximate`` as :func:`geoeval.measures.mallows.mallows_scores` takes it)."""

    matchers: tuple[str, ...]
    params: dict[str, dict[str, Any]]
    mallows: tuple[str, ...] = ()
    resolution: float | None = None
    approximate: bool | None = None
    #: ``(key, function, argument)``: ``function(solution, argument)`` runs on every
    #: set of components solved (:class:`Solution`) and its small result is sent to the
    #: client under ``key`` (per-class, strata, breakdown and bootstrap sums: functions
    #: of :mod:`geoeval.scoring.partition_sums`, passed down, never imported here).
    partials: tuple[tuple[str, Callable[[Solution, Any], Any], Any], ...] = ()
    #: Whether the reference, the submission carry classes (``--class-field``): the
    #: object sets of a :class:`Solution` get them (``ObjectSet.classes``).
    classes: tuple[bool, bool] = (False, False)
    #: Whether each solved set returns its per-object lists
    #: (:class:`~geoeval.matching.lists.MatchLists`) for the report.
    lists: bool = False
    #: The matchers' registry entries (:func:`geoeval.matching.registry.entries`; those
    #: of ``matchers`` when not given), sent with the tasks: a matcher registered in the
    #: client alone runs on the workers too.
    entries: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.entries:
            from geoeval.matching import registry

            object.__setattr__(self, "entries", registry.entries(self.matchers))


@dataclass(frozen=True)
class Solution:
    """A set of whole components solved in one task, as the in-memory engine holds a
    scene: its object sets (objects in position order), their overlap, each matcher's
    matching and Mallows scores (or ``None``), the matchers' keywords and the Mallows
    options (``resolution``, ``approximate``, ``n_jobs``)."""

    reference: Any
    submission: Any
    overlap: Any
    matchings: dict[str, Any]
    mallows: dict[str, Any]
    params: dict[str, dict[str, Any]]
    mallows_options: dict[str, Any]


@dataclass
class Solved(SizedByArrays):
    """A set of components solved (one partition's interior, or the boundary).

    ``rows[side]`` holds the objects' positions and per-matcher columns
    (:func:`geoeval.engine.objects.matching_columns`), ``summary`` the additive
    numbers (:func:`_summary`), ``lists`` each matcher's per-object lists (with
    :attr:`Config.lists`).
    """

    summary: dict[str, Any]
    positions: tuple[np.ndarray, np.ndarray]
    columns: tuple[dict[str, dict[str, np.ndarray]], dict[str, dict[str, np.ndarray]]]
    lists: dict[str, Any] | None = None


@dataclass
class PartResult(SizedByArrays):
    """What a partition task keeps on its worker."""

    index: int
    owned: Part
    interior: Solved
    boundary: Boundary
    halo: int = 0


@dataclass
class Boundary(SizedByArrays):
    """Objects of boundary components owned by one partition and the pairs it owns."""

    objects: Part
    owner: np.ndarray
    cross: tuple[np.ndarray, np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)))


@gc_paused
def solve_partition(index: int, part: Part, config: Config, *halos: Part) -> PartResult:
    """Runs on a worker: the pairs, components and matches of partition ``index``."""
    import shapely
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    from geoeval.overlap import overlap_pairs

    n_own = len(part)
    every = Part.concat([part, *halos])
    owned = np.zeros(len(every), bool)
    owned[:n_own] = True
    geom, side, pos = every.shapes(), every.side, every.pos
    refs, subs = np.flatnonzero(side == 0), np.flatnonzero(side == 1)
    own_r, own_s = refs[owned[refs]], subs[owned[subs]]
    # reference x submission: owned references against every submission, the halo's
    # references against owned submissions (query = reference, as locally; the tree of
    # every submission is shared with the same-side query)
    trees = [shapely.STRtree(geom[refs]), shapely.STRtree(geom[subs])]
    halo_r = refs[~owned[refs]]
    r1, c1, v1 = overlap_pairs(geom[own_r], geom[subs], trees[1])
    r2, c2, v2 = overlap_pairs(geom[halo_r], geom[own_s])
    cr = np.concatenate([own_r[r1], halo_r[r2]])
    cs = np.concatenate([subs[c1], own_s[c2]])
    cv = np.concatenate([v1, v2])
    # same-side pairs whose geometries intersect, each once (lower position first): for
    # the components only (a superset of the pairs sharing area, so components may only
    # be coarser); the areas use ObjectSet.self_overlaps, as locally
    same = []
    for members, own, tree in ((refs, own_r, trees[0]), (subs, own_s, trees[1])):
        if own.size and members.size > 1:
            a, b = tree.query(geom[own], predicate="intersects")
            a, b = own[a], members[b]
            lo = np.where(pos[a] < pos[b], a, b)
            hi = np.where(pos[a] < pos[b], b, a)
            keep = (a != b) & ~(owned[a] & owned[b] & (pos[a] > pos[b]))
            same.append((lo[keep], hi[keep]))
        else:
            same.append((np.zeros(0, np.int64), np.zeros(0, np.int64)))
    n = len(every)
    if n == 0:
        return PartResult(index, part, _solve(every, geom, np.zeros(0, bool), cr, cs, cv,
                                              config),
                          Boundary(every, np.zeros(0, np.int32)))
    u = np.concatenate([cr, same[0][0], same[1][0]])
    v = np.concatenate([cs, same[0][1], same[1][1]])
    _, comp = connected_components(coo_matrix((np.ones(u.size, np.int8), (u, v)),
                                              shape=(n, n)), directed=False)
    foreign = np.zeros(comp.max() + 1 if n else 0, bool)
    foreign[comp[~owned]] = True
    inner = owned & ~foreign[comp]
    outer = owned & foreign[comp]
    interior = _solve(every, geom, inner, cr, cs, cv, config)
    # boundary: this partition's objects there, the pairs it owns there
    keep_c = outer[cr] & owned[cr]
    b_objects = every.take(np.flatnonzero(outer))
    boundary = Boundary(
        b_objects, np.full(len(b_objects), index, np.int32),
        (pos[cr[keep_c]], pos[cs[keep_c]], cv[keep_c]))
    return PartResult(index, part, interior, boundary, n - n_own)


def _solve(every: Part, geom: np.ndarray, chosen: np.ndarray, cr: np.ndarray,
           cs: np.ndarray, cv: np.ndarray, config: Config) -> Solved:
    """Match the objects ``chosen`` (whole components, indices into ``every``) with the
    in-memory engine's code: object sets in position order, pairs sorted by (row, col)."""
    from geoeval.engine.objects import matching_columns
    from geoeval.objects import ObjectSet
    from geoeval.overlap import Overlap, union_area

    side = every.side
    ri = np.flatnonzero(chosen & (side == 0))
    si = np.flatnonzero(chosen & (side == 1))
    ri = ri[np.argsort(every.pos[ri], kind="stable")]
    si = si[np.argsort(every.pos[si], kind="stable")]
    local = np.full(len(every), -1, np.int64)
    local[ri] = np.arange(ri.size)
    local[si] = np.arange(si.size)
    keep = chosen[cr] & chosen[cs]
    rows, cols, vals = local[cr[keep]], local[cs[keep]], cv[keep]
    order = np.lexsort((cols, rows))
    rows, cols, vals = rows[order], cols[order], vals[order].astype(float)
    cls = [None if not has or every.classes is None else every.classes[i]
           for has, i in zip(config.classes, (ri, si), strict=True)]
    ref = ObjectSet(ids=every.ids[ri], areas=every.areas[ri], geometry=geom[ri],
                    classes=cls[0])
    sub = ObjectSet(ids=every.ids[si], areas=every.areas[si], geometry=geom[si],
                    classes=cls[1])
    # the same-side pairs sharing area as the local engine finds them (one STRtree
    # self-query a side, cached on the object set: the matchers reuse it)
    union = union_area(ref, sub, rows, cols, vals, ref.self_overlaps, sub.self_overlaps)
    ov = Overlap(ref, sub, rows, cols, vals, union, "rtree")
    ref_pos, sub_pos = every.pos[ri], every.pos[si]
    per: dict[str, Any] = {}
    rcols: dict[str, dict[str, np.ndarray]] = {}
    scols: dict[str, dict[str, np.ndarray]] = {}
    matchings: dict[str, Any] = {}
    mallows: dict[str, Any] = {}
    lists: dict[str, Any] | None = {} if config.lists else None
    for name in config.matchers:
        m = config.entries[name].run(ov, **config.params.get(name, {}))
        mal = None
        if name in config.mallows and config.resolution is not None:
            from geoeval.measures.mallows import mallows_scores

            # the local engine's code, one instance after another in this worker
            mal = mallows_scores(ref, sub, m, resolution=config.resolution,
                                 approximate=config.approximate, n_jobs=1)
        rcols[name], scols[name] = matching_columns(
            m, ref_pos, sub_pos, None if mal is None else mal.scores)
        if lists is not None:
            from geoeval.matching.lists import MatchLists

            lists[name] = MatchLists.of(m, ref.ids, sub.ids,
                                        None if mal is None else mal.scores, ref_pos, sub_pos)
        scores = m.arrays.score[~np.isnan(m.arrays.score)]
        per[name] = {"missed": int(m.missed.size), "false_alarms": int(m.false_alarms.size),
                     "matched_overlap": m.matched_sum, "kinds": m.kind_counts(),
                     "score_sum": exact_sum(scores), "score_n": int(scores.size),
                     "solver": dict(m.solver_stats), "params": dict(m.params),
                     "mallows": None if mal is None else mallows_sums(mal)}
        matchings[name], mallows[name] = m, mal
    summary = {"n_reference": int(ri.size), "n_submission": int(si.size),
               "pairs": int(rows.size), "components": ov.n_components, "union_area": union,
               "matchers": per}
    if config.partials:
        sol = Solution(ref, sub, ov, matchings, mallows,
                       {n: config.params.get(n, {}) for n in config.matchers},
                       {"resolution": config.resolution, "approximate": config.approximate,
                        "n_jobs": 1})
        summary["partials"] = {key: f(sol, arg) for key, f, arg in config.partials}
    return Solved(summary, (ref_pos, sub_pos), (rcols, scols), lists)


def boundary_of(result: PartResult) -> Boundary:
    return result.boundary


def summary_of(result: PartResult) -> dict[str, Any]:
    s = {k: v for k, v in result.interior.summary.items() if k != "partials"}
    s["boundary_objects"] = len(result.boundary.objects)
    s["halo_objects"] = result.halo
    s["boundary_pairs"] = int(result.boundary.cross[0].size)
    return s


@gc_paused
def solve_boundary(config: Config, *parts: Boundary) -> tuple[Solved, np.ndarray]:
    """Runs on one worker: every boundary component, solved once. Returns the solution
    and the owning partition of each of its reference then submission objects."""
    objects = Part.concat([p.objects for p in parts])
    owner = np.concatenate([p.owner for p in parts]) if parts else np.zeros(0, np.int32)
    order = np.lexsort((objects.pos, objects.side))
    objects, owner = objects.take(order, attributes=False), owner[order]  # not written here
    n = len(objects)
    if not n:
        return _solve(objects, np.zeros(0, dtype=object), np.zeros(0, bool),
                      np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0),
                      config), owner
    refs = objects.side == 0
    nr = int(refs.sum())
    rpos, spos = objects.pos[:nr], objects.pos[nr:]

    def at(positions: np.ndarray, side: int) -> np.ndarray:
        base, pool = (0, rpos) if side == 0 else (nr, spos)
        k = np.searchsorted(pool, positions)
        if not np.array_equal(pool[np.minimum(k, max(pool.size - 1, 0))], positions):
            raise AssertionError("a boundary pair names an object no partition sent")
        return base + k

    cat = [np.concatenate(x) if x else np.zeros(0) for x in
           zip(*[p.cross for p in parts], strict=True)]
    cr, cs = at(cat[0].astype(np.int64), 0), at(cat[1].astype(np.int64), 1)
    solved = _solve(objects, objects.shapes(), np.ones(n, bool), cr, cs, cat[2].astype(float),
                    config)
    return solved, owner


def boundary_summary(solved: tuple[Solved, np.ndarray]) -> dict[str, Any]:
    return {k: v for k, v in solved[0].summary.items() if k != "partials"}


def lists_of(result: PartResult | tuple[Solved, np.ndarray]) -> dict[str, Any]:
    """The per-object lists of a partition's interior, or of the boundary solution."""
    solved = result.interior if isinstance(result, PartResult) else result[0]
    assert solved.lists is not None
    return solved.lists


def partials_of(result: PartResult | tuple[Solved, np.ndarray]) -> dict[str, Any]:
    """The partial summaries of a partition's interior, or of the boundary solution."""
    solved = result.interior if isinstance(result, PartResult) else result[0]
    return solved.summary.get("partials", {})

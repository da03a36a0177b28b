"""Two vector layers scored by partitions on a Dask cluster; the client holds summaries.

The pipeline (``docs/scale.md``, *A layer on the cluster*):

1. **read**: each side is cut into pieces from its metadata
   (:func:`geoeval.io.pieces.plan_pieces`); the workers read them
   (:func:`~geoeval.io.pieces.read_piece`) and keep them. The client gets
   per piece its object count, the reader's counts and its bounds.
2. **partition**: every object gets the Hilbert key of its bounding-box centre
   (level 16, over the bounds of both layers; :mod:`geoeval.engine.hilbert`); the
   workers send the client a sample of their keys (at most :data:`KEY_SAMPLE` a
   piece), the client cuts the key range into ``k`` runs of about equal counts, and
   each piece is split by those cuts on its worker and the splits gathered per run
   (worker to worker): partition ``p`` holds the objects of **both sides** whose key falls in run
   ``p``: it **owns** them.
3. **solve**: each partition gets a halo (the objects of other partitions whose
   bounding box meets its extent) and runs the in-memory engine's kernels on
   its own objects: the overlap (:func:`geoeval.overlap.overlap_pairs`), the
   same-side overlaps, the components, and, for the components made only of
   objects it owns, the matchers (:func:`geoeval.matching.match`) and the union
   area (:func:`geoeval.overlap.union_area`).
4. **boundary**: the components that reach another partition's objects are
   sent (their objects and the pairs the partition owns) to one task, which
   solves them once with the same code.
5. **write and reduce**: each partition writes its objects' rows (its own
   components' results and the boundary solution's rows for its objects) as one
   part of the objects dataset; the client receives per partition a summary
   (counts, sums, kinds, solver counts) and adds them up.

Every task that runs on a worker pauses Python's cyclic garbage collector while it
runs (:func:`geoeval.parallel.gc_paused`, as the local engine's scoring does): it
makes one tracked object per geometry it parses.

Ownership rule (every pair, component and object counted exactly once): an
object is owned by the one partition whose key run holds it. A
reference-submission pair is owned by the owner of its reference object.
Components are those of the reference-submission pairs and of the same-side
pairs whose geometries intersect. A component is *interior* when every object
of it is owned by one partition: that partition solves it; otherwise it is a
*boundary* component, solved by the boundary task. Complete: a pair sharing area
shares bounding boxes, so the other object is in the partition's halo and the pair
is found by its owner.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.arrays import SizedByArrays
from geoeval.errors import FieldError, InputError
from geoeval.measures.mallows import add_mallows_sums, mallows_sums
from geoeval.parallel import gc_paused
from geoeval.sums import ZERO, exact_sum

#: Target number of objects (both sides) per spatial partition.
OBJECTS_PER_PARTITION = 100_000
#: Hilbert curve level of the ownership key (:mod:`geoeval.engine.hilbert`).
HILBERT_LEVEL = 16
#: Keys each piece sends to the client to place the partition cuts.
KEY_SAMPLE = 256


@dataclass
class Part(SizedByArrays):
    """Objects of both sides (one partition, a piece or a halo), columnar.

    ``side`` 0 is the reference, 1 the submission; ``pos`` the object's position
    in its layer (what the in-memory engine indexes it by); ``geometry`` the
    objects as WKB (a third of the memory of shapely objects; parsed where the
    overlap is computed, and written as it is), ``bounds`` their bounding boxes;
    ``classes`` each object's class value as read (``--class-field``; ``None`` for a
    side read without one), or ``None`` when no class is read.
    """

    side: np.ndarray
    pos: np.ndarray
    ids: np.ndarray
    geometry: np.ndarray
    areas: np.ndarray
    bounds: np.ndarray
    key: np.ndarray | None = None
    info: dict[str, Any] | None = None
    all_ids: np.ndarray | None = None
    classes: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.pos.size)

    def take(self, index: np.ndarray) -> Part:
        return Part(self.side[index], self.pos[index], self.ids[index], self.geometry[index],
                    self.areas[index], self.bounds[index],
                    None if self.key is None else self.key[index],
                    classes=None if self.classes is None else self.classes[index])

    @staticmethod
    def concat(parts: Sequence[Part]) -> Part:
        parts = [p for p in parts if p is not None]
        if not parts:
            return empty_part()
        ids = [p.ids for p in parts if len(p)]
        classes = None
        if any(p.classes is not None for p in parts):  # a part without: no class (None)
            classes = np.concatenate([np.full(len(p), None, dtype=object)
                                      if p.classes is None else p.classes for p in parts])
        return Part(np.concatenate([p.side for p in parts]),
                    np.concatenate([p.pos for p in parts]),
                    np.concatenate(ids) if ids else parts[0].ids[:0],
                    np.concatenate([p.geometry for p in parts]),
                    np.concatenate([p.areas for p in parts]),
                    np.concatenate([p.bounds for p in parts]), classes=classes)

    def shapes(self) -> np.ndarray:
        """The geometries as shapely objects."""
        return _from_wkb(self.geometry)


def _to_wkb(geoms: np.ndarray) -> np.ndarray:
    import shapely

    return shapely.to_wkb(geoms) if geoms.size else np.zeros(0, dtype=object)


def _from_wkb(wkb: np.ndarray) -> np.ndarray:
    import shapely

    return np.asarray(shapely.from_wkb(wkb), dtype=object) if wkb.size \
        else np.zeros(0, dtype=object)


def empty_part() -> Part:
    return Part(np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int64),
                np.zeros(0, dtype=object), np.zeros(0), np.zeros((0, 4)))


# --- tasks that run on the workers -----------------------------------------------------

def piece_info(data: Any) -> dict[str, Any]:
    """What the client learns of a piece read on a worker: count, reader counts, bounds,
    the kind of its ids."""
    return {"n": int(data.areas.size), "counts": data.counts, "bounds": data.bounds,
            "ids": data.ids.dtype.kind, "empty_ids": int(getattr(data, "empty_ids", 0))}


@gc_paused
def keyed(data: Any, side: int, offset: int, bounds: tuple[float, ...]) -> Part:
    """A piece's objects with their positions and Hilbert keys
    (:func:`geoeval.engine.hilbert.hilbert_keys` of their bounding boxes over ``bounds``,
    level :data:`HILBERT_LEVEL`; bounds from metadata that are too small still give
    keys on the curve)."""
    import shapely

    from geoeval.engine.hilbert import hilbert_keys

    n = data.areas.size
    box = shapely.bounds(data.geometry) if n else np.zeros((0, 4))
    key = hilbert_keys(box, tuple(bounds), HILBERT_LEVEL) if n else np.zeros(0, np.int64)
    return Part(np.full(n, side, np.int8), offset + np.arange(n, dtype=np.int64), data.ids,
                _to_wkb(data.geometry), data.areas, box, key,
                all_ids=getattr(data, "all_ids", None), classes=getattr(data, "classes", None))


@gc_paused
def read_keyed(piece: Any, side: int, bounds: tuple[float, ...]) -> Part:
    """Read a piece and key it at once (the layers' bounds known from their metadata):
    positions local to the piece (:func:`split` adds the piece's offset), the reader's
    counts in ``info``. Only the WKB of the piece stays in memory."""
    from geoeval.io.pieces import read_piece

    data = read_piece(piece)
    part = keyed(data, side, 0, bounds)
    part.info = piece_info(data)
    return part


def part_info(part: Part) -> dict[str, Any]:
    assert part.info is not None
    return part.info


def key_sample(part: Part) -> tuple[np.ndarray, np.ndarray]:
    """At most :data:`KEY_SAMPLE` evenly spaced sorted keys, each with the count it stands for."""
    if not len(part):
        return np.zeros(0, np.int64), np.zeros(0)
    keys = np.sort(part.key)
    at = np.unique(np.linspace(0, keys.size - 1, min(KEY_SAMPLE, keys.size)).astype(np.int64))
    return keys[at], np.full(at.size, keys.size / at.size)


@gc_paused
def split(part: Part, cuts: np.ndarray, offset: int = 0) -> dict[int, Part]:
    """The piece cut into the key runs (only the non-empty ones), its positions moved
    by ``offset`` (the objects of the pieces before it)."""
    if not len(part):
        return {}
    if offset:
        part = Part(part.side, part.pos + offset, part.ids, part.geometry, part.areas,
                    part.bounds, part.key, classes=part.classes)
    which = np.searchsorted(cuts, part.key, side="right")
    order = np.argsort(which, kind="stable")
    which = which[order]
    starts = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
    out = {}
    for s, e in zip(starts.tolist(), [*starts[1:].tolist(), which.size], strict=True):
        out[int(which[s])] = part.take(order[s:e])
    return out


def bucket(splits: dict[int, Any], p: int) -> Any:
    return splits.get(p)


#: Ids per bucket of the ``--id-field`` uniqueness check (buckets by id hash).
IDS_PER_BUCKET = 5_000_000


def _comparable_ids(ids: np.ndarray) -> np.ndarray:
    """Ids as the in-memory reader compares them (objects as text)."""
    return ids.astype(str) if ids.dtype == object else ids


@gc_paused
def id_buckets(part: Part, n: int) -> dict[int, np.ndarray]:
    """The ids of every feature of a piece (skipped ones too) cut into ``n`` buckets by
    hash: equal ids, whatever their piece, fall in one bucket (numbers are hashed as
    floats, so ``5`` and ``5.0`` of two files meet)."""
    import pandas as pd

    ids = _comparable_ids(part.all_ids if part.all_ids is not None else part.ids)
    if not ids.size:
        return {}
    hashed = ids.astype(np.float64) if ids.dtype.kind in "iufb" else ids
    which = (pd.util.hash_array(hashed) % np.uint64(n)).astype(np.int64)
    order = np.argsort(which, kind="stable")
    which = which[order]
    starts = np.flatnonzero(np.r_[True, which[1:] != which[:-1]])
    ends = [*starts[1:].tolist(), which.size]
    return {int(which[a]): ids[order[a:b]] for a, b in zip(starts.tolist(), ends, strict=True)}


@gc_paused
def duplicate_ids(*chunks: np.ndarray | None) -> tuple[int, Any, int]:
    """One bucket's repeated ids: how many values repeat, the smallest of them and how
    often it appears (``(0, None, 0)`` when none does): a summary of fixed size."""
    got = [c for c in chunks if c is not None and c.size]
    if not got:
        return 0, None, 0
    values, counts = np.unique(np.concatenate(got), return_counts=True)
    dup = np.flatnonzero(counts > 1)
    if not dup.size:
        return 0, None, 0
    first = values[dup[0]]
    return int(dup.size), first.item() if hasattr(first, "item") else first, \
        int(counts[dup[0]])


def _check_ids(client: Any, keyed: list[Any], features: int, source: Any,
               id_field: str) -> Any:
    """Futures of the uniqueness check of one side's ids, run on the workers: ids moved
    by hash into buckets of about :data:`IDS_PER_BUCKET`, each bucket's repeats
    summarised (:func:`duplicate_ids`); the client gets one small tuple a bucket."""
    n = max(1, int(np.ceil(features / IDS_PER_BUCKET)))
    splits = client.map(id_buckets, keyed, [n] * len(keyed), pure=False)
    return [client.submit(duplicate_ids,
                          *[client.submit(bucket, s, b, pure=False) for s in splits],
                          pure=False) for b in range(n)]


def _ids_error(source: Any, id_field: str, features: int, empty: int,
               found: list[tuple[int, Any, int]]) -> FieldError | None:
    """The in-memory reader's error for empty or repeated ids
    (:func:`geoeval.io.vector.objects_from_frame`), from the buckets' summaries."""
    if empty:
        return FieldError("id_field", id_field, "has empty values", source,
                          detail=f" ({empty} of {features} features)")
    repeats = [f for f in found if f[0]]
    if not repeats:
        return None
    first = min(repeats, key=lambda f: f[1])
    return FieldError("id_field", id_field, "is not unique", source, detail=(
        f": {sum(f[0] for f in repeats)} value(s) repeat "
        f"(e.g. {first[1]!s} appears {first[2]} times)"))


@gc_paused
def assemble(*parts: Part | None) -> Part:
    """One partition: its buckets, in (side, position) order."""
    part = Part.concat([p for p in parts if p is not None])
    order = np.lexsort((part.pos, part.side))
    return part.take(order)


def extent(part: Part) -> tuple[float, float, float, float]:
    if not len(part):
        return (np.nan,) * 4  # type: ignore[return-value]
    b = part.bounds
    return (float(b[:, 0].min()), float(b[:, 1].min()), float(b[:, 2].max()),
            float(b[:, 3].max()))


#: Cells a side of a partition's footprint (the halo test).
FOOTPRINT_CELLS = 256


@dataclass(frozen=True)
class Footprint:
    """Where a partition's objects are: its extent cut into :data:`FOOTPRINT_CELLS`²
    cells, ``table`` the summed-area table of the cells some object's bounding box
    meets (a halo test in O(1) an object, exact on the cells)."""

    extent: tuple[float, float, float, float]
    table: np.ndarray

    def cells(self, b: np.ndarray) -> tuple[np.ndarray, ...]:
        """Cell ranges ``(i0, i1, j0, j1)`` of bounding boxes ``b``, clipped to the grid."""
        x0, y0, x1, y1 = self.extent
        g = FOOTPRINT_CELLS
        w = (x1 - x0) / g or 1.0
        h = (y1 - y0) / g or 1.0

        def cell(v: np.ndarray, o: float, size: float) -> np.ndarray:
            return np.clip(np.floor((v - o) / size), 0, g - 1).astype(np.int64)

        return (cell(b[:, 0], x0, w), cell(b[:, 2], x0, w), cell(b[:, 1], y0, h),
                cell(b[:, 3], y0, h))


@gc_paused
def footprint(part: Part) -> Footprint:
    """A partition's :class:`Footprint` (runs on a worker)."""
    g = FOOTPRINT_CELLS
    ext = extent(part)
    fp = Footprint(ext, np.zeros((g + 1, g + 1), np.int64))
    if not len(part):
        return fp
    i0, i1, j0, j1 = fp.cells(part.bounds)
    diff = np.zeros((g + 1, g + 1), np.int64)  # 2-D difference array of the boxes
    np.add.at(diff, (j0, i0), 1)
    np.add.at(diff, (j0, i1 + 1), -1)
    np.add.at(diff, (j1 + 1, i0), -1)
    np.add.at(diff, (j1 + 1, i1 + 1), 1)
    covered = np.cumsum(np.cumsum(diff, 0), 1)[:g, :g] > 0
    fp.table[1:, 1:] = np.cumsum(np.cumsum(covered, 0), 1)
    return fp


def extent_of(fp: Footprint) -> tuple[float, float, float, float]:
    return fp.extent


@gc_paused
def halo(part: Part, fp: Footprint) -> Part:
    """The objects of ``part`` whose bounding box meets a cell of another partition's
    footprint ``fp`` (a superset of those sharing area with that partition's objects:
    boxes that overlap meet a common cell)."""
    b = part.bounds
    x0, y0, x1, y1 = fp.extent
    near = np.flatnonzero((b[:, 0] <= x1) & (b[:, 2] >= x0) & (b[:, 1] <= y1)
                          & (b[:, 3] >= y0))
    i0, i1, j0, j1 = fp.cells(b[near])
    t = fp.table
    hits = t[j1 + 1, i1 + 1] - t[j0, i1 + 1] - t[j1 + 1, i0] + t[j0, i0]
    return part.take(near[hits > 0])


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
    from geoeval.matching import match
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
        m = match(ov, name, **config.params.get(name, {}))
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
    objects, owner = objects.take(order), owner[order]
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


def write_rows(writer: Any, index: int, own: Part, solved: Solved) -> Any:
    """Part ``index`` of the objects dataset: the rows of ``solved``'s objects, taken
    from ``own`` (their ids, areas and geometries; positions sorted within each side)."""
    out = []
    for s in (0, 1):
        pos = solved.positions[s]
        mine = np.flatnonzero(own.side == s)
        rows = mine[np.searchsorted(own.pos[mine], pos)]
        order = np.argsort(pos, kind="stable")
        out.append((pos[order], own.ids[rows][order], own.areas[rows][order],
                    own.geometry[rows][order],
                    {m: {c: v[order] for c, v in d.items()}
                     for m, d in solved.columns[s].items()}))
    return writer.write(index, out)


@gc_paused
def write_interior(writer: Any, result: PartResult) -> Any:
    """Runs on a worker as soon as partition ``result.index`` is solved: its interior
    objects' rows, as part ``result.index`` (the partition is then released)."""
    return write_rows(writer, result.index, result.owned, result.interior)


@gc_paused
def write_boundary(writer: Any, index: int, solved: tuple[Solved, np.ndarray],
                   *parts: Boundary) -> Any:
    """Runs on a worker: the boundary components' objects' rows, as part ``index`` (the
    objects in :func:`solve_boundary`'s order)."""
    objects = Part.concat([p.objects for p in parts])
    objects = objects.take(np.lexsort((objects.pos, objects.side)))
    return write_rows(writer, index, objects, solved[0])


# --- the client's side -------------------------------------------------------------------

@dataclass
class LayerScore:
    """What the client holds at the end: summaries only (sizes bounded by partitions).

    Attributes
    ----------
    n_reference, n_submission : int
    counts : tuple of dict
        The reader's counts of each side (:func:`geoeval.io.vector.polygonal_counts`).
    crs : tuple
        Each side's CRS.
    pairs, components : int
    union_area : ExactSum
    matchers : dict
        Per matcher: ``missed``, ``false_alarms``, ``matched_overlap``, ``kinds``,
        ``score_sum``, ``score_n``, ``solver``, ``params``.
    partitions : int
    boundary_objects : int
        Objects of components crossing partitions (solved once by the boundary task).
    halo_objects : int
        Objects sent to another partition's halo (summed over partitions).
    objects_dataset : str or None
        The objects dataset's folder (``None`` without a writer).
    mallows_resolution : float or None
        The Mallows score's grid step (given, or chosen from the data).
    partials : dict
        Per key of ``summaries_plan``'s partial functions, the total of their results
        over the partitions and the boundary (added on the workers by
        ``summaries_plan.add``).
    prepared : any
        What ``summaries_plan.prepare`` returned besides the functions (edges, zones,
        the bootstrap's block grid).
    lists : dict or None
        Per matcher its per-object lists (``lists=True``), the partitions' and the
        boundary's concatenated in the whole layers' order.
    """

    n_reference: int
    n_submission: int
    counts: tuple[dict[str, int], dict[str, int]]
    crs: tuple[Any, Any]
    pairs: int
    components: int
    union_area: Any
    matchers: dict[str, dict[str, Any]]
    partitions: int
    boundary_objects: int
    halo_objects: int
    pieces: tuple[int, int]
    objects_dataset: str | None
    mallows_resolution: float | None = None
    partials: dict[str, Any] = field(default_factory=dict)
    prepared: Any = None
    lists: dict[str, Any] | None = None


def score_layers(client: Any, reference: Any, submission: Any, *, matchers: Sequence[str],
                 params: dict[str, dict[str, Any]], reference_options: dict[str, Any],
                 submission_options: dict[str, Any], writer: Any = None,
                 progress: Callable[[str], None] | None = None,
                 mallows: dict[str, Any] | None = None,
                 summaries_plan: Any = None, lists: bool = False) -> LayerScore:
    """Score two vector layers on the cluster of ``client`` (see the module docstring).

    Parameters
    ----------
    client : distributed.Client
    reference, submission : path
        GeoParquet files or dataset folders, or OGR vector sources.
    matchers, params
        Matcher names and their keywords (``threshold``, ``min_overlap``).
    reference_options, submission_options : dict
        ``layer``, ``id_field`` and ``class_field`` of each side (the classes are read
        with the objects and carried to the tasks that solve them).
    writer : callable, optional
        ``writer(id_kind, crs)`` opens the objects dataset: an object whose
        ``write(partition, rows)`` runs on the workers (one part each), then
        ``finish(footers)`` (or ``abandon()`` on failure) in the client
        (:class:`geoeval.report.objects_dataset.ObjectsWriter`).
    progress : callable, optional
        Called with step texts, partitions done / total and the time left.
    mallows : dict, optional
        ``matchers`` whose instances get the Mallows score, ``resolution`` (its grid
        step; ``None``: chosen from the median object area as the local engine does,
        :func:`geoeval.measures.rasterize.auto_resolution`, the median found on the
        cluster by :func:`geoeval.engine.median.median`) and ``approximate``.
    summaries_plan : object, optional
        Partial summaries to compute with every solved set of components: an object
        with ``needs_step`` (bool: the median-area step is needed),
        ``add(*partials)`` (their sum; it runs on the workers) and
        ``prepare(step=, bounds=, crs=)`` returning ``(partials, prepared)``
        (:class:`Config.partials`; anything the client keeps), called once the
        partitions exist with the step and each side's bounds
        (:class:`geoeval.scoring.partition_sums.Plan`).
    lists : bool
        Gather each matcher's per-object lists for the report
        (:class:`~geoeval.matching.lists.MatchLists`; at most
        :data:`~geoeval.matching.lists.LIST_LIMIT` objects, checked before the work).
    """
    from geoeval.io.pieces import plan_layer, read_piece

    def on_workers(function: Callable[..., Any], items: list[Any]) -> list[Any]:
        """``function`` of every item on the workers; on failures the first item's
        error in item order (the local reader's), whichever failed first, as one line
        naming the tile when it is not geoeval's own (:func:`_gather`)."""
        from distributed import wait

        futures = client.map(function, items, pure=False)
        wait(futures)
        failed = [k for k, future in enumerate(futures) if future.status == "error"]
        if failed:
            k = failed[0]
            _gather(client, [futures[k]], [items[k]], "planning", None, label="tiles")
        return client.gather(futures)

    plans, meta = [], []
    for side, src, opts in (("reference", reference, reference_options),
                            ("submission", submission, submission_options)):
        try:
            pieces, crs, bounds = plan_layer(src, layer=opts.get("layer"),
                                             id_field=opts.get("id_field"), mapper=on_workers)
            if opts.get("class_field") is not None:
                check_field(pieces, opts["class_field"], src)
        except FieldError as exc:
            raise exc.on(side) from None
        if opts.get("class_field") is not None:
            from dataclasses import replace

            pieces = [replace(q, class_field=opts["class_field"]) for q in pieces]
        plans.append((pieces, crs))
        meta.append(bounds)
    rows = sum(q.rows for pieces, _ in plans for q in pieces)
    if lists:
        from geoeval.matching.lists import check_listable

        check_listable(rows)
    meter = _Meter(progress, len(plans[0][0]) + len(plans[1][0]),
                   max(1, int(np.ceil(rows / OBJECTS_PER_PARTITION))), writer is not None)
    meter.report(f"reading {len(plans[0][0])} + {len(plans[1][0])} pieces")
    fused = all(m is not None for m in meta)
    if fused:  # the layers' bounds from their metadata: read and key in one task
        mb = np.array(meta, float)
        total_bounds = (float(mb[:, 0].min()), float(mb[:, 1].min()),
                        float(mb[:, 2].max()), float(mb[:, 3].max()))
        keyed_by_side = [client.map(read_keyed, pieces, [side] * len(pieces),
                                    [total_bounds] * len(pieces), pure=False)
                         for side, (pieces, _) in enumerate(plans)]
        infos = [_gather(client, client.map(part_info, futs), pieces, "reading", meter)
                 for futs, (pieces, _) in zip(keyed_by_side, plans, strict=True)]
    else:
        read = [client.map(read_piece, pieces, pure=False) for pieces, _ in plans]
        infos = [_gather(client, client.map(piece_info, futs), pieces, "reading", meter)
                 for futs, (pieces, _) in zip(read, plans, strict=True)]
    counts = []
    for side_infos in infos:
        total = {k: 0 for k in ("features", "repaired", "collections", "missing", "empty",
                                "lines", "zero")}
        for info in side_infos:
            for k, v in info["counts"].items():
                total[k] = total.get(k, 0) + v
        counts.append(total)
    from geoeval.io.vector import check_polygonal

    for src, opts, total in zip((reference, submission),
                                (reference_options, submission_options), counts, strict=True):
        check_polygonal(total, src, opts.get("layer"))  # the local engine's rule
    ns = [np.array([i["n"] for i in side], np.int64) for side in infos]
    n_ref, n_sub = int(ns[0].sum()), int(ns[1].sum())
    offsets = [np.r_[0, np.cumsum(n)[:-1]].astype(int).tolist() for n in ns]
    if not fused:
        bounds = np.array([i["bounds"] for side in infos for i in side], float).reshape(-1, 4)
        if np.isfinite(bounds).any():
            total_bounds = (float(np.nanmin(bounds[:, 0])), float(np.nanmin(bounds[:, 1])),
                            float(np.nanmax(bounds[:, 2])), float(np.nanmax(bounds[:, 3])))
        else:
            total_bounds = (0.0, 0.0, 1.0, 1.0)
        keyed_by_side = [client.map(keyed, futs, [side] * len(futs), offsets[side],
                                    [total_bounds] * len(futs), pure=False)
                         for side, futs in enumerate(read)]
        del read
        offsets = [[0] * len(o) for o in offsets]  # already in the positions
    sources = (reference, submission)
    id_fields = [o.get("id_field") for o in (reference_options, submission_options)]
    checks = [None if id_fields[side] is None else
              _check_ids(client, keyed_by_side[side], counts[side]["features"],
                         sources[side], id_fields[side]) for side in (0, 1)]
    keyed_futs = keyed_by_side[0] + keyed_by_side[1]
    shifts = offsets[0] + offsets[1]
    del keyed_by_side
    samples = client.gather(client.map(key_sample, keyed_futs))
    for side, futs in enumerate(checks):  # ids unique, as the in-memory reader requires
        if futs is not None:
            error = _ids_error(sources[side], id_fields[side], counts[side]["features"],
                               sum(i.get("empty_ids", 0) for i in infos[side]),
                               client.gather(futs))
            if error is not None:
                raise error.on(("reference", "submission")[side])
    del checks
    keys = np.concatenate([s[0] for s in samples]) if samples else np.zeros(0, np.int64)
    weights = np.concatenate([s[1] for s in samples]) if samples else np.zeros(0)
    k = max(1, int(np.ceil((n_ref + n_sub) / OBJECTS_PER_PARTITION)))
    cuts = _cuts(keys, weights, k)
    k = cuts.size + 1
    meter.partitions(k)
    meter.report(f"partitioning {n_ref:,} + {n_sub:,} objects into {k} partitions")
    splits = client.map(split, keyed_futs, [cuts] * len(keyed_futs), shifts, pure=False)
    del keyed_futs
    sizes = client.gather(client.map(_split_keys, splits))
    parts = []
    for p in range(k):
        holders = [s for s, got in zip(splits, sizes, strict=True) if p in got]
        buckets = [client.submit(bucket, s, p, pure=False) for s in holders]
        parts.append(client.submit(assemble, *buckets, pure=False))
    del splits
    prints = client.map(footprint, parts, pure=False)
    extents = np.array(client.gather(client.map(extent_of, prints)), float).reshape(-1, 4)
    neighbours = _neighbours(extents)
    config, prepared = _config(client, parts, matchers, params, mallows, summaries_plan,
                               plans[0][1], meter)
    config = replace_config(config, tuple(o.get("class_field") is not None
                                          for o in (reference_options, submission_options)),
                            lists)
    out = None
    if writer is not None:
        kinds = [i["ids"] for side in infos for i in side if i["n"]]
        out = writer(kinds[0] if kinds and all(x in "iub" for x in kinds) else
                     ("U" if kinds else "i"), plans[0][1])
    try:
        # each partition's result lives only until its summary, boundary objects,
        # partial sums and interior rows (written at once) are taken from it: the
        # workers never hold every partition's objects at the same time
        summary_futs, boundary_futs, partial_futs, write_futs, list_futs = [], [], [], [], []
        for p in range(k):
            halos = [client.submit(halo, parts[q], prints[p], pure=False)
                     for q in neighbours[p]]
            result = client.submit(solve_partition, p, parts[p], config, *halos,
                                   pure=False)
            summary_futs.append(client.submit(summary_of, result))
            boundary_futs.append(client.submit(boundary_of, result))
            if config.partials:
                partial_futs.append(client.submit(partials_of, result, pure=False))
            if out is not None:
                write_futs.append(client.submit(write_interior, out, result, pure=False))
            if config.lists:
                list_futs.append(client.submit(lists_of, result))
            del result
        del parts, prints
        summaries = _gather(client, summary_futs, list(range(k)), "matching", meter,
                            label="partitions")
        meter.report(f"solving the components that cross partitions "
                     f"({sum(s['boundary_objects'] for s in summaries):,} objects)")
        solved = client.submit(solve_boundary, config, *boundary_futs, pure=False)
        boundary_summary = _gather(client, [client.submit(_boundary_summary, solved)],
                                   ["the boundary"], "solving the boundary", meter,
                                   label="task")[0]
        added = None
        if config.partials:  # added up on the workers: only the total reaches the client
            added = _reduce(client, [*partial_futs,
                                     client.submit(partials_of, solved, pure=False)],
                            summaries_plan.add)
        gathered = None
        if config.lists:  # bounded by LIST_LIMIT objects, checked before the work
            list_futs.append(client.submit(lists_of, solved))
            got = _gather(client, list_futs, [*range(k), "the boundary"], "listing objects",
                          None, label="parts")
            from geoeval.matching.lists import MatchLists

            gathered = {name: MatchLists.concat([g[name] for g in got]) for name in matchers}
        dataset = None
        if out is not None:
            write_futs.append(client.submit(write_boundary, out, k, solved, *boundary_futs,
                                            pure=False))
            dataset = out.finish(_gather(client, write_futs, [*range(k), "the boundary"],
                                         "writing objects", meter, label="parts"))
    except BaseException:
        if out is not None:
            out.abandon()
        raise
    total = add_summaries([*summaries, boundary_summary], matchers,
                          ("pairs", "components", "union_area"))
    partials: dict[str, Any] = {} if added is None else added.result()
    return LayerScore(n_ref, n_sub, (counts[0], counts[1]), (plans[0][1], plans[1][1]),
                      total["pairs"], total["components"], total["union_area"],
                      total["matchers"], k, sum(s["boundary_objects"] for s in summaries),
                      sum(s["halo_objects"] for s in summaries),
                      (len(plans[0][0]), len(plans[1][0])), dataset, config.resolution,
                      partials, prepared, gathered)


def _config(client: Any, parts: list[Any], matchers: Sequence[str],
            params: dict[str, dict[str, Any]], mallows: dict[str, Any] | None,
            plan: Any, crs: Any, meter: _Meter) -> tuple[Config, Any]:
    """The partition tasks' :class:`Config` and what ``plan.prepare`` kept. Without a
    given Mallows grid step, the step the local engine chooses
    (:func:`geoeval.measures.rasterize.auto_resolution`: from the reference's median
    positive area, else the submission's), the median found on the cluster."""
    mal = mallows or {}
    names = tuple(mal.get("matchers", ()))
    resolution = mal.get("resolution")
    step = None
    if (names and resolution is None) or (plan is not None and plan.needs_step):
        from geoeval.engine.median import median
        from geoeval.measures.rasterize import step_from_median

        meter.report("choosing the grid step (median object area)")
        for side in (0, 1):
            med = median(client, parts, side)
            if med is not None:
                step = step_from_median(med)
                break
    if resolution is None:
        resolution = step
    partials, prepared = (), None
    if plan is not None:
        ext = np.array(client.gather(client.map(side_extents, parts, pure=False)),
                       float).reshape(-1, 2, 4)
        bounds = []
        for side in (0, 1):
            e = ext[:, side]
            e = e[np.isfinite(e).all(axis=1)]
            bounds.append(None if not len(e) else
                          (float(e[:, 0].min()), float(e[:, 1].min()),
                           float(e[:, 2].max()), float(e[:, 3].max())))
        partials, prepared = plan.prepare(step=step, bounds=tuple(bounds), crs=crs)
    return Config(tuple(matchers), params, names, resolution, mal.get("approximate"),
                  tuple(partials)), prepared


def replace_config(config: Config, classes: tuple[bool, ...], lists: bool = False) -> Config:
    from dataclasses import replace

    return replace(config, classes=(bool(classes[0]), bool(classes[1])), lists=lists)


def check_field(pieces: list[Any], name: str, source: Any) -> None:
    """The in-memory reader's error when the layer (its first file) has no field ``name``
    (``--class-field``), from the file's metadata."""
    if not pieces:
        return
    from pathlib import Path

    from geoeval.io.paths import local_path
    from geoeval.io.vector import _check_fields

    q = pieces[0]
    if q.kind == "parquet":
        import json

        import pyarrow.parquet as pq

        schema = pq.read_schema(local_path(q.path))
        primary = json.loads((schema.metadata or {}).get(b"geo", b"{}")).get("primary_column")
        fields = [n for n in schema.names if n != primary]
    else:
        import pyogrio

        fields = [str(f) for f in pyogrio.read_info(local_path(q.path),
                                                    layer=q.layer)["fields"]]
    try:
        _check_fields(Path(q.path), fields, None, name)
    except InputError as exc:
        raise InputError(exc.message, source) from None


def side_extents(part: Part) -> list[tuple[float, float, float, float]]:
    """Runs on a worker: the extent of each side's objects in a partition (NaN: none)."""
    return [extent(part.take(np.flatnonzero(part.side == s))) for s in (0, 1)]


def _split_keys(splits: dict[int, Part]) -> set[int]:
    return set(splits)


def _boundary_summary(solved: tuple[Solved, np.ndarray]) -> dict[str, Any]:
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


#: Partial summaries added per reduction task (the tree of additions on the workers).
REDUCE_FAN_IN = 8


def _reduce(client: Any, futures: list[Any], add: Callable[..., Any]) -> Any:
    """The future of ``add(*values)`` over the results of ``futures`` (at least one), a
    tree of tasks on the workers (:data:`REDUCE_FAN_IN` at a time): only the total
    reaches the client."""
    while len(futures) > 1:
        futures = [client.submit(add, *futures[i:i + REDUCE_FAN_IN], pure=False)
                   for i in range(0, len(futures), REDUCE_FAN_IN)]
    return futures[0]


def _cuts(keys: np.ndarray, weights: np.ndarray, k: int) -> np.ndarray:
    """``k - 1`` increasing key cuts giving runs of about equal weight (distinct cuts only)."""
    if k <= 1 or keys.size == 0:
        return np.zeros(0, np.int64)
    order = np.argsort(keys, kind="stable")
    keys, cum = keys[order], np.cumsum(weights[order])
    targets = cum[-1] * np.arange(1, k) / k
    cuts = keys[np.minimum(np.searchsorted(cum, targets), keys.size - 1)]
    return np.unique(cuts)


def _neighbours(extents: np.ndarray) -> list[list[int]]:
    """For each partition, the other partitions whose extents meet its extent."""
    ok = np.isfinite(extents).all(axis=1)
    x0, y0, x1, y1 = (extents[:, i] for i in range(4))
    import shapely

    boxes = shapely.box(np.where(ok, x0, 0), np.where(ok, y0, 0), np.where(ok, x1, 0),
                        np.where(ok, y1, 0))
    a, b = shapely.STRtree(boxes).query(boxes, predicate="intersects")
    keep = (a != b) & ok[a] & ok[b]
    out: list[list[int]] = [[] for _ in range(len(extents))]
    for p, q in zip(a[keep].tolist(), b[keep].tolist(), strict=True):
        out[p].append(q)
    return out


def add_summaries(summaries: list[dict[str, Any]], matchers: Sequence[str],
                  keys: Sequence[str]) -> dict[str, Any]:
    """Tasks' summaries added up: the numbers under ``keys``, and per matcher its counts,
    sums, kinds and solver counts (:func:`~geoeval.measures.mallows.add_mallows_sums` for
    the Mallows sums); the
    partitions' and the label-mosaic blocks' (:mod:`geoeval.engine.mosaic`) alike."""
    total: dict[str, Any] = {k: 0 for k in keys}
    total["matchers"] = {}
    for s in summaries:
        for key in keys:
            total[key] += s[key]
    for name in matchers:
        acc: dict[str, Any] = {"missed": 0, "false_alarms": 0, "matched_overlap": ZERO,
                               "kinds": {}, "score_sum": ZERO, "score_n": 0, "solver": {},
                               "params": {}, "mallows": None}
        for s in summaries:
            m = s["matchers"][name]
            for key in ("missed", "false_alarms", "matched_overlap", "score_sum", "score_n"):
                acc[key] += m[key]
            for key in ("kinds", "solver"):
                for kk, v in m[key].items():
                    acc[key][kk] = acc[key].get(kk, 0) + v
            acc["params"] = m["params"] or acc["params"]
            acc["mallows"] = add_mallows_sums(acc["mallows"], m.get("mallows"))
        total["matchers"][name] = acc
    return total


class _Meter:
    """One count of the run's work on the cluster, reported as one step: pieces read,
    partitions matched, the boundary solved, parts written, as ``done/total``, the
    time left, and what is running. The time left is the throughput measured since
    the first :data:`WARM_UP` units (their start-up costs left out, no guess before,
    nor before :data:`MEASURED` seconds of it: the in-memory engine's rule). The
    partitions are estimated from the pieces' feature counts until the key cuts are
    known (:meth:`partitions`)."""

    STEP = "scoring on the cluster"

    def __init__(self, progress: Callable[[str], None] | None, pieces: int,
                 partitions: int, writes: bool) -> None:
        self.progress, self.pieces, self.writes = progress, pieces, writes
        self.total = 0
        self.done = 0
        self.base: tuple[float, int] | None = None
        self.partitions(partitions)

    def partitions(self, k: int) -> None:
        """The number of partitions is known (or estimated): the total follows."""
        # pieces, partitions, the boundary, and (writing) a part a partition + the boundary's
        self.total = self.pieces + k + 1 + ((k + 1) if self.writes else 0)

    def add(self, stage: str) -> None:
        self.done += 1
        if self.base is None and self.done >= min(WARM_UP, self.total):
            self.base = (time.monotonic(), self.done)
        self.report(stage)

    def report(self, stage: str) -> None:
        if self.progress is None:
            return
        done = min(self.done, self.total)
        left = ""
        if self.base is not None and done < self.total:
            since, at = time.monotonic() - self.base[0], self.base[1]
            rest = since * (self.total - done) / (done - at) if done > at else 0.0
            if since >= MEASURED and rest >= 1:
                left = f", about {rest:.0f} s left"
        self.progress(f"{self.STEP}: {done}/{self.total}{left} ({stage})")


#: Units of work done before the throughput is measured; seconds of it before a time
#: left is shown (as :mod:`geoeval.scoring.scene` does for the in-memory engine).
WARM_UP = 3
MEASURED = 1.0


def _gather(client: Any, futures: list[Any], items: list[Any], what: str,
            meter: _Meter | None, label: str = "pieces") -> list[Any]:
    """Results in order, each counted by ``meter``; a failed task's error
    is raised naming the item (piece: file and rows; partition: its number)."""
    from distributed import as_completed

    out: list[Any] = [None] * len(futures)
    where = {f.key: i for i, f in enumerate(futures)}
    done = 0
    for fut in as_completed(futures):
        i = where[fut.key]
        try:
            out[i] = fut.result()
        except InputError:
            raise
        except Exception as exc:
            item = items[i]
            name = (f"{item.path} ({'row groups' if item.kind == 'parquet' else 'features'} "
                    f"{item.start}..{item.start + item.count - 1})"
                    if hasattr(item, "path") else
                    (f"partition {item}" if isinstance(item, int) else str(item)))
            raise InputError(f"{what} failed on {name}: {type(exc).__name__}: "
                             f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
        done += 1
        if meter is not None:
            meter.add(f"{what} {done}/{len(futures)} {label}")
    return out

"""The overlap of objects the client holds, computed on a Dask cluster (the *in the
client* route): a map over parts, the edges reduced to the client.

Vector layers (and a raster against a vector layer, through the raster's
polygons): the reference is cut into runs of consecutive Hilbert keys
(:func:`geoeval.engine.hilbert.hilbert_keys` of each bounding box over the layer's
bounds; at least four runs a worker); a run's *hull* is the convex hull of its
objects.

Ownership rule (every pair counted exactly once): a reference-submission pair is
computed by the run that **owns its reference object** (every object is in exactly
one run). Each submission is sent to every run whose hull it intersects: if it
shares area with a reference object it intersects that object, hence the hull of
the object's run, so the pair is found there, and only there. Same-side pairs
(needed for the union area when a side overlaps itself) follow the same rule on that
side's own runs, a pair ``(a, b)``, ``a < b``, being kept by the run owning ``a``.

Each run runs :func:`geoeval.overlap.overlap_pairs`, the kernel of the in-memory
engine, on the same geometries: the areas are bit-identical. The client sorts the
edges by (row, col) as :func:`geoeval.overlap.compute_overlap` does and computes the
union area with :func:`geoeval.overlap.union_area`.

Two label arrays in memory on one grid are cut into blocks of :data:`WINDOW` pixels
a side, scattered and counted on the workers with the local engine's kernel
(:func:`geoeval.io.windowed.scan_labels`), the counts merged in the client
(:func:`geoeval.overlap.overlap_from_scan`). Labelled rasters read from files are
scanned window by window on the workers themselves (:func:`geoeval.io.windowed.scan`
within :func:`geoeval.parallel.remote`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.grid import windows
from geoeval.io.windowed import Scan, merge_scans, scan_labels
from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap, compute_overlap, overlap_from_scan, overlap_pairs, union_area

#: Target number of objects per run (at least 4 runs per worker).
OBJECTS_PER_PARTITION = 20_000
#: Block side (pixels) of the map over a label grid in memory.
WINDOW = 2048

_Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]


def dask_overlap(reference: ObjectSet, submission: ObjectSet, client: Any) -> Overlap:
    """:func:`geoeval.overlap.compute_overlap` computed on the cluster of ``client``."""
    rg, sg = reference.grid, submission.grid
    if rg is not None and sg is not None and rg.same_grid(sg):
        if not rg.in_memory and not sg.in_memory:
            # files: the windowed scan (counted while reading, else now) runs on the
            # cluster through geoeval.parallel.remote, set by the engine's caller
            return compute_overlap(reference, submission)
        return dask_cooccurrence(reference, submission, client)
    workers = max(1, len(client.scheduler_info()["workers"]))
    gr, gs = reference.polygons, submission.polygons
    layers: dict[str, Any] = {}

    def scattered(side: str) -> Any:  # each layer goes to the cluster once
        if side not in layers:
            geoms = gr if side == "ref" else gs
            [layers[side]] = client.scatter([np.asarray(geoms, dtype=object)], hash=False)
        return layers[side]

    tasks: list[Any] = []
    ref_runs = _runs(gr, workers) if len(gr) and len(gs) else None
    if ref_runs is not None:  # reference x submission, owner: the reference's run
        tasks += _run_tasks(client, ref_runs, scattered("ref"), gs, scattered("sub"),
                            same_side=False)
    self_tasks = {}
    for side, objects, geoms in (("ref", reference, gr), ("sub", submission, gs)):
        if objects.grid is None and len(geoms) > 1:
            runs = ref_runs if side == "ref" and ref_runs is not None \
                else _runs(geoms, workers)
            self_tasks[side] = _run_tasks(client, runs, scattered(side), geoms,
                                          scattered(side), same_side=True)
    flat = tasks + self_tasks.get("ref", []) + self_tasks.get("sub", [])
    done = client.gather(flat) if flat else []
    n_cross, n_ref = len(tasks), len(self_tasks.get("ref", []))
    rows, cols, vals = _reduce(done[:n_cross])
    own: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for side, objects, part in (("ref", reference, done[n_cross:n_cross + n_ref]),
                                ("sub", submission, done[n_cross + n_ref:])):
        if side in self_tasks:
            a, b, _ = _reduce(part)
            own[side] = (a, b)  # the pairs of ObjectSet.self_overlaps, passed on, not cached
        else:
            own[side] = objects.self_overlaps
    total = union_area(reference, submission, rows, cols, vals, own["ref"], own["sub"])
    return Overlap(reference, submission, rows, cols, vals, total, "rtree")


def _runs(geoms: np.ndarray, workers: int) -> list[tuple[np.ndarray, Any]]:
    """The geometries cut into runs of consecutive Hilbert keys: each run's positions
    (sorted) and hull."""
    import shapely

    from geoeval.engine.hilbert import hilbert_keys, runs

    n = len(geoms)
    k = max(1, min(max(4 * workers, int(np.ceil(n / OBJECTS_PER_PARTITION))), n))
    boxes = shapely.bounds(geoms)
    ok = np.isfinite(boxes).all(axis=1)
    bounds = (tuple(np.nanmin(boxes[ok], axis=0)[:2]) + tuple(np.nanmax(boxes[ok], axis=0)[2:])
              if ok.any() else (0.0, 0.0, 1.0, 1.0))
    out = []
    for pos in runs(hilbert_keys(boxes, bounds), k):
        pos = np.sort(pos)
        out.append((pos, shapely.convex_hull(shapely.geometrycollections(geoms[pos]))))
    return out


def _run_tasks(client: Any, runs: list[tuple[np.ndarray, Any]], own_layer: Any,
               tree_geoms: np.ndarray, tree_layer: Any, *, same_side: bool) -> list[Any]:
    """One task per run: its objects (positions into ``own_layer``, scattered) against the
    ``tree_geoms`` (scattered as ``tree_layer``) that intersect its hull."""
    import shapely

    hulls = np.array([h for _, h in runs], dtype=object)
    p, t = shapely.STRtree(hulls).query(tree_geoms, predicate="intersects")[::-1]
    order = np.lexsort((t, p))
    p, t = p[order], t[order]
    cuts = np.searchsorted(p, np.arange(hulls.size + 1))
    return [client.submit(partition_pairs, own_layer, pos, tree_layer, t[cuts[i]:cuts[i + 1]],
                          same_side, pure=False)
            for i, (pos, _) in enumerate(runs)]


def partition_pairs(own_layer: np.ndarray, own_pos: np.ndarray, tree_layer: np.ndarray,
                    tree_pos: np.ndarray, same_side: bool) -> _Pairs:
    """Runs on a worker: the pairs owned by one run, in layer positions.

    ``own_layer[own_pos]`` are the run's objects; ``tree_layer[tree_pos]`` the objects
    of the other side (or of the same side, ``same_side``) that intersect its hull.
    :func:`geoeval.overlap.overlap_pairs` finds the pairs; with ``same_side`` only
    ``a < b`` is kept (the pair then belongs to ``a``'s run).
    """
    own_pos = np.asarray(own_pos, dtype=np.int64)
    tree_pos = np.asarray(tree_pos, dtype=np.int64)
    r, c, v = overlap_pairs(own_layer[own_pos], tree_layer[tree_pos])
    r, c = own_pos[r], tree_pos[c]
    if same_side:
        keep = r < c
        r, c, v = r[keep], c[keep], v[keep]
    return r, c, v


def _reduce(parts: list[_Pairs]) -> _Pairs:
    """Concatenate the runs' edges, sorted by (row, col) as ``compute_overlap``."""
    if not parts:
        e = np.zeros(0, dtype=np.int64)
        return e, e.copy(), np.zeros(0)
    rows = np.concatenate([p[0] for p in parts]).astype(np.int64)
    cols = np.concatenate([p[1] for p in parts]).astype(np.int64)
    vals = np.concatenate([p[2] for p in parts]).astype(float)
    order = np.lexsort((cols, rows))
    return rows[order], cols[order], vals[order]


def pair_scan(ref: np.ndarray, sub: np.ndarray, ref_background: Any,
              sub_background: Any) -> Scan:
    """Label pairs of one block pair (the task each worker runs)."""
    return scan_labels([ref, sub], [ref_background, sub_background], per_label=False)


def dask_cooccurrence(reference: ObjectSet, submission: ObjectSet, client: Any,
                      size: int | None = None) -> Overlap:
    """The co-occurrence overlap of two label arrays on one grid, blocks mapped on the
    cluster (``size`` pixels a side, default :data:`WINDOW`)."""
    rg, sg = reference.grid, submission.grid
    assert rg is not None and sg is not None
    side = size or WINDOW
    wins = [(slice(r0, r1), slice(c0, c1))
            for r0, r1, c0, c1 in windows(rg.shape, (side, side), side * side)]
    # the blocks are sent as data (scattered), not inside the task graph
    ref_blocks = client.scatter([rg.labels[w] for w in wins], hash=False)
    sub_blocks = client.scatter([sg.labels[w] for w in wins], hash=False)
    futures = client.map(pair_scan, ref_blocks, sub_blocks, [rg.background] * len(wins),
                         [sg.background] * len(wins), pure=False)
    parts = client.gather(futures)
    found = merge_scans(parts) if parts else pair_scan(
        np.zeros((0, 0), rg.dtype), np.zeros((0, 0), sg.dtype), rg.background, sg.background)
    return overlap_from_scan(reference, submission, found)

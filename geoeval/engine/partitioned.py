"""The overlap on a Dask cluster: a map over spatial partitions, edges reduced to the client.

Vector layers (and a raster against a vector layer, through the raster's
polygons): the reference is spatially partitioned as a dask-geopandas frame
whose partitions are runs of consecutive Hilbert keys (the Hilbert distance of
each geometry's bounding-box centre, level 16, over the layer's bounds: the key
``spatial_shuffle(by="hilbert")`` sorts by); the spatial partitions are the
convex hulls of each partition's geometries.

Ownership rule (every pair counted exactly once): a reference-submission pair
is computed by the partition that **owns its reference object** (the partition
it was put in by its Hilbert key; every object is in exactly one). Each submission is sent to
every partition whose hull it intersects: if it shares area with a reference
object it intersects that object, hence the hull of the object's partition, so
the pair is found there, and only there. Same-side pairs (needed for the union
area when a side overlaps itself) follow the same rule on that side's own
partitions, a pair ``(a, b)``, ``a < b``, being kept by the partition owning ``a``.

Each partition runs :func:`geoeval.overlap.overlap_pairs`, the kernel of the
in-memory engine, on the same geometries: the areas are bit-identical. The
client sorts the edges by (row, col) as :func:`geoeval.overlap.compute_overlap`
does and computes the union area with :func:`geoeval.overlap.union_area`.
Two labelled rasters on one grid go to :mod:`geoeval.engine.raster`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.objects import ObjectSet
from geoeval.overlap import Overlap, compute_overlap, overlap_pairs, union_area

#: Target number of objects per spatial partition (at least 4 partitions per worker).
OBJECTS_PER_PARTITION = 20_000
#: Hilbert curve level of the ownership key (dask-geopandas' default).
HILBERT_LEVEL = 16

_Pairs = tuple[np.ndarray, np.ndarray, np.ndarray]


def dask_overlap(reference: ObjectSet, submission: ObjectSet, client: Any) -> Overlap:
    """:func:`geoeval.overlap.compute_overlap` computed on the cluster of ``client``."""
    rg, sg = reference.grid, submission.grid
    if rg is not None and sg is not None and rg.same_grid(sg):
        if not rg.in_memory and not sg.in_memory:
            # files: the windowed scan (counted while reading, else now) runs on the
            # cluster through geoeval.parallel.remote, set by the engine's caller
            return compute_overlap(reference, submission)
        from geoeval.engine.raster import dask_cooccurrence

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
    ref_parts = _partitions(gr, workers) if len(gr) and len(gs) else None
    if ref_parts is not None:  # reference x submission, owner: the reference's partition
        tasks += _partition_tasks(ref_parts, gs, scattered("sub"), same_side=False)
    self_tasks = {}
    for side, objects, geoms in (("ref", reference, gr), ("sub", submission, gs)):
        if objects.grid is None and len(geoms) > 1:
            parts = ref_parts if side == "ref" and ref_parts is not None \
                else _partitions(geoms, workers)
            self_tasks[side] = _partition_tasks(parts, geoms, scattered(side), same_side=True)
    flat = tasks + self_tasks.get("ref", []) + self_tasks.get("sub", [])
    done = client.gather(client.compute(flat)) if flat else []
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


def _partitions(geoms: np.ndarray, workers: int) -> Any:
    """The geometries as a dask-geopandas frame cut into ranges of their Hilbert key,
    persisted on the cluster, with their spatial partitions (convex hulls).

    The key is geopandas' ``hilbert_distance`` (the bounding-box centre on a
    level-16 curve over the layer's bounds), the one ``spatial_shuffle`` sorts
    by; the layer is already in the client, so it is sorted there (a stable
    sort: no shuffle) and sent once, in ``k`` partitions of consecutive keys.
    """
    import warnings

    import dask_geopandas
    import geopandas

    n = len(geoms)
    k = max(4 * workers, int(np.ceil(n / OBJECTS_PER_PARTITION)))
    k = max(1, min(k, n))
    frame = geopandas.GeoDataFrame({"pos": np.arange(n, dtype=np.int64)},
                                   geometry=geopandas.array.from_shapely(geoms))
    key = frame.geometry.hilbert_distance(level=HILBERT_LEVEL).to_numpy()
    frame = frame.iloc[np.argsort(key, kind="stable")].reset_index(drop=True)
    with warnings.catch_warnings():  # "sending large graph": the layer, sent this once
        warnings.simplefilter("ignore", UserWarning)
        parts = dask_geopandas.from_geopandas(frame, npartitions=k, sort=False).persist()
    parts.calculate_spatial_partitions()
    return parts


def _partition_tasks(parts: Any, tree_geoms: np.ndarray, layer: Any, *,
                     same_side: bool) -> list[Any]:
    """One delayed task per partition: its owned objects against the ``tree_geoms``
    that intersect its hull. ``layer`` is ``tree_geoms`` already scattered to the
    cluster (a future); each task carries only the positions of its share."""
    import dask
    import shapely

    hulls = np.asarray(parts.spatial_partitions.values)
    p, t = shapely.STRtree(hulls).query(tree_geoms, predicate="intersects")[::-1]
    order = np.lexsort((t, p))
    p, t = p[order], t[order]
    cuts = np.searchsorted(p, np.arange(hulls.size + 1))
    kernel = dask.delayed(partition_pairs, pure=True)
    return [kernel(part, layer, t[cuts[i]:cuts[i + 1]], same_side)
            for i, part in enumerate(parts.to_delayed())]


def partition_pairs(part: Any, tree_layer: np.ndarray, tree_pos: np.ndarray,
                    same_side: bool) -> _Pairs:
    """Runs on a worker: the pairs owned by one partition, in global positions.

    ``part`` holds the partition's own objects (column ``pos``: their position
    in their layer); ``tree_layer[tree_pos]`` the objects of the other side (or
    of the same side, ``same_side``) that intersect the partition's hull.
    :func:`geoeval.overlap.overlap_pairs` finds the pairs; with ``same_side``
    only ``a < b`` is kept (the pair then belongs to ``a``'s partition).
    """
    query = np.asarray(part.geometry.values, dtype=object)
    qpos = part["pos"].to_numpy(dtype=np.int64)
    tree_pos = np.asarray(tree_pos, dtype=np.int64)
    r, c, v = overlap_pairs(query, tree_layer[tree_pos])
    r, c = qpos[r], tree_pos[c]
    if same_side:
        keep = r < c
        r, c, v = r[keep], c[keep], v[keep]
    return r, c, v


def _reduce(parts: list[_Pairs]) -> _Pairs:
    """Concatenate the partitions' edges, sorted by (row, col) as ``compute_overlap``."""
    if not parts:
        e = np.zeros(0, dtype=np.int64)
        return e, e.copy(), np.zeros(0)
    rows = np.concatenate([p[0] for p in parts]).astype(np.int64)
    cols = np.concatenate([p[1] for p in parts]).astype(np.int64)
    vals = np.concatenate([p[2] for p in parts]).astype(float)
    order = np.lexsort((cols, rows))
    return rows[order], cols[order], vals[order]

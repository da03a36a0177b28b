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
   objects it owns, the matchers (their registry entries, sent with the tasks:
   :attr:`geoeval.engine.solve.Config.entries`) and the union
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

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from geoeval.engine.gather import Meter, add_summaries, gather, on_workers, reduce_tree
from geoeval.engine.halo import extent_of, footprint, halo, neighbours
from geoeval.engine.ids import check_ids, ids_error
from geoeval.engine.parts import (
    assemble,
    bucket,
    cuts,
    key_sample,
    keyed,
    part_attributes,
    part_info,
    piece_info,
    read_keyed,
    side_extents,
    split,
    split_keys,
)
from geoeval.engine.solve import (
    Config,
    boundary_of,
    boundary_summary,
    lists_of,
    partials_of,
    solve_boundary,
    solve_partition,
    summary_of,
)
from geoeval.engine.write import write_boundary, write_interior
from geoeval.errors import FieldError

#: Target number of objects (both sides) per spatial partition.
OBJECTS_PER_PARTITION = 100_000


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
        Per matcher its per-object lists (``lists=True`` and at most
        :data:`~geoeval.matching.lists.LIST_LIMIT` objects), the partitions' and the
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
                 summaries_plan: Any = None, lists: bool = False,
                 planned: Callable[[int, int], None] | None = None) -> LayerScore:
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
        ``writer(id_kind, crs, attributes)`` opens the objects dataset (``attributes``:
        the Arrow schema of the layers' attribute columns, read with the pieces): an object whose
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
        (:class:`~geoeval.matching.lists.MatchLists`) when the report lists them: at
        most :data:`~geoeval.matching.lists.LIST_LIMIT` objects
        (:func:`~geoeval.matching.lists.listable`, decided once the pieces are read);
        past it nothing per object reaches the client.
    planned : callable, optional
        Called with each side's number of features, from the metadata, before any
        piece is read (``--strict`` refuses an empty layer there).
    """
    from geoeval.io.pieces import check_field, plan_layer, read_piece

    plans, meta = [], []
    for side, src, opts in (("reference", reference, reference_options),
                            ("submission", submission, submission_options)):
        try:
            pieces, crs, bounds = plan_layer(src, layer=opts.get("layer"),
                                             id_field=opts.get("id_field"),
                                             mapper=functools.partial(on_workers, client))
            if opts.get("class_field") is not None:
                check_field(pieces, opts["class_field"], src)
            if opts.get("region") is not None:  # only the pieces the region needs
                from geoeval.io.region_pieces import restrict_pieces

                pieces = restrict_pieces(pieces, opts["region"].in_crs(crs)).pieces
        except FieldError as exc:
            raise exc.on(side) from None
        if opts.get("class_field") is not None:
            from dataclasses import replace

            pieces = [replace(q, class_field=opts["class_field"]) for q in pieces]
        if writer is not None:  # the objects dataset carries every attribute column
            from dataclasses import replace

            pieces = [replace(q, attributes=True) for q in pieces]
        plans.append((pieces, crs))
        meta.append(bounds)
    if planned is not None:
        planned(*(sum(q.rows for q in pieces) for pieces, _ in plans))
    rows = sum(q.rows for pieces, _ in plans for q in pieces)
    meter = Meter(progress, len(plans[0][0]) + len(plans[1][0]),
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
        infos = [gather(client, client.map(part_info, futs), pieces, "reading", meter)
                 for futs, (pieces, _) in zip(keyed_by_side, plans, strict=True)]
    else:
        read = [client.map(read_piece, pieces, pure=False) for pieces, _ in plans]
        infos = [gather(client, client.map(piece_info, futs), pieces, "reading", meter)
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
    if lists:  # the report's rule (LIST_LIMIT objects): past it, no list reaches the client
        from geoeval.matching.lists import listable

        lists = listable(n_ref + n_sub)
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
              check_ids(client, keyed_by_side[side], counts[side]["features"],
                         sources[side], id_fields[side]) for side in (0, 1)]
    keyed_futs = keyed_by_side[0] + keyed_by_side[1]
    shifts = offsets[0] + offsets[1]
    del keyed_by_side
    attribute_schema = None
    if writer is not None:  # the pieces' in layer order: the reference's columns first
        from geoeval.io.attributes import unified_schema

        attribute_schema = unified_schema(client.gather(client.map(part_attributes,
                                                                   keyed_futs)))
    samples = client.gather(client.map(key_sample, keyed_futs))
    for side, futs in enumerate(checks):  # ids unique, as the in-memory reader requires
        if futs is not None:
            error = ids_error(sources[side], id_fields[side], counts[side]["features"],
                               sum(i.get("empty_ids", 0) for i in infos[side]),
                               client.gather(futs))
            if error is not None:
                raise error.on(("reference", "submission")[side])
    del checks
    keys = np.concatenate([s[0] for s in samples]) if samples else np.zeros(0, np.int64)
    weights = np.concatenate([s[1] for s in samples]) if samples else np.zeros(0)
    k = max(1, int(np.ceil((n_ref + n_sub) / OBJECTS_PER_PARTITION)))
    key_cuts = cuts(keys, weights, k)
    k = key_cuts.size + 1
    meter.partitions(k)
    meter.report(f"partitioning {n_ref:,} + {n_sub:,} objects into {k} partitions")
    splits = client.map(split, keyed_futs, [key_cuts] * len(keyed_futs), shifts, pure=False)
    del keyed_futs
    sizes = client.gather(client.map(split_keys, splits))
    parts = []
    for p in range(k):
        holders = [s for s, got in zip(splits, sizes, strict=True) if p in got]
        buckets = [client.submit(bucket, s, p, pure=False) for s in holders]
        parts.append(client.submit(assemble, *buckets, pure=False))
    del splits
    prints = client.map(footprint, parts, pure=False)
    extents = np.array(client.gather(client.map(extent_of, prints)), float).reshape(-1, 4)
    near = neighbours(extents)
    config, prepared = _config(client, parts, matchers, params, mallows, summaries_plan,
                               plans[0][1], meter)
    config = replace_config(config, tuple(o.get("class_field") is not None
                                          for o in (reference_options, submission_options)),
                            lists)
    out = None
    if writer is not None:
        kinds = [i["ids"] for side in infos for i in side if i["n"]]
        out = writer(kinds[0] if kinds and all(x in "iub" for x in kinds) else
                     ("U" if kinds else "i"), plans[0][1], attribute_schema)
    try:
        # each partition's result lives only until its summary, boundary objects,
        # partial sums and interior rows (written at once) are taken from it: the
        # workers never hold every partition's objects at the same time
        summary_futs, boundary_futs, partial_futs, write_futs, list_futs = [], [], [], [], []
        for p in range(k):
            halos = [client.submit(halo, parts[q], prints[p], pure=False)
                     for q in near[p]]
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
        summaries = gather(client, summary_futs, list(range(k)), "matching", meter,
                            label="partitions")
        meter.report(f"solving the components that cross partitions "
                     f"({sum(s['boundary_objects'] for s in summaries):,} objects)")
        solved = client.submit(solve_boundary, config, *boundary_futs, pure=False)
        last = gather(client, [client.submit(boundary_summary, solved)], ["the boundary"],
                      "solving the boundary", meter, label="task")[0]
        added = None
        if config.partials:  # added up on the workers: only the total reaches the client
            added = reduce_tree(client, [*partial_futs,
                                     client.submit(partials_of, solved, pure=False)],
                            summaries_plan.add)
        gathered = None
        if config.lists:  # at most LIST_LIMIT objects (listable, above)
            list_futs.append(client.submit(lists_of, solved))
            got = gather(client, list_futs, [*range(k), "the boundary"], "listing objects",
                          None, label="parts")
            from geoeval.matching.lists import MatchLists

            gathered = {name: MatchLists.concat([g[name] for g in got]) for name in matchers}
        dataset = None
        if out is not None:
            write_futs.append(client.submit(write_boundary, out, k, solved, *boundary_futs,
                                            pure=False))
            dataset = out.finish(gather(client, write_futs, [*range(k), "the boundary"],
                                         "writing objects", meter, label="parts"))
    except BaseException:
        if out is not None:
            out.abandon()
        raise
    total = add_summaries([*summaries, last], matchers,
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
            plan: Any, crs: Any, meter: Meter) -> tuple[Config, Any]:
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

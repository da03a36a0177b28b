"""Turn a set of chosen overlap pairs into a :class:`Matching` (shared by matchers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geoeval.matching.areas import pair_union_areas
from geoeval.matching.result import ONE_TO_ONE, Instance, Matching, instance_kind
from geoeval.overlap import Overlap


def unmatched(n: int, matched: np.ndarray) -> np.ndarray:
    """Indices in ``0..n-1`` that are not in ``matched``."""
    mask = np.ones(n, dtype=bool)
    mask[np.asarray(matched, dtype=np.int64)] = False
    return np.flatnonzero(mask)


def from_edges(
    overlap: Overlap,
    edges: np.ndarray,
    matcher: str,
    *,
    edge_scores: np.ndarray | None = None,
    params: dict[str, Any] | None = None,
    solver_stats: dict[str, int] | None = None,
) -> Matching:
    """A matching whose instances are the connected groups of the chosen pairs.

    Parameters
    ----------
    overlap : Overlap
    edges : numpy.ndarray
        Indices (into ``overlap.rows``/``cols``/``values``) of the chosen pairs;
        they must form a star forest (every pair has an end of degree one).
    edge_scores : numpy.ndarray, optional
        A per-pair score; the instance score is its mean over the instance's
        pairs (used by the IoU matcher, where instances are single pairs).
    """
    edges = np.asarray(edges, dtype=np.int64)
    rows, cols, vals = overlap.rows[edges], overlap.cols[edges], overlap.values[edges]
    nr, no = overlap.n_reference, overlap.n_submission
    deg_r = np.bincount(rows, minlength=nr)
    deg_c = np.bincount(cols, minlength=no)
    hub_r, hub_c = deg_r[rows] > 1, deg_c[cols] > 1
    if np.any(hub_r & hub_c):
        raise ValueError("chosen pairs do not form a star forest")
    scores = None if edge_scores is None else np.asarray(edge_scores, dtype=float)[edges]
    single = ~hub_r & ~hub_c
    # instance of each pair: a one-to-one pair alone, a star's pairs by their centre
    key = np.where(single, nr + no + np.arange(edges.size),
                   np.where(hub_r, rows, nr + cols))
    _, inst_of = np.unique(key, return_inverse=True)
    # overlapping objects of one side share area: count it once (geoeval.matching.areas)
    inst_area = pair_union_areas(overlap, edges, inst_of, int(inst_of.max(initial=-1)) + 1)
    total = pair_union_areas(overlap, edges, np.zeros(edges.size, np.int64), 1)[0]
    # one-to-one instances: vectorised
    items: list[tuple[tuple[int, int], Instance]] = [
        ((r, c), Instance((r,), (c,), v, ONE_TO_ONE, None if scores is None else sc))
        for r, c, v, sc in zip(rows[single].tolist(), cols[single].tolist(),
                               vals[single].tolist(),
                               (scores[single] if scores is not None else vals[single]).tolist(),
                               strict=True)
    ]
    # stars: grouped by their centre (a reference for one-to-many, an output otherwise)
    multi = np.flatnonzero(~single)
    if multi.size:
        centre = np.where(hub_r[multi], rows[multi], nr + cols[multi])
        order = multi[np.argsort(centre, kind="stable")]
        cuts = np.flatnonzero(np.diff(np.sort(centre, kind="stable"))) + 1
        for g in np.split(order, cuts):
            ref = tuple(sorted(set(rows[g].tolist())))
            sub = tuple(sorted(set(cols[g].tolist())))
            score = None if scores is None else float(np.mean(scores[g]))
            inst = Instance(ref, sub, float(inst_area[inst_of[g[0]]]),
                            instance_kind(len(ref), len(sub)), score)
            items.append(((ref[0], sub[0]), inst))
    items.sort(key=lambda item: item[0])
    instances = [inst for _, inst in items]
    return Matching(
        matcher=matcher,
        instances=tuple(instances),
        missed=unmatched(nr, rows),
        false_alarms=unmatched(no, cols),
        n_reference=nr,
        n_submission=no,
        params=dict(params or {}),
        solver_stats=dict(solver_stats or {}),
        overlap_area=float(total),
    )


def from_instances(
    overlap: Overlap,
    instances: Sequence[Instance],
    matcher: str,
    *,
    params: dict[str, Any] | None = None,
    edges: np.ndarray | None = None,
) -> Matching:
    """A matching from ready-made instances (missed / false alarms derived).

    ``edges`` (indices of the pairs inside the instances) gives the matched
    area :attr:`Matching.matched_overlap`, each point once; without it the
    matched overlap is the sum of the instances' overlaps.
    """
    ref = [i for inst in instances for i in inst.reference]
    sub = [j for inst in instances for j in inst.submission]
    total = None
    if edges is not None:
        edges = np.asarray(edges, dtype=np.int64)
        total = float(pair_union_areas(overlap, edges, np.zeros(edges.size, np.int64), 1)[0])
    return Matching(
        matcher=matcher,
        instances=tuple(instances),
        missed=unmatched(overlap.n_reference, np.asarray(ref, dtype=np.int64)),
        false_alarms=unmatched(overlap.n_submission, np.asarray(sub, dtype=np.int64)),
        n_reference=overlap.n_reference,
        n_submission=overlap.n_submission,
        params=dict(params or {}),
        overlap_area=total,
    )

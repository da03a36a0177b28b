"""Turn a set of chosen overlap pairs into a :class:`Matching` (shared by matchers)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from geoeval.matching.result import Instance, Matching, instance_kind
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
    from geoeval.matching.assignment import edge_components

    edges = np.asarray(edges, dtype=np.int64)
    rows, cols, vals = overlap.rows[edges], overlap.cols[edges], overlap.values[edges]
    nr, no = overlap.n_reference, overlap.n_submission
    instances: list[Instance] = []
    if edges.size:
        _, _, comp = edge_components(rows, cols, nr, no)
        order = np.argsort(comp, kind="stable")
        cuts = np.flatnonzero(np.diff(comp[order])) + 1
        # order instances by their smallest reference index for stable output
        groups = np.split(order, cuts)
        groups.sort(key=lambda g: (int(rows[g].min()), int(cols[g].min())))
        for g in groups:
            ref = tuple(int(v) for v in np.unique(rows[g]))
            sub = tuple(int(v) for v in np.unique(cols[g]))
            score = None if edge_scores is None else float(np.mean(edge_scores[edges[g]]))
            instances.append(
                Instance(ref, sub, float(vals[g].sum()), instance_kind(len(ref), len(sub)), score)
            )
    return Matching(
        matcher=matcher,
        instances=tuple(instances),
        missed=unmatched(nr, rows),
        false_alarms=unmatched(no, cols),
        n_reference=nr,
        n_submission=no,
        params=dict(params or {}),
        solver_stats=dict(solver_stats or {}),
    )


def from_instances(
    overlap: Overlap,
    instances: Sequence[Instance],
    matcher: str,
    *,
    params: dict[str, Any] | None = None,
) -> Matching:
    """A matching from ready-made instances (missed / false alarms derived)."""
    ref = [i for inst in instances for i in inst.reference]
    sub = [j for inst in instances for j in inst.submission]
    return Matching(
        matcher=matcher,
        instances=tuple(instances),
        missed=unmatched(overlap.n_reference, np.asarray(ref, dtype=np.int64)),
        false_alarms=unmatched(overlap.n_submission, np.asarray(sub, dtype=np.int64)),
        n_reference=overlap.n_reference,
        n_submission=overlap.n_submission,
        params=dict(params or {}),
    )

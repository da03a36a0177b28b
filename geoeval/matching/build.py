"""Turn a set of chosen overlap pairs into a :class:`Matching` (shared by matchers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from geoeval.matching.areas import pair_union_areas, pair_union_total
from geoeval.matching.result import InstanceArrays, Matching, unmatched
from geoeval.overlap import Overlap


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
    n_inst = int(inst_of.max(initial=-1)) + 1
    # overlapping objects of one side share area: count it once (geoeval.matching.areas)
    inst_area = pair_union_areas(overlap, edges, inst_of, n_inst)
    total = pair_union_total(overlap, edges)
    # a one-to-one instance's overlap is its pair's C_ij as given
    inst_area[inst_of[single]] = vals[single]
    score = None
    if scores is not None:  # the mean over the instance's pairs
        score = (np.bincount(inst_of, weights=scores, minlength=n_inst)
                 / np.bincount(inst_of, minlength=n_inst))
    arrays = InstanceArrays.from_members(n_inst, inst_of, rows, inst_of, cols, inst_area,
                                         score).sorted_by_reference()
    return Matching(
        matcher=matcher,
        arrays=arrays,
        missed=unmatched(nr, rows),
        false_alarms=unmatched(no, cols),
        n_reference=nr,
        n_submission=no,
        params=dict(params or {}),
        solver_stats=dict(solver_stats or {}),
        overlap_area=total,
        ids=(overlap.reference.ids, overlap.submission.ids),
    )


def from_arrays(
    overlap: Overlap,
    arrays: InstanceArrays,
    matcher: str,
    *,
    params: dict[str, Any] | None = None,
    edges: np.ndarray | None = None,
) -> Matching:
    """A matching from instances already in CSR form (missed / false alarms derived).

    ``edges`` (indices of the pairs inside the instances) gives the matched
    area :attr:`Matching.matched_overlap`, each point once; without it the
    matched overlap is the sum of the instances' overlaps.
    """
    total = None
    if edges is not None:
        edges = np.asarray(edges, dtype=np.int64)
        total = pair_union_total(overlap, edges)
    arrays = arrays.sorted_by_reference()
    return Matching(
        matcher=matcher,
        arrays=arrays,
        missed=unmatched(overlap.n_reference, arrays.ref_idx),
        false_alarms=unmatched(overlap.n_submission, arrays.sub_idx),
        n_reference=overlap.n_reference,
        n_submission=overlap.n_submission,
        params=dict(params or {}),
        overlap_area=total,
        ids=(overlap.reference.ids, overlap.submission.ids),
    )

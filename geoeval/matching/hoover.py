"""Hoover et al. (1996) thresholded classes, as in Özdemir et al. (2010), §4.1.2.

Candidate instances at threshold ``0.5 < T ≤ 1``:

* correct detection ``(R_i, O_j)``: ``C_ij ≥ T|O_j|`` and ``C_ij ≥ T|R_i|``;
  ``s1 = C_ij/|O_j|``, ``s2 = C_ij/|R_i|``;
* over-detection ``R_i`` with all outputs ``O_j`` having ``C_ij ≥ T|O_j|``,
  when there are two or more and ``|R_i ∩ U| ≥ T|R_i|``, where
  ``U = O_1 ∪ … ∪ O_k``; ``s1 = |R_i ∩ U| / |U|``, ``s2 = |R_i ∩ U| / |R_i|``;
* under-detection, symmetrically.

For a segmentation (no two outputs overlap) ``|R_i ∩ U| = Σ C_ij`` and
``|U| = Σ |O_j|``, the sums of the papers. Outputs that overlap each other
(duplicates, repeated detections) count their shared area once, so every
ratio stays in ``[0, 1]`` (:mod:`geoeval.matching.areas`).

Each candidate scores ``(s1 + s2)/2``. An object may sit in up to three
candidates; they are accepted greedily by decreasing score (ties: correct,
over, under, then smallest ids), skipping any that shares an object with an
accepted one. Only candidates that actually conflict go through that loop.
"""

from __future__ import annotations

import numpy as np

from geoeval.matching.areas import object_union_areas, pair_union_areas
from geoeval.matching.build import from_arrays
from geoeval.matching.result import InstanceArrays, Matching
from geoeval.overlap import Overlap
from geoeval.thresholds import at_least

CORRECT, OVER, UNDER = 0, 1, 2


def match_hoover(overlap: Overlap, *, threshold: float = 0.6) -> Matching:
    """Hoover matching at threshold ``T``.

    Parameters
    ----------
    overlap : Overlap
    threshold : float
        ``0.5 < T ≤ 1``; 0.6 as in Özdemir et al. (2010).

    Returns
    -------
    Matching
        Instances with ``score = (s1 + s2)/2``; eq. 2 is their mean.
    """
    from geoeval.matching.registry import HOOVER_THRESHOLD

    t = float(HOOVER_THRESHOLD.rule.check("threshold", threshold))  # 0.5 < T <= 1
    rows, cols, c = overlap.rows, overlap.cols, overlap.values
    ar, ao = overlap.ref_area, overlap.sub_area
    nr, no = overlap.n_reference, overlap.n_submission
    unit = overlap.pixel_area  # integer pixel counts on one grid (geoeval.thresholds)
    in_sub = at_least(c, ao[cols], t, unit=unit)  # C_ij >= T |O_j|
    in_ref = at_least(c, ar[rows], t, unit=unit)  # C_ij >= T |R_i|
    # scores (and so the greedy order) from pixel counts on a grid: alike at any pixel size
    du = overlap.in_decision_units
    cd, ard, aod = overlap.weights, du(ar), du(ao)

    cand_score: list[np.ndarray] = []
    cand_overlap: list[np.ndarray] = []
    cand_kind: list[np.ndarray] = []
    member_cand: list[np.ndarray] = []  # (candidate, side, index) memberships
    member_side: list[np.ndarray] = []
    member_obj: list[np.ndarray] = []
    n_cand = 0

    # correct detections: one candidate per qualifying pair
    corr = np.flatnonzero(in_sub & in_ref)
    k = corr.size
    cid = np.arange(n_cand, n_cand + k)
    cand_score.append((cd[corr] / aod[cols[corr]] + cd[corr] / ard[rows[corr]]) / 2)
    cand_kind.append(np.full(k, CORRECT))
    cand_overlap.append(c[corr])
    edge_cand: list[np.ndarray] = [cid]  # the pairs inside each candidate
    edge_ids: list[np.ndarray] = [corr]
    member_cand += [cid, cid]
    member_side += [np.zeros(k, np.int64), np.ones(k, np.int64)]
    member_obj += [rows[corr], cols[corr]]
    n_cand += k

    # over- and under-detections: one candidate per centre object
    for kind, centre, leaf, qualifies, a_centre, leaf_side, n_centre, side_centre in (
        (OVER, rows, cols, in_sub, ar, overlap.submission, nr, 0),
        (UNDER, cols, rows, in_ref, ao, overlap.reference, no, 1),
    ):
        e = np.flatnonzero(qualifies)
        cnt = np.bincount(centre[e], minlength=n_centre)
        e = e[cnt[centre[e]] >= 2]  # a centre needs two or more leaves
        # |centre ∩ ∪ leaves| and |∪ leaves|: Σ C and Σ |leaf| unless leaves overlap
        # each other, whose shared area then counts once (geoeval.matching.areas)
        sum_c = pair_union_areas(overlap, e, centre[e], n_centre)
        sum_leaf = object_union_areas(leaf_side, leaf[e], centre[e], n_centre)
        ok = (cnt >= 2) & at_least(sum_c, a_centre, t, unit=unit)
        centres = np.flatnonzero(ok)
        k = centres.size
        cid_of = np.full(n_centre, -1, dtype=np.int64)
        cid_of[centres] = np.arange(n_cand, n_cand + k)
        sc = du(sum_c[centres])
        s1 = sc / du(sum_leaf[centres])  # |centre ∩ ∪ leaf| / |∪ leaf|
        s2 = sc / du(a_centre[centres])  # |centre ∩ ∪ leaf| / |centre|
        # for OVER, s1 is over outputs and s2 over the reference: (s1 + s2)/2 is symmetric
        cand_score.append((s1 + s2) / 2)
        cand_kind.append(np.full(k, kind))
        cand_overlap.append(sum_c[centres])
        leaf_edges = e[ok[centre[e]]]
        edge_cand.append(cid_of[centre[leaf_edges]])
        edge_ids.append(leaf_edges)
        member_cand += [cid_of[centres], cid_of[centre[leaf_edges]]]
        member_side += [np.full(k, side_centre), np.full(leaf_edges.size, 1 - side_centre)]
        member_obj += [centres, leaf[leaf_edges]]
        n_cand += k

    score = np.concatenate(cand_score)
    kinds = np.concatenate(cand_kind)
    overlaps = np.concatenate(cand_overlap)
    m_cand = np.concatenate(member_cand).astype(np.int64)
    m_side = np.concatenate(member_side).astype(np.int64)
    m_obj = np.concatenate(member_obj).astype(np.int64)
    accepted = _resolve(score, kinds, m_cand, m_side, m_obj, overlap)

    # the accepted candidates become the instances, straight from their memberships
    pos = np.full(n_cand, -1, np.int64)
    pos[accepted] = np.arange(accepted.size)
    keep = pos[m_cand] >= 0
    inst, side, obj = pos[m_cand[keep]], m_side[keep], m_obj[keep]
    arrays = InstanceArrays.from_members(
        accepted.size, inst[side == 0], obj[side == 0], inst[side == 1], obj[side == 1],
        overlaps[accepted], score[accepted])
    e_cand, e_ids = np.concatenate(edge_cand), np.concatenate(edge_ids)
    return from_arrays(overlap, arrays, "hoover", params={"threshold": t},
                       edges=e_ids[np.isin(e_cand, accepted)])


def _resolve(
    score: np.ndarray,
    kinds: np.ndarray,
    m_cand: np.ndarray,
    m_side: np.ndarray,
    m_obj: np.ndarray,
    overlap: Overlap,
) -> np.ndarray:
    """Greedy conflict resolution; returns accepted candidate indices (sorted)."""
    n_cand = score.size
    if n_cand == 0:
        return np.zeros(0, dtype=np.int64)
    key = m_side * max(overlap.n_reference, 1) + m_obj  # one key per object
    uniq, inv, cnt = np.unique(key, return_inverse=True, return_counts=True)
    shared = cnt[inv] > 1
    conflicted = np.zeros(n_cand, dtype=bool)
    conflicted[m_cand[shared]] = True
    accepted = [np.flatnonzero(~conflicted)]
    hard = np.flatnonzero(conflicted)
    if hard.size:
        ref_rank = _rank(overlap.reference.ids)
        sub_rank = _rank(overlap.submission.ids)
        big = np.iinfo(np.int64).max
        min_ref = np.full(n_cand, big, dtype=np.int64)
        min_sub = np.full(n_cand, big, dtype=np.int64)
        r = m_side == 0
        np.minimum.at(min_ref, m_cand[r], ref_rank[m_obj[r]])
        np.minimum.at(min_sub, m_cand[~r], sub_rank[m_obj[~r]])
        order = hard[np.lexsort((min_sub[hard], min_ref[hard], kinds[hard], -score[hard]))]
        # members of the conflicted candidates, grouped by candidate (CSR)
        in_hard = conflicted[m_cand]
        h_cand, h_obj = m_cand[in_hard], inv[in_hard]
        grouped = np.argsort(h_cand, kind="stable")
        h_cand, h_obj = h_cand[grouped], h_obj[grouped]
        first = np.searchsorted(h_cand, order)
        last = np.searchsorted(h_cand, order, side="right")
        taken = np.zeros(uniq.size, dtype=bool)
        chosen = []
        # the greedy pass itself is sequential: it runs over conflicted candidates only
        for cnd, a, b in zip(order.tolist(), first.tolist(), last.tolist(), strict=True):
            objs = h_obj[a:b]
            if not taken[objs].any():
                taken[objs] = True
                chosen.append(cnd)
        accepted.append(np.asarray(chosen, dtype=np.int64))
    return np.sort(np.concatenate(accepted))


def _rank(ids: np.ndarray) -> np.ndarray:
    """Rank of each id in sorted order (so ties break on the user's ids)."""
    order = np.argsort(ids, kind="stable")
    rank = np.empty(ids.size, dtype=np.int64)
    rank[order] = np.arange(ids.size)
    return rank

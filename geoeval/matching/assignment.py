"""Maximum-weight one-to-one matching on a sparse bipartite graph.

The one place where assignment problems are solved: BGM, the IoU matcher and the
box challenges (ROBIN, Neovision2) all call :func:`max_weight_matching`. The
graph is given as edge lists; it is split into connected components and only
components that are not already a matching are handed to
:func:`scipy.optimize.linear_sum_assignment` (on a dense block of that
component only, never of the whole problem).
"""

from __future__ import annotations

import numpy as np

from geoeval.overlap import component_kinds


def max_weight_matching(
    rows: np.ndarray,
    cols: np.ndarray,
    weights: np.ndarray,
    n_rows: int,
    n_cols: int,
    *,
    cardinality_first: bool = False,
) -> np.ndarray:
    """Maximum-weight one-to-one matching among the given edges.

    Parameters
    ----------
    rows, cols : array of int
        Edge end points (row index in ``0..n_rows-1``, column index in
        ``0..n_cols-1``). Each (row, col) pair at most once.
    weights : array of float
        Edge weights, all ``> 0``.
    n_rows, n_cols : int
    cardinality_first : bool
        If true, maximise the number of matched pairs first and the total weight
        among maximum-cardinality matchings second (the IoU matcher's rule).

    Returns
    -------
    numpy.ndarray
        Indices into the edge arrays of the chosen edges, sorted.

    Notes
    -----
    Hungarian algorithm (Munkres 1957) via SciPy, component by component.
    Components in which every node has degree one are taken whole, and stars
    (one object with several partners) give their heaviest pair, without a
    solver. With ``cardinality_first`` every edge weight becomes ``K + w`` with
    ``K`` larger than the total weight any matching of the component can reach,
    so one more pair always beats any gain in weight.
    """
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    weights = np.asarray(weights, dtype=float)
    m = rows.size
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    if np.any(weights <= 0):
        raise ValueError("edge weights must be positive")
    # A single pair is taken as it is; a star (no pair between two objects that are
    # in several pairs) gives its heaviest pair; the rest go to the Hungarian solver.
    edge_comp, hard_comp, cyclic = component_kinds(rows, cols, n_rows, n_cols)
    chosen = [np.flatnonzero(~hard_comp[edge_comp])]
    star_edges = np.flatnonzero(hard_comp[edge_comp] & ~cyclic[edge_comp])
    if star_edges.size:
        # per component, the heaviest edge (lowest index on ties)
        order = star_edges[np.lexsort((star_edges, -weights[star_edges],
                                       edge_comp[star_edges]))]
        first = np.r_[True, edge_comp[order][1:] != edge_comp[order][:-1]]
        chosen.append(order[first])
    hard_edges = np.flatnonzero(cyclic[edge_comp])
    if hard_edges.size:
        order = hard_edges[np.argsort(edge_comp[hard_edges], kind="stable")]
        bounds = np.flatnonzero(np.diff(edge_comp[order])) + 1
        for group in np.split(order, bounds):
            chosen.append(group[_solve_block(rows[group], cols[group], weights[group],
                                             cardinality_first)])
    return np.sort(np.concatenate(chosen))


def _solve_block(
    rows: np.ndarray, cols: np.ndarray, weights: np.ndarray, cardinality_first: bool
) -> np.ndarray:
    """Hungarian on one component; returns positions (into the block's edges) chosen."""
    from scipy.optimize import linear_sum_assignment  # lazy: ~0.4 s to import

    ur, ri = np.unique(rows, return_inverse=True)
    uc, ci = np.unique(cols, return_inverse=True)
    w = weights
    if cardinality_first:
        w = weights + (weights.sum() + 1.0)
    block = np.zeros((ur.size, uc.size))
    block[ri, ci] = w
    edge_at = np.full((ur.size, uc.size), -1, dtype=np.int64)
    edge_at[ri, ci] = np.arange(rows.size)
    r, c = linear_sum_assignment(block, maximize=True)
    picked = edge_at[r, c]
    return picked[picked >= 0]

"""Maximum-weight one-to-one matching on a sparse bipartite graph.

The one place where assignment problems are solved: BGM, the IoU matcher and the
box challenges (ROBIN, Neovision2) all call :func:`max_weight_matching`. The
graph is given as edge lists; it is split into connected components and only
components that are not already a matching are handed to
:func:`scipy.optimize.linear_sum_assignment` (on a dense block of that
component only, never of the whole problem).
"""

from __future__ import annotations

import itertools

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
        picked, rest = _solve_small(order, edge_comp[order], rows[order], cols[order],
                                    weights[order], cardinality_first)
        chosen.append(picked)
        bounds = np.flatnonzero(np.diff(edge_comp[rest])) + 1
        for group in np.split(rest, bounds) if rest.size else ():
            chosen.append(group[_solve_block(rows[group], cols[group], weights[group],
                                             cardinality_first)])
    return np.sort(np.concatenate(chosen))


#: Components of at most this many objects a side are solved together, by enumeration.
SMALL = 4
_PERMS_BY_SIZE = {k: np.array(list(itertools.permutations(range(k))), dtype=np.int64)
                  for k in range(1, SMALL + 1)}


def _solve_small(
    edges: np.ndarray, comp: np.ndarray, rows: np.ndarray, cols: np.ndarray,
    weights: np.ndarray, cardinality_first: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Every component of at most :data:`SMALL` objects a side solved at once.

    Each component becomes a ``k × k`` block, ``k`` its larger side (zeros where
    there is no pair), and all ``k!`` assignments of every block are scored with
    numpy, one batch per ``k``;
    the best one's pairs are chosen, exactly as a solver would (brute force on
    the block). Between matchings of equal weight (pixel counts tie often) the
    one with more pairs wins, then the first in enumeration order. ``edges``
    are sorted by ``comp``.

    Returns
    -------
    chosen : numpy.ndarray
        Edges chosen in the small components.
    rest : numpy.ndarray
        Edges of the components left to :func:`_solve_block`, still sorted.
    """
    start = np.flatnonzero(np.r_[True, comp[1:] != comp[:-1]])
    n_comp = start.size
    size = np.diff(np.r_[start, comp.size])
    local = np.repeat(np.arange(n_comp), size)
    ri = _local_index(local, rows, start)
    ci = _local_index(local, cols, start)
    n_r = np.zeros(n_comp, np.int64)
    n_c = np.zeros(n_comp, np.int64)
    np.maximum.at(n_r, local, ri + 1)
    np.maximum.at(n_c, local, ci + 1)
    small = (n_r <= SMALL) & (n_c <= SMALL)
    on = small[local]
    if not on.any():
        return np.zeros(0, np.int64), edges
    w = weights
    if cardinality_first:  # as _solve_block: K + w, K above any matching's weight
        w = weights + (np.bincount(local, weights=weights, minlength=n_comp) + 1.0)[local]
    # by size class (the larger side, 1 to SMALL): a k x k block and the k! assignments
    side = np.maximum(n_r, n_c)
    chosen = []
    for k in range(1, SMALL + 1):
        cls = small & (side == k)
        if not cls.any():
            continue
        on_k = cls[local]
        slot = np.cumsum(cls) - 1  # position of each component of the class in the batch
        at = slot[local[on_k]], ri[on_k], ci[on_k]
        block = np.zeros((int(cls.sum()), k, k))
        edge_at = np.full(block.shape, -1, dtype=np.int64)
        block[at] = w[on_k]
        edge_at[at] = edges[on_k]
        perms = _PERMS_BY_SIZE[k]
        r = np.arange(k)
        cells = block[:, r[None, :], perms]  # (components, assignments, k)
        score = cells.sum(axis=2)
        # ties (equal weight, different pairs): more pairs first, then the first assignment
        pairs = (cells > 0).sum(axis=2)
        best = score == score.max(axis=1, keepdims=True)
        pick = np.argmax(np.where(best, pairs, -1), axis=1)
        got = edge_at[np.arange(block.shape[0])[:, None], r[None, :], perms[pick]]
        chosen.append(got[got >= 0])
    return np.concatenate(chosen), edges[~on]


def _local_index(local: np.ndarray, ids: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Rank of each edge's object among the distinct objects of its component
    (``np.unique`` order, as :func:`_solve_block` numbers them)."""
    key = local * (int(ids.max()) + 1) + ids
    _, inv = np.unique(key, return_inverse=True)
    return inv - np.minimum.reduceat(inv, start)[local]


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

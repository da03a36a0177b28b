"""Multi-object maximum overlap matching (MOM), Özdemir et al. (2010), §4.1.3.

Choose pairs ``z_ij ∈ {0, 1}`` maximising ``Σ C_ij z_ij`` (eq. 3) such that no
chosen pair joins a reference with two or more chosen partners to an output
with two or more (eq. 4), pairs overlapping (eq. 5). The chosen pairs form a
*star forest*: one-to-one, one-to-many (over-detection) and many-to-one
(under-detection) instances. Maximum-weight star forest is NP-hard in general
but overlap components are small, so each component is solved exactly:

1. a component that is already a star forest is taken whole (vectorised);
2. a component without a cycle by a tree dynamic programme;
3. a component with few possible star centres by enumerating the centres
   (vectorised over all subsets; every other object joins its heaviest centre
   neighbour);
4. the rest by an integer programme in the centre (facility-location)
   formulation, solved by HiGHS through PuLP (CBC if HiGHS is missing).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

from geoeval import parallel
from geoeval.arrays import unique
from geoeval.errors import InputError, SolverError
from geoeval.matching.build import from_edges
from geoeval.matching.result import Matching
from geoeval.overlap import Overlap, component_kinds, edge_components
from geoeval.thresholds import at_least

#: Components with at most this many possible centres (degree ≥ 2) are enumerated.
ENUMERATION_LIMIT = 14
#: Subsets of centres evaluated at once by the enumeration (bounds its memory).
_CHUNK = 4096
METHODS = ("auto", "tree", "enumerate", "ilp")


def match_mom(
    overlap: Overlap,
    *,
    min_overlap: float | None = None,
    method: str = "auto",
    enumeration_limit: int = ENUMERATION_LIMIT,
) -> Matching:
    """Maximum-weight star forest on the overlap graph.

    Parameters
    ----------
    overlap : Overlap
    min_overlap : float, optional
        Keep only pairs with ``C_ij ≥ min_overlap · min(|R_i|, |O_j|)``
        (replaces eq. 5 as the paper allows); ``0 ≤ min_overlap ≤ 1``.
    method : {'auto', 'tree', 'enumerate', 'ilp'}
        Exact method for components that are not star forests. ``auto`` picks
        the tree DP for acyclic components, enumeration when at most
        ``enumeration_limit`` objects can be centres, else the ILP. The others
        force one method (``tree`` falls back to ``auto`` on a cycle); all are
        exact, the switch is for cross-checking.
    enumeration_limit : int

    Returns
    -------
    Matching
        ``solver_stats`` counts components by how they were solved:
        ``taken_whole``, ``tree_dp``, ``enumerated``, ``ilp``.

    Notes
    -----
    Centre (facility-location) formulation: ``y_v`` = v is a centre; per pair
    ``e = (i, j)``: ``p_e ≤ y_i``, ``q_e ≤ y_j``; per object v,
    ``Σ_{e: v leaf} + y_v ≤ 1``; maximise ``Σ C_e (p_e + q_e)``.

    Objects that overlap others of their own side keep separable pair weights
    ``C_ij`` (so a duplicated detection joins an over-detection); the reported
    instance overlaps and matched area count a shared area once
    (:mod:`geoeval.matching.areas`).
    """
    if method not in METHODS:
        raise InputError(f"unknown MOM method {method!r} (choose from {', '.join(METHODS)})")
    params: dict[str, Any] = {"min_overlap": min_overlap}
    keep = None
    if min_overlap is not None:
        if not 0 <= min_overlap <= 1:
            raise InputError(f"minimum overlap must be in [0, 1], got {min_overlap}")
        smaller = np.minimum(overlap.ref_area[overlap.rows], overlap.sub_area[overlap.cols])
        keep = at_least(overlap.values, smaller, min_overlap, unit=overlap.pixel_area)
    edge_index = np.arange(overlap.n_pairs) if keep is None else np.flatnonzero(keep)
    rows, cols = overlap.rows[edge_index], overlap.cols[edge_index]
    w = overlap.weights[edge_index]  # pixel counts on a grid: ties resolved alike at any size
    nr, no = overlap.n_reference, overlap.n_submission
    stats = {"taken_whole": 0, "tree_dp": 0, "enumerated": 0, "ilp": 0}
    if rows.size == 0:
        return from_edges(overlap, edge_index, "mom", params=params, solver_stats=stats)

    comp, _, hard = component_kinds(rows, cols, nr, no)  # hard: not a star forest
    easy_edges = ~hard[comp]
    stats["taken_whole"] = int(np.count_nonzero(np.bincount(comp[easy_edges])))
    chosen = [edge_index[easy_edges]]
    hard_edges = np.flatnonzero(~easy_edges)
    if hard_edges.size:
        order = hard_edges[np.argsort(comp[hard_edges], kind="stable")]
        groups = np.split(order, np.flatnonzero(np.diff(comp[order])) + 1)
        for group in parallel.counted(groups, len(groups), "components solved"):
            picked, how = solve_component(rows[group], cols[group], w[group], method=method,
                                          enumeration_limit=enumeration_limit, connected=True)
            stats[how] += 1
            chosen.append(edge_index[group[picked]])
    return from_edges(overlap, np.sort(np.concatenate(chosen)), "mom", params=params,
                      solver_stats=stats)


def solve_component(
    rows: np.ndarray,
    cols: np.ndarray,
    weights: np.ndarray,
    *,
    method: str = "auto",
    enumeration_limit: int = ENUMERATION_LIMIT,
    connected: bool = False,
) -> tuple[np.ndarray, str]:
    """Maximum-weight star forest of one connected bipartite component.

    Parameters
    ----------
    rows, cols : array of int
        Pair end points (any integer labels; rows and columns are two sides).
    weights : array of float
        Positive pair weights.
    connected : bool
        The caller guarantees one connected component (skips a check).

    Returns
    -------
    chosen : numpy.ndarray
        Positions of the chosen pairs.
    how : str
        ``tree_dp``, ``enumerated`` or ``ilp``.
    """
    ur, ri = np.unique(rows, return_inverse=True)
    uc, ci = np.unique(cols, return_inverse=True)
    n = ur.size + uc.size
    u = ri.astype(np.int64)
    v = (ci + ur.size).astype(np.int64)
    w = np.asarray(weights, dtype=float)
    n_parts = 1 if connected else edge_components(u, v - ur.size, ur.size, uc.size)[0]
    acyclic = w.size == n - n_parts  # a forest (one tree when called per component)
    deg = np.bincount(np.concatenate([u, v]), minlength=n)
    n_centres = int(np.count_nonzero(deg >= 2))
    if acyclic and method in ("auto", "tree"):
        return _tree_dp(u, v, w, n), "tree_dp"
    if method == "enumerate" or method != "ilp" and n_centres <= enumeration_limit:
        return _enumerate_centres(u, v, w, n, deg), "enumerated"
    return _ilp(u, v, w, n), "ilp"


def _enumerate_centres(
    u: np.ndarray, v: np.ndarray, w: np.ndarray, n: int, deg: np.ndarray
) -> np.ndarray:
    """Try every set of centres among objects of degree ≥ 2 (vectorised).

    A degree-one object never needs to be a centre: its neighbour as centre
    gains the same pair and possibly more.
    """
    cand = np.flatnonzero(deg >= 2)
    k = cand.size
    lone = (deg[u] == 1) & (deg[v] == 1)  # an isolated pair: either end is its centre
    # each pair used in two directions: (centre, leaf) = (u, v) and (v, u)
    centre = np.concatenate([u, v])
    leaf = np.concatenate([v, u])
    ww = np.concatenate([w, w])
    order = np.argsort(leaf, kind="stable")
    centre, leaf, ww = centre[order], leaf[order], ww[order]
    starts = np.flatnonzero(np.r_[True, leaf[1:] != leaf[:-1]])
    best_total, best_subset = -1.0, 0
    for first in range(0, 1 << k, _CHUNK):
        subsets = np.arange(first, min(first + _CHUNK, 1 << k), dtype=np.int64)
        is_centre = np.zeros((subsets.size, n), dtype=bool)
        is_centre[:, cand] = (subsets[:, None] >> np.arange(k)) & 1 == 1
        is_centre[:, u[lone]] = True
        gain = np.where(is_centre[:, centre] & ~is_centre[:, leaf], ww[None, :], 0.0)
        total = np.maximum.reduceat(gain, starts, axis=1).sum(axis=1)
        s = int(np.argmax(total))
        if total[s] > best_total:
            best_total, best_subset = float(total[s]), int(subsets[s])
    # reconstruct: each non-centre leaf takes its heaviest centre neighbour
    is_centre = np.zeros(n, dtype=bool)
    is_centre[cand] = (best_subset >> np.arange(k)) & 1 == 1
    is_centre[u[lone]] = True
    g = np.where(is_centre[centre] & ~is_centre[leaf], ww, 0.0)
    ends = np.r_[starts[1:], g.size]
    arg = np.array([a + int(np.argmax(g[a:b])) for a, b in zip(starts, ends, strict=True)])
    pos = order[arg[np.maximum.reduceat(g, starts) > 0]]
    m = w.size
    return unique(np.where(pos >= m, pos - m, pos))


def _tree_dp(u: np.ndarray, v: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """Exact maximum-weight star forest of a tree by dynamic programming.

    States of object x (rooted tree): ``C`` x is a centre (its children may be
    its leaves); ``P`` x will be a leaf of its parent (children do not use x);
    ``L`` x is a leaf of one of its children, which is then a centre. Being
    unmatched is a centre without leaves. ``free(c) = max(C, L)`` is a child
    that does not use its parent edge.
    """
    adj: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for e, (a, b) in enumerate(zip(u.tolist(), v.tolist(), strict=True)):
        adj[a].append((b, e))
        adj[b].append((a, e))
    parent = [-1] * n
    parent_edge = [-1] * n
    order: list[int] = []
    seen = [False] * n
    for root in range(n):  # one BFS per tree of the forest
        if seen[root]:
            continue
        seen[root] = True
        head = len(order)
        order.append(root)
        while head < len(order):  # BFS: order grows while we walk it
            x = order[head]
            head += 1
            for y, e in adj[x]:
                if not seen[y]:
                    seen[y] = True
                    parent[y], parent_edge[y] = x, e
                    order.append(y)
    wl = w.tolist()
    C = [0.0] * n
    P = [0.0] * n
    L = [0.0] * n
    best_child = [-1] * n
    for x in reversed(order):
        children = [y for y, _ in adj[x] if parent[y] == x]
        free = [max(C[y], L[y]) for y in children]
        base = sum(free)
        P[x] = base
        C[x] = sum(max(f, P[y] + wl[parent_edge[y]]) for y, f in zip(children, free, strict=True))
        L[x] = float("-inf")
        for y, f in zip(children, free, strict=True):
            cand = base - f + C[y] + wl[parent_edge[y]]
            if cand > L[x]:
                L[x], best_child[x] = cand, y
    chosen: list[int] = []
    state = [""] * n
    for x in order:
        if parent[x] < 0:  # a root
            state[x] = "C" if C[x] >= L[x] else "L"
        children = [y for y, _ in adj[x] if parent[y] == x]
        for y in children:
            e = parent_edge[y]
            if state[x] == "C":
                if P[y] + wl[e] > max(C[y], L[y]):
                    state[y] = "P"
                    chosen.append(e)
                else:
                    state[y] = "C" if C[y] >= L[y] else "L"
            elif state[x] == "L" and y == best_child[x]:
                state[y] = "C"
                chosen.append(e)
            else:  # x is P, or L through another child: y must not use the edge to x
                state[y] = "C" if C[y] >= L[y] else "L"
    return unique(np.asarray(chosen, dtype=np.int64))


def _ilp(u: np.ndarray, v: np.ndarray, w: np.ndarray, n: int) -> np.ndarray:
    """The centre (facility-location) ILP of a component, solved by HiGHS via PuLP."""
    import pulp

    m = w.size
    prob = pulp.LpProblem("mom_component", pulp.LpMaximize)
    def var(name: str) -> Any:
        if hasattr(prob, "add_variable"):  # PuLP >= 3.3
            return prob.add_variable(name, 0, 1, cat="Binary")
        return pulp.LpVariable(name, 0, 1, cat="Binary")

    y = [var(f"y{k}") for k in range(n)]
    p = [var(f"p{e}") for e in range(m)]  # u centre, v leaf
    q = [var(f"q{e}") for e in range(m)]  # v centre, u leaf
    prob += pulp.lpSum(float(w[e]) * (p[e] + q[e]) for e in range(m))
    leaf_terms: list[list[Any]] = [[] for _ in range(n)]
    for e in range(m):
        a, b = int(u[e]), int(v[e])
        prob += p[e] <= y[a]
        prob += q[e] <= y[b]
        leaf_terms[b].append(p[e])
        leaf_terms[a].append(q[e])
    for k in range(n):
        if leaf_terms[k]:
            prob += pulp.lpSum(leaf_terms[k]) + y[k] <= 1
    solver = _solver()
    status = prob.solve(solver)
    if pulp.LpStatus[status] != "Optimal":
        raise SolverError(f"MOM component ILP ended with status {pulp.LpStatus[status]}")
    val = np.array([(p[e].value() or 0) + (q[e].value() or 0) for e in range(m)])
    return np.flatnonzero(val > 0.5)


def _solver():
    import pulp

    available = pulp.listSolvers(onlyAvailable=True)
    if "HiGHS" in available:
        return _quiet_highs()(msg=False, gapRel=0.0)
    if "PULP_CBC_CMD" in available:
        return pulp.PULP_CBC_CMD(msg=False, gapRel=0.0)
    raise SolverError("no MILP solver available: install highspy (HiGHS) or PuLP's CBC")


def _quiet_highs() -> type:
    """PuLP's HiGHS interface without the banner on standard output.

    ``highspy.Highs()`` (HiGHS >= 1.16) prints its "Running HiGHS …" banner while
    it is constructed, before PuLP can set ``output_flag``; that line would land
    in the middle of a user's output (a table, or JSON written to stdout). Only
    the construction runs with file descriptor 1 sent to the null device.
    """
    import pulp

    class QuietHiGHS(pulp.HiGHS):
        def createAndConfigureSolver(self, lp: Any) -> None:
            with _stdout_to_devnull():
                super().createAndConfigureSolver(lp)

    return QuietHiGHS


@contextlib.contextmanager
def _stdout_to_devnull() -> Iterator[None]:
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 1)
            try:
                yield
            finally:
                os.dup2(saved, 1)
    finally:
        os.close(saved)

"""Exact earth mover's distance between two weighted point sets (Euclidean cost).

The Mallows score (:mod:`geoeval.measures.mallows`) moves the positive part of
``μ − ν`` onto its negative part. Three exact solvers, all POT's network
simplex (Bonneel et al. 2011):

``dense``
    ``ot.emd2`` on the full ``n × m`` cost matrix, for small problems.
``sparse``
    Large problems: the optimal plan of a Euclidean transport between two
    point clouds uses few of its ``n·m`` pairs, and mostly short ones. The
    problem is solved on a sparse set of candidate pairs and the solution is
    *certified* optimal for the full problem by linear-programming duality,
    in the spirit of Schmitzer's shielding method (Schmitzer 2016, "A sparse
    multiscale algorithm for dense optimal transport", J. Math. Imaging Vis.):

    1. candidates: solve the problem pooled on cells of twice the points'
       spacing (recursively, with this same function), take its dual
       potentials as estimates for every point and keep, for each point of
       either side, the :data:`CANDIDATES` partners of smallest reduced cost
       ``c_ij − u_i − v_j``; add the north-west-corner plan's pairs so that the
       sparse problem is feasible;
    2. solve the sparse problem exactly (``ot.emd`` with a ``scipy.sparse``
       cost matrix, POT ≥ 0.9.6), which also gives dual potentials ``u, v``;
    3. check every one of the ``n·m`` pairs (in chunks, never a dense matrix in
       memory): when no reduced cost is below ``−tol`` the sparse optimum is the
       full optimum (the duals are feasible for the full problem and
       complementary slackness holds on the sparse support); otherwise add the
       most violated pairs of each point and solve again.

    ``tol`` is ``1e-11`` times the problem's diameter, so a certified cost is
    within ``1e-11 · diameter`` (unit mass) of the optimum: floating-point
    rounding, not an approximation. A problem not certified after
    :data:`MAX_ROUNDS` rounds falls back to ``dense`` or ``lazy``.
``lazy``
    ``ot.emd2_lazy`` (costs computed on the fly, O(n + m) memory), the fallback
    for problems too large for a dense matrix.
"""

from __future__ import annotations

import warnings

import numpy as np

from geoeval.arrays import unique
from geoeval.errors import SolverError

#: Largest dense cost matrix (entries; 128 MB of float64, plus as much for the plan POT
#: returns) before the lazy solver, which needs O(n) memory but runs about 2x slower.
DENSE_LIMIT = 16_000_000
#: Problems with more than this many pairs ``n·m`` are solved sparse and certified.
SPARSE_FROM = 250_000
#: Candidate partners per point (initial set and per round of additions).
CANDIDATES = 48
#: Sparse rounds before falling back to the dense or lazy solver.
MAX_ROUNDS = 12
#: Certification tolerance on reduced costs, relative to the problem's diameter.
REL_TOL = 1e-11
# pairs per chunk of the reduced-cost check (16 MB of float64)
_CHUNK = 2_000_000


def transport(
    xs: np.ndarray,
    a: np.ndarray,
    xt: np.ndarray,
    b: np.ndarray,
    dense_limit: int = DENSE_LIMIT,
    itermax: int | None = None,
    sparse_from: int = SPARSE_FROM,
) -> tuple[float, str]:
    """Exact EMD between masses ``a`` at ``xs`` and ``b`` at ``xt`` (Euclidean cost).

    ``a`` and ``b`` have equal sums (up to rounding). ``dense`` while
    ``len(a)·len(b) ≤ sparse_from``, else ``sparse`` (certified, see the module
    notes), else ``dense`` up to ``dense_limit`` pairs or ``lazy`` when the sparse
    solve is not certified in :data:`MAX_ROUNDS` rounds. ``itermax`` is POT's
    ``numItermax`` (default: ample for the problem size).

    Returns
    -------
    cost : float
        The EMD, in the units of the coordinates times the mass of ``a``.
    solver : str
        ``dense``, ``sparse``, ``lazy`` or ``none`` (nothing to move).

    Raises
    ------
    SolverError
        The network simplex stopped before optimality.

    Examples
    --------
    >>> xs = np.array([[0.0, 0.0], [0.0, 1.0]]); xt = np.array([[3.0, 0.0], [3.0, 1.0]])
    >>> transport(xs, np.array([1.0, 1.0]), xt, np.array([1.0, 1.0]))
    (6.0, 'dense')
    """
    if a.size == 0 or b.size == 0:
        return 0.0, "none"
    total = float(a.sum())
    a = a / total  # unit mass: keeps the simplex's tolerances meaningful
    b = b / float(b.sum())
    if itermax is None:
        # optimality took 5-20 pivots per node on building-like instances: a wide margin;
        # a capped run is an error below, never a silently wrong value
        itermax = max(10_000_000, 2_000 * (a.size + b.size))
    pairs = a.size * b.size
    if pairs > sparse_from:
        solved = _sparse(xs, a, xt, b, itermax, sparse_from)
        if solved is not None:
            return solved[0] * total, "sparse"
    if pairs <= dense_limit:
        return _dense(xs, a, xt, b, itermax)[0] * total, "dense"
    return _lazy(xs, a, xt, b, itermax) * total, "lazy"


def _check(log: dict, n: int, m: int) -> None:
    if int(log["result_code"]) != 1:
        raise SolverError(
            f"POT network simplex on a {n} x {m} problem did not reach optimality "
            f"(result code {log['result_code']}: {log.get('warning')})"
        )


def _dense(xs: np.ndarray, a: np.ndarray, xt: np.ndarray, b: np.ndarray,
           itermax: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Cost and dual potentials of the dense problem (``ot.emd``)."""
    import ot
    from scipy.spatial.distance import cdist

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        _, log = ot.emd(a, b, cdist(xs, xt), numItermax=itermax, log=True)
    _check(log, a.size, b.size)
    return float(log["cost"]), log["u"], log["v"]


def _lazy(xs: np.ndarray, a: np.ndarray, xt: np.ndarray, b: np.ndarray, itermax: int) -> float:
    import ot

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        cost, log = ot.emd2_lazy(xs, xt, a, b, metric="euclidean", numItermax=itermax,
                                 log=True, return_matrix=False)
    _check(log, a.size, b.size)
    return float(cost)


def _solve(xs: np.ndarray, a: np.ndarray, xt: np.ndarray, b: np.ndarray, itermax: int,
           sparse_from: int) -> tuple[float, np.ndarray, np.ndarray]:
    """Cost and dual potentials: sparse above ``sparse_from`` pairs, else dense."""
    if a.size * b.size > sparse_from:
        solved = _sparse(xs, a, xt, b, itermax, sparse_from)
        if solved is not None:
            return solved
    return _dense(xs, a, xt, b, itermax)


def _sparse(xs: np.ndarray, a: np.ndarray, xt: np.ndarray, b: np.ndarray, itermax: int,
            sparse_from: int) -> tuple[float, np.ndarray, np.ndarray] | None:
    """The certified sparse solve (module notes); ``None`` when not certified in time."""
    import ot
    from scipy.sparse import coo_matrix

    n, m = a.size, b.size
    both = np.concatenate([xs, xt])
    diameter = float(np.hypot(*(both.max(axis=0) - both.min(axis=0))))
    tol = REL_TOL * max(diameter, 1e-300)
    u, v = _coarse_duals(xs, a, xt, b, itermax, sparse_from)
    rows = _best_pairs(xs, xt, u, v, CANDIDATES)
    cols = _best_pairs(xt, xs, v, u, CANDIDATES)
    keys = np.concatenate([rows, (cols % n) * m + cols // n, _north_west(xs, a, xt, b)])
    keys = unique(keys)
    for _ in range(MAX_ROUNDS):
        r, c = np.divmod(keys, m)
        cost = np.hypot(*(xs[r] - xt[c]).T)
        if not np.all(cost > 0):  # a pair at distance 0 would read as a missing entry
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            _, log = ot.emd(a, b, coo_matrix((cost, (r, c)), shape=(n, m)),
                            numItermax=itermax, log=True)
        _check(log, n, m)
        u, v = log["u"], log["v"]
        new = _best_pairs(xs, xt, u, v, CANDIDATES, tol)
        if new.size == 0:
            return float(log["cost"]), u, v
        keys = unique(np.concatenate([keys, new]))
    return None


def _best_pairs(xs: np.ndarray, xt: np.ndarray, u: np.ndarray, v: np.ndarray, k: int,
                tol: float | None = None) -> np.ndarray:
    """Keys ``i·m + j`` of each source's ``k`` partners of smallest reduced cost
    ``|xs_i − xt_j| − u_i − v_j``; with ``tol``, only those below ``−tol``. All
    ``n·m`` pairs are looked at, in chunks of rows."""
    from scipy.spatial.distance import cdist

    n, m = xs.shape[0], xt.shape[0]
    k = min(k, m)
    step = max(1, _CHUNK // m)
    out = []
    for s in range(0, n, step):
        d = cdist(xs[s:s + step], xt)
        d -= u[s:s + step, None]
        d -= v[None, :]
        rows = np.arange(d.shape[0])
        if tol is not None:  # only the rows holding a violated pair
            rows = np.flatnonzero((d < -tol).any(axis=1))
            if rows.size == 0:
                continue
            d = d[rows]
        idx = np.argpartition(d, k - 1, axis=1)[:, :k] if k < m else np.broadcast_to(
            np.arange(m), d.shape)
        i = np.repeat(np.arange(d.shape[0]), idx.shape[1])
        j = idx.ravel()
        if tol is not None:
            keep = d[i, j] < -tol
            i, j = i[keep], j[keep]
        out.append((rows[i] + s).astype(np.int64) * m + j)
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def _north_west(xs: np.ndarray, a: np.ndarray, xt: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Keys of the north-west-corner plan of both sides sorted along rows then
    columns: ``n + m − 1`` pairs carrying a feasible transport (vectorised: the
    pieces of ``[0, 1]`` between the two sides' cumulative masses)."""
    n, m = a.size, b.size
    oa = np.lexsort((xs[:, 1], xs[:, 0]))
    ob = np.lexsort((xt[:, 1], xt[:, 0]))
    ca, cb = np.cumsum(a[oa]), np.cumsum(b[ob])
    starts = np.union1d(np.concatenate([[0.0], ca[:-1]]), cb[:-1])
    i = np.minimum(np.searchsorted(ca, starts, side="right"), n - 1)
    j = np.minimum(np.searchsorted(cb, starts, side="right"), m - 1)
    return oa[i].astype(np.int64) * m + ob[j]


def _coarse_duals(xs: np.ndarray, a: np.ndarray, xt: np.ndarray, b: np.ndarray,
                  itermax: int, sparse_from: int) -> tuple[np.ndarray, np.ndarray]:
    """Dual potentials of the problem pooled on square cells of twice the points'
    median nearest-neighbour spacing (mass at each cell's centroid), read back at
    every point: estimates that pick the sparse candidates."""
    from scipy.spatial import cKDTree

    pts = xs if xs.shape[0] > 1 else np.concatenate([xs, xt])
    spacing = cKDTree(pts).query(pts, k=2)[0][:, 1]
    h = 2.0 * float(np.median(spacing[spacing > 0])) if np.any(spacing > 0) else 1.0
    lo = np.minimum(xs.min(axis=0), xt.min(axis=0))

    def pool(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cell = np.floor((x - lo) / h).astype(np.int64)
        _, inv = np.unique(cell, axis=0, return_inverse=True)
        inv = inv.ravel()
        mass = np.bincount(inv, weights=w)
        centre = np.stack([np.bincount(inv, weights=w * x[:, 0]),
                           np.bincount(inv, weights=w * x[:, 1])], axis=1) / mass[:, None]
        return centre, mass, inv

    ps, ws, inv_s = pool(xs, a)
    pt, wt, inv_t = pool(xt, b)
    if ws.size * wt.size >= a.size * b.size:  # pooling did not shrink it: no estimate
        return np.zeros(a.size), np.zeros(b.size)
    _, u, v = _solve(ps, ws / ws.sum(), pt, wt / wt.sum(), itermax, sparse_from)
    return u[inv_s], v[inv_t]

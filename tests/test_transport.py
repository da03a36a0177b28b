"""The certified sparse EMD solver against the dense one and a plain LP."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

import geoeval.measures.transport as T
from geoeval.errors import SolverError
from geoeval.measures.transport import transport


def grid_problem(seed: int, shift: tuple[int, int], size: int = 40):
    """mu - nu of two distance-transform-weighted blobs on a pixel grid, as the
    Mallows score builds it: pixel centres, disjoint supports, equal masses."""
    from scipy.ndimage import distance_transform_edt

    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:size, 0:size]
    r1, r2 = rng.uniform(size / 5, size / 3, 2)
    m1 = (xx - size / 2) ** 2 / r1**2 + (yy - size / 2) ** 2 / r2**2 < 1
    m2 = ((xx - size / 2 - shift[0]) ** 2 / r2**2 + (yy - size / 2 - shift[1]) ** 2 / r1**2
          < 1) | (rng.random((size, size)) < 0.02)  # a few stray pixels far away
    w1, w2 = distance_transform_edt(m1), distance_transform_edt(m2)
    d = (w1 / w1.sum() - w2 / w2.sum()).ravel()
    pts = np.c_[yy.ravel(), xx.ravel()] + 0.5
    pos, neg = d > 1e-15, d < -1e-15
    return pts[pos], d[pos], pts[neg], -d[neg]


@pytest.mark.parametrize("seed,shift", [(0, (3, -2)), (1, (0, 0)), (2, (9, 4)), (3, (-6, 1))])
def test_sparse_equals_dense(seed, shift):
    xs, a, xt, b = grid_problem(seed, shift)
    dense, s0 = transport(xs, a, xt, b, sparse_from=10**12)
    sparse, s1 = transport(xs, a, xt, b, sparse_from=0)
    assert (s0, s1) == ("dense", "sparse")
    assert sparse == pytest.approx(dense, rel=1e-12)


def test_sparse_with_recursive_coarse_problems_equals_the_lp():
    # sparse_from small enough that the pooled problem is itself solved sparse (twice)
    rng = np.random.default_rng(5)
    xs = rng.integers(0, 30, (70, 2)) + 0.5
    xt = rng.integers(30, 60, (50, 2)) + 0.5
    a, b = rng.random(70), rng.random(50)
    a, b = a / a.sum(), b / b.sum()
    got, solver = transport(xs, a, xt, b, sparse_from=20)
    lp = linprog(cdist(xs, xt).ravel(),
                 A_eq=np.vstack([np.kron(np.eye(70), np.ones(50)),
                                 np.kron(np.ones(70), np.eye(50))]),
                 b_eq=np.concatenate([a, b]), method="highs")
    assert solver == "sparse"
    assert got == pytest.approx(transport(xs, a, xt, b, sparse_from=10**12)[0], rel=1e-12)
    assert got == pytest.approx(lp.fun, rel=1e-6)  # HiGHS's own feasibility tolerance


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 60), st.integers(1, 60), st.booleans())
def test_sparse_equals_dense_on_random_clouds(seed, n, m, clustered):
    rng = np.random.default_rng(seed)
    if clustered:  # far-apart clusters: the optimum needs long pairs
        xs = rng.normal(0, 1, (n, 2)) + rng.choice([0, 40], (n, 1))
        xt = rng.normal(0, 1, (m, 2)) + rng.choice([0, 40], (m, 1)) + 3
    else:
        xs, xt = rng.random((n, 2)) * 10, rng.random((m, 2)) * 10
    a, b = rng.random(n) + 0.01, rng.random(m) + 0.01
    a, b = a / a.sum() * 2.5, b / b.sum() * 2.5
    dense, _ = transport(xs, a, xt, b, sparse_from=10**12)
    sparse, solver = transport(xs, a, xt, b, sparse_from=0)
    assert solver == ("sparse" if n * m > 0 else "none")
    assert sparse == pytest.approx(dense, rel=1e-9, abs=1e-12)


def test_uncertified_sparse_solve_falls_back_to_an_exact_solver(monkeypatch):
    xs, a, xt, b = grid_problem(2, (9, 4))
    want, _ = transport(xs, a, xt, b, sparse_from=10**12)
    monkeypatch.setattr(T, "MAX_ROUNDS", 0)  # never certified
    got, solver = transport(xs, a, xt, b, sparse_from=0)
    assert solver == "dense" and got == want
    got, solver = transport(xs, a, xt, b, sparse_from=0, dense_limit=0)
    assert solver == "lazy" and got == pytest.approx(want, rel=1e-10)


def test_a_pair_at_distance_zero_is_not_lost():
    # a sparse cost entry of 0 could read as "no pair": such problems go dense
    xs = np.array([[0.0, 0.0], [5.0, 5.0]])
    xt = np.array([[0.0, 0.0], [6.0, 5.0]])
    got, solver = transport(xs, np.array([1.0, 1.0]), xt, np.array([1.0, 1.0]), sparse_from=0)
    assert got == pytest.approx(1.0) and solver == "dense"


def test_capped_sparse_solver_raises():
    xs, a, xt, b = grid_problem(0, (3, -2))
    with pytest.raises(SolverError, match="optimality"):
        transport(xs, a, xt, b, sparse_from=0, itermax=3)


def test_north_west_plan_is_feasible():
    rng = np.random.default_rng(9)
    xs, xt = rng.random((30, 2)), rng.random((20, 2))
    a, b = rng.random(30), rng.random(20)
    a, b = a / a.sum(), b / b.sum()
    keys = T._north_west(xs, a, xt, b)
    assert keys.size <= 30 + 20 - 1
    # the pairs admit a plan with the right marginals (an LP restricted to them)
    r, c = np.divmod(keys, 20)
    A = np.zeros((50, keys.size))
    A[r, np.arange(keys.size)] = 1
    A[30 + c, np.arange(keys.size)] = 1
    lp = linprog(np.zeros(keys.size), A_eq=A, b_eq=np.concatenate([a, b]), method="highs")
    assert lp.status == 0

"""Mallows shape score: hand cases (004 Fig. 3), brute-force LP, solver checks."""

from __future__ import annotations

import numpy as np
import pytest
from affine import Affine
from scipy.optimize import linprog
from scipy.spatial.distance import cdist

from geoeval.errors import SolverError
from geoeval.io.raster import objects_from_labels
from geoeval.matching.result import Instance, instance_kind
from geoeval.measures.mallows import mallows_scores, max_distance, transport


def inst(ref: tuple[int, ...], sub: tuple[int, ...]) -> Instance:
    kind = instance_kind(len(ref), len(sub)) if min(len(ref), len(sub)) == 1 else "many-to-many"
    return Instance(ref, sub, 0.0, kind)


def score(ref_labels, sub_labels, ref_idx=(0,), sub_idx=(0,), transform=None, **kw) -> float:
    ref = objects_from_labels(np.asarray(ref_labels, dtype=np.int32), transform)
    sub = objects_from_labels(np.asarray(sub_labels, dtype=np.int32), transform)
    res = mallows_scores(ref, sub, [inst(tuple(ref_idx), tuple(sub_idx))], **kw)
    return float(res.scores[0])


def canvas(shape=(30, 30)) -> np.ndarray:
    return np.zeros(shape, dtype=np.int32)


# --- 004 Fig. 3: qualitative claims -------------------------------------------------


def test_identical_shapes_score_exactly_one():
    a = canvas()
    a[3:15, 4:20] = 1
    a[15:25, 4:9] = 1  # an L shape
    res = mallows_scores(objects_from_labels(a), objects_from_labels(a.copy()), [inst((0,), (0,))])
    assert res.scores[0] == 1.0
    assert res.emd[0] == 0.0
    assert res.scene == 1.0


def test_translation_moves_mass_by_its_length():
    # W1 of a translated distribution is the translation's length, exactly
    a, b = canvas(), canvas()
    a[5:15, 5:17] = 1
    b[8:18, 9:21] = 1  # shifted by (3, 4) pixels
    ref, sub = objects_from_labels(a), objects_from_labels(b)
    res = mallows_scores(ref, sub, [inst((0,), (0,))])
    assert res.emd[0] == pytest.approx(5.0, abs=1e-9)
    # farthest pixel centres: (5, 5) and (17, 20)
    assert res.max_distance[0] == pytest.approx(np.hypot(12, 15))
    assert res.scores[0] == pytest.approx(1 - 5 / np.hypot(12, 15))


def test_equal_overlap_at_different_places_scores_differently():
    # 004 Fig. 3 f-i: same overlap area, placed at the centre or at a corner
    ref = canvas()
    ref[5:25, 5:25] = 1
    centre, corner = canvas(), canvas()
    centre[10:20, 10:20] = 1
    corner[5:15, 5:15] = 1
    s_centre = score(ref, centre)
    s_corner = score(ref, corner)
    assert s_centre > s_corner + 0.05
    # same overlap and areas: an overlap-based score could not tell them apart
    assert (ref & centre).sum() == (ref & corner).sum()


def test_fragmented_detection_scores_below_a_whole_one():
    # 004 Fig. 3 c, j, t: the same pixels as 1, 2 or 3 objects
    ref = canvas()
    ref[4:22, 6:24] = 1
    whole, two, three = canvas(), canvas(), canvas()
    whole[5:23, 6:24] = 1
    two[5:14, 6:24], two[14:23, 6:24] = 1, 2
    three[5:11, 6:24], three[11:17, 6:24], three[17:23, 6:24] = 1, 2, 3
    s1 = score(ref, whole)
    s2 = score(ref, two, sub_idx=(0, 1))
    s3 = score(ref, three, sub_idx=(0, 1, 2))
    assert s1 > s2 > s3


def test_swapping_reference_and_submission_gives_the_same_score():
    rng = np.random.default_rng(7)
    for _ in range(5):
        a, b = canvas((24, 24)), canvas((24, 24))
        a[rng.random((24, 24)) < 0.25] = 1
        a[4:14, 4:14] = 2
        b[6:16, 5:18] = 1
        b[16:20, 5:18] = 3
        fwd = score(a, b, ref_idx=(0, 1), sub_idx=(0, 1))
        back = score(b, a, ref_idx=(0, 1), sub_idx=(0, 1))
        assert fwd == pytest.approx(back, abs=1e-12)


def test_scene_score_is_the_mean_of_instances():
    a, b = canvas(), canvas()
    a[2:8, 2:8], a[12:20, 12:22] = 1, 2
    b[3:9, 2:8], b[12:20, 14:22] = 1, 2
    ref, sub = objects_from_labels(a), objects_from_labels(b)
    res = mallows_scores(ref, sub, [inst((0,), (0,)), inst((1,), (1,))])
    assert res.scene == pytest.approx(res.scores.mean())
    assert res.scores[0] == pytest.approx(1 - 1 / np.hypot(6, 5))
    empty = mallows_scores(ref, sub, [])
    assert empty.scene is None and empty.scores.size == 0


# --- brute force: full (undifferenced) LP with scipy --------------------------------


def brute_masses(labels: np.ndarray, value: int, steps: tuple[float, float]) -> np.ndarray:
    """Distance of each object pixel centre to the nearest outside pixel centre (brute force).

    Outside = any other pixel of the raster or the ring just beyond it.
    """
    h, w = labels.shape
    rr, cc = np.mgrid[-1 : h + 1, -1 : w + 1]
    inside = np.zeros(rr.shape, dtype=bool)
    inside[1:-1, 1:-1] = labels == value
    pts = np.column_stack([rr.ravel() * steps[0], cc.ravel() * steps[1]])
    inner, outer = pts[inside.ravel()], pts[~inside.ravel()]
    return cdist(inner, outer).min(axis=1)


def brute_mallows(a, b, ref_vals, sub_vals, dy, dx) -> float:
    def side(labels, vals):
        pts, mass = [], []
        for v in vals:
            rr, cc = np.nonzero(labels == v)
            pts.append(np.column_stack([cc * dx, rr * dy]))
            mass.append(brute_masses(labels, v, (dy, dx)))
        m = np.concatenate(mass)
        return np.concatenate(pts), m / m.sum()

    pu, p = side(a, ref_vals)
    pv, q = side(b, sub_vals)
    cost = cdist(pu, pv)
    m, n = cost.shape
    rows = np.zeros((m + n, m * n))
    for i in range(m):
        rows[i, i * n : (i + 1) * n] = 1
    for j in range(n):
        rows[m + j, j::n] = 1
    lp = linprog(cost.ravel(), A_eq=rows, b_eq=np.concatenate([p, q]), method="highs")
    assert lp.status == 0
    return 1 - lp.fun / cost.max()


@pytest.mark.parametrize("seed", range(6))
def test_tiny_cases_match_a_direct_linear_program(seed):
    rng = np.random.default_rng(seed)
    dy, dx = [(1.0, 1.0), (2.0, 0.5), (0.3, 0.7)][seed % 3]
    a, b = canvas((9, 10)), canvas((9, 10))
    # random blobs, some cut by the raster edge
    a[rng.random((9, 10)) < 0.3] = 1
    a[0:3, 0:4] = 2
    b[rng.random((9, 10)) < 0.3] = 1
    b[1:4, 5:10] = 2
    ref_idx = (0, 1) if seed % 2 else (1,)
    sub_idx = (0,) if seed % 2 else (0, 1)
    transform = Affine(dx, 0, 100.0, 0, -dy, 50.0)
    got = score(a, b, ref_idx, sub_idx, transform=transform)
    ref_vals = [i + 1 for i in ref_idx]
    sub_vals = [i + 1 for i in sub_idx]
    want = brute_mallows(a, b, ref_vals, sub_vals, dy, dx)
    assert got == pytest.approx(want, abs=1e-9)


# --- solver and normaliser ----------------------------------------------------------


def random_problem(seed: int, m: int, n: int):
    rng = np.random.default_rng(seed)
    xs, xt = rng.random((m, 2)) * 10, rng.random((n, 2)) * 10
    a, b = rng.random(m), rng.random(n)
    return xs, a / a.sum() * 0.3, xt, b / b.sum() * 0.3


def test_dense_and_lazy_solvers_agree():
    xs, a, xt, b = random_problem(1, 60, 45)
    dense, s1 = transport(xs, a, xt, b)
    lazy, s2 = transport(xs, a, xt, b, dense_limit=0)
    assert (s1, s2) == ("dense", "lazy")
    assert dense == pytest.approx(lazy, rel=1e-10)
    lp = linprog(
        cdist(xs, xt).ravel(),
        A_eq=np.vstack([np.kron(np.eye(60), np.ones(45)), np.kron(np.ones(60), np.eye(45))]),
        b_eq=np.concatenate([a, b]),
        method="highs",
    )
    assert dense == pytest.approx(lp.fun, rel=1e-8)


@pytest.mark.parametrize("dense_limit", [10**9, 0])
def test_capped_solver_raises_instead_of_returning_a_wrong_value(dense_limit):
    xs, a, xt, b = random_problem(2, 80, 80)
    with pytest.raises(SolverError, match="optimality"):
        transport(xs, a, xt, b, dense_limit=dense_limit, itermax=5)


def test_max_distance_from_hulls_equals_brute_force():
    rng = np.random.default_rng(3)
    for k in range(20):
        # large sets go through the convex hulls, small ones through a direct scan
        hi = 300 if k % 2 else 40
        u = rng.integers(0, 30, size=(rng.integers(1, hi), 2)).astype(float)
        v = rng.integers(0, 30, size=(rng.integers(1, hi), 2)).astype(float)
        if k % 3 == 0:  # collinear sets
            u[:, 1] = 2 * u[:, 0] + 1
        if k % 5 == 0:
            v[:, 0] = 7.0
        assert max_distance(u, v) == pytest.approx(cdist(u, v).max())

"""Max tangent angle error's pieces against what they stand for: the samples against
``numpy.linspace`` edge by edge, the distances and nearest points against GEOS itself
(bit for bit, ties included), the angle against hand-worked polygons."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st

from geoeval.measures.tangent_angle import (
    Targets,
    closest_point,
    max_tangent_angle,
    point_segment_distance,
    project,
    sample_rings,
)


def linspace_samples(ring: shapely.LinearRing, spacing: float) -> np.ndarray:
    """The authors' sampling, edge by edge (their ``sample_geometry`` written out)."""
    coords = np.array(ring.coords)
    xs, ys = [], []
    for i in range(len(coords) - 1):
        length = np.linalg.norm(coords[i] - coords[i + 1])
        num = max(1, int(round(length / spacing))) + 1
        x = np.linspace(coords[i][0], coords[i + 1][0], num)
        y = np.linspace(coords[i][1], coords[i + 1][1], num)
        xs.append(x[1:] if i else x)
        ys.append(y[1:] if i else y)
    return np.column_stack([np.concatenate(xs), np.concatenate(ys)])


def test_samples_equal_linspace_edge_by_edge():
    rng = np.random.default_rng(0)
    rings = [shapely.LinearRing(rng.uniform(-50, 350, (k, 2)).round(d))
             for k, d in zip(rng.integers(3, 12, 40), rng.integers(0, 4, 40), strict=True)]
    rings.append(shapely.LinearRing([(0, 0), (5, 0), (5, 0), (5, 3)]))  # a zero-length edge
    rings.append(shapely.LinearRing([(0, 0), (1e-300, 0), (1e-300, 1)]))  # a step that is 0
    pts, owner = sample_rings(np.array(rings, dtype=object), 2.0)
    for k, ring in enumerate(rings):
        np.testing.assert_array_equal(pts[owner == k], linspace_samples(ring, 2.0))


def test_samples_round_half_to_even():
    # edges of 5 and 7 units: 2.5 and 3.5 steps round to 2 and 4 (as Python's round)
    pts, _ = sample_rings(np.array([shapely.LinearRing([(0, 0), (5, 0), (5, 7)])]), 2.0)
    assert pts[:5].tolist() == [[0, 0], [2.5, 0], [5, 0], [5, 1.75], [5, 3.5]]


def grid_segments(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Points and segments on a coarse grid (ties, endpoints, collinear points, points on
    segments, zero-length segments), and some at random."""
    p = rng.integers(-3, 4, (n, 2)).astype(float)
    a = rng.integers(-3, 4, (n, 2)).astype(float)
    b = np.where(rng.random((n, 1)) < 0.1, a, rng.integers(-3, 4, (n, 2)).astype(float))
    wild = rng.random(n) < 0.3
    p[wild] = rng.normal(0, 3, (int(wild.sum()), 2))
    b[wild] = a[wild] + rng.normal(0, 1e-4, (int(wild.sum()), 2))
    return p, a, b


def test_point_segment_distance_and_closest_point_are_geos():
    p, a, b = grid_segments(np.random.default_rng(1), 4000)
    pts = shapely.points(p)
    lines = shapely.linestrings(np.stack([a, b], axis=1))
    np.testing.assert_array_equal(point_segment_distance(p, a, b), shapely.distance(pts, lines))
    near = shapely.get_coordinates(shapely.shortest_line(pts, lines)).reshape(-1, 2, 2)[:, 1]
    np.testing.assert_array_equal(closest_point(p, a, b), near)


def squares(rng: np.random.Generator, k: int) -> list:
    """Axis-aligned squares and buffered ones on a grid: shared edges, equal distances."""
    out = []
    for _ in range(k):
        x, y, s = rng.integers(0, 12), rng.integers(0, 12), rng.integers(1, 5)
        poly = shapely.box(x, y, x + s, y + s)
        if rng.random() < 0.4:
            poly = poly.buffer(1e-4 * rng.integers(0, 3), quad_segs=16)
        if rng.random() < 0.3:
            poly = shapely.affinity.rotate(poly, float(rng.integers(0, 8)) * 11.25)
        out.append(poly)
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_projection_is_geos_nearest_points_on_the_collection(seed):
    rng = np.random.default_rng(seed)
    groups, points, owner = [], [], []
    for g in range(4):
        polys = squares(rng, int(rng.integers(1, 5)))
        groups.append([r for p in polys for r in shapely.get_rings(p)])
        n = 60
        pts = rng.integers(-2, 18, (n, 2)).astype(float) / rng.choice([1, 2, 4])
        pts[::3] += rng.normal(0, 1, (len(pts[::3]), 2))
        points.append(pts)
        owner.append(np.full(n, g))
    rings = np.array([r for rs in groups for r in rs], dtype=object)
    start = np.r_[0, np.cumsum([len(rs) for rs in groups])]
    pts, grp = np.concatenate(points), np.concatenate(owner)
    targets = Targets.from_rings(rings, start)
    got = project(pts, grp, targets)
    # the same points cut into "contours" (sifted together, by chunks) of random lengths
    contour = np.cumsum(np.r_[True, grp[1:] != grp[:-1]] | (rng.random(grp.size) < 0.1))
    np.testing.assert_array_equal(project(pts, grp, targets, contour), got)
    collections = np.array([shapely.GeometryCollection(rs) for rs in groups], dtype=object)
    line = shapely.shortest_line(shapely.points(pts), collections[grp])
    np.testing.assert_array_equal(got, shapely.get_coordinates(line).reshape(-1, 2, 2)[:, 1])


def test_projection_of_contour_samples_is_geos():
    # samples along contours on the grid of the reference squares (equal distances to
    # several sides and rings), sifted contour by contour and chunk by chunk
    rng = np.random.default_rng(5)
    for _ in range(4):
        reference = [r for p in squares(rng, 5) for r in shapely.get_rings(p)]
        preds = [shapely.get_rings(p)[0] for p in squares(rng, 3)]
        preds.append(shapely.LinearRing([(-3, 6), (20, 6), (20, 6.5), (-3, 6.5)]))
        pts, ring = sample_rings(np.array(preds, dtype=object), 0.5)
        targets = Targets.from_rings(np.array(reference, dtype=object),
                                     np.array([0, len(reference)]))
        got = project(pts, np.zeros(len(pts), np.int64), targets, ring)
        line = shapely.shortest_line(shapely.points(pts), shapely.GeometryCollection(reference))
        np.testing.assert_array_equal(got, shapely.get_coordinates(line).reshape(-1, 2, 2)[:, 1])


def one_polygon(pred: shapely.Polygon, reference: list) -> float:
    rings = np.array(shapely.get_rings(pred), dtype=object)
    targets = [r for p in reference for r in shapely.get_rings(p)]
    t = Targets.from_rings(np.array(targets, dtype=object), np.array([0, len(targets)]))
    return float(max_tangent_angle(rings, np.zeros(rings.size, np.int64), 1,
                                   np.zeros(rings.size, np.int64), t)[0])


def test_angle_of_a_copy_is_zero():
    square = shapely.box(0, 0, 20, 20)
    assert one_polygon(square, [square]) == 0.0


def test_angle_of_a_shifted_copy_by_hand():
    # box(0, 1, 20, 21) on box(0, 0, 20, 20): the samples (0, 1) and (20, 1) lie on the
    # reference's sides and project on themselves, (2, 1) and (18, 1) on the bottom side
    # at (2, 0) and (18, 0): those steps turn by atan(1/2); the steps ending above the
    # reference, (20, 19) -> (20, 21), shrink by 2 and do not count
    got = one_polygon(shapely.box(0, 1, 20, 21), [shapely.box(0, 0, 20, 20)])
    assert got == pytest.approx(np.arctan(0.5), abs=1e-12)


def test_angle_of_a_turned_square_over_one_side():
    # a small square turned by 5 degrees just above the bottom of a large one: every
    # sample projects on the bottom side; the near-horizontal sides turn by 5 degrees,
    # the near-vertical ones shrink more than twice and do not count
    small = shapely.affinity.rotate(shapely.box(48, 3, 52, 7), 5.0)
    got = one_polygon(small, [shapely.box(0, 0, 100, 100)])
    assert np.degrees(got) == pytest.approx(5.0, abs=1e-9)


def test_no_step_counts_gives_nan():
    # every projection lands on one far corner: the projected steps have length 0
    far = shapely.box(1000, 1000, 1001, 1001)
    assert np.isnan(one_polygon(shapely.box(0, 0, 4, 4), [far]))

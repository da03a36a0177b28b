"""Intersection areas of ring pairs (geoeval.overlap_rings) and outlines in a BoxSet.

Simple rings against shapely's overlay (a second method), hand-worked cases for
the winding-number convention of self-intersecting rings, degenerate rings, and
the BoxSet's outlines (bounds, subset, geometry) against their definitions.
"""

from __future__ import annotations

import numpy as np
import pytest
import shapely

from geoeval.io.boxes import BoxSet, Outlines
from geoeval.overlap_rings import (
    convex_intersection_areas,
    convex_rings,
    polygon_intersection_areas,
    ring_intersection_areas,
    ring_signed_areas,
)


def rotated(n: int, rng: np.random.Generator, scale: float = 1.0) -> np.ndarray:
    c = rng.uniform(0, 100, (n, 2)) * scale
    a = rng.uniform(0, np.pi, n)
    u = np.c_[np.cos(a), np.sin(a)] * rng.uniform(2, 30, (n, 1)) * scale
    v = np.c_[-np.sin(a), np.cos(a)] * rng.uniform(2, 30, (n, 1)) * scale
    return np.stack([c - u - v, c + u - v, c + u + v, c - u + v], axis=1)


@pytest.mark.parametrize("seed", range(3))
def test_convex_and_concave_rings_equal_shapely(seed):
    rng = np.random.default_rng(seed)
    a = rotated(3000, rng)
    b = a[rng.permutation(3000)] * rng.uniform(0.9, 1.1) + rng.normal(0, 10, (3000, 1, 2))
    b[::3] = b[::3, ::-1]  # clockwise and counter-clockwise
    # concave quadrilaterals (darts): one corner pulled towards the centre
    dart = a[1::4].copy()
    dart[:, 2] = 0.8 * dart.mean(axis=1) + 0.2 * dart[:, 2]
    a[1::4] = dart
    assert shapely.is_valid(shapely.polygons(a)).all()
    got = ring_intersection_areas(a, b)
    want = shapely.area(shapely.intersection(shapely.polygons(a), shapely.polygons(b)))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert (got > 0).sum() > 300  # the test sees real overlaps


def test_far_from_the_origin_keeps_its_precision():
    rng = np.random.default_rng(3)
    a = rotated(500, rng) + 1e6
    b = a + rng.normal(0, 3, (500, 1, 2))
    got = ring_intersection_areas(a, b)
    want = shapely.area(shapely.intersection(shapely.polygons(a), shapely.polygons(b)))
    np.testing.assert_allclose(got, want, rtol=1e-9)


def test_hand_worked_rings():
    square = np.array([[0.0, 0], [2, 0], [2, 2], [0, 2]])
    assert ring_intersection_areas(square[None], square[None] + [1, 1]).tolist() == [1.0]
    assert ring_intersection_areas(square[None], square[None] + [2, 0]).tolist() == [0.0]
    assert ring_intersection_areas(square[None], square[None, ::-1]).tolist() == [4.0]
    # a shared edge counts once (the same side), or not at all (opposite sides)
    half = np.array([[[0.0, 0], [2, 0], [2, 1], [0, 1]]])
    assert ring_intersection_areas(square[None], half).tolist() == [2.0]
    # a bow tie: lobes (0,0)-(1,1)-(0,2) and (2,0)-(1,1)-(2,2) wind opposite ways
    bow = np.array([[[0.0, 0], [0, 2], [2, 0], [2, 2]]])
    assert ring_signed_areas(bow).tolist() == [0.0]
    left = np.array([[[0.0, 0], [1, 0], [1, 2], [0, 2]]])  # covers the left lobe
    right = left + [1, 0]
    a_left = ring_intersection_areas(bow, left)[0]
    a_right = ring_intersection_areas(bow, right)[0]
    assert abs(a_left) == 1.0 and a_left == -a_right
    # the bow tie with itself: the integral of w² is both lobes
    assert ring_intersection_areas(bow, bow).tolist() == [2.0]
    # degenerate rings: a repeated corner is a triangle, collinear corners are nothing
    tri = np.array([[[0.0, 0], [2, 0], [2, 2], [2, 2]]])
    assert ring_intersection_areas(tri, square[None]).tolist() == [2.0]
    line = np.array([[[0.0, 0], [1, 1], [2, 2], [3, 3]]])
    assert ring_intersection_areas(line, square[None]).tolist() == [0.0]
    assert convex_rings(np.r_[square[None], bow, tri, line]).tolist() == [True, False, False,
                                                                           False]


def test_triangles_and_an_empty_input():
    t = np.array([[[0.0, 0], [4, 0], [0, 4]]])
    assert convex_intersection_areas(t, t + [1, 1]).tolist() == [2.0]
    assert ring_intersection_areas(np.zeros((0, 4, 2)), np.zeros((0, 4, 2))).size == 0


def test_outlines_in_a_box_set():
    quads = np.array([[0.0, 0, 4, 0, 4, 2, 0, 2], [1, 1, 3, 0, 5, 2, 1, 3],
                      [10, 10, 12, 10, 12, 12, 10, 12]])
    box = BoxSet(None, np.array([0, 0, 1]), np.array(["a", "b", "a"]), ("x", "y"),
                 outlines=Outlines.from_quads(quads))
    assert box.kind == "outline" and len(box) == 3
    np.testing.assert_array_equal(box.boxes, [[0, 0, 4, 2], [1, 0, 5, 3], [10, 10, 12, 12]])
    sub = box.subset(np.array([2, 0]))
    np.testing.assert_array_equal(sub.outlines.quads().reshape(2, 8), quads[[2, 0]])
    np.testing.assert_array_equal(sub.boxes, box.boxes[[2, 0]])
    geoms = box.geometry()
    assert shapely.equals(geoms[0], shapely.box(0, 0, 4, 2))
    objects = box.to_objects()
    np.testing.assert_allclose(objects.areas, shapely.area(geoms))
    # several rings an object (the parts of one instance) and rings of any length
    parts = Outlines(np.array([[0.0, 0], [1, 0], [0, 1], [5, 5], [6, 5], [6, 6], [5, 6],
                               [9, 9], [9, 10], [10, 10]]),
                     np.array([0, 3, 7, 10]), np.array([0, 2, 3]))
    assert parts.quads() is None and len(parts) == 2
    np.testing.assert_array_equal(parts.bounds(), [[0, 0, 6, 6], [9, 9, 10, 10]])
    g = parts.geometry()
    assert g[0].geom_type == "MultiPolygon" and g[0].area == pytest.approx(1.5)
    assert parts.take(np.array([1])).coords.tolist() == [[9, 9], [9, 10], [10, 10]]
    with pytest.raises(ValueError, match="3 outlines for 2 boxes"):
        BoxSet(np.zeros((2, 4)), np.zeros(2, int), np.array(["a", "a"]), ("x",),
               outlines=Outlines.from_quads(quads))


# --- polygons of any size, by trapezoids ------------------------------------------------

def blob(rng: np.random.Generator, grid: bool) -> shapely.Geometry:
    """A polygon, multipolygon or polygon with holes: unions of star-shaped rings (or of
    grid squares, with shared edges), holes punched, rounded corners."""
    if grid:
        boxes = [shapely.box(x, y, x + s, y + s)
                 for x, y, s in rng.integers(0, 10, (int(rng.integers(1, 4)), 3)) + [0, 0, 1]]
        g = shapely.union_all(boxes)
    else:
        parts = []
        for _ in range(int(rng.integers(1, 4))):
            k = int(rng.integers(3, 12))
            t = np.sort(rng.uniform(0, 2 * np.pi, k))
            r = rng.uniform(1, 10) * rng.uniform(0.3, 1, k)
            c = rng.uniform(0, 30, 2)
            parts.append(shapely.make_valid(shapely.Polygon(c + np.c_[r * np.cos(t),
                                                                         r * np.sin(t)])))
        g = shapely.union_all(parts)
    if rng.random() < 0.5:
        x, y = rng.integers(0, 20, 2) if grid else rng.uniform(0, 20, 2)
        g = g.difference(shapely.box(x, y, x + 2, y + 3))
    if not grid and rng.random() < 0.3:
        g = g.buffer(rng.uniform(0, 1), quad_segs=int(rng.integers(1, 16)))
    polys = shapely.get_parts(g)
    polys = polys[shapely.get_type_id(polys) == 3]
    return shapely.multipolygons(polys) if polys.size else shapely.Polygon()


def check_polygon_intersection_areas(seed: int, n: int, grid: bool) -> None:
    rng = np.random.default_rng(seed)
    a = np.array([blob(rng, grid) for _ in range(n)])
    b = np.array([blob(rng, grid) for _ in range(n // 5)])
    b[0] = shapely.Polygon()
    # holes, in a polygon of either side and in a part of a multipolygon
    b[1] = shapely.box(0, 0, 20, 20).difference(shapely.box(4, 4, 9, 7))
    a[0] = shapely.box(3, 3, 12, 12).difference(shapely.box(5, 5, 6, 11))
    a[1] = shapely.union_all([a[0], shapely.box(15, 0, 18, 4)])
    index = rng.integers(0, b.size, a.size)
    index[:2] = 1
    area, error = polygon_intersection_areas(a, b, index)
    want = shapely.area(shapely.intersection(a, b[index]))
    assert (np.abs(area - want) <= error).all() and (error < 1e-5).all()
    assert (shapely.get_num_interior_rings(shapely.get_parts(a)) > 0).any()
    if grid:  # small integers: every term exact
        np.testing.assert_array_equal(area, want)


@pytest.mark.parametrize("grid", [False, True])
def test_polygon_intersection_areas_equal_shapely_within_their_bound(grid):
    check_polygon_intersection_areas(11, 100, grid)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_polygon_intersection_areas_equal_shapely_on_more_polygons(seed):
    check_polygon_intersection_areas(20 + seed, 1500, seed % 2 == 1)


def test_polygon_intersection_areas_by_hand_and_a_flat_ring_is_not_trusted():
    frame = shapely.box(0, 0, 4, 4).difference(shapely.box(1, 1, 3, 3))  # area 12
    half = shapely.box(2, -1, 6, 5)  # its right half: 2 x 4 minus the hole's 1 x 2
    # a thin chevron: its shoelace terms cancel to rounding, its orientation is unsure
    sliver = shapely.Polygon([(0, 0), (2, 2), (4, 0), (4, 1e-13), (2, 2 + 1e-13), (0, 1e-13)])
    area, error = polygon_intersection_areas(np.array([half, frame, sliver]),
                                             np.array([frame]), np.array([0, 0, 0]))
    assert area[:2].tolist() == [6.0, 12.0] and np.isinf(error[2])

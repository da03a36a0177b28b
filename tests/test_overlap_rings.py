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

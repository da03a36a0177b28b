"""Boundary IoU with the reference code's pixel band (issue 24).

The oracle is the authors' procedure written out per object, as boundary-iou-api's
``mask_to_boundary`` does it: pad the binary mask with one pixel of zeros, erode it
``d`` times with a 3 × 3 square, keep what the erosion removed.
"""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from affine import Affine
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import ndimage

import geoeval
from geoeval.errors import InputError
from geoeval.io.raster import objects_from_labels
from geoeval.measures.boundary_band import band_labels, raster_boundary_iou, reference_dilation
from geoeval.measures.boundary_iou import boundary_iou
from geoeval.objects import ObjectSet


def official_band(mask: np.ndarray, d: int) -> np.ndarray:
    padded = np.pad(mask.astype(bool), 1)
    eroded = ndimage.binary_erosion(padded, np.ones((3, 3), bool), iterations=d)
    return mask.astype(bool) & ~eroded[1:-1, 1:-1]


def official_biou(gt: np.ndarray, dt: np.ndarray, d: int) -> float:
    gb, db = official_band(gt, d), official_band(dt, d)
    union = (gb | db).sum()
    return float((gb & db).sum() / union) if union else float("nan")


def test_reference_dilation_rule():
    # max(1, int(round(0.02 * diagonal)))
    assert reference_dilation((1668, 1668)) == 47
    assert reference_dilation((1, 1)) == 1
    assert reference_dilation((100, 75)) == round(0.02 * 125) == 2


_rect = st.tuples(st.integers(0, 15), st.integers(0, 15), st.integers(1, 9), st.integers(1, 9))


@settings(max_examples=30, deadline=None)
@given(st.lists(_rect, min_size=1, max_size=6), st.integers(1, 4))
def test_band_labels_equal_the_official_erosion_per_object(rects, d):
    lab = np.zeros((18, 18), np.int32)
    for k, (r, c, h, w) in enumerate(rects, start=1):
        lab[r:r + h, c:c + w] = k  # objects touching each other and the raster edge
    got = band_labels(lab, d, 0)
    for k in np.unique(lab[lab > 0]):
        np.testing.assert_array_equal(got == k, official_band(lab == k, d))


def _pair_rasters(seed: int, shape=(30, 26)) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = np.zeros(shape, np.int32)
    sub = np.zeros(shape, np.int32)
    for k in range(1, 7):
        r, c = rng.integers(0, shape[0] - 3), rng.integers(0, shape[1] - 3)
        h, w = rng.integers(2, 12, size=2)
        ref[r:r + h, c:c + w] = k
        dr, dc = rng.integers(-2, 3, size=2)
        r2, c2 = max(r + dr, 0), max(c + dc, 0)
        sub[r2:r2 + h + rng.integers(-1, 2), c2:c2 + w] = 10 + k
    return ref, sub


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("d", [1, 2, 4])
def test_raster_boundary_iou_equals_the_reference_code(seed, d):
    ref, sub = _pair_rasters(seed)
    t = Affine(0.5, 0, 0, 0, -0.5, 100)
    ro, so = objects_from_labels(ref, t), objects_from_labels(sub, t)
    rids, sids = ro.ids, so.ids
    pr, ps = np.meshgrid(rids, sids, indexing="ij")
    pr, ps = pr.ravel(), ps.ravel()  # every pair, overlapping or not
    # strips of 7 rows: the halo of d rows must make the strips invisible
    got = raster_boundary_iou(ro.grid, so.grid, pr, ps, d, strip_rows=7)
    want = [official_biou(ref == a, sub == b, d) for a, b in zip(pr, ps, strict=True)]
    np.testing.assert_allclose(got, want, equal_nan=True, rtol=0, atol=1e-15)


def test_raster_band_differs_from_the_distance_band_on_stair_steps():
    # a building rotated by 30°, rasterised: a stair-step outline. The distance band
    # and the reference code's chessboard band of 3-4 pixels then differ by far more
    # than the 0.005 the docs once promised (up to about 0.08 on such outlines)
    from rasterio.features import rasterize

    bldg = shapely.affinity.rotate(shapely.box(20, 20, 44, 36), 30, origin="center")
    shifted = shapely.affinity.translate(bldg, 1.5, 1.0)
    ref = rasterize([(bldg, 1)], out_shape=(64, 64), dtype="int32")
    sub = rasterize([(shifted, 1)], out_shape=(64, 64), dtype="int32")
    ro, so = objects_from_labels(ref), objects_from_labels(sub)
    gaps = []
    for d in (3, 4):
        pixel = raster_boundary_iou(ro.grid, so.grid, np.array([1]), np.array([1]), d)[0]
        assert pixel == pytest.approx(official_biou(ref == 1, sub == 1, d), abs=1e-15)
        dist = boundary_iou(ro.polygons, so.polygons, float(d))[0]
        gaps.append(abs(pixel - dist))
    assert max(gaps) > 0.005


def test_score_with_the_raster_band_end_to_end():
    ref, sub = _pair_rasters(3, shape=(60, 50))
    t = Affine(0.3, 0, 1000, 0, -0.3, 2000)
    res = geoeval.score((ref, t), (sub, t), matchers=["bgm"], geometry_measures="boundary_iou",
                        boundary_band="raster")
    g = res.to_dict()["geometry"]["boundary_iou"]
    assert g["band"] == "raster" and g["width_pixels"] == reference_dilation((60, 50)) == 2
    vals = g["matchers"]["bgm"]
    want = [official_biou(ref == a, sub == b, 2)
            for a, b in zip(vals["reference_ids"], vals["submission_ids"], strict=True)]
    np.testing.assert_allclose(vals["values"], want, atol=1e-15)
    # a width in CRS units is rounded to whole pixels: 1.0 m at 0.3 m pixels = 3 pixels
    g3 = geoeval.score((ref, t), (sub, t), matchers=["bgm"], geometry_measures="boundary_iou",
                       boundary_band="raster", boundary_width=1.0).to_dict()["geometry"]
    assert g3["boundary_iou"]["width_pixels"] == 3
    # vector layers have no pixel band: a clear error
    ref_v = ObjectSet.from_geometries(objects_from_labels(ref, t).polygons)
    with pytest.raises(InputError, match="two labelled rasters"):
        geoeval.score(ref_v, ref_v, matchers=["bgm"], geometry_measures="boundary_iou",
                      boundary_band="raster")
    with pytest.raises(InputError, match="band must be one of"):
        geoeval.score((ref, t), (sub, t), matchers=["bgm"], geometry_measures="boundary_iou",
                      boundary_band="chessboard")


def test_polis_invariance_is_only_for_vertices_exactly_on_an_edge():
    from geoeval.measures.polis import polis

    # a slanted quadrilateral against a shifted copy
    a = shapely.Polygon([(0, 0), (10, 3.3), (8.3, 12.1), (-1, 9.7)])
    b = shapely.affinity.translate(a, 0.7, -0.4)
    plain = polis(np.array([a]), np.array([b]))[0]
    # vertices exactly on the edges (axis-aligned edges, dyadic midpoints): same value
    sq = shapely.box(0, 0, 8, 8)
    sq_dense = shapely.Polygon([(0, 0), (4, 0), (8, 0), (8, 4), (8, 8), (4, 8), (0, 8), (0, 4)])
    other = shapely.affinity.translate(sq, 1.0, 0.5)
    assert polis(np.array([sq_dense]), np.array([other]))[0] == polis(
        np.array([sq]), np.array([other]))[0]
    # midpoints of the slanted edges rounded to 0.1 m: no longer on the edge, they count
    # as corners and change the value (by centimetres, not by rounding error)
    coords = np.asarray(a.exterior.coords)[:-1]
    dense = []
    for p, q in zip(coords, np.roll(coords, -1, axis=0), strict=True):
        dense += [tuple(p), tuple(np.round((p + q) / 2, 1))]
    a_dense = shapely.Polygon(dense)
    rounded = polis(np.array([a_dense]), np.array([b]))[0]
    assert 1e-3 < abs(rounded - plain) < 0.1


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40), st.integers(1, 40), st.integers(1, 12), st.floats(0, 1),
       st.integers(0, 2**32 - 1))
def test_numpy_erosions_equal_scipy_ndimage(rows, cols, d, fill, seed):
    """The band's erosions without scipy (a summed-area table, sliding windows) equal
    scipy.ndimage's filters, padded with background."""
    from geoeval.measures.boundary_band import _binary_band, _sliding

    rng = np.random.default_rng(seed)
    image = (rng.random((rows, cols)) < fill).astype(np.uint8)
    kept = ndimage.minimum_filter(image, size=2 * d + 1, mode="constant", cval=0)
    assert np.array_equal(_binary_band(image, d), (image != 0) & (kept == 0))
    values = rng.integers(-1000, 1000, rows * cols).astype(np.int64)
    big = np.int64(1) << 40
    assert np.array_equal(_sliding(values, 2 * d + 1, big, np.maximum),
                          ndimage.maximum_filter1d(values, 2 * d + 1, mode="constant", cval=big))
    assert np.array_equal(_sliding(values, 2 * d + 1, -big, np.minimum),
                          ndimage.minimum_filter1d(values, 2 * d + 1, mode="constant", cval=-big))

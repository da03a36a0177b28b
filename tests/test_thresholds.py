"""Threshold decisions on ratios of areas: one rule, exact on label rasters (issue 24).

The hand-worked cases are the smallest ones that went wrong before: a 1 × 9 strip
and the same strip shifted 3 pixels share 6 of 12 pixels (IoU exactly ½), which
floating-point areas at 0.3 m pixels put above ½. The property test scores the
same label rasters at five pixel sizes and requires identical decisions from every
matcher and measure that has a threshold.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from affine import Affine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely import box

from geoeval.io.raster import objects_from_labels
from geoeval.matching import match
from geoeval.measures.clinton import clinton_segmentation
from geoeval.measures.panoptic import panoptic_quality
from geoeval.objects import ObjectSet
from geoeval.overlap import compute_overlap
from geoeval.thresholds import above, as_fraction, at_least

PIXEL_SIZES = (1.0, 0.3, 0.7, 0.15, 1 / 3)


def _overlap(ref: np.ndarray, sub: np.ndarray, pixel: float):
    t = Affine(pixel, 0, 100.0, 0, -pixel, 200.0)
    return compute_overlap(objects_from_labels(ref, t), objects_from_labels(sub, t))


def _strips() -> tuple[np.ndarray, np.ndarray]:
    ref = np.zeros((3, 16), np.int32)
    sub = np.zeros((3, 16), np.int32)
    ref[1, 1:10] = 1
    sub[1, 4:13] = 1
    return ref, sub


# --- the rule itself -----------------------------------------------------------

def test_fractions_are_read_as_written():
    assert as_fraction(0.5) == (1, 2)
    assert as_fraction(0.7) == (7, 10)
    assert as_fraction(0.6) == (3, 5)
    assert as_fraction(1 / 3) == (1, 3)
    assert as_fraction(1.0) == (1, 1)
    assert as_fraction(0.0) == (0, 1)
    # a double no small fraction rounds to: its exact binary value
    odd = 0.1234567890123
    p, q = as_fraction(odd)
    assert Fraction(p, q) == Fraction(odd)


def test_counts_decide_exactly_at_every_pixel_size():
    # |A∩B| = 6, |A∪B| = 12 pixels: IoU is exactly 1/2
    for pixel in PIXEL_SIZES:
        pa = pixel * pixel
        c, a, b = 6 * pa, 9 * pa, 9 * pa
        union = a + b - c
        assert at_least(np.array([c]), np.array([union]), 0.5, unit=pa).tolist() == [True]
        assert above(np.array([c]), np.array([union]), 0.5, unit=pa).tolist() == [False]
    # the floating-point ratio itself lands above 1/2 at 0.3 m: what the rule is for
    pa = 0.3 * 0.3
    assert 6 * pa / (9 * pa + 9 * pa - 6 * pa) > 0.5


def test_counts_against_brute_force_fractions():
    rng = np.random.default_rng(7)
    num = rng.integers(0, 60, 400)
    den = rng.integers(1, 60, 400)
    for t in (0.2, 0.5, 0.6, 0.7, 1 / 3, 2 / 3, 0.75, 1.0, 0.0):
        p, q = as_fraction(t)
        ratios = [Fraction(int(n), int(d)) for n, d in zip(num, den, strict=True)]
        want_ge = [r >= Fraction(p, q) for r in ratios]
        want_gt = [r > Fraction(p, q) for r in ratios]
        for pa in (1.0, 0.09, 0.49, 0.0225, 1 / 9):
            assert at_least(num * pa, den * pa, t, unit=pa).tolist() == want_ge
            assert above(num * pa, den * pa, t, unit=pa).tolist() == want_gt


def test_counts_beyond_int64_products_stay_exact():
    # 2^40-pixel objects against a threshold no small fraction rounds to (its exact
    # binary value has a denominator near 2^56): products beyond int64, Python integers
    t = 0.123456789
    p, q = as_fraction(t)
    assert q > 10**6
    d = np.full(3, 2**40)
    n = np.array([2**40 * p // q + k for k in (-1, 0, 1)])
    want = [Fraction(int(x), int(y)) >= Fraction(t) for x, y in zip(n, d, strict=True)]
    assert want == [False, False, True] or want == [False, True, True]
    assert at_least(n.astype(float), d.astype(float), t, unit=1.0).tolist() == want


def test_float_rule_slack_and_direction():
    # a ratio equal to t up to rounding is t: passes "at least", fails "strictly above"
    c, u = np.array([0.1 + 0.2]), np.array([0.6])
    assert c[0] / u[0] > 0.5  # rounding put it above
    assert at_least(c, u, 0.5).tolist() == [True]
    assert above(c, u, 0.5).tolist() == [False]
    # a real difference (far beyond 1e-12) is kept both ways
    assert above(np.array([0.5000001]), np.array([1.0]), 0.5).tolist() == [True]
    assert at_least(np.array([0.4999999]), np.array([1.0]), 0.5).tolist() == [False]
    # an empty denominator is never at least anything
    assert at_least(np.array([0.0]), np.array([0.0]), 0.0).tolist() == [False]


# --- hand-worked scenes --------------------------------------------------------

@pytest.mark.parametrize("pixel", PIXEL_SIZES)
def test_shifted_strip_is_not_a_panoptic_match(pixel):
    ov = _overlap(*_strips(), pixel)
    assert ov.pixel_area == pytest.approx(pixel * pixel)
    assert ov.iou.tolist() == [0.5]  # the counts' ratio, the same at every pixel size
    pq = panoptic_quality(ov)
    assert (pq.tp, pq.fp, pq.fn, pq.pq) == (0, 1, 1, 0.0)
    # IoU at least 1/2: the iou matcher takes the pair at t = 0.5, not above it
    assert len(match(ov, "iou", threshold=0.5).arrays) == 1
    assert len(match(ov, "iou", threshold=0.5000001).arrays) == 0
    # Hoover: C = 6 of 9 = 2/3 on both sides: a correct detection at T = 2/3, not above
    assert len(match(ov, "hoover", threshold=2 / 3).arrays) == 1
    assert len(match(ov, "hoover", threshold=0.67).arrays) == 0
    # MOM's minimum overlap: 6 of the smaller 9
    assert len(match(ov, "mom", min_overlap=2 / 3).arrays) == 1
    assert len(match(ov, "mom", min_overlap=0.67).arrays) == 0


def test_clinton_half_is_not_above_half():
    # 2 x 4 reference, 2 x 4 segment sharing exactly half of each
    ref = np.zeros((4, 8), np.int32)
    sub = np.zeros((4, 8), np.int32)
    ref[1:3, 0:4] = 1
    sub[1:3, 2:6] = 1
    for pixel in PIXEL_SIZES:
        cs = clinton_segmentation(_overlap(ref, sub, pixel), rule="overlap")
        assert cs.d.size == 0


def test_clinton_centroid_rule_needs_shared_area():
    # a 10 x 10 square with a 4 x 4 courtyard, and a 2 x 2 segment inside the
    # courtyard: the square's centroid lies in the segment, but they share no area
    square = box(0, 0, 10, 10).difference(box(3, 3, 7, 7))
    inner = box(4, 4, 6, 6)
    ref = ObjectSet.from_geometries([square])
    sub = ObjectSet.from_geometries([inner])
    ov = compute_overlap(ref, sub)
    assert ov.n_pairs == 0
    for rule in ("centroid", "all"):
        cs = clinton_segmentation(ov, rule=rule)
        assert cs.d.size == 0
        assert cs.to_dict()["references_without_segments"] == 1
    # a segment that shares area and holds the centroid is associated by (a)
    half = box(4, 4, 6, 8)  # crosses the courtyard's upper wall (y 7 .. 8)
    ov2 = compute_overlap(ref, ObjectSet.from_geometries([half]))
    assert ov2.n_pairs == 1
    assert clinton_segmentation(ov2, rule="centroid").d.size == 1
    assert clinton_segmentation(ov2, rule="overlap").d.size == 0


def test_clinton_centroid_on_the_outline_counts_as_in():
    # the segment's centroid (2, 1) lies exactly on the reference's right edge x = 2
    ref = ObjectSet.from_geometries([box(0, 0, 2, 2)])
    sub = ObjectSet.from_geometries([box(1.5, 0.5, 2.5, 1.5)])
    ov = compute_overlap(ref, sub)
    assert ov.values.tolist() == [0.5]  # shares area; 0.5 of the segment, 1/8 of the reference
    cs = clinton_segmentation(ov, rule="centroid")
    assert cs.d.size == 1
    assert clinton_segmentation(ov, rule="overlap").d.size == 0


# --- the property: pixel size never changes a decision -------------------------

def _rect_labels(rects: list[tuple[int, int, int, int]], shape=(14, 14)) -> np.ndarray:
    lab = np.zeros(shape, np.int32)
    for k, (r, c, h, w) in enumerate(rects, start=1):
        lab[r:r + h, c:c + w] = k  # later rectangles cover earlier ones
    return lab


_rect = st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(1, 6), st.integers(1, 6))


def _decisions(ref: np.ndarray, sub: np.ndarray, pixel: float) -> dict:
    ov = _overlap(ref, sub, pixel)
    out: dict = {"pairs": (ov.rows.tolist(), ov.cols.tolist())}
    runs = [("bgm", {}), ("hoover", {"threshold": 0.6}), ("hoover", {"threshold": 2 / 3}),
            ("hoover", {"threshold": 0.75}), ("mom", {}), ("mom", {"min_overlap": 0.5}),
            ("mom", {"min_overlap": 1 / 3}), ("iou", {"threshold": 0.5}),
            ("iou", {"threshold": 1 / 3}), ("iou", {"threshold": 0.7}),
            ("iou", {"threshold": 0.2})]
    for name, params in runs:
        m = match(ov, name, **params)
        a = m.arrays
        key = f"{name}{sorted(params.items())}"
        out[key] = (a.ref_ptr.tolist(), a.ref_idx.tolist(), a.sub_ptr.tolist(),
                    a.sub_idx.tolist(), a.kind.tolist(), m.missed.tolist(),
                    m.false_alarms.tolist())
    pq = panoptic_quality(ov)
    out["pq"] = (pq.tp, pq.fp, pq.fn, repr((pq.pq, pq.sq, pq.rq)), pq.reference.tolist(),
                 pq.submission.tolist())
    for rule in ("overlap", "all"):
        cs = clinton_segmentation(ov, rule=rule)
        out[f"clinton-{rule}"] = (cs.reference.tolist(), cs.submission.tolist())
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_rect, min_size=0, max_size=5), st.lists(_rect, min_size=0, max_size=5))
def test_pixel_size_never_changes_a_decision(ref_rects, sub_rects):
    ref, sub = _rect_labels(ref_rects), _rect_labels(sub_rects)
    want = _decisions(ref, sub, 1.0)
    for pixel in PIXEL_SIZES[1:]:
        assert _decisions(ref, sub, pixel) == want, pixel


def test_shifted_halves_are_exact_halves():
    # many exact halves at once (strips and squares shifted by half their size)
    ref = np.zeros((40, 40), np.int32)
    sub = np.zeros((40, 40), np.int32)
    k = 0
    for r in range(0, 40, 5):
        for c in range(0, 36, 12):
            k += 1
            ref[r:r + 2, c:c + 6] = k
            sub[r:r + 2, c + 2:c + 8] = k  # shares 4 of 6 columns: IoU = 8/16 = 1/2
    for pixel in PIXEL_SIZES:
        ov = _overlap(ref, sub, pixel)
        assert set(ov.iou.tolist()) == {0.5}
        assert panoptic_quality(ov).tp == 0
        assert len(match(ov, "iou", threshold=0.5).arrays) == k


def test_scene_scores_do_not_depend_on_the_pixel_size():
    # a crop of the bundled shifted submission (exact halves are common there),
    # scored end to end at five pixel sizes: the same counts, PQ and Clinton pairs
    from pathlib import Path

    import rasterio
    from rasterio.windows import Window

    import geoeval

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    win = Window(850, 100, 450, 300)  # holds four of the exact halves
    with rasterio.open(sample / "reference.tif") as r, \
            rasterio.open(sample / "submissions" / "s8_shifted.tif") as s:
        ref, sub = r.read(1, window=win), s.read(1, window=win)

    def run(pixel: float) -> dict:
        t = Affine(pixel, 0, 500000.0, 0, -pixel, 4000000.0)
        res = geoeval.score((ref, t), (sub, t), matchers=["bgm", "hoover", "iou"],
                            geometry_measures="pq,clinton")
        out = {}
        for name, r in res.results.items():
            m = r.matching
            out[name] = (m.missed.tolist(), m.false_alarms.tolist(), m.arrays.ref_idx.tolist(),
                         m.arrays.sub_idx.tolist(), m.arrays.kind.tolist(), r.precision, r.recall)
        g = res.to_dict()["geometry"]
        out["pq"] = (g["pq"]["tp"], g["pq"]["fp"], g["pq"]["fn"], g["pq"]["pq"])
        out["clinton"] = g["clinton"]["pairs"]
        return out

    want = run(1.0)
    # exact halves: the iou matcher (IoU ≥ ½) takes them, PQ (IoU > ½) does not
    assert want["pq"][0] < len(want["iou"][2])
    for pixel in PIXEL_SIZES[1:]:
        assert run(pixel) == want, pixel


def test_at_most_is_not_above_and_never_for_undefined_ratios():
    from geoeval.thresholds import at_most

    num = np.array([0.1 + 0.2, 0.30000001, 0.0, np.nan, 1.0])
    den = np.array([1.0, 1.0, 1.0, 1.0, 0.0])
    assert at_most(num, den, 0.3).tolist() == [True, False, True, False, False]
    # counts: exact
    assert at_most(np.array([3.0, 4.0]) * 0.09, np.array([10.0, 10.0]) * 0.09, 0.3,
                   unit=0.09).tolist() == [True, False]


def test_robin_completeness_at_eps2_is_accepted():
    # a detection whose area differs from the reference's by exactly eps2 of the
    # larger one (m2 = eps2 up to rounding) is accepted, as "at most" says
    from geoeval.measures.localization.boxes import robin_measures
    from geoeval.thresholds import at_most

    gt = np.array([[0.0, 0.0, 10.0, 10.0]])
    det = np.array([[0.0, 0.0, 10.0, 8.5]])  # |100 - 85| / 100 = 0.15
    _, m2, _ = robin_measures(det, gt)
    assert at_most(m2, 1.0, 0.15).tolist() == [True]

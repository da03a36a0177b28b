"""Objects that overlap others of their own side: every score stays in [0, 1].

Hand-worked scenes (duplicated polygons, overlapping detections, nested
polygons), the grouped-union helper against shapely per group, and a hypothesis
property test on random box scenes checked against pixel counting.
"""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shapely import box

import geoeval
from geoeval.matching import MATCHERS
from geoeval.matching.areas import overlapping_objects, union_areas
from geoeval.objects import ObjectSet
from geoeval.overlap import grouped_union_area
from geoeval.scoring import score_objects

A = (0, 0, 10, 10)
B = (20, 0, 30, 10)
C = (40, 0, 50, 10)


def objs(*boxes):
    return ObjectSet.from_geometries([box(*b) for b in boxes])


def run(ref, sub, **kw):
    kw.setdefault("resolution", 1.0)
    kw.setdefault("n_jobs", 1)
    return score_objects(objs(*ref), objs(*sub), matchers=MATCHERS, **kw)


def numbers(res, name):
    r = res.results[name]
    return (r.precision, r.recall, r.accuracy, r.matching.matched_overlap)


def instances(res, name):
    m = res.results[name].matching
    return sorted((i.reference, i.submission, i.overlap) for i in m.instances)


# --- hand-worked scenes ---------------------------------------------------------


def test_duplicated_submission_polygon():
    """The issue's scene: three references, the first submitted twice.

    Hoover used to give (1.5 + 1 + 1)/3 = 1.17: the over-detection {O0, O1} of
    R0 had s2 = (100 + 100)/100. Counted once, the duplicate is no better than
    the correct detection (score 1 each); the tie goes to the correct detection
    and the duplicate is a false alarm.
    """
    res = run([A, B, C], [A, A, B, C])
    assert res.overlap.union_area == 300.0
    for name in ("bgm", "hoover", "iou"):
        assert numbers(res, name) == (0.75, 1.0, 1.0, 300.0), name
        assert instances(res, name) == [((0,), (0,), 100.0), ((1,), (2,), 100.0),
                                        ((2,), (3,), 100.0)]
    # MOM maximises Σ C_ij: the duplicate joins R0 as a second fragment (200 > 100),
    # but the matched area counts the shared square once; the Mallows mass of O0 and
    # O1 is that of A twice, so every instance compares A with A: score 1.
    assert numbers(res, "mom") == (1.0, 1.0, 1.0, 300.0)
    assert instances(res, "mom")[0] == ((0,), (0, 1), 100.0)


def test_duplicated_reference_polygon():
    """Hoover used to take the under-detection O0 ← {R0, R1}: s1 = 200/100, score 1.5."""
    res = run([A, A], [A])
    assert res.overlap.union_area == 100.0
    for name in ("bgm", "hoover", "iou"):
        assert numbers(res, name) == (1.0, 0.5, 1.0, 100.0), name
    assert numbers(res, "mom") == (1.0, 1.0, 1.0, 100.0)
    assert instances(res, "mom") == [((0, 1), (0,), 100.0)]


def test_duplicated_on_both_sides():
    """BGM used to report (100 + 100)/100 = 2: two matched pairs over the same square."""
    res = run([A, A], [A, A])
    for name in ("bgm", "hoover", "iou"):
        assert numbers(res, name) == (1.0, 1.0, 1.0, 100.0), name
    mom = res.results["mom"]
    assert mom.matching.matched_overlap == 100.0 and mom.accuracy == 1.0


def test_two_overlapping_detections_over_one_reference():
    """R = [0,10]², O0 = [0,6]×[0,10], O1 = [4,10]×[0,10]; O0 ∩ O1 has area 20.

    C = 60, 60. Hoover (T = 0.6): each pair is a correct detection scoring
    (60/60 + 60/100)/2 = 0.8; the over-detection has U = O0 ∪ O1 = R, so
    s1 = |R ∩ U|/|U| = 1 and s2 = |R ∩ U|/|R| = 1 (the sums gave s2 = 1.2).
    """
    res = run([A], [(0, 0, 6, 10), (4, 0, 10, 10)])
    assert res.overlap.union_area == 100.0
    assert numbers(res, "bgm") == (0.5, 1.0, 0.6, 60.0)
    assert numbers(res, "iou") == (0.5, 1.0, 0.6, 60.0)  # IoU(R, O0) = 60/100
    assert numbers(res, "hoover") == (1.0, 1.0, 1.0, 100.0)
    assert instances(res, "hoover") == [((0,), (0, 1), 100.0)]
    p, r, acc, w = numbers(res, "mom")
    assert (p, r, w) == (1.0, 1.0, 100.0)
    assert 0.0 <= acc <= 1.0


def test_overlapping_detections_below_the_hoover_threshold():
    """O0 = [0,5]×[0,10] inside O1 = [0,5.5]×[0,10]: Σ C = 105 ≥ 0.6·100 but
    |R ∩ (O0 ∪ O1)| = 55 < 60, so there is no over-detection (and no pair reaches
    C ≥ 0.6|R|): no Hoover instance, accuracy undefined (the sums gave 1.025)."""
    res = run([A], [(0, 0, 5, 10), (0, 0, 5.5, 10)])
    hv = res.results["hoover"]
    assert hv.matching.instances == ()
    assert (hv.precision, hv.recall, hv.accuracy, hv.f1) == (0.0, 0.0, None, 0.0)
    # at T = 0.55 O1 alone is a correct detection, (55/55 + 55/100)/2; the
    # over-detection {O0, O1} (|U| = 55) scores the same and loses the tie
    res = run([A], [(0, 0, 5, 10), (0, 0, 5.5, 10)], hoover_threshold=0.55)
    assert numbers(res, "hoover") == (0.5, 1.0, pytest.approx((1 + 0.55) / 2), 55.0)
    assert instances(res, "hoover") == [((0,), (1,), 55.0)]


def test_nested_reference_polygon():
    """R1 = [2,4]² lies inside R0 = [0,10]²; O = R0.

    Hoover: correct (R0, O) scores 1; the under-detection O ← {R0, R1} has
    |O ∩ (R0 ∪ R1)| = 100 = |R0 ∪ R1| so also 1 (the sums gave s1 = 104/100,
    score 1.02); the tie goes to the correct detection.
    """
    res = run([A, (2, 2, 4, 4)], [A])
    assert res.overlap.union_area == 100.0
    for name in ("bgm", "hoover", "iou"):
        assert numbers(res, name) == (1.0, 0.5, 1.0, 100.0), name
    p, r, acc, w = numbers(res, "mom")
    assert (p, r, w) == (1.0, 1.0, 100.0)  # O ← {R0, R1}: Σ C = 104 > 100
    assert 0.0 <= acc <= 1.0


def test_nested_submission_polygon():
    """The mirror scene: the small square is a second detection inside the first."""
    res = run([A], [A, (2, 2, 4, 4)])
    for name in ("bgm", "hoover", "iou"):
        assert numbers(res, name) == (0.5, 1.0, 1.0, 100.0), name
    assert numbers(res, "mom")[:2] == (1.0, 1.0)


def test_duplicated_polygon_in_a_geopackage(tmp_path):
    """The issue's case end to end: a polygon duplicated in a GeoPackage layer."""
    ref, sub = tmp_path / "ref.gpkg", tmp_path / "sub.gpkg"
    crs = "EPSG:32631"
    gpd.GeoDataFrame(geometry=[box(*b) for b in (A, B, C)], crs=crs).to_file(ref)
    gpd.GeoDataFrame(geometry=[box(*b) for b in (A, A, B, C)], crs=crs).to_file(sub)
    res = geoeval.score(ref, sub, resolution=1.0, n_jobs=1)
    out = res.to_dict()["results"]
    assert out["hoover"]["accuracy"] == 1.0
    assert out["bgm"]["accuracy"] == 1.0
    for name in MATCHERS:
        for key in ("precision", "recall", "f1", "accuracy", "mallows"):
            v = out[name][key]
            assert v is None or 0.0 <= v <= 1.0, (name, key, v)


def test_raster_objects_never_overlap():
    """A labelled raster holds one label per pixel: no object is flagged (and no
    geometry is built to find out)."""
    from affine import Affine

    from geoeval.grid import LabelGrid

    labels = np.array([[1, 1, 2], [0, 2, 2]], dtype=np.uint8)
    grid = LabelGrid(labels, Affine.identity(), None, 0)
    objects = ObjectSet(ids=np.array([1, 2]), areas=np.array([2.0, 3.0]), grid=grid)
    assert overlapping_objects(objects).tolist() == [False, False]
    assert "polygons" not in objects.__dict__


def test_overlapping_objects_ignores_touching():
    o = objs((0, 0, 1, 1), (1, 0, 2, 1), (1.5, 0, 3, 1), (5, 5, 6, 6))
    assert overlapping_objects(o).tolist() == [False, True, True, False]


# --- the grouped union against shapely, group by group -----------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 6), st.integers(1, 4),
                          st.integers(1, 4), st.integers(0, 4)), min_size=1, max_size=14))
def test_union_areas_match_shapely_per_group(items):
    geoms = np.array([box(x, y, x + w, y + h) for x, y, w, h, _ in items], dtype=object)
    group = np.array([g for *_, g in items])
    expected = np.array([shapely.area(shapely.union_all(geoms[group == g])) for g in range(5)])
    areas = shapely.area(geoms)
    got = union_areas(areas, group, 5, np.ones(len(items), bool), lambda k: geoms[k])
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-9)
    np.testing.assert_allclose(grouped_union_area(geoms, group, 5), expected, atol=1e-9)


# --- property: random scenes with self-overlaps, checked by pixel counting ----

# integer boxes on a 12 × 12 grid: pixel counts give every area exactly
_box = st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(1, 3), st.integers(1, 3)).map(
    lambda t: (t[0], t[1], min(t[0] + t[2], 12), min(t[1] + t[3], 12)))
# a side: some boxes, then some of them repeated (exact duplicates)
_side = st.lists(_box, min_size=0, max_size=5).flatmap(
    lambda bs: st.lists(st.sampled_from(bs), max_size=2).map(lambda d: bs + d) if bs
    else st.just(bs))


def _mask(b):
    m = np.zeros((12, 12), dtype=bool)
    m[b[1]:b[3], b[0]:b[2]] = True
    return m


def _union(masks):
    out = np.zeros((12, 12), dtype=bool)
    for m in masks:
        out |= m
    return out


def _in_unit(v):
    return v is None or (isinstance(v, float) and math.isnan(v)) or 0.0 <= v <= 1.0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_side, _side, st.sampled_from([0.51, 0.6, 0.8]))
def test_every_score_in_unit_interval(ref, sub, t):
    res = score_objects(objs(*ref), objs(*sub), matchers=MATCHERS, hoover_threshold=t,
                        resolution=1.0, n_jobs=1)
    rm = [_mask(b) for b in ref]
    sm = [_mask(b) for b in sub]
    union = int(_union(rm + sm).sum())
    assert res.overlap.union_area == union
    for name, r in res.results.items():
        for key, v in (("precision", r.precision), ("recall", r.recall), ("f1", r.f1),
                       ("accuracy", r.accuracy),
                       ("mallows", None if r.mallows is None else r.mallows.scene)):
            assert _in_unit(v), (name, key, v, ref, sub)
        matched = np.zeros((12, 12), dtype=bool)
        for inst in r.matching.instances:
            ru = _union([rm[i] for i in inst.reference])
            su = _union([sm[j] for j in inst.submission])
            cover = ru & su
            assert inst.overlap == int(cover.sum()), (name, inst)  # counted once, by pixels
            matched |= cover
            if inst.score is not None:
                assert 0.0 <= inst.score <= 1.0 + 1e-12, (name, inst)
            if name == "hoover":  # (s1 + s2)/2 from the unions, by pixels
                k = int(cover.sum())
                assert inst.score == pytest.approx((k / su.sum() + k / ru.sum()) / 2)
        assert r.matching.matched_overlap == int(matched.sum()), name
        if r.mallows is not None:
            s = r.mallows.scores
            assert np.all(np.isnan(s) | ((s >= 0) & (s <= 1))), name


@pytest.mark.parametrize("seed", range(6))
def test_union_area_per_group_equals_the_union_of_everything(seed):
    """The union area is computed group by group (only groups with a same-side
    overlap get a real union); it must equal one union of all objects."""
    import shapely

    from geoeval.objects import ObjectSet
    from geoeval.overlap import compute_overlap

    rng = np.random.default_rng(seed)

    def boxes(n):
        x, y = rng.uniform(0, 60, n), rng.uniform(0, 60, n)
        w, h = rng.uniform(1, 6, n), rng.uniform(1, 6, n)
        return shapely.box(x, y, x + w, y + h)

    ref, sub = boxes(40), boxes(45)
    if seed % 2:  # duplicated detections, shifted a little: the submission overlaps itself
        sub = np.concatenate([sub, shapely.transform(sub[:10], lambda xy: xy + 0.5)])
    if seed % 3 == 0:  # and the reference too
        ref = np.concatenate([ref, shapely.transform(ref[:5], lambda xy: xy + 0.3)])
    ov = compute_overlap(ObjectSet.from_geometries(ref), ObjectSet.from_geometries(sub))
    want = float(shapely.area(shapely.union_all(np.concatenate([ref, sub]))))
    assert ov.union_area == pytest.approx(want, rel=1e-12)

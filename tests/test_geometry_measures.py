"""Geometry measures: PQ, Clinton et al. (2010), PoLiS, Boundary IoU.

Values worked out by hand (two squares offset by known amounts, a 3 × 3 scene),
brute force on small random scenes, and Boundary IoU against a binary-mask
implementation written here the way the official code does it.
"""

from __future__ import annotations

import itertools
import json
import shutil

import numpy as np
import pytest
import shapely
from scipy import ndimage
from shapely.geometry import Polygon, box

from geoeval.io.raster import objects_from_labels
from geoeval.measures.boundary_iou import boundary_iou
from geoeval.measures.clinton import clinton_segmentation
from geoeval.measures.geometry import parse_measures
from geoeval.measures.panoptic import panoptic_quality
from geoeval.measures.polis import polis
from geoeval.objects import ObjectSet
from geoeval.overlap import compute_overlap
from geoeval.scoring import score_objects
from tests.corpus.conftest import run_cli


def objs(geoms):
    return ObjectSet.from_geometries(list(geoms))


def ov(refs, subs):
    return compute_overlap(objs(refs), objs(subs))


# --- PoLiS (Avbelj et al. 2015, eq. 1) ---------------------------------------------

def test_polis_two_squares_by_hand():
    a = box(0, 0, 10, 10)
    # shifted by (2, 0): A's vertices (0,0),(0,10) are 2 from ∂B, the others on it;
    # B's (12,0),(12,10) are 2 from ∂A: p = ½·4/4 + ½·4/4 = 1
    # shifted by (3, 4): each side's vertex distances 5, 4, 3, 3 (sum 15): p = 15/4
    got = polis(np.array([a, a, a]),
                np.array([box(2, 0, 12, 10), box(3, 4, 13, 14), box(0, 0, 10, 10)]))
    np.testing.assert_allclose(got, [1.0, 3.75, 0.0], atol=1e-12)


def test_polis_ignores_collinear_vertices_and_counts_closing_once():
    a = box(0, 0, 10, 10)
    dense = Polygon([(0, 0), (5, 0), (10, 0), (10, 5), (10, 10), (5, 10), (0, 10)])
    b = box(3, 4, 13, 14)
    np.testing.assert_allclose(polis(np.array([dense]), np.array([b])), [3.75])
    np.testing.assert_allclose(polis(np.array([a]), np.array([dense])), [0.0], atol=1e-12)


def test_polis_brute_force_with_holes_and_multipolygons():
    rng = np.random.default_rng(3)
    a = np.array([box(0, 0, 10, 10).difference(box(3, 3, 6, 6)),
                  shapely.union(box(0, 0, 2, 2), box(5, 5, 8, 9)),
                  shapely.Point(4, 4).buffer(3, quad_segs=4)], dtype=object)
    b = np.array(
        [shapely.transform(g, lambda c: c + rng.uniform(-1, 1, 2)) for g in a], dtype=object)

    def corners(g):
        out = []
        for part in shapely.get_parts(g):
            for ring in [part.exterior, *part.interiors]:
                pts = list(ring.coords)[:-1]
                out += [p for k, p in enumerate(pts)   # drop collinear vertices
                        if abs(shapely.Polygon([pts[k - 1], p, pts[(k + 1) % len(pts)]]).area)
                        > 1e-12]
        return out

    def slow(x, y):
        va, vb = corners(x), corners(y)
        da = sum(shapely.Point(p).distance(y.boundary) for p in va) / len(va)
        db = sum(shapely.Point(p).distance(x.boundary) for p in vb) / len(vb)
        return (da + db) / 2

    np.testing.assert_allclose(polis(a, b), [slow(x, y) for x, y in zip(a, b, strict=True)])


# --- Boundary IoU (Cheng et al. 2021, eq. 2) ----------------------------------------

def test_boundary_iou_rectangles_by_hand():
    g, p = box(0, 0, 10, 10), box(2, 0, 12, 10)
    # d = 1: bands of area 100 − 64 = 36 each; they share the strips y < 1 and y > 9
    # over x in [2, 10] (2 × 8 = 16): 16 / (36 + 36 − 16) = 2/7
    # d = 5: the bands are the whole squares: mask IoU 80 / 120
    got = boundary_iou(np.array([g, g, g]), np.array([p, p, g]), np.array([1.0, 5.0, 1.0]))
    np.testing.assert_allclose(got, [2 / 7, 2 / 3, 1.0])
    # default d: 2 % of the reference's diagonal, 0.02·√200 ≈ 0.283:
    # bands 100 − (10 − 2d)², shared strips 2 · 8 · d
    d = 0.02 * np.sqrt(200)
    band, inter = 100 - (10 - 2 * d) ** 2, 16 * d
    np.testing.assert_allclose(boundary_iou(np.array([g]), np.array([p])),
                               [inter / (2 * band - inter)])


def mask_boundary_iou(gt: np.ndarray, dt: np.ndarray, d: int) -> float:
    """Boundary IoU on binary masks as the official code does it: pad with zeros,
    erode d times with a 3 × 3 square, the band is the mask minus its erosion."""
    def band(m):
        padded = np.pad(m, 1)
        eroded = ndimage.binary_erosion(padded, np.ones((3, 3), bool), iterations=d)
        return m & ~eroded[1:-1, 1:-1]

    gb, db = band(gt), band(dt)
    return float((gb & db).sum() / (gb | db).sum())


@pytest.mark.parametrize("d", [1, 2, 3])
def test_boundary_iou_matches_masks(d):
    labels_g = np.zeros((40, 40), np.int32)
    labels_p = np.zeros((40, 40), np.int32)
    labels_g[5:20, 4:30] = 1                 # rectangles: exact agreement
    labels_p[7:21, 6:33] = 1
    labels_g[25:37, 5:20] = 2                # L-shapes: a reflex corner each
    labels_g[25:30, 20:34] = 2
    labels_p[26:37, 5:21] = 2
    labels_p[26:31, 21:35] = 2
    ref, sub = objects_from_labels(labels_g), objects_from_labels(labels_p)
    got = boundary_iou(ref.polygons, sub.polygons, float(d))
    want = [mask_boundary_iou(labels_g == k, labels_p == k, d) for k in (1, 2)]
    assert got[0] == pytest.approx(want[0], abs=1e-12)
    # at the reflex corner the polygon band is rounded (Euclidean), the mask band
    # square (chessboard): here they differ by less than 0.005
    assert got[1] == pytest.approx(want[1], abs=0.01)


# --- Panoptic Quality (Kirillov et al. 2019, eq. 1) ----------------------------------

def test_pq_hand_scene():
    refs = [box(0, 0, 10, 10), box(20, 0, 30, 10), box(40, 0, 50, 10)]
    subs = [box(0, 0, 10, 8),     # IoU 0.8: TP
            box(20, 0, 30, 5),    # IoU exactly 0.5: not a match (strict)
            box(42, 0, 52, 10)]   # IoU 80/120: TP
    q = panoptic_quality(ov(refs, subs))
    assert (q.tp, q.fp, q.fn) == (2, 1, 1)
    sq = (0.8 + 2 / 3) / 2
    assert q.sq == pytest.approx(sq)
    assert q.rq == pytest.approx(2 / 3)
    assert q.pq == pytest.approx(sq * 2 / 3)
    assert q.to_dict()["pq"] == pytest.approx(0.48888888888)


def test_pq_self_overlapping_submissions():
    # two submitted objects above 0.5 with one reference (they overlap each other):
    # the matching keeps one pair, the larger IoU (0.9); the other is a false alarm
    refs = [box(0, 0, 10, 10), box(20, 0, 30, 10)]
    subs = [box(0, 0, 10, 8), box(0, 0, 10, 9), box(20, 0, 30, 10)]
    q = panoptic_quality(ov(refs, subs))
    assert (q.tp, q.fp, q.fn) == (2, 1, 0)
    pairs = sorted(zip(q.reference.tolist(), q.submission.tolist(), strict=True))
    assert pairs == [(0, 1), (1, 2)]
    assert q.sq == pytest.approx((0.9 + 1.0) / 2)
    assert q.pq == pytest.approx(1.9 / 2.5)


def brute_pq(refs, subs):
    """Every one-to-one assignment with IoU > 0.5, the largest (then best) one."""
    iou = np.array([[r.intersection(s).area / r.union(s).area for s in subs] for r in refs])
    best = (0, 0.0)
    n = max(len(refs), len(subs))
    for perm in itertools.permutations(range(n), len(refs)):
        pairs = [iou[i, j] for i, j in enumerate(perm) if j < len(subs) and iou[i, j] > 0.5]
        best = max(best, (len(pairs), sum(pairs)))
    tp, total = best
    fp, fn = len(subs) - tp, len(refs) - tp
    return tp, fp, fn, total / (tp + fp / 2 + fn / 2)


@pytest.mark.parametrize("seed", range(6))
def test_pq_brute_force(seed):
    rng = np.random.default_rng(seed)
    refs = [box(x, 0, x + 8, 8) for x in range(0, 50, 10)][: rng.integers(1, 6)]
    subs = [box(x + dx, dy, x + dx + w, dy + 8)
            for x, dx, dy, w in zip(rng.choice(np.arange(0, 50, 10), 5),
                                    rng.uniform(-3, 3, 5), rng.uniform(-3, 3, 5),
                                    rng.uniform(5, 11, 5), strict=True)][: rng.integers(0, 6)]
    q = panoptic_quality(ov(refs, subs))
    tp, fp, fn, pq = brute_pq(refs, subs)
    assert (q.tp, q.fp, q.fn) == (tp, fp, fn)
    assert q.pq == pytest.approx(pq)


def test_pq_edge_cases():
    r = [box(0, 0, 1, 1)]
    nothing = panoptic_quality(ov(r, []))        # nothing detected
    assert (nothing.tp, nothing.fn, nothing.pq, nothing.rq) == (0, 1, 0.0, 0.0)
    assert nothing.to_dict()["sq"] is None
    empty = panoptic_quality(ov([], [])).to_dict()   # nothing at all
    assert empty["pq"] is None and empty["sq"] is None and empty["rq"] is None
    one = panoptic_quality(ov(r, r))
    assert (one.pq, one.sq, one.rq) == (1.0, 1.0, 1.0)
    none = panoptic_quality(ov(r, [box(0.6, 0, 1.6, 1)])).to_dict()   # overlap, no match
    assert none["sq"] is None and none["pq"] == 0.0


# --- Clinton et al. (2010) -----------------------------------------------------------

def clinton_scene():
    refs = [box(0, 0, 10, 10), box(20, 0, 30, 10)]
    subs = [box(0, 0, 6, 10),     # 60 % of x1: over 0.4, under 0
            box(6, 0, 10, 10),    # inside x1: over 0.6, under 0
            box(9, 9, 20, 20),    # 1 % of each: associated by no rule
            box(24, -20, 26, 30)]  # 20 % of both ways; centroids inside each other
    return ov(refs, subs)


def test_clinton_overlap_rule_by_hand():
    c = clinton_segmentation(clinton_scene())
    assert c.reference.tolist() == [0, 0] and c.submission.tolist() == [0, 1]
    np.testing.assert_allclose(c.over, [0.4, 0.6])
    np.testing.assert_allclose(c.under, [0.0, 0.0])
    np.testing.assert_allclose(c.d, [np.sqrt(0.08), np.sqrt(0.18)])
    d = c.to_dict()
    assert d["over_segmentation"] == pytest.approx(0.5)
    assert d["d"] == pytest.approx((np.sqrt(0.08) + np.sqrt(0.18)) / 2)
    assert d["references_without_segments"] == 1


def test_clinton_centroid_rule_by_hand():
    c = clinton_segmentation(clinton_scene(), rule="centroid")
    assert list(zip(c.reference.tolist(), c.submission.tolist(), strict=True)) == [
        (0, 0), (0, 1), (1, 3)]
    np.testing.assert_allclose(c.d, [np.sqrt(0.08), np.sqrt(0.18), 0.8])
    assert c.to_dict()["d_per_reference_mean"] == pytest.approx(
        ((np.sqrt(0.08) + np.sqrt(0.18)) / 2 + 0.8) / 2)
    assert clinton_segmentation(clinton_scene(), rule="all").d.size == 3


def test_clinton_nothing_detected():
    d = clinton_segmentation(ov([box(0, 0, 1, 1)], [])).to_dict()
    assert d["pairs"] == 0 and d["d"] is None and d["references_without_segments"] == 1


# --- wiring: score_objects, JSON, CLI ------------------------------------------------

def test_score_objects_geometry_key():
    refs = [box(0, 0, 10, 10), box(20, 0, 30, 10), box(40, 0, 50, 10)]
    subs = [box(0, 0, 10, 8), box(20, 0, 30, 5), box(42, 0, 52, 10)]
    res = score_objects(objs(refs), objs(subs), matchers=("iou", "mom"),
                        geometry_measures="all", boundary_width=1.0)
    g = json.loads(res.to_json())["geometry"]
    assert g["measures"] == ["pq", "clinton", "polis", "boundary_iou"]
    assert g["pq"]["tp"] == 2
    # the IoU matcher (IoU ≥ 0.5) also takes the pair at exactly 0.5
    assert g["polis"]["iou"]["pairs"] == 3
    # box(42..52) vs box(40..50) shifted by 2: PoLiS 1 (hand, as above)
    assert g["polis"]["iou"]["values"][2] == pytest.approx(1.0)
    assert g["boundary_iou"]["width"] == 1.0
    assert g["boundary_iou"]["matchers"]["iou"]["values"][2] == pytest.approx(2 / 7)
    nothing = score_objects(objs(refs), objs([]), matchers=("iou",), geometry_measures="all")
    g = nothing.to_dict()["geometry"]
    assert g["pq"]["sq"] is None and g["clinton"]["d"] is None
    assert g["polis"]["iou"]["mean"] is None and g["boundary_iou"]["matchers"]["iou"][
        "median"] is None
    assert score_objects(objs(refs), objs(subs), matchers=("iou",)).to_dict()["geometry"] is None


def test_default_width_is_at_least_one_pixel():
    ref = np.zeros((20, 20), np.int32)
    sub = np.zeros_like(ref)
    ref[2:12, 2:12] = 1
    sub[2:12, 4:14] = 1
    # 2 % of the diagonal √200 is 0.28 pixel: the default is one pixel, as the
    # official code's (at least one erosion): 2/7 as by hand above
    res = score_objects(objects_from_labels(ref), objects_from_labels(sub), matchers=("iou",),
                        geometry_measures="boundary_iou")
    g = res.to_dict()["geometry"]["boundary_iou"]
    assert g["width"] is None and "pixel" in g["width_rule"]
    assert g["matchers"]["iou"]["values"] == [pytest.approx(2 / 7)]
    # vector inputs: no pixel, the 2 % rule alone
    v = score_objects(objs([box(2, 2, 12, 12)]), objs([box(4, 2, 14, 12)]), matchers=("iou",),
                      geometry_measures="boundary_iou").to_dict()["geometry"]["boundary_iou"]
    d = 0.02 * np.sqrt(200)
    band, inter = 100 - (10 - 2 * d) ** 2, 16 * d
    assert v["matchers"]["iou"]["values"] == [pytest.approx(inter / (2 * band - inter))]


def test_parse_measures():
    assert parse_measures("pq, Boundary-IoU") == ("pq", "boundary_iou")
    assert parse_measures(["all"]) == ("pq", "clinton", "polis", "boundary_iou")
    from geoeval.errors import InputError

    with pytest.raises(InputError, match="unknown geometry measure 'iou'"):
        parse_measures("pq,iou")
    with pytest.raises(InputError, match="boundary_width"):
        score_objects(objs([box(0, 0, 1, 1)]), objs([]), matchers=("iou",),
                      geometry_measures="pq", boundary_width=0)


def test_cli_measures(tmp_path):
    import rasterio
    from affine import Affine

    ref = np.zeros((30, 30), np.int32)
    sub = np.zeros_like(ref)
    ref[2:12, 2:12] = 1
    sub[2:12, 4:14] = 1          # shifted by 2 pixels: PoLiS 1, IoU 80/120
    ref[15:25, 15:25] = 2        # missed
    for name, arr in (("ref.tif", ref), ("sub.tif", sub)):
        with rasterio.open(tmp_path / name, "w", driver="GTiff", width=30, height=30,
                           count=1, dtype="int32", crs="EPSG:32631",
                           transform=Affine(1, 0, 500000, 0, -1, 5000000)) as dst:
            dst.write(arr, 1)
    run = run_cli("score", "ref.tif", "sub.tif", "-m", "iou", "--measures",
                          "pq,clinton,polis,boundary-iou", "--boundary-width", "1",
                          "--json", "r.json", cwd=tmp_path, columns=80)
    assert run.code == 0, run.stderr
    assert "geometry measures" in run.stdout
    assert max(len(line) for line in run.stdout.splitlines()) <= 80
    g = json.loads((tmp_path / "r.json").read_text())["geometry"]
    assert g["pq"]["pq"] == pytest.approx((2 / 3) / (1 + 0.5))
    assert g["polis"]["iou"]["values"] == [pytest.approx(1.0)]
    assert g["boundary_iou"]["matchers"]["iou"]["values"] == [pytest.approx(2 / 7)]
    bad = run_cli("score", "ref.tif", "sub.tif", "--measures", "nope", cwd=tmp_path)
    assert bad.code == 2 and "Traceback" not in bad.stderr
    for side in ("r", "s"):
        (tmp_path / side).mkdir()
        shutil.copy(tmp_path / f"{'ref' if side == 'r' else 'sub'}.tif", tmp_path / side / "a.tif")
    folders = run_cli("score", "r", "s", "--measures", "pq", cwd=tmp_path)
    assert folders.code == 2 and "--measures takes one scene" in folders.stderr

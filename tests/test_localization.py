"""Localisation metrics (003 Table 2) on hand-computed cases and against brute force."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from geoeval.errors import InputError
from geoeval.measures import localization as loc
from geoeval.measures.localization import METRICS, ContourPair, MaskPair, get_metric


# ---------- boxes ----------
def test_robin_box_metrics_hand_values():
    ref = [0, 0, 10, 10]
    assert loc.robin_localization(ref, [10, 0, 20, 10]) == pytest.approx(0.5)  # atan(1)·2/π
    want = 2 / math.pi * math.atan(0.5)
    assert loc.robin_localization(ref, [0, 5, 10, 15]) == pytest.approx(want)
    assert loc.robin_localization(ref, ref) == 0.0
    assert loc.robin_completeness(ref, [0, 0, 10, 5]) == pytest.approx(0.5)
    assert loc.robin_completeness([0, 0, 10, 5], ref) == pytest.approx(0.5)
    assert loc.robin_correctness(ref, [0, 0, 10, 20]) == pytest.approx(0.5)
    # translation leaves completeness and correctness at 0
    assert loc.robin_completeness(ref, [3, 4, 13, 14]) == 0.0
    assert loc.robin_correctness(ref, [3, 4, 13, 14]) == 0.0


def test_box_batch_broadcasts():
    out = loc.robin_localization([0, 0, 10, 10], np.array([[0, 0, 10, 10], [10, 0, 20, 10]]))
    np.testing.assert_allclose(out, [0.0, 0.5])


# ---------- contours: two parallel lines two pixels apart ----------
def _lines():
    a = np.zeros((5, 5), bool)
    a[1] = True
    b = np.zeros((5, 5), bool)
    b[3] = True
    return a, b


def test_count_based_contour_metrics():
    a, b = _lines()  # 5 + 5 contour pixels, none shared, card(I) = 25
    eps = 1e-3
    assert loc.localization_error(a, b) == pytest.approx(10 / 25)
    assert loc.under_detection_error(a, b) == pytest.approx(1.0)
    assert loc.over_detection_error(a, b) == pytest.approx(5 / 20)
    assert loc.signal_to_noise_ratio(a, b) == pytest.approx(math.sqrt(5 / 10))
    assert loc.signal_to_noise_ratio(a, a) == math.inf
    assert loc.root_mean_square(a, b) == pytest.approx(math.sqrt(0.4))
    assert loc.lq_distance(a, b, q=1) == pytest.approx(0.4)
    assert loc.lq_distance(a, b, q=3) == pytest.approx(0.4 ** (1 / 3))
    assert loc.kullback_distance(a, b) == pytest.approx(10 * (1 - eps) * math.log(1 / eps) / 25)
    s = 10 * math.sqrt(eps) + 15 * eps
    assert loc.bhattacharyya_distance(a, b) == pytest.approx(-math.log(s / 25))
    assert loc.localization_error(a, b, n_pixels=100) == pytest.approx(0.1)


def test_distance_contour_metrics():
    a, b = _lines()
    assert loc.mean_distance(a, b) == pytest.approx(2.0)
    assert loc.mean_squared_distance(a, b) == pytest.approx(4.0)
    assert loc.figure_of_merit(a, b) == pytest.approx(1 / (1 + 4 / 9))
    assert loc.hausdorff_distance(a, b) == pytest.approx(2.0)
    assert loc.baddeley_distance(a, b, p=1) == pytest.approx(20 / 25)
    assert loc.baddeley_distance(a, b, p=2) == pytest.approx(math.sqrt(40 / 25))
    assert loc.odet_over_detection(a, b, n=1) == pytest.approx(0.4)
    assert loc.odet_over_detection(a, b, n=2) == pytest.approx(0.16)
    assert loc.odet_under_detection(a, b, n=1) == pytest.approx(0.4)
    assert loc.odet_over_detection(a, a) == 0.0  # no over-detected pixel: 0 by convention


def test_partial_overlap_contours():
    a = np.zeros((5, 5), bool)
    a[1] = True
    b = np.zeros((5, 5), bool)
    b[1, :3] = True  # b inside a: 3 shared pixels
    assert loc.under_detection_error(a, b) == pytest.approx(2 / 5)
    assert loc.over_detection_error(a, b) == 0.0
    assert loc.mean_distance(a, b) == 0.0
    assert loc.odet_under_detection(a, b, n=1) == pytest.approx((1 + 2) / 2 / 5)
    assert loc.hausdorff_distance(a, b) == pytest.approx(2.0)


def _jensen_brute(g, res, alpha=3.0, eps=1e-3):
    gg = np.where(g, 1.0, eps)
    gl = np.where(res, 1.0, eps)

    def h(x):
        return np.log2((x**alpha).sum()) / (1 - alpha)

    a = (gg + gl) / 2
    return h(np.sqrt(a * gg)) - (h(a) + h(gg)) / 2


def _brute_contour(g, res, n):
    pg, pl = np.argwhere(g), np.argwhere(res)
    d_l = cdist(pl, pg).min(axis=1)  # d(k, I_gt^c), k in I_l^c
    d_g = cdist(pg, pl).min(axis=1)
    over, under = d_l > 0, d_g > 0
    return {
        "dmoy": d_l.mean(), "dmoc": (d_l**2).mean(),
        "fom": (1 / (1 + d_l**2 / 9)).sum() / max(len(pg), len(pl)),
        "hau": max(d_l.max(), d_g.max()),
        "bad": ((d_l**3).sum() / n + (d_g**3).sum() / n) ** (1 / 3),
        "odi": ((d_l[over] / 5) ** 2).mean() if over.any() else 0.0,
        "udi": (d_g[under] / 5).mean() if under.any() else 0.0,
    }


@pytest.mark.parametrize("seed", range(5))
def test_contour_metrics_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    g = rng.random((3, 14, 12)) < 0.1
    res = rng.random((3, 14, 12)) < 0.12
    g[:, 0, 0] = res[:, 5, 5] = True  # never empty
    got = {
        "dmoy": loc.mean_distance(g, res), "dmoc": loc.mean_squared_distance(g, res),
        "fom": loc.figure_of_merit(g, res), "hau": loc.hausdorff_distance(g, res),
        "bad": loc.baddeley_distance(g, res, p=3), "odi": loc.odet_over_detection(g, res, n=2),
        "udi": loc.odet_under_detection(g, res, n=1),
    }
    for i in range(3):
        want = _brute_contour(g[i], res[i], 14 * 12)
        for k, v in want.items():
            assert got[k][i] == pytest.approx(v), k
        assert loc.jensen_distance(g[i], res[i]) == pytest.approx(_jensen_brute(g[i], res[i]))


def test_jensen_separation_and_asymmetry():
    a, b = _lines()
    assert loc.jensen_distance(a, a) == pytest.approx(0.0, abs=1e-12)
    c = a.copy()
    c[2, :2] = True
    assert loc.jensen_distance(a, c) != pytest.approx(loc.jensen_distance(c, a))


# ---------- masks: two 2-row bands of a 4 × 4 image overlapping on one row ----------
def _bands():
    g = np.zeros((4, 4), bool)
    g[0:2] = True
    res = np.zeros((4, 4), bool)
    res[1:3] = True
    return g, res  # a = b = c = d = 4


def test_mask_metrics_hand_values():
    g, res = _bands()
    assert loc.pascal_overlap(g, res) == pytest.approx(1 / 3)
    assert loc.henricsson_size_error(g, res) == 0.0
    assert loc.henricsson_mismatch_error(g, res) == pytest.approx(1.0)
    assert loc.yasnoff_over_detection(g, res) == pytest.approx(50.0)
    assert loc.yasnoff_under_detection(g, res) == pytest.approx(50.0)
    assert loc.yasnoff_distance_error(g, res) == pytest.approx(100 / 16 * 2.0)  # 4 pixels at 1
    assert loc.global_consistency_error(g, res) == pytest.approx(0.5)
    assert loc.local_consistency_error(g, res) == pytest.approx(0.5)
    assert loc.hamming_similarity(g, res) == pytest.approx(0.5)
    assert loc.hafiane_matching(g, res) == pytest.approx(1 / 3)
    assert loc.hafiane_weighted(g, res) == pytest.approx((1 / 3 + 0.2) / 1.2)
    assert loc.vinet_distance(g, res) == pytest.approx(8.0)
    assert loc.pixel_precision(g, res) == pytest.approx(0.5)
    assert loc.pixel_recall(g, res) == pytest.approx(0.5)


def test_identical_masks():
    g, _ = _bands()
    for m in METRICS.values():
        if m.representation != "mask" or m.slow:
            continue
        v = m.function(g, g, **m.params)
        assert m.as_dissimilarity(np.array([v]))[0] == pytest.approx(0.0, abs=1e-12), m.name


def test_single_pair_scores():
    g = np.zeros((6, 6), bool)
    g[1:3, 0:5] = True  # 10 pixels
    res = g.copy()
    res[3, 0:2] = True  # 12 pixels, contains g
    assert loc.single_pair_iou(g, res) == pytest.approx(10 / 12)
    assert loc.single_pair_bgm(g, res) == pytest.approx(10 / 12)
    assert loc.single_pair_hoover(g, res) == pytest.approx((1 + 10 / 12) / 2)
    gb, lb = _bands()  # both ratios 0.5 < T = 0.6: no correct detection
    assert loc.single_pair_hoover(gb, lb) == 0.0
    # the audit runs the Hoover matcher itself, so its rule holds: T = 0.5 is refused
    with pytest.raises(InputError, match=r"in \(0.5, 1\], got 0.5"):
        loc.single_pair_hoover(gb, lb, threshold=0.5)
    # both ratios exactly T: a correct detection (s1 = s2 = 6/10)
    g6, l6 = np.zeros((4, 5), bool), np.zeros((4, 5), bool)
    g6[0:2] = True
    l6[0:2, 0:3] = True
    l6[2, 0:4] = True
    assert loc.single_pair_hoover(g6, l6) == pytest.approx(0.6)


def _martin_brute(g, res):
    n = g.size
    e_gl, e_lg = np.zeros(g.shape), np.zeros(g.shape)
    for idx in np.ndindex(g.shape):
        rg = g if g[idx] else ~g
        rl = res if res[idx] else ~res
        e_gl[idx] = (rg & ~rl).sum() / rg.sum()
        e_lg[idx] = (rl & ~rg).sum() / rl.sum()
    return min(e_gl.sum(), e_lg.sum()) / n, np.minimum(e_gl, e_lg).sum() / n


def _hamming_brute(g, res):
    def dh(s1, s2):
        total = 0
        for r2 in (s2, ~s2):
            total += r2.sum() - max((r2 & r1).sum() for r1 in (s1, ~s1))
        return total

    return 1 - (dh(g, res) + dh(res, g)) / (2 * g.size)


@pytest.mark.parametrize("seed", range(6))
def test_segmentation_measures_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    g = rng.random((7, 9)) < rng.uniform(0.2, 0.6)
    res = rng.random((7, 9)) < rng.uniform(0.2, 0.6)
    gce, lce = _martin_brute(g, res)
    assert loc.global_consistency_error(g, res) == pytest.approx(gce)
    assert loc.local_consistency_error(g, res) == pytest.approx(lce)
    assert loc.hamming_similarity(g, res) == pytest.approx(_hamming_brute(g, res))


def test_yasnoff_distance_brute_force():
    rng = np.random.default_rng(3)
    g = rng.random((10, 10)) < 0.3
    res = rng.random((10, 10)) < 0.3
    wrong = np.argwhere(res & ~g)
    d = cdist(wrong, np.argwhere(g)).min(axis=1)
    assert loc.yasnoff_distance_error(g, res) == pytest.approx(100 / 100 * math.sqrt((d**2).sum()))


def test_hafiane_best_region_switch():
    # 10-pixel object in a 1 × 20 image shifted by s: a = d = 10 − s, b = c = s; past
    # s = 5 the object's best region is the result's background and HAF1 rises again
    g = np.zeros((1, 20), bool)
    g[0, :10] = True
    vals = [loc.hafiane_matching(g, np.roll(g, s, axis=1)) for s in (4, 5, 6)]
    np.testing.assert_allclose(vals, [6 / 14, 5 / 15, 6 / 14])


# ---------- pairs, registry, errors ----------
def test_pairs_batch_swap_and_contours():
    g, res = _bands()
    batch = np.stack([res, g, res])
    np.testing.assert_allclose(loc.pascal_overlap(g, batch), [1 / 3, 1, 1 / 3])
    a, b = _lines()
    p = ContourPair(a, np.stack([b, a]))
    s = p.swapped()
    np.testing.assert_allclose(loc.mean_distance.core(s), [2.0, 0.0])
    m = MaskPair(g, res)
    np.testing.assert_allclose(m.swapped().n_ref_only, m.n_res_only)
    sq = np.zeros((5, 5), bool)
    sq[1:4, 1:4] = True
    assert loc.mask_contour(sq).sum() == 8
    assert loc.mask_contour(np.ones((3, 3), bool)).sum() == 8  # the array edge is a boundary
    np.testing.assert_array_equal(loc.mask_box(sq), [1, 1, 4, 4])


def test_registry_conventions():
    assert len([m for m in METRICS.values() if m.source.startswith("Hemery")]) == 38
    assert get_metric("PAS").sense == "similarity"
    assert get_metric("snr").as_dissimilarity(np.array([np.inf]))[0] == -np.inf
    assert get_metric("fom").as_dissimilarity(np.array([0.25]))[0] == 0.75
    with pytest.raises(InputError, match="unknown metric"):
        get_metric("nope")
    with pytest.raises(InputError, match="batch sizes differ"):
        loc.pascal_overlap(np.zeros((2, 4, 4), bool), np.zeros((3, 4, 4), bool))


# ---------- readings of 003 Table 2 chosen by the paper's verdicts (issue 13, item 12) ----------
def test_kullback_over_the_result_contour():
    a, b = _lines()  # 5 + 5 contour pixels, none shared, card(I) = 25
    eps = 1e-3
    unit = (1 - eps) * math.log(1 / eps) / 25
    assert loc.kullback_distance(a, b, support="result") == pytest.approx(5 * unit)
    c = a | b  # 10 contour pixels, 5 of them on a
    assert loc.kullback_distance(a, c, support="result") == pytest.approx(5 * unit)
    assert loc.kullback_distance(c, a, support="result") == 0.0  # not symmetric (Table 3)
    assert loc.kullback_distance(a, a, support="result") == 0.0
    # triangle inequality: |C \ A| <= |B \ A| + |C \ B| for any three sets
    rng = np.random.default_rng(3)
    x, y, z = rng.random((3, 6, 6)) < 0.4
    assert loc.kullback_distance(x, z, support="result") <= (
        loc.kullback_distance(x, y, support="result")
        + loc.kullback_distance(y, z, support="result") + 1e-12)
    with pytest.raises(InputError, match="support"):
        loc.kullback_distance(a, b, support="all")


def test_bhattacharyya_and_jensen_on_dark_contours():
    a, b = _lines()
    eps = 1e-3
    # background pixels (15) are 1 in both images, the 10 contour pixels eps in one
    s = 15 * 1.0 + 10 * math.sqrt(eps)
    assert loc.bhattacharyya_distance(a, b, levels="background") == pytest.approx(-math.log(s / 25))
    assert loc.bhattacharyya_distance(a, a, levels="background") == pytest.approx(
        -math.log((20 + 5 * eps) / 25))  # no separation (Table 3)
    rng = np.random.default_rng(5)
    g, res = rng.random((2, 7, 9)) < 0.3
    assert loc.jensen_distance(g, res, levels="background") == pytest.approx(
        _jensen_brute(~g, ~res))  # swapping the levels = complementing the images
    assert loc.jensen_distance(g, g, levels="background") == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(InputError, match="levels"):
        loc.bhattacharyya_distance(a, b, levels="dark")


def test_hafiane_greedy_pairing_is_symmetric():
    g = np.zeros((1, 20), bool)
    g[0, :10] = True
    res = np.zeros((1, 20), bool)
    res[0, 0] = True  # a = 1, b = 9, c = 0, d = 10
    # printed reading: both reference regions pick the result's background (9 > 1, 10 > 0)
    assert loc.hafiane_matching(g, res) == pytest.approx((9 / 20 + 10 / 19) / 2)
    # the other way round the result's object picks the reference object: not symmetric
    assert loc.hafiane_matching(res, g) == pytest.approx((1 / 10 + 10 / 19) / 2)
    # greedy pairs: the largest overlap is d = 10, so (object, object) + (background, background)
    want = (1 / 10 + 10 / 19) / 2
    assert loc.hafiane_matching(g, res, matching="greedy") == pytest.approx(want)
    assert loc.hafiane_matching(res, g, matching="greedy") == pytest.approx(want)
    with pytest.raises(InputError, match="matching"):
        loc.hafiane_matching(g, res, matching="best")


def test_metric_docstrings_complete():
    # the decorator writes the shared Parameters and Returns once (_wrap.metric_doc): every
    # public metric documents each of its parameters, in numpydoc's section order
    import inspect
    import re

    for m in METRICS.values():
        doc = m.function.__doc__
        titles = re.findall(r"^(\w[\w ]*)\n-{3,}$", doc, re.M)
        assert titles[:4] == ["Parameters", "Returns", "Notes", "References"], (m.name, titles)
        params = doc.split("Returns\n-------")[0]
        named = {w.strip() for line in re.findall(r"^(\w[\w, ]*) :", params, re.M)
                 for w in line.split(",")}
        assert named == set(inspect.signature(m.function).parameters), m.name
        assert re.search(r"Returns\n-------\nfloat or numpy.ndarray\n    \S", doc), m.name

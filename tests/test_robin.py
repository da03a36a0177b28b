"""ROBIN (seeds/000): criterion G, association, eqs. 3-4, operating points, categorisation."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from geoeval.challenges.robin import (
    _sweep_tp,
    evaluate_robin,
    match_robin,
    operating_points,
    resolve_thresholds,
    robin_measures,
)
from geoeval.challenges.robin_categories import robin_categories
from geoeval.errors import InputError
from geoeval.io.boxes import BoxSet

ROUGH = (0.15, 0.5, 0.15)
PRECISE = (0.05, 0.2, 0.05)


def boxset(rows, scores=None, images=None):
    """rows: (image, class, x1, y1, x2, y2)."""
    rows = list(rows)
    keys = tuple(sorted({r[0] for r in rows} | set(images or ())))
    return BoxSet(
        boxes=np.array([r[2:] for r in rows], dtype=float).reshape(-1, 4),
        image_index=np.array([keys.index(r[0]) for r in rows], dtype=np.int64),
        classes=np.array([r[1] for r in rows], dtype=str),
        images=keys,
        scores=None if scores is None else np.asarray(scores, dtype=float),
    )


def m(angle_arg: float) -> float:
    return 2 / math.pi * math.atan(angle_arg)


# --- the measures and G ----------------------------------------------------------


def test_measures_hand_values():
    gt = np.array([[0, 0, 10, 20]] * 4, dtype=float)
    det = np.array([
        [1, 0, 11, 20],     # centre 1 px right: m1 = atan(1/10)
        [0, 3, 10, 23],     # 3 px down: m1 = atan(3/20)
        [0, 0, 10, 10],     # half the area, ratio 1 instead of 2
        [5, 10, 5, 10],     # an access point at the centre
    ])
    m1, m2, m3 = robin_measures(det, gt)
    assert m1 == pytest.approx([m(0.1), m(0.15), m(0.25), 0.0])
    assert m2 == pytest.approx([0, 0, 0.5, 1.0])
    assert m3[:3] == pytest.approx([0, 0, m(1.0)])
    assert np.isnan(m3[3])  # an access point: h/w = 0/0 (issue 13 item 9, see below)
    assert m3[2] == pytest.approx(0.5)


@pytest.mark.parametrize("preset, eps", [("rough", ROUGH), ("precise", PRECISE)])
def test_presets(preset, eps):
    assert resolve_thresholds(preset) == eps
    assert resolve_thresholds(preset, eps2=0.3) == (eps[0], 0.3, eps[2])


def test_rough_accepts_what_precise_rejects():
    gt = boxset([("i", "c", 0, 0, 10, 10)] * 4)
    gt = BoxSet(boxes=gt.boxes, image_index=np.arange(4), classes=gt.classes,
                images=("a", "b", "c", "d"))
    det = BoxSet(boxes=np.array([
        [1, 0, 11, 10],             # m1 = 0.0635: rough yes, precise no
        [0, 0, 10, 13],             # m2 = 0.23 (and m1 = 0.095, m3 = 0.19) ...
        [0.5, 0.5, 9.5, 9.5],       # m2 = 0.19, m1 = m3 = 0: both presets
        [0, 0, 10, 10.5],           # m1 = .016, m2 = .048, m3 = .032: both
    ]), image_index=np.arange(4), classes=np.array(["c"] * 4), images=("a", "b", "c", "d"))
    rough = evaluate_robin(gt, det, preset="rough")
    precise = evaluate_robin(gt, det, preset="precise")
    # det b: m3 = (2/π) atan(0.3) = 0.185 > 0.15: rejected by both
    assert rough.runs[0].image_tp.tolist() == [1, 0, 1, 1]
    assert precise.runs[0].image_tp.tolist() == [0, 0, 1, 1]
    assert rough.precision == 0.75 and precise.recall == 0.5
    # explicit thresholds replace the preset
    loose = evaluate_robin(gt, det, preset=None, eps1=0.1, eps2=0.5, eps3=0.2)
    assert loose.runs[0].image_tp.tolist() == [1, 1, 1, 1] and loose.preset is None


def test_points_use_m1_only():
    gt = boxset([("i", "c", 0, 0, 10, 10)])
    point = boxset([("i", "c", 5.5, 5, 5.5, 5)])           # zero-size: a point
    wrong_shape = boxset([("i", "c", 4, 0, 7, 10)])        # centre 0.5 px off, thin
    assert evaluate_robin(gt, point, preset="precise").recall == 1.0
    assert evaluate_robin(gt, wrong_shape, preset="precise").recall == 0.0
    assert evaluate_robin(gt, wrong_shape, preset="precise", points=True).recall == 1.0


def test_maximum_cardinality_association():
    # d1 is accepted by g1 (m1 = .03) and g2 (m1 = .09), d2 only by g1 (m1 with g2 = .19)
    gt = boxset([("i", "c", 0, 0, 10, 10), ("i", "c", 2, 0, 12, 10)])
    det = boxset([("i", "c", 0.5, 0, 10.5, 10), ("i", "c", -1, 0, 9, 10)])
    match = match_robin(gt, det, ROUGH)
    pairs = zip(match.reference.tolist(), match.submission.tolist(), strict=True)
    assert sorted(pairs) == [(0, 1), (1, 0)]


def test_precision_recall_summed_over_images():
    gt = boxset([("a", "c", 0, 0, 10, 10), ("b", "c", 0, 0, 10, 10), ("b", "c", 50, 50, 60, 60)])
    det = boxset([("a", "c", 0, 0, 10, 10), ("b", "c", 20, 20, 30, 30),
                  ("b", "c", 80, 0, 90, 10), ("b", "c", 0, 80, 10, 90)])
    r = evaluate_robin(gt, det)
    run = r.runs[0]
    assert (run.tp, run.n, run.n_star) == (1, 4, 3)
    assert r.precision == pytest.approx(1 / 4)   # not the mean of 1/1 and 0/3
    assert r.recall == pytest.approx(1 / 3)
    assert run.image_tp.tolist() == [1, 0] and run.image_n.tolist() == [1, 3]
    assert run.image_n_star.tolist() == [1, 2]


def test_difficult_images_binomial():
    # 9 easy images found perfectly, one image where all 3 objects are missed
    rows, drows = [], []
    for k in range(9):
        rows.append((f"e{k}", "c", 0, 0, 10, 10))
        drows.append((f"e{k}", "c", 0, 0, 10, 10))
    rows += [("hard", "c", 0, 0, 10, 10), ("hard", "c", 20, 0, 30, 10),
             ("hard", "c", 40, 0, 50, 10)]
    r = evaluate_robin(boxset(rows), boxset(drows, images=["hard"]))
    run = r.runs[0]
    hard = run.images.index("hard")
    recall = 9 / 12
    assert run.p_recall[hard] == pytest.approx((1 - recall) ** 3)  # P(X <= 0), X~B(3, R)
    assert run.difficult.tolist() == [False] * 9 + [True]
    assert math.isnan(run.p_precision[hard])  # no detection in that image
    assert r.to_dict()["runs"][0]["difficult_images"] == ["hard"]


def test_zero_width_ground_truth_is_an_error():
    gt = boxset([("i", "c", 0, 0, 0, 10)])
    with pytest.raises(InputError, match="has no width or height"):
        evaluate_robin(gt, boxset([("i", "c", 0, 0, 1, 1)]))


# --- operating points ---------------------------------------------------------------


def test_operating_points_hand_values():
    r_star, p_star, eer, auc = operating_points([1.0, 0.8, 0.5], [0.2, 0.6, 0.9])
    assert r_star == 0.2 and p_star == 0.5
    assert eer == pytest.approx(0.7)              # between (0.6, .8) and (0.9, .5)
    assert auc == pytest.approx(0.2 * 1.0 + 0.4 * 0.9 + 0.3 * 0.65)
    assert operating_points([], []) == (None, None, None, None)
    r_star, p_star, eer, auc = operating_points([0.9], [0.4])
    assert (r_star, p_star, eer, auc) == (0.4, 0.9, None, None)


def test_confidence_sweep_curve():
    gt = boxset([("a", "c", 0, 0, 10, 10), ("a", "c", 20, 0, 30, 10),
                 ("b", "c", 0, 0, 10, 20)])
    det = boxset([("a", "c", 1, 0, 11, 10), ("a", "c", 20, 0, 30, 10),
                  ("a", "c", 50, 50, 60, 60), ("b", "c", 0, 1, 10, 21)],
                 scores=[0.9, 0.8, 0.7, 0.6])
    r = evaluate_robin(gt, det)
    assert r.curve_source == "confidence"
    assert [(p.tp, p.n, p.threshold) for p in r.curve] == [
        (1, 1, 0.9), (2, 2, 0.8), (2, 3, 0.7), (3, 4, 0.6)]
    assert r.r_star == pytest.approx(2 / 3) and r.p_star == pytest.approx(0.75)
    assert r.eer == pytest.approx(2 / 3)
    assert r.auc == pytest.approx(1 / 3 + 1 / 3 + (1 / 3) * (2 / 3 + 0.75) / 2)


def test_several_runs_give_the_curve():
    gt = boxset([("a", "c", 10 * k, 0, 10 * k + 8, 8) for k in range(4)])
    runs = [boxset([("a", "c", 10 * k, 0, 10 * k + 8, 8) for k in range(n_true)]
                   + [("a", "c", 100 + 10 * k, 0, 108 + 10 * k, 8) for k in range(n_false)])
            for n_true, n_false in ((1, 0), (2, 1), (4, 4))]
    r = evaluate_robin(gt, runs)
    assert r.curve_source == "runs"
    assert [(p.precision, p.recall) for p in r.curve] == [(1.0, 0.25), (2 / 3, 0.5), (0.5, 1.0)]
    assert r.r_star == 0.25 and r.p_star == 0.5
    # P - R: .75, .1667, -.5 -> crossing between run 2 and run 3
    t = (2 / 3 - 0.5) / ((2 / 3 - 0.5) - (0.5 - 1.0))
    assert r.eer == pytest.approx(2 / 3 + t * (0.5 - 2 / 3))


def test_sweep_matches_brute_force_on_every_cut():
    rng = np.random.default_rng(3)
    gt_rows, det_rows = [], []
    for img in range(25):
        for _ in range(rng.integers(0, 4)):
            x, y = rng.uniform(0, 20, 2)
            gt_rows.append((f"i{img}", "c", x, y, x + 10, y + 10))
        for _ in range(rng.integers(0, 5)):
            x, y = rng.uniform(0, 20, 2)
            w, h = rng.uniform(8, 12, 2)
            det_rows.append((f"i{img}", "c", x, y, x + w, y + h))
    scores = rng.choice([0.2, 0.4, 0.6, 0.8], len(det_rows))
    keys = [f"i{k}" for k in range(25)]
    gt = boxset(gt_rows, images=keys)
    det = boxset(det_rows, scores=scores, images=keys)
    eps = (0.3, 0.5, 0.3)
    levels, tp = _sweep_tp(gt, det, eps, False)
    for level, t in zip(levels, tp, strict=True):
        assert match_robin(gt, det.subset(scores >= level), eps).reference.size == t


def test_association_size_is_maximum_brute_force():
    rng = np.random.default_rng(11)
    for _ in range(20):
        ng, nd = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        g = rng.uniform(0, 6, (ng, 2))
        d = rng.uniform(0, 6, (nd, 2))
        gt = boxset([("i", "c", *p, *(p + 10)) for p in g])
        det = boxset([("i", "c", *p, *(p + 10)) for p in d])
        m1, _, _ = robin_measures(np.repeat(det.boxes, ng, 0), np.tile(gt.boxes, (nd, 1)))
        ok = (m1 <= 0.15).reshape(nd, ng)   # same sizes: m2 = m3 = 0
        if nd <= ng:
            best = max(sum(ok[i, p[i]] for i in range(nd))
                       for p in itertools.permutations(range(ng), nd))
        else:
            best = max(sum(ok[p[j], j] for j in range(ng))
                       for p in itertools.permutations(range(nd), ng))
        assert match_robin(gt, det, ROUGH).reference.size == best


# --- categorisation ----------------------------------------------------------------


def cat_case():
    gt = boxset([
        ("a", "car", 0, 0, 10, 10), ("a", "car", 20, 0, 30, 10), ("a", "car", 40, 0, 50, 10),
        ("a", "tank", 60, 0, 70, 10), ("a", "tank", 80, 0, 90, 10),
        ("b", "Other", 0, 0, 10, 10), ("b", "Other", 20, 0, 30, 10),
        ("b", "car", 40, 0, 50, 10),
    ])
    out_rows = [
        ("a", "car", 0, 0, 10, 10),        # car -> car
        ("a", "tank", 20, 0, 30, 10),      # car -> tank
        ("a", "A", 40, 0, 50, 10),         # car -> Ambiguous
        ("a", "tank", 60, 0, 70, 10),      # tank -> tank
        ("a", "Other", 80, 0, 90, 10),     # tank -> Other (a false rejection)
        ("b", "Other", 0, 0, 10, 10),      # Other -> Other (rejected)
        ("b", "car", 20, 0, 30, 10),       # Other -> car (false acceptance)
        # b's car at 40..50 gets no output: (missing)
        ("b", "car", 200, 0, 210, 10),     # associated with no sample
    ]
    return gt, out_rows


def test_categorisation_confusion_matrix():
    gt, rows = cat_case()
    r = robin_categories(gt, boxset(rows))
    run = r.runs[0]
    assert run.categories == ("car", "tank")
    assert run.outputs == ("car", "tank", "Ambiguous", "Other", "(missing)")
    assert run.counts["car"] == {"car": 1, "tank": 1, "Ambiguous": 1, "Other": 0,
                                 "(missing)": 1}
    assert run.counts["tank"] == {"car": 0, "tank": 1, "Ambiguous": 0, "Other": 1,
                                  "(missing)": 0}
    assert run.confusion["car"]["car"] == 0.25 and run.confusion["tank"]["Other"] == 0.5
    # D = Σ π(c*) η(c*, c*) = 4/6 · 1/4 + 2/6 · 1/2 = 2/6
    assert r.discrimination == pytest.approx(2 / 6)
    # U: Ambiguous and Other outputs alike in discrimination: (1 + 1) / 6
    assert r.uncertainty == pytest.approx(2 / 6)
    assert run.n_other == 2 and run.rejection == 0.5
    assert run.false_rejection == pytest.approx(1 / 6) and run.false_acceptance == 0.5
    assert run.unmatched_outputs == 1
    d = r.to_dict()
    assert d["confusion"]["car"]["tank"] == 0.25 and d["D"] == pytest.approx(1 / 3)


def test_categorisation_known_categories_make_outliers():
    gt, rows = cat_case()
    r = robin_categories(gt, boxset(rows), known_categories=["car"])
    run = r.runs[0]
    assert run.categories == ("car",)
    assert run.n_other == 4   # two 'Other' + two 'tank' samples
    # rejected: b/Other -> Other and a/tank -> Other
    assert run.rejection == pytest.approx(2 / 4)


def test_categorisation_sweep_and_operating_points():
    gt = boxset([("a", "car", 0, 0, 10, 10), ("a", "car", 20, 0, 30, 10),
                 ("a", "tank", 40, 0, 50, 10), ("a", "tank", 60, 0, 70, 10)])
    out = boxset([("a", "car", 0, 0, 10, 10), ("a", "tank", 20, 0, 30, 10),
                  ("a", "tank", 40, 0, 50, 10), ("a", "car", 60, 0, 70, 10)],
                 scores=[0.9, 0.3, 0.7, 0.5])
    r = robin_categories(gt, out)
    assert r.curve_source == "confidence"
    pts = [(p.threshold, p.discrimination, p.uncertainty) for p in r.curve]
    assert pts == [(None, 0.5, 0.0), (0.3, 0.5, 0.25), (0.5, 0.5, 0.5), (0.7, 0.25, 0.75),
                   (0.9, 0.0, 1.0)]
    assert r.d_star == 0.5 and r.u_star == 0.0
    assert r.edu == pytest.approx(0.5)


def labelled_run(labels):
    """One run of image ``a``: a 10 × 10 box every 20 units, labelled in order."""
    return boxset([("a", lab, 20 * k, 0, 20 * k + 10, 10) for k, lab in enumerate(labels)])


def test_categorisation_err_from_runs():
    gt = boxset([("a", "x", 0, 0, 10, 10), ("a", "x", 20, 0, 30, 10),
                 ("a", "Other", 40, 0, 50, 10), ("a", "Other", 60, 0, 70, 10)])

    # FR / FA: run1 0 / 1, run2 0.5 / 0.5, run3 1 / 0
    r = robin_categories(gt, [labelled_run(["x", "x", "x", "x"]),
                              labelled_run(["x", "O", "O", "x"]),
                              labelled_run(["O", "O", "O", "O"])])
    assert [(x.false_rejection, x.false_acceptance) for x in r.runs] == [
        (0.0, 1.0), (0.5, 0.5), (1.0, 0.0)]
    assert r.err == 0.5
    r = robin_categories(gt, [labelled_run(["x", "x", "x", "x"]),
                              labelled_run(["O", "O", "O", "O"])])
    assert r.err == pytest.approx(0.5)  # interpolated


# --- CLI --------------------------------------------------------------------------------


def test_cli_robin_text_folders(tmp_path, capsys):
    from geoeval.cli.main import main

    (tmp_path / "gt").mkdir()
    (tmp_path / "det").mkdir()
    (tmp_path / "gt" / "a.txt").write_text("car 0 0 10 10\ncar 20 0 30 10\n")
    (tmp_path / "det" / "a.txt").write_text("car 0.9 1 0 11 10\ncar 0.5 50 0 60 10\n")
    out = tmp_path / "r.json"
    code = main(["boxes", "robin", str(tmp_path / "gt"), str(tmp_path / "det"),
                 "--preset", "precise", "--json", str(out)])
    assert code == 0
    rep = json.loads(out.read_text())
    assert rep["eps"] == list(PRECISE) and rep["precision"] == 0.0   # m1 = .063 > .05
    code = main(["boxes", "robin", str(tmp_path / "gt"), str(tmp_path / "det"),
                 "--json", str(out)])
    rep = json.loads(out.read_text())
    assert rep["precision"] == 0.5 and rep["recall"] == 0.5
    assert rep["runs"][0]["images"]["a"] == {"tp": 1, "n": 2, "n_star": 2, "p_recall": 0.75,
                                             "p_precision": 0.75, "difficult": False}
    code = main(["boxes", "robin-categories", str(tmp_path / "gt"), str(tmp_path / "det"),
                 "--json", str(out)])
    assert code == 0 and json.loads(out.read_text())["D"] == 0.5
    capsys.readouterr()
    (tmp_path / "det" / "a.txt").write_text("car 0.9 1 0 11\n")
    assert main(["boxes", "robin", str(tmp_path / "gt"), str(tmp_path / "det")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "a.txt" in err
    assert main(["boxes", "robin", str(tmp_path / "gt"), str(tmp_path / "det"),
                 "--eps1", "1.5"]) == 2
    # the option is named as the user typed it (checked at the CLI edge, same rule as the API)
    assert "'--eps1': must be in [0, 1)" in capsys.readouterr().err


# --- issue 13: one m1–m3, each category as a detector, confusion at operating points --


def test_one_implementation_of_m1_m3_and_the_point_value():
    """000 §4.1.2: m1–m3 exist once; an access point's m3 is undefined (NaN).

    For a point ``h_d = w_d = 0``, so ``h_d / w_d = 0/0`` in m3; §4.1.2 note 2
    judges points on m1 "only". By hand against the 10 × 20 reference
    ``(0, 0, 10, 20)``: the point (5, 10) at its centre has m1 = 0 and
    m2 = |0 − 200| / 200 = 1; a zero-width box (5, 0, 5, 20) has
    ``h/w = +∞`` and m3 = (2/π)·arctan(∞) = 1 exactly.
    """
    from geoeval.challenges import robin
    from geoeval.measures import localization as loc
    from geoeval.measures.localization import boxes

    assert robin.robin_measures is boxes.robin_measures
    ref = np.array([0, 0, 10, 20], float)
    m1, m2, m3 = robin_measures(np.array([[5, 10, 5, 10], [5, 0, 5, 20]], float), ref)
    assert m1.tolist() == [0.0, 0.0] and m2.tolist() == [1.0, 1.0]
    assert np.isnan(m3[0]) and m3[1] == 1.0
    # the localisation metrics (result = detection, reference = ground truth) are the
    # same function: equal bit for bit on random boxes, degenerate ones included
    rng = np.random.default_rng(3)
    xy = rng.integers(0, 30, size=(200, 2)).astype(float)
    wh = rng.integers(0, 12, size=(200, 2)).astype(float)
    det = np.c_[xy, xy + wh]
    m = robin_measures(det, ref)
    for k, f in enumerate((loc.robin_localization, loc.robin_completeness,
                           loc.robin_correctness)):
        np.testing.assert_array_equal(f(ref, det), m[k])
    # a point is still judged on m1 alone (note 2), NaN m3 or not
    gt = boxset([("a", "c", 0, 0, 10, 20)])
    r = evaluate_robin(gt, boxset([("a", "c", 5, 10, 5, 10)]), preset="precise")
    assert (r.precision, r.recall) == (1.0, 1.0)


def per_category_case():
    gt = boxset([("a", "car", 0, 0, 10, 10), ("a", "car", 20, 0, 30, 10),
                 ("a", "tank", 40, 0, 50, 10), ("b", "tank", 0, 0, 10, 10)])
    det = boxset([("a", "car", 0, 0, 10, 10),            # car TP
                  ("a", "tank", 20, 0, 30, 10),          # on a car, labelled tank
                  ("a", "tank", 40, 0, 50, 10),          # tank TP
                  ("b", "car", 0, 0, 10, 10),            # on a tank, labelled car
                  ("b", "tank", 100, 100, 110, 110)],    # on nothing
                 scores=[0.9, 0.8, 0.7, 0.6, 0.5])
    return gt, det


def test_categorisation_as_several_detectors_hand_values():
    """000 §4.2.4: each category's detector is scored with the detection indices (3), (4).

    Pooled (labels ignored) all four references are found: P = 4/5, R = 1.
    Per category: car N* = 2, N = 2 (0.9, 0.6), TP 1 -> P = R = 1/2;
    tank N* = 2, N = 3 (0.8, 0.7, 0.5), TP 1 -> P = 1/3, R = 1/2.
    Sweeps by hand: car (P, R) = (1, .5) at 0.9, (.5, .5) at 0.6: R* = .5,
    P* = 1, EER = .5 (P = R at the second point), AUC = .5·1 = .5.
    tank (0, 0) at 0.8, (.5, .5) at 0.7, (1/3, .5) at 0.5: R* = .5, P* = .5,
    EER = .5, AUC = the triangle from (0, 0) to (.5, .5) = .125.
    """
    gt, det = per_category_case()
    r = evaluate_robin(gt, det, per_category=True)
    assert (r.precision, r.recall) == (0.8, 1.0)
    car, tank = r.categories["car"], r.categories["tank"]
    assert (car.tp, car.n, car.n_star, car.precision, car.recall) == (1, 2, 2, 0.5, 0.5)
    assert (tank.tp, tank.n, tank.n_star, tank.recall) == (1, 3, 2, 0.5)
    assert tank.precision == pytest.approx(1 / 3)
    assert [(p.threshold, p.precision, p.recall) for p in car.curve] == [
        (0.9, 1.0, 0.5), (0.6, 0.5, 0.5)]
    assert (car.r_star, car.p_star, car.eer, car.auc) == (0.5, 1.0, 0.5, 0.5)
    assert (tank.r_star, tank.p_star, tank.eer) == (0.5, 0.5, 0.5)
    assert tank.auc == pytest.approx(0.125)
    assert evaluate_robin(gt, det).categories == {}
    assert r.to_dict()["categories"]["car"]["precision"] == 0.5


def test_per_category_equals_separate_evaluations():
    """000 §4.2.4, second method: the one joint matching equals scoring each category alone.

    Random scenes; for each category the subsets are evaluated on their own
    (a full sweep each) and every number must agree, for one run with
    confidences and for three runs without.
    """
    rng = np.random.default_rng(7)
    cats = np.array(["car", "tank", "truck"])
    for _ in range(10):
        n_g, n_d = 25, 40
        g_xy = rng.integers(0, 40, (n_g, 2)).astype(float)
        gt = BoxSet(boxes=np.c_[g_xy, g_xy + rng.integers(4, 9, (n_g, 2))],
                    image_index=rng.integers(0, 3, n_g), classes=cats[rng.integers(0, 3, n_g)],
                    images=("a", "b", "c"))
        src = rng.integers(0, n_g, n_d)
        jit = rng.integers(-1, 2, (n_d, 4)).astype(float)
        boxes = gt.boxes[src] + jit
        boxes[:, 2:] = np.maximum(boxes[:, 2:], boxes[:, :2] + 1)
        det = BoxSet(boxes=boxes, image_index=gt.image_index[src],
                     classes=cats[rng.integers(0, 3, n_d)], images=("a", "b", "c"),
                     scores=rng.integers(1, 6, n_d) / 10)
        joint = evaluate_robin(gt, det, per_category=True)
        runs = [det.subset(np.flatnonzero(rng.random(n_d) < 0.7)) for _ in range(3)]
        runs = [BoxSet(boxes=x.boxes, image_index=x.image_index, classes=x.classes, images=x.images)
                for x in runs]
        joint_runs = evaluate_robin(gt, runs, per_category=True)
        for c in cats:
            g_c = gt.subset(gt.classes == c)
            alone = evaluate_robin(g_c, det.subset(det.classes == c))
            got = joint.categories[c]
            assert (got.tp, got.n, got.n_star) == (alone.runs[0].tp, alone.runs[0].n,
                                                    alone.runs[0].n_star)
            assert [(p.precision, p.recall) for p in got.curve] == [
                (p.precision, p.recall) for p in alone.curve]
            assert (got.r_star, got.p_star, got.eer, got.auc) == (
                alone.r_star, alone.p_star, alone.eer, alone.auc)
            alone_runs = evaluate_robin(g_c, [x.subset(x.classes == c) for x in runs])
            got = joint_runs.categories[c]
            assert [(p.precision, p.recall) for p in got.curve] == [
                (p.precision, p.recall) for p in alone_runs.curve]
            assert got.auc == alone_runs.auc and got.eer == alone_runs.eer


def test_confusion_matrix_at_the_operating_points_of_a_sweep():
    """000 §4.3.1 "confusion matrix at maximal uncertainty", §4.2.1 "at minimal uncertainty".

    The sweep of ``test_categorisation_sweep_and_operating_points``: (μ, D, U) =
    (−∞, .5, 0), (.3, .5, .25), (.5, .5, .5), (.7, .25, .75), (.9, 0, 1).
    Largest U: μ = 0.9, every output (β ≤ 0.9) Ambiguous: η(A, c*) = 1.
    Least U: the labels as given: car → car, tank; tank → tank, car.
    """
    gt = boxset([("a", "car", 0, 0, 10, 10), ("a", "car", 20, 0, 30, 10),
                 ("a", "tank", 40, 0, 50, 10), ("a", "tank", 60, 0, 70, 10)])
    out = boxset([("a", "car", 0, 0, 10, 10), ("a", "tank", 20, 0, 30, 10),
                  ("a", "tank", 40, 0, 50, 10), ("a", "car", 60, 0, 70, 10)],
                 scores=[0.9, 0.3, 0.7, 0.5])
    r = robin_categories(gt, out)
    hi, lo = r.confusion_at["max_uncertainty"], r.confusion_at["min_uncertainty"]
    assert (hi.threshold, hi.run, hi.matrix.uncertainty, hi.matrix.discrimination) == (
        0.9, None, 1.0, 0.0)
    assert hi.matrix.counts["car"]["Ambiguous"] == 2 and hi.matrix.counts["tank"][
        "Ambiguous"] == 2
    assert hi.matrix.confusion["tank"]["Ambiguous"] == 1.0
    assert (lo.threshold, lo.matrix.uncertainty) == (None, 0.0)
    assert lo.matrix.counts["car"] == {"car": 1, "tank": 1, "Ambiguous": 0, "Other": 0,
                                       "(missing)": 0}
    assert lo.matrix.confusion == r.runs[0].confusion
    d = json.loads(json.dumps(r.to_dict()))
    assert d["confusion_at"]["max_uncertainty"]["threshold"] == 0.9
    assert d["confusion_at"]["max_uncertainty"]["confusion"]["car"]["Ambiguous"] == 1.0


def test_confusion_matrix_at_maximal_uncertainty_among_runs_ties_to_larger_d():
    """000 §4.3.1 with runs (§4.3.2): the run of largest U; a tie goes to the larger D.

    Samples car, car, tank, tank. run 0 [car, A, tank, car]: D = 2/4, U = 1/4;
    run 1 [A, A, tank, car]: D = 1/4, U = 2/4; run 2 [car, A, A, tank]: D = 2/4,
    U = 2/4. Largest U: runs 1 and 2 -> run 2 (larger D). Least U: run 0.
    """
    gt = boxset([("a", "car", 0, 0, 10, 10), ("a", "car", 20, 0, 30, 10),
                 ("a", "tank", 40, 0, 50, 10), ("a", "tank", 60, 0, 70, 10)])

    r = robin_categories(gt, [labelled_run(["car", "A", "tank", "car"]),
                              labelled_run(["A", "A", "tank", "car"]),
                              labelled_run(["car", "A", "A", "tank"])])
    assert [(p.discrimination, p.uncertainty) for p in r.curve] == [
        (0.5, 0.25), (0.25, 0.5), (0.5, 0.5)]
    hi, lo = r.confusion_at["max_uncertainty"], r.confusion_at["min_uncertainty"]
    assert (hi.run, lo.run) == (2, 0)
    assert hi.matrix.counts["tank"] == {"car": 0, "tank": 1, "Ambiguous": 1, "Other": 0,
                                        "(missing)": 0}
    assert hi.matrix.confusion["car"]["car"] == 0.5


def test_cli_robin_per_category_and_categories_confusion_at(tmp_path, capsys):
    """The §4.2.4 per-category table and the §4.3.1 matrix reach the CLI and its JSON."""
    from geoeval.cli.main import main

    (tmp_path / "gt").mkdir()
    (tmp_path / "det").mkdir()
    (tmp_path / "gt" / "a.txt").write_text("car 0 0 10 10\ntank 20 0 30 10\n")
    (tmp_path / "det" / "a.txt").write_text("car 0.9 0 0 10 10\ncar 0.5 20 0 30 10\n")
    out = tmp_path / "r.json"
    assert main(["boxes", "robin", str(tmp_path / "gt"), str(tmp_path / "det"),
                 "--per-category", "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    assert rep["precision"] == 1.0
    assert rep["categories"]["car"]["precision"] == 0.5
    assert rep["categories"]["tank"]["recall"] == 0.0
    assert "Each category as a detector" in capsys.readouterr().out
    assert main(["boxes", "robin-categories", str(tmp_path / "gt"), str(tmp_path / "det"),
                 "--json", str(out)]) == 0
    rep = json.loads(out.read_text())
    # μ = 0.9 turns both outputs Ambiguous: U = 1
    assert rep["confusion_at"]["max_uncertainty"]["U"] == 1.0
    assert rep["confusion_at"]["min_uncertainty"]["confusion"]["tank"]["car"] == 1.0
    assert "maximal uncertainty" in capsys.readouterr().out

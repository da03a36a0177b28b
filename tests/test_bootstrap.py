"""Spatial block bootstrap: decomposition against brute force, collapse, seeds."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from shapely import box

from geoeval.objects import ObjectSet
from geoeval.scoring import score_objects
from geoeval.scoring.bootstrap import (
    BlockGrid,
    block_statistics,
    block_weights,
    replicate_measures,
)
from geoeval.scoring.contest_bootstrap import contest_bootstrap, replicate_dominance

CRS = "EPSG:32651"
MATCHERS = ("bgm", "hoover", "iou", "mom")
GRID = BlockGrid(0.0, 0.0, 100.0, 2, 2, "test")  # blocks 0 (SW), 1 (SE), 2 (NW), 3 (NE)


def block_scene():
    """Four blocks of 100 × 100, no match or overlap crossing a block border.

    0: a match (IoU 20·18/(2·400 − 360)) and a miss; 1: a split (one reference,
    two halves) and a false alarm; 2: only a false alarm; 3: two matches.
    """
    refs = [(box(10, 10, 30, 30), 0), (box(50, 50, 60, 60), 0), (box(110, 10, 130, 30), 1),
            (box(110, 110, 150, 150), 3), (box(170, 170, 180, 180), 3)]
    subs = [(box(12, 10, 32, 30), 0), (box(110, 10, 120, 30), 1), (box(120, 10, 130, 30), 1),
            (box(150, 50, 155, 55), 1), (box(20, 120, 30, 130), 2),
            (box(110, 110, 150, 150), 3), (box(171, 171, 181, 181), 3)]
    return refs, subs


def objects(items, shift=None):
    geoms = [g for g, _ in items]
    return ObjectSet.from_geometries(geoms, crs=CRS)


def replicate_scene(refs, subs, weights):
    """Brute force: each drawn block's objects copied side by side (copy k of the
    replicate moved 1000 k to the east), the whole thing scored afresh."""
    out_r, out_s, k = [], [], 0
    for b, w in enumerate(weights):
        for _ in range(int(w)):
            out_r += [shapely.affinity.translate(g, 1000 * k) for g, bb in refs if bb == b]
            out_s += [shapely.affinity.translate(g, 1000 * k) for g, bb in subs if bb == b]
            k += 1
    return (ObjectSet.from_geometries(out_r, crs=CRS) if out_r else
            ObjectSet.from_geometries(np.array([], dtype=object), crs=CRS),
            ObjectSet.from_geometries(out_s, crs=CRS) if out_s else
            ObjectSet.from_geometries(np.array([], dtype=object), crs=CRS))


def nan_to_none(x):
    return None if np.isnan(x) else pytest.approx(float(x), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("weights", [[1, 1, 1, 1], [2, 0, 1, 1], [0, 3, 0, 1], [0, 0, 4, 0],
                                     [4, 0, 0, 0]])
def test_decomposition_equals_rescoring_the_replicate(weights):
    refs, subs = block_scene()
    ref, sub = objects(refs), objects(subs)
    kw = dict(matchers=MATCHERS, mallows=True, resolution=2.0)
    res = score_objects(ref, sub, **kw)
    rb, sb = GRID.block_of(ref), GRID.block_of(sub)
    assert rb.tolist() == [b for _, b in refs] and sb.tolist() == [b for _, b in subs]
    brute = score_objects(*replicate_scene(refs, subs, weights), **kw)
    w = np.asarray([weights], float)
    for name in MATCHERS:
        stats = block_statistics(res.results[name], res.overlap, rb, sb, GRID.n_blocks)
        got = replicate_measures(name, stats, w, True)
        want = brute.results[name]
        mal = None if want.mallows is None else want.mallows.scene
        for key, value in (("precision", want.precision), ("recall", want.recall),
                           ("f1", want.f1), ("accuracy", want.accuracy), ("mallows", mal)):
            assert nan_to_none(got[key][0]) == value, (name, key)


def test_one_block_collapses_to_the_point_estimate():
    refs, subs = block_scene()
    res = score_objects(objects(refs), objects(subs), matchers=MATCHERS, bootstrap=200,
                        block_size=1000.0, seed=3, mallows=True, resolution=2.0)
    boot = res.bootstrap
    assert boot.grid.n_blocks == 1
    for name, r in res.results.items():
        for key, value in (("precision", r.precision), ("recall", r.recall), ("f1", r.f1),
                           ("accuracy", r.accuracy), ("mallows", r.mallows.scene)):
            lo, hi = boot.intervals[name][key]
            assert lo == pytest.approx(value) and hi == pytest.approx(value), (name, key)


def test_seeded_reproducible():
    refs, subs = block_scene()
    ref, sub = objects(refs), objects(subs)
    a = score_objects(ref, sub, matchers=["iou"], bootstrap=300, seed=7, block_size=50.0)
    b = score_objects(ref, sub, matchers=["iou"], bootstrap=300, seed=7, block_size=50.0)
    c = score_objects(ref, sub, matchers=["iou"], bootstrap=300, seed=8, block_size=50.0)
    assert a.bootstrap.to_dict() == b.bootstrap.to_dict()
    assert np.array_equal(a.bootstrap.replicates["iou"]["f1"], b.bootstrap.replicates["iou"]["f1"],
                          equal_nan=True)
    assert not np.array_equal(a.bootstrap.replicates["iou"]["f1"],
                              c.bootstrap.replicates["iou"]["f1"])
    d = a.to_dict()["bootstrap"]
    assert (d["n"], d["seed"], d["confidence"], d["block_size"]) == (300, 7, 0.95, 50.0)
    lo, hi = d["intervals"]["iou"]["f1"]
    assert lo <= a.results["iou"].f1 <= hi


def test_weights_draw_every_block_count_with_replacement():
    w = block_weights(5, 1000, 0)
    assert w.shape == (1000, 5) and np.all(w.sum(axis=1) == 5)
    assert w.mean(axis=0) == pytest.approx(np.ones(5), abs=0.1)


def test_nothing_detected():
    refs, _ = block_scene()
    sub = ObjectSet.from_geometries(np.array([], dtype=object), crs=CRS)
    res = score_objects(objects(refs), sub, matchers=["iou", "bgm"], bootstrap=100)
    iv = res.bootstrap.intervals["iou"]
    assert iv["precision"] is None and iv["accuracy"] is None
    assert iv["recall"] == [0.0, 0.0] and iv["f1"] == [0.0, 0.0]
    assert res.bootstrap.intervals["bgm"]["accuracy"] == [0.0, 0.0]


def test_bad_bootstrap_options():
    from geoeval.errors import InputError

    refs, subs = block_scene()
    for kw in (dict(bootstrap=0), dict(bootstrap=10, confidence=1.0),
               dict(bootstrap=10, seed=-1), dict(bootstrap=10, block_size=0.0)):
        with pytest.raises(InputError):
            score_objects(objects(refs), objects(subs), matchers=["iou"], **kw)


# --- the contest's paired bootstrap (geoeval rank --bootstrap) ---------------------


def test_replicate_dominance_by_hand():
    v = np.array([[[1.0, 1.0], [2.0, 1.0], [0.0, 3.0], [np.nan, 9.0]]])
    dom = replicate_dominance(v)[0]
    want = np.zeros((4, 4), bool)
    want[0, 1] = True  # (2, 1) dominates (1, 1); (0, 3) is incomparable; NaN never counts
    assert np.array_equal(dom, want)


def contest():
    refs, subs = block_scene()
    ref = objects(refs)
    perfect = score_objects(ref, objects(refs), matchers=["iou"])
    other = score_objects(ref, objects(subs), matchers=["iou"])
    return ref, perfect, other


def test_one_block_gives_the_point_ranking():
    ref, perfect, other = contest()
    b = contest_bootstrap(ref, {"A": perfect, "B": other}, "iou",
                          ("precision", "recall", "accuracy"), n=50, block_size=1e4)
    assert b["undominated"] == {"A": 1.0, "B": 0.0}
    assert b["rank_interval"] == {"A": [1, 1], "B": [2, 2]}
    assert b["robust_edges"] == [["A", "B"]]
    assert b["dominance"]["A"]["B"] == 1.0 and b["dominance"]["B"]["A"] == 0.0


def test_identical_submissions_tie_in_every_replicate():
    ref, _, other = contest()
    b = contest_bootstrap(ref, {"A": other, "B": other}, "iou", ("precision", "recall"), n=200,
                          block_size=50.0, seed=1)
    assert b["undominated"] == {"A": 1.0, "B": 1.0}
    assert b["rank_interval"] == {"A": [1, 2], "B": [1, 2]}
    assert b["robust_edges"] == []


def test_paired_and_seeded():
    ref, perfect, other = contest()
    kw = dict(n=300, block_size=50.0, seed=4)
    a = contest_bootstrap(ref, {"A": perfect, "B": other}, "iou", ("precision", "recall"), **kw)
    b = contest_bootstrap(ref, {"A": perfect, "B": other}, "iou", ("precision", "recall"), **kw)
    assert a == b
    # B is never better than a perfect A on the same blocks: A is never dominated
    assert a["undominated"]["A"] == 1.0


def test_ranking_figure_marks_robust_dominance(tmp_path):
    from dataclasses import replace

    from geoeval.ranking.api import rank_indicators
    from geoeval.report.figures_ranking import save_ranking_figure

    ref, perfect, other = contest()
    table = {n: {"precision": r.results["iou"].precision, "recall": r.results["iou"].recall,
                 "accuracy": r.results["iou"].accuracy}
             for n, r in (("A", perfect), ("B", other))}
    ranked = rank_indicators(table, indicators=("precision", "recall", "accuracy"),
                             tie_break="accuracy")
    boot = contest_bootstrap(ref, {"A": perfect, "B": other}, "iou", ranked.indicators, n=50,
                             block_size=1e4)
    ranked = replace(ranked, bootstrap=boot)
    assert ranked.to_dict()["bootstrap"]["robust_edges"] == [["A", "B"]]
    path = save_ranking_figure(ranked, tmp_path / "rank.png")
    assert path.stat().st_size > 0

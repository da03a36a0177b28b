"""Matchers on hand-worked cases and against brute force."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shapely import box

from geoeval.errors import InputError
from geoeval.matching import match
from geoeval.matching.mom import match_mom, solve_component
from geoeval.objects import ObjectSet
from geoeval.overlap import compute_overlap
from geoeval.scoring import score_objects


def objs(*boxes, ids=None):
    return ObjectSet.from_geometries([box(*b) for b in boxes], ids=ids)


def pairs(m, ov):
    rid, sid = ov.reference.ids, ov.submission.ids
    return sorted((tuple(rid[list(i.reference)].tolist()), tuple(sid[list(i.submission)].tolist()),
                   i.kind) for i in m.instances)


# A scene in the spirit of 004 Fig. 2: one-to-one, over-detection, under-detection,
# a miss and a false alarm. Areas are exact in floating point.
REF = objs((0, 0, 10, 10), (20, 0, 30, 10), (31, 0, 41, 10), (60, 0, 70, 10), (80, 0, 90, 10),
           ids=[10, 20, 30, 40, 50])
SUB = objs((0, 0, 5, 10), (5, 0, 10, 10),  # halves of ref 10: over-detection
           (20, 0, 41, 10),  # covers refs 20 and 30: under-detection
           (61, 0, 70, 10),  # ref 40, one-to-one
           (100, 100, 110, 110),  # false alarm
           ids=[1, 2, 3, 4, 5])


@pytest.fixture(scope="module")
def scene():
    return compute_overlap(REF, SUB)


def test_overlap_values(scene):
    assert scene.rows.tolist() == [0, 0, 1, 2, 3]
    assert scene.cols.tolist() == [0, 1, 2, 2, 3]
    assert scene.values.tolist() == [50.0, 50.0, 100.0, 100.0, 90.0]
    # union: refs 500 + subs 50+50+210+90+100 - overlaps 390
    assert scene.union_area == pytest.approx(500 + 500 - 390)
    assert scene.n_components == 3


def test_bgm_hand(scene):
    m = match(scene, "bgm")
    assert pairs(m, scene) == [((10,), (1,), "one-to-one"), ((20,), (3,), "one-to-one"),
                               ((40,), (4,), "one-to-one")]
    assert m.matched_overlap == 240.0
    res = score_objects(REF, SUB, matchers=["bgm"]).results["bgm"]
    assert res.precision == pytest.approx(3 / 5)
    assert res.recall == pytest.approx(3 / 5)
    assert res.accuracy == pytest.approx(240 / 610)  # eq. 1


def test_mom_hand_differs_from_bgm(scene):
    m = match(scene, "mom")
    assert pairs(m, scene) == [((10,), (1, 2), "one-to-many"), ((20, 30), (3,), "many-to-one"),
                               ((40,), (4,), "one-to-one")]
    assert m.matched_overlap == 390.0
    assert m.missed.tolist() == [4] and m.false_alarms.tolist() == [4]
    assert m.solver_stats["taken_whole"] == 3


def test_hoover_hand(scene):
    m = match(scene, "hoover", threshold=0.6)
    # ref 40 / sub 4: C = 90 >= .6*100 and >= .6*90: correct, score (90/90 + 90/100)/2
    got = {(i.reference, i.submission): i.score for i in m.instances}
    assert got[((3,), (3,))] == pytest.approx((1 + 0.9) / 2)
    assert got[((0,), (0, 1))] == pytest.approx(1.0)
    # under-detection: s1 = 200/210, s2 = 200/200
    assert got[((1, 2), (2,))] == pytest.approx((200 / 210 + 1) / 2)
    res = score_objects(REF, SUB, matchers=["hoover"]).results["hoover"]
    assert res.accuracy == pytest.approx(np.mean([0.95, 1.0, (200 / 210 + 1) / 2]))


def test_hoover_two_thresholds():
    ref = objs((0, 0, 10, 10))
    sub = objs((0, 0, 10, 8), (0, 8, 10, 10.5))  # 80 and 20 of 25 inside
    ov = compute_overlap(ref, sub)
    # T = 0.6: both outputs have >= 60 % inside; together cover 100 % -> over-detection
    m6 = match(ov, "hoover", threshold=0.6)
    assert [(i.reference, i.submission, i.kind) for i in m6.instances] == [
        ((0,), (0, 1), "one-to-many")]
    assert m6.instances[0].score == pytest.approx((100 / 105 + 1) / 2)
    # T = 0.85: the sliver has 80 % inside -> no over-detection; 80 < 85 -> no correct
    m85 = match(ov, "hoover", threshold=0.85)
    assert m85.instances == () and m85.missed.tolist() == [0]
    # T = 0.8: the sliver has exactly 80 % inside: the bound is inclusive, over-detection
    m8 = match(ov, "hoover", threshold=0.8)
    assert [(i.reference, i.submission) for i in m8.instances] == [((0,), (0, 1))]


def test_hoover_conflict_resolved_by_score():
    ref = objs((0, 0, 10, 1))  # area 10
    sub = objs((0, 0, 6, 1), (6, 0, 10, 1))  # areas 6 and 4, both inside
    ov = compute_overlap(ref, sub)
    m = match(ov, "hoover", threshold=0.6)
    # correct (R, O1) scores (1 + .6)/2 = .8; over-detection scores 1 and wins
    assert [(i.reference, i.submission, i.score) for i in m.instances] == [((0,), (0, 1), 1.0)]


def test_hoover_threshold_validated(scene):
    with pytest.raises(InputError):
        match(scene, "hoover", threshold=0.5)


def test_iou_matcher_cardinality_first():
    # ref A overlaps s1 (IoU .6) and s2 (IoU .3); ref B overlaps s1 (IoU .3) only.
    # best total IoU is A-s1 alone (.6) but max cardinality is A-s2 + B-s1.
    ref = objs((0, 0, 10, 10), (20, 0, 30, 10))
    sub = objs((4, 0, 24, 10), (-13, 0, 0.5, 10))
    ov = compute_overlap(ref, sub)
    keys = zip(ov.rows.tolist(), ov.cols.tolist(), strict=True)
    iou = dict(zip(keys, ov.iou.tolist(), strict=True))
    assert iou[(0, 0)] > iou[(0, 1)] and iou[(0, 0)] > iou[(1, 0)]
    m = match(ov, "iou", threshold=0.01)
    assert sorted((i.reference, i.submission) for i in m.instances) == [((0,), (1,)), ((1,), (0,))]
    strict = match(ov, "iou", threshold=0.5)
    assert strict.instances == ()


def test_empty_sides_are_null():
    """A ratio over an empty side is null; F1 (2TP / (2TP + FP + FN) one-to-one) is 0
    with one side empty and null only when both are."""
    empty = ObjectSet.from_geometries([])
    one = objs((0, 0, 1, 1))
    r = score_objects(one, empty).results
    for name in ("bgm", "hoover", "mom", "iou"):
        assert r[name].precision is None
        assert r[name].recall == 0.0
        assert r[name].f1 == 0.0
    r = score_objects(empty, one).results
    for name in ("bgm", "hoover", "mom", "iou"):
        assert r[name].recall is None and r[name].precision == 0.0 and r[name].f1 == 0.0
    r = score_objects(empty, empty).results
    for name in ("bgm", "hoover", "mom", "iou"):
        assert r[name].precision is None and r[name].recall is None and r[name].f1 is None
    assert r["bgm"].accuracy is None


def test_min_overlap_drops_small_pairs():
    ref = objs((0, 0, 10, 10))
    sub = objs((0, 0, 10, 8), (0, 8, 10, 12))  # 80 of 80 and 20 of 40 inside
    ov = compute_overlap(ref, sub)
    assert match_mom(ov).matched_overlap == 100.0
    m = match_mom(ov, min_overlap=0.5)  # 20 >= .5 * 40: kept
    assert m.matched_overlap == 100.0
    m = match_mom(ov, min_overlap=0.51)  # the 50 % pair goes
    assert m.matched_overlap == 80.0 and m.false_alarms.tolist() == [1]


# --- MOM against brute force ----------------------------------------------------

def brute_force_star_forest(rows, cols, w):
    best = 0.0
    m = len(w)
    for mask in range(1 << m):
        chosen = [e for e in range(m) if mask >> e & 1]
        dr: dict[int, int] = {}
        dc: dict[int, int] = {}
        for e in chosen:
            dr[rows[e]] = dr.get(rows[e], 0) + 1
            dc[cols[e]] = dc.get(cols[e], 0) + 1
        if any(dr[rows[e]] > 1 and dc[cols[e]] > 1 for e in chosen):
            continue
        best = max(best, sum(w[e] for e in chosen))
    return best


def random_component(rng, max_side=4, max_edges=11):
    nr, nc = rng.integers(2, max_side + 1, size=2)
    all_pairs = list(itertools.product(range(nr), range(nc)))
    k = int(rng.integers(max(nr, nc), min(len(all_pairs), max_edges) + 1))
    idx = rng.choice(len(all_pairs), size=k, replace=False)
    rows = np.array([all_pairs[i][0] for i in idx])
    cols = np.array([all_pairs[i][1] for i in idx])
    w = rng.integers(1, 30, size=k).astype(float)
    return rows, cols, w


def is_star_forest(rows, cols):
    dr = np.bincount(rows)
    dc = np.bincount(cols)
    return not np.any((dr[rows] > 1) & (dc[cols] > 1))


@pytest.mark.parametrize("method", ["auto", "enumerate", "ilp"])
def test_mom_matches_brute_force(method):
    rng = np.random.default_rng(12345)
    for _ in range(40 if method != "ilp" else 15):
        rows, cols, w = random_component(rng)
        picked, _how = solve_component(rows, cols, w, method=method)
        assert is_star_forest(rows[picked], cols[picked])
        assert w[picked].sum() == pytest.approx(brute_force_star_forest(rows, cols, w))


def test_mom_tree_dp_matches_brute_force():
    rng = np.random.default_rng(7)
    done = 0
    while done < 40:
        n = int(rng.integers(3, 10))
        # random tree on n nodes split into two sides by BFS parity
        parent = [int(rng.integers(0, k)) for k in range(1, n)]
        depth = [0] * n
        for k, p in enumerate(parent, start=1):
            depth[k] = depth[p] + 1
        side = [d % 2 for d in depth]
        index = {}
        for v in range(n):
            index[v] = sum(1 for u in range(v) if side[u] == side[v])
        rows, cols = [], []
        for k, p in enumerate(parent, start=1):
            r, c = (k, p) if side[k] == 0 else (p, k)
            rows.append(index[r])
            cols.append(index[c])
        rows, cols = np.array(rows), np.array(cols)
        w = rng.integers(1, 20, size=rows.size).astype(float)
        picked, how = solve_component(rows, cols, w, method="tree")
        assert how == "tree_dp"
        assert is_star_forest(rows[picked], cols[picked])
        assert w[picked].sum() == pytest.approx(brute_force_star_forest(rows, cols, w))
        done += 1


def test_mom_whole_scene_uses_components():
    # two copies of a component that needs a solver (a 4-cycle), plus trivial pairs
    ref = objs((0, 0, 10, 10), (0, 10, 10, 20), (100, 0, 110, 10), (100, 10, 110, 20),
               (200, 0, 210, 10))
    sub = objs((0, 0, 6, 20), (6, 0, 10, 20), (100, 0, 103, 20), (103, 0, 110, 20),
               (200, 0, 210, 9))
    ov = compute_overlap(ref, sub)
    for method in ("auto", "ilp", "enumerate"):
        m = match_mom(ov, method=method)
        # each 4-cycle: refs 100 each, columns 60/40 (resp. 30/70) of each ref. Best star:
        # the heavier column as centre with both refs (120, resp. 140); a ref as centre
        # gets only 100 and strands the other ref. Plus the one-to-one pair (90).
        assert m.matched_overlap == pytest.approx(120 + 140 + 90)
    stats = match_mom(ov).solver_stats
    assert stats["taken_whole"] == 1 and stats["enumerated"] == 2 and stats["ilp"] == 0
    assert match_mom(ov, method="ilp").solver_stats["ilp"] == 2


def test_unknown_matcher_is_input_error(scene):
    with pytest.raises(InputError, match="unknown matcher"):
        match(scene, "nope")


@pytest.mark.parametrize("sub", [SUB, objs(ids=[]), objs((0, 0, 10, 10), (0, 0, 10, 10))])
def test_json_text_equals_the_dict_report(sub):
    """``ScoreResult.to_json`` (instances encoded straight from the arrays) parses
    to exactly the report ``to_dict`` gives: ragged members, kinds, scores, a NaN
    Mallows score as null, huge ids, nothing detected, duplicated detections."""
    import json

    from geoeval.encoding import dumps
    from geoeval.matching.lists import MatchLists
    from geoeval.scoring.summary import instance_dicts, instance_rows

    def same_rows(m, rid, sid, mal=None):
        lists = MatchLists.of(m, rid, sid, mal)
        rows = instance_rows(lists)
        assert [json.loads(x) for x in rows] == instance_dicts(lists)
        return rows

    res = score_objects(REF, sub, matchers=["bgm", "hoover", "mom", "iou"], resolution=1.0,
                        mallows=True)
    assert json.loads(res.to_json()) == json.loads(dumps(res.to_dict()))
    for r in res.results.values():
        m = r.matching
        rid = np.array([2**63 + 5, 2**62, 7, 8, 9], dtype=np.uint64)  # ids as text, exactly
        sid = np.arange(len(sub), dtype=np.int64) - 3
        mal = np.full(m.n_instances, np.nan)
        mal[::2] = 0.25
        rows = same_rows(m, rid, sid, mal)
        assert all("NaN" not in x for x in rows)
        names = np.array(['r"0', "r\\1", "r2", "r3", "r4"], dtype=object)  # text ids, quoted
        same_rows(m, names, sid.astype(str))
        for every in (np.nan, 0.5):  # scores on no instance, on every one, on some
            score = np.full(m.n_instances, every)
            score[::3] = 0.75
            mixed = dataclasses.replace(m, arrays=dataclasses.replace(m.arrays, score=score))
            same_rows(mixed, rid, sid)
            score[:] = every
            same = dataclasses.replace(m, arrays=dataclasses.replace(m.arrays, score=score))
            same_rows(same, rid, sid)


def test_ilp_prints_nothing(capfd):
    """The MILP solver's banner (HiGHS prints it while constructed) never reaches
    standard output, where it would break a table or JSON written to stdout."""
    rows, cols = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    picked, how = solve_component(rows, cols, np.array([3.0, 1.0, 1.0, 3.0]), method="ilp")
    assert how == "ilp" and sorted(picked.tolist()) == [0, 3]
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_the_which_matcher_page_scene():
    """docs/which-matcher.md describes its figure's scene: the counts it states hold."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "docs" / "make_matcher_figure.py"
    spec = importlib.util.spec_from_file_location("make_matcher_figure", path)
    fig = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fig)
    res = score_objects(ObjectSet.from_geometries(fig.REF), ObjectSet.from_geometries(fig.SUB),
                        resolution=0.25)
    got = {n: (r.matching.n_instances, r.matching.missed.size, r.matching.false_alarms.size)
           for n, r in res.results.items()}
    assert got == {"bgm": (4, 2, 2), "hoover": (3, 2, 2), "mom": (4, 1, 1), "iou": (1, 5, 5)}
    kinds = {n: r.matching.kind_counts() for n, r in res.results.items()}
    assert kinds["mom"] == {"one-to-one": 2, "one-to-many": 1, "many-to-one": 1}
    assert kinds["hoover"] == {"one-to-one": 1, "one-to-many": 1, "many-to-one": 1}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=0, max_size=12), st.integers(1, 5),
       st.integers(0, 3))
def test_rows_blocks_equal_rendering_row_by_row(sizes, block, offset):
    """:class:`geoeval.encoding.Rows` (pieces placed with numpy, cut into blocks)
    equals the rows rendered one by one, for ragged arrays of any shape (empty
    rows, one member each, pointers not starting at 0)."""
    from geoeval.encoding import Rows

    n = len(sizes)
    ptr = offset + np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    texts = [f"t{k}" for k in range(int(ptr[-1]) + 2)]
    col = [f'"c{i}"' for i in range(n)]
    rows = Rows(n, ['{"a": ', (texts, ptr), ', "b": ', col, "}"])
    want = ['{"a": [' + ", ".join(texts[ptr[i]:ptr[i + 1]]) + '], "b": ' + col[i] + "}"
            for i in range(n)]
    assert list(rows) == want
    assert "|".join(rows.blocks("|", block)) == "|".join(want) == rows.join("|")


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(0, 2**32 - 1), st.booleans(),
       st.booleans())
def test_max_weight_matching_equals_brute_force(n_rows, n_cols, seed, ties, card):
    """The assignment (small components enumerated with numpy, larger ones by
    SciPy's solver) reaches the brute-force optimum, with integer weights that
    tie often and with the IoU matcher's cardinality-first rule; the pairs are
    one-to-one."""
    from geoeval.matching.assignment import max_weight_matching

    rng = np.random.default_rng(seed)
    cells = [(i, j) for i in range(n_rows) for j in range(n_cols) if rng.random() < 0.5]
    if not cells:
        return
    rows = np.array([c[0] for c in cells])
    cols = np.array([c[1] for c in cells])
    w = rng.integers(1, 4, rows.size).astype(float) if ties else rng.random(rows.size) + 0.01
    got = max_weight_matching(rows, cols, w, n_rows, n_cols, cardinality_first=card)
    assert np.unique(rows[got]).size == got.size == np.unique(cols[got]).size
    # every matching, row by row, over the sets of columns used so far (exhaustive; the
    # best (pairs, weight) per set of used columns; weights of a cell summed once)
    weight = {(i, j): w[k] for k, (i, j) in enumerate(cells)}
    key = (lambda v: (v[0], round(v[1], 9))) if card else (lambda v: round(v[1], 9))
    states = {0: (0, 0.0)}
    for i in range(n_rows):
        nxt = dict(states)
        for used, (k, total) in states.items():
            for j in range(n_cols):
                if (i, j) in weight and not used >> j & 1:
                    cand = (k + 1, total + weight[i, j])
                    old = nxt.get(used | 1 << j)
                    if old is None or key(cand) > key(old):
                        nxt[used | 1 << j] = cand
        states = nxt
    top = max(states.values(), key=key)
    best = (top[0] if card else 0, top[1])
    value = (got.size, w[got].sum()) if card else (0, w[got].sum())
    assert value[0] == best[0] and np.isclose(value[1], best[1])

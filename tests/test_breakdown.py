"""Error breakdown (TIDE's oracle deltas on match instances): hand-worked scene,
perfect and empty scenes, a brute-force second construction on random scenes,
and the CLI through the console script."""

from __future__ import annotations

import json
from fractions import Fraction as F

import numpy as np
import pytest
import rasterio
from affine import Affine
from hypothesis import given, settings
from hypothesis import strategies as st

from geoeval.io.raster import objects_from_labels
from geoeval.matching.result import Instance, Matching, instance_kind
from geoeval.measures.breakdown import ERROR_TYPES, error_breakdown, fix
from geoeval.scoring import score_objects
from tests.corpus.conftest import run_cli


def hand_scene(matcher: str = "mom") -> tuple[Matching, np.ndarray]:
    """docs/breakdown.md's worked example: 6 references, 7 submitted objects.

    I1 R0-S0 (Mallows 0.8), I2 R1-S1 (0.9), I3 R2,R3-S2 merge (0.5),
    I4 R4-S3,S4 split (0.6); R5 missed; S5, S6 false alarms.
    """
    inst = [Instance((0,), (0,), 1.0, "one-to-one", 0.8 if matcher == "hoover" else None),
            Instance((1,), (1,), 1.0, "one-to-one", 0.9 if matcher == "hoover" else None),
            Instance((2, 3), (2,), 1.0, "many-to-one", 0.5 if matcher == "hoover" else None),
            Instance((4,), (3, 4), 1.0, "one-to-many", 0.6 if matcher == "hoover" else None)]
    return Matching.from_instances(matcher, inst, 6, 7), np.array([0.8, 0.9, 0.5, 0.6])


def f1(p, r):
    return 2 * p * r / (p + r)


# hand-worked (docs/breakdown.md): precision, recall, F1, Mallows mean
HAND = {
    "now": (F(5, 7), F(5, 6), F(10, 13), F(28, 40)),
    "missed": (F(6, 8), F(1), F(6, 7), F(38, 50)),
    "false_alarm": (F(1), F(5, 6), F(10, 11), F(28, 40)),
    "merge": (F(6, 8), F(5, 6), F(15, 19), F(43, 50)),
    "split": (F(4, 6), F(5, 6), F(20, 27), F(32, 40)),
    "localisation": (F(5, 7), F(5, 6), F(10, 13), F(31, 40)),
    "all": (F(1), F(1), F(1), F(1)),
}


def test_hand_formulas_are_consistent():
    for p, r, f, _ in HAND.values():
        assert f == f1(p, r)


@pytest.mark.parametrize("matcher", ["mom", "hoover"])
def test_hand_scene_deltas(matcher):
    m, mal = hand_scene(matcher)
    b = error_breakdown(m, mal)
    assert b.errors == {"missed": 1, "false_alarm": 2, "merge": 1, "split": 1,
                        "localisation": 2}
    keys = ("precision", "recall", "f1", "mallows")
    for k, v in zip(keys, HAND["now"], strict=True):
        assert b.now[k] == pytest.approx(float(v), abs=1e-12)
    for t in (*ERROR_TYPES, "all"):
        for k, v, v0 in zip(keys, HAND[t], HAND["now"], strict=True):
            assert b.fixed[t][k] == pytest.approx(float(v), abs=1e-12), (t, k)
            assert b.gain(t, k) == pytest.approx(float(v - v0), abs=1e-12), (t, k)
        # MOM's accuracy is the Mallows mean; Hoover's the mean of its own scores,
        # here the same numbers
        assert b.fixed[t]["accuracy"] == pytest.approx(float(HAND[t][3]), abs=1e-12)
    # the gains written out in the docs
    assert b.gain("missed", "f1") == pytest.approx(8 / 91)
    assert b.gain("false_alarm", "f1") == pytest.approx(20 / 143)
    assert b.gain("merge", "f1") == pytest.approx(5 / 247)
    assert b.gain("split", "f1") == pytest.approx(-10 / 351)
    assert b.gain("merge", "mallows") == pytest.approx(0.16)
    assert b.gain("split", "mallows") == pytest.approx(0.1)
    assert b.gain("localisation", "mallows") == pytest.approx(0.075)
    d = b.to_dict()
    assert d["errors"]["split"]["gain"]["f1"] == pytest.approx(-10 / 351)
    assert d["errors"]["all"]["count"] is None


def test_bgm_accuracy_is_not_attributed():
    m, _ = hand_scene("bgm")
    b = error_breakdown(m)
    assert b.now["accuracy"] is None and b.gain("missed", "accuracy") is None
    assert b.now["mallows"] is None and b.fixed["all"]["mallows"] is None
    assert b.gain("missed", "f1") == pytest.approx(8 / 91)


def squares(positions, size=4, shape=(24, 24)):
    lab = np.zeros(shape, np.int32)
    for k, (r, c) in enumerate(positions, start=1):
        lab[r:r + size, c:c + size] = k
    return lab


def test_perfect_submission_has_no_gain():
    lab = squares([(1, 1), (1, 10), (12, 4)])
    res = score_objects(objects_from_labels(lab), objects_from_labels(lab), breakdown=True)
    for name, b in res.breakdown.items():
        assert b.now["f1"] == 1.0
        for t in (*ERROR_TYPES, "all"):
            for k in ("precision", "recall", "f1", "accuracy", "mallows"):
                g = b.gain(t, k)
                assert g is None or g == pytest.approx(0.0, abs=1e-12), (name, t, k)
    assert res.breakdown["mom"].now["mallows"] == pytest.approx(1.0)


def test_nothing_detected_and_nothing_to_detect():
    lab = squares([(1, 1), (1, 10)])
    empty = np.zeros_like(lab)
    res = score_objects(objects_from_labels(lab), objects_from_labels(empty), matchers=["mom"],
                        breakdown=True)
    b = res.breakdown["mom"]
    assert b.now == {"precision": None, "recall": 0.0, "f1": 0.0, "accuracy": None,
                     "mallows": None}
    assert b.fixed["missed"]["f1"] == 1.0 and b.fixed["missed"]["mallows"] == 1.0
    assert b.gain("missed", "f1") == 1.0 and b.gain("missed", "recall") == 1.0
    assert b.gain("missed", "precision") is None
    assert b.fixed["false_alarm"]["f1"] == 0.0
    res = score_objects(objects_from_labels(empty), objects_from_labels(lab), matchers=["mom"],
                        breakdown=True)
    b = res.breakdown["mom"]
    assert b.now["recall"] is None and b.now["precision"] == 0.0 and b.now["f1"] == 0.0
    # nothing left once the false alarms go: every ratio is undefined
    assert b.fixed["false_alarm"] == {k: None for k in b.now}
    assert b.fixed["all"] == {k: None for k in b.now}
    js = json.loads(res.to_json())["breakdown"]["mom"]
    assert js["errors"]["false_alarm"]["gain"]["precision"] is None


def test_report_without_breakdown_has_null_key():
    lab = squares([(1, 1)])
    res = score_objects(objects_from_labels(lab), objects_from_labels(lab), matchers=["bgm"])
    assert res.breakdown is None and res.to_dict()["breakdown"] is None


# --- random scenes: a second, per-instance construction of the fixed scene ----------

@st.composite
def scenes(draw):
    """Random star-forest instances, misses, false alarms and Mallows scores."""
    shapes = draw(st.lists(st.tuples(st.integers(1, 3), st.integers(1, 3)).filter(
        lambda s: s[0] == 1 or s[1] == 1), max_size=8))
    n_miss, n_fa = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    inst, r, s = [], 0, 0
    for nr, ns in shapes:
        inst.append(Instance(tuple(range(r, r + nr)), tuple(range(s, s + ns)), 1.0,
                             instance_kind(nr, ns)))
        r, s = r + nr, s + ns
    mal = np.array(draw(st.lists(st.one_of(st.floats(0, 1), st.just(float("nan"))),
                                 min_size=len(inst), max_size=len(inst))), float)
    # shuffle object indices so that instances are not in index order
    rp = np.random.default_rng(draw(st.integers(0, 99))).permutation(r + n_miss)
    sp = np.random.default_rng(draw(st.integers(0, 99))).permutation(s + n_fa)
    inst = [Instance(tuple(int(rp[i]) for i in x.reference),
                     tuple(int(sp[j]) for j in x.submission), 1.0, x.kind) for x in inst]
    m = Matching.from_instances("mom", inst, r + n_miss, s + n_fa)
    # from_instances sorts by reference: carry the scores along
    first = [min(x.reference) for x in inst]
    return m, mal[np.argsort(first, kind="stable")], inst, n_miss


def brute_force(m, mal, types):
    """The fixed scene built instance by instance with Matching.from_instances."""
    new, scores = [], []
    nxt = m.n_submission
    for k in range(m.n_instances):
        x = m.instance(k)
        t = {"one-to-one": "localisation", "one-to-many": "split"}.get(x.kind, "merge")
        if t not in types:
            new.append(x)
            scores.append(mal[k])
        elif t == "localisation":
            new.append(x)
            scores.append(1.0)
        else:
            for ref in x.reference:
                new.append(Instance((ref,), (nxt,), 1.0, "one-to-one"))
                scores.append(1.0)
                nxt += 1
    if "missed" in types:
        for ref in m.missed.tolist():
            new.append(Instance((ref,), (nxt,), 1.0, "one-to-one"))
            scores.append(1.0)
            nxt += 1
    fa = [] if "false_alarm" in types else m.false_alarms.tolist()
    n_sub = sum(len(x.submission) for x in new) + len(fa)
    return new, np.array(scores, float), n_sub, len(fa)


@settings(max_examples=150, deadline=None)
@given(scenes(), st.sets(st.sampled_from(ERROR_TYPES)))
def test_fix_matches_brute_force(scene, types):
    m, mal, _, _ = scene
    fm, fmal = fix(m, mal, types)
    new, scores, n_sub, n_fa = brute_force(m, mal, types)
    assert fm.n_submission == n_sub and fm.false_alarms.size == n_fa
    assert fm.n_reference == m.n_reference
    assert fm.n_instances == len(new)
    a = fm.arrays
    got = sorted((tuple(a.ref_idx[a.ref_ptr[k]:a.ref_ptr[k + 1]]), int(np.diff(a.sub_ptr)[k]),
                  round(float(np.nan_to_num(fmal[k], nan=-1)), 12))
                 for k in range(fm.n_instances))
    want = sorted((x.reference, len(x.submission), round(float(np.nan_to_num(v, nan=-1)), 12))
                  for x, v in zip(new, scores, strict=True))
    assert got == want


@settings(max_examples=150, deadline=None)
@given(scenes())
def test_random_gains_signs_and_fixed_all(scene):
    m, mal, _, _ = scene
    b = error_breakdown(m, mal)
    for t in ERROR_TYPES:
        for k in ("precision", "recall", "f1", "accuracy", "mallows"):
            g = b.gain(t, k)
            if g is None:
                continue
            if t == "split" and k in ("precision", "f1"):
                # eq. 14 counts every piece of a split as a detection: fixing splits
                # can only lower precision, strictly when there are false alarms
                assert g <= 1e-12
                if b.errors["split"] and m.false_alarms.size:
                    assert g < 0
            else:
                assert g >= -1e-12, (t, k, g)
    if m.n_reference:
        assert b.fixed["all"]["f1"] == 1.0
        assert b.fixed["all"]["mallows"] == 1.0
    else:
        assert b.fixed["all"]["f1"] is None


# --- the CLI through the console script -----------------------------------------------

def write_labels(path, labels):
    with rasterio.open(path, "w", driver="GTiff", width=labels.shape[1],
                       height=labels.shape[0], count=1, dtype="uint16", crs="EPSG:32651",
                       transform=Affine(1.0, 0.0, 570000.0, 0.0, -1.0, 1450000.0)) as dst:
        dst.write(labels.astype("uint16"), 1)


def test_cli_breakdown(tmp_path):
    ref = squares([(1, 1), (1, 10), (12, 4), (12, 14)])
    sub = np.zeros_like(ref)
    sub[1:5, 1:5] = 1          # R1 found exactly
    sub[1:5, 10:12] = 2        # R2 split in two
    sub[1:5, 12:14] = 3
    sub[12:16, 4:8] = 4        # R3 and R4 merged into one
    sub[12:16, 14:18] = 4
    sub[20:23, 20:23] = 5      # a false alarm
    write_labels(tmp_path / "ref.tif", ref)
    write_labels(tmp_path / "sub.tif", sub)
    run = run_cli("score", "ref.tif", "sub.tif", "--matcher", "mom", "--breakdown",
                  "--json", "r.json", "--breakdown-figure", "b.png", cwd=tmp_path, columns=80)
    assert run.code == 0, run.stderr
    assert "what fixing each error type would gain" in run.stdout
    assert max(len(line) for line in run.stdout.splitlines()) <= 80
    for row in ("misses", "false alarms", "merges (under)", "splits (over)", "localisation",
                "all fixed"):
        assert row in run.stdout
    report = json.loads((tmp_path / "r.json").read_text())
    b = report["breakdown"]["mom"]
    counts = {t: b["errors"][t]["count"] for t in ERROR_TYPES}
    assert counts == {"missed": 0, "false_alarm": 1, "merge": 1, "split": 1, "localisation": 1}
    # 4 references all matched; 5 submitted, 1 false alarm: P = 4/5, R = 1
    assert b["now"]["f1"] == pytest.approx(f1(0.8, 1.0))
    assert b["errors"]["false_alarm"]["fixed"]["f1"] == 1.0
    # merge fixed: 6 submitted, 1 false alarm; split fixed: 4 submitted, 1 false alarm
    assert b["errors"]["merge"]["fixed"]["precision"] == pytest.approx(5 / 6)
    assert b["errors"]["split"]["fixed"]["precision"] == pytest.approx(3 / 4)
    assert b["errors"]["all"]["fixed"] == {k: 1.0 for k in b["now"]}
    assert (tmp_path / "b.png").stat().st_size > 10_000
    bad = run_cli("score", "ref.tif", "sub.tif", "--breakdown-figure", "b.txt", cwd=tmp_path)
    assert bad.code == 2 and "Traceback" not in bad.stderr


def test_api_figure_and_refusals(tmp_path):
    import geoeval
    from geoeval.errors import InputError, OutputError

    lab = squares([(1, 1), (1, 10)])
    ref, sub = objects_from_labels(lab), objects_from_labels(np.zeros_like(lab))
    with pytest.raises(OutputError, match="breakdown_figure"):
        geoeval.score(ref, sub, matchers=["mom"], breakdown_figure=tmp_path / "b.txt")
    res = geoeval.score(ref, sub, matchers=["mom"], breakdown_figure=tmp_path / "b.svg")
    assert res.breakdown is not None and (tmp_path / "b.svg").stat().st_size > 1000
    from geoeval.cli.score import score_command

    (tmp_path / "r").mkdir()
    (tmp_path / "s").mkdir()
    with pytest.raises(InputError, match="--breakdown"):
        score_command(tmp_path / "r", tmp_path / "s", breakdown=True)


def test_class_confusion_hand_scene():
    """R1 class A, R2 class B; S1 = R1 (class A), S2 = R2 but labelled A.

    Class A now: references {R1}, submitted {S1, S2}: S2 is a false alarm,
    P = 1/2, R = 1, F1 = 2/3. Class B: nothing submitted, P null, R 0, F1 0.
    Fixed (S2 takes class B): both classes P = R = F1 = 1.
    """
    from dataclasses import replace

    lab = squares([(1, 1), (1, 10)])
    ref = replace(objects_from_labels(lab), classes=np.array(["A", "B"], dtype=object))
    sub = replace(objects_from_labels(lab), classes=np.array(["A", "A"], dtype=object))
    res = score_objects(ref, sub, matchers=["mom", "bgm"], per_class=True, breakdown=True)
    for name in ("mom", "bgm"):
        cc = res.breakdown[name].class_confusion
        assert cc["count"] == 1
        a, b = cc["classes"]["A"], cc["classes"]["B"]
        assert a["now"]["f1"] == pytest.approx(2 / 3) and a["fixed"]["f1"] == 1.0
        assert a["gain"]["f1"] == pytest.approx(1 / 3)
        assert a["gain"]["precision"] == pytest.approx(1 / 2) and a["gain"]["recall"] == 0
        assert b["now"]["f1"] == 0.0 and b["now"]["recall"] == 0.0
        assert b["fixed"]["f1"] == 1.0 and b["gain"]["f1"] == 1.0
        assert b["now"]["precision"] is None and b["gain"]["precision"] is None
        assert b["gain"]["recall"] == 1.0
    assert res.breakdown["mom"].class_confusion["classes"]["B"]["fixed"]["accuracy"] == 1.0
    # all-classes: classes play no part, nothing to fix but nothing confused either
    assert res.breakdown["mom"].now["f1"] == 1.0
    js = json.loads(res.to_json())["breakdown"]["mom"]["class_confusion"]
    assert js["classes"]["A"]["gain"]["f1"] == pytest.approx(1 / 3)
    # correct classes: no confusion, no gain
    ok = score_objects(ref, replace(sub, classes=np.array(["A", "B"], dtype=object)),
                       matchers=["mom"], per_class=True, breakdown=True)
    cc = ok.breakdown["mom"].class_confusion
    assert cc["count"] == 0
    assert all(g in (None, 0.0) for c in cc["classes"].values() for g in c["gain"].values())
    assert score_objects(ref, sub, matchers=["mom"], breakdown=True
                         ).breakdown["mom"].class_confusion is None


def test_a_one_to_one_matcher_says_where_merges_and_splits_went(tmp_path):
    """bgm pairs a detection with one reference at most: its breakdown's merges and
    splits are none by definition, so no count is shown, and the words say that a
    merge's other references are among the misses and a split's extra pieces among
    the false alarms (the scene of test_cli_breakdown: one merge, one split)."""
    import geoeval
    from geoeval.report.html.page import entry_report

    ref = squares([(1, 1), (1, 10), (12, 4), (12, 14)])
    sub = np.zeros_like(ref)
    sub[1:5, 1:5] = 1
    sub[1:5, 10:12], sub[1:5, 12:14] = 2, 3   # R2 split in two
    sub[12:16, 4:8] = sub[12:16, 14:18] = 4   # R3 and R4 merged into one
    sub[20:23, 20:23] = 5                     # a false alarm
    write_labels(tmp_path / "ref.tif", ref)
    write_labels(tmp_path / "sub.tif", sub)
    run = run_cli("score", "ref.tif", "sub.tif", "--matcher", "bgm", "--breakdown",
                  "--json", "r.json", cwd=tmp_path, columns=80)
    assert run.code == 0, run.stderr
    counts = json.loads((tmp_path / "r.json").read_text())["breakdown"]["bgm"]["errors"]
    missed, false = counts["missed"]["count"], counts["false_alarm"]["count"]
    assert (missed, false) == (1, 2)  # R3 or R4; sub 5 and one piece of R2
    rows = {line.split("│")[1].strip(): line.split("│")[2].strip()
            for line in run.stdout.splitlines() if line.startswith("│")}
    assert rows["merges (under)"] == rows["splits (over)"] == "–"  # not "0"
    assert rows["misses"] == "1" and rows["false alarms"] == "2"
    text = " ".join(run.stdout.split())
    assert ("bgm is one-to-one, so it forms no merges or splits: a detection covering "
            "several reference objects is matched to one of them and the others count as "
            "misses (among the 1 here), the extra pieces of a split as false alarms (among "
            "the 2)") in text
    # the contest page says the same
    result = geoeval.score(tmp_path / "ref.tif", tmp_path / "sub.tif", matchers=["bgm"],
                           breakdown=True)
    entry = entry_report("sub", result, matcher="bgm")
    assert entry.breakdown_note is not None and "among the 1 here" in entry.breakdown_note
    assert {r["type"]: r["count"] for r in entry.breakdown}["merge"] is None
    assert {r["type"]: r["count"] for r in entry.breakdown}["missed"] == 1
    # a matcher that forms merges keeps its counts and gets no such words
    result = geoeval.score(tmp_path / "ref.tif", tmp_path / "sub.tif", matchers=["mom"],
                           breakdown=True)
    entry = entry_report("sub", result, matcher="mom")
    assert entry.breakdown_note is None
    assert {r["type"]: r["count"] for r in entry.breakdown}["merge"] == 1

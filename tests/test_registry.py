"""The matcher registry: a new matcher is one function and one registry entry.

A toy matcher, defined and registered here only, flows through scoring (the JSON
report and its parameters), the bootstrap, multi-scene pooling, the error
breakdown, the terminal tables, ranking and the command line, with no other
file touched. Its numbers are worked by hand on a 10 × 10 scene.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import rasterio
from rasterio.transform import from_origin

import geoeval
from geoeval.errors import InputError
from geoeval.matching import registry
from geoeval.matching.build import from_edges
from geoeval.measures import counts
from geoeval.validate import Rule

HERE = Path(__file__).resolve().parent


def match_unique(overlap, *, threshold: float = 0.3):
    """Toy matcher: every pair at IoU >= t whose two objects are in no other such pair."""
    iou = overlap.iou
    cand = np.flatnonzero(iou >= threshold)
    r, c = overlap.rows[cand], overlap.cols[cand]
    alone = ((np.bincount(r, minlength=overlap.n_reference)[r] == 1)
             & (np.bincount(c, minlength=overlap.n_submission)[c] == 1))
    return from_edges(overlap, cand[alone], "unique", edge_scores=iou,
                      params={"threshold": threshold})


UNIQUE_THRESHOLD = registry.Parameter(
    "unique_threshold", "threshold", 0.3, "Toy matcher: IoU threshold, 0 < t <= 1.",
    Rule(low=0.0, high=1.0, low_open=True), symbol="u")
UNIQUE = registry.Matcher(
    "unique", match_unique, registry.INSTANCE_SCORE,
    title="pairs that overlap nothing else",
    allows="pairs at IoU ≥ {unique_threshold:g} that overlap nothing else there",
    header="alone ≥ {unique_threshold:g}",
    accuracy_label="unique mean IoU",
    accuracy_words="mean IoU of the pairs",
    parameters=(UNIQUE_THRESHOLD,),
    one_to_one=True,
    source="a test")


def _labels():
    """Reference: 1 (rows 0-3, cols 0-3, 16 px), 2 (rows 6-9, cols 6-9, 16 px),
    3 (rows 0-1, cols 7-9, 6 px). Submission: 1 overlaps ref 1 by 12 px (IoU
    12/20 = 0.6), 2 equals ref 2 (IoU 1), 3 (rows 0-1, cols 6-7) overlaps ref 3
    by 2 px (IoU 2/8 = 0.25), 4 (row 5, cols 0-2) overlaps nothing."""
    ref = np.zeros((10, 10), np.int32)
    ref[0:4, 0:4] = 1
    ref[6:10, 6:10] = 2
    ref[0:2, 7:10] = 3
    sub = np.zeros((10, 10), np.int32)
    sub[0:4, 1:5] = 1
    sub[6:10, 6:10] = 2
    sub[0:2, 6:8] = 3
    sub[5, 0:3] = 4
    return ref, sub


def _write(path, labels):
    with rasterio.open(path, "w", driver="GTiff", width=10, height=10, count=1,
                       dtype="int32", crs="EPSG:32651",
                       transform=from_origin(570000.0, 1450000.0, 1.0, 1.0)) as dst:
        dst.write(labels, 1)
    return path


@pytest.fixture
def toy():
    with registry.registered(UNIQUE):
        yield UNIQUE


@pytest.fixture
def scene(tmp_path):
    ref, sub = _labels()
    (tmp_path / "ref").mkdir()
    (tmp_path / "sub").mkdir()
    return (_write(tmp_path / "ref" / "a.tif", ref), _write(tmp_path / "sub" / "a.tif", sub))


# precision 2/4, recall 2/3, F1 = 2PR/(P+R) = 4/7, mean IoU (0.6 + 1)/2
HAND = {"precision": 0.5, "recall": 2 / 3, "f1": 4 / 7, "accuracy": 0.8}


def test_registry_lists_the_builtins_in_report_order():
    assert registry.names() == ("bgm", "hoover", "mom", "iou") == geoeval.matching.MATCHERS
    assert [p.keyword for p in registry.parameters()] == [
        "hoover_threshold", "iou_threshold", "min_overlap"]
    assert registry.get("hoover").parameters[0].option == "--hoover-threshold"
    with pytest.raises(InputError, match="unknown matcher 'nope' .*bgm, hoover, mom, iou"):
        registry.get("nope")
    with pytest.raises(ValueError, match="already registered"):
        registry.register(registry.get("bgm"))


def test_a_toy_matcher_is_scored_bootstrapped_and_broken_down(toy, scene):
    ref, sub = scene
    res = geoeval.score(ref, sub, matchers=["bgm", "unique"], bootstrap=20, block_size=1000.0,
                        breakdown=True)
    r = res.results["unique"]
    for k, v in HAND.items():
        assert getattr(r, k) == pytest.approx(v, rel=1e-12)
    report = res.to_dict()
    assert report["parameters"]["unique_threshold"] == 0.3
    assert "hoover_threshold" not in report["parameters"]  # only the matchers that ran
    assert sorted(report["results"]["unique"]["missed_ids"]) == [3]
    assert [i["score"] for i in report["results"]["unique"]["instances"]] == pytest.approx(
        [0.6, 1.0])
    # one block: every replicate is the scene itself, so each interval is its value
    iv = res.bootstrap.intervals["unique"]
    for k, v in HAND.items():
        assert iv[k] == pytest.approx([v, v], rel=1e-12)
    # the breakdown repairs with the registry's rule: perfect instances score 1
    b = res.breakdown["unique"]
    assert b.fixed["localisation"]["accuracy"] == pytest.approx(1.0)
    assert b.fixed["missed"]["accuracy"] == pytest.approx((0.6 + 1 + 1) / 3)
    assert b.fixed["false_alarm"]["precision"] == pytest.approx(1.0)


def test_a_toy_matcher_parameter_is_checked_and_used(toy, scene):
    ref, sub = scene
    with pytest.raises(InputError, match="unique_threshold must be in \\(0, 1\\], got 0"):
        geoeval.score(ref, sub, matchers=["unique"], matcher_options={"unique_threshold": 0})
    with pytest.raises(InputError, match="unknown matcher parameter 'nope'"):
        geoeval.score(ref, sub, matchers=["unique"], matcher_options={"nope": 1})
    res = geoeval.score(ref, sub, matchers=["unique"],
                        matcher_options={"unique_threshold": 0.2})
    assert res.parameters["unique_threshold"] == 0.2
    assert res.results["unique"].accuracy == pytest.approx((0.6 + 1 + 0.25) / 3)


def test_a_toy_matcher_is_pooled_ranked_and_tabled(toy, scene, tmp_path):
    ref, sub = scene
    pooled = geoeval.score_scenes(tmp_path / "ref", tmp_path / "sub",
                                  matchers=["unique"]).pooled["unique"]
    for k, v in HAND.items():
        assert pooled[k] == pytest.approx(v, rel=1e-12)
    ranked = geoeval.rank(ref, [sub, ref], names=["sub", "ref"], matchers="unique")
    assert ranked.ranking == ("ref", "sub")
    assert ranked.values["sub"]["accuracy"] == pytest.approx(0.8)

    from rich.console import Console

    from geoeval.report.explain import matcher_lines
    from geoeval.report.tables import accuracy_label, score_tables

    res = geoeval.score(ref, sub, matchers=["unique"])
    console = Console(width=120, record=True)
    for part in score_tables(res):
        console.print(part)
    text = console.export_text()
    assert "alone ≥ 0.3" in text
    assert matcher_lines(res) == [
        "unique: pairs at IoU ≥ 0.3 that overlap nothing else there; "
        "accuracy = mean IoU of the pairs."]
    assert accuracy_label("unique") == "unique mean IoU"


def test_the_registry_forgets_a_matcher_after_its_block(scene):
    with registry.registered(UNIQUE):
        assert "unique" in registry.names()
        assert "unique_threshold" in [p.keyword for p in registry.parameters()]
    assert "unique" not in registry.names()
    assert "unique_threshold" not in [p.keyword for p in registry.parameters()]
    with pytest.raises(InputError, match="unknown matcher 'unique'"):
        geoeval.score(*scene, matchers=["unique"])


def test_a_toy_matcher_is_a_command_line_choice(scene, tmp_path):
    """The CLI's --matcher choices are the registry's names when the CLI is built."""
    ref, sub = scene
    out = tmp_path / "toy.json"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import test_registry as t; "
            "from geoeval.matching import registry; registry.register(t.UNIQUE); "
            "from geoeval.cli.main import main; sys.exit(main(sys.argv[2:]))")
    run = subprocess.run([sys.executable, "-c", code, str(HERE), "score", str(ref), str(sub),
                          "-m", "unique", "--json", str(out), "-q"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(out.read_text())
    assert list(report["results"]) == ["unique"]
    assert report["results"]["unique"]["accuracy"] == pytest.approx(0.8)


def test_one_formula_serves_one_scene_and_many_replicates():
    """measures_from_sums on arrays equals it on each element (one formula, two uses)."""
    rng = np.random.default_rng(0)
    sums = {k: rng.integers(0, 5, 50).astype(float) for k in counts.SUMS}
    for rule in registry.ACCURACY_RULES:
        many = counts.measures_from_sums(rule, sums)
        for i in range(50):
            one = counts.measures_from_sums(rule, {k: v[i] for k, v in sums.items()})
            for k in counts.MEASURES:
                assert np.array_equal(one[k], many[k][i], equal_nan=True)
